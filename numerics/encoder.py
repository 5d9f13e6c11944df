"""The multi-layer encoder of Chen, Zhao, Zou (2024) §3, batched over an ensemble of models.

Reference §1.6 (Fig. 1a, App. B): a linear embedding of each token of the prompt (2.3), then
``layers`` post-LN blocks

    H <- LayerNorm(H + Concat[head_1, ..., head_h] W_O)       (multi-head softmax attention)
    H <- LayerNorm(H + FFN(H))

and a linear read-out to one scalar per token, the prediction at each query position. No
positional encoding: the prompt's order carries no information. What the paper leaves unstated
is taken from the BERT defaults of HuggingFace `transformers` it built on (reference §7):
FFN width 4 d_hid with GELU, LayerNorm eps 1e-12, weights N(0, 0.02^2), zero biases; dropout is
left out (online data: every step sees fresh prompts). Optionally the mask M of (2.2): no token
attends to the q query tokens, so the predictions of different queries do not interact.

Heads (reference §2.3): head j of a layer owns the slice ``j d_hid/h : (j+1) d_hid/h`` of the
concatenated attention output; ``head_mask`` (E, layers, h) multiplies each head's slice before
the output projection W_O, so 0 masks a head exactly as the paper does and 1 keeps it. A pruned
model (reference §2.4) carries its mask in the buffer ``kept`` (E, layers, h), part of its
``state_dict``, so fine-tuning (`numerics.trainer.train` with ``initial``) keeps it pruned: a
masked head's slice is zero, so its weights get no gradient and Adam leaves them unchanged.

Every parameter carries a leading ensemble axis of E independent members (their own init seeds),
so E models train in one optimizer step, as `numerics.models.MultiHeadAttention` does; a
member's arithmetic does not depend on E. Tokens are rows here: a prompt is (m, d + 1) with
m = n + q, the transpose of the paper's (2.3).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass

import torch
import torch.nn.functional as F  # noqa: N812
from icl_verify.numerics.data import SparsePrompts
from torch import nn

__all__ = ["BlockStack", "EncoderConfig", "Encoder", "attention_heads", "encoder_tokens"]

INIT_STD = 0.02  # BERT's initializer_range
LN_EPS = 1e-12  # BERT's layer_norm_eps


class BlockStack:
    """What the configs of the encoder and of the decoder (`numerics.decoder`) share: the
    checks of their sizes (each of `SIZES` an integer >= 1, heads dividing d_hid, d_ffn an
    integer or None), the head width, the FFN width and a slice of the members. A subclass is
    a frozen dataclass with the fields d, d_hid, heads, layers, d_ffn, ensemble and the other
    `SIZES` it names."""

    SIZES = ("d", "d_hid", "heads", "layers", "ensemble")

    def __post_init__(self) -> None:
        for name in self.SIZES:
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
        if self.d_hid % self.heads:
            raise ValueError(f"heads must divide d_hid = {self.d_hid}, got {self.heads}")
        if self.d_ffn is not None and (not isinstance(self.d_ffn, int) or self.d_ffn < 1):
            raise ValueError(f"d_ffn must be an integer >= 1 or None, got {self.d_ffn!r}")

    @property
    def head_dim(self) -> int:
        return self.d_hid // self.heads

    @property
    def ffn_width(self) -> int:
        return self.d_ffn or 4 * self.d_hid

    def members(self, lo: int, hi: int):
        """Members lo..hi-1 as an ensemble of their own (every member has this architecture)."""
        return dataclasses.replace(self, ensemble=hi - lo)


@dataclass(frozen=True)
class EncoderConfig(BlockStack):
    """Architecture of an ensemble of encoders (reference §1.6; the paper: d = 16, d_hid = 256,
    heads in {1, 2, 4, 8}, layers in {3, ..., 6}).

    >>> EncoderConfig(d=16, d_hid=256, heads=8, layers=4).head_dim
    32
    >>> EncoderConfig(d_hid=30, heads=4)
    Traceback (most recent call last):
    ...
    ValueError: heads must divide d_hid = 30, got 4
    """

    d: int = 16  # covariate dimension; a token is (x, y) of length d + 1
    d_hid: int = 256  # hidden width
    heads: int = 8  # h; each head has d_hid / h dimensions
    layers: int = 4  # encoder blocks
    d_ffn: int | None = None  # FFN width; None: 4 d_hid (BERT)
    mask_queries: bool = False  # the mask M of (2.2): no token attends to the q query tokens
    ensemble: int = 1  # E members on the leading axis

    def build(self, seeds: Sequence[int]) -> Encoder:
        """The ensemble of this architecture, member e initialised from ``seeds[e]``."""
        return Encoder(self, seeds)


def encoder_tokens(prompts: SparsePrompts) -> torch.Tensor:
    """The prompt (2.3) as rows of tokens: (..., n + q, d + 1), query labels 0.

    >>> from icl_verify.numerics.data import sample_sparse_regression
    >>> p = sample_sparse_regression(3, d=4, n=5, s=2, sigma=0.1, q=2,
    ...                              generator=torch.Generator().manual_seed(0))
    >>> Z = encoder_tokens(p)
    >>> tuple(Z.shape), Z[:, 5:, -1].abs().max().item()
    ((3, 7, 5), 0.0)
    """
    X = torch.cat([prompts.X, prompts.X_query], dim=-2)  # (..., m, d)
    y = torch.cat([prompts.y, torch.zeros_like(prompts.y_query)], dim=-1)  # (..., m)
    return torch.cat([X, y.unsqueeze(-1)], dim=-1)  # (..., m, d + 1)


class Encoder(nn.Module):
    """E encoders of one architecture, member e initialised from ``seeds[e]``.

    ``forward(Z, n)`` takes tokens (E, B, m, d + 1) whose first n are the labelled examples and
    returns the predictions (E, B, m - n) at the query positions; ``hidden=True`` also returns
    the representations (E, B, m, d_hid) after the embedding and after each block (layers + 1).

    >>> model = Encoder(EncoderConfig(d=4, d_hid=16, heads=4, layers=2, ensemble=3), [0, 1, 2])
    >>> Z = torch.randn(3, 8, 7, 5)
    >>> tuple(model(Z, n=5).shape), len(model(Z, n=5, hidden=True)[1])
    ((3, 8, 2), 3)
    """

    def __init__(self, config: EncoderConfig, seeds: Sequence[int]) -> None:
        super().__init__()
        if len(seeds) != config.ensemble:
            raise ValueError(
                f"seeds must give one seed per member ({config.ensemble}), got {len(seeds)}"
            )
        self.config = config
        E, D, K, F_, N = (
            config.ensemble,
            config.d + 1,
            config.d_hid,
            config.ffn_width,
            config.layers,
        )
        shapes = {  # weights act as x @ W^T on rows, as nn.Linear
            "W_E": (E, K, D), "b_E": (E, K),
            "W_QKV": (E, N, 3 * K, K), "b_QKV": (E, N, 3 * K),
            "W_O": (E, N, K, K), "b_O": (E, N, K),
            "ln1_g": (E, N, K), "ln1_b": (E, N, K),
            "W_1": (E, N, F_, K), "b_1": (E, N, F_),
            "W_2": (E, N, K, F_), "b_2": (E, N, K),
            "ln2_g": (E, N, K), "ln2_b": (E, N, K),
            "W_R": (E, K), "b_R": (E,),
        }  # fmt: skip
        values = {name: torch.zeros(shape) for name, shape in shapes.items()}
        for e, seed in enumerate(seeds):  # member e's weights from its own seed, in a fixed order
            generator = torch.Generator().manual_seed(int(seed))
            for name in ("W_E", "W_QKV", "W_O", "W_1", "W_2", "W_R"):
                values[name][e].normal_(0.0, INIT_STD, generator=generator)
        values["ln1_g"].fill_(1.0)
        values["ln2_g"].fill_(1.0)
        for name, value in values.items():
            self.register_parameter(name, nn.Parameter(value))
        self.register_buffer("kept", torch.ones(E, N, config.heads))  # 1 kept, 0 pruned

    def forward(
        self,
        Z: torch.Tensor,
        n: int,
        head_mask: torch.Tensor | None = None,
        hidden: bool = False,
    ) -> torch.Tensor | tuple[torch.Tensor, list[torch.Tensor]]:
        config = self.config
        m = Z.shape[2]
        if not 1 <= n < m:
            raise ValueError(
                f"n must be in 1..{m - 1} (m = {m} tokens, at least one query), got {n}"
            )
        mask = None
        if config.mask_queries:  # keys of the query tokens are never attended to
            mask = torch.zeros(m, dtype=torch.bool, device=Z.device)
            mask[n:] = True
        head_mask = self.kept if head_mask is None else self.kept * head_mask  # (E, layers, h)
        H = linear(Z, self.W_E, self.b_E)  # (E, B, m, K)
        states = [H]
        for i in range(config.layers):
            concat = self.heads_output(H, i, mask, head_mask)  # (E, B, m, K)
            H = layer_norm(H + linear(concat, self.W_O[:, i], self.b_O[:, i]),
                           self.ln1_g[:, i], self.ln1_b[:, i])  # fmt: skip
            ffn = linear(F.gelu(linear(H, self.W_1[:, i], self.b_1[:, i])), self.W_2[:, i],
                         self.b_2[:, i])  # fmt: skip
            H = layer_norm(H + ffn, self.ln2_g[:, i], self.ln2_b[:, i])  # (E, B, m, K)
            states.append(H)
        out = (H[:, :, n:] * self.W_R[:, None, None]).sum(-1) + self.b_R[:, None, None]  # (E, B, q)
        return (out, states) if hidden else out

    def heads_output(
        self,
        H: torch.Tensor,
        layer: int,
        mask: torch.Tensor | None = None,
        head_mask: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """Block `layer`'s concatenated head outputs (E, B, m, d_hid) for its input H, before
        W_O (`attention_heads`)."""
        per_layer = None if head_mask is None else head_mask[:, layer]  # (E, h)
        return attention_heads(H, self.W_QKV[:, layer], self.b_QKV[:, layer], self.config.heads,
                               mask, per_layer)  # fmt: skip


def attention_heads(
    H: torch.Tensor,
    W_QKV: torch.Tensor,
    b_QKV: torch.Tensor,
    heads: int,
    mask: torch.Tensor | None = None,
    head_mask: torch.Tensor | None = None,
) -> torch.Tensor:
    """Multi-head softmax attention of one layer, per member, before its output projection:
    the concatenated head outputs (E, B, m, d_hid) of H (E, B, m, d_hid), head j in columns
    ``j dh : (j+1) dh`` (dh = d_hid / heads), times ``head_mask[:, j]`` ((E, heads)) when given.
    ``mask``: True where a query may not attend to a key, (m,) over keys or (m, m) (query, key).
    The one attention of the encoder and of the decoder (`numerics.decoder`)."""
    dh = H.shape[-1] // heads
    qkv = linear(H, W_QKV, b_QKV)  # (E, B, m, 3 d_hid)
    q, k, v = qkv.unflatten(-1, (3, heads, dh)).permute(3, 0, 1, 4, 2, 5)  # (E, B, h, m, dh)
    scores = q @ k.transpose(-1, -2) / math.sqrt(dh)  # (E, B, h, m, m)
    if mask is not None:
        scores = scores.masked_fill(mask, float("-inf"))
    out = torch.softmax(scores, dim=-1) @ v  # (E, B, h, m, dh)
    if head_mask is not None:
        out = out * head_mask.to(out.dtype)[:, None, :, None, None]
    return out.transpose(2, 3).flatten(-2)  # (E, B, m, d_hid)


def linear(x: torch.Tensor, W: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """Per member x @ W^T + b: x (E, ..., in), W (E, out, in), b (E, out) -> (E, ..., out)."""
    lead = x.shape[1:-1]
    y = torch.baddbmm(b[:, None], x.flatten(1, -2), W.transpose(1, 2))  # (E, prod(lead), out)
    return y.unflatten(1, lead)


def layer_norm(
    x: torch.Tensor, g: torch.Tensor, b: torch.Tensor, eps: float = LN_EPS
) -> torch.Tensor:
    """Per member LayerNorm over the last axis with gain g and bias b of shape (E, K)."""
    shape = (x.shape[0],) + (1,) * (x.dim() - 2) + (x.shape[-1],)
    return F.layer_norm(x, x.shape[-1:], eps=eps) * g.view(shape) + b.view(shape)
