"""HE-B-PHASE2 of He et al. (2025), App. B, (B.11)-(B.16): the omega peak of the two-head flow.

HE-B-PHASE2: the omega peak (B.11)-(B.16): omega_max below the equal-ratio root and the
Lambert-W bound sqrt(W(L/(1+sigma2))/d), at d = 5 and in the high-dimensional rows.

Prediction: the closed-form bounds of `dynamics.two_head` (`equal_ratio_peak`,
`lambert_peak_bound`). Measurement: the peak event of the integrated (B.4)
(`_two_head.integrated_phases`, `dynamics.two_head_phases`). Figure: `figures.dynamics`.
"""

from __future__ import annotations

import dataclasses
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
    shifted,
)
from icl_verify.validation.claims.he2025._two_head import (
    SOURCE,
    PhasesParams,
    integrated_phases,
    solver_bound,
)
from icl_verify.validation.params import ParameterError, param

from icl_verify import dynamics


@dataclass(frozen=True, kw_only=True)
class PhaseTwoParams(PhasesParams):
    """HE-B-PHASE2: the omega peak at (d, L) and at further (d, L) rows."""

    high_d: tuple[tuple[int, int], ...] = param(
        help="further (d, L) rows, e.g. [[100, 800]] (the Lambert bound is tight at large d)",
        low=1,
    )

    def validate(self) -> None:
        if any(len(row) != 2 for row in self.high_d):
            raise ParameterError(
                "high_d must be a list of (d, L) pairs, "
                f"got high_d={[list(row) for row in self.high_d]}"
            )


def _peak_dims(params: PhaseTwoParams) -> list[tuple[int, int]]:
    return [(params.d, params.L), *params.high_d]


def predict_phase2(params: PhaseTwoParams) -> Prediction:
    """Peak bounds per (d, L); each check asks for zero excess of omega_max over the bound."""
    dims = _peak_dims(params)
    settings = [dataclasses.replace(params.setting, d=d, L=L) for d, L in dims]
    return Prediction(
        values={"excess_root": np.zeros(len(dims)), "excess_lambert": np.zeros(len(dims)),
                "peak_residual": 0.0, "t_peak_offset": 0.0},
        figure_data={"d": np.array([d for d, _ in dims], float),
                     "root": np.array([dynamics.equal_ratio_peak(s) for s in settings]),
                     "lambert": np.array([dynamics.lambert_peak_bound(s) for s in settings])},
    )  # fmt: skip


def measure_phase2(params: PhaseTwoParams, runtime) -> Measurement:
    """omega_max, t_peak from the peak event of the integrated (B.4), per (d, L)."""
    phases = [integrated_phases(params, d, L) for d, L in _peak_dims(params)]
    peak = np.array([p.peak_omega for p in phases])
    roots = np.array([dynamics.equal_ratio_peak(p.setting) for p in phases])
    lambert = np.array([dynamics.lambert_peak_bound(p.setting) for p in phases])
    first = phases[0]
    path = first.trajectory
    window = path.t <= 3 * first.peak_time
    return Measurement(
        values={
            "excess_root": solver_bound(np.maximum(peak - roots, 0.0), params),
            "excess_lambert": solver_bound(np.maximum(peak - lambert, 0.0), params),
            "peak_residual": Estimate(first.peak_residual, 100 * params.rtol, "bound"),
            "t_peak_offset": solver_bound(first.peak_time_offset, params),
        },
        figure_data={"peak_omega": peak, "peak_mu": np.array([p.peak_mu for p in phases]),
                     "peak_time": np.array([p.peak_time for p in phases]),
                     "t": path.t[window], "omega": path.omega[window, 0],
                     "mu": path.mu[window, 0]},
    )  # fmt: skip


def checks_phase2(params: PhaseTwoParams) -> tuple[Check, ...]:
    return (
        Check("excess_root", Tolerance(
            "upper bound: at the peak d omega/dt = 0 gives 2 mu omega (1 + kappa cosh(d omega^2))"
            " = 1 and mu >= omega there, so omega_max <= root of 2w^2(1+kappa cosh(dw^2)) = 1; "
            "the excess max(0, omega_max - root) must vanish up to the solver's accuracy",
            atol=1e-8), "max(0, ω_max − equal-ratio root), per (d, L)"),
        Check("excess_lambert", Tolerance(
            "Lambert-W bound (B.16) omega_max <= sqrt(W(L/(1+sigma2))/d); the excess must vanish "
            "up to the solver's accuracy", atol=1e-8),
            "max(0, ω_max − Lambert bound), per (d, L)"),
        Check("peak_residual", Tolerance(
            "the peak event is where d omega/dt = 0, i.e. 2 mu w(1 + kappa cosh(d w^2)) = 1 "
            "exactly; tolerance 100 x rtol of the event location", atol=100 * params.rtol),
            "2μω(1+κ cosh(dω²)) − 1 at the peak"),
        Check("t_peak_offset", Tolerance(
            "t_peak = (1/2) ln(omega_max/eps) + O(1) (B.15); the O(1) is not given by the "
            "reference, taken as 1 (a unit of the flow's time)", atol=1.0),
            "t_peak − ½ ln(ω_max/ε)"),
    )  # fmt: skip


PRESETS_PHASE2 = {
    "smoke": PhaseTwoParams(t_end=1e6, high_d=((100, 800),)),
    "quick": PhaseTwoParams(t_end=1e7, high_d=((20, 160), (100, 800), (400, 3200))),
    "paper": PhaseTwoParams(t_end=1e8, high_d=((20, 160), (100, 800), (400, 3200), (1600, 12800))),
}

CLAIM_PHASE2 = Claim(
    id="HE-B-PHASE2",
    source=Source(SOURCE, "App. B", "(B.11)-(B.16)"),
    statement="Phase II ends at the ω peak, where 2μω(1 + κ cosh dω²) = 1, at t_peak = "
    "½ ln(ω_max/ε) + O(1), with ω_max below the equal-ratio root and the Lambert-W bound "
    "√(W(L/(1+σ²))/d) (tight at large d).",
    params=PhaseTwoParams, presets=PRESETS_PHASE2,
    predict=predict_phase2, measure=measure_phase2, checks=checks_phase2,
    figure="dynamics:figure_phase2",
    # the peak 3 flow-time units later than ½ ln(ω_max/ε) (a Phase I clock at rate 1, not 2,
    # would put it ~3.2 later at d=5, ε=1e-3): beyond the O(1) allowance of 1
    wrong=shifted("t_peak_offset", lambda offset: offset + 3.0),
    summary="omega peak below the equal-ratio root and the Lambert-W bound",
    catalogue=(5, 3),
)  # fmt: skip

CLAIMS = (CLAIM_PHASE2,)
