"""Non-isotropic covariates, He et al. (2025) §5.3 (Figures 12 and 15, Lemma E.4).

HE-5.3-KMS: on ``x ~ N(0, Sigma)`` with the KMS matrix ``Sigma_ij = rho^|i-j|`` two-head softmax
models learn ``KQ11^(1) = omega Gamma``, ``KQ11^(2) = -omega Gamma`` and OV last entries
``± mu`` (5.3), i.e. to first order in omega preconditioned debiased GD (5.5) with
``Gamma_eff = sum_h mu_h KQ11_h`` (= 2 mu omega Gamma); the paper reports that the learned
preconditioner is close to the optimal ``Gamma*`` of Lemma E.4 and closer to it than to
``Sigma^{-1}`` (Figure 12, right column; Figure 15 the inverses). The reference setting is
d = 5, L = 40, sigma2 = 0.1, rho = 0.5 — the paper's own d, L and rho are stripped [OPEN]
(reference §HE-5.3-KMS, §8 item 5).

Predictions (`theory.preconditioning`): the debiased optimum
``Gamma*_d = [Sigma + ((tr Sigma + d sigma2)/L) I]^{-1}`` (the trained model centres the
covariates, (5.5); derived in `theory.preconditioning`), the vanilla ``Gamma*`` of the reference,
``Sigma^{-1}`` (`theory.kms_inverse`) and the risk ``preconditioned_gd_risk(Gamma*_d)``.
Measurements (`numerics.preconditioning`): ``Gamma_eff`` of every paired member (members whose
heads end with one sign are trapped, `numerics.member_kinds`, and are excluded and counted, as
in HE-OBS1), its distances to the three targets with bootstrap errors over members, what the
model applies (the least-squares fit of its predictions on the d^2 debiased-GD features), the
heads' opposition, and the Monte Carlo risk on KMS prompts. Checks:

- ``opposition``: ``KQ11^(2) = -c KQ11^(1)`` (c > 0);
- ``distance_dgd``: ``||Gamma_eff - Gamma*_d||_F / ||Gamma*_d||_F = 0`` within a derived allowance;
- ``closer``: the margin by which Gamma_eff is closer to Gamma* than to Sigma^{-1}, decided at
  3 bootstrap SE, inconclusive otherwise;
- ``risk``: the trained model's risk against ``preconditioned_gd_risk(Gamma*_d)``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from icl_verify.theory.preconditioning import (
    kms_inverse,
    optimal_preconditioner,
    preconditioned_gd_risk,
)
from icl_verify.validation.claim import (
    Check,
    Claim,
    Estimate,
    Measurement,
    Prediction,
    Source,
    Tolerance,
)
from icl_verify.validation.claims._trained import (
    TrainingParams,
    trained_presets,
    training,
)
from icl_verify.validation.params import param

from icl_verify import numerics, theory
from icl_verify.covariance import kms_covariance

PAPER = "He et al. 2025"
TARGETS = ("Γ*_d (debiased)", "Γ* (vanilla)", "Σ⁻¹")
#: One-sided allowance on the relative perpendicular part of KQ11^(2) against -KQ11^(1):
#: HE-OBS2 judges the homogeneity of |omega_h| across heads within 5%.
OPPOSITION_ATOL = 0.05
MARGIN_Z = 3.0  # the closer check is decided when its margin exceeds 3 bootstrap SE


@dataclass(frozen=True, kw_only=True)
class PreconditioningParams(TrainingParams):
    """HE-5.3-KMS: two-head softmax members trained on KMS covariates."""

    rho: float = param(
        0.5,
        help="KMS correlation rho of Sigma_ij = rho^|i-j| (the authors' default 0.5)",
        low=-1,
        high=1,
        low_open=True,
        high_open=True,
    )
    members: int = param(help="two-head members (init seeds train_seed + e)", low=2)
    n_prompts: int = param(
        help="Monte Carlo prompts of the fitted preconditioners and of the risks", low=64
    )
    n_boot: int = param(2000, help="bootstrap resamples of the paired members", low=100)
    omega_max: float = param(
        0.3,
        help="largest learned |omega_h| the distance allowance covers (the valley's O(ω⁴) "
        "curvature up to it); a member above it makes distance_dgd inconclusive",
        low=0,
        low_open=True,
    )


PRESETS = trained_presets(
    PreconditioningParams,
    smoke=dict(members=3, steps=600, batch=128, log_every=10, n_prompts=4096, n_boot=500),
    # quick: 6 members and the shared quick training (10k steps at lr 3e-3): the distances to
    # Gamma*_d settle by ~3000 steps, the heads' opposition only by ~8000
    quick=dict(members=6, n_prompts=32_768),
    paper=dict(members=8, n_prompts=200_000),
)


def _targets(params: PreconditioningParams) -> np.ndarray:
    """(3, d, d): Gamma*_d, Gamma*, Sigma^{-1} (the order of TARGETS)."""
    sigma = kms_covariance(params.d, params.rho)
    return np.stack([
        optimal_preconditioner(sigma, params.setting, debiased=True),
        optimal_preconditioner(sigma, params.setting),
        kms_inverse(params.d, params.rho),
    ])  # fmt: skip


def _distance_allowance(params: PreconditioningParams) -> float:
    """Relative Frobenius allowance of ``Gamma_eff`` against ``Gamma*_d`` (see `checks_kms`)."""
    return 1.0 / params.L + theory.manifold_limit_bound(params.omega_max, params.setting)


def _risk_allowance(params: PreconditioningParams) -> float:
    """The largest excess risk of dGD at a Gamma within the distance allowance of Gamma*_d.

    The risk is a quadratic in Gamma with ``risk(G* + D) - risk(G*) = tr(D Sigma D^T M)``; M is
    a polynomial in Sigma, so the largest value over ``||D||_F = 1`` is at ``D = v v^T``, v the
    top eigenvector of Sigma; it scales with ``||D||_F^2``.
    """
    sigma = kms_covariance(params.d, params.rho)
    best = _targets(params)[0]
    top = np.linalg.eigh(sigma)[1][:, -1]  # (d,)
    unit = preconditioned_gd_risk(best + np.outer(top, top), sigma, params.setting, True)
    curvature = unit - preconditioned_gd_risk(best, sigma, params.setting, True)
    radius = _distance_allowance(params) * np.linalg.norm(best)
    return float(curvature * radius**2)


def predict_kms(params: PreconditioningParams) -> Prediction:
    """Gamma_eff = Gamma*_d: distance 0, margin 1 (at Gamma*), risk of dGD at Gamma*_d."""
    sigma = kms_covariance(params.d, params.rho)
    targets = _targets(params)
    setting = params.setting
    risks = [
        preconditioned_gd_risk(targets[0], sigma, setting, debiased=True),
        preconditioned_gd_risk(targets[1], sigma, setting),
        preconditioned_gd_risk(targets[2], sigma, setting, debiased=True),
    ]
    return Prediction(
        values={"opposition": 0.0, "distance_dgd": 0.0, "closer": 1.0, "risk": risks[0]},
        figure_data={
            "targets": targets,
            "covariance": sigma,
            "target_risks": np.array(risks),
            "target_distances": np.linalg.norm(targets[:, None] - targets[None], axis=(-2, -1)),
            "distance_allowance": _distance_allowance(params),
        },
    )


def _opposition(ensemble, members: np.ndarray) -> tuple[float, float]:
    """Mean over members of ``||K2/|K2| + K1/|K1|||_F`` of the last-quarter-mean KQ11 blocks,
    and its error: the batch-means SE of those blocks (5 batches) plus the drift from the third
    quarter's value (`numerics.settled_mean`'s construction, applied to matrices). A member
    still approaching the pattern (third-quarter value above the last by more than the noise)
    has the whole value as its error, as `numerics.settled_value` does: not judged yet."""
    from icl_verify.numerics.preconditioning import head_opposition  # torch: when measured

    history = ensemble.KQ_history[:, members]  # (n, M, H, D, D)
    history = history[np.isfinite(history).all(axis=(1, 2, 3, 4))]
    quarter = max(1, history.shape[0] // 4)
    last, third = history[-quarter:], history[-2 * quarter : -quarter]

    def residual(blocks):  # (M, H, D, D) -> (M,)
        return np.sqrt(np.maximum(2.0 * (1.0 + head_opposition(blocks, ensemble.d)), 0))

    value = residual(last.mean(axis=0))
    earlier = residual(third.mean(axis=0))
    batches = np.stack([b.mean(axis=0) for b in np.array_split(last, 5)])  # (5, M, H, D, D)
    d = ensemble.d
    spread = batches[..., :2, :d, :d] - last.mean(axis=0)[None, ..., :2, :d, :d]
    se = np.sqrt((spread**2).sum(axis=(0, 3, 4)) / (5 * 4))  # (M, 2)
    size = np.linalg.norm(last.mean(axis=0)[..., :2, :d, :d], axis=(-2, -1))  # (M, 2)
    noise = np.sqrt(((se / size) ** 2).sum(axis=1))  # (M,)
    # still falling toward the pattern by more than its noise: may reach it, not judged yet
    error = np.where(earlier - value > noise, value, np.abs(value - earlier) + noise)
    return float(value.mean()), float(error.mean())


def _training(params: PreconditioningParams) -> numerics.EnsembleTraining:
    """Two-head members on KMS covariates of correlation rho."""
    return training(params, heads=(2,) * params.members, rho=params.rho)


def measure_kms(params: PreconditioningParams, runtime) -> Measurement:
    """Train (or load) the members; Gamma_eff, its fit, distances, opposition and risks."""
    # imported here, not at the top: it imports torch, and `icl-verify list` must stay light
    from icl_verify.numerics.preconditioning import (
        bootstrap_distances,
        fitted_preconditioners,
        learned_preconditioners,
        preconditioned_losses,
    )

    seed = runtime.seed % (2**62)
    ensemble = runtime.trained(_training(params))
    kinds = numerics.member_kinds(ensemble)
    paired = np.flatnonzero(kinds.paired)
    targets = _targets(params)
    KQ, OV = ensemble.circuits()
    figure_data = {
        "paired_count": float(paired.size),
        "trapped_count": float(kinds.trapped.sum()),
        "learned_all": learned_preconditioners(KQ, OV, params.d),
        "paired_mask": kinds.paired.astype(float),
    }
    if paired.size < 2:  # no bootstrap over fewer than two members: nothing can be judged
        nothing = Estimate(0.0, np.inf)
        return Measurement(
            {"opposition": nothing, "distance_dgd": nothing, "closer": nothing, "risk": nothing},
            figure_data,
        )
    shown = int(paired[np.argmin(ensemble.test_loss[-1, paired])])
    learned = learned_preconditioners(KQ[paired], OV[paired], params.d)  # (M, d, d)
    fitted = fitted_preconditioners(
        ensemble, paired.tolist(), n_prompts=params.n_prompts, seed=seed, device=runtime.device
    )
    scale = np.linalg.norm(targets[0])
    first_order = np.linalg.norm(fitted.value - learned, axis=(-2, -1)) / scale  # (M,)
    boot = bootstrap_distances(learned, targets, n_boot=params.n_boot, seed=seed)
    boot_fit = bootstrap_distances(fitted.value, targets, n_boot=params.n_boot, seed=seed)
    omega = np.abs(ensemble.omega[-1, paired, :2]).max()
    distance_error = 2.0 * boot.relative_se[0] + first_order.mean()
    if omega > params.omega_max:  # beyond the allowance's range: cannot be judged
        distance_error = np.inf
    # margin: how much closer to Gamma* than to Sigma^{-1}, in units of their distance
    gap = np.linalg.norm(targets[1] - targets[2])
    margin, margin_se = (v / gap for v in boot.difference(2, 1))
    resolved = abs(margin) > MARGIN_Z * margin_se
    losses = preconditioned_losses(
        ensemble,
        {f"member{e}": int(e) for e in paired},
        {"dGD at mean Γ_eff": learned.mean(axis=0), "dGD at Γ*_d": targets[0]},
        n_prompts=params.n_prompts,
        seed=seed,
        device=runtime.device,
    )
    names = [f"member{e}" for e in paired]
    index = [losses.names.index(n) for n in names]
    risk = float(losses.mean[index].mean())
    risk_se = float(np.sqrt(losses.covariance[np.ix_(index, index)].mean() / losses.n))
    opposition = _opposition(ensemble, paired)
    figure_data |= {
        "shown": float(shown),
        "KQ_shown": KQ[shown],
        "OV_shown": OV[shown],
        "learned": learned,
        "learned_mean": learned.mean(axis=0),
        "fitted_mean": fitted.value.mean(axis=0),
        "distances": boot.relative,
        "distances_se": boot.relative_se,
        "fitted_distances": boot_fit.relative,
        "fitted_distances_se": boot_fit.relative_se,
        "first_order_gap": first_order,
        "omega_final": ensemble.omega[-1, paired, :2],
        "member_risks": losses.mean[index],
        "dgd_risks": np.array([losses[n].mean for n in losses.names[len(names) :]]),
        "dgd_risks_se": np.array([losses[n].stderr for n in losses.names[len(names) :]]),
        "excess_over_dgd": np.array([losses.difference(n, "dGD at Γ*_d").mean for n in names]),
        "excess_over_dgd_se": np.array([losses.difference(n, "dGD at Γ*_d").stderr for n in names]),
        "margin": margin,
        "margin_se": margin_se,
    }
    return Measurement(
        values={
            # error bars as the rules use them (multiples of SEs and measured allowances)
            "opposition": Estimate(*opposition, "bound"),
            "distance_dgd": Estimate(boot.relative[0], distance_error, "bound"),
            "closer": Estimate(margin, MARGIN_Z * margin_se if resolved else np.inf, "bound"),
            "risk": Estimate(risk, 4.0 * risk_se, "bound"),
        },
        figure_data=figure_data,
    )


def checks_kms(params: PreconditioningParams) -> tuple[Check, ...]:
    allowance = _distance_allowance(params)
    curvature = theory.manifold_limit_bound(params.omega_max, params.setting)
    risk_atol = _risk_allowance(params)
    return (
        Check(
            "opposition",
            Tolerance(
                f"(5.3): KQ11 of head 2 is -c KQ11 of head 1. Measured: ||K2/|K2| + K1/|K1|||_F "
                f"(0 exactly then; the relative size of the part of K2 not along -K1) of the "
                f"last-quarter-mean blocks of each paired member; Adam noise and drift are the "
                f"error (batch-means SE of the blocks + change from the third quarter). "
                f"Allowance {OPPOSITION_ATOL:g}, the 5% within which HE-OBS2 judges the heads' "
                f"homogeneity.",
                atol=OPPOSITION_ATOL,
            ),
            "‖K₂/|K₂| + K₁/|K₁|‖_F (0 when KQ11⁽²⁾ = −c KQ11⁽¹⁾), mean over paired members",
        ),
        Check(
            "distance_dgd",
            Tolerance(
                f"The trained model minimises the true loss; its first-order preconditioner "
                f"Gamma_eff = Σ_h μ_h KQ11_h would be Gamma*_d at ω -> 0 (5.5)-(5.6). Allowed: "
                f"the O(1/L) error of L̃ (Prop. 4.1), 1/L = {1 / params.L:.3g}, plus the "
                f"valley's O(κd²ω⁴) curvature at ω_max = {params.omega_max:g} "
                f"({curvature:.2g}; theory.manifold_limit_bound, derived for Sigma = I and "
                f"taken as the scale): {allowance:.3g}. Error bar: 2 bootstrap SE over paired "
                f"members (Adam noise of the final snapshots included) plus the measured "
                f"first-order error, the mean of ||Gamma_fit - Gamma_eff||_F/||Gamma*_d||_F "
                f"(Gamma_fit: least squares of the model's predictions on the d² features, what "
                f"it applies); infinite if a member's |ω_h| exceeds ω_max.",
                atol=allowance,
            ),
            "‖Γ_eff − Γ*_d‖_F / ‖Γ*_d‖_F (mean Γ_eff of the paired members)",
        ),
        Check(
            "closer",
            Tolerance(
                "Figure 12: Gamma_eff is closer to Gamma* than to Sigma^{-1}. Margin m = "
                "(||G - Sigma^{-1}|| - ||G - Gamma*||) / ||Gamma* - Sigma^{-1}|| in [-1, 1] "
                "(1 at Gamma*, -1 at Sigma^{-1}); any m > 0 agrees (atol 1 about 1). Decided "
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
                f"debiased GD at Gamma*_d (Lemma E.4). Allowed: the largest excess risk of a "
                f"Gamma within the distance allowance ({allowance:.3g} ||Gamma*_d||_F) of "
                f"Gamma*_d, tr(D Sigma D^T M) at D along Sigma's top eigenvector: "
                f"{risk_atol:.3g}. Error: 4 Monte Carlo SE of the members' mean risk.",
                atol=risk_atol,
            ),
            "risk of the trained members vs risk of dGD at Γ*_d",
        ),
    )


def sigma_inverse_learned(params: PreconditioningParams, prediction: Prediction) -> Prediction:
    """The wrong prediction: the model learned Sigma^{-1} (whitening without the shrinkage of
    Lemma E.4): its distance to Gamma*_d, margin -1 and the risk of dGD at Sigma^{-1}."""
    targets = np.asarray(prediction.figure_data["targets"])
    distance = np.linalg.norm(targets[2] - targets[0]) / np.linalg.norm(targets[0])
    risk = float(np.asarray(prediction.figure_data["target_risks"])[2])
    return prediction.with_values(distance_dgd=float(distance), closer=-1.0, risk=risk)


def table_kms(
    params: PreconditioningParams, prediction: Prediction, measurement: Measurement
) -> str:
    """The three relative distances of the learned (and of the fitted) preconditioner."""
    data = measurement.figure_data
    if "distances" not in data:
        return "Fewer than two paired members: no preconditioner measured."
    risks = np.asarray(prediction.figure_data["target_risks"])
    rows = [
        f"Relative Frobenius distances ‖Γ − T‖_F / ‖T‖_F of the mean over "
        f"{int(data['paired_count'])} paired members ({int(data['trapped_count'])} trapped, "
        f"excluded); ± one bootstrap SE over members. Γ_eff = Σ_h μ_h KQ11_h (weights); Γ_fit = "
        f"least squares of the model's predictions on the d² dGD features (what it applies).",
        "",
        "| target T | ‖Γ_eff − T‖/‖T‖ | ‖Γ_fit − T‖/‖T‖ | dGD/GD risk at T (exact) |",
        "|---|---|---|---|",
    ]
    for t, name in enumerate(TARGETS):
        rows.append(
            f"| {name} | {data['distances'][t]:.4f} ± {data['distances_se'][t]:.4f} | "
            f"{data['fitted_distances'][t]:.4f} ± {data['fitted_distances_se'][t]:.4f} | "
            f"{risks[t]:.5f} |"
        )
    rows += [
        "",
        f"Trained risk (MC) {measurement.values['risk'].value:.5f}; dGD at mean Γ_eff (MC) "
        f"{data['dgd_risks'][0]:.5f} ± {data['dgd_risks_se'][0]:.5f}; dGD at Γ*_d (MC) "
        f"{data['dgd_risks'][1]:.5f} ± {data['dgd_risks_se'][1]:.5f}; trained − dGD at Γ*_d "
        f"(paired, per member): "
        + ", ".join(
            f"{v:+.4f} ± {e:.4f}"
            for v, e in zip(data["excess_over_dgd"], data["excess_over_dgd_se"], strict=True)
        )
        + ".",
    ]
    return "\n".join(rows)


CLAIM_KMS = Claim(
    id="HE-5.3-KMS",
    source=Source(PAPER, "5.3, A.2, Lemma E.4", "(5.3)-(5.6), Figures 12 and 15"),
    statement="On KMS covariates Sigma_ij = rho^|i-j| two-head softmax models learn KQ11 = "
    "±omega Gamma, i.e. preconditioned debiased GD with Gamma_eff = sum_h mu_h KQ11_h close to "
    "the optimal preconditioner of Lemma E.4 (closer to it than to Sigma^{-1}), at its risk.",
    params=PreconditioningParams,
    presets=PRESETS,
    predict=predict_kms,
    measure=measure_kms,
    checks=checks_kms,
    figure=("preconditioning:figure_12", "preconditioning:figure_15"),
    table=table_kms,
    wrong=sigma_inverse_learned,
    trains=lambda params: (_training(params),),
)

CLAIMS = (CLAIM_KMS,)
