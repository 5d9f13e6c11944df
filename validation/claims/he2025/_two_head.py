"""What the two-head gradient-flow claims of He et al. (2025), Appendix B, share.

One claim per module (reference §HE-B-INIT..PHASE3): HE-B-INIT `symmetric_start` (Def. B.1 stays
symmetric, the reduced system (B.4)), HE-B-PHASE1 `phase_one` (Phase I, and models trained from
Def. B.1), HE-B-PHASE2 `phase_two` (the omega peak), HE-B-PHASE3 `phase_three` (the late-time
law). Here: the symmetric start's parameters, the integrated (B.4) the three phase claims read
(`integrated_phases`, memoised across them) and the solver's error bound (`solver_bound`).

Predictions are closed forms (theory, and the closed-form predictors of `dynamics.two_head`).
Measurements are the full flow from Def. B.1 and from perturbed starts
(`dynamics.symmetric_start_flows`, `perturbed_flow_ends`) and the features of the integrated
(B.4) (`dynamics.two_head_phases`, shared by the three phase claims; numbers only, judged
here). Time is the paper convention (flow of Ltilde as a plain MSE; the authors' code runs
at 2t). Figures: `figures.dynamics`.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from icl_verify.validation.estimates import Estimate
from icl_verify.validation.params import ODE_SAVED_STATES, Footprint, SettingParams, param

from icl_verify import dynamics, theory


@dataclass(frozen=True, kw_only=True)
class SymmetricStartParams(SettingParams):
    """The symmetric start of Def. B.1 and the accuracy of the solves from it."""

    eps: float = param(
        1e-3,
        help="scale ε of the symmetric start of Def. B.1 (small: Phase I needs ε e² ≪ d^{−1/2})",
        low=0,
        low_open=True,
        high=0.01,
    )
    rtol: float = param(
        1e-10,
        help="relative tolerance of the LSODA solves (atol = rtol/100); bounds are 100 x rtol",
        low=0,
        low_open=True,
        high=1e-6,
    )

    def footprint(self) -> Footprint:
        """An ODE in a few scalars per head: its saved states are what it holds."""
        return Footprint.of_tensor((ODE_SAVED_STATES, "saved states"), (16, "numbers"))


@dataclass(frozen=True, kw_only=True)
class PhasesParams(SymmetricStartParams):
    """The integrated (B.4) from Def. B.1 up to t_end (HE-B-PHASE3; shared by PHASE1, PHASE2)."""

    t_end: float = param(
        help="end of the integration; its last two decades must lie in Phase III", low=1e4
    )


@lru_cache(maxsize=8)
def _phases_at(setting: theory.Setting, eps: float, t_end: float, rtol: float):
    return dynamics.two_head_phases(setting, eps, t_end, rtol)


def integrated_phases(params: PhasesParams, d: int | None = None, L: int | None = None):
    """`dynamics.two_head_phases` for the claim's setting (or d, L), memoised across claims
    (HE-B-PHASE1 in `phase_one` reads it too)."""
    setting = params.setting
    if d is not None:
        setting = dataclasses.replace(setting, d=d, L=L)
    return _phases_at(setting, params.eps, params.t_end, params.rtol)


def solver_bound(value, params: SymmetricStartParams) -> Estimate:
    """An ODE-derived value with its error bound: 100 x the solver's relative tolerance."""
    value = np.asarray(value, dtype=float)
    return Estimate(value, 100 * params.rtol * np.abs(value), "bound")


def dense_flow(
    params: SymmetricStartParams, t_end: float, points: int = 4001
) -> dynamics.Trajectory:
    """(B.4) from Def. B.1 on ``points`` even times up to ``t_end``, solved 100 x tighter than
    ``rtol`` (the Phase I and II laws are read on it: derivatives by finite differences,
    values interpolated in omega).

    >>> path = dense_flow(PhasesParams(t_end=1e4), 1.0)
    >>> path.t.shape, round(float(path.omega[-1, 0] / (1e-3 * np.e**2)), 3)
    ((4001,), 1.0)
    """
    times = np.linspace(0.0, t_end, points)
    solver = dynamics.ODESolver(rtol=params.rtol / 100, atol=params.rtol / 1e4)
    return dynamics.two_head_flow(params.eps, params.setting, (0.0, t_end), solver=solver,
                                  saveat=dynamics.SaveAt(times))  # fmt: skip
