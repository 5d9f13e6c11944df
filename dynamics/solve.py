"""One entry point that composes a vector field, a solver, a save grid and events into a Trajectory.

`solve(field, y0, t_span, solver, saveat, events)` integrates dy/dt = field.rhs(t, y)
either with a stiff scipy solver (`ODESolver`, analytic Jacobian `field.jacobian`) or
by gradient descent (`GradientDescent`, y_{k+1} = y_k + lr field.rhs, t = lr k).
`gradient_flow` is the everyday wrapper for H heads: d theta/dt = -grad Ltilde (4.1).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from icl_verify.dynamics.events import Event
from icl_verify.dynamics.saveat import SaveAt
from icl_verify.dynamics.solver import GradientDescent, ODESolver
from icl_verify.dynamics.trajectory import EventRecord, Trajectory
from icl_verify.dynamics.vector_field import GradientFlowField
from icl_verify.theory import Setting
from scipy.integrate import solve_ivp


def _check_t_span(t_span) -> tuple[float, float]:
    try:
        t0, t1 = (float(t) for t in t_span)
    except (TypeError, ValueError):
        raise ValueError(f"t_span must be a pair (t0, t1) of numbers, got {t_span!r}") from None
    if not (math.isfinite(t0) and math.isfinite(t1) and t0 < t1):
        raise ValueError(f"t_span must be finite with t0 < t1, got {(t0, t1)}")
    return t0, t1


def _check_heads(omega0, mu0) -> tuple[np.ndarray, np.ndarray]:
    omega0, mu0 = np.asarray(omega0, dtype=float), np.asarray(mu0, dtype=float)
    if omega0.ndim != 1 or omega0.size == 0 or omega0.shape != mu0.shape:
        raise ValueError(
            f"omega0 and mu0 must be 1-D of the same length H >= 1, got {omega0.shape}, {mu0.shape}"
        )
    if not (np.all(np.isfinite(omega0)) and np.all(np.isfinite(mu0))):
        raise ValueError(f"omega0 and mu0 must be finite, got {omega0.tolist()}, {mu0.tolist()}")
    return omega0, mu0


def solve(
    field,
    y0: np.ndarray,
    t_span: tuple[float, float],
    solver: ODESolver | GradientDescent | None = None,
    saveat: SaveAt | None = None,
    events: Sequence[Event] = (),
) -> Trajectory:
    """Integrate dy/dt = field.rhs(t, y) from y(t0) = y0 and return the sampled Trajectory.

    Args:
        field: a vector field with rhs(t, y), jacobian(t, y), heads(y) and loss(y)
            (`GradientFlowField`, `TwoHeadField`, `WeightSpaceField`).
        y0: initial state, shape (n,), finite.
        t_span: (t0, t1), finite, t0 < t1.
        solver: `ODESolver` (stiff, adaptive; the default) or `GradientDescent` (fixed step lr; the
            saved times are rounded to the nearest step, t = t0 + lr k).
        saveat: the output grid inside [t0, t1]; default `SaveAt.log_spaced(t_span)`.
        events: zero crossings to locate (ODE solver only).

    >>> from icl_verify.theory import Setting
    >>> field = GradientFlowField(Setting(d=5, L=40, sigma2=0.1))
    >>> y0 = field.state(np.array([1e-3, -1e-3]), np.array([1e-3, -1e-3]))
    >>> path = solve(field, y0, (0.0, 1.0), saveat=SaveAt([0.0, 1.0]))
    >>> round(float(path.omega[-1, 0] / (1e-3 * np.exp(2.0))), 3)  # Phase I: omega = eps e^{2t}
    1.0
    """
    t0, t1 = _check_t_span(t_span)
    y0 = np.asarray(y0, dtype=float)
    if y0.ndim != 1 or not np.all(np.isfinite(y0)):
        raise ValueError(f"y0 must be a finite 1-D state, got {y0.tolist()}")
    solver = solver if solver is not None else ODESolver()
    saveat = saveat if saveat is not None else SaveAt.log_spaced((t0, t1))
    if saveat.ts[0] < t0 or saveat.ts[-1] > t1:
        raise ValueError(
            f"saveat times must lie in t_span {(t0, t1)}, got [{saveat.ts[0]}, {saveat.ts[-1]}]"
        )
    if isinstance(solver, GradientDescent):
        if events:
            raise ValueError("events need the ODE solver; GradientDescent does not locate them")
        ts, ys = _descend(field, y0, t0, solver.lr, saveat.ts)
        records = {}
    elif isinstance(solver, ODESolver):
        solution = solve_ivp(
            field.rhs, (t0, t1), y0, method=solver.method, t_eval=saveat.ts,
            jac=field.jacobian, rtol=solver.rtol, atol=solver.atol,
            events=[event.as_scipy() for event in events] or None,
        )  # fmt: skip
        if solution.status == -1:
            raise RuntimeError(f"integration failed: {solution.message}")
        ts, ys = solution.t, solution.y.T
        records = {
            event.name: EventRecord(t, *field.heads(np.reshape(y, (len(t), -1))))
            for event, t, y in zip(
                events, solution.t_events or [], solution.y_events or [], strict=False
            )
        }
    else:
        raise ValueError(
            f"solver must be ODESolver or GradientDescent, got {type(solver).__name__}"
        )
    omega, mu = field.heads(ys)
    return Trajectory(
        t=ts, omega=omega, mu=mu, loss=field.loss(ys), setting=field.setting, events=records
    )


def _descend(field, y0: np.ndarray, t0: float, lr: float, ts: np.ndarray):
    """Gradient descent y <- y + lr rhs(y), recording the steps nearest to the times ts."""
    steps = np.unique(np.rint((ts - t0) / lr).astype(np.int64))  # (S,)
    saved = np.empty((steps.size, y0.size))
    y, k = y0.copy(), 0
    for index, target in enumerate(steps):
        for _ in range(target - k):
            y = y + lr * field.rhs(t0 + lr * k, y)
            k += 1
        saved[index] = y
    return t0 + lr * steps, saved


def gradient_flow(
    omega0,
    mu0,
    setting: Setting,
    t_span: tuple[float, float],
    solver: ODESolver | GradientDescent | None = None,
    saveat: SaveAt | None = None,
    events: Sequence[Event] = (),
) -> Trajectory:
    """Gradient flow d theta/dt = -grad Ltilde(theta) of eq. (4.1) for H heads, theta = (omega, mu).

    Ltilde is the plain mean squared error (the reference's paper convention). The
    authors' code (`funcs.gradient_flow`) descends Ltilde/2, so its time is t_code = 2 t.
    With `solver=GradientDescent(lr)` this is discrete gradient descent on Ltilde,
    iterate k at t = lr k.

    Args:
        omega0, mu0: initial KQ scales and OV weights, shape (H,) each, finite.
        setting: the problem (d, L, sigma2).
        t_span: (t0, t1), t0 < t1.
        solver, saveat, events: see `solve` (default: LSODA, rtol 1e-10, atol 1e-12,
            log-spaced grid of 400 times).

    >>> from icl_verify.theory import Setting, manifold_loss
    >>> s = Setting(d=5, L=40, sigma2=0.1)
    >>> path = gradient_flow([0.01, -0.02, 0.015], [0.02, -0.01, -0.01], s, (0.0, 1e3))
    >>> path.omega.shape, bool(path.sign_matched()[-1]), bool(path.zero_sum_ratio[-1] < 1e-3)
    ((400, 3), True, True)
    """
    omega0, mu0 = _check_heads(omega0, mu0)
    field = GradientFlowField(setting)
    return solve(field, field.state(omega0, mu0), t_span, solver, saveat, events)
