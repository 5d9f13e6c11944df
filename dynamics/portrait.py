"""Phase portrait of the reduced two-head flow (B.4) in the (omega, mu) plane (He et al., App. B).

Both nullclines are closed forms:

    d omega/dt = 0  <=>  mu = 0  or  mu = 1 / (2 omega (1 + kappa cosh(d omega^2)))
    d mu/dt    = 0  <=>  mu = mu*(omega) = omega / (2 (omega^2 + c sinh(d omega^2)))   (4.6)/(B.17)

so the mu-nullcline is the curve mu*(omega) itself. The result holds numbers
only; `figures.phase_portrait` draws it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from icl_verify.dynamics.saveat import SaveAt
from icl_verify.dynamics.solve import solve
from icl_verify.dynamics.solver import ODESolver
from icl_verify.dynamics.trajectory import Trajectory
from icl_verify.dynamics.two_head import TwoHeadField
from icl_verify.theory import Setting, manifold_mu


def omega_nullcline(omega, setting: Setting) -> np.ndarray:
    """The nonzero branch of d omega/dt = 0: mu = 1 / (2 omega (1 + kappa cosh(d omega^2))).

    >>> round(float(omega_nullcline(0.5, Setting(d=5, L=40, sigma2=0.1))), 4)
    0.7939
    """
    omega = np.asarray(omega, dtype=float)
    with np.errstate(over="ignore", divide="ignore"):
        return 1.0 / (2.0 * omega * (1.0 + setting.kappa * np.cosh(setting.d * omega * omega)))


@dataclass(frozen=True)
class PhasePortrait:
    """The reduced two-head field (B.4) sampled on a log grid, its nullclines and trajectories.

    Attributes:
        setting: the problem (d, L, sigma2).
        omega, mu: grid axes, shapes (n,) and (m,), log-spaced.
        d_omega, d_mu: the field at (omega_j, mu_i), shape (m, n) each.
        curve_omega: a fine omega axis (K,) for the curves below.
        omega_nullcline_mu: mu on the nonzero branch of d omega/dt = 0, shape (K,).
        mu_nullcline_mu: mu*(omega) of (4.6) = the curve d mu/dt = 0, shape (K,).
        trajectories: flows from the given starts (each a two-head Trajectory).
    """

    setting: Setting
    omega: np.ndarray
    mu: np.ndarray
    d_omega: np.ndarray
    d_mu: np.ndarray
    curve_omega: np.ndarray
    omega_nullcline_mu: np.ndarray
    mu_nullcline_mu: np.ndarray
    trajectories: tuple[Trajectory, ...]


def _check_range(name: str, bounds) -> tuple[float, float]:
    low, high = (float(b) for b in bounds)
    if not (0 < low < high and math.isfinite(high)):
        raise ValueError(f"{name} must satisfy 0 < low < high < inf, got {(low, high)}")
    return low, high


def phase_portrait(
    setting: Setting,
    omega_range: tuple[float, float] = (1e-3, 1.0),
    mu_range: tuple[float, float] = (1e-3, 30.0),
    resolution: int = 21,
    starts: tuple[tuple[float, float], ...] = (
        (1e-3, 1e-3),
        (1e-3, 3e-2),
        (3e-2, 1e-3),
        (0.9, 2e-3),
        (0.9, 0.2),
        (2e-3, 20.0),
        (0.3, 20.0),
    ),  # fmt: skip
    t_end: float = 1e5,
) -> PhasePortrait:
    """Sample (B.4) on a resolution x resolution log grid and integrate it from each start.

    Args:
        setting: the problem (d, L, sigma2).
        omega_range, mu_range: (low, high), 0 < low < high, of the log grid.
        resolution: grid points per axis, >= 2.
        starts: initial (omega, mu) of the reduced state (head 1); the first default is
            the symmetric start of Def. B.1 with eps = 1e-3.
        t_end: integration time of each trajectory (log-spaced output from 1e-2).

    >>> p = phase_portrait(Setting(d=5, L=40, sigma2=0.1), resolution=5, starts=((1e-3, 1e-3),))
    >>> p.d_omega.shape, len(p.trajectories)
    ((5, 5), 1)
    """
    omega_low, omega_high = _check_range("omega_range", omega_range)
    mu_low, mu_high = _check_range("mu_range", mu_range)
    if not (isinstance(resolution, int) and resolution >= 2):
        raise ValueError(f"resolution must be an integer >= 2, got {resolution!r}")
    if not (math.isfinite(t_end) and t_end > 0):
        raise ValueError(f"t_end must be a finite number > 0, got {t_end!r}")
    field = TwoHeadField(setting)
    omega = np.geomspace(omega_low, omega_high, resolution)  # (n,)
    mu = np.geomspace(mu_low, mu_high, resolution)  # (m,)
    d_omega, d_mu = field.velocity(omega[None, :], mu[:, None])  # (m, n) each
    curve_omega = np.geomspace(omega_low, omega_high, 400)  # (K,)
    saveat = SaveAt.log_spaced((0.0, t_end), n=400)
    trajectories = tuple(
        solve(field, field.state(w0, m0), (0.0, t_end), ODESolver(rtol=1e-9, atol=1e-12), saveat)
        for w0, m0 in starts
    )
    return PhasePortrait(
        setting=setting, omega=omega, mu=mu, d_omega=d_omega, d_mu=d_mu,
        curve_omega=curve_omega, omega_nullcline_mu=omega_nullcline(curve_omega, setting),
        mu_nullcline_mu=manifold_mu(curve_omega, setting), trajectories=trajectories,
    )  # fmt: skip
