"""Monte Carlo samples of L ||softmax(omega X^T x_q)||^2, He et al. (2025) App. C (Figure 20).

The quantity the appendix histograms (the authors' `plot_norm_2histogram(L, d, n, scale)` draws
||p||^2 with scores `scale * x_i^T x_q`): x_1..x_L, x_q ~ N(0, I_d), p = softmax(omega s).
Sampled in float64, chunk by chunk (each chunk from its own generator, so the samples do not
depend on the chunk size of the machine). Nothing here imports `theory`.
"""

from __future__ import annotations

import math
import numbers

import torch
from icl_verify.numerics.montecarlo import _block_generator, _check_int

__all__ = ["softmax_norm_samples"]

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
