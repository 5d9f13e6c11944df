"""Two-head gradient flow of He et al. (2025), Appendix B: symmetric start, reduced ODE, phases.

From the symmetric initialisation (Def. B.1) omega_1 = -omega_2 = mu_1 = -mu_2 = eps,
the flow of Ltilde stays on {omega_2 = -omega_1, mu_2 = -mu_1} (Ltilde is invariant
under swapping the heads and flipping all signs), where with omega = omega_1,
mu = mu_1, u = d omega^2 it reduces to (B.4) (reference/he2025.md §HE-B-ODE):

    d omega/dt = 2 mu [1 - 2 mu omega (1 + kappa cosh u)]
    d mu/dt    = 2 omega - 4 mu omega^2 - 4 c mu sinh u  = 4 (omega^2 + c sinh u)(mu*(omega) - mu)

(paper convention, Ltilde the plain MSE; the authors' code halves both sides).

`two_head_phases` integrates it and measures the features of the three phases
(§HE-B-PHASE1..3): numbers with their meaning; the closed forms they are compared with
(`phase_one_end`, `equal_ratio_peak`, `lambert_peak_bound`, `late_omega`,
`naive_late_omega`) are here too, and the claims judge. `symmetric_start_flows`,
`perturbed_starts` and `perturbed_flow_ends` run the full 4-D flow from Def. B.1 and from
starts perturbed around it (HE-B-INIT).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from icl_verify.dynamics.events import Event
from icl_verify.dynamics.saveat import SaveAt
from icl_verify.dynamics.solve import gradient_flow, solve
from icl_verify.dynamics.solver import GradientDescent, ODESolver
from icl_verify.dynamics.trajectory import Trajectory
from icl_verify.theory import Setting, approximate_loss
from scipy.optimize import brentq
from scipy.special import lambertw

PHASE_ONE_DEVIATION = (
    0.1  # Phase I ends when omega falls 10% below eps e^{2t} (reference §HE-B-PHASE1)
)


def symmetric_init(eps: float) -> tuple[np.ndarray, np.ndarray]:
    """Def. B.1: omega = (eps, -eps), mu = (eps, -eps), each of shape (2,).

    >>> [a.tolist() for a in symmetric_init(1e-3)]
    [[0.001, -0.001], [0.001, -0.001]]
    """
    if not (isinstance(eps, (int, float)) and math.isfinite(eps) and eps > 0):
        raise ValueError(f"eps must be a finite number > 0, got {eps!r}")
    return np.array([eps, -eps]), np.array([eps, -eps])


@dataclass(frozen=True)
class TwoHeadField:
    """The reduced vector field (B.4) on the symmetric subspace, state y = (omega, mu) of head 1.

    It is the H = 2 field -grad Ltilde restricted to {omega_2 = -omega_1, mu_2 = -mu_1};
    `heads` maps a state back to both heads, (omega, -omega) and (mu, -mu).

    >>> from icl_verify.theory import Setting
    >>> field = TwoHeadField(Setting(d=5, L=40, sigma2=0.1))
    >>> field.rhs(0.0, np.array([1e-3, 1e-3])).round(6).tolist()  # Phase I: (2 mu, 2 omega)
    [0.002, 0.002]
    """

    setting: Setting

    def __post_init__(self) -> None:
        if not isinstance(self.setting, Setting):
            raise ValueError(f"setting must be a theory.Setting, got {type(self.setting).__name__}")

    def velocity(self, omega, mu) -> tuple[np.ndarray, np.ndarray]:
        """(d omega/dt, d mu/dt) of (B.4) at arrays omega, mu of any common shape."""
        c, d, kappa = self.setting.c, self.setting.d, self.setting.kappa
        u = d * omega * omega
        with np.errstate(over="ignore", invalid="ignore"):
            d_omega = 2.0 * mu * (1.0 - 2.0 * mu * omega * (1.0 + kappa * np.cosh(u)))
            d_mu = 2.0 * omega - 4.0 * mu * omega * omega - 4.0 * c * mu * np.sinh(u)
        return d_omega, d_mu

    def rhs(self, t: float, y: np.ndarray) -> np.ndarray:
        """(d omega/dt, d mu/dt), shape (2,)."""
        return np.array(self.velocity(y[0], y[1]))

    def jacobian(self, t: float, y: np.ndarray) -> np.ndarray:
        """The analytic 2x2 Jacobian of (B.4): minus half the Hessian of the reduced loss."""
        omega, mu = y
        c, d, kappa = self.setting.c, self.setting.d, self.setting.kappa
        u = d * omega * omega
        cosh, sinh = math.cosh(u), math.sinh(u)
        cross = 2.0 - 8.0 * mu * omega * (1.0 + kappa * cosh)
        return np.array(
            [
                [-4.0 * mu * mu * (1.0 + kappa * (cosh + 2.0 * u * sinh)), cross],
                [cross, -4.0 * omega * omega - 4.0 * c * sinh],
            ]
        )

    def state(self, omega: float, mu: float) -> np.ndarray:
        """The reduced state (omega_1, mu_1), shape (2,)."""
        return np.array([omega, mu], dtype=float)

    def heads(self, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Both heads, omega = (w, -w) and mu = (m, -m), each (..., 2), from states (..., 2)."""
        omega, mu = y[..., :1], y[..., 1:]
        return np.concatenate([omega, -omega], axis=-1), np.concatenate([mu, -mu], axis=-1)

    def loss(self, y: np.ndarray) -> np.ndarray:
        """Ltilde = 1 + sigma2 - 4 mu w + 4 mu^2 w^2 + 4 c mu^2 sinh(d w^2), shape (...)."""
        return approximate_loss(*self.heads(y), self.setting)


def two_head_flow(
    eps: float,
    setting: Setting,
    t_span: tuple[float, float],
    solver: ODESolver | GradientDescent | None = None,
    saveat: SaveAt | None = None,
    events: tuple[Event, ...] = (),
) -> Trajectory:
    """The reduced two-head flow (B.4) from the symmetric start of Def. B.1 with scale eps.

    Returns a Trajectory of both heads (H = 2). See `solve` for solver, saveat, events.

    >>> from icl_verify.theory import Setting
    >>> path = two_head_flow(1e-3, Setting(d=5, L=40, sigma2=0.1), (0.0, 1e4))
    >>> round(float(path.mu_dot_omega[-1]), 3)  # 2 omega mu -> 1 / (1 + kappa) = 0.879
    0.879
    """
    omega0, _ = symmetric_init(eps)
    field = TwoHeadField(setting)
    return solve(field, field.state(omega0[0], omega0[0]), t_span, solver, saveat, events)


def lambert_peak_bound(setting: Setting) -> float:
    """The bound omega_max <= sqrt(W(L / (1 + sigma2)) / d) on the peak of omega (§HE-B-PHASE2).

    >>> round(lambert_peak_bound(Setting(d=5, L=40, sigma2=0.1)), 4)
    0.7249
    """
    return math.sqrt(float(lambertw(1.0 / setting.c).real) / setting.d)


def equal_ratio_peak(setting: Setting) -> float:
    """Root of 2 w^2 (1 + kappa cosh(d w^2)) = 1: the peak condition at mu = omega.

    At the peak 2 mu omega (1 + kappa cosh(d omega^2)) = 1 with mu >= omega, so the
    peak lies at or below this root.

    >>> round(equal_ratio_peak(Setting(d=5, L=40, sigma2=0.1)), 4)
    0.5946
    """
    kappa, d = setting.kappa, setting.d
    # The condition increases in w. cosh's argument is capped at 700 (float64 overflows past
    # 710): the capped condition still increases, and is already positive wherever d w^2 >=
    # 700 (for any kappa > 1e-300 d), so the root is unchanged and a large d (the paper
    # preset's d = 1600) no longer overflows.

    def condition(w: float) -> float:
        return 2.0 * w * w * (1.0 + kappa * math.cosh(min(d * w * w, 700.0))) - 1.0

    return brentq(condition, 0.0, math.sqrt(0.5), xtol=1e-14)


def phase_one_end(setting: Setting, eps: float) -> tuple[float, float]:
    """Predicted end of Phase I (§HE-B-PHASE1), (T1, omega(T1)), from the log deficit delta.

    delta(w) = (1 + kappa) w^2 + (kappa/d)(sinh(d w^2) - d w^2) is the leading-order
    log deficit; Phase I ends when omega = (1 - 0.1) eps e^{2t}, i.e. delta(omega_1) =
    -ln 0.9, and then T1 = (1/2) ln(omega_1 / (0.9 eps)).

    >>> [round(x, 3) for x in phase_one_end(Setting(d=5, L=40, sigma2=0.1), 1e-3)]
    [2.911, 0.304]
    """
    kappa, d = setting.kappa, setting.d
    target = -math.log(1.0 - PHASE_ONE_DEVIATION)

    def deficit(w: float) -> float:
        u = d * w * w
        return (1.0 + kappa) * w * w + (kappa / d) * (math.sinh(u) - u) - target

    omega_1 = brentq(deficit, 0.0, 1.0, xtol=1e-14)
    return 0.5 * math.log(omega_1 / ((1.0 - PHASE_ONE_DEVIATION) * eps)), omega_1


def phase_one_loss_drop(eps: float, t) -> np.ndarray:
    """Ltilde(0) - Ltilde(t) in Phase I of (B.4), (B.9): dLtilde/dt = -2(omega'^2 + mu'^2) with
    omega = mu = eps e^{2t} gives 4 eps^2 (e^{4t} - 1) (§HE-B-PHASE1). Its relative error is
    of order (1 + kappa) omega(t)^2 (the rate's first correction).

    >>> float(phase_one_loss_drop(1e-3, 0.0)), round(float(phase_one_loss_drop(1e-3, 1.0)), 9)
    (0.0, 0.000214393)
    """
    t = np.asarray(t, dtype=float)
    return 4.0 * eps * eps * np.expm1(4.0 * t)


def phase_one_ratio_excess(setting: Setting, omega) -> np.ndarray:
    """mu/omega - 1 in Phase I of (B.4) at KQ scale omega: kappa u^3 / (12 d), u = d omega^2
    (§HE-B-PHASE1). The ratio's equation at r = 1 + delta is delta' = -4 delta + 4c(u cosh u -
    sinh u) + ..., forced by (4/3) c u^3 growing like e^{12t}: delta = (4/3) c u^3 / (4 + 12).
    Relative error of order u^2/10 + (1 + kappa) omega^2.

    >>> round(float(phase_one_ratio_excess(Setting(d=5, L=40, sigma2=0.1), 0.1)), 10)
    2.865e-07
    """
    u = setting.d * np.asarray(omega, dtype=float) ** 2
    return setting.kappa * u**3 / (12.0 * setting.d)


def phase_two_rate(setting: Setting, omega) -> np.ndarray:
    """d ln omega/dt in Phase II of (B.4) while mu/omega ~ 1, (B.11)-(B.13) (§HE-B-PHASE2):
    2 - 4(1 + kappa) omega^2 - 4 kappa omega^2 (cosh(d omega^2) - 1), the exact rate
    2r(1 - 2 r omega^2 (1 + kappa cosh(d omega^2))) at r = mu/omega = 1.

    >>> round(float(phase_two_rate(Setting(d=5, L=40, sigma2=0.1), 0.0)), 12)
    2.0
    """
    omega = np.asarray(omega, dtype=float)
    u = setting.d * omega**2
    kappa = setting.kappa
    return 2.0 - 4.0 * (1.0 + kappa) * omega**2 - 4.0 * kappa * omega**2 * (np.cosh(u) - 1.0)


def late_omega(setting: Setting, t) -> np.ndarray:
    """Valley-floor law omega(t) ~ (8 kappa d^2 t)^{-1/6} of Phase III (§HE-B-PHASE3).

    >>> round(float(late_omega(Setting(d=5, L=40, sigma2=0.1), 1e7)), 4)
    0.0392
    """
    return (8.0 * setting.kappa * setting.d**2 * np.asarray(t, dtype=float)) ** (-1.0 / 6.0)


def late_product_deficit(setting: Setting, t) -> np.ndarray:
    """How far 2 omega mu lies below its limit 1/(1+kappa) at time t of Phase III (§HE-B-PHASE3).

    On the valley floor 2 omega mu*(omega) = 1/(1 + kappa sinh(d omega^2)/(d omega^2)) (4.8),
    below 1/(1+kappa) by kappa d^2 omega^4 / (6 (1+kappa)^2) to leading order, and mu lags
    mu*(omega) by a relative 1/(24 t omega^2 (1+kappa)) (derived for the two-head flow); with
    omega = `late_omega`(t) the deficit is

        kappa d^2 omega^4 / (6 (1+kappa)^2) + 1 / (24 t omega^2 (1+kappa)^2).

    >>> f"{float(late_product_deficit(Setting(d=5, L=40, sigma2=0.1), 1e4)):.3e}"
    '3.141e-04'
    """
    kappa, d = setting.kappa, setting.d
    t = np.asarray(t, dtype=float)
    omega = late_omega(setting, t)
    valley = kappa * d**2 * omega**4 / (6 * (1 + kappa) ** 2)
    lag = 1 / (24 * t * omega**2 * (1 + kappa)) / (1 + kappa)
    return valley + lag


def naive_late_omega(setting: Setting, t) -> np.ndarray:
    """Naive two-timescale law (B.18): d omega/dt = -A omega^3, A = kappa d^2 / (3 (1+kappa)^2).

    Solution for large t: omega = (2 A t)^{-1/2}. The actual flow does NOT follow it
    (mu lags mu*(omega) and cancels most of the drift); see `two_head_phases`.

    >>> f"{float(naive_late_omega(Setting(d=5, L=40, sigma2=0.1), 1e7)):.1e}"
    '2.4e-04'
    """
    kappa, d = setting.kappa, setting.d
    rate = kappa * d**2 / (3.0 * (1.0 + kappa) ** 2)
    return (2.0 * rate * np.asarray(t, dtype=float)) ** -0.5


# ---------------------------------------------------------------------------------------------
# Def. B.1 under the full flow: symmetry kept, and perturbed starts (HE-B-INIT)


@dataclass(frozen=True)
class SymmetricStartFlows:
    """The full H = 2 gradient flow of Ltilde from Def. B.1 beside the reduced system (B.4),
    saved at the same times.

    Ltilde is invariant under (omega, mu) -> (-P omega, -P mu), P the head swap, so the full
    flow keeps omega_1 + omega_2 = mu_1 + mu_2 = 0 and is (B.4) on that set: `asymmetry` and
    `reduced_gap` are 0 up to the solvers' error.

    Attributes:
        full: `gradient_flow` of both heads from `symmetric_init` (T times, omega, mu (T, 2)).
        reduced: `two_head_flow` (B.4), both heads (T, 2), on the same times.
    """

    full: Trajectory
    reduced: Trajectory

    @property
    def asymmetry(self) -> float:
        """max over t of max(|omega_1 + omega_2|, |mu_1 + mu_2|) on the full flow."""
        full = self.full
        return float(max(np.abs(full.omega.sum(axis=1)).max(), np.abs(full.mu.sum(axis=1)).max()))

    @property
    def reduced_gap(self) -> float:
        """max over t of |full - reduced| (omega and mu), over max |omega|, |mu| of (B.4)."""
        full, reduced = self.full, self.reduced
        scale = np.maximum(np.abs(reduced.omega), np.abs(reduced.mu)).max()
        gap = max(np.abs(full.omega - reduced.omega).max(), np.abs(full.mu - reduced.mu).max())
        return float(gap / scale)


def symmetric_start_flows(
    setting: Setting, eps: float, t_end: float, rtol: float = 1e-10, n_times: int = 300
) -> SymmetricStartFlows:
    """The full 4-D flow of Ltilde (4.1) and the reduced (B.4) from Def. B.1, on [0, t_end].

    Both are solved by LSODA at ``rtol`` (atol = rtol/100) and saved at ``n_times``
    log-spaced times (`SaveAt.log_spaced`).

    >>> flows = symmetric_start_flows(Setting(d=5, L=40, sigma2=0.1), 1e-3, 20.0)
    >>> flows.asymmetry < 1e-12, flows.reduced_gap < 1e-7, flows.full.omega.shape
    (True, True, (300, 2))
    """
    span = (0.0, t_end)
    solver = ODESolver("LSODA", rtol, rtol * 1e-2)
    saveat = SaveAt.log_spaced(span, n=n_times)
    omega0, mu0 = symmetric_init(eps)
    full = gradient_flow(omega0, mu0, setting, span, solver, saveat)
    return SymmetricStartFlows(full, two_head_flow(eps, setting, span, solver, saveat))


def perturbed_starts(eps: float, asymmetry: float, n: int, seed: int) -> np.ndarray:
    """(n, 4) starts (omega_1, omega_2, mu_1, mu_2): Def. B.1's (eps, -eps, eps, -eps) with each
    coordinate scaled by an independent 1 + U(-asymmetry, asymmetry), drawn from ``seed``.

    >>> starts = perturbed_starts(1e-3, 0.1, 5, seed=0)
    >>> starts.shape, bool(np.all(np.abs(np.abs(starts) / 1e-3 - 1) <= 0.1))
    ((5, 4), True)
    """
    rng = np.random.default_rng(seed)
    base = np.array([1.0, -1.0, 1.0, -1.0]) * eps
    return base * (1.0 + rng.uniform(-asymmetry, asymmetry, size=(n, 4)))


def perturbed_flow_ends(starts: np.ndarray, setting: Setting, t_end: float) -> np.ndarray:
    """End states (omega_1, omega_2, mu_1, mu_2) at t_end of the full two-head flow of Ltilde
    from each start; starts and result (n, 4). LSODA at rtol 1e-8, atol 1e-10: only the
    signs of the end state are read (`opposite_heads`).

    >>> s = Setting(d=5, L=40, sigma2=0.1)
    >>> ends = perturbed_flow_ends(perturbed_starts(1e-3, 0.1, 2, seed=0), s, 300.0)
    >>> opposite_heads(ends).tolist()
    [True, True]
    """
    solver, saveat = ODESolver("LSODA", 1e-8, 1e-10), SaveAt([0.0, t_end])
    ends = []
    for start in np.asarray(starts, dtype=float):
        path = gradient_flow(start[:2], start[2:], setting, (0.0, t_end), solver, saveat)
        ends.append(np.concatenate([path.omega[-1], path.mu[-1]]))
    return np.array(ends)  # (n, 4)


def opposite_heads(states: np.ndarray) -> np.ndarray:
    """Whether each two-head state (omega_1, omega_2, mu_1, mu_2), shape (n, 4), has one
    positive and one negative head: omega_1 omega_2 < 0 and mu_1 mu_2 < 0; shape (n,).

    >>> opposite_heads(np.array([[0.3, -0.3, 1.0, -1.0], [0.3, 0.3, 1.0, 1.0]])).tolist()
    [True, False]
    """
    states = np.asarray(states, dtype=float)
    return (states[:, 0] * states[:, 1] < 0) & (states[:, 2] * states[:, 3] < 0)


# ---------------------------------------------------------------------------------------------
# the three phases of (B.4) from Def. B.1 (HE-B-PHASE1..3)


@dataclass(frozen=True)
class TwoHeadPhases:
    """The three phases of the two-head flow (Appendix B), measured on the integrated ODE (B.4).

    Numbers only: which law each is compared with, by which rule, is the claims' business
    (`validation.claims.he2025.phase_one`, `phase_two`, `phase_three`). `FEATURES` names each
    measured feature (an attribute; its name is its stable key) and says what it is.

    Attributes:
        setting, eps: the problem and the symmetric initial scale.
        trajectory: the reduced flow, log-spaced times from 0 to t_end (events
            "phase_one_end" and "peak" recorded).
        growth_rate, ..., product_limit: the features of `FEATURES`.
    """

    FEATURES: ClassVar[dict[str, str]] = {
        "growth_rate": "Phase I growth rate d ln omega/dt, least squares on t in [0, 1]",
        "phase_one_end": "T1: first t with omega = 0.9 eps e^{2t} (10% below pure growth)",
        "peak_time": "t_peak: where d omega/dt = 0 (end of Phase II)",
        "peak_omega": "omega_max: omega at t_peak",
        "peak_mu": "mu at t_peak",
        "peak_residual": "2 mu omega (1 + kappa cosh(d omega^2)) - 1 at t_peak",
        "peak_time_offset": "t_peak - (1/2) ln(omega_max / eps)",
        "late_slope_omega": "log-log slope of omega, least squares on [t_end/100, t_end]",
        "late_slope_mu": "log-log slope of mu, least squares on [t_end/100, t_end]",
        "omega_end": "omega(t_end)",
        "product_limit": "2 omega mu at t_end",
    }

    setting: Setting
    eps: float
    trajectory: Trajectory
    growth_rate: float
    phase_one_end: float
    peak_time: float
    peak_omega: float
    peak_mu: float
    peak_residual: float
    late_slope_omega: float
    late_slope_mu: float
    omega_end: float
    product_limit: float

    @property
    def peak_time_offset(self) -> float:
        """t_peak - (1/2) ln(omega_max / eps): the O(1) of t_peak beyond Phase I's clock (B.15)."""
        return self.peak_time - 0.5 * math.log(self.peak_omega / self.eps)

    def features(self) -> dict[str, float]:
        """Every feature of `FEATURES` by its key: {key: value}."""
        return {key: float(getattr(self, key)) for key in self.FEATURES}


def _log_slope(t: np.ndarray, values: np.ndarray) -> float:
    return float(np.polyfit(np.log(t), np.log(np.abs(values)), 1)[0])


def two_head_phases(
    setting: Setting, eps: float = 1e-3, t_end: float = 1e7, rtol: float = 1e-10
) -> TwoHeadPhases:
    """Integrate (B.4) from Def. B.1 and measure the features of the phases of Appendix B.

    What they are compared with (reference/he2025.md §HE-B-PHASE1..3):
      Phase I   omega = eps e^{2t} (growth rate 2); T1 from `phase_one_end`.
      Phase II  peak omega_max <= `equal_ratio_peak` <= `lambert_peak_bound`;
                t_peak = (1/2) ln(omega_max / eps) + O(1); at the event the exact
                condition 2 mu omega (1 + kappa cosh(d omega^2)) = 1 holds.
      Phase III valley-floor law: omega ~ t^{-1/6}, mu ~ t^{+1/6},
                omega(t) = `late_omega`(t), 2 omega mu -> 1 / (1 + kappa);
                and the naive two-timescale law omega ~ t^{-1/2} of (B.18)
                (`naive_late_omega`), which the integrated flow contradicts.

    Args:
        setting: the problem (d, L, sigma2).
        eps: symmetric initial scale, > 0 (and small: Phase I needs eps << d^{-1/2}).
        t_end: end time, >= 1e4 so that the last two decades lie in Phase III.
        rtol: relative tolerance of the LSODA solve (atol = rtol * 1e-2).

    >>> from icl_verify.theory import Setting
    >>> result = two_head_phases(Setting(d=5, L=40, sigma2=0.1), t_end=1e6)
    >>> round(result.peak_omega, 4), round(result.late_slope_omega, 3)
    (0.5763, -0.167)
    >>> round(result.growth_rate, 3), round(result.product_limit, 3)  # 2; 1/(1+kappa) = 0.879
    (2.0, 0.879)
    """
    if not (isinstance(t_end, (int, float)) and math.isfinite(t_end) and t_end >= 1e4):
        raise ValueError(f"t_end must be a finite number >= 1e4, got {t_end!r}")
    field = TwoHeadField(setting)
    kappa, d = setting.kappa, setting.d
    log_deficit = math.log(1.0 - PHASE_ONE_DEVIATION)
    events = (
        Event("phase_one_end", lambda t, y: math.log(y[0] / eps) - 2.0 * t - log_deficit, -1),
        Event("peak", lambda t, y: field.rhs(t, y)[0], direction=-1),
    )
    path = two_head_flow(
        eps, setting, (0.0, t_end), ODESolver("LSODA", rtol, rtol * 1e-2),
        SaveAt.log_spaced((0.0, t_end), n=600), events,
    )  # fmt: skip
    if path.events["phase_one_end"].t.size == 0 or path.events["peak"].t.size == 0:
        raise RuntimeError(f"the flow from eps={eps} never left Phase I or never peaked by t_end")
    peak = path.events["peak"]
    t_peak, w_peak, m_peak = float(peak.t[0]), float(peak.omega[0, 0]), float(peak.mu[0, 0])
    late = path.t >= t_end / 100.0
    t_one = path.t <= 1.0  # Phase I: d ln omega/dt = 2 - 4(1+kappa) omega^2 - ...
    return TwoHeadPhases(
        setting=setting, eps=float(eps), trajectory=path,
        growth_rate=float(np.polyfit(path.t[t_one], np.log(path.omega[t_one, 0]), 1)[0]),
        phase_one_end=float(path.events["phase_one_end"].t[0]),
        peak_time=t_peak, peak_omega=w_peak, peak_mu=m_peak,
        peak_residual=2.0 * m_peak * w_peak * (1.0 + kappa * math.cosh(d * w_peak**2)) - 1.0,
        late_slope_omega=_log_slope(path.t[late], path.omega[late, 0]),
        late_slope_mu=_log_slope(path.t[late], path.mu[late, 0]),
        omega_end=float(path.omega[-1, 0]), product_limit=float(path.mu_dot_omega[-1]),
    )  # fmt: skip
