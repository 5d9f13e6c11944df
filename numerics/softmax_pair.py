"""Softmax attention emulating linear attention with twice the heads (He et al. 2025 §5.1, (5.2)).

For a linear-attention head (KQ, OV) of (5.1), the pair of softmax heads (eps KQ, OV / (2 eps))
and (-eps KQ, -OV / (2 eps)) computes, as eps -> 0, the linear head minus a centring term
(reference §HE-5.1-SM2LIN): with scores v_i = z_i^T KQ z_q over the L context tokens,
``softmax(eps v)_i - softmax(-eps v)_i = (2 eps / L) (v_i - vbar) + O(eps^3)``, so

    pair(eps) = (1/L) OV sum_i z_i z_i^T KQ z_q  -  OV zbar zbar^T KQ z_q  +  O(eps^2).

`softmax_pair_gaps` measures pair(eps) minus the linear head on given prompts, both built as
`numerics.models.MultiHeadAttention` models from their circuits (float64), so what is measured is
the toolkit's own attention, not a formula for it. Nothing here imports `theory`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch
from icl_verify.numerics.models import MultiHeadAttention

__all__ = ["softmax_pair_gaps"]


def softmax_pair_gaps(KQ, OV, Z, eps: Sequence[float]) -> np.ndarray:
    """Query-column output of the softmax pair (5.2) minus that of the linear head (5.1).

    Both models attend from the query (the last column of Z) to the L context tokens (the strict
    causal mask of `MultiHeadAttention.forward_sequence` at the last column); the linear head's
    weights are its scores times 1/L, L the number of context tokens. The residual Z cancels.

    Args:
        KQ, OV: (D, D) circuits of the linear head (``KQ = W_K^T W_Q / sqrt(D)``,
            ``OV = W_O W_V``), D >= 2.
        Z: (B, D, L+1) prompts, context tokens first, the query last, L >= 1.
        eps: 1-D sequence of positive finite scales of the pair.

    Returns (len(eps), B, D) float64: ``pair(eps)[query] - linear[query]``, which tends to
    ``-OV zbar zbar^T KQ z_q`` (zbar the mean context token) with an O(eps^2) error.

    >>> rng = np.random.default_rng(0)
    >>> KQ, OV = rng.standard_normal((2, 3, 3)) / 3
    >>> Z = rng.standard_normal((4, 3, 11))
    >>> gaps = softmax_pair_gaps(KQ, OV, Z, [1e-2, 1e-3])
    >>> gaps.shape
    (2, 4, 3)
    >>> zbar = Z[..., :-1].mean(-1)  # (B, D)
    >>> centring = np.einsum("ij,bj,bk,kl,bl->bi", OV, zbar, zbar, KQ, Z[..., -1])
    >>> bool(np.abs(gaps[1] + centring).max() < 1e-5)  # O(eps^2) at eps = 1e-3
    True
    """
    KQ, OV, Z = (np.asarray(a, dtype=np.float64) for a in (KQ, OV, Z))
    if KQ.ndim != 2 or KQ.shape[0] != KQ.shape[1] or KQ.shape[0] < 2 or OV.shape != KQ.shape:
        raise ValueError(
            f"KQ and OV must both have shape (D, D) with D >= 2, got {KQ.shape} and {OV.shape}"
        )
    D = KQ.shape[0]
    if Z.ndim != 3 or Z.shape[1] != D or Z.shape[2] < 2:
        raise ValueError(f"Z must have shape (B, {D}, L+1) with L >= 1, got {Z.shape}")
    scales = np.asarray(eps, dtype=np.float64)
    if scales.ndim != 1 or scales.size == 0 or not np.all(np.isfinite(scales) & (scales > 0)):
        raise ValueError(f"eps must be a 1-D sequence of finite numbers > 0, got {eps!r}")
    L = Z.shape[2] - 1
    prompts = torch.from_numpy(Z)[None]  # (1, B, D, L+1): a one-member ensemble
    linear = MultiHeadAttention.from_circuits(KQ[None, None], OV[None, None], "linear", L)
    with torch.no_grad():
        reference = linear.forward_sequence(prompts)[0, ..., -1]  # (B, D)
        gaps = []
        for scale in scales:
            pair_KQ = np.stack([scale * KQ, -scale * KQ])[None]  # (1, 2, D, D)
            pair_OV = np.stack([OV / (2 * scale), -OV / (2 * scale)])[None]  # (1, 2, D, D)
            pair = MultiHeadAttention.from_circuits(pair_KQ, pair_OV, "softmax")
            gaps.append(pair.forward_sequence(prompts)[0, ..., -1] - reference)  # (B, D)
    return torch.stack(gaps).numpy()  # (len(eps), B, D)
