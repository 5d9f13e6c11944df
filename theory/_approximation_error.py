"""How far the approximations of He et al. (2025) §4.1 and §4.3 are from the exact quantities.

Two error terms, with the bounds on the log-log slopes through which the claims read them:

- HE-P4.1: the gap true loss - Ltilde (4.1) on the manifold (omega, mu*(omega)). Its
  omega -> 0 limit is exact at every L: the ± pair becomes debiased GD with step
  eta* = L / (L + D), whose risk is sigma2 + (D + 1)/(L + D) (`optimal_gd`), while Ltilde
  tends to `manifold_loss(0)` = sigma2 + D/(L + D); so the gap tends to 1/(L + D)
  (`manifold_gap_limit`). At finite omega the gap is (1 + delta_L)/(L + D) with delta_L of
  relative size O(d omega^2) (`manifold_gap_slope_bias`). Over the whole ± family at step
  eta = 2 omega mu <= 1 the same model bounds the gap by C/(L + D), C = 1 + 2 d omega^2
  e^{d omega^2} (`approximation_constant`): O(1/L) with a constant that grows like
  e^{d omega^2}, moderate only where d omega^2 = O(1).
- HE-T4.2i: at fixed eta = 2 omega mu the ± pair approaches debiased GD (4.11), with error
  (eta omega^2 / 6)(1/L) sum_i (y_i - ybar)(u_i^3 - 3 u_i v) + O(eta omega^4), the cubic term
  of (4.10): order omega^2 (`dgd_gap_omega_slope_bias`), and, a mean-zero fluctuation of a
  1/L average, order L^{-1/2} (`dgd_gap_length_slope_bias`); its RMS for large d is
  eta omega^2 d^{3/2} sqrt((1 + sigma2)/(6L)) (`dgd_gap_rms_large_d`; reference §HE-T4.2i).

Lengths L and dimensions d come as arguments here (not as a `Setting`), because each
function describes how a quantity varies with them. Float64 numpy.
"""

from __future__ import annotations

import numpy as np


def manifold_gap_limit(L, d: int, sigma2: float) -> np.ndarray:
    """The omega -> 0 limit of true loss - Ltilde on the manifold: 1/(L + D), D = d (1 + sigma2).

    Exact for every L (module docstring); shape of `L`.

    >>> from icl_verify.theory import Setting, manifold_loss, optimal_gd
    >>> s = Setting(d=5, L=40, sigma2=0.1)
    >>> exact = optimal_gd(s, debiased=True).risk - manifold_loss(0.0, s)
    >>> round(float(manifold_gap_limit(40, 5, 0.1)), 6), round(float(exact), 6)
    (0.021978, 0.021978)
    """
    return 1.0 / (np.asarray(L, dtype=float) + d * (1.0 + sigma2))


def product_gap_limit(p, L, d: int, sigma2: float) -> np.ndarray:
    """The omega -> 0 limit of true loss - Ltilde at product p = mu^T omega with zero-sum OV:
    p (2 - p / eta*) / L, eta* = L / (L + D); 1/(L + D) at p = eta* (`manifold_gap_limit`).

    As omega -> 0 at fixed p the kernel-sum predictor becomes debiased GD with step p, whose
    risk is 1 + sigma2 - 2p (L-1)/L + p^2 (L-1)(L+D)/L^2 (`debiased_gd_risk`), while Ltilde
    tends to 1 + sigma2 - 2p + (1 + kappa) p^2 (the zero-sum term c (1^T mu)^2 is exact);
    their difference is 2p/L - p^2 (L + D)/L^2. Shape of `p` broadcast against `L`.

    >>> round(float(product_gap_limit(40 / 45.5, 40, 5, 0.1)), 12)  # 1/(L + D) = 1/45.5
    0.021978021978
    >>> float(product_gap_limit(0.0, 40, 5, 0.1))  # at the origin L̃ is exact
    0.0
    """
    p, L = np.asarray(p, dtype=float), np.asarray(L, dtype=float)
    return p * (2.0 - p * (L + d * (1.0 + sigma2)) / L) / L


def approximation_constant(omega, d: int) -> np.ndarray:
    """C(omega, d) = 1 + 2 d omega^2 e^{d omega^2}: the constant of |true loss - Ltilde| <=
    C / (L + D) for the ± pair at step eta = 2 omega mu <= 1 (Prop. 4.1's O(1/L), stated).

    The omega -> 0 gap is exactly 1/(L + D) (`manifold_gap_limit`); the kernel factor
    2p(e^{d omega^2} - 1) <= 2 d omega^2 e^{d omega^2} (p = eta < 1) of the heuristic gap
    L (true - Ltilde) ~ 2p e^{d omega^2} - p^2 bounds the finite-omega correction (the band of
    `manifold_gap_slope_bias`). Inside d omega^2 <= 1 it is at most 1 + 2e = 6.44; beyond, it
    grows like e^{d omega^2}. Shape of `omega`.

    >>> approximation_constant(np.array([0.0, 0.5, 1.0]) / np.sqrt(5), d=5).round(3).tolist()
    [1.0, 1.642, 6.437]
    """
    x = d * np.asarray(omega, dtype=float) ** 2
    return 1.0 + 2.0 * x * np.exp(x)


def manifold_gap_slope_bias(omega: float, lengths, d: int, sigma2: float) -> float:
    """Bound on the bias of the log-log slope of the manifold gap against L + D from finite omega.

    Model: gap(L) = (1 + delta_L) / (L + D), where the finite-omega correction delta_L stays
    within a band of width Delta := 2 d omega^2 e^{d omega^2} as L varies (relative size
    O(d omega^2) of the omega-dependent dropped terms; Delta is the kernel factor
    2p(e^{d omega^2} - 1) of the heuristic L gap ~ 2p e^{d omega^2} - p^2, p = 2 omega mu* < 1,
    which itself overstates the omega dependence, by the Monte Carlo of HE-P4.1-MAP). The
    least-squares slope of log(1 + delta) on x = log(L + D) is then at most
    Delta * sum|x - xbar| / (2 sum (x - xbar)^2) in absolute value (worst case: delta at the
    top of the band on one side of xbar, at the bottom on the other).

    Args:
        omega: the KQ scale of the manifold point.
        lengths: the prompt lengths L of the fit, at least two distinct.

    >>> round(manifold_gap_slope_bias(0.1, [20, 40, 80, 160, 320], d=5, sigma2=0.1), 3)
    0.05
    """
    x = np.log(np.asarray(lengths, dtype=float) + d * (1.0 + sigma2))
    spread = x - x.mean()
    delta = float(approximation_constant(omega, d)) - 1.0
    return float(delta * np.abs(spread).sum() / (2 * (spread**2).sum()))


def dgd_gap_rms_large_d(eta: float, omega, L, d: int, sigma2: float) -> np.ndarray:
    """RMS |y_TF - y_dGD(eta)| of the ± pair for large d: eta omega^2 d^{3/2} sqrt((1+sigma2)/(6L)).

    The reference's leading-order RMS of the cubic term of (4.10) (§HE-T4.2i); a large-d
    formula, which underestimates the RMS at d = 5 (HE-T4.2i's figure shows by how much).
    Broadcasts omega against L.

    >>> round(float(dgd_gap_rms_large_d(0.879, 0.05, 40, d=5, sigma2=0.1)), 7)
    0.0016633
    """
    omega, L = np.asarray(omega, dtype=float), np.asarray(L, dtype=float)
    return eta * omega**2 * d**1.5 * np.sqrt((1.0 + sigma2) / (6.0 * L))


def dgd_gap_omega_slope_bias(omega_max: float, d: int) -> float:
    """2 d omega_max^2: slope bias from the next odd order of (4.10), relative size <= d omega^2.

    The error is eta omega^2 E3 (1 + r(omega)) with r = O((omega u)^2), u ~ sqrt(d); a relative
    term B omega^2 with B <= d tilts the local log-log slope by 2 B omega^2/(1 + B omega^2),
    at most 2 d omega_max^2 over omega <= omega_max.

    >>> round(dgd_gap_omega_slope_bias(0.05, d=5), 12)
    0.025
    """
    return 2 * d * omega_max**2


def dgd_gap_length_slope_bias(lengths, d: int, sigma2: float) -> float:
    """(D / L_min) / log(L_max / L_min): finite-L corrections of relative order D/L to the RMS.

    The centring by ybar, xbar and the random softmax denominators change the RMS by a factor
    1 + O(D/L), which tilts its log-log slope over [L_min, L_max] by at most this much.

    >>> round(dgd_gap_length_slope_bias([80, 640], d=5, sigma2=0.1), 4)
    0.0331
    """
    L = np.asarray(lengths, dtype=float)
    return float(d * (1 + sigma2) / L.min() / np.log(L.max() / L.min()))
