"""Trained-model claims of He et al. (2025), Section 3 (Observations 1-4) and HE-MAN part (ii).

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

Claims:

- HE-OBS1 (§3, (3.1)): each non-dummy head has ``KQ11 = omega_h I_d``, ``kq21 = 0``,
  ``ov21 = 0``, ``ov22 = mu_h`` and ``sign(omega_h) = sign(mu_h)``.
- HE-OBS2 (§3, (4.4)-(4.7)): two-head runs end at opposite heads; paired members have
  homogeneous ``|omega_h|`` and zero-sum OV; and (HE-MAN part (ii), placed here because it reads
  the same models) their group sums lie on the manifold: ``2 omega sum_+ mu = 2 omega |sum_- mu|
  = 2 omega mu*(omega)``, which (4.8) puts at ``1/(1 + kappa)`` up to ``O(kappa d^2 omega^4)``.
- HE-OBS3 (§3, Figure 4): test MSE against the test length L'; H >= 2 tracks debiased GD
  (4.11), H = 1 is worse than H = 2, and every softmax model improves beyond the training L.
- HE-OBS4 (§3, Figures 5 and 13): |omega_h(t)| rises then falls, |mu_h(t)| grows nearly
  monotonically, and the pattern, once formed, persists.

Predictions: `theory` (manifold_mu, optimal_gd, the exact GD risks, the single-head optimum).
Measurements: `numerics.patterns` (the patterns read off the logged history, with error bars
from its noise and drift; the paired fractions) and `numerics.mse_by_test_length` with
`numerics.length_generalisation` (Monte Carlo on nested prompts).
Figures: `figures.observations`.

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

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from icl_verify.validation.claim import (
    Check,
    Claim,
    Estimate,
    Measurement,
    Prediction,
    Source,
    Tolerance,
    ZScore,
    scaled,
    shifted,
)
from icl_verify.validation.claims._trained import (
    TrainedParams,
    check_trained_heads,
    default_training,
    trained_presets,
    training,
)
from icl_verify.validation.paper_figures import PaperFigure
from icl_verify.validation.params import ParameterError, param

from icl_verify import numerics, theory

PAPER = "He et al. 2025"
LENGTHS = tuple(range(10, 101, 5))  # test lengths L' of Figure 4


def _multi_head_groups(params: TrainedParams) -> list[int]:
    """The trained H >= 2; ParameterError when there is none."""
    multi = sorted({h for h in params.heads if h >= 2})
    if not multi:
        raise ParameterError(f"heads must include a member with >= 2 heads, got {params.heads}")
    return multi


# ---------------------------------------------------------------------------------------------
# HE-OBS1: per-head circuit patterns


@dataclass(frozen=True, kw_only=True)
class Obs1Params(TrainedParams):
    """HE-OBS1: the circuit pattern (3.1) of every non-dummy head of the trained ensemble."""

    pattern_atol: float = param(
        help="allowed deviation of each head's circuit measures from the pattern (3.1)",
        low=0,
        low_open=True,
    )
    show_heads: tuple[int, ...] = param(
        (1, 2, 4), help="H of the members drawn (per H the lowest validation loss)", low=1
    )

    def validate(self) -> None:
        super().validate()
        check_trained_heads(self, "show_heads")


PRESETS_OBS1 = trained_presets(
    Obs1Params,
    smoke=dict(pattern_atol=0.05),
    quick=dict(pattern_atol=0.05),
    paper=dict(pattern_atol=0.01),  # the reference's ~1% after 500k steps
)

#: The pattern (3.1) in the measures of `numerics.circuits.CircuitSummary`: KQ11 diagonal with
#: equal entries, zero off-pattern KQ and OV blocks.
PATTERN = {"diagonality": 1.0, "diagonal_spread": 0.0, "kq_off_pattern": 0.0, "ov_off_pattern": 0.0}


def predict_obs1(params: Obs1Params) -> Prediction:
    """The pattern (3.1): diagonal KQ11 with equal entries, zero off-pattern blocks, signs match."""
    return Prediction(values={**PATTERN, "sign_product": 1.0})


def measure_obs1(params: Obs1Params, runtime) -> Measurement:
    """`numerics.head_patterns` of every non-dummy head of single-head and paired members.

    Each circuit measure is its end value with the error of `numerics.settled_value` toward the
    pattern's value (plus Adam's noise floor on the RMS-type measures); the sign product is
    exact.
    """
    ensemble = runtime.trained(training(params))
    kinds = numerics.member_kinds(ensemble)
    heads = numerics.head_patterns(ensemble, np.flatnonzero(kinds.pattern), toward=PATTERN)
    values = {name: Estimate(heads.value[name], heads.error[name], "bound") for name in PATTERN}
    values["sign_product"] = Estimate(heads.sign_product, 0.0, "bound")
    shown = [numerics.representative(ensemble, h) for h in params.show_heads]
    KQ, OV = ensemble.circuits()
    steps = ensemble.steps
    early = numerics.logged_steps(steps, steps[-1] / 10, 4)
    return Measurement(
        values=values,
        figure_data={
            "KQ": KQ[shown],
            "OV": OV[shown],
            # Figure 1 (b): the shown members' circuits at early logged steps (up to T/10)
            "early_steps": steps[early].astype(float),
            "early_KQ": ensemble.KQ_history[early][:, shown],  # (k, M, H, D, D)
            "early_OV": ensemble.OV_history[early][:, shown],
            "shown_heads": ensemble.heads[shown].astype(float),
            "shown_members": np.array(shown, dtype=float),
            "head_member": heads.member.astype(float),
            "heads": ensemble.heads.astype(float),
            "excluded_trapped": kinds.trapped.astype(float),
            "steps": float(ensemble.steps[-1]),
        },
    )


def checks_obs1(params: Obs1Params) -> tuple[Check, ...]:
    atol = params.pattern_atol
    why = (
        f"The reference's rule (§HE-OBS1) is about 1% after the authors' 500k Adam steps (their "
        f"H=2 model: diagonal energy 0.99926, last-entry OV energy 0.99994). The off-pattern "
        f"entries change the loss only at second order near the pattern, so Adam removes them "
        f"slowly, and Adam's noise floor on them grows with the learning rate; this preset "
        f"trains {params.steps} steps at lr {params.lr:g} and holds every non-dummy head to "
        f"{atol:g} (the paper preset: 0.01). Error bar (settled_value): the drift plus noise "
        f"over the last quarter of the logs; a head still converging toward the pattern reads "
        f"inconclusive, not contradicted. The spread and off-pattern RMS also carry Adam's "
        f"noise floor √d·SD(ω_h)/|ω_h|."
    )
    rule = Tolerance(why, atol=atol)
    return (
        Check("diagonality", rule, "‖diag KQ11‖² / ‖KQ11‖²_F (per head)"),
        Check("diagonal_spread", rule, "std(diag KQ11) / |ω_h| (per head)"),
        Check("kq_off_pattern", rule, "RMS(off-diag KQ11, kq21) / RMS(diag KQ11) (per head)"),
        Check("ov_off_pattern", rule, "RMS(ov21) / |ov22| (per head)"),
        Check(
            "sign_product",
            Tolerance(
                "A sign: +1 when sign(ω_h) = sign(μ_h), −1 otherwise; one mismatched "
                "head (discrepancy 2) contradicts the claim.",
                atol=0.5,
            ),
            "sign(ω_h) sign(μ_h) (per head)",
        ),
    )


CLAIM_OBS1 = Claim(
    id="HE-OBS1",
    source=Source(PAPER, "3, Obs. 1", "(3.1)-(3.2)"),
    statement="After training, every non-dummy head of single-head and paired members has "
    "KQ11 = ω_h I_d, kq21 = 0, ov21 = 0, ov22 = μ_h and sign(ω_h) = sign(μ_h) (members trapped "
    "with same-sign heads are counted in HE-OBS2).",
    params=Obs1Params,
    presets=PRESETS_OBS1,
    predict=predict_obs1,
    measure=measure_obs1,
    checks=checks_obs1,
    figure="observations:figure_obs1",
    # anti-matched signs, sign(ω_h) = −sign(μ_h): a discrepancy of 2 per head, 4 x the atol 0.5
    wrong=shifted("sign_product", lambda sign: -sign),
    trains=default_training,
    summary="trained KQ is diagonal, OV reads the last entry, heads sign-matched",
    catalogue=(2, 1),
    paper_figures=(
        PaperFigure(
                1,
                ("HE-OBS1", "HE-OBS4"),
                "paper:figure_1",
                "two-head model: trained KQ (full (d+1)² heat map) and OV last row per head, "
                "diagonal / last-entry patterns and opposite heads; plus their early-training "
                "evolution (sign matching, zero sum)",
                "(a) KQ and OV last row of the trained two-head member (lowest validation loss); "
                "(b) the same circuits at early logged steps; (c) ω_h(t), μ_h(t) and μ₁+μ₂ over "
                "the early steps",
            ),
        PaperFigure(
                3,
                ("HE-OBS1",),
                "paper:figure_3",
                "the same heat maps for H = 1 (one head, ω ≈ 1/√d) and H = 4 (positive, negative "
                "and dummy heads)",
                "KQ and OV last row per head of the trained H = 1 and H = 4 members (lowest "
                "validation loss per H)",
            ),
    ),
)


# ---------------------------------------------------------------------------------------------
# HE-OBS2 (+ HE-MAN part (ii)): opposite heads, homogeneous KQ, zero-sum OV, the manifold


@dataclass(frozen=True, kw_only=True)
class Obs2Params(TrainedParams):
    """HE-OBS2 and HE-MAN (ii): the opposite-head pattern of the multi-head members."""

    omega_max: float = param(
        0.3,
        help="largest common KQ scale ω of a paired member: the manifold check allows "
        "the O(κ d² ω⁴) curvature term of (4.8) up to it",
        low=0,
        low_open=True,
    )

    def validate(self) -> None:
        super().validate()
        _multi_head_groups(self)


PRESETS_OBS2 = trained_presets(Obs2Params, smoke={}, quick={}, paper={})

#: Structural limits of the end values (no theory value): homogeneous |omega_h|, zero-sum OV.
ZERO_LIMITS = {"homogeneity": 0.0, "zero_sum": 0.0}


def predict_obs2(params: Obs2Params) -> Prediction:
    setting = params.setting
    fine = np.geomspace(0.03, 1.0, 300)
    return Prediction(
        values={"paired_fraction": 1.0, **ZERO_LIMITS, "manifold_eta": 1.0 / (1.0 + setting.kappa)},
        figure_data={"omega_fine": fine, "mu_star_fine": theory.manifold_mu(fine, setting)},
    )


def measure_obs2(params: Obs2Params, runtime) -> Measurement:
    """Fractions of paired members per H; per paired member the end values and their Adam noise.

    The error bar of an end-of-training value is its `numerics.settled_value` error (drift still
    under way plus the Adam noise), from `numerics.group_patterns`.
    """
    ensemble = runtime.trained(training(params))
    kinds = numerics.member_kinds(ensemble)
    fractions = numerics.paired_fractions(ensemble.heads, kinds.paired)
    groups = numerics.group_patterns(ensemble, np.flatnonzero(kinds.paired), toward=ZERO_LIMITS)
    value, error = groups.value, groups.error
    return Measurement(
        values={
            "paired_fraction": Estimate(fractions.fraction, 0.0, "bound"),
            "homogeneity": Estimate(value["homogeneity"], error["homogeneity"]),
            "zero_sum": Estimate(value["zero_sum"], error["zero_sum"]),
            "manifold_eta": Estimate(
                np.concatenate([value["eta_plus"], value["eta_minus"]]),
                np.concatenate([error["eta_plus"], error["eta_minus"]]),
            ),
        },
        figure_data={
            "multi_heads": fractions.heads.astype(float),
            "counts": fractions.counts,
            "paired_counts": fractions.paired_counts.astype(float),
            "binomial_se": fractions.fraction_se,  # Agresti-Coull: not 0 at 0/n or n/n
            "paired_heads": ensemble.heads[kinds.paired].astype(float),
            "dummy_heads": groups.dummy_heads.astype(float),
            "omega": value["omega"],
            "omega_error": error["omega"],
            "sum_plus": value["sum_plus"],
            "sum_minus": value["sum_minus"],
            "sum_plus_error": error["sum_plus"],
            "sum_minus_error": error["sum_minus"],
            "steps": float(ensemble.steps[-1]),
        },
    )


def checks_obs2(params: Obs2Params) -> tuple[Check, ...]:
    setting = params.setting
    heads = np.asarray(params.heads)
    largest_group = max(int(np.sum(heads == h)) for h in _multi_head_groups(params))
    curvature = theory.manifold_limit_bound(params.omega_max, setting)
    reference_rule = (
        "The reference's agreement rule (§HE-OBS2: within 5%); error bar (settled_value): the "
        "end value's drift plus Adam noise over the last quarter of the logs, or its distance "
        "to 0 while it still falls toward 0 (then inconclusive)."
    )
    return (
        Check(
            "paired_fraction",
            Tolerance(
                "The paper says two-head runs converge to opposite heads and shows the pattern for "
                "every H: a single trapped run (same-sign heads acting as one head) contradicts "
                f"it, so the allowance is half a run of the largest group (1/{2 * largest_group}). "
                "How often it happens is the finding (figure (a): fraction ± binomial SE): from "
                "random init the gradient flow on L̃ (dynamics side) ends trapped for 10 of 20 "
                "two-head seeds and none with H >= 4; Adam at lr 3e-3 left two-head seeds 3, 4 "
                "and 7 of 0..7 trapped after 20k steps (numerics side).",
                atol=0.5 / largest_group,
            ),
            "fraction of members reaching opposite heads (per H >= 2)",
        ),
        Check(
            "homogeneity",
            Tolerance(reference_rule, atol=0.05),
            "max/min |ω_h| − 1 over non-dummy heads (paired members)",
        ),
        Check(
            "zero_sum", Tolerance(reference_rule, atol=0.05), "|Σ μ_h| / Σ |μ_h| (paired members)"
        ),
        Check(
            "manifold_eta",
            Tolerance(
                f"HE-MAN (ii). On the manifold 2ωμ*(ω) = 1/(1+κ) − O(κ d² ω⁴) (4.8); for "
                f"ω <= {params.omega_max:g} the correction is at most {curvature:.2g} "
                f"(theory.manifold_limit_bound), which is the atol. The trained models "
                f"minimise the true loss, not L̃, whose error is O(1/L) (Prop. 4.1): rtol = "
                f"1/L = {1 / setting.L:.3g}. Error bar: the end value's drift plus Adam noise "
                f"(settled_value).",
                rtol=1.0 / setting.L,
                atol=curvature,
            ),
            "2 ω Σ₊μ and −2 ω Σ₋μ vs 1/(1+κ) (paired members)",
        ),
    )


CLAIM_OBS2 = Claim(
    id="HE-OBS2",
    source=Source(PAPER, "3, Obs. 2; 4.2", "(4.4)-(4.8)"),
    statement="Runs with H >= 2 reach opposite heads (two-head runs: (ω, μ), (−ω, −μ)); their "
    "non-dummy heads share |ω_h|, their OV weights sum to zero, and (HE-MAN (ii)) the group sums "
    "lie on the manifold: 2ωΣ₊μ = −2ωΣ₋μ = 2ωμ*(ω) ≈ 1/(1+κ).",
    params=Obs2Params,
    presets=PRESETS_OBS2,
    predict=predict_obs2,
    measure=measure_obs2,
    checks=checks_obs2,
    figure="observations:figure_obs2",
    # 2ωμ* doubled, a factor-2 slip between μ* and the group sum ‖μ‖₁ = 2μ*: 0.88 off, 20 x
    # the tolerance 1/L + curvature
    wrong=scaled("manifold_eta", 2.0),
    trains=default_training,
    summary="H >= 2: homogeneous KQ, zero-sum OV, opposite heads; group sums at ±mu*(omega)",
    catalogue=(2, 2),
)


# ---------------------------------------------------------------------------------------------
# HE-OBS3: length generalisation (Figure 4)


@dataclass(frozen=True, kw_only=True)
class Obs3Params(TrainedParams):
    """HE-OBS3: test MSE of trained members and baselines against the test length L'."""

    lengths: tuple[int, ...] = param(
        help="test prompt lengths L' (including the training L and some beyond it)", low=1
    )
    n_prompts: int = param(
        help="Monte Carlo prompts, shared by every model, baseline and L'", low=2
    )
    compare_heads: tuple[int, ...] = param(
        (1, 2, 4),
        help="H of the trained members compared (per H the lowest validation loss); "
        "must include 1 and an H >= 2",
        low=1,
    )
    dgd_rtol: float = param(
        0.05,
        help="relative tolerance of the H >= 2 test MSE against the debiased-GD risk",
        low=0,
        low_open=True,
    )
    pair_omega: float = param(
        0.13,
        help="KQ scale of the fixed ± pair drawn in Figure 4 (right; the paper's trained value "
        "at d=5, L=40, σ²=0.1)",
        low=0,
        low_open=True,
    )
    pair_mu: float = param(
        3.45, help="OV weight of that fixed ± pair (the paper's 3.45)", low=0, low_open=True
    )

    def validate(self) -> None:
        super().validate()
        check_trained_heads(self, "compare_heads")
        if 1 not in self.compare_heads or max(self.compare_heads) < 2:
            raise ParameterError(
                f"compare_heads must include 1 and an H >= 2, got {list(self.compare_heads)}"
            )
        if self.L not in self.lengths or max(self.lengths) <= self.L:
            raise ParameterError(
                f"lengths must include the training L = {self.L} and a longer L', got "
                f"{list(self.lengths)}"
            )


PRESETS_OBS3 = trained_presets(
    Obs3Params,
    smoke=dict(lengths=(10, 40, 100), n_prompts=2048),
    quick=dict(lengths=LENGTHS, n_prompts=16_384),
    paper=dict(lengths=LENGTHS, n_prompts=20_480),
)


def _multi(params: Obs3Params) -> list[int]:
    return [h for h in params.compare_heads if h >= 2]


def predict_obs3(params: Obs3Params) -> Prediction:
    """Exact dGD/GD risk curves at the training-L optimal steps; L̃ of the best single head."""
    setting, lengths = params.setting, list(params.lengths)
    tests = [theory.Setting(setting.d, n, setting.sigma2) for n in lengths]
    eta_d = theory.optimal_gd(setting, debiased=True).eta
    eta_v = theory.optimal_gd(setting).eta
    single = theory.single_head_optimum(setting)
    curves = {
        "dgd": np.array([theory.debiased_gd_risk(eta_d, s) for s in tests], dtype=float),
        "gd": np.array([theory.gd_risk(eta_v, s) for s in tests], dtype=float),
        "single": np.array(
            [
                theory.approximate_loss(np.array([single.omega]), np.array([single.mu]), s)
                for s in tests
            ],
            dtype=float,
        ).ravel(),
    }
    at_train, at_end = lengths.index(setting.L), len(lengths) - 1
    decrease_dgd = curves["dgd"][at_train] - curves["dgd"][at_end]
    decrease_single = curves["single"][at_train] - curves["single"][at_end]
    return Prediction(
        values={
            "tf_vs_dgd": np.tile(curves["dgd"], len(_multi(params))),
            "dgd_mc": curves["dgd"],
            "single_minus_multi": curves["single"][at_train] - curves["dgd"][at_train],
            "length_gain": np.array(
                [decrease_single if h == 1 else decrease_dgd for h in params.compare_heads]
            ),
        },
        figure_data=curves,
    )


def measure_obs3(params: Obs3Params, runtime) -> Measurement:
    """Monte Carlo test MSE on nested prompts (`numerics.mse_by_test_length`).

    Every model and baseline sees the same prompts at every L', so differences between models
    and between lengths are paired. The dGD and GD baselines run at the steps that are optimal
    at the training L (the reference's Figure 4), a setting of the comparison taken from
    `theory.optimal_gd`; "dGD at η_eff" uses each trained model's own
    eta_eff = sum_h omega_h mu_h (the first-order step of (4.10)).
    """
    ensemble = runtime.trained(training(params))
    setting, lengths, seed = params.setting, list(params.lengths), runtime.seed_for("prompts")
    members = [numerics.representative(ensemble, h) for h in params.compare_heads]
    eta_eff = ensemble.first_order_steps(members)
    drawn = [h for h in sorted(set(params.heads)) if h not in params.compare_heads]  # Figure 4
    shown = members + [numerics.representative(ensemble, h) for h in drawn]
    losses = numerics.mse_by_test_length(
        {f"member{k}": (ensemble, member) for k, member in enumerate(shown)},
        lengths,
        debiased_steps={
            **{f"dGDeff{k}": float(eta) for k, eta in enumerate(eta_eff)},
            "dGD": theory.optimal_gd(setting, debiased=True).eta,
        },
        gd_steps={"GD": theory.optimal_gd(setting).eta},
        n_prompts=params.n_prompts,
        seed=seed,
        device=runtime.device,
        progress=runtime.show_progress,
    )
    index = {h: k for k, h in enumerate((*params.compare_heads, *drawn))}  # H -> k in losses
    L, longest, multi = setting.L, max(lengths), _multi(params)
    tf = np.array([numerics.length_curve(losses, f"member{index[h]}", lengths) for h in multi])
    single_gap = losses.difference(f"member{index[1]}@{L}", f"member{index[multi[0]]}@{L}")
    gains = [
        losses.difference(f"member{k}@{L}", f"member{k}@{longest}") for k in range(len(members))
    ]
    figure_data = {
        "lengths": np.array(lengths, dtype=float),
        "eta_eff": eta_eff,
        "members": np.array(members, dtype=float),
    }
    series = {f"H{h}": f"member{k}" for h, k in index.items()}
    series |= {"dGD": "dGD", "GD": "GD", "Bayes": "Bayes"}
    series |= {f"dGDeff{h}": f"dGDeff{k}" for h, k in index.items() if h not in drawn}
    for key, name in series.items():
        figure_data[f"{key}_mean"], figure_data[f"{key}_se"] = numerics.length_curve(
            losses, name, lengths
        )
    figure_data |= _fixed_kernels(params, seed, runtime.device)
    return Measurement(
        values={
            "tf_vs_dgd": Estimate(tf[:, 0].ravel(), tf[:, 1].ravel()),  # tf: (H, mean/SE, L')
            "dgd_mc": Estimate(*numerics.length_curve(losses, "dGD", lengths)),
            "single_minus_multi": Estimate(single_gap.mean, single_gap.stderr),
            "length_gain": Estimate(
                np.array([g.mean for g in gains]), np.array([g.stderr for g in gains])
            ),
        },
        figure_data=figure_data,
    )


def _fixed_kernels(params: Obs3Params, seed: int, device: str) -> dict[str, np.ndarray]:
    """Figure 4 (right), drawn only: Monte Carlo test MSE at every L' of the paper's fixed ± pair
    (pair_omega, pair_mu) and of the single head at (1/sqrt(d), mu*(L')) of (4.12) with the test
    L' (as the authors' plot), on the prompts of `measure_obs3` (same sampler and seed)."""
    single = [
        theory.single_head_optimum(theory.Setting(params.d, n, params.sigma2))
        for n in params.lengths
    ]
    curves = numerics.fixed_kernel_mse_by_test_length(
        (params.pair_omega, params.pair_mu),
        [head.omega for head in single],
        [head.mu for head in single],
        params.lengths,
        d=params.d,
        sigma2=params.sigma2,
        n_prompts=params.n_prompts,
        seed=seed,
        device=device,
    )
    return {
        "pair_mean": curves.pair_mean,
        "pair_se": curves.pair_se,
        "single_mean": curves.single_mean,
        "single_se": curves.single_se,
    }


def checks_obs3(params: Obs3Params) -> tuple[Check, ...]:
    qualitative = (
        "The claim is an ordering: the measured difference must be positive and of the theory's "
        "size, 0 < measured < 2 × predicted (rtol 1), beyond 1 paired SE. Only the order of "
        "magnitude is held because the single-head values come from L̃, which at ω = 1/√d is "
        "itself about 8% below the true loss (L̃ 0.372 vs the reference's Monte Carlo 0.405 "
        "at L' = 40)."
    )
    return (
        Check(
            "tf_vs_dgd",
            Tolerance(
                f"Thm 4.2(i): a ± pair differs from debiased GD by O(ω²) (leading term "
                f"∝ η ω² d^1.5 / √L'); the reference's Monte Carlo at ω = 0.13 finds at most "
                f"1.6% (L' = 10), and with the ω² order {params.dgd_rtol:g} covers trained "
                f"scales up to ω = {0.13 * np.sqrt(params.dgd_rtol / 0.016):.2f}. The step "
                f"η_eff differs from η* by ~1%, a second-order change of the risk. Error bar: "
                f"the Monte Carlo SE.",
                rtol=params.dgd_rtol,
            ),
            f"MSE of H ∈ {_multi(params)} vs R_dGD(η*, L') (all L')",
        ),
        Check(
            "dgd_mc",
            ZScore(
                "Exact finite-L risk (§HE-4.3-RISK) against its Monte Carlo estimate on "
                "the same prompts: only MC error. Resolution 10%: 4 SE of the quick preset's "
                "16k prompts are about 6% of the risk at L' = 10.",
                max_z=4.0,
                rel_resolution=0.1,
            ),
            "debiased GD (η*) Monte Carlo vs exact risk",
        ),
        Check(
            "single_minus_multi",
            Tolerance(qualitative, rtol=1.0),
            "MSE(H=1) − MSE(H=2) at L' = L (paired)",
        ),
        Check(
            "length_gain",
            Tolerance(qualitative, rtol=1.0),
            f"MSE(L' = L) − MSE(L' = {max(params.lengths)}) per H "
            f"{list(params.compare_heads)} (paired)",
        ),
    )


CLAIM_OBS3 = Claim(
    id="HE-OBS3",
    source=Source(PAPER, "3, Obs. 3; 4.3", "Figure 4, (4.11)"),
    statement="Trained models with H >= 2 have nearly the test MSE of debiased one-step GD at "
    "every test length L', the one-head model is worse, and every softmax model improves as L' "
    "grows beyond the training L.",
    params=Obs3Params,
    presets=PRESETS_OBS3,
    predict=predict_obs3,
    measure=measure_obs3,
    checks=checks_obs3,
    figure="observations:figure_obs3",
    # multi-head models 50% above debiased GD (about the one-head level): 10 x the rtol 0.05
    wrong=scaled("tf_vs_dgd", 1.5),
    trains=default_training,
    summary="test MSE vs prompt length L': multi-head tracks debiased GD, beats one head (Fig. 4)",
    catalogue=(2, 3),
    paper_figures=(
        PaperFigure(
                4,
                ("HE-OBS3",),
                "paper:figure_4",
                "test MSE vs L' (10..100): left, trained H = 1, 2, 4, 8; right, the two-head TF at "
                "(ω, μ) = (0.13, 3.45), the single-head kernel (1/√d, μ*), GD, dGD and ridge",
                "left: Monte Carlo test MSE of one trained member per H (no +0.1 offset); right: "
                "Monte Carlo of the fixed ± pair and single-head kernel, GD and dGD at the "
                "training-L optimal steps (exact risks as lines, Monte Carlo as markers) and "
                "ridge λ = σ²d (Bayes)",
            ),
    ),
)


# ---------------------------------------------------------------------------------------------
# HE-OBS4: training dynamics (Figures 5 and 13)


@dataclass(frozen=True, kw_only=True)
class Obs4Params(TrainedParams):
    """HE-OBS4: the trajectories omega_h(t), mu_h(t) of the paired members."""

    show_heads: tuple[int, ...] = param(
        (1, 2, 4), help="H of the members drawn (per H the lowest validation loss)", low=1
    )
    noise_margin: float = param(
        4.0,
        help="a logged rise or fall counts when it exceeds this many SDs of the Adam noise",
        low=0,
        low_open=True,
    )
    snapshots: int = param(
        6, help="logged steps whose KQ circuits are stored for Figure 5 (drawn only)", low=2
    )

    def validate(self) -> None:
        super().validate()
        check_trained_heads(self, "show_heads")


PRESETS_OBS4 = trained_presets(Obs4Params, smoke={}, quick={}, paper={})


def predict_obs4(params: Obs4Params) -> Prediction:
    setting = params.setting
    fine = np.geomspace(0.02, 2.0, 400)
    single = theory.single_head_optimum(setting)
    return Prediction(
        values={
            "omega_rise_fall": 1.0,
            "mu_largest_drop": 0.0,
            "group_sum_largest_drop": 0.0,
            "persistence": 1.0,
        },
        figure_data={
            "omega_fine": fine,
            "mu_star_fine": theory.manifold_mu(fine, setting),
            "single_omega": single.omega,
            "single_mu": single.mu,
        },
    )


def measure_obs4(params: Obs4Params, runtime) -> Measurement:
    """`numerics.pattern_dynamics` of the paired members: per non-dummy head the rise and fall of
    |omega| and the largest drop of |mu|, per group the largest drop of its OV sum, per member the
    share of logs after the pattern first forms on which it holds."""
    ensemble = runtime.trained(training(params))
    kinds = numerics.member_kinds(ensemble)
    dynamics = numerics.pattern_dynamics(
        ensemble, np.flatnonzero(kinds.paired), params.noise_margin
    )
    shown = [numerics.representative(ensemble, h) for h in params.show_heads]
    steps = ensemble.steps
    snapshots = np.unique([0, *numerics.logged_steps(steps, steps[-1], params.snapshots - 1)])
    return Measurement(
        values={
            "omega_rise_fall": Estimate(
                dynamics.rise_and_fall, dynamics.rise_and_fall_error, "bound"
            ),
            "mu_largest_drop": Estimate(dynamics.mu_drop, 0.0, "bound"),
            "group_sum_largest_drop": Estimate(dynamics.group_sum_drop, 0.0, "bound"),
            "persistence": Estimate(dynamics.persistence, 0.0, "bound"),
        },
        figure_data={
            "steps": ensemble.steps.astype(float),
            "shown_heads": ensemble.heads[shown].astype(float),
            "omega": ensemble.omega[:, shown],
            "mu": ensemble.mu[:, shown],
            "formed_at": dynamics.formed_at,
            # Figure 5: the shown members' circuits at the first logged step, then geometrically
            "snapshot_steps": steps[snapshots].astype(float),
            "snapshot_KQ": ensemble.KQ_history[snapshots][:, shown],  # (S, M, H, D, D)
            "snapshot_OV": ensemble.OV_history[snapshots][:, shown],
        },
    )


def checks_obs4(params: Obs4Params) -> tuple[Check, ...]:
    return (
        Check(
            "omega_rise_fall",
            Tolerance(
                f"1 when |ω_h(t)| peaks strictly inside the run and the peak exceeds both "
                f"ends by {params.noise_margin:g} SDs of the Adam noise (residual SD about "
                f"a line over the last quarter of the logs), else 0; one head without the "
                f"peak contradicts the claim. A head peaking in the last quarter may still "
                f"be rising: undecided (error 1, inconclusive).",
                atol=0.5,
            ),
            "|ω_h| rises then falls (per non-dummy head of paired members; 1 = yes)",
        ),
        Check(
            "mu_largest_drop",
            Tolerance(
                "'Nearly monotone' after the pattern forms: the largest fall of |μ_h(t)| "
                "(moving average over 1/20 of the logs, which removes the Adam noise) below "
                "its running maximum, relative to the final |μ_h|; 5% allowed for "
                "'nearly'.",
                atol=0.05,
            ),
            "largest drop of smoothed |μ_h| / final |μ_h| after formation (per head)",
        ),
        Check(
            "group_sum_largest_drop",
            Tolerance(
                "The same measure for the OV group sums Σ₊μ, Σ₋μ, which the theory "
                "determines (HE-MAN: heads sharing a KQ scale are interchangeable, only "
                "their sum is fixed), so a head can hand its share to a same-sign head "
                "while the sum grows monotonically.",
                atol=0.05,
            ),
            "largest drop of smoothed |Σ₊μ|, |Σ₋μ| / final (per group)",
        ),
        Check(
            "persistence",
            Tolerance(
                "'Preserved': the pattern (sign matching, both signs) must hold on the "
                "logs after it first forms; 5% of the logs are allowed for heads crossing "
                "the dummy threshold while they form.",
                atol=0.05,
            ),
            "share of logs after formation with the pattern (per paired member)",
        ),
    )


CLAIM_OBS4 = Claim(
    id="HE-OBS4",
    source=Source(PAPER, "3, Obs. 4; App. A.1", "Figures 5, 13"),
    statement="During training |ω_h| first rises and then falls, |μ_h| grows nearly "
    "monotonically, and the sign-matched ± pattern, once formed, is preserved (paired members).",
    params=Obs4Params,
    presets=PRESETS_OBS4,
    predict=predict_obs4,
    measure=measure_obs4,
    checks=checks_obs4,
    figure="observations:figure_obs4",
    # the pattern held on only half of the logs after it forms: 0.5 off, 10 x the atol 0.05
    wrong=scaled("persistence", 0.5),
    trains=default_training,
    summary="|omega_h| rises then falls, |mu_h| grows, patterns persist",
    catalogue=(2, 4),
    paper_figures=(
        PaperFigure(
                5,
                ("HE-OBS4",),
                "paper:figure_5",
                "training dynamics of the two-head model: KQ heat maps at selected steps and "
                "ω_h(t), μ_h(t) with ±0.13 / ±3.5 guides",
                "KQ heat maps of the shown two-head member at logged steps from the first to the "
                "last; ω_h(t), μ_h(t) with the paper's ±0.13 / ±3.45 and the manifold guide "
                "±μ*(ω(t))",
            ),
    ),
)

CLAIMS = (CLAIM_OBS1, CLAIM_OBS2, CLAIM_OBS3, CLAIM_OBS4)
