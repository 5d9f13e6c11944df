"""What HE-OBS1..4 of He et al. (2025), Section 3, share: one trained ensemble, its terms and
findings.

All four read one trained ensemble (`validation.claims._trained`, `numerics.train_ensemble`):
softmax attention with H in {1, 2, 3, 4, 8} heads, several init seeds per H, trained online
with Adam on the reference's default setting (§0.5). Terms used throughout:

- dummy head: ``|omega_h mu_h| < 0.05 max_h |omega_h mu_h|`` (`icl_verify.heads.head_types`);
- paired member (H >= 2): its non-dummy heads include both a positive and a negative KQ scale,
  i.e. it reached the multi-head pattern of (4.7);
- trapped member (H >= 2, not paired): all non-dummy heads share one sign and act as one head
  (loss about 0.408, the single-head optimum). HE-OBS2 counts these; HE-OBS1 and HE-OBS4 read
  the pattern of the single-head and paired members and state how many were left out
  (`numerics.member_kinds`).

The claims, one module each: HE-OBS1 `obs_patterns` (the circuit pattern (3.1)), HE-OBS2
`obs_opposite_heads` (opposite heads and HE-MAN part (ii)), HE-OBS3 `obs_length` (length
generalisation, Figure 4), HE-OBS4 `obs_dynamics` (training dynamics, Figures 5 and 13).

Measured at the quick preset (12 members, Adam lr 3e-3, 10k steps, seed 0; CPU):

- Two of the four two-head runs (init seeds 3 and 4) end trapped with same-sign heads at the
  single-head loss (0.381, 0.378 vs 0.24 for the pairs): paired fraction 2/4 +- 0.18
  (Agresti-Coull SE; the Wald SE is 0.25); all H = 3, 4, 8 runs pair. HE-OBS2 reports this as
  a disagreement with "two-head runs converge to opposite heads" (a seed-dependent outcome, as
  the dynamics side finds on L̃).
- Paired members: common |omega| 0.155-0.169, zero-sum ratios <= 0.009, and
  2 omega sum_+ mu, -2 omega sum_- mu in 0.837-0.904 (mean 0.874) vs 1/(1+kappa) = 0.879.
- Test MSE at L' = 10 / 40 / 100: H=2 0.602 / 0.248 / 0.169, H=4 0.594 / 0.248 / 0.170,
  dGD(eta*) 0.601 / 0.244 / 0.167 (exact 0.596 / 0.243 / 0.167), H=1 0.852 / 0.402 / 0.271,
  ridge (Bayes) 0.195 / 0.115 / 0.106 (16k shared prompts, SE <= 0.012).
- Heads that carry a small share of their group's OV sum in H >= 4 members settle slowly:
  after 10k steps they still have 6-18% off-pattern KQ energy (falling: inconclusive), a
  diagonal spread of 12-14% that no longer falls (disagrees), |omega| spread max/min 1.17
  (H = 8; still falling, so inconclusive), and they hand part of their mu to a same-sign head
  (|mu_h| falls by up to 27% while the group sums grow monotonically, within 2%). Heads
  carrying most of a group sum sit at Adam's noise floor (off-pattern 2-4%).
"""

PAPER = "He et al. 2025"
