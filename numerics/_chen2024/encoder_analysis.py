"""Reading a trained encoder (Chen, Zhao, Zou 2024 §3, App. B): head importance and linear probes.

- `head_importance`: the ICL excess risk with one head masked minus the intact model's, per
  (layer, head), and the normalised importance W (3.1), ``W_ij = dE_ij / sum_k dE_ik``
  (reference §2.3). Masking zeroes the head's slice of the concatenated attention output before
  W_O (`numerics._core.encoder`). The risks are paired on the same prompts, and taken against the
  noiseless query label ``x_q^T w*``: ``E (y_hat - y)^2 - sigma^2 = E (y_hat - x_q^T w*)^2``
  because the label noise is independent of the prediction, so the noise term drops out
  exactly instead of adding variance. The SE of each difference is the paired SE of the mean.
- `sorted_average`: App. B's aggregation, each model's rows sorted (descending) and averaged
  over models (the noise grid), and `effective_heads`, 1 / sum_j W_ij^2 per layer (h for flat
  rows, 1 for one dominant head).
- `p_probe`: the P-probing of §6 (reference §2.5): GD from 0 on the query tokens'
  representations (e.g. after layer 1) with their labels attached, all queries but the last,
  and the excess risk of the last query's prediction along the GD path, the learning rate
  chosen from a grid by the lowest mean final-step risk on tuning prompts and read on others.
- `fit_probe` / `probe_excess_risks`: a linear probe (ridge with intercept, penalty lam on the
  weights only) from the query token's representation after each layer to the query label,
  fitted on one set of prompts and read on another, as the excess risk above (reference §2.4;
  the paper names neither token nor fit: these are the choices here).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import torch
from icl_verify.numerics._core.data import SparsePrompts, sample_sparse_regression
from icl_verify.numerics._core.encoder import Encoder, encoder_tokens
from icl_verify.numerics._core.estimators import gd_path
from icl_verify.numerics._core.sparse_regression import oracle_tuned

from icl_verify.settings import SparseSetting

__all__ = [
    "HeadImportance",
    "LinearProbe",
    "effective_heads",
    "fit_probe",
    "head_importance",
    "member_prompts",
    "p_probe",
    "PProbe",
    "probe_excess_risks",
    "sorted_average",
]


def member_prompts(
    sigmas: Sequence[float],
    count: int,
    *,
    d: int,
    n: int,
    s: int,
    q: int = 1,
    generator: torch.Generator,
    dtype: torch.dtype = torch.float32,
    covariance: torch.Tensor | None = None,
    layout: Callable[[SparsePrompts], torch.Tensor] = encoder_tokens,
) -> tuple[SparsePrompts, torch.Tensor, torch.Tensor]:
    """``count`` fresh prompts per ensemble member, member e's labels with noise ``sigmas[e]``
    (x ~ N(0, ``covariance``), I when None): the prompts (fields (E, count, ...)), their tokens
    by ``layout`` (encoder tokens (E, count, n + q, d + 1) by default) and the noiseless query
    labels ``x_q^T w*`` (E, count, q).

    >>> p, Z, clean = member_prompts((0.0, 0.5), 3, d=4, n=5, s=2, q=2,
    ...                              generator=torch.Generator().manual_seed(0))
    >>> tuple(Z.shape), tuple(clean.shape), bool((p.y_query[0] == clean[0]).all())
    ((2, 3, 7, 5), (2, 3, 2), True)
    """
    parts = [
        sample_sparse_regression(count, SparseSetting(d, s, sigma), n, q=q, generator=generator,
                                 dtype=dtype, covariance=covariance)  # fmt: skip
        for sigma in sigmas
    ]
    prompts = SparsePrompts(
        *(torch.stack([getattr(p, f) for p in parts]) for f in ("X", "y", "X_query", "y_query",
                                                                "w_star"))
    )  # fmt: skip
    clean = (prompts.X_query @ prompts.w_star.unsqueeze(-1)).squeeze(-1)  # (E, count, q)
    return prompts, layout(prompts), clean


@dataclass(frozen=True)
class HeadImportance:
    """Per member, layer and head (E, layers, heads): the risk increase on masking the head, its
    paired SE, and the normalised importance (3.1) (rows summing to 1; NaN where a layer's
    increases sum to 0)."""

    delta: np.ndarray
    delta_se: np.ndarray
    weights: np.ndarray
    intact: np.ndarray  # (E,) the intact model's excess risk


def head_importance(
    model: Encoder, tokens: torch.Tensor, n: int, clean_target: torch.Tensor
) -> HeadImportance:
    """Mask each head in turn (all members at once) on the prompts ``tokens`` (E, B, n+1, d+1)
    with one query whose noiseless label is ``clean_target`` (E, B).

    >>> from icl_verify.numerics import EncoderConfig
    >>> model = Encoder(EncoderConfig(d=3, d_hid=8, heads=2, layers=2, ensemble=1), [0]).double()
    >>> Z, target = torch.randn(1, 64, 6, 4, dtype=torch.float64), torch.randn(1, 64).double()
    >>> result = head_importance(model, Z, 5, target)
    >>> result.delta.shape, np.allclose(result.weights.sum(-1), 1.0)
    ((1, 2, 2), True)
    """
    config = model.config
    E, B = clean_target.shape
    with torch.no_grad():

        def errors(head_mask: torch.Tensor | None) -> torch.Tensor:
            return (model(tokens, n, head_mask=head_mask)[..., 0] - clean_target) ** 2  # (E, B)

        intact = errors(None)
        delta = np.zeros((E, config.layers, config.heads))
        delta_se = np.zeros_like(delta)
        for i in range(config.layers):
            for j in range(config.heads):
                head_mask = torch.ones(
                    E, config.layers, config.heads, dtype=tokens.dtype, device=tokens.device
                )
                head_mask[:, i, j] = 0.0
                paired = (errors(head_mask) - intact).double().cpu().numpy()  # (E, B)
                delta[:, i, j] = paired.mean(axis=1)
                delta_se[:, i, j] = paired.std(axis=1, ddof=1) / np.sqrt(B)
    sums = delta.sum(axis=-1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        weights = np.where(sums != 0, delta / sums, np.nan)
    return HeadImportance(delta, delta_se, weights, intact.double().mean(dim=1).cpu().numpy())


def sorted_average(weights: np.ndarray) -> np.ndarray:
    """App. B's aggregate of models' importance matrices (M, layers, heads): each row sorted in
    descending order, then the mean over the M models.

    >>> sorted_average(np.array([[[0.2, 0.8]], [[0.6, 0.4]]])).round(12).tolist()
    [[0.7, 0.3]]
    """
    return np.mean(-np.sort(-np.asarray(weights, dtype=float), axis=-1), axis=0)


def effective_heads(weights: np.ndarray) -> np.ndarray:
    """1 / sum_j W_ij^2 per layer (rows summing to 1): h for a flat row, 1 for a single head.

    >>> effective_heads(np.array([[0.25, 0.25, 0.25, 0.25], [1.0, 0.0, 0.0, 0.0]])).tolist()
    [4.0, 1.0]
    """
    return 1.0 / np.sum(np.asarray(weights, dtype=float) ** 2, axis=-1)


@dataclass(frozen=True)
class LinearProbe:
    """A fitted probe ``y_hat = states @ weights + bias`` (float64)."""

    weights: torch.Tensor  # (K,)
    bias: float
    lam: float

    def __call__(self, states: torch.Tensor) -> torch.Tensor:
        return states.double() @ self.weights + self.bias


def fit_probe(states: torch.Tensor, target: torch.Tensor, lam: float) -> LinearProbe:
    """Ridge with intercept: minimise ``sum_b (states_b w + c - target_b)^2 + lam ||w||^2`` over
    the prompts b of ``states`` (B, K) (the intercept is not penalised), in float64, through the
    SVD of the centred states (lam = 0: the minimum-norm least-squares fit, directions below
    the rank cut-off ``S_max max(B, K) u`` dropped).

    >>> X = torch.randn(200, 3, dtype=torch.float64)
    >>> probe = fit_probe(X, X @ torch.tensor([1.0, -2.0, 0.5]).double() + 3.0, lam=1e-9)
    >>> [round(v, 6) for v in probe.weights.tolist()], round(probe.bias, 6)
    ([1.0, -2.0, 0.5], 3.0)
    """
    if not lam >= 0:
        raise ValueError(f"lam must be a number >= 0, got {lam!r}")
    X, y = states.double(), target.double()
    mean_x, mean_y = X.mean(dim=0), y.mean()
    U, S, Vh = torch.linalg.svd(X - mean_x, full_matrices=False)  # no gram: its kappa is squared
    kept = S > S[0] * max(X.shape) * torch.finfo(X.dtype).eps  # lam = 0: minimum-norm solution
    shrink = torch.where(kept, S / (S**2 + lam), torch.zeros_like(S))  # ridge's S / (S^2 + lam)
    weights = Vh.T @ (shrink * (U.T @ (y - mean_y)))  # (K,)
    return LinearProbe(weights, float(mean_y - mean_x @ weights), float(lam))


def probe_excess_risks(
    fit_states: Sequence[torch.Tensor],
    fit_target: torch.Tensor,
    eval_states: Sequence[torch.Tensor],
    eval_clean_target: torch.Tensor,
    lam: float,
) -> tuple[np.ndarray, np.ndarray]:
    """Per representation (e.g. after the embedding and each layer): a probe fitted on
    ``fit_states[l]`` (B, K) to ``fit_target`` (B,) (noisy labels, as a probe is trained),
    read on ``eval_states[l]`` against the noiseless ``eval_clean_target``; the excess risks
    (mean squared error) and their SEs, each (len(states),).

    >>> X = torch.randn(500, 4, dtype=torch.float64)
    >>> risk, se = probe_excess_risks([X], X[:, 0], [X], X[:, 0], lam=0.0)
    >>> bool(risk[0] < 1e-20)
    True
    """
    risks, ses = [], []
    for fit, evaluate in zip(fit_states, eval_states, strict=True):
        errors = (fit_probe(fit, fit_target, lam)(evaluate) - eval_clean_target.double()) ** 2
        risks.append(errors.mean().item())
        ses.append(errors.std().item() / np.sqrt(errors.numel()))
    return np.asarray(risks), np.asarray(ses)


@dataclass(frozen=True)
class PProbe:
    """P-probing paths per member (E members, T recorded steps, K rates, B held-out prompts).

    Attributes:
        steps: (T,) recorded GD steps; rates: (K,) the grid.
        rate: (E,) each member's chosen rate (lowest mean final-step risk on its tuning prompts).
        risks: (E, T, B) held-out per-prompt excess risks of the last query at that rate.
    """

    steps: np.ndarray
    rates: np.ndarray
    rate: np.ndarray
    risks: np.ndarray


def _p_probe_risks(features, labels, clean, eta: float, steps) -> torch.Tensor:
    """(..., T) squared errors of the last query's prediction along GD from 0 on the other
    queries; features (..., q, K), labels (..., q), clean (...)."""
    path = gd_path(features[..., :-1, :], labels[..., :-1], eta, steps)  # (..., T, K)
    prediction = (path @ features[..., -1, :].unsqueeze(-1)).squeeze(-1)  # (..., T)
    errors = (prediction - clean.unsqueeze(-1)) ** 2
    return torch.where(torch.isfinite(errors), errors, torch.inf)  # a divergent rate: inf


def p_probe(tune: tuple, held_out: tuple, rates, steps) -> PProbe:
    """P-probing (Chen et al. 2024 §6, Figure 2b): each of ``tune`` and ``held_out`` is
    ``(features, labels, clean)``: the q query tokens' representations (E, B, q, K), their
    labels (E, B, q) and the noiseless label of the last query (E, B). GD on
    ``(1/2(q-1)) ||F w - y||^2`` over the first q - 1 queries (`numerics.gd_path`),
    prediction ``<w_t, f_q>``; per member the rate of lowest mean final-step excess risk on
    ``tune`` (a rate diverging on some prompt: infinite mean) is read on ``held_out``.

    >>> g = torch.Generator().manual_seed(0)
    >>> F = torch.randn(1, 64, 11, 3, generator=g, dtype=torch.float64)
    >>> w = torch.tensor([1.0, -1.0, 0.5], dtype=torch.float64)
    >>> sets = [(F, F @ w, F[..., -1, :] @ w)] * 2
    >>> result = p_probe(sets[0], sets[1], rates=[10.0, 0.3], steps=[0, 2000])
    >>> result.rate.tolist(), bool(result.risks[0, -1].max() < 1e-12)
    ([0.3], True)
    """
    rates = [float(r) for r in rates]
    steps = [int(t) for t in steps]
    E = tune[0].shape[0]
    tune_final = torch.stack(
        [_p_probe_risks(*(a.double() for a in tune), eta, steps[-1:])[..., -1] for eta in rates]
    )  # (K, E, B)
    chosen = [oracle_tuned(tune_final[:, e]).index[0] for e in range(E)]
    held = [
        _p_probe_risks(*(a[e].double() for a in held_out), rates[k], steps)  # (B', T)
        for e, k in enumerate(chosen)
    ]
    return PProbe(
        steps=np.asarray(steps),
        rates=np.asarray(rates),
        rate=np.asarray([rates[k] for k in chosen]),
        risks=torch.stack(held).transpose(1, 2).cpu().numpy(),  # (E, T, B')
    )
