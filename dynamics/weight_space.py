"""Gradient flow of Ltilde on the weights of a two-head model from Def. B.1, read in (omega, mu).

He et al. (2025), Appendix B study the flow (B.4) of Ltilde in the effective parameters
(omega_h, mu_h). A trained model has weights instead: omega_h = mean_i (W_K)_ii (W_Q^h)_ii /
sqrt(D) over the d covariate entries and mu_h = W_O^h W_V^h (last entries), D = d + 1 the
token dimension (`numerics._core.models`). Gradient flow on those weights, with the loss Ltilde of
(omega, mu), is the chain rule through the products: for head 1 with KQ diagonals a (W_K),
b (W_Q) and OV weights v (W_V), o (W_O),

    da/dt = -dLtilde/domega_1 b / (d sqrt(D)),   db/dt = -dLtilde/domega_1 a / (d sqrt(D)),
    dv/dt = -dLtilde/dmu_1 o,                     do/dt = -dLtilde/dmu_1 v.

Gradient flow keeps a^2 - b^2 and v^2 - o^2 fixed; from Def. B.1 (W_K = identity on the
covariates, W_Q = eps sqrt(D), W_V = 1, W_O = eps) they are 1 - eps^2 D and 1 - eps^2, so
a^2 + b^2 = sqrt((1 - eps^2 D)^2 + 4 D omega^2) and v^2 + o^2 = sqrt((1 - eps^2)^2 + 4 mu^2),
and in (omega, mu) the flow is (B.4) preconditioned by the product parametrisation:

    d omega/dt = -dLtilde/domega_1 sqrt((1 - eps^2 D)^2 + 4 D omega^2) / (d D)
    d mu/dt    = -dLtilde/dmu_1    sqrt((1 - eps^2)^2 + 4 mu^2)

with -dLtilde/domega_1, -dLtilde/dmu_1 the reduced field (B.4) (`TwoHeadField`). It is NOT
(B.4): in Phase I it grows at rate 2/sqrt(dD) (not 2), with mu/omega -> sqrt(dD) (not 1).
Plain SGD with a small learning rate lr follows it at t = lr k (claim HE-B-PHASE1).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property

import numpy as np
from icl_verify.dynamics.saveat import SaveAt
from icl_verify.dynamics.solve import solve
from icl_verify.dynamics.solver import ODESolver
from icl_verify.dynamics.trajectory import Trajectory
from icl_verify.dynamics.two_head import TwoHeadField, symmetric_init
from icl_verify.theory import Setting


@dataclass(frozen=True)
class WeightSpaceField:
    """The weight-space gradient flow of Ltilde from Def. B.1 at scale eps, state y = (omega, mu)
    of head 1 (head 2 mirrors it): (B.4) times the preconditioners of the module docstring.

    Its zeros are those of (B.4) (the preconditioners are positive), and along a solution
    Ltilde decreases, as for every gradient flow.

    >>> from icl_verify.theory import Setting
    >>> field = WeightSpaceField(Setting(d=5, L=40, sigma2=0.1), eps=1e-3)
    >>> rate = field.rhs(0.0, np.array([1e-3, 1e-3])) / 1e-3  # Phase I
    >>> rate.round(4).tolist()  # omega at rate 2 / (d D), mu at rate 2: mu grows first
    [0.0667, 2.0]
    """

    setting: Setting
    eps: float  # the scale of Def. B.1, which fixes the conserved balances

    def __post_init__(self) -> None:
        if not isinstance(self.setting, Setting):
            raise ValueError(f"setting must be a theory.Setting, got {type(self.setting).__name__}")
        if not (isinstance(self.eps, (int, float)) and math.isfinite(self.eps) and self.eps > 0):
            raise ValueError(f"eps must be a finite number > 0, got {self.eps!r}")

    @cached_property
    def reduced(self) -> TwoHeadField:
        """The reduced field (B.4): -dLtilde/d(omega_1, mu_1) on the symmetric subspace."""
        return TwoHeadField(self.setting)

    def preconditioner(self, omega, mu) -> tuple[np.ndarray, np.ndarray]:
        """(a^2 + b^2) / (d D) and v^2 + o^2 of the module docstring, at omega, mu."""
        d = self.setting.d
        D = d + 1  # token dimension of the model (not Setting.D)
        key_query = np.sqrt((1 - self.eps**2 * D) ** 2 + 4 * D * omega**2) / (d * D)
        value_output = np.sqrt((1 - self.eps**2) ** 2 + 4 * mu**2)
        return key_query, value_output

    def rhs(self, t: float, y: np.ndarray) -> np.ndarray:
        """(d omega/dt, d mu/dt), shape (2,)."""
        v_omega, v_mu = self.reduced.velocity(y[0], y[1])
        key_query, value_output = self.preconditioner(y[0], y[1])
        return np.array([v_omega * key_query, v_mu * value_output])

    def jacobian(self, t: float, y: np.ndarray) -> np.ndarray:
        """d rhs / dy = P J + diag(P' v): P the preconditioners, J and v those of (B.4)."""
        omega, mu = y
        d, D = self.setting.d, self.setting.d + 1
        v_omega, v_mu = self.reduced.velocity(omega, mu)
        key_query, value_output = self.preconditioner(omega, mu)
        jacobian = np.array([[key_query], [value_output]]) * self.reduced.jacobian(t, y)
        jacobian[0, 0] += v_omega * 4 * omega / (d * d * D * key_query)
        jacobian[1, 1] += v_mu * 4 * mu / value_output
        return jacobian

    def state(self, omega: float, mu: float) -> np.ndarray:
        """The state (omega_1, mu_1), shape (2,)."""
        return self.reduced.state(omega, mu)

    def heads(self, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Both heads, omega = (w, -w) and mu = (m, -m), each (..., 2), from states (..., 2)."""
        return self.reduced.heads(y)

    def loss(self, y: np.ndarray) -> np.ndarray:
        """Ltilde at states of shape (..., 2); returns shape (...)."""
        return self.reduced.loss(y)


def weight_space_flow(
    eps: float,
    setting: Setting,
    t_span: tuple[float, float],
    solver: ODESolver | None = None,
    saveat: SaveAt | None = None,
) -> Trajectory:
    """The weight-space flow of Ltilde from Def. B.1 with scale eps (H = 2), a Trajectory.

    See `solve` for solver (default LSODA, rtol 1e-10, atol 1e-12) and saveat.

    >>> from icl_verify.theory import Setting
    >>> path = weight_space_flow(1e-4, Setting(d=5, L=40, sigma2=0.1), (0.0, 10.0),
    ...                          saveat=SaveAt([0.0, 8.0, 10.0]))
    >>> w, m = path.omega[:, 0], path.mu[:, 0]
    >>> round(float(np.log(m[2] / m[1]) / 2), 3)  # Phase I rate 2 / sqrt(d D) = 0.365, not 2
    0.366
    >>> round(float(m[2] / w[2]), 2)  # and mu / omega -> sqrt(d D) = 5.48, not 1
    5.47
    """
    omega0, mu0 = symmetric_init(eps)
    field = WeightSpaceField(setting, eps)
    return solve(field, field.state(omega0[0], mu0[0]), t_span, solver, saveat)
