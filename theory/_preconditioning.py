"""Preconditioned one-step GD on non-isotropic covariates, He et al. (2025) §5.3, Lemma E.4.

With ``x ~ N(0, Sigma)``, ``beta ~ N(0, I_d / d)`` and noisy labels (query included, reference
§0.2), a two-head model with ``KQ11 = ± omega Gamma`` predicts, to first order in omega, by
preconditioned debiased GD (5.5); the vanilla form drops the centring:

    vanilla   y_hat = (1/L) sum_i y_i x_i^T Gamma x_q
    debiased  y_hat = (1/L) sum_i y_i (x_i - xbar)^T Gamma x_q.

Both are ``g^T Gamma x_q`` with ``g = (1/L) X^T y`` (vanilla) or ``(1/L) X^T P y``, P the
centring projector. Risk (derivation, reference §HE-5.3-KMS): given beta,
``E(y_hat - y_q)^2 = E (Gamma^T g - beta)^T Sigma (Gamma^T g - beta) + sigma2``, so only the
first two moments of g enter.

- vanilla: ``E[g | beta] = Sigma beta`` and, by Isserlis ``E[(beta^T x)^2 x x^T] =
  (beta^T Sigma beta) Sigma + 2 Sigma beta beta^T Sigma``,
  ``E[g g^T | beta] = (1 + 1/L) Sigma beta beta^T Sigma + (beta^T Sigma beta + sigma2) Sigma / L``;
- debiased: ``X^T P X = W ~ Wishart_{L-1}(Sigma)`` (the centred rows are L - 1 independent
  N(0, Sigma) rows after a rotation), ``X^T P eps`` has covariance ``sigma2 W`` given X, and
  ``E[W A W] = n(n+1) Sigma A Sigma + n tr(A Sigma) Sigma`` (n = L - 1, A symmetric; Isserlis
  again), so ``E[g | beta] = ((L-1)/L) Sigma beta`` and ``E[g g^T | beta] =
  ((L-1)/L^2) [L Sigma beta beta^T Sigma + (beta^T Sigma beta + sigma2) Sigma]``:
  the centring costs the factor (L-1)/L and removes the extra ``Sigma beta beta^T Sigma / L``
  of the vanilla second moment.

Averaging over beta with ``E beta beta^T = B`` (the conditional moments above are exact for
every beta, so any B works; `preconditioned_gd_risk` takes it as ``signal``, e.g. one task of
the multi-task data of §HE-5.4-MT) replaces ``Sigma^2 / d`` by ``Sigma B Sigma`` and
``tr(Sigma)/d`` by ``tr(Sigma B)``. For the data of §0.2 (``B = I/d``), with
``t = tr(Sigma)/d + sigma2``,

    risk(Gamma) = tr(Sigma)/d + sigma2 - 2 a tr(Gamma Sigma^2)/d + tr(Gamma Sigma Gamma^T M),
    M = b Sigma^2 / d + c t Sigma / L,
    vanilla (a, b, c) = (1, 1 + 1/L, 1),   debiased (a, b, c) = ((L-1)/L,) * 3,

a convex quadratic in Gamma minimised where ``M Gamma Sigma = a Sigma^2 / d``:

    vanilla   Gamma*   = [ (1 + 1/L) Sigma + ((tr Sigma + d sigma2)/L) I ]^{-1}
    debiased  Gamma*_d = [ Sigma + ((tr Sigma + d sigma2)/L) I ]^{-1}

(the debiased a, b, c cancel: ``Gamma*_d = (a/b) [Sigma + (c/b)(tr Sigma + d sigma2)/L I]^{-1}``
with a = b = c). At Sigma = I they are ``eta* I`` with the steps of `theory.optimal_gd`, and
the risk at ``eta I`` is `theory.gd_risk` / `theory.debiased_gd_risk`.
"""

from __future__ import annotations

import numbers

import numpy as np

from icl_verify.covariance import check_covariance, check_rho
from icl_verify.settings import Setting

__all__ = [
    "debiased_excess_risk_bound",
    "kms_inverse",
    "optimal_preconditioner",
    "preconditioned_gd_risk",
]


def _covariance_of(covariance, setting: Setting) -> np.ndarray:
    sigma = check_covariance(covariance)
    if sigma.shape != (setting.d, setting.d):
        raise ValueError(
            f"covariance must be ({setting.d}, {setting.d}) for d = {setting.d}, "
            f"got shape {sigma.shape}"
        )
    return sigma


def _coefficients(setting: Setting, debiased: bool) -> tuple[float, float, float]:
    """(a, b, c) of the module docstring: risk = ... - 2 a tr(G S^2)/d + tr(G S G^T M)."""
    L = setting.L
    if debiased:
        shrink = (L - 1) / L
        return shrink, shrink, shrink
    return 1.0, 1.0 + 1.0 / L, 1.0


def optimal_preconditioner(covariance, setting: Setting, debiased: bool = False) -> np.ndarray:
    """The risk-minimising preconditioner of one-step GD, (5.6) / Lemma E.4, shape (d, d).

    ``Gamma* = [(1 + 1/L) Sigma + ((tr Sigma + d sigma2)/L) I]^{-1}`` (vanilla) and
    ``Gamma*_d = [Sigma + ((tr Sigma + d sigma2)/L) I]^{-1}`` (debiased, derived in the module
    docstring). ``covariance``: Sigma, (d, d) symmetric positive definite.

    >>> from icl_verify.covariance import kms_covariance
    >>> gamma = optimal_preconditioner(kms_covariance(5, 0.5), Setting(d=5, L=40, sigma2=0.1),
    ...                                debiased=True)
    >>> np.round(gamma[:2, :3], 3)
    array([[ 1.091, -0.464, -0.035],
           [-0.464,  1.288, -0.449]])
    """
    sigma = _covariance_of(covariance, setting)
    a, b, c = _coefficients(setting, debiased)
    d, L = setting.d, setting.L
    ridge = c * (np.trace(sigma) + d * setting.sigma2) / L
    return a * np.linalg.inv(b * sigma + ridge * np.eye(d))  # (d, d)


def preconditioned_gd_risk(
    gamma,
    covariance,
    setting: Setting,
    debiased: bool = False,
    *,
    signal=None,
    query_noise: bool = True,
) -> float:
    """E(y_hat - y_q)^2 of preconditioned one-step GD at Gamma, exact at finite d, L (Lemma E.4).

    ``tr(Sigma B) + sigma2 - 2 a tr(Gamma Sigma B Sigma) + tr(Gamma Sigma Gamma^T M)`` with
    ``M = b Sigma B Sigma + c (tr(Sigma B) + sigma2) Sigma / L`` and (a, b, c) = (1, 1 + 1/L, 1)
    (vanilla) or ((L-1)/L,)*3 (debiased), as derived in the module docstring for beta ~ N(0, B);
    the Wishart moments it uses hold for any B. ``gamma``: any (d, d) real matrix (not
    necessarily symmetric). ``signal``: B, (d, d), default I/d (the data of §0.2, where the risk
    reads ``tr(Sigma)/d + ... - 2 a tr(Gamma Sigma^2)/d``); ``query_noise=False`` drops the
    floor sigma2 of a noiseless query label. With B = diag(1_S), Sigma = I, context noise
    r |S| and no query noise this is one task of the multi-task data (§HE-5.4-MT,
    `theory.preconditioned_dgd_risk`).

    >>> from icl_verify.covariance import kms_covariance
    >>> s, sigma = Setting(d=5, L=40, sigma2=0.1), kms_covariance(5, 0.5)
    >>> round(preconditioned_gd_risk(optimal_preconditioner(sigma, s), sigma, s), 4)
    0.2339
    """
    sigma = _covariance_of(covariance, setting)
    gamma = np.asarray(gamma, dtype=np.float64)
    if gamma.shape != sigma.shape or not np.isfinite(gamma).all():
        raise ValueError(f"gamma must be a finite {sigma.shape} matrix, got shape {gamma.shape}")
    d, L = setting.d, setting.L
    B = np.eye(d) / d if signal is None else np.asarray(signal, dtype=np.float64)
    if B.shape != sigma.shape or not np.isfinite(B).all():
        raise ValueError(f"signal must be a finite {sigma.shape} matrix, got shape {B.shape}")
    a, b, c = _coefficients(setting, debiased)
    power = np.trace(sigma @ B)  # E (x^T beta)^2
    sandwich = sigma @ B @ sigma  # (d, d)
    M = b * sandwich + c * (power + setting.sigma2) * sigma / L  # (d, d)
    return float(
        power
        + (setting.sigma2 if query_noise else 0.0)
        - 2.0 * a * np.trace(gamma @ sandwich)
        + np.trace(gamma @ sigma @ gamma.T @ M)
    )


def debiased_excess_risk_bound(covariance, setting: Setting, relative_radius: float) -> float:
    """The largest excess risk of debiased GD at a Gamma near its optimum Gamma*_d.

    Over ``||Gamma - Gamma*_d||_F <= relative_radius ||Gamma*_d||_F``: the risk is a quadratic
    in Gamma with ``risk(Gamma*_d + D) - risk(Gamma*_d) = tr(D Sigma D^T M)`` (module
    docstring); M is a polynomial in Sigma, so the largest value over ``||D||_F = 1`` is at
    ``D = v v^T``, v the top eigenvector of Sigma, and it scales with ``||D||_F^2``.

    >>> from icl_verify.covariance import kms_covariance
    >>> s = Setting(d=5, L=40, sigma2=0.1)
    >>> round(debiased_excess_risk_bound(kms_covariance(5, 0.5), s, 0.03), 4)  # 3% off
    0.0195
    """
    sigma = _covariance_of(covariance, setting)
    best = optimal_preconditioner(sigma, setting, debiased=True)
    top = np.linalg.eigh(sigma)[1][:, -1]  # (d,)
    unit = preconditioned_gd_risk(best + np.outer(top, top), sigma, setting, True)
    curvature = unit - preconditioned_gd_risk(best, sigma, setting, True)
    radius = relative_radius * np.linalg.norm(best)
    return float(curvature * radius**2)


def kms_inverse(d: int, rho: float) -> np.ndarray:
    """Inverse of the KMS matrix ``Sigma_ij = rho^|i-j|`` in closed form, shape (d, d) (§HE-5.3).

    ``Sigma^{-1} = (1/(1 - rho^2)) tridiag(-rho; 1, 1 + rho^2, ..., 1 + rho^2, 1; -rho)``
    (the precision matrix of a stationary AR(1) sequence); for d = 1 it is [[1]].

    >>> kms_inverse(3, 0.5) * 0.75
    array([[ 1.  , -0.5 ,  0.  ],
           [-0.5 ,  1.25, -0.5 ],
           [ 0.  , -0.5 ,  1.  ]])
    """
    if isinstance(d, bool) or not isinstance(d, numbers.Integral) or d < 1:
        raise ValueError(f"d must be an integer >= 1, got {d!r}")
    rho = check_rho(rho)
    if d == 1:
        return np.ones((1, 1))
    diagonal = np.full(d, 1.0 + rho * rho)
    diagonal[[0, -1]] = 1.0
    inverse = np.diag(diagonal) - rho * (np.eye(d, k=1) + np.eye(d, k=-1))  # (d, d)
    return inverse / (1.0 - rho * rho)
