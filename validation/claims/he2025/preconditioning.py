"""Non-isotropic covariates, He et al. (2025) §5.3 (Figures 12 and 15, Lemma E.4).

HE-5.3-KMS: on ``x ~ N(0, Sigma)`` with the KMS matrix ``Sigma_ij = rho^|i-j|`` two-head softmax
models learn ``KQ11^(1) = omega Gamma``, ``KQ11^(2) = -omega Gamma`` and OV last entries
``± mu`` (5.3), i.e. to first order in omega preconditioned debiased GD (5.5) with
``Gamma_eff = sum_h mu_h KQ11_h`` (= 2 mu omega Gamma); the paper reports that the learned
preconditioner is close to the optimal ``Gamma*`` of Lemma E.4 and closer to it than to
``Sigma^{-1}`` (Figure 12, right column; Figure 15 the inverses). The reference setting is
d = 5, L = 40, sigma2 = 0.1, rho = 0.5 — the paper's own d, L and rho are stripped [OPEN]
(reference §HE-5.3-KMS, §8 item 5).

Predictions (`theory._preconditioning`): the debiased optimum
``Gamma*_d = [Sigma + ((tr Sigma + d sigma2)/L) I]^{-1}`` (the trained model centres the
covariates, (5.5); derived in `theory._preconditioning`), the vanilla ``Gamma*`` of the reference,
``Sigma^{-1}`` (`theory.kms_inverse`) and the risk ``preconditioned_gd_risk(Gamma*_d)``.
Measurements (`numerics._he2025.preconditioning`): ``Gamma_eff`` of every paired member (members
whose heads end with one sign are trapped, `numerics.member_kinds`, and are excluded and counted, as
in HE-OBS1), its distances to the three targets with bootstrap errors over members, what the
model applies (the least-squares fit of its predictions on the d^2 debiased-GD features), the
heads' opposition, and the Monte Carlo risk on KMS prompts. Checks:

- ``opposition``: ``KQ11^(2) = -c KQ11^(1)`` (c > 0);
- ``distance_dgd``: ``||Gamma_eff - Gamma*_d||_F / ||Gamma*_d||_F = 0`` within a derived allowance;
- ``closer``: the margin by which Gamma_eff is closer to Gamma* than to Sigma^{-1}, decided at
  3 bootstrap SE, inconclusive otherwise;
- ``risk``: the trained model's risk against ``preconditioned_gd_risk(Gamma*_d)``;
- ``ov_off_pattern``, ``ov_zero_sum``: the OV half of (5.3), last rows (0, ..., 0, ±mu):
  RMS(ov21)/|ov22| per head and |mu_1 + mu_2|/(|mu_1| + |mu_2|) per member, both -> 0;
- ``first_order``: the step (5.4)-(5.5): what the model applies (the least-squares
  preconditioner of its predictions on the debiased-GD features) equals its first-order
  ``Gamma_eff``, up to the next odd order of (4.10).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from icl_verify.theory import kms_inverse, optimal_preconditioner, preconditioned_gd_risk
from icl_verify.validation.claim import Check, Claim, FigureRef, Reconstructed, Source
from icl_verify.validation.claims.he2025 import PAPER
from icl_verify.validation.claims.he2025._ensembles import (
    EnsembleParams,
)
from icl_verify.validation.claims.he2025._observations import CIRCUIT_PATTERN
from icl_verify.validation.estimates import Estimate, Measurement, Prediction
from icl_verify.validation.paper_figures import PaperFigure
from icl_verify.validation.params import param
from icl_verify.validation.rules import Tolerance

from icl_verify import numerics, theory
from icl_verify.covariance import kms_covariance

#: The quantities HE-5.3-KMS judges (each a key of its prediction and measurement).
KMS_QUANTITIES = (
    "opposition", "distance_dgd", "closer", "risk", "ov_off_pattern", "ov_zero_sum",
    "first_order",
)  # fmt: skip
#: One-sided allowance on the relative perpendicular part of KQ11^(2) against -KQ11^(1):
#: HE-OBS2 judges the homogeneity of |omega_h| across heads within 5%.
OPPOSITION_ATOL = 0.05
MARGIN_Z = 3.0  # the closer check is decided when its margin exceeds 3 bootstrap SE
#: Read-outs of `numerics.PairedPreconditioners` stored as they are for the figures and table.
FIGURE_FIELDS = (
    "learned", "first_order_gap", "omega_final", "member_risks", "dgd_risks", "dgd_risks_se",
    "excess_over_dgd", "excess_over_dgd_se", "margin", "margin_se",
)  # fmt: skip


@dataclass(frozen=True, kw_only=True)
class PreconditioningParams(EnsembleParams):
    """HE-5.3-KMS: two-head softmax members trained on KMS covariates."""

    rho: float = param(
        0.5,
        help="KMS correlation ρ of Σ_ij = ρ^|i-j| (the authors' default 0.5)",
        low=-1,
        high=1,
        low_open=True,
        high_open=True,
    )
    members: int = param(
        help="two-head members (init seeds train_seed + e)", low=2, role="ensemble"
    )
    n_prompts: int = param(
        help="Monte Carlo prompts of the fitted preconditioners and of the risks", low=64,
        role="count"
    )
    n_boot: int = param(
        2000, help="bootstrap resamples of the paired members", low=100, role="count"
    )
    omega_max: float = param(
        0.3,
        help="largest learned |ω_h| the distance allowance covers (the valley's O(ω⁴) "
        "curvature up to it); a member above it makes distance_dgd inconclusive",
        low=0,
        low_open=True,
    )

    def trainings(self) -> tuple[numerics.EnsembleTraining]:
        """Two-head members on KMS covariates of correlation ρ."""
        return (self.training((2,) * self.members, rho=self.rho),)


PRESETS = PreconditioningParams.presets(
    smoke=dict(members=3, steps=600, batch=128, log_every=10, n_prompts=4096, n_boot=500),
    # quick: 6 members and the shared quick training (10k steps at lr 3e-3): the distances to
    # Gamma*_d settle by ~3000 steps, the heads' opposition only by ~8000
    quick=dict(members=6, n_prompts=32_768),
    paper=dict(members=8, n_prompts=200_000),
)


def _targets(params: PreconditioningParams) -> np.ndarray:
    """(3, d, d): Γ*_d, Γ*, Σ⁻¹ (the order of the figures' and table's targets)."""
    sigma = kms_covariance(params.d, params.rho)
    return np.stack([
        optimal_preconditioner(sigma, params.setting, debiased=True),
        optimal_preconditioner(sigma, params.setting),
        kms_inverse(params.d, params.rho),
    ])  # fmt: skip


def _distance_allowance(params: PreconditioningParams) -> float:
    """Relative Frobenius allowance of ``Gamma_eff`` against ``Gamma*_d`` (see `checks_kms`)."""
    return 1.0 / params.L + theory.manifold_limit_bound(params.omega_max, params.setting)


def predict_kms(params: PreconditioningParams) -> Prediction:
    """Γ_eff = Γ*_d: distance 0, margin 1 (at Γ*), risk of dGD at Γ*_d."""
    sigma = kms_covariance(params.d, params.rho)
    targets = _targets(params)
    setting = params.setting
    risks = [
        preconditioned_gd_risk(targets[0], sigma, setting, debiased=True),
        preconditioned_gd_risk(targets[1], sigma, setting),
        preconditioned_gd_risk(targets[2], sigma, setting, debiased=True),
    ]
    return Prediction(
        values={
            "opposition": 0.0,
            "distance_dgd": 0.0,
            "closer": 1.0,
            "risk": risks[0],
            "ov_off_pattern": 0.0,
            "ov_zero_sum": 0.0,
            "first_order": 0.0,
        },
        figure_data={
            "targets": targets,
            "covariance": sigma,
            "target_risks": np.array(risks),
            "target_distances": np.linalg.norm(targets[:, None] - targets[None], axis=(-2, -1)),
            "distance_allowance": _distance_allowance(params),
        },
    )


def measure_kms(params: PreconditioningParams, runtime) -> Measurement:
    """Train (or load) the members; Γ_eff, its fit, distances, opposition and risks of the
    paired members (`numerics.read_paired_preconditioners`)."""
    ensemble = runtime.trained(*params.trainings())
    kinds = numerics.member_kinds(ensemble)
    KQ, OV = ensemble.circuits()
    figure_data = {
        "paired_count": float(kinds.paired.sum()),
        "trapped_count": float(kinds.trapped.sum()),
        "learned_all": numerics.learned_preconditioners(KQ, OV, params.d),
        "paired_mask": kinds.paired.astype(float),
    }
    if kinds.paired.sum() < 2:  # no bootstrap over fewer than two members: nothing can be judged
        nothing = Estimate(0.0, np.inf)
        return Measurement(dict.fromkeys(KMS_QUANTITIES, nothing), figure_data)
    paired = numerics.read_paired_preconditioners(
        ensemble,
        _targets(params),  # Gamma*_d, Gamma*, Sigma^{-1}: the margin is Gamma* against Sigma^{-1}
        margin_targets=(1, 2),
        n_prompts=params.n_prompts,
        n_boot=params.n_boot,
        seed=runtime.seed_for("prompts"),
        bootstrap_seed=runtime.seed_for("bootstrap"),
        device=runtime.device,
    )
    boot, boot_fit = paired.distances, paired.fitted_distances
    distance_error = 2.0 * boot.relative_se[0] + paired.first_order_gap.mean()
    if np.abs(paired.omega_final).max() > params.omega_max:  # beyond the allowance: not judged
        distance_error = np.inf
    resolved = abs(paired.margin) > MARGIN_Z * paired.margin_se
    members = np.flatnonzero(kinds.paired)
    # the OV half of (5.3), settled over the logs toward its structural limit 0 (as HE-OBS1/2)
    heads = numerics.head_patterns(ensemble, members, CIRCUIT_PATTERN)
    groups = numerics.group_patterns(ensemble, members, {"zero_sum": 0.0})
    # (5.5) holds to the next odd order of (4.10), of relative size <= d omega^2 (§HE-T4.2i)
    first_order_allowance = params.d * float(np.max(paired.omega_final**2))
    figure_data |= {
        "shown": float(paired.shown),
        "KQ_shown": KQ[paired.shown],
        "OV_shown": OV[paired.shown],
        "learned_mean": paired.learned.mean(axis=0),
        "fitted_mean": paired.fitted.mean(axis=0),
        "distances": boot.relative,
        "distances_se": boot.relative_se,
        "fitted_distances": boot_fit.relative,
        "fitted_distances_se": boot_fit.relative_se,
    }
    figure_data |= {name: getattr(paired, name) for name in FIGURE_FIELDS}
    return Measurement(
        values={
            # error bars as the rules use them (multiples of SEs and measured allowances)
            "opposition": Estimate(paired.opposition, paired.opposition_error, "bound"),
            "distance_dgd": Estimate(boot.relative[0], distance_error, "bound"),
            "closer": Estimate(
                paired.margin, MARGIN_Z * paired.margin_se if resolved else np.inf, "bound"
            ),
            "risk": Estimate(paired.risk, 4.0 * paired.risk_se, "bound"),
            "ov_off_pattern": Estimate(
                heads.value["ov_off_pattern"], heads.error["ov_off_pattern"], "bound"
            ),
            "ov_zero_sum": Estimate(
                groups.value["zero_sum"], groups.error["zero_sum"], "bound"
            ),
            "first_order": Estimate(
                paired.first_order_gap / first_order_allowance, 0.0, "bound"
            ),
        },
        figure_data=figure_data | {"first_order_allowance": np.array(first_order_allowance)},
    )


def checks_kms(params: PreconditioningParams) -> tuple[Check, ...]:
    return (*_ov_checks(), *_kq_checks(), *_optimum_checks(params))


def _ov_checks() -> tuple[Check, ...]:
    """The OV pattern (5.3): last rows (0, ..., 0, ±μ), the two heads' μ of opposite sign."""
    pattern = (
        "(5.3): the OV last rows are (0, ..., 0, ±μ). Structural limit 0; atol 0.05 is the "
        "reference's 5% agreement rule of the trained patterns (§HE-OBS1, as HE-OBS2's "
        "zero-sum and HE-5.1-LIN's OV pattern), read at the end of training with the error of "
        "a value that may still drift toward it (`numerics.settled_value`, as HE-OBS1/2)."
    )
    return (
        Check("ov_off_pattern", Tolerance(pattern, atol=0.05), "RMS(ov21)/|ov22| per head"),
        Check(
            "ov_zero_sum",
            Tolerance(pattern, atol=0.05),
            "|μ₁ + μ₂| / (|μ₁| + |μ₂|) per paired member",
        ),
    )


def _kq_checks() -> tuple[Check, ...]:
    """The KQ side: the first-order preconditioner (5.4)-(5.5) and the opposed heads (5.3)."""
    return (
        Check(
            "first_order",
            Tolerance(
                "(5.4)-(5.5): the model's prediction is preconditioned debiased GD with "
                "Γ_eff = Σ_h μ_h KQ11_h to first order in ω. Measured: "
                "‖Γ_fit − Γ_eff‖_F / ‖Γ*_d‖_F per paired member (Γ_fit: the "
                "least-squares preconditioner of its predictions on the d² debiased-GD "
                "features, what it applies), in units of the next odd order of (4.10), whose "
                "relative size is at most d ω² (§HE-T4.2i; d max|ω_h|² of the members). At "
                "most 1.",
                atol=1.0,
            ),
            "‖Γ_fit − Γ_eff‖_F/‖Γ*_d‖_F over d·max ω_h² (per paired member)",
        ),
        Check(
            "opposition",
            Tolerance(
                f"(5.3): KQ11 of head 2 is -c KQ11 of head 1. Measured: ‖K2/|K2| + K1/|K1‖|_F "
                f"(0 exactly then; the relative size of the part of K2 not along -K1) of the "
                f"last-quarter-mean blocks of each paired member; Adam noise and drift are the "
                f"error (batch-means SE of the blocks + change from the third quarter). "
                f"Allowance {OPPOSITION_ATOL:g}, the 5% within which HE-OBS2 judges the heads' "
                f"homogeneity.",
                atol=OPPOSITION_ATOL,
            ),
            "‖K₂/|K₂| + K₁/|K₁|‖_F (0 when KQ11⁽²⁾ = −c KQ11⁽¹⁾), mean over paired members",
        ),
    )


def _optimum_checks(params: PreconditioningParams) -> tuple[Check, ...]:
    """Γ_eff against the optimal preconditioner Γ*_d and Σ⁻¹ (Figure 12), and the risk."""
    allowance = _distance_allowance(params)
    curvature = theory.manifold_limit_bound(params.omega_max, params.setting)
    risk_atol = theory.debiased_excess_risk_bound(
        kms_covariance(params.d, params.rho), params.setting, allowance
    )
    return (
        Check(
            "distance_dgd",
            Tolerance(
                f"The trained model minimises the true loss; its first-order preconditioner "
                f"Γ_eff = Σ_h μ_h KQ11_h would be Γ*_d at ω → 0 (5.5)-(5.6). Allowed: "
                f"the O(1/L) error of L̃ (Prop. 4.1), 1/L = {1 / params.L:.3g}, plus the "
                f"valley's O(κd²ω⁴) curvature at ω_max = {params.omega_max:g} "
                f"({curvature:.2g}; theory.manifold_limit_bound, derived for Σ = I and "
                f"taken as the scale): {allowance:.3g}. Error bar: 2 bootstrap SE over paired "
                f"members (Adam noise of the final snapshots included) plus the measured "
                f"first-order error, the mean of ‖Γ_fit - Γ_eff‖_F/‖Γ*_d‖_F "
                f"(Γ_fit: least squares of the model's predictions on the d² features, what "
                f"it applies); infinite if a member's |ω_h| exceeds ω_max.",
                atol=allowance,
            ),
            "‖Γ_eff − Γ*_d‖_F / ‖Γ*_d‖_F (mean Γ_eff of the paired members)",
        ),
        Check(
            "closer",
            Tolerance(
                "Figure 12: Γ_eff is closer to Γ* than to Σ⁻¹. Margin m = "
                "(‖G - Σ⁻¹‖ - ‖G - Γ*‖) / ‖Γ* - Σ⁻¹‖ in [-1, 1] "
                "(1 at Γ*, -1 at Σ⁻¹); any m > 0 agrees (atol 1 about 1). Decided "
                f"when |m| > {MARGIN_Z:g} bootstrap SE (error {MARGIN_Z:g} SE), infinite error "
                "(inconclusive) otherwise.",
                atol=1.0,
            ),
            "margin closer to Γ* than to Σ⁻¹ (1 = at Γ*, −1 = at Σ⁻¹)",
        ),
        Check(
            "risk",
            Tolerance(
                f"The trained model's Monte Carlo risk on KMS prompts against the exact risk of "
                f"debiased GD at Γ*_d (Lemma E.4). Allowed: the largest excess risk of a "
                f"Γ within the distance allowance ({allowance:.3g} ‖Γ*_d‖_F) of "
                f"Γ*_d, tr(D Σ Dᵀ M) at D along Σ's top eigenvector: "
                f"{risk_atol:.3g}. Error: 4 Monte Carlo SE of the members' mean risk.",
                atol=risk_atol,
            ),
            "risk of the trained members vs risk of dGD at Γ*_d",
        ),
    )


def sigma_inverse_learned(params: PreconditioningParams, prediction: Prediction) -> Prediction:
    """The wrong prediction: the model learned Σ⁻¹ (whitening without the shrinkage of
    Lemma E.4): its distance to Γ*_d, margin -1 and the risk of dGD at Σ⁻¹."""
    targets = np.asarray(prediction.figure_data["targets"])
    distance = np.linalg.norm(targets[2] - targets[0]) / np.linalg.norm(targets[0])
    risk = float(np.asarray(prediction.figure_data["target_risks"])[2])
    return prediction.with_values(distance_dgd=float(distance), closer=-1.0, risk=risk)


def table_kms(
    params: PreconditioningParams, prediction: Prediction, measurement: Measurement
) -> str:
    """The three relative distances of the learned (and of the fitted) preconditioner
    (`figures.preconditioning.table_kms`)."""
    from icl_verify.figures import preconditioning  # matplotlib: only when a record is made

    return preconditioning.table_kms(params, prediction, measurement)


CLAIM_KMS = Claim(
    id="HE-5.3-KMS",
    source=Source(
        PAPER,
        "5.3, A.2, Lemma E.4",
        "(5.3)-(5.6), Figures 12 and 15",
        Reconstructed("(5.3), the learned KQ11 = ±ω Γ of the two heads", "HE-5.3-KMS", "RECON"),
    ),
    statement="On KMS covariates Σ_ij = ρ^|i-j| two-head softmax models learn KQ11 = "
    "±ω Γ, i.e. preconditioned debiased GD with Γ_eff = sum_h μ_h KQ11_h close to "
    "the optimal preconditioner of Lemma E.4 (closer to it than to Σ⁻¹), at its risk.",
    params=PreconditioningParams,
    presets=PRESETS,
    predict=predict_kms,
    measure=measure_kms,
    checks=checks_kms,
    figure=(
        FigureRef("icl_verify.figures.preconditioning", "figure_12"),
        FigureRef("icl_verify.figures.preconditioning", "figure_15"),
    ),
    table=table_kms,
    wrong=sigma_inverse_learned,
    summary=(
        "two heads on KMS covariates: KQ11 = ±ω Γ; Γ_eff = sum_h μ_h KQ11_h "
        "against the optimal preconditioners (debiased, vanilla) and Σ⁻¹; risk (Figs. "
        "12, 15)"
    ),
    catalogue=(6, 5),
    paper_figures=(
        PaperFigure(
            12,
            ("HE-5.3-KMS",),
            FigureRef("icl_verify.figures.preconditioning", "figure_12"),
            "non-isotropic (KMS) covariates: KQ11 of both heads (±ω Γ); Γ_learned vs Σ⁻¹ and Γ*",
            "HE-5.3-KMS's Figure 12",
        ),
        PaperFigure(
            15,
            ("HE-5.3-KMS",),
            FigureRef("icl_verify.figures.preconditioning", "figure_15"),
            "inverse of the learned KQ11 vs Σ and (Γ*)⁻¹",
            "HE-5.3-KMS's Figure 15",
        ),
    ),
)

CLAIMS = (CLAIM_KMS,)
