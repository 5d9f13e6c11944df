"""Algorithm 1's correlations on many prompts: what Lemmas D.1 and D.2 of Chen, Zhao, Zou (2024)
are about (reference `chen2024.md` §4.1); the sample covariance's error that Lemma D.3 bounds
(`covariance_errors`); and the noise's correlations ``X^T eps / n`` that Lemma F.1 bounds from
below (`noise_correlation_norms`).

`sample_correlations` draws sparse prompts in chunks (so many repetitions at large n fit in
memory) and keeps, per prompt, the estimate ``r_hat = X^T y / n`` (Algorithm 1) and the
population value ``r = Sigma w*`` (numpy). Its two read-outs are the lemmas' events:

- `CorrelationDraws.sup_error`: ``||R_hat - R||_2 = max_j |r_hat_j - r_j|`` (R diagonal, D.1);
- `CorrelationDraws.support_lost`: how many i in S have ``|r_hat_i| < |r_i| / 2``, and
  `CorrelationDraws.support_kept`: none (D.2).

Nothing here imports `theory`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from icl_verify.numerics._core.data import sample_sparse_regression
from icl_verify.numerics._core.estimators import feature_label_correlations

from icl_verify.settings import SparseSetting

__all__ = [
    "CorrelationDraws",
    "covariance_errors",
    "noise_correlation_norms",
    "sample_correlations",
]


@dataclass(frozen=True)
class CorrelationDraws:
    """Per prompt: Algorithm 1's ``r_hat``, the population ``r = Sigma w*``, and w*; (N, d) each
    (float64)."""

    r_hat: np.ndarray
    r: np.ndarray
    w_star: np.ndarray

    @property
    def sup_error(self) -> np.ndarray:
        """``max_j |r_hat_j - r_j|``, the spectral norm of the diagonal R_hat - R; (N,)."""
        return np.abs(self.r_hat - self.r).max(axis=-1)

    @property
    def support_lost(self) -> np.ndarray:
        """How many i in the support of w* have ``|r_hat_i| < |r_i| / 2``; (N,) int."""
        lost = np.abs(self.r_hat) < np.abs(self.r) / 2
        return (lost & (self.w_star != 0)).sum(axis=-1)

    @property
    def support_kept(self) -> np.ndarray:
        """Whether ``|r_hat_i| >= |r_i| / 2`` for every i in the support of w*; (N,) bool."""
        return self.support_lost == 0


def sample_correlations(
    reps: int,
    setting: SparseSetting,
    n: int,
    *,
    seed: int,
    covariance=None,
    signal: str = "sign",
    chunk_elements: int = 2**22,
) -> CorrelationDraws:
    """``r_hat = X^T y / n`` and ``r = Sigma w*`` on `reps` independent prompts of
    `sample_sparse_regression` of ``setting`` with ``n`` examples (float64, on the CPU), drawn
    from ``seed``.

    Prompts are drawn in chunks of about `chunk_elements` covariate entries, all from one
    generator. ``covariance`` (d, d), array-like, as in the sampler (identity when None).

    >>> from icl_verify.settings import SparseSetting
    >>> draws = sample_correlations(50, SparseSetting(d=8, s=2, sigma=0.1), 4000, seed=0)
    >>> draws.r_hat.shape, bool(draws.sup_error.max() < 0.1), bool(draws.support_kept.all())
    ((50, 8), True, True)
    """
    generator = torch.Generator().manual_seed(int(seed))
    if covariance is not None:
        covariance = torch.as_tensor(covariance, dtype=torch.float64)  # (d, d)
    per_chunk = max(1, chunk_elements // (n * setting.d))
    parts = []
    for start in range(0, reps, per_chunk):
        size = min(per_chunk, reps - start)
        prompts = sample_sparse_regression(
            size,
            setting,
            n,
            generator=generator,
            signal=signal,
            dtype=torch.float64,
            covariance=covariance,
        )
        population = prompts.w_star if covariance is None else prompts.w_star @ covariance.T
        parts.append(
            (feature_label_correlations(prompts.X, prompts.y), population, prompts.w_star)
        )  # (size, d) each
    r_hat, r, w_star = (torch.cat(column).numpy() for column in zip(*parts, strict=True))
    return CorrelationDraws(r_hat=r_hat, r=r, w_star=w_star)


def covariance_errors(
    reps: int, n: int, spectrum, *, seed: int, chunk_elements: int = 2**22
) -> np.ndarray:
    """``||Sigma_hat - Sigma||_2`` with ``Sigma_hat = X^T X / n`` on `reps` independent draws
    (float64, on the CPU, from ``seed``): X (n, d) with N(0, Sigma) rows, Sigma diagonal with
    the eigenvalues ``spectrum`` (d,), what Lemma D.3 of Chen et al. (2024) bounds (Bartlett et
    al. 2020, Thm 9). Drawn in chunks of about `chunk_elements` entries of X; returns (reps,).

    >>> errors = covariance_errors(200, n=4000, spectrum=[1.0, 0.5], seed=0)
    >>> errors.shape, bool(errors.mean() < 0.05)
    ((200,), True)
    """
    generator = torch.Generator().manual_seed(int(seed))
    scale = torch.as_tensor(spectrum, dtype=torch.float64)  # (d,)
    d = scale.numel()
    per_chunk = max(1, chunk_elements // (n * d))
    parts = []
    for start in range(0, reps, per_chunk):
        size = min(per_chunk, reps - start)
        X = torch.randn(size, n, d, generator=generator, dtype=torch.float64) * scale.sqrt()
        gap = X.transpose(1, 2) @ X / n - torch.diag(scale)  # (size, d, d), symmetric
        parts.append(torch.linalg.eigvalsh(gap).abs().amax(dim=-1))  # (size,): spectral norm
    return torch.cat(parts).numpy()


def noise_correlation_norms(
    reps: int, n: int, d: int, sigma: float, *, seed: int, chunk_elements: int = 2**22
) -> np.ndarray:
    """``||X^T eps / n||^2`` on `reps` independent draws (float64, on the CPU, from ``seed``):
    X (n, d) with N(0, I_d) rows and eps ~ N(0, sigma^2 I_n), the noise alone of a prompt of
    Theorem 5.3's isotropic setting (Lemma F.1 of Chen et al. 2024, App. F). Drawn in chunks of
    about `chunk_elements` entries of X, all from one generator; returns (reps,).

    >>> norms = noise_correlation_norms(4000, n=50, d=8, sigma=0.5, seed=0)
    >>> norms.shape, bool(abs(norms.mean() / (0.25 * 8 / 50) - 1) < 0.05)
    ((4000,), True)
    """
    generator = torch.Generator().manual_seed(int(seed))
    per_chunk = max(1, chunk_elements // (n * d))
    parts = []
    for start in range(0, reps, per_chunk):
        size = min(per_chunk, reps - start)
        X = torch.randn(size, n, d, generator=generator, dtype=torch.float64)  # (size, n, d)
        eps = sigma * torch.randn(size, n, generator=generator, dtype=torch.float64)  # (size, n)
        correlations = feature_label_correlations(X, eps)  # (size, d): X^T eps / n
        parts.append((correlations**2).sum(dim=-1))  # (size,)
    return torch.cat(parts).numpy()
