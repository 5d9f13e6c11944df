"""The KMS preconditioner of He et al. (2025), Appendix A.2 and Lemma E.4 (reference §HE-5.3-KMS).

HE-A2-KMS: on ``x ~ N(0, Sigma)`` with the KMS matrix ``Sigma_ij = rho^|i-j|``,

- the inverse of Sigma is tridiagonal, ``(1/(1-rho^2)) tridiag(-rho; 1, 1+rho^2, ..., 1; -rho)``
  (`theory.kms_inverse`), against LAPACK's inverse of the matrix (`numpy.linalg.inv`);
- the preconditioner that minimises the risk of one-step GD is Lemma E.4's
  ``Gamma* = [(1 + 1/L) Sigma + ((tr Sigma + d sigma2)/L) I]^{-1}`` (`theory.
  optimal_preconditioner`), against the least-squares fit of simulated labels
  (`numerics.simulated_optimal_preconditioner`) at each L;
- ``Gamma* - Sigma^{-1} = O(d/L)``: the fitted log-log slope of the measured
  ``||Gamma_fit(L) - Sigma^{-1}||_F`` against L is -1, within the bias of the next order over
  the fitted L (read from Gamma*(L) itself).

The trained two-head models' own preconditioner is HE-5.3-KMS's. Figure:
`figures.preconditioning.figure_kms_preconditioner`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from icl_verify.validation.claim import Check, Claim, FigureRef, Source, shifted
from icl_verify.validation.claims.he2025 import PAPER
from icl_verify.validation.estimates import Estimate, Measurement, Prediction
from icl_verify.validation.params import ParameterError, Params, param
from icl_verify.validation.rules import (
    LogLogSlope,
    Tolerance,
    ZScore,
    fit_loglog_slope,
    propagated_loglog_slope,
)

from icl_verify import numerics, statistics, theory
from icl_verify.covariance import kms_covariance

#: Family-wise false-alarm rate of the entrywise z-scores of the fitted preconditioners.
FAMILY_RATE = 0.01


def max_z(params: KmsPreconditionerParams) -> float:
    """The |t| bound of the fitted entries: each is a t with (blocks - 1) degrees of freedom
    (its SE from the blocks' spread), and all d^2 entries at every L together exceed it with
    probability at most `FAMILY_RATE` (Bonferroni).

    >>> round(max_z(PRESETS["quick"]), 2)  # 40 blocks, 125 entries
    4.41
    """
    entries = params.d**2 * len(params.L_values)
    return statistics.family_z_bound(FAMILY_RATE, entries, dof=params.n_prompts // 4096 - 1)


@dataclass(frozen=True, kw_only=True)
class KmsPreconditionerParams(Params):
    """HE-A2-KMS: the KMS setting and the prompt lengths at which Γ* is measured."""

    d: int = param(5, help="covariate dimension d", low=2, role="width")
    rho: float = param(0.5, help="KMS correlation ρ of Σ_ij = ρ^|i-j|", low=-1, high=1,
                       low_open=True, high_open=True)  # fmt: skip
    sigma2: float = param(0.1, help="label-noise variance σ²", low=0)
    L_values: tuple[int, ...] = param(help="prompt lengths L (increasing)", low=1, role="length")
    n_prompts: int = param(
        help="simulated prompts per L (blocks of 4096)", low=2 * 4096, role="count"
    )

    HELD_AT_LEAST = 4096  # one block of prompts at a time

    def validate(self) -> None:
        if len(self.L_values) < 2 or list(self.L_values) != sorted(set(self.L_values)):
            raise ParameterError(
                f"L_values must be >= 2 increasing lengths, got {list(self.L_values)}"
            )

    def setting(self, L: int) -> theory.Setting:
        return theory.Setting(self.d, L, self.sigma2)


PRESETS = {
    "smoke": KmsPreconditionerParams(L_values=(40, 80, 160), n_prompts=40 * 4096),
    "quick": KmsPreconditionerParams(L_values=(40, 80, 160, 320, 640), n_prompts=40 * 4096),
    "paper": KmsPreconditionerParams(L_values=(40, 80, 160, 320, 640, 1280), n_prompts=80 * 4096),
}


def _distances(params: KmsPreconditionerParams, preconditioners) -> np.ndarray:
    inverse = theory.kms_inverse(params.d, params.rho)
    return np.array([np.linalg.norm(g - inverse) for g in preconditioners])


def predict_kms(params: KmsPreconditionerParams) -> Prediction:
    """Σ⁻¹ in closed form; Γ*(L) of Lemma E.4; the order -1 of Γ* - Σ⁻¹."""
    sigma = kms_covariance(params.d, params.rho)
    optimal = np.array([theory.optimal_preconditioner(sigma, params.setting(L))
                        for L in params.L_values])  # (n_L, d, d)  # fmt: skip
    return Prediction(
        values={
            "inverse": theory.kms_inverse(params.d, params.rho),
            "optimal": optimal,
            "order": np.asarray(-1.0),
        },
        figure_data={"distance": _distances(params, optimal)},
    )


def measure_kms(params: KmsPreconditionerParams, runtime) -> Measurement:
    """LAPACK's inverse of Σ (error: its backward-error bound); the simulated Γ_fit(L)
    with block SEs; the slope of ‖Γ_fit - Σ⁻¹‖_F (debiased of the fit's noise)."""
    sigma = kms_covariance(params.d, params.rho)
    inverse = np.linalg.inv(sigma)
    fits = [
        numerics.simulated_optimal_preconditioner(
            params.d, L, params.sigma2, rho=params.rho, n_prompts=params.n_prompts,
            seed=runtime.seed_for(f"prompts-L{L}"),
        )
        for L in runtime.progress(params.L_values, "L")
    ]  # fmt: skip
    value = np.array([f.value for f in fits])  # (n_L, d, d)
    stderr = np.array([f.stderr for f in fits])
    gap = value - inverse  # (n_L, d, d)
    # E||fit - target||^2 = ||mean - target||^2 + sum of the entries' variances: removed
    squared = np.sum(gap**2, axis=(1, 2)) - np.sum(stderr**2, axis=(1, 2))
    distance = np.sqrt(np.maximum(squared, 0.0))
    distance_se = np.sqrt(np.sum((gap * stderr) ** 2, axis=(1, 2))) / np.maximum(distance, 1e-300)
    measured_distance = Estimate(distance, distance_se, "se")
    return Measurement(
        values={
            "inverse": Estimate(inverse, 0.0, "bound"),
            "optimal": Estimate(value, stderr, "se"),
            "order": propagated_loglog_slope(params.L_values, measured_distance),
        },
        figure_data={"distance": distance, "distance_se": distance_se},
    )


def order_bias(params: KmsPreconditionerParams) -> float:
    """How far the exact slope of ||Gamma*(L) - Sigma^{-1}||_F over `L_values` is from -1 (the
    next order, d/L^2 relative): the slope rule's allowance.

    >>> round(order_bias(PRESETS["quick"]), 3)
    0.102
    """
    distance = predict_kms(params).figure_data["distance"]
    return abs(fit_loglog_slope(params.L_values, distance).slope.value + 1.0)


def inverse_rounding(params: KmsPreconditionerParams) -> float:
    """The accuracy of a backward-stable inverse of Sigma: 4 d cond(Sigma) eps max|Sigma^-1|.

    >>> inverse_rounding(PRESETS["quick"]) < 1e-13
    True
    """
    sigma = kms_covariance(params.d, params.rho)
    return float(4 * params.d * np.linalg.cond(sigma) * np.finfo(float).eps
                 * np.abs(theory.kms_inverse(params.d, params.rho)).max())  # fmt: skip


def checks_kms(params: KmsPreconditionerParams) -> tuple[Check, ...]:
    bias = order_bias(params)
    return (
        Check("inverse", Tolerance("LAPACK's inverse is backward stable: entries within 4 d "
                                   "cond(Σ) ε max|Σ⁻¹| of the exact inverse, the only allowance",
                                   atol=inverse_rounding(params)),
              "LAPACK inverse of Σ vs the tridiagonal closed form"),
        Check("optimal", ZScore("Monte Carlo: block standard errors of the least-squares fit "
                                f"({params.n_prompts // 4096} blocks: t with that many less one "
                                f"dof), |t| ≤ {max_z(params):.2f} over every entry and L "
                                f"(family-wise {FAMILY_RATE:.0%}, Bonferroni); resolves 0.05, 5% "
                                "of Γ*'s diagonal", max_z=max_z(params), abs_resolution=0.05),
              "simulated Γ_fit(L) vs Γ*(L), every entry"),
        Check("order", LogLogSlope(f"the next order of Γ* - Σ⁻¹ bends the log-log line "
                                   f"over these L: the exact curve's slope is {bias:.3f} from -1",
                                   atol=bias),
              "slope of ‖Γ_fit − Σ⁻¹‖_F against L"),
    )  # fmt: skip


CLAIM_KMS_PRECONDITIONER = Claim(
    id="HE-A2-KMS",
    source=Source(PAPER, "A.2", "(5.6), Lemma E.4"),
    statement="On KMS covariates Σ⁻¹ is tridiagonal, the risk-minimising preconditioner of "
    "one-step GD is Γ* = [(1+1/L)Σ + ((tr Σ + dσ²)/L) I]⁻¹, and Γ* − Σ⁻¹ = O(d/L).",
    params=KmsPreconditionerParams,
    presets=PRESETS,
    predict=predict_kms,
    measure=measure_kms,
    checks=checks_kms,
    figure=FigureRef("icl_verify.figures.preconditioning", "figure_kms_preconditioner"),
    wrong=shifted(
        "order",
        lambda order: order + 0.5,
        why="Γ* − Σ⁻¹ = O(d/√L) instead of O(d/L): slope −1/2, 5 times the quick size's "
        "allowance (0.1).",
    ),
    summary="KMS: tridiagonal inverse, Γ* of Lemma E.4 measured, Γ* - inv(Σ) ~ d/L",
    catalogue=(6, 10),
)

CLAIMS = (CLAIM_KMS_PRECONDITIONER,)
