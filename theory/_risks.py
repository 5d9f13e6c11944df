"""Exact risks of one-step GD predictors and the Bayes risk, He et al. (2025) §4.3 and Thm 4.2(iii).

One step of gradient descent from zero with step eta gives the predictors

    vanilla   y_hat = (eta / L) sum_i y_i x_i^T x_q
    debiased  y_hat = (eta / L) sum_i y_i (x_i - xbar)^T x_q      (4.11)

Their mean squared errors (query label noisy, E||beta||^2 = 1) are quadratics
1 + sigma2 - 2 a eta + b eta^2 whose coefficients follow from Wishart moments
(reference §HE-4.3-RISK; derived in `theory.symbolic`):

    vanilla   a = 1,            b = (L + D + 1) / L
    debiased  a = (L - 1) / L,  b = (L - 1)(L + D) / L^2,       D = d (1 + sigma2)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from icl_verify.settings import Setting


def _risk_coefficients(setting: Setting, debiased: bool) -> tuple[float, float]:
    """(a, b) of risk(eta) = 1 + sigma2 - 2 a eta + b eta^2."""
    L, D = setting.L, setting.D
    if debiased:
        return (L - 1) / L, (L - 1) * (L + D) / L**2
    return 1.0, (L + D + 1) / L


def _one_step_risk(eta, setting: Setting, debiased: bool) -> np.ndarray:
    a, b = _risk_coefficients(setting, debiased)
    eta = np.asarray(eta, dtype=float)
    return 1.0 + setting.sigma2 - 2.0 * a * eta + b * eta * eta


def gd_risk(eta, setting: Setting) -> np.ndarray:
    """E(y_hat_GD(eta) - y_q)^2 = 1 + sigma2 - 2 eta + eta^2 (L + D + 1) / L, exact at finite d, L.

    >>> round(float(gd_risk(0.897, Setting(d=5, L=40, sigma2=0.1))), 4)
    0.2414
    """
    return _one_step_risk(eta, setting, debiased=False)


def debiased_gd_risk(eta, setting: Setting) -> np.ndarray:
    """E(y_hat_dGD(eta) - y_q)^2 = 1 + sigma2 - 2 eta (L-1)/L + eta^2 (L-1)(L+D)/L^2, eq. (4.11).

    >>> round(float(debiased_gd_risk(0.897, Setting(d=5, L=40, sigma2=0.1))), 4)
    0.2432
    """
    return _one_step_risk(eta, setting, debiased=True)


def debiasing_gap(eta, setting: Setting) -> np.ndarray:
    """E(y_hat_dGD(eta) - y_hat_GD(eta))^2 = eta^2 (D + 2) / L^2, exact at finite d, L
    [derived here; §HE-4.11 says only that the two coincide as d/L -> 0].

    The predictors differ by ``-eta ybar xbar^T x_q`` (§HE-4.11). Given the covariates, ybar
    and xbar^T x_q are independent, with variances |xbar|^2/d + sigma2/L and |xbar|^2, and
    |xbar|^2 ~ chi2_d / L (E = d/L, E^2 = d(d+2)/L^2), so the gap's mean square is
    ((d+2) + sigma2 d)/L^2. At fixed d it falls as L^-2 (d/L -> 0: the two coincide); with
    d = xi L (the proportional regime) only as L^-1.

    >>> float(debiasing_gap(1.0, Setting(d=5, L=40, sigma2=0.1)))  # (5.5 + 2) / 40^2
    0.0046875
    """
    eta = np.asarray(eta, dtype=float)
    return eta * eta * (setting.D + 2.0) / setting.L**2


@dataclass(frozen=True)
class TunedRisk:
    """A step size and the risk it attains."""

    eta: float
    risk: float


def optimal_gd(setting: Setting, debiased: bool = False) -> TunedRisk:
    """The risk-minimising step of one-step GD (or debiased GD) and its risk.

    vanilla:  eta* = L / (L + D + 1),  risk* = sigma2 + (D + 1) / (L + D + 1)
    debiased: eta* = L / (L + D),      risk* = sigma2 + (D + 1) / (L + D)

    The debiased eta* equals the manifold limit 1 / (1 + kappa) exactly.

    >>> t = optimal_gd(Setting(d=5, L=40, sigma2=0.1), debiased=True)
    >>> round(t.eta, 5), round(t.risk, 5)
    (0.87912, 0.24286)
    """
    L, D = setting.L, setting.D
    eta = L / (L + D) if debiased else L / (L + D + 1)
    a, _ = _risk_coefficients(setting, debiased)
    return TunedRisk(eta=eta, risk=1.0 + setting.sigma2 - a * eta)


def _check_limit_arguments(xi: float, sigma2: float) -> None:
    if not (math.isfinite(xi) and xi > 0):
        raise ValueError(f"xi must be a finite number > 0 (the limit of d/L), got {xi!r}")
    if not (math.isfinite(sigma2) and sigma2 >= 0):
        raise ValueError(f"sigma2 must be a finite number >= 0, got {sigma2!r}")


def bayes_risk_limit(xi: float, sigma2: float) -> float:
    """Bayes (posterior-mean) risk as d, L -> inf with d/L -> xi, Theorem 4.2(iii).

    R_Bayes = (1/2) [sigma2 + (xi - 1)/xi + sqrt((sigma2 + (1 - xi)/xi)^2 + 4 sigma2)],
    the limit of sigma2 + sigma2 tr((X^T X + sigma2 d I)^{-1}) obtained from the
    Marchenko-Pastur Stieltjes transform (reference §HE-T4.2iii).

    With a = sigma2 + (1 - xi)/xi the excess R_Bayes - sigma2 = (sqrt(a^2 + 4 sigma2) - a) / 2
    is evaluated as 2 sigma2 / (sqrt(a^2 + 4 sigma2) + a) when a > 0, which avoids the
    cancellation of two ~1/xi terms as xi -> 0.

    >>> round(bayes_risk_limit(0.125, 0.1), 5)
    0.11406
    """
    _check_limit_arguments(xi, sigma2)
    shifted = sigma2 + (1.0 - xi) / xi  # a
    root = math.sqrt(shifted * shifted + 4.0 * sigma2)
    excess = 2.0 * sigma2 / (root + shifted) if shifted > 0 else 0.5 * (root - shifted)
    return sigma2 + excess


def gd_risk_limit(xi: float, sigma2: float) -> float:
    """Tuned (debiased or vanilla) GD risk as d/L -> xi: sigma2 + xi(1+sigma2) / (1 + xi(1+sigma2)).

    It equals inf Ltilde over the homogeneous set (Theorem 4.2(ii)) at kappa = xi (1 + sigma2).

    >>> round(gd_risk_limit(0.125, 0.1), 5)
    0.22088
    """
    _check_limit_arguments(xi, sigma2)
    kappa = xi * (1.0 + sigma2)
    return sigma2 + kappa / (1.0 + kappa)


@dataclass(frozen=True)
class BayesComparison:
    """Theorem 4.2(iii): tuned debiased GD against the Bayes risk in the proportional limit.

    Attributes:
        xi, sigma2: the limit d/L and the noise variance.
        gd_risk: limit of the optimally tuned debiased (= vanilla) GD risk.
        bayes_risk: limit of the Bayes risk.
        risk_ratio: gd_risk / bayes_risk.
        excess_ratio: (gd_risk - sigma2) / (bayes_risk - sigma2).
        risk_ratio_bound: 1 + xi(1+sigma2) / (sigma2 (1 + xi(1+sigma2))) >= risk_ratio.
        excess_ratio_bound: 1 + 1/sigma2 >= excess_ratio (tight as xi -> 0).
    """

    xi: float
    sigma2: float
    gd_risk: float
    bayes_risk: float
    risk_ratio: float
    excess_ratio: float
    risk_ratio_bound: float
    excess_ratio_bound: float


def compare_with_bayes(xi: float, sigma2: float) -> BayesComparison:
    """Risk ratio and excess-risk ratio of tuned debiased GD to Bayes, Theorem 4.2(iii).

    Needs sigma2 > 0 (with no noise the Bayes excess risk can vanish).

    >>> cmp = compare_with_bayes(0.125, 0.1)
    >>> round(cmp.risk_ratio, 3), round(cmp.excess_ratio, 2)
    (1.937, 8.6)
    """
    if not sigma2 > 0:
        raise ValueError(f"sigma2 must be > 0 for the Bayes comparison, got {sigma2!r}")
    gd = gd_risk_limit(xi, sigma2)
    bayes = bayes_risk_limit(xi, sigma2)
    kappa = xi * (1.0 + sigma2)
    return BayesComparison(
        xi=xi,
        sigma2=sigma2,
        gd_risk=gd,
        bayes_risk=bayes,
        risk_ratio=gd / bayes,
        excess_ratio=(gd - sigma2) / (bayes - sigma2),
        risk_ratio_bound=1.0 + kappa / (sigma2 * (1.0 + kappa)),
        excess_ratio_bound=1.0 + 1.0 / sigma2,
    )
