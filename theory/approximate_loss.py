"""The approximate population loss Ltilde of He et al. (2025), eq. (4.1), and its derivatives.

For H heads with KQ scales omega (shape (..., H)) and OV weights mu (shape (..., H)),

    Ltilde(omega, mu) = 1 + sigma2 - 2 mu^T omega + mu^T (omega omega^T + c exp(d omega omega^T)) mu,

with c = (1 + sigma2) / L and exp taken elementwise (reference §HE-P4.1). It is the
plain mean squared error (no 1/2), the convention of the authors' code.

Overflow: exp(d omega_i omega_j) overflows float64 once d omega_i omega_j > 709
(|omega| = 3 at d = 100 gives exp(900)). Every function here factors out
M = max_ij d omega_i omega_j, works with exp(d omega omega^T - M) and multiplies
exp(M) back only at the end, so a result is finite whenever the true value is
representable (for instance when opposite OV weights cancel the large terms).
"""

from __future__ import annotations

import numpy as np

from theory._stable import times_exp
from theory.setting import Setting


def _scaled_kernel(omega: np.ndarray, d: int) -> tuple[np.ndarray, np.ndarray]:
    """(exp(d omega omega^T - M), M) with M = max(0, max_ij d omega_i omega_j) per batch entry."""
    exponent = d * omega[..., :, None] * omega[..., None, :]  # (..., H, H)
    log_scale = np.maximum(exponent.max(axis=(-2, -1)), 0.0)  # (...)
    return np.exp(exponent - log_scale[..., None, None]), log_scale


def _outer(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Batched outer product a b^T, shape (..., H, H)."""
    return a[..., :, None] * b[..., None, :]


def _as_heads(omega, mu=None):
    omega = np.asarray(omega, dtype=float)
    if mu is None:
        return omega
    mu = np.asarray(mu, dtype=float)
    return np.broadcast_arrays(omega, mu)


def approximate_loss(omega, mu, setting: Setting) -> np.ndarray:
    """Ltilde(omega, mu) of eq. (4.1), vectorised over leading batch axes.

    Args:
        omega: KQ scales, shape (..., H).
        mu: OV weights, shape (..., H) (broadcast against omega).
        setting: the problem setting (d, L, sigma2).

    Returns:
        The loss, shape (...).

    >>> s = Setting(d=5, L=40, sigma2=0.1)
    >>> float(approximate_loss([0.0], [0.0], s))  # predicting zero costs E y_q^2
    1.1
    >>> round(float(approximate_loss([0.1, -0.1], [4.3954, -4.3954], s)), 5)  # on S_omega
    0.22092
    """
    omega, mu = _as_heads(omega, mu)
    kernel, log_scale = _scaled_kernel(omega, setting.d)
    p = np.sum(mu * omega, axis=-1)
    quadratic = np.einsum("...i,...ij,...j->...", mu, kernel, mu)
    return 1.0 + setting.sigma2 - 2.0 * p + p * p + setting.c * times_exp(quadratic, log_scale)


def approximate_loss_grad(omega, mu, setting: Setting) -> tuple[np.ndarray, np.ndarray]:
    """Gradient of Ltilde (4.1): (dLtilde/domega, dLtilde/dmu), each of shape (..., H).

    With E = exp(d omega omega^T) and p = mu^T omega:

        dLtilde/dmu    = -2 omega + 2 p omega + 2 c E mu
        dLtilde/domega = -2 mu + 2 p mu + 2 c d mu o (E (mu o omega))

    >>> s = Setting(d=5, L=40, sigma2=0.1)
    >>> g_omega, g_mu = approximate_loss_grad([0.0, 0.0], [0.0, 0.0], s)  # origin is critical
    >>> float(abs(g_omega).max() + abs(g_mu).max())
    0.0
    """
    omega, mu = _as_heads(omega, mu)
    c, d = setting.c, setting.d
    kernel, log_scale = _scaled_kernel(omega, d)
    p = np.sum(mu * omega, axis=-1, keepdims=True)
    scale = log_scale[..., None]
    kernel_mu = np.einsum("...ij,...j->...i", kernel, mu)
    kernel_mu_omega = np.einsum("...ij,...j->...i", kernel, mu * omega)
    grad_mu = -2.0 * omega + 2.0 * p * omega + 2.0 * c * times_exp(kernel_mu, scale)
    grad_omega = -2.0 * mu + 2.0 * p * mu + 2.0 * c * d * times_exp(mu * kernel_mu_omega, scale)
    return grad_omega, grad_mu


def approximate_loss_hessian(omega, mu, setting: Setting) -> np.ndarray:
    """Hessian of Ltilde (4.1) in the variables (omega_1..omega_H, mu_1..mu_H), shape (..., 2H, 2H).

    Blocks, with E = exp(d omega omega^T), p = mu^T omega, delta the Kronecker delta:

        d2/domega_h domega_k = 2 mu_h mu_k + 2cd mu_h [delta_hk d sum_j E_hj mu_j omega_j^2
                                                       + d omega_h E_hk mu_k omega_k + E_hk mu_k]
        d2/dmu_i domega_k    = delta_ik (-2 + 2p + 2cd sum_j E_ij omega_j mu_j)
                               + 2 omega_i mu_k + 2cd E_ik omega_i mu_k
        d2/dmu_i dmu_j       = 2 omega_i omega_j + 2c E_ij

    >>> s = Setting(d=5, L=40, sigma2=0.1)
    >>> approximate_loss_hessian([0.1, -0.1], [4.0, -4.0], s).shape
    (4, 4)
    """
    omega, mu = _as_heads(omega, mu)
    c, d = setting.c, setting.d
    kernel, log_scale = _scaled_kernel(omega, d)
    scale = log_scale[..., None, None]
    eye = np.eye(omega.shape[-1])
    p = np.sum(mu * omega, axis=-1)[..., None, None]

    weighted_sq = np.einsum("...hj,...j->...h", kernel, mu * omega**2)  # sum_j E_hj mu_j omega_j^2
    weighted = np.einsum("...ij,...j->...i", kernel, mu * omega)  # sum_j E_ij mu_j omega_j
    omega_omega_kernel = (
        eye * (d * mu * weighted_sq)[..., None]
        + d * kernel * _outer(mu * omega, mu * omega)
        + kernel * _outer(mu, mu)
    )
    h_omega_omega = 2.0 * _outer(mu, mu) + 2.0 * c * d * times_exp(omega_omega_kernel, scale)

    mu_omega_kernel = eye * (d * weighted)[..., None] + d * kernel * _outer(omega, mu)
    h_mu_omega = eye * (-2.0 + 2.0 * p) + 2.0 * _outer(omega, mu)
    h_mu_omega = h_mu_omega + 2.0 * c * times_exp(mu_omega_kernel, scale)

    h_mu_mu = 2.0 * _outer(omega, omega) + 2.0 * c * times_exp(kernel, scale)

    top = np.concatenate([h_omega_omega, np.swapaxes(h_mu_omega, -1, -2)], axis=-1)
    bottom = np.concatenate([h_mu_omega, h_mu_mu], axis=-1)
    return np.concatenate([top, bottom], axis=-2)


def optimal_mu(omega, setting: Setting) -> np.ndarray:
    """argmin over mu of Ltilde(omega, mu) for fixed KQ scales (reference §HE-4.1-OPTMU).

    Solves (omega omega^T + c exp(d omega omega^T)) mu = omega by a linear solve
    (no inverse is formed), after scaling both sides by exp(-M) against overflow.
    The system is singular when two heads share the same omega (the minimiser
    is then not unique) and numpy raises LinAlgError.

    Args:
        omega: KQ scales, shape (..., H).

    Returns:
        The optimal OV weights, shape (..., H).

    >>> s = Setting(d=5, L=40, sigma2=0.1)
    >>> [round(float(m), 4) for m in optimal_mu([0.1, -0.1], s)]  # = (mu*, -mu*) of (4.6)
    [4.3954, -4.3954]
    """
    omega = _as_heads(omega)
    kernel, log_scale = _scaled_kernel(omega, setting.d)
    shrink = np.exp(-log_scale)[..., None]  # exp(-M), shape (..., 1)
    system = shrink[..., None] * omega[..., :, None] * omega[..., None, :] + setting.c * kernel
    return np.linalg.solve(system, (shrink * omega)[..., None])[..., 0]


def optimal_mu_loss(omega, setting: Setting) -> np.ndarray:
    """min over mu of Ltilde(omega, mu) = 1 + sigma2 - omega^T mu_opt(omega), shape (...).

    >>> s = Setting(d=5, L=40, sigma2=0.1)
    >>> round(float(optimal_mu_loss([0.1, -0.1], s)), 5)  # = manifold_loss(0.1)
    0.22092
    """
    omega = _as_heads(omega)
    return 1.0 + setting.sigma2 - np.sum(omega * optimal_mu(omega, setting), axis=-1)
