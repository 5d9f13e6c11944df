"""Two-head gradient-flow claims of He et al. (2025), Appendix B (reference §HE-B-INIT..PHASE3).

- HE-B-INIT: the symmetric start of Def. B.1 stays symmetric under the full 4-D flow of
  Ltilde (4.1) and equals the reduced 2-D system (B.4); asymmetric starts end at opposite heads.
- HE-B-PHASE1 (Phase I, and models trained from Def. B.1) is in `phase_one`; it reads the
  integrated (B.4) of this module (`integrated_phases`).
- HE-B-PHASE2: the omega peak (B.11)-(B.16): omega_max below the equal-ratio root and the
  Lambert-W bound sqrt(W(L/(1+sigma2))/d), at d = 5 and in the high-dimensional rows.
- HE-B-PHASE3: the late-time valley-floor law omega ~ (8 kappa d^2 t)^{-1/6}, mu ~ t^{+1/6},
  2 omega mu -> 1/(1+kappa). The naive two-timescale reduction (B.18), omega ~ t^{-1/2}, is
  contradicted by the integrated ODE; the claim checks the valley-floor law and reports the
  t^{-1/2} mismatch as a finding (figure and `figure_data`).

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
from icl_verify.validation.claim import (
    Check,
    Claim,
    Estimate,
    Measurement,
    Prediction,
    Source,
    Tolerance,
    scaled,
    shifted,
)
from icl_verify.validation.paper_figures import PaperFigure
from icl_verify.validation.params import ParameterError, SettingParams, param

from icl_verify import dynamics, theory

SOURCE = "He et al. 2025"


@dataclass(frozen=True, kw_only=True)
class SymmetricStartParams(SettingParams):
    """The symmetric start of Def. B.1 and the accuracy of the solves from it."""

    eps: float = param(
        1e-3,
        help="scale ε of the symmetric start of Def. B.1 (small: Phase I needs ε e² ≪ d^{-1/2})",
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


@dataclass(frozen=True, kw_only=True)
class InitParams(SymmetricStartParams):
    """HE-B-INIT: the full 4-D flow from Def. B.1, and from starts perturbed entrywise."""

    init_t_end: float = param(
        50.0, help="horizon of the symmetric full-vs-reduced comparison", low=0, low_open=True
    )
    n_asymmetric: int = param(help="perturbed starts", low=1)
    asymmetry: float = param(
        0.1,
        help="each coordinate of Def. B.1 scaled by 1 + U(-a, a): the perturbation a",
        low=0,
        high=1,
        high_open=True,
    )
    asym_t_end: float = param(help="flow time of the perturbed starts", low=0, low_open=True)
    design_seed: int = param(22, help="seed of the perturbations (the setting, not --seed)", low=0)


@dataclass(frozen=True, kw_only=True)
class PhasesParams(SymmetricStartParams):
    """The integrated (B.4) from Def. B.1 up to t_end (HE-B-PHASE3; shared by PHASE1, PHASE2)."""

    t_end: float = param(
        help="end of the integration; its last two decades must lie in Phase III", low=1e4
    )


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


# ---------------------------------------------------------------------------------------------
# HE-B-INIT


def predict_init(params: InitParams) -> Prediction:
    """Exact symmetry: zero asymmetry and zero full-vs-reduced gap; every asymmetric start ends
    with opposite heads (fraction 1)."""
    return Prediction({"asymmetry": 0.0, "reduced_gap": 0.0, "opposite_fraction": 1.0})


def measure_init(params: InitParams, runtime) -> Measurement:
    """Full 4-D flow from Def. B.1 against (B.4); full flows from perturbed starts."""
    flows = dynamics.symmetric_start_flows(params.setting, params.eps, params.init_t_end,
                                           params.rtol)  # fmt: skip
    full, reduced = flows.full, flows.reduced
    starts = dynamics.perturbed_starts(params.eps, params.asymmetry, params.n_asymmetric,
                                       params.design_seed)  # fmt: skip
    ends = dynamics.perturbed_flow_ends(starts, params.setting, params.asym_t_end)  # (n, 4)
    return Measurement(
        values={
            "asymmetry": Estimate(flows.asymmetry, 0.0, "bound"),
            "reduced_gap": Estimate(flows.reduced_gap, 0.0, "bound"),
            "opposite_fraction": Estimate(dynamics.opposite_heads(ends).mean(), 0.0, "bound"),
        },
        figure_data={
            "t": full.t, "omega_sum": full.omega.sum(axis=1), "mu_sum": full.mu.sum(axis=1),
            "omega": full.omega[:, 0], "mu": full.mu[:, 0],
            "reduced_omega": reduced.omega[:, 0], "reduced_mu": reduced.mu[:, 0],
            "asym_start": starts, "asym_end": ends,
        },
    )  # fmt: skip


def checks_init(params: InitParams) -> tuple[Check, ...]:
    tol = 10 * params.rtol
    return (
        Check("asymmetry", Tolerance(
            "Ltilde is invariant under (omega, mu) -> (-P omega, -P mu), P the head swap, so the "
            "flow keeps omega_1 + omega_2 = mu_1 + mu_2 = 0 exactly; only round-off (~1e-16, "
            "amplified by the Phase I growth) can break it. Tolerance 10 x solver rtol.",
            atol=tol), "max_t max(|ω₁+ω₂|, |μ₁+μ₂|), symmetric start"),
        Check("reduced_gap", Tolerance(
            "(B.4) is the 4-D field restricted to the symmetric set, so both solves integrate the "
            "same curve; they differ by the solvers' error only. Tolerance 10 x rtol (relative "
            "to max |omega|, |mu| on the path).", atol=tol),
            "max |full − reduced| / max |θ|"),
        Check("opposite_fraction", Tolerance(
            "Appendix B: perturbed symmetric starts end with one positive and one negative head "
            "(ω₁ω₂ < 0, μ₁μ₂ < 0). A fraction; any start ending otherwise is a counterexample.",
            atol=1e-9), "fraction of perturbed starts ending with opposite heads"),
    )  # fmt: skip


# ---------------------------------------------------------------------------------------------
# HE-B-PHASE2


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


# ---------------------------------------------------------------------------------------------
# HE-B-PHASE3


def predict_phase3(params: PhasesParams) -> Prediction:
    """Slopes -1/6, +1/6, omega(t_end) = (8 kappa d^2 t_end)^{-1/6}, 2 omega mu -> 1/(1+kappa)."""
    setting, t_end = params.setting, params.t_end
    fine = np.geomspace(t_end / 1e4, t_end, 100)
    limit = 1.0 / (1.0 + setting.kappa)
    omega_fine = np.geomspace(params.eps / 2, 2.0 * dynamics.lambert_peak_bound(setting), 400)
    return Prediction(
        values={"slope_omega": -1 / 6, "slope_mu": 1 / 6,
                "omega_end": float(dynamics.late_omega(setting, t_end)), "product_end": limit},
        figure_data={"t": fine, "late_omega": dynamics.late_omega(setting, fine),
                     "naive_omega": dynamics.naive_late_omega(setting, fine),
                     "naive_slope": -0.5,
                     "naive_omega_end": float(dynamics.naive_late_omega(setting, t_end)),
                     "loss_floor": params.sigma2 + 1.0 - limit,  # sigma2 + kappa/(1+kappa)
                     # Figure 22 (d): mu*(omega) (B.17) over the path's range, eps to the peak
                     "omega_fine": omega_fine,
                     "mu_star_fine": theory.manifold_mu(omega_fine, setting)},
    )  # fmt: skip


def measure_phase3(params: PhasesParams, runtime) -> Measurement:
    """Late slopes (fit on [t_end/100, t_end]), omega and 2 omega mu at t_end, from (B.4)."""
    phases = integrated_phases(params)
    path = phases.trajectory
    shown = path.t > 0
    return Measurement(
        values={
            "slope_omega": solver_bound(phases.late_slope_omega, params),
            "slope_mu": solver_bound(phases.late_slope_mu, params),
            "omega_end": solver_bound(phases.omega_end, params),
            "product_end": solver_bound(phases.product_limit, params),
        },
        figure_data={"t": path.t[shown], "omega": path.omega[shown, 0], "mu": path.mu[shown, 0],
                     "loss": path.loss[shown], "product": path.mu_dot_omega[shown],
                     "T1": phases.phase_one_end, "t_peak": phases.peak_time},
    )  # fmt: skip


def checks_phase3(params: PhasesParams) -> tuple[Check, ...]:
    setting, t_end = params.setting, params.t_end
    slope_why = (
        "valley-floor law (reference §HE-B-PHASE3): slopes ∓1/6 on the last two decades; "
        "tolerance 0.01 (reference acceptance test) covers the O(t0/t) transient. FINDING: the "
        "naive reduction (B.18), d omega/dt = -A omega^3, predicts slopes ∓1/2 and "
        f"omega(t_end) = {float(dynamics.naive_late_omega(setting, t_end)):.2g} (valley law "
        f"{float(dynamics.late_omega(setting, t_end)):.3g}); the integrated ODE contradicts it "
        "(figure) because mu lags mu*(omega) by a relative 1/(24 t omega^2 (1+kappa)), which "
        "cancels most of the drift that (B.18) keeps."
    )
    return (
        Check("slope_omega", Tolerance(slope_why, atol=0.01), "late log-log slope of ω"),
        Check("slope_mu", Tolerance(slope_why, atol=0.01), "late log-log slope of μ"),
        Check("omega_end", Tolerance(
            "(8 kappa d^2 t)^{-1/6} is asymptotic; relative corrections O(t0/t) + O(d omega^2) "
            "are below 1% at t_end >= 1e6", rtol=0.01), "ω(t_end) vs (8κd²t)^{-1/6}"),
        Check("product_end", Tolerance(
            "(4.8) with omega -> 0: 2 omega mu* = 1/(1+kappa) - O(kappa d^2 omega^4); mu lags "
            "mu*(omega) by a relative 1/(24 t omega^2 (1+kappa)); both < 1e-3 at t_end >= 1e6",
            atol=1e-3), "2ωμ at t_end vs 1/(1+κ)"),
    )  # fmt: skip


# ---------------------------------------------------------------------------------------------
# the claims and their sizes

PRESETS_INIT = {
    "smoke": InitParams(n_asymmetric=2, asym_t_end=300.0),
    "quick": InitParams(n_asymmetric=10, asym_t_end=1e3),
    "paper": InitParams(n_asymmetric=50, asym_t_end=1e4),
}
PRESETS_PHASE2 = {
    "smoke": PhaseTwoParams(t_end=1e6, high_d=((100, 800),)),
    "quick": PhaseTwoParams(t_end=1e7, high_d=((20, 160), (100, 800), (400, 3200))),
    "paper": PhaseTwoParams(t_end=1e8, high_d=((20, 160), (100, 800), (400, 3200), (1600, 12800))),
}
PRESETS_PHASE3 = {
    "smoke": PhasesParams(t_end=1e6),
    "quick": PhasesParams(t_end=1e7),
    "paper": PhasesParams(t_end=1e8),
}

CLAIM_INIT = Claim(
    id="HE-B-INIT",
    source=Source(SOURCE, "App. B, Def. B.1", "(B.1)-(B.4)"),
    statement="From the symmetric start ω₁ = −ω₂ = μ₁ = −μ₂ = ε the gradient flow of L̃ keeps "
    "ω₂ = −ω₁, μ₂ = −μ₁ and equals the reduced 2-D system (B.4); starts perturbed by up to "
    "10% also end with one positive and one negative head.",
    params=InitParams, presets=PRESETS_INIT,
    predict=predict_init, measure=measure_init, checks=checks_init,
    figure="dynamics:figure_init",
    wrong=scaled("opposite_fraction", 0.5),
    summary="symmetric init is preserved; reduced 2-D system",
    catalogue=(5, 1),
  # half the starts end same-sign; the rule allows 1e-9
)  # fmt: skip

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

CLAIM_PHASE3 = Claim(
    id="HE-B-PHASE3",
    source=Source(SOURCE, "App. B", "(B.17)-(B.18)"),
    statement="Phase III (checked in the reference's corrected form): ω → 0 as (8κd²t)^{-1/6} and "
    "μ grows as t^{+1/6} with 2ωμ → 1/(1+κ). Finding: the naive two-timescale reduction (B.18), "
    "ω ~ t^{-1/2}, is contradicted by the integrated ODE (slope −1/6, and ω(t_end) "
    "orders of magnitude above its prediction; figure), because μ lags μ*(ω).",
    params=PhasesParams, presets=PRESETS_PHASE3,
    predict=predict_phase3, measure=measure_phase3, checks=checks_phase3,
    figure="dynamics:figure_phase3",
    wrong=scaled("slope_omega", 3.0),
    summary="late rates t^{-1/6}, t^{+1/6}, 2 omega mu -> 1/(1+kappa)",
    catalogue=(5, 4),
    paper_figures=(
        PaperFigure(
                22,
                ("HE-B-PHASE3",),
                "paper:figure_22",
                "two-head ODE (B.4): (a) ω(t), μ(t) full run; (b) early phase with ω ≈ μ; (c) "
                "loss and μ/ω; (d) ω·μ with the μ*(ω) overlay",
                "(B.4) integrated from Def. B.1 (HE-B-PHASE3): (a) ω, μ with the late law; (b) the "
                "early phase against ε e^{2t}; (c) L̃ and μ/ω; (d) ωμ against ω μ*(ω)",
            ),
    ),
  # the naive (B.18) slope −1/2: 0.33 off, 33 x the tolerance
)  # fmt: skip

CLAIMS = (CLAIM_INIT, CLAIM_PHASE2, CLAIM_PHASE3)
