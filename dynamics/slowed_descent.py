"""Gradient descent on Ltilde as the reference of SGD on the true loss, He et al. (2025), App. C.

At small omega the true loss's gradient is Ltilde's (4.1) with the omega-mu coupling scaled by
1 - 1/L (derived in `validation.claims.he2025.true_loss`), so in Phase I SGD on the true loss
with step lr follows gradient descent on Ltilde with step lr (1 - 1/L). `slowed_descent` runs
that descent, iterate k saved at the SGD's record times t = lr k; `log_norm` and
`phase_one_records` read it (HE-C-TRUELOSS, Figure 21).
"""

from __future__ import annotations

import numpy as np
from icl_verify.dynamics.saveat import SaveAt
from icl_verify.dynamics.solve import gradient_flow
from icl_verify.dynamics.solver import GradientDescent
from icl_verify.dynamics.trajectory import Trajectory
from icl_verify.theory import Setting


def slowed_descent(
    omega0, mu0, setting: Setting, lr: float, times, slowdown: float = 1.0
) -> Trajectory:
    """Gradient descent on Ltilde (4.1) from (omega0, mu0), each (H,), with step lr * slowdown,
    saved at the flow times ``times * slowdown`` (iterate k at t = lr * slowdown * k).

    ``times`` are SGD record times t = lr k, shape (R,); the result's rows are the descent's
    iterates at the same k, so at ``slowdown`` = 1 - 1/L they are the Phase I prediction for
    SGD on the true loss, and at ``slowdown`` = 1 plain descent on Ltilde at the SGD's step.

    >>> s = Setting(d=5, L=40, sigma2=0.1)
    >>> times = np.arange(3) * 0.5
    >>> path = slowed_descent([0.02, -0.03], [0.03, -0.02], s, 0.5, times, slowdown=0.5)
    >>> path.t.tolist(), path.omega.shape
    ([0.0, 0.25, 0.5], (3, 2))
    """
    lr = lr * slowdown
    times = np.asarray(times, dtype=float) * slowdown
    return gradient_flow(omega0, mu0, setting, (0.0, times[-1]), GradientDescent(lr), SaveAt(times))


def log_norm(omega, mu) -> np.ndarray:
    """ln ||(omega, mu)|| = (1/2) ln(sum_h omega_h^2 + sum_h mu_h^2) over the last axis (heads).

    omega, mu: (..., H) -> (...).

    >>> round(float(np.exp(log_norm([0.3, 0.0], [0.0, 0.4]))), 12)
    0.5
    """
    omega, mu = np.asarray(omega, dtype=float), np.asarray(mu, dtype=float)
    return 0.5 * np.log((omega**2).sum(-1) + (mu**2).sum(-1))


def phase_one_records(omega, d: int, fraction: float) -> np.ndarray:
    """Indices of the Phase I records of a path: 1, 2, ... up to (not including) the first
    record whose max_h |omega_h| exceeds ``fraction`` / sqrt(d) (all records past the start when
    none does). omega: (R, H) -> (k,) integer indices.

    >>> phase_one_records(np.array([[0.01], [0.1], [0.2], [0.5], [0.1]]), 4, 0.5).tolist()
    [1, 2]
    """
    inside = np.abs(np.asarray(omega, dtype=float)).max(axis=1) <= fraction / np.sqrt(d)
    return np.arange(int(np.argmin(inside)) if not inside.all() else inside.size)[1:]
