"""How a flow is integrated: a stiff ODE solver, or discrete gradient descent with a fixed step.

`ODESolver` integrates dy/dt = -grad Ltilde with scipy.integrate.solve_ivp using a
stiff-capable method and the analytic Jacobian (the flow is stiff: in Phase III of
Appendix B the fast relaxation of mu onto mu*(omega) and the slow drift of omega
differ by orders of magnitude). `GradientDescent` replaces the flow by its forward
Euler discretisation y_{k+1} = y_k - lr grad Ltilde(y_k), i.e. plain gradient descent
on Ltilde, whose iterate k sits at flow time t = lr k (reference §5).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

# Methods of solve_ivp that handle stiff problems and use a supplied Jacobian.
STIFF_METHODS = ("LSODA", "Radau", "BDF")


@dataclass(frozen=True)
class ODESolver:
    """An adaptive stiff integrator of dy/dt = f(t, y): local error per step <= atol + rtol |y|.

    >>> ODESolver(rtol=1e-8).method
    'LSODA'
    >>> ODESolver(method="RK45")
    Traceback (most recent call last):
    ...
    ValueError: method must be one of ('LSODA', 'Radau', 'BDF'), got 'RK45'
    """

    method: str = "LSODA"  # stiff-capable; switches automatically between Adams and BDF
    rtol: float = 1e-10  # relative tolerance per step
    atol: float = 1e-12  # absolute tolerance per step

    def __post_init__(self) -> None:
        if self.method not in STIFF_METHODS:
            raise ValueError(f"method must be one of {STIFF_METHODS}, got {self.method!r}")
        for name in ("rtol", "atol"):
            value = getattr(self, name)
            if not (isinstance(value, (int, float)) and math.isfinite(value) and 0 < value < 1):
                raise ValueError(f"{name} must be a number in (0, 1), got {value!r}")


@dataclass(frozen=True)
class GradientDescent:
    """Forward Euler with step lr: y_{k+1} = y_k - lr grad Ltilde(y_k), iterate k at t_k = lr k.

    Its global error against the flow on a fixed time interval is O(lr) (Euler is a
    first-order method).

    >>> GradientDescent(lr=0.01).lr
    0.01
    >>> GradientDescent(lr=0.0)
    Traceback (most recent call last):
    ...
    ValueError: lr must be a finite number > 0, got 0.0
    """

    lr: float  # step size; flow time advances by lr per step

    def __post_init__(self) -> None:
        if not (isinstance(self.lr, (int, float)) and math.isfinite(self.lr) and self.lr > 0):
            raise ValueError(f"lr must be a finite number > 0, got {self.lr!r}")
