"""Simulation side of icl-verify, in torch on CPU or GPU.

The generic machinery (`_core`: any model, any paper's prompts):

- `circuits`: KQ/OV circuits, effective (omega_h, mu_h) and pattern measures;
- `data`: prompt samplers (isotropic, KMS covariance, multi-task, sparse), the embedding (2.1),
  the seeded generators of a run (on the CPU inside `draw_on_cpu`, whatever the device);
- `decoder`: the GPT-2-style causal decoder of Chen et al. App. G on interleaved prompts, with
  the encoder's attention and head masking;
- `encoder`: the multi-layer post-LN softmax encoder of Chen et al. (2024) §3, batched over
  members, with head masking (App. B) and per-layer representations;
- `ensemble`: the trained ensemble of He et al. §3 (training, resuming, its members, their
  test MSE at other prompt lengths, several ensembles side by side);
- `estimators`: in-context estimators (OLS, ridge, Bayes, one-step and t-step GD, debiased GD,
  kernel regressors, Lasso, preprocess-then-GD);
- `linear_transformer`: the multi-layer linear-attention network (2.2) of Chen et al. (2024) and the
  explicit weights of their Propositions 4.1/4.2 (Algorithm 1, then t GD steps);
- `models`: the one-layer multi-head softmax attention of He et al. (2025) eq. (2.2) as a batched
  ensemble, linear attention (5.1), normalised activations (5.2) (any spec of
  `icl_verify.activations`), a model built from given circuits, the kernel-sum predictor (3.2);
- `montecarlo`: streamed Monte Carlo of population losses with standard errors;
- `sparse_regression`: exact excess risks ``(v - w*)^T Sigma (v - w*)`` of the sparse-regression
  estimators, GD and preprocess-then-GD along their paths (Chen, Zhao, Zou 2024 §4-5);
- `threads`: torch on one CPU thread (`single_thread`, the executor's policy; torch-free import);
- `trainer`: online training of an ensemble with checkpoints and resume.

What the claims of He et al. (2025) measure (`_he2025`):

- `effective_steps`: a trained model's effective step, the least-squares slope of its predictions
  on debiased one-step GD, extrapolated to L -> infinity for fixed pairs; a test MSE relative
  to a baseline's (§5.2);
- `head_count`: the paired members' common KQ scale and group sums per H (and relative to a
  reference H), the decay of dummy heads, the member drawn with one (App. A.1);
- `kernel_sum`: Monte Carlo measurements of the kernel-sum predictor (3.2): the ± pair's
  loss and its distance to debiased GD, H heads on the manifold, the single-head optimum;
- `length_generalisation`: test MSE against the test length L' (Figure 4): one predictor's
  curve from a joint estimate, the fixed ± pair and single head at every L';
- `linear_attention`: trained one-head linear attention (5.1): its learned step, pattern and
  risk, its test MSE over L' beside softmax members and debiased GD (§5.1, Figure 8);
- `multitask`: the heads of a multi-task model (omega^h, the label block), its mode by a stated
  rule (at every log, and per H), the exact kernel predictor and its gap to a first-order one,
  Gamma_k and zero sums where training settles, per-task test errors beside restricted debiased
  GD (§5.4);
- `normalised_attention`: two-head models of each normalised activation read at the end of
  training: paired members, fitted step with its Adam noise, test MSE over L' against debiased GD
  at that step (§5.2);
- `patterns`: the head patterns of Observations 1 and 2 read off its logged history, the
  paired fraction per H, a single head read as the kernel regressor (4.12);
- `preconditioning`: the preconditioner a trained model on KMS covariates learned (from its
  circuits) and applies (fitted on its predictions), bootstrap distances, paired risks, the
  heads' settled opposition, all of it for the paired members of an ensemble, and the
  best preconditioner of one-step GD fitted on simulated labels (Lemma E.4) (§5.3);
- `risks`: Monte Carlo risks of one-step GD and debiased GD at several steps, and of the Bayes
  predictor and tuned debiased GD extrapolated to d -> inf at fixed d/L (§4.3, Thm 4.2(iii));
- `settling`: a logged series read at the end of training: its Adam noise, the settled value or
  mean with the error of a value that may still drift, the logs drawn as snapshots;
- `softmax_norm`: samples of ||softmax(omega X^T x_q)||^2 and their summary along a sweep
  (App. C, Figure 20), and the moments of one example under its attention weight (Stein);
- `softmax_pair`: the softmax pair (5.2) emulating a linear-attention head, its gap to it, the
  gap's expansion in eps (Richardson) and its roundoff bounds (§5.1);
- `trajectories`: how the heads get to their pattern (Observation 4): rise and fall of |omega_h|,
  drops after the pattern forms, its persistence, the spread across seeds;
- `true_loss`: plain SGD on the true loss of the kernel-sum model (3.2), the labels integrated
  out exactly, and its member means with standard errors (App. C, Figure 21);
- `two_head`: two-head models trained from the symmetric start of Def. B.1 (SGD or Adam),
  head 1's (omega, mu) history at t = lr * step (Appendix B).

What the claims of Chen et al. (2024) measure (`_chen2024`):

- `encoder_analysis`: head importance by masking (3.1), App. B's sorted average, linear probes,
  P-probing (§6), evaluation prompts per member;
- `encoder_evaluation`: trained encoders read from a seed: beside OLS, tuned ridge and Lasso
  on the same prompts, against tuned ridge (the regime gate), head importance, probes per
  layer, P-probing; member values averaged per noise level;
- `encoder_training`: the trained encoders of Chen et al. App. B (one ensemble per number of
  heads, a member per noise level and replicate; App. G's decoder and correlated design
  through the same training), pruning and fine-tuning;
- `gd_decomposition`: pre-gd's excess risk split into bias, variance and cross parts by iterated
  GD, with R_hat from the same labels or from an independent sample (App. D, (D.1)-(D.3));
- `gd_tuning`: GD and pre-gd oracle-tuned over (step, count) on diagonal-Sigma sparse prompts, the
  risks of Chen et al.'s upper bounds (Thms 5.1, 5.2, §4.3);
- `isotropic`: tuned OLS, ridge, GD, pre-gd and Lasso risks, isotropic sparse regression (Thm 5.3);
- `pre_gd`: GD on raw vs preprocessed data at tuned learning rates, their paired gap (Figure 2c);
- `sparse_lemmas`: draws of Algorithm 1's correlations r_hat beside r = Sigma w* (Lemmas D.1, D.2),
  of the sample covariance's error ||Sigma_hat - Sigma||_2 (Lemma D.3) and of the noise's
  correlations ||X^T eps / n||^2 (Lemma F.1).

Never imports `theory` or `dynamics`: a measurement must not use the formula it checks.
The modules are private, in three private parts (``_core``, ``_he2025``, ``_chen2024``, as the
claims are in `validation.claims`); every public name has one path, ``icl_verify.numerics.X``,
written out in ``__init__.pyi`` (``from ._core.data import Prompts as Prompts``) for IDEs and
type checkers, and loaded lazily from there (`icl_verify._lazy.attach_stub`): importing the
package does not import torch until a name is used. The trainer's parts are `_core._training`.
"""

from icl_verify._lazy import attach_stub

__getattr__, __dir__, __all__ = attach_stub(__name__, __file__)
