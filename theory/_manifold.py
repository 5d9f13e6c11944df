"""The solution manifold S_omega of He et al. (2025), eqs. (4.6)-(4.8); the one-head optimum (4.12).

On homogeneous, zero-sum, sign-matched points (|omega_h| = omega for active
heads, sum of mu over positive heads = mu*, over negative heads = -mu*),

    Ltilde = 1 + sigma2 - 2 omega m + omega^2 m^2 + c m^2 sinh(d omega^2),   m = ||mu||_1,

and minimising in m gives mu*(omega) (reference §HE-MAN). Everything is written
through sinhc(u) = sinh(u)/u, which makes the omega -> 0 limits exact and the
large-omega tails overflow-free.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from icl_verify.theory._stable import sinhc

from icl_verify.settings import Setting


def effective_learning_rate(omega, setting: Setting) -> np.ndarray:
    """2 omega mu*(omega) = 1 / (1 + kappa sinh(d omega^2) / (d omega^2)), eq. (4.8).

    The two-head model on S_omega acts like debiased GD with this step size.
    At omega = 0 it returns the limit 1 / (1 + kappa).

    >>> s = Setting(d=5, L=40, sigma2=0.1)
    >>> [round(float(effective_learning_rate(w, s)), 5) for w in (0.0, 0.13)]
    [0.87912, 0.87899]
    """
    omega = np.asarray(omega, dtype=float)
    return 1.0 / (1.0 + setting.kappa * sinhc(setting.d * omega * omega))


def manifold_mu(omega, setting: Setting) -> np.ndarray:
    """mu*(omega) = omega / (2 [omega^2 + c sinh(d omega^2)]), eq. (4.6).

    The OV group sum that minimises Ltilde on S_omega; odd in omega, strictly
    decreasing on (0, inf), infinite at omega = 0.

    >>> s = Setting(d=5, L=40, sigma2=0.1)
    >>> [round(float(m), 4) for m in manifold_mu([0.05, 0.1, 0.13], s)]
    [8.7912, 4.3954, 3.3807]
    """
    omega = np.asarray(omega, dtype=float)
    with np.errstate(divide="ignore"):
        return effective_learning_rate(omega, setting) / (2.0 * omega)


def manifold_loss(omega, setting: Setting) -> np.ndarray:
    """Ltilde on S_omega = 1 + sigma2 - 1 / (1 + kappa sinh(d omega^2) / (d omega^2)).

    Increasing in |omega|; its infimum (omega -> 0) is sigma2 + kappa / (1 + kappa),
    the value of Theorem 4.2(ii).

    >>> s = Setting(d=5, L=40, sigma2=0.1)
    >>> round(float(manifold_loss(0.1, s)), 5)
    0.22092
    """
    return 1.0 + setting.sigma2 - effective_learning_rate(omega, setting)


def manifold_limit_bound(omega: float, setting: Setting) -> float:
    """Bound on how far Ltilde on S_omega and the step 2 omega mu* are from their omega -> 0 limits.

    Both `manifold_loss(omega) - manifold_loss(0)` and `effective_learning_rate(0) -
    effective_learning_rate(omega)` equal kappa (g - 1) / ((1 + kappa)(1 + kappa g)) with
    g = sinh(u)/u, u = d omega^2 (from (4.8)); since g - 1 <= (u^2/6) cosh u and g >= 1,
    both are at most

        kappa u^2 cosh(u) / (6 (1 + kappa)^2),

    the error term of Theorem 4.2(ii)'s limit (the infimum sigma2 + kappa/(1 + kappa) and
    the step 1/(1 + kappa)) read at a finite omega.

    >>> s = Setting(d=5, L=40, sigma2=0.1)
    >>> bound = manifold_limit_bound(0.05, s)
    >>> exact = float(manifold_loss(0.05, s) - manifold_loss(0.0, s))
    >>> bool(0 < exact <= bound < 1.01 * exact)
    True
    """
    u = setting.d * omega * omega
    return float(setting.kappa * u * u * np.cosh(u) / (6.0 * (1.0 + setting.kappa) ** 2))


def step_decrement_slope_bias(u_top: float, setting: Setting) -> float:
    """Bound on how far the log-log slope of the step's decrements in omega is from 4, eq. (4.8).

    By (4.8) the step falls short of its limit by C(omega) = kappa (g - 1)/((1 + kappa)(1 +
    kappa g)), g = sinh(u)/u, u = d omega^2, whose series kappa u^2/(6 (1 + kappa)^2) [1 + (1/20
    - kappa/(6 (1 + kappa))) u^2 + O(u^4)] gives C the local slope 4 + b u^2 in omega, |b| <=
    1/5 + 2 kappa/(3 (1 + kappa)). The decrements C(omega_{i+1}) - C(omega_i) along a geometric
    grid have the slope 4 of C, tilted twice as much (the derivative C' has local slope
    3 + 2 b u^2), so any least-squares slope over grid points with u <= u_top is within

        2 (1/5 + 2 kappa / (3 (1 + kappa))) u_top^2

    of 4 (tests/theory/test_manifold.py checks it against the exact C for u_top <= 1).

    >>> s = Setting(d=5, L=40, sigma2=0.1)
    >>> round(step_decrement_slope_bias(0.2, s), 4)
    0.0224
    """
    kappa = setting.kappa
    return float(2.0 * (0.2 + 2.0 * kappa / (3.0 * (1.0 + kappa))) * u_top**2)


@dataclass(frozen=True)
class SingleHeadOptimum:
    """Minimiser of Ltilde for one head (eq. (4.12)): scale omega, OV weight mu, loss."""

    omega: float
    mu: float
    loss: float


def single_head_optimum(setting: Setting) -> SingleHeadOptimum:
    """The one-head minimiser of Ltilde: omega* = 1/sqrt(d), mu* = sqrt(d) / (1 + e kappa).

    For one head, min over mu gives 1 + sigma2 - 1 / (1 + c e^{d w^2} / w^2), and
    e^{d w^2} / w^2 is smallest at w = 1/sqrt(d); the loss there is
    1 + sigma2 - 1 / (1 + e kappa) (reference §HE-4.12).

    >>> opt = single_head_optimum(Setting(d=5, L=40, sigma2=0.1))
    >>> round(opt.omega, 4), round(opt.mu, 4), round(opt.loss, 4)
    (0.4472, 1.6277, 0.3721)
    """
    e_kappa = math.e * setting.kappa
    return SingleHeadOptimum(
        omega=1.0 / math.sqrt(setting.d),
        mu=math.sqrt(setting.d) / (1.0 + e_kappa),
        loss=1.0 + setting.sigma2 - 1.0 / (1.0 + e_kappa),
    )
