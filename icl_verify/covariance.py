"""Covariate covariances shared by every layer: the KMS matrix of He et al. (2025) §5.3 and the
equicorrelated matrix of Chen et al. (2024) App. G.

The non-isotropic experiment of He et al. draws ``x ~ N(0, Sigma)`` with the
Kac-Murdock-Szegő matrix ``Sigma_ij = rho^|i-j|`` (reference §HE-5.3-KMS; the authors'
``generate_covariance_matrix``, default rho = 0.5). This module is its one definition:
`theory._preconditioning` computes with it in float64 numpy, `numerics.kms_covariance`
wraps it in torch for the samplers. `check_covariance` is the one validation of a covariance
argument. Chen et al.'s correlated design (reference chen2024 §2.7) draws
``x ~ N(0, I + zeta 11^T)`` (`equicorrelated_covariance`). Plain numpy, so every layer may
import it.
"""

from __future__ import annotations

import numbers

import numpy as np

__all__ = [
    "check_covariance",
    "check_rho",
    "check_zeta",
    "equicorrelated_covariance",
    "kms_covariance",
]


def check_rho(rho: object) -> float:
    """``rho`` as a float, or a one-line ValueError unless it is a real number in (-1, 1).

    >>> check_rho(0.5)
    0.5
    >>> check_rho(1)
    Traceback (most recent call last):
    ...
    ValueError: rho must be a real number in (-1, 1), got 1
    """
    if isinstance(rho, bool) or not isinstance(rho, numbers.Real) or not -1 < float(rho) < 1:
        raise ValueError(f"rho must be a real number in (-1, 1), got {rho!r}")
    return float(rho)


def kms_covariance(d: int, rho: float) -> np.ndarray:
    """Kac-Murdock-Szegő covariance ``Sigma_ij = rho^|i-j|``, shape (d, d), float64 (§HE-5.3).

    Positive definite exactly when ``-1 < rho < 1``.

    >>> kms_covariance(3, 0.5)
    array([[1.  , 0.5 , 0.25],
           [0.5 , 1.  , 0.5 ],
           [0.25, 0.5 , 1.  ]])
    """
    if isinstance(d, bool) or not isinstance(d, numbers.Integral) or d < 1:
        raise ValueError(f"d must be an integer >= 1, got {d!r}")
    rho = check_rho(rho)
    index = np.arange(int(d))
    distance = np.abs(index[:, None] - index[None, :])  # (d, d)
    return np.power(rho, distance, dtype=np.float64)


def check_zeta(zeta: object) -> float:
    """``zeta`` as a float, or a one-line ValueError unless it is a finite real number >= 0 (the
    paper's grid {0, 0.1, 0.2, 0.4}; I + zeta 11^T is positive definite for every zeta >= 0).

    >>> check_zeta(0.4)
    0.4
    >>> check_zeta(-0.1)
    Traceback (most recent call last):
    ...
    ValueError: zeta must be a finite real number >= 0, got -0.1
    """
    if (
        isinstance(zeta, bool)
        or not isinstance(zeta, numbers.Real)
        or not np.isfinite(float(zeta))
        or float(zeta) < 0
    ):
        raise ValueError(f"zeta must be a finite real number >= 0, got {zeta!r}")
    return float(zeta)


def equicorrelated_covariance(d: int, zeta: float) -> np.ndarray:
    """``Sigma = I + zeta 11^T`` of Chen et al. (2024) App. G (Figure 11), shape (d, d), float64:
    unit-plus-zeta variances, covariance zeta between any two coordinates; not diagonal, so it
    lies outside their theory's assumption (reference chen2024 §2.7).

    >>> equicorrelated_covariance(2, 0.5)
    array([[1.5, 0.5],
           [0.5, 1.5]])
    """
    if isinstance(d, bool) or not isinstance(d, numbers.Integral) or d < 1:
        raise ValueError(f"d must be an integer >= 1, got {d!r}")
    return np.eye(int(d)) + check_zeta(zeta) * np.ones((int(d), int(d)))


def check_covariance(matrix, name: str = "covariance") -> np.ndarray:
    """``matrix`` as a float64 array, or a one-line ValueError unless it is a finite, symmetric,
    positive definite square matrix (symmetric to 1e-12 relative to its largest entry).

    >>> check_covariance([[2.0, 0.5], [0.5, 1.0]]).shape
    (2, 2)
    >>> check_covariance([[1.0, 2.0], [2.0, 1.0]], name="Sigma")
    Traceback (most recent call last):
    ...
    ValueError: Sigma must be a symmetric positive definite matrix, got one with eigenvalue -1
    """
    try:
        array = np.asarray(matrix, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(
            f"{name} must be a square matrix of real numbers, got {matrix!r}"
        ) from None
    if array.ndim != 2 or array.shape[0] != array.shape[1] or array.shape[0] == 0:
        raise ValueError(f"{name} must be a non-empty square matrix, got shape {array.shape}")
    if not np.isfinite(array).all():
        raise ValueError(f"{name} must be finite, got a matrix with inf or NaN entries")
    scale = np.abs(array).max()
    if np.abs(array - array.T).max() > 1e-12 * scale:
        raise ValueError(f"{name} must be symmetric, got one with |S - S^T| up to "
                         f"{np.abs(array - array.T).max():.3g}")  # fmt: skip
    smallest = np.linalg.eigvalsh(array).min()
    if not smallest > 0:
        raise ValueError(
            f"{name} must be a symmetric positive definite matrix, got one with eigenvalue "
            f"{smallest:.3g}"
        )
    return array
