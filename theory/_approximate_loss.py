"""The approximate population loss Ltilde of He et al. (2025), eq. (4.1), and its derivatives.

For H heads with KQ scales omega (shape (..., H)) and OV weights mu (shape (..., H)),

    Ltilde(omega, mu) = 1 + sigma2 - 2 mu^T omega + mu^T (omega omega^T + c exp(d omega omega^T)) mu

with c = (1 + sigma2) / L and exp taken elementwise (reference §HE-P4.1). It is the
plain mean squared error (no 1/2), the convention of the authors' code.

Overflow: exp(d omega_i omega_j) overflows float64 once d omega_i omega_j > 709
(|omega| = 3 at d = 100 gives exp(900)). Every function here factors the kernel as

    exp(d omega omega^T) = S K S,   S = diag(exp(d omega^2 / 2)),
    K_ij = exp(-d (omega_i - omega_j)^2 / 2) in (0, 1],

folds S into the OV weights, v = S mu, stores v as u exp(M) with M = max_h log|v_h|
(so |u_h| <= 1), and multiplies exp(2M) back only at the end. A result is therefore
finite and accurate whenever the true value is representable: heads with large
|omega| and tiny mu next to heads with small |omega| (where a single global scale
exp(-max d omega_i omega_j) would underflow the small-omega entries), or large
cancelling terms.
"""

from __future__ import annotations

import numpy as np
from icl_verify.theory._stable import times_exp

from icl_verify.settings import Setting


def _gaussian_kernel(omega: np.ndarray, d: int) -> np.ndarray:
    """K_ij = exp(-d (omega_i - omega_j)^2 / 2), shape (..., H, H); exp(d omega omega^T) = S K S."""
    gap = omega[..., :, None] - omega[..., None, :]  # (..., H, H)
    return np.exp(-0.5 * d * gap * gap)


def _scaled_weights(omega: np.ndarray, mu: np.ndarray, d: int) -> tuple[np.ndarray, np.ndarray]:
    """(u, M) with exp(d omega^2 / 2) mu = u exp(M), |u_h| <= 1; M (...) is 0 when mu = 0."""
    with np.errstate(divide="ignore"):
        log_v = np.log(np.abs(mu)) + 0.5 * d * omega * omega  # (..., H), -inf where mu_h = 0
    log_scale = log_v.max(axis=-1)
    log_scale = np.where(np.isfinite(log_scale), log_scale, 0.0)  # all mu_h = 0
    return np.sign(mu) * np.exp(log_v - log_scale[..., None]), log_scale


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
    kernel = _gaussian_kernel(omega, setting.d)
    u, log_scale = _scaled_weights(omega, mu, setting.d)
    p = np.sum(mu * omega, axis=-1)
    quadratic = np.einsum("...i,...ij,...j->...", u, kernel, u)  # mu^T E mu = quadratic * exp(2M)
    return (
        1.0 + setting.sigma2 - 2.0 * p + p * p + setting.c * times_exp(quadratic, 2.0 * log_scale)
    )


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
    kernel = _gaussian_kernel(omega, d)
    u, log_scale = _scaled_weights(omega, mu, d)
    scale = log_scale[..., None]
    p = np.sum(mu * omega, axis=-1, keepdims=True)
    kernel_u = np.einsum(
        "...ij,...j->...i", kernel, u
    )  # (E mu)_i = kernel_u_i exp(d omega_i^2 / 2 + M)
    kernel_u_omega = np.einsum("...ij,...j->...i", kernel, u * omega)
    grad_mu = (
        -2.0 * omega
        + 2.0 * p * omega
        + 2.0 * c * times_exp(kernel_u, 0.5 * d * omega * omega + scale)
    )
    grad_omega = -2.0 * mu + 2.0 * p * mu + 2.0 * c * d * times_exp(u * kernel_u_omega, 2.0 * scale)
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
    kernel = _gaussian_kernel(omega, d)
    u, log_scale = _scaled_weights(omega, mu, d)
    scale = log_scale[..., None, None]
    row_scale = (
        0.5 * d * omega[..., :, None] * omega[..., :, None] + scale
    )  # d omega_i^2 / 2 + M, (..., H, 1)
    eye = np.eye(omega.shape[-1])
    p = np.sum(mu * omega, axis=-1)[..., None, None]

    # With v = S mu = u exp(M): mu_h E_hk mu_k = v_h K_hk v_k and
    # sum_j E_ij a_j mu_j = exp(d omega_i^2 / 2) (K (v o a))_i.
    weighted_sq = np.einsum("...hj,...j->...h", kernel, u * omega**2)  # sum_j K_hj u_j omega_j^2
    weighted = np.einsum("...ij,...j->...i", kernel, u * omega)  # sum_j K_ij u_j omega_j
    omega_omega_kernel = (
        eye * (d * u * weighted_sq)[..., None]
        + d * kernel * _outer(u * omega, u * omega)
        + kernel * _outer(u, u)
    )
    h_omega_omega = 2.0 * _outer(mu, mu) + 2.0 * c * d * times_exp(omega_omega_kernel, 2.0 * scale)

    mu_omega_kernel = eye * (d * weighted)[..., None] + d * kernel * _outer(omega, u)
    h_mu_omega = eye * (-2.0 + 2.0 * p) + 2.0 * _outer(omega, mu)
    h_mu_omega = h_mu_omega + 2.0 * c * times_exp(mu_omega_kernel, row_scale)

    with np.errstate(
        over="ignore"
    ):  # exp(d omega_i omega_j) is inf exactly when the true entry overflows
        h_mu_mu = 2.0 * _outer(omega, omega) + 2.0 * c * np.exp(d * _outer(omega, omega))

    top = np.concatenate([h_omega_omega, np.swapaxes(h_mu_omega, -1, -2)], axis=-1)
    bottom = np.concatenate([h_mu_omega, h_mu_mu], axis=-1)
    return np.concatenate([top, bottom], axis=-2)


def optimal_mu(omega, setting: Setting) -> np.ndarray:
    """argmin over mu of Ltilde(omega, mu) for fixed KQ scales (reference §HE-4.1-OPTMU).

    Solves (omega omega^T + c exp(d omega omega^T)) mu = omega by a linear solve
    (no inverse is formed) in the scaled form (a a^T + c K) z = a, a = S^-1 omega,
    mu = S^-1 z, with S = diag(exp(d omega^2 / 2)) and K the Gaussian kernel
    exp(-d (omega_i - omega_j)^2 / 2) of unit diagonal, so no entry overflows.
    Heads must have distinct omegas. When two heads share an omega the system is
    singular: only the sum of their mu is determined, and numpy either raises
    LinAlgError or returns one minimiser of the group with arbitrary, possibly large
    opposite entries (nearly equal omegas give the same ill-conditioning). For
    repeated scales, merge the heads and solve for the group sums.

    Args:
        omega: KQ scales, shape (..., H).

    Returns:
        The optimal OV weights, shape (..., H).

    >>> s = Setting(d=5, L=40, sigma2=0.1)
    >>> [round(float(m), 4) for m in optimal_mu([0.1, -0.1], s)]  # = (mu*, -mu*) of (4.6)
    [4.3954, -4.3954]
    """
    omega = _as_heads(omega)
    shrink = np.exp(-0.5 * setting.d * omega * omega)  # diagonal of S^-1, (..., H)
    scaled_omega = shrink * omega  # a
    system = _outer(scaled_omega, scaled_omega) + setting.c * _gaussian_kernel(omega, setting.d)
    return shrink * np.linalg.solve(system, scaled_omega[..., None])[..., 0]


def optimal_mu_loss(omega, setting: Setting) -> np.ndarray:
    """min over mu of Ltilde(omega, mu) = 1 + sigma2 - omega^T mu_opt(omega), shape (...).

    >>> s = Setting(d=5, L=40, sigma2=0.1)
    >>> round(float(optimal_mu_loss([0.1, -0.1], s)), 5)  # = manifold_loss(0.1)
    0.22092
    """
    omega = _as_heads(omega)
    return 1.0 + setting.sigma2 - np.sum(omega * optimal_mu(omega, setting), axis=-1)


def stage_two_lower_bound(omega, mu, setting: Setting) -> np.ndarray:
    """The Stage II lower bound (4.5) on Ltilde at a sign-matched point (reference §HE-S2):

        Ltilde >= 1 + sigma2 - 2p + (1 + kappa) p^2 + c ||mu||_1^2 (sinh x - x),
        p = mu^T omega,  x = d p^2 / ||mu||_1^2,

    the series of (4.1) with the (1^T mu)^2 and even-order terms dropped and Jensen's
    inequality sum_h |mu_h| |omega_h|^k >= ||mu||_1 (p / ||mu||_1)^k on each odd order k >= 3
    (whose sum is the sinh). It holds where every head is sign-matched (sign mu_h = sign
    omega_h, or mu_h = 0), with equality exactly on zero-sum OV weights and homogeneous KQ
    scales (|omega_h| equal over the heads with mu_h != 0): on S_omega (4.7).

    >>> s = Setting(d=5, L=40, sigma2=0.1)
    >>> round(float(stage_two_lower_bound([0.1, -0.1], [4.3954, -4.3954], s)), 5)  # on S_omega
    0.22092
    >>> bool(stage_two_lower_bound([0.1, 0.3], [1.0, 2.0], s) < approximate_loss([0.1, 0.3],
    ...      [1.0, 2.0], s))  # neither zero-sum nor homogeneous: strictly below
    True
    """
    omega, mu = _as_heads(omega, mu)
    p = np.sum(mu * omega, axis=-1)
    l1 = np.sum(np.abs(mu), axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        x = np.where(l1 > 0, setting.d * p * p / np.where(l1 > 0, l1 * l1, 1.0), 0.0)
    # sinh x - x summed from its series where x is small (no cancellation), else directly
    series = x**3 / 6 * (1 + x * x / 20 * (1 + x * x / 42 * (1 + x * x / 72)))
    odd_tail = np.where(x < 1e-2, series, np.sinh(x) - x)
    return (
        1.0 + setting.sigma2 - 2.0 * p + (1.0 + setting.kappa) * p * p
        + setting.c * l1 * l1 * odd_tail
    )  # fmt: skip
