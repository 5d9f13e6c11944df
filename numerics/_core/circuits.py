"""KQ and OV circuits of trained attention heads, and measures of the patterns He et al. found.

He, Pan, Chen, Yang (ICML 2025) Section 3 (reference §HE-2.4, §HE-OBS1, §HE-OBS2): after training,
each head has ``KQ11_h = omega_h I_d``, ``kq21_h = 0``, ``ov21_h = 0``, ``ov22_h = mu_h``; the
non-dummy heads share ``|omega_h|`` (homogeneous KQ scaling), have ``sign(omega_h) = sign(mu_h)``
(sign matching), and ``sum_h mu_h ~ 0`` (zero-sum OV). The blocks, for D = d + 1:

    KQ_h = [[KQ11_h (d x d), *], [kq21_h^T, *]]       OV_h = [[*, *], [ov21_h^T, ov22_h]]

with ``KQ_h = W_K^h^T W_Q^h / sqrt(D)`` (the effective score matrix, reference §0.4) and
``OV_h = W_O^h W_V^h``. Everything takes the ensemble layout (E, H, D, D).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from icl_verify.heads import DUMMY, head_types

__all__ = [
    "CircuitSummary",
    "kq_circuit",
    "ov_circuit",
    "omega_mu",
    "summarize_circuits",
]


def kq_circuit(W_K: torch.Tensor, W_Q: torch.Tensor) -> torch.Tensor:
    """``KQ_h = W_K^h^T W_Q^h / sqrt(D)``: score matrix of (2.2), (..., D, D) each -> (..., D, D).

    >>> kq_circuit(torch.eye(4), 2 * torch.eye(4))[0, 0]
    tensor(1.)
    """
    return W_K.mT @ W_Q / math.sqrt(W_Q.shape[-1])


def ov_circuit(W_O: torch.Tensor, W_V: torch.Tensor) -> torch.Tensor:
    """``OV_h = W_O^h W_V^h`` (W_O applied after W_V), (..., D, D) each -> (..., D, D).

    >>> ov_circuit(torch.tensor([[0.0, 1.0], [0.0, 0.0]]), torch.tensor([[0.0, 0.0], [1.0, 0.0]]))
    tensor([[1., 0.],
            [0., 0.]])
    """
    return W_O @ W_V


def omega_mu(KQ: torch.Tensor, OV: torch.Tensor, d: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Effective head scales (3.1): ``omega_h = mean diag(KQ11_h)``, ``mu_h = ov22_h``.

    KQ, OV: (..., H, D, D) with D = d + 1 -> omega, mu of shape (..., H).

    >>> KQ = torch.diag(torch.tensor([0.2, 0.4, 9.0]))[None]
    >>> OV = torch.zeros(1, 3, 3); OV[0, 2, 2] = 3.0
    >>> omega_mu(KQ, OV, d=2)
    (tensor([0.3000]), tensor([3.]))
    """
    omega = KQ[..., :d, :d].diagonal(dim1=-2, dim2=-1).mean(dim=-1)
    return omega, OV[..., -1, -1]


@dataclass(frozen=True)
class CircuitSummary:
    """Pattern measures of one member's H active heads (arrays have shape (H,)).

    Attributes:
        omega, mu: effective scales, `omega_mu`.
        diagonality: ``||diag KQ11||^2 / ||KQ11||_F^2`` (1 = diagonal KQ11; the authors'
            ``avg_diag_norm_ratio``, 0.999 for their trained H = 2 model).
        diagonal_spread: ``std(diag KQ11) / |mean diag KQ11|`` (0 = ``omega_h I``).
        kq_off_pattern: RMS of the off-pattern KQ entries (off-diagonal KQ11 and kq21) over the
            RMS of the diagonal of KQ11.
        ov_off_pattern: RMS of ov21 over ``|ov22|``.
        dummy: ``|omega_h mu_h| < DUMMY_THRESHOLD * max_h |omega_h mu_h|``, the one definition
            `icl_verify.heads.head_types` (a dummy head carries under 5% of the largest head's
            share of the GD-like term).
        sign_matching: ``sign(omega_h) == sign(mu_h)`` on every non-dummy head.
        zero_sum_ratio: ``|sum_h mu_h| / sum_h |mu_h|`` over all active heads (0 = zero-sum OV).
        kq_homogeneity: ``max / min |omega_h|`` over non-dummy heads (1 = homogeneous).
    """

    omega: np.ndarray
    mu: np.ndarray
    diagonality: np.ndarray
    diagonal_spread: np.ndarray
    kq_off_pattern: np.ndarray
    ov_off_pattern: np.ndarray
    dummy: np.ndarray
    sign_matching: bool
    zero_sum_ratio: float
    kq_homogeneity: float


def _rms(x: torch.Tensor) -> torch.Tensor:
    return x.pow(2).mean(dim=-1).sqrt()


def summarize_circuits(
    KQ: torch.Tensor, OV: torch.Tensor, d: int, heads: tuple[int, ...] | None = None
) -> tuple[CircuitSummary, ...]:
    """One `CircuitSummary` per ensemble member (single-label models, D = d + 1).

    KQ, OV: (E, H, D, D); ``heads[e]`` is member e's number of active heads (its first heads;
    default all H). Use ``summarize_circuits(model.KQ, model.OV, d, model.config.heads)``.

    >>> KQ = torch.zeros(1, 2, 3, 3); KQ[0, 0, :2, :2] = 0.1 * torch.eye(2)
    >>> KQ[0, 1, :2, :2] = -0.1 * torch.eye(2)
    >>> OV = torch.zeros(1, 2, 3, 3); OV[0, 0, 2, 2] = 3.0; OV[0, 1, 2, 2] = -3.0
    >>> s, = summarize_circuits(KQ, OV, d=2)
    >>> s.sign_matching, s.zero_sum_ratio, s.kq_homogeneity, s.dummy.tolist()
    (True, 0.0, 1.0, [False, False])
    """
    KQ, OV = KQ.detach().double().cpu(), OV.detach().double().cpu()
    heads = heads if heads is not None else (KQ.shape[1],) * KQ.shape[0]
    omega, mu = omega_mu(KQ, OV, d)  # (E, H)
    kq11 = KQ[..., :d, :d]  # (E, H, d, d)
    diagonal = kq11.diagonal(dim1=-2, dim2=-1)  # (E, H, d)
    off_diagonal = (kq11 - torch.diag_embed(diagonal)).flatten(-2)  # (E, H, d*d), zeros on diag
    kq_off = torch.cat([off_diagonal, KQ[..., d, :d]], dim=-1)  # (E, H, d*d + d)
    kq_off_rms = (kq_off.pow(2).sum(dim=-1) / (d * d)).sqrt()  # d*d - d off-diagonal + d in kq21
    summaries = []
    for e, H in enumerate(heads):
        w, m = omega[e, :H], mu[e, :H]
        dummy = torch.from_numpy(head_types(w.numpy(), m.numpy()) == DUMMY)
        live = ~dummy
        live_abs_omega = w[live].abs()
        summaries.append(
            CircuitSummary(
                omega=w.numpy(),
                mu=m.numpy(),
                diagonality=(
                    diagonal[e, :H].pow(2).sum(-1) / kq11[e, :H].pow(2).sum((-2, -1))
                ).numpy(),
                diagonal_spread=(diagonal[e, :H].std(dim=-1, unbiased=False) / w.abs()).numpy(),
                kq_off_pattern=(kq_off_rms[e, :H] / _rms(diagonal[e, :H])).numpy(),
                ov_off_pattern=(_rms(OV[e, :H, d, :d]) / m.abs()).numpy(),
                dummy=dummy.numpy(),
                sign_matching=bool((torch.sign(w[live]) == torch.sign(m[live])).all()),
                zero_sum_ratio=float(m.sum().abs() / m.abs().sum()),
                kq_homogeneity=float(live_abs_omega.max() / live_abs_omega.min())
                if live.any()
                else math.nan,
            )
        )
    return tuple(summaries)
