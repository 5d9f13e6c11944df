"""Monte Carlo samples of L ||softmax(omega X^T x_q)||^2, He et al. (2025) App. C (Figure 20).

The quantity the appendix histograms (the authors' `plot_norm_2histogram(L, d, n, scale)` draws
||p||^2 with scores `scale * x_i^T x_q`): x_1..x_L, x_q ~ N(0, I_d), p = softmax(omega s).
Sampled in float64, chunk by chunk (each chunk from its own generator, so the samples do not
depend on the chunk size of the machine): `softmax_norm_samples`. `softmax_norm_sweep`
summarises the samples at the points of one sweep (mean with its SE, quantiles, a log-binned
histogram), what claim HE-C-SOFTMAXNORM compares and draws. `tilted_moment_estimates`: the
Monte Carlo moments of one example under its unnormalised attention weight e^{omega s} (what
Stein's lemma gives in closed form; claim HE-C-STEIN). Nothing here imports `theory`.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import torch
from icl_verify.numerics._core.montecarlo import _block_generator, _check_int

from icl_verify.statistics import mean_se

__all__ = [
    "SoftmaxNormSweep",
    "TiltedMomentEstimates",
    "softmax_norm_samples",
    "softmax_norm_sweep",
    "tilted_moment_estimates",
]

CHUNK_ELEMENTS = 2**22  # covariates (n_chunk * L * d) drawn at once


def softmax_norm_samples(
    omega: float, d: int, L: int, n: int, seed: int, device=None
) -> torch.Tensor:
    """n independent samples of L ||p||^2, p = softmax(omega X^T x_q), float64, shape (n,).

    Args:
        omega: score scale (a finite real number).
        d, L: covariate dimension and number of keys (integers >= 1).
        n: number of samples (integer >= 1); seed: integer >= 0; device: torch device.

    >>> x = softmax_norm_samples(0.0, 5, 40, 3, seed=0)
    >>> [round(v, 12) for v in x.tolist()]  # uniform weights: L ||p||^2 = 1
    [1.0, 1.0, 1.0]
    >>> softmax_norm_samples(0.2, 5, 40, 0, seed=0)
    Traceback (most recent call last):
    ...
    ValueError: n must be an integer >= 1, got 0
    """
    if (
        isinstance(omega, bool)
        or not isinstance(omega, numbers.Real)
        or not math.isfinite(float(omega))
    ):
        raise ValueError(f"omega must be a finite real number, got {omega!r}")
    d, L, n = (_check_int(name, v, 1) for name, v in (("d", d), ("L", L), ("n", n)))
    seed = _check_int("seed", seed, 0)
    device = torch.device("cpu" if device is None else device)
    chunk = max(1, CHUNK_ELEMENTS // (L * d))
    out = torch.empty(n, dtype=torch.float64, device=device)  # (n,)
    for index, start in enumerate(range(0, n, chunk)):
        size = min(chunk, n - start)
        generator = _block_generator(seed, index, device)
        keys = torch.randn(size, L, d, generator=generator, dtype=torch.float64, device=device)
        query = torch.randn(size, d, 1, generator=generator, dtype=torch.float64, device=device)
        p = torch.softmax(float(omega) * (keys @ query).squeeze(-1), dim=-1)  # (size, L)
        out[start : start + size] = L * (p * p).sum(-1)
    return out


@dataclass(frozen=True, eq=False)
class SoftmaxNormSweep:
    """Summaries of n samples of L ||p||^2 at each of P points (L_k, d_k, omega_k) of a sweep.

    Attributes:
        mean, se: (P,) the sample mean at each point and its standard error (`mean_se`).
        quantiles: (P, Q) the requested quantiles at each point.
        edges: (B + 1,) histogram edges, log-spaced from 1 (L ||p||^2 >= 1, Cauchy-Schwarz) to
            the largest 0.995 quantile over the points, shared by all points.
        density: (P, B) the histogram as a density: counts / (n * bin width); samples beyond the
            last edge are not counted, so a row integrates to the fraction inside the edges.
    """

    mean: np.ndarray
    se: np.ndarray
    quantiles: np.ndarray
    edges: np.ndarray
    density: np.ndarray


def softmax_norm_sweep(
    L, d, omega, n: int, *, seeds: Iterable[int], bins: int, quantiles=(0.05, 0.5, 0.95),
    device=None,
) -> SoftmaxNormSweep:  # fmt: skip
    """`softmax_norm_samples` at every point (L[k], d[k], omega[k]) of a sweep, summarised.

    Point k draws its n samples from ``seeds[k]`` (one seed per point: independent points).
    Args: L, d (integers) and omega, each shape (P,); n >= 2 samples per point; bins >= 1;
    quantiles: Q levels in [0, 1]; device: torch device of the sampling.

    >>> sweep = softmax_norm_sweep([40, 40], [5, 5], [0.0, 0.2], 1000, seeds=[0, 1], bins=10)
    >>> round(float(sweep.mean[0]), 12), sweep.quantiles.shape, sweep.density.shape
    (1.0, (2, 3), (2, 10))
    >>> bool(0.99 <= (sweep.density[1] * np.diff(sweep.edges)).sum() <= 1.0)  # inside the edges
    True
    """
    points = zip(L, d, omega, seeds, strict=True)
    samples = np.stack([
        softmax_norm_samples(float(w), int(k), int(n_keys), n, seed, device).cpu().numpy()
        for n_keys, k, w, seed in points
    ])  # (P, n)  # fmt: skip
    mean, se = mean_se(samples, axis=1)
    top = float(np.quantile(samples, 0.995, axis=1).max())
    edges = np.geomspace(1.0, top, bins + 1)  # (B + 1,)
    counts = np.stack([np.histogram(row, edges)[0] for row in samples])  # (P, B)
    return SoftmaxNormSweep(
        mean=mean,
        se=se,
        quantiles=np.quantile(samples, quantiles, axis=1).T,  # (P, Q)
        edges=edges,
        density=counts / (n * np.diff(edges)),
    )


@dataclass(frozen=True, eq=False)
class TiltedMomentEstimates:
    """Monte Carlo means over examples (x, y) of e^{omega s}, y e^{omega s} and y^2 e^{omega s}
    (s = x^T x_q), each (K,) for K configurations, with their standard errors."""

    weight: np.ndarray
    weight_se: np.ndarray
    label: np.ndarray
    label_se: np.ndarray
    square: np.ndarray
    square_se: np.ndarray


def tilted_moment_estimates(
    omega, x_query, beta, sigma2: float, n: int, seed: int, device=None
) -> TiltedMomentEstimates:
    """Sample means of e^{omega s}, y e^{omega s}, y^2 e^{omega s} over n examples x ~ N(0, I_d),
    y = beta^T x + eps, eps ~ N(0, sigma2), per configuration k (omega (K,), x_query and beta
    (K, d)), float64, chunk by chunk (each chunk from its own generator).

    >>> m = tilted_moment_estimates([0.0], [[1.0, 0.0]], [[1.0, 0.0]], 0.0, 20000, seed=0)
    >>> float(m.weight[0]), abs(float(m.label[0])) < 4 * float(m.label_se[0])  # E[y] = 0
    (1.0, True)
    """
    omega = torch.as_tensor(np.asarray(omega, dtype=float))  # (K,)
    x_query = torch.as_tensor(np.asarray(x_query, dtype=float))  # (K, d)
    beta = torch.as_tensor(np.asarray(beta, dtype=float))  # (K, d)
    n, seed = _check_int("n", n, 2), _check_int("seed", seed, 0)
    if not math.isfinite(float(sigma2)) or sigma2 < 0:
        raise ValueError(f"sigma2 must be a finite number >= 0, got {sigma2!r}")
    device = torch.device("cpu" if device is None else device)
    omega, x_query, beta = (t.to(device) for t in (omega, x_query, beta))
    K, d = x_query.shape
    chunk = max(1, CHUNK_ELEMENTS // (K * d))
    sums = torch.zeros(3, K, dtype=torch.float64, device=device)  # sum of each moment
    squares = torch.zeros(3, K, dtype=torch.float64, device=device)  # sum of its square
    for index, start in enumerate(range(0, n, chunk)):
        size = min(chunk, n - start)
        generator = _block_generator(seed, index, device)
        x = torch.randn(size, K, d, generator=generator, dtype=torch.float64, device=device)
        noise = torch.randn(size, K, generator=generator, dtype=torch.float64, device=device)
        y = (x * beta).sum(-1) + math.sqrt(sigma2) * noise  # (size, K)
        weight = torch.exp(omega * (x * x_query).sum(-1))  # (size, K)
        values = torch.stack([weight, y * weight, y * y * weight])  # (3, size, K)
        sums += values.sum(1)
        squares += (values * values).sum(1)
    mean = sums / n
    se = ((squares / n - mean * mean).clamp(min=0) / (n - 1)).sqrt()
    mean, se = mean.cpu().numpy(), se.cpu().numpy()
    return TiltedMomentEstimates(mean[0], se[0], mean[1], se[1], mean[2], se[2])
