"""Softmax attention emulating linear attention with twice the heads (He et al. 2025 §5.1, (5.2)).

For a linear-attention head (KQ, OV) of (5.1), the pair of softmax heads (eps KQ, OV / (2 eps))
and (-eps KQ, -OV / (2 eps)) computes, as eps -> 0, the linear head minus a centring term
(reference §HE-5.1-SM2LIN): with scores v_i = z_i^T KQ z_q over the L context tokens,
``softmax(eps v)_i - softmax(-eps v)_i = (2 eps / L) (v_i - vbar) + O(eps^3)``, so

    pair(eps) = (1/L) OV sum_i z_i z_i^T KQ z_q  -  OV zbar zbar^T KQ z_q  +  O(eps^2).

`softmax_pair_gaps` measures pair(eps) minus the linear head on given prompts, both built as
`numerics.MultiHeadAttention` models from their circuits (float64), so what is measured is
the toolkit's own attention, not a formula for it. `pair_gap_expansion` reads the expansion off
those gaps: the eps -> 0 limit and the eps^2 coefficient by Richardson extrapolation
(`icl_verify.statistics.richardson`) and the order of the residual by a log-log slope;
`pair_roundoff_bounds` bounds what float64 rounding can do to the two extrapolated values.
Nothing here imports `theory`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch
from icl_verify.numerics._core.models import MultiHeadAttention

from icl_verify.statistics import loglog_slope, richardson

__all__ = ["PairExpansion", "pair_gap_expansion", "pair_roundoff_bounds", "softmax_pair_gaps"]


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


@dataclass(frozen=True, eq=False)
class PairExpansion:
    """The expansion ``gap(eps) = limit + eps^2 next_term + O(eps^4)`` read off measured gaps.

    Attributes:
        limit, limit_bound: (B, D) the eps -> 0 limit of the gap (Richardson) and its error
            bound (distance to the extrapolation from the next pair of eps).
        next_term, next_bound: (B, D) the eps -> 0 limit of ``(gap - limit) / eps^2`` and its
            error bound, the same way.
        residual: (n_eps,) ``max |gap(eps) - limit|`` over prompts and output entries.
        gap: (n_eps,) ``max |gap(eps)|``.
        slope, slope_se: least-squares slope of log residual on log eps and its SE from the
            fit's residuals (`icl_verify.statistics.loglog_slope`): 2 for an O(eps^2) remainder.
    """

    limit: np.ndarray
    limit_bound: np.ndarray
    next_term: np.ndarray
    next_bound: np.ndarray
    residual: np.ndarray
    gap: np.ndarray
    slope: float
    slope_se: float


def pair_gap_expansion(KQ, OV, Z, eps: Sequence[float]) -> PairExpansion:
    """The measured expansion in eps of the pair's gap to the linear head (5.2).

    ``gap = softmax_pair_gaps(KQ, OV, Z, eps)``, (n_eps, B, D); its eps -> 0 limit is
    ``richardson(gap, eps)`` (from the two smallest eps, with the distance to the next pair's
    extrapolation as the bound), the residual ``gap - limit`` gives the order (log-log slope of
    its largest entry against eps) and ``richardson(residual / eps^2, eps)`` the eps^2
    coefficient. Nothing here uses the centring term the limit is compared with.

    Args:
        KQ, OV: (D, D) circuits of the linear head; Z: (B, D, L+1) prompts (see
            `softmax_pair_gaps`).
        eps: 1-D, decreasing, at least 3 values (the slope fit needs 3 points).

    >>> rng = np.random.default_rng(0)
    >>> KQ, OV = rng.standard_normal((2, 3, 3)) / 3
    >>> Z = rng.standard_normal((4, 3, 11))
    >>> expansion = pair_gap_expansion(KQ, OV, Z, np.geomspace(1e-2, 1e-3, 4))
    >>> zbar = Z[..., :-1].mean(-1)  # (B, D)
    >>> centring = np.einsum("ij,bj,bk,kl,bl->bi", OV, zbar, zbar, KQ, Z[..., -1])
    >>> bool(np.abs(expansion.limit + centring).max() < 1e-9), round(expansion.slope, 2)
    (True, 2.0)
    """
    eps = np.asarray(eps, dtype=np.float64)
    gap = softmax_pair_gaps(KQ, OV, Z, eps)  # (n_eps, B, D)
    limit, limit_bound = richardson(gap, eps)
    residual = gap - limit  # (n_eps, B, D)
    curve = np.abs(residual).reshape(eps.size, -1).max(axis=1)  # (n_eps,)
    fit = loglog_slope(eps, curve)
    next_term, next_bound = richardson(residual / eps[:, None, None] ** 2, eps)
    return PairExpansion(
        limit=limit,
        limit_bound=limit_bound,
        next_term=next_term,
        next_bound=next_bound,
        residual=curve,
        gap=np.abs(gap).reshape(eps.size, -1).max(axis=1),
        slope=fit.slope,
        slope_se=fit.slope_se,
    )


def pair_roundoff_bounds(
    OV, prompts: Sequence[np.ndarray], eps: Sequence[float]
) -> tuple[float, float]:
    """Float64 roundoff bounds of the extrapolated limit and next term of `pair_gap_expansion`.

    Each head of the pair outputs at most ``||OV||_2 max_i ||z_i|| / (2 eps)``, a weighted sum
    over L tokens of D-vectors: its forward error is at most ``(L + D) u`` of that (u the unit
    roundoff), so a gap (two heads and the linear head, whose output is eps times smaller) is off
    by at most ``delta(eps) = (L + D) u ||OV||_2 max ||z|| / eps``. Richardson's extrapolation
    from (eps1, eps2) multiplies errors by ``(eps2^2 a1 + eps1^2 a2) / (eps2^2 - eps1^2)``; the
    next term divides the residual (gap minus the extrapolated limit) by eps^2 before
    extrapolating again.

    Args:
        OV: (D, D) circuit of the linear head.
        prompts: prompt sets Z of shape (B, D, L+1), all of one L; max ||z|| is over all of them.
        eps: 1-D, decreasing (the two smallest last).

    Returns (limit bound, next-term bound).

    >>> OV = np.eye(2); Z = np.ones((1, 2, 11))  # ||z|| = sqrt(2), L = 10
    >>> limit, next_term = pair_roundoff_bounds(OV, [Z], [1e-2, 1e-3])
    >>> float(f"{limit:.3g}"), float(f"{next_term:.3g}")  # 12 u sqrt(2) / eps, extrapolated
    (3.81e-12, 7.66e-06)
    """
    OV = np.asarray(OV, dtype=np.float64)
    D, L = OV.shape[0], prompts[0].shape[-1] - 1
    z_max = max(np.linalg.norm(Z, axis=1).max() for Z in prompts)
    eps = np.asarray(eps, dtype=np.float64)
    delta = (L + D) * np.finfo(float).eps * np.linalg.norm(OV, 2) * z_max / eps  # (n_eps,)
    small, large = eps[-1] ** 2, eps[-2] ** 2

    def extrapolated(a1: float, a2: float) -> float:
        return (large * a1 + small * a2) / (large - small)

    limit = extrapolated(delta[-1], delta[-2])
    next_term = extrapolated((delta[-1] + limit) / small, (delta[-2] + limit) / large)
    return float(limit), float(next_term)
