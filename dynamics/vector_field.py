"""The gradient-flow vector field of the approximate loss Ltilde (He et al. 2025, eq. (4.1)).

The state of H heads is the flat vector y = (omega_1..omega_H, mu_1..mu_H) and the
field is the negative gradient,

    dy/dt = -grad Ltilde(y),        Jacobian  = -Hessian Ltilde(y),

both taken from `theory` (analytic, overflow-safe). Ltilde is the plain mean squared
error (no 1/2), the reference's "paper convention" (§5 of reference/he2025.md); the
authors' code descends Ltilde/2, so its time is t_code = 2 t.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from icl_verify.theory import (
    Setting,
    approximate_loss,
    approximate_loss_grad,
    approximate_loss_hessian,
)


@dataclass(frozen=True)
class GradientFlowField:
    """The vector field -grad Ltilde on R^{2H}, state y = (omega, mu), for any number of heads H.

    Its zeros are the critical points of Ltilde; along a solution
    dLtilde/dt = -|grad Ltilde|^2 <= 0.

    >>> from icl_verify.theory import Setting
    >>> field = GradientFlowField(Setting(d=5, L=40, sigma2=0.1))
    >>> field.rhs(0.0, np.array([0.0, 0.0, 0.0, 0.0])).tolist()  # the origin is critical
    [-0.0, -0.0, -0.0, -0.0]
    """

    setting: Setting

    def __post_init__(self) -> None:
        if not isinstance(self.setting, Setting):
            raise ValueError(f"setting must be a theory.Setting, got {type(self.setting).__name__}")

    def rhs(self, t: float, y: np.ndarray) -> np.ndarray:
        """dy/dt = -grad Ltilde(y), y of shape (2H,)."""
        omega, mu = self.heads(y)
        grad_omega, grad_mu = approximate_loss_grad(omega, mu, self.setting)
        return -np.concatenate([grad_omega, grad_mu], axis=-1)

    def jacobian(self, t: float, y: np.ndarray) -> np.ndarray:
        """d(dy/dt)/dy = -Hessian Ltilde(y), shape (2H, 2H)."""
        omega, mu = self.heads(y)
        return -approximate_loss_hessian(omega, mu, self.setting)

    def state(self, omega: np.ndarray, mu: np.ndarray) -> np.ndarray:
        """The flat state (omega, mu), shape (2H,), from per-head arrays of shape (H,)."""
        return np.concatenate([omega, mu])

    def heads(self, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per-head (omega, mu), each (..., H), from states of shape (..., 2H)."""
        half = y.shape[-1] // 2
        return y[..., :half], y[..., half:]

    def loss(self, y: np.ndarray) -> np.ndarray:
        """Ltilde at states of shape (..., 2H); returns shape (...)."""
        return approximate_loss(*self.heads(y), self.setting)
