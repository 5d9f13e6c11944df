"""HE-C-SOFTMAXNORM of He et al. (2025), App. C (Figure 20): the softmax-norm approximation.

The proof of Prop. 4.1 replaces ||p||^2, p = softmax(omega X^T x_q), by e^{omega^2 ||x_q||^2}/L
(~ 1/L when omega^2 d -> 0; the paper's formula is stripped, reference §HE-P4.1, §8 item 1).
`theory._softmax_norm` derives E[L ||p||^2] = M(omega^2) + C_1/L + C_2/L^2 + O(L^-3) over
x_q ~ N(0, I_d) (the delta method for the ratio of the two sample means, derivation
"softmax_norm") and the regime parameter rho = (e^{4 omega^2 d} - 1)/L: the expansion holds
for rho << 1 and fails for rho >> 1.

Three sweeps, as the appendix's three histograms: (i) d fixed, L growing; (ii) d = L/8 at
fixed omega; (iii) omega = c d^{-1/2} with d = L/8. Measured (`numerics.softmax_norm_sweep`,
plain Monte Carlo): the mean of L ||p||^2 per point with its SE, quantiles and histograms.
Rule per point: where rho <= rho_holds the mean must equal M + C_1/L within |C_2|/L^2 (the
derived next-order term) + 4 SE; where rho >= rho_fails it must depart from the leading
approximation M by more than failure_rtol (beyond 4 SE); points in between are shown, not
judged. (i) and (iii) stay in rho <= rho_holds; (ii) crosses both thresholds.
"""

from __future__ import annotations

from dataclasses import dataclass

import icl_verify.figures.data.softmax_norm as fig_data
import numpy as np
from icl_verify.theory import (
    MOMENT_LIMIT,
    limit_density,
    softmax_norm_expansion,
    softmax_norm_regime,
)
from icl_verify.validation.claim import Check, Claim, FigureRef, Source
from icl_verify.validation.claims.he2025 import PAPER
from icl_verify.validation.estimates import (
    AGREES,
    DISAGREES,
    INCONCLUSIVE,
    Estimate,
    Judgement,
    Measurement,
    Prediction,
    worst_verdict,
)
from icl_verify.validation.paper_figures import PaperFigure
from icl_verify.validation.params import ParameterError, Params, param

from icl_verify import numerics

SWEEPS = fig_data.SWEEPS  # (i), (ii), (iii)
SWEEP_TITLES = {
    "fixed_d": "(i) d fixed, L growing",
    "proportional": "(ii) d = L/8, ω fixed",
    "scaled": "(iii) ω = c/√d, d = L/8",
}
QUANTILES = (0.05, 0.5, 0.95)
MAX_Z = 4.0  # SEs of a Monte Carlo mean allowed on top of the derived terms


@dataclass(frozen=True, kw_only=True)
class SoftmaxNormParams(Params):
    """The three sweeps of Figure 20, the Monte Carlo size and the regime thresholds."""

    d: int = param(
        5, help="covariate dimension of sweep (i) (the paper's d = 5)", low=1, role="width"
    )
    omega: float = param(
        0.2,
        help="score scale of sweep (i): above the learned 0.13-0.17 so the 1/L term is "
        "resolved; ω² < 1/12 for the r-average of the 1/L² term",
        low=0,
        low_open=True,
    )
    L_fixed: tuple[int, ...] = param(help="prompt lengths of sweep (i)", low=2, role="length")
    omega_proportional: float = param(
        0.25,
        help="score scale of sweep (ii) (d = L/8): ρ passes ρ_fails by L = 320",
        low=0,
        low_open=True,
    )
    c: float = param(
        0.45,
        help="ω √d of sweep (iii): c² = 0.2 = ω² d of sweep (i)",
        low=0,
        low_open=True,
    )
    L_proportional: tuple[int, ...] = param(
        help="prompt lengths of sweeps (ii) and (iii), multiples of 8 (d = L/8)", low=8,
        role="length"
    )
    samples: int = param(help="Monte Carlo samples of L‖p‖² per point", low=2, role="held")
    rho_holds: float = param(
        0.2, help="ρ at or below which the expansion is judged to hold", low=0, low_open=True
    )
    rho_fails: float = param(
        10.0, help="ρ at or above which the approximation is judged to fail", low=0
    )
    failure_rtol: float = param(
        0.1,
        help="relative departure from e^{ω² d}-type leading term that counts as failure "
        "(the 0.1 error level of Prop. C.1)",
        low=0,
        low_open=True,
    )
    bins: int = param(40, help="histogram bins per sweep (log-spaced)", low=5, role="count")

    def validate(self) -> None:
        if any(L % 8 for L in self.L_proportional):
            raise ParameterError(
                f"L_proportional must be multiples of 8 (d = L/8), got {list(self.L_proportional)}"
            )
        if self.rho_fails <= self.rho_holds:
            raise ParameterError(
                f"rho_fails must exceed rho_holds = {self.rho_holds:g}, got {self.rho_fails:g}"
            )
        smallest_d = min(self.L_proportional) // 8
        for name, omega2 in (
            ("omega", self.omega**2),
            ("omega_proportional", self.omega_proportional**2),
            ("c", self.c**2 / smallest_d),
        ):
            if omega2 >= MOMENT_LIMIT:
                raise ParameterError(
                    f"{name} must give omega^2 < 1/12 (the 1/L^2 term's r-average exists), "
                    f"got omega^2 = {omega2:.4g}"
                )


PRESETS = {
    "smoke": SoftmaxNormParams(L_fixed=(10, 40), L_proportional=(40, 320), samples=1500),
    "quick": SoftmaxNormParams(
        L_fixed=(10, 20, 40, 80, 160), L_proportional=(40, 80, 160, 320), samples=10_000
    ),
    "paper": SoftmaxNormParams(  # the appendix's n is not stated; 1e5 samples per point
        L_fixed=(10, 20, 40, 80, 160, 320, 640),
        L_proportional=(40, 80, 160, 320, 640),
        samples=100_000,
    ),
}


def sweep_points(
    params: SoftmaxNormParams, sweep: str
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Lengths L, dimensions d and score scales omega of one sweep, each shape (P,).

    >>> L, d, w = sweep_points(PRESETS["smoke"], "scaled")
    >>> L.tolist(), d.tolist(), w.round(4).tolist()
    ([40, 320], [5, 40], [0.2012, 0.0712])
    """
    if sweep == "fixed_d":
        L = np.array(params.L_fixed)
        return L, np.full_like(L, params.d), np.full(L.shape, params.omega)
    L = np.array(params.L_proportional)
    d = L // 8
    omega = (
        np.full(L.shape, params.omega_proportional)
        if sweep == "proportional"
        else params.c / np.sqrt(d)
    )
    return L, d, omega


def _status(rho: np.ndarray, params: SoftmaxNormParams) -> tuple[str, ...]:
    return tuple(
        "holds" if x <= params.rho_holds else "fails" if x >= params.rho_fails else "" for x in rho
    )


def _theory(params: SoftmaxNormParams, sweep: str, exponent: float = 1.0) -> fig_data.SweepTheory:
    """Leading and corrected approximations, next term and ρ of a sweep, at its points.

    `exponent` scales ω² (1 is the theory; the wrong prediction uses 1/2).
    """
    L, d, omega = sweep_points(params, sweep)
    scale = np.sqrt(exponent) * omega
    expansions = [softmax_norm_expansion(w, int(k)) for w, k in zip(scale, d, strict=True)]
    leading = np.array([e.leading for e in expansions])
    corrected = np.array([e.value(n, 1) for e, n in zip(expansions, L, strict=True)])
    rho = np.array([softmax_norm_regime(w, int(k), n) for w, k, n in zip(omega, d, L, strict=True)])
    next_term = np.array([e.next_term(n, 1) for e, n in zip(expansions, L, strict=True)])
    approximation = np.where(rho >= params.rho_fails, leading, corrected)
    return fig_data.SweepTheory(leading, corrected, next_term, rho, approximation,
                                L.astype(float), d.astype(float), omega)  # fmt: skip


def _values(params: SoftmaxNormParams, exponent: float = 1.0) -> dict:
    return {f"mean_{s}": _theory(params, s, exponent).approximation for s in SWEEPS}


def predict_softmax_norm(params: SoftmaxNormParams) -> Prediction:
    """Per point: M + C_1/L where the expansion holds, the leading M where it fails."""
    from scipy.stats import chi2

    sweeps = tuple(_theory(params, sweep) for sweep in SWEEPS)
    top = float(np.exp(params.omega**2 * chi2.ppf(0.999, params.d)))
    y = np.geomspace(1.0, top, 200)  # (200,)
    data = fig_data.SoftmaxNormTheory(sweeps, y, limit_density(y, params.omega, params.d))
    return Prediction(values=_values(params), figure_data=data.to_record())


def measure_softmax_norm(params: SoftmaxNormParams, runtime) -> Measurement:
    """Plain Monte Carlo of L ‖p‖² at every point: mean, SE, quantiles, log-binned histogram."""
    values, sweeps = {}, []
    for sweep in SWEEPS:
        L, d, omega = sweep_points(params, sweep)
        seeds = [runtime.seed_for(f"{sweep}-{j}") for j in range(L.size)]
        summary = numerics.softmax_norm_sweep(
            L, d, omega, params.samples, seeds=runtime.progress(seeds, SWEEP_TITLES[sweep]),
            bins=params.bins, quantiles=QUANTILES, device=runtime.device,
        )  # fmt: skip
        values[f"mean_{sweep}"] = Estimate(summary.mean, summary.se)
        sweeps.append(fig_data.SweepMeasured(summary.mean, summary.se, summary.quantiles,
                                             summary.edges, summary.density))  # fmt: skip
    data = fig_data.SoftmaxNormMeasured(tuple(sweeps))
    return Measurement(values=values, figure_data=data.to_record())


@dataclass(frozen=True)
class RegimeRule:
    """Per point: agreement within a derived allowance where the expansion holds, departure
    beyond `failure_rtol` where it fails, no judgement in between.

    holds: disagrees if |m - p| > allowance + max_z SE; inconclusive if max_z SE exceeds both
    rel_resolution |p| and the allowance (the Monte Carlo, not the derived next term, is then
    what keeps the check from resolving the 1/L-corrected value).
    fails: agrees if |m - p| - max_z SE > failure_rtol p; disagrees if |m - p| + max_z SE <
    failure_rtol p; inconclusive otherwise.

    >>> rule = RegimeRule("demo", status=("holds", "fails"), allowance=(0.01, 0.0),
    ...                   failure_rtol=0.1)
    >>> rule.judge([1.0, 10.0], Estimate([1.005, 5.0], [0.001, 0.1])).verdict
    'agrees'
    >>> rule.judge([1.0, 10.0], Estimate([1.005, 9.9], [0.001, 0.01])).verdict
    'disagrees'
    """

    justification: str
    status: tuple[str, ...]
    allowance: tuple[float, ...]
    failure_rtol: float
    max_z: float = MAX_Z
    rel_resolution: float = 0.01

    def describe(self) -> str:
        return (
            f"ρ ≤ ρ_holds: |meas − pred| ≤ |C₂|/L² + {self.max_z:g}·SE; ρ ≥ ρ_fails: "
            f"|meas − pred| > {self.failure_rtol:g}·pred + {self.max_z:g}·SE"
        )

    def judge(self, predicted, measured: Estimate) -> Judgement:
        predicted = np.asarray(predicted, dtype=float)
        value, error = np.asarray(measured.value), self.max_z * np.asarray(measured.error)
        discrepancy = np.abs(value - predicted)
        verdicts, scores = [], [0.0]
        for k, status in enumerate(self.status):
            if status == "holds":
                bound = self.allowance[k] + error[k]
                resolution = max(self.rel_resolution * abs(predicted[k]), self.allowance[k])
                ok, clear = discrepancy[k] <= bound, error[k] <= resolution
                verdicts.append(AGREES if ok and clear else INCONCLUSIVE if ok else DISAGREES)
                scores.append(discrepancy[k] / bound)
            elif status == "fails":
                needed = self.failure_rtol * abs(predicted[k])
                verdicts.append(
                    AGREES if discrepancy[k] - error[k] > needed
                    else DISAGREES if discrepancy[k] + error[k] < needed
                    else INCONCLUSIVE
                )  # fmt: skip
                scores.append((needed + error[k]) / max(discrepancy[k], 1e-300))
        return Judgement(worst_verdict(verdicts), float(max(scores)))

    def changes_at(self, predicted, measured: Estimate) -> str:
        """Where the verdict would turn: the multiple of the derived allowance at the points
        where the expansion holds, and the failure_rtol at the points where it fails (the
        largest that still calls every departure beyond it).

        >>> RegimeRule("demo", status=("holds", "fails"), allowance=(0.01, 0.0),
        ...            failure_rtol=0.1).changes_at([1.0, 10.0], Estimate([1.005, 5.0], 0.001))
        '0.1 × the allowance where it holds; failure_rtol = 0.5 (rule: 0.1)'
        """
        predicted = np.asarray(predicted, dtype=float)
        error = np.broadcast_to(self.max_z * np.asarray(measured.error), predicted.shape)
        excess = np.abs(np.asarray(measured.value) - predicted) - error
        holds = [max(excess[k], 0.0) / self.allowance[k] for k, s in enumerate(self.status)
                 if s == "holds" and self.allowance[k] > 0]  # fmt: skip
        fails = [max(excess[k], 0.0) / abs(predicted[k]) for k, s in enumerate(self.status)
                 if s == "fails" and predicted[k] != 0]  # fmt: skip
        parts = ([f"{max(holds):.3g} × the allowance where it holds"] if holds else []) + (
            [f"failure_rtol = {min(fails):.3g} (rule: {self.failure_rtol:.3g})"] if fails else [])
        return "; ".join(parts)


def checks_softmax_norm(params: SoftmaxNormParams) -> tuple[Check, ...]:
    checks = []
    for sweep in SWEEPS:
        theory = _theory(params, sweep)
        status = _status(theory.rho, params)
        why = (
            f"Derived (theory._softmax_norm): E L‖p‖² = M + C₁/L + C₂/L² + O(L⁻³) with "
            f"expansion parameter ρ = (e^{{4ω²d}} − 1)/L (per point ρ = "
            f"{', '.join(f'{x:.3g}' for x in theory.rho)}). Where ρ ≤ {params.rho_holds:g} "
            f"the mean must equal M + C₁/L within the next term |C₂|/L² + {MAX_Z:g} MC SE; where "
            f"ρ ≥ {params.rho_fails:g} the approximation fails: the mean departs from M by more "
            f"than {params.failure_rtol:g}·M beyond {MAX_Z:g} SE; in between not judged."
        )
        rule = RegimeRule(why, status, tuple(theory.next_term), params.failure_rtol)
        checks.append(Check(f"mean_{sweep}", rule, f"mean L‖p‖², {SWEEP_TITLES[sweep]}"))
    return tuple(checks)


def wrong_softmax_norm(params: SoftmaxNormParams, prediction: Prediction) -> Prediction:
    """The softmax denominator's exponent in place of the norm's: e^{ω² r / 2} (1/sqrt)."""
    return prediction.with_values(**_values(params, exponent=0.5))


CLAIM_SOFTMAXNORM = Claim(
    id="HE-C-SOFTMAXNORM",
    source=Source(PAPER, "App. C, proof of Prop. 4.1 / C.1", "Figure 20"),
    statement="L‖softmax(ω Xᵀx_q)‖² → e^{ω²‖x_q‖²} (mean (1 − 2ω²)^{−d/2} ≈ e^{ω²d}) with a "
    "derived 1/L correction, while L ≫ e^{4ω²d}: for fixed d as L grows and for ω ∝ d^{−1/2}, "
    "but not for d ∝ L at fixed ω.",
    params=SoftmaxNormParams,
    presets=PRESETS,
    predict=predict_softmax_norm,
    measure=measure_softmax_norm,
    checks=checks_softmax_norm,
    figure=FigureRef("icl_verify.figures.softmax_norm", "figure_20"),
    wrong=wrong_softmax_norm,
    summary=(
        "L ‖softmax(ω Xᵀ x_q)‖² against e^{ω² ‖x_q‖²} + O(1/L): holds at fixed d and "
        "at ω ∝ d^{−1/2}, fails for d ∝ L (Fig. 20)"
    ),
    catalogue=(6, 9),
    paper_figures=(
        PaperFigure(
            20,
            ("HE-C-SOFTMAXNORM",),
            FigureRef("icl_verify.figures.softmax_norm", "figure_20"),
            "histograms of the softmax-vector norm ‖softmax(ω Xᵀx_q)‖₂ for fixed d and "
            "growing L, for d ∝ L, and with ω ∝ d^{−1/2}",
            "HE-C-SOFTMAXNORM's Figure 20",
        ),
    ),
)

CLAIMS = (CLAIM_SOFTMAXNORM,)
