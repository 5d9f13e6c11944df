"""The decoder-only transformer of Chen, Zhao, Zou (2024) App. G, batched over an ensemble.

Reference chen2024 §2.7: a GPT-2-style causal decoder as in Garg et al. (2022) reads the
interleaved prompt ``(x_1, y_1, x_2, y_2, ..., x_m, y_m)``, each label zero-padded to a
d-vector (`decoder_tokens`), and predicts y_i at the token of x_i from everything before it;
it is trained with the loss (G.1) ``sum_{i=k}^{n} (y_hat_i - y_i)^2`` on prompts of n = 24
examples, k = 8 (d_hid 256, h = 8, L in {4, 5, 6}).

What the paper leaves unstated is taken from Garg et al.'s model (HuggingFace ``GPT2Model``
with dropout off, a linear read-in d -> d_hid and read-out d_hid -> 1): learned position
embeddings, pre-LN blocks

    H <- H + Concat[head_1, ..., head_h](LN_1(H)) W_O      (causal multi-head attention)
    H <- H + FFN(LN_2(H))                                  (width 4 d_hid, tanh-GELU)

and a final LayerNorm (eps 1e-5); GPT-2's initialisation (weights N(0, 0.02^2), the two
output projections of each block N(0, 0.02^2 / (2 L)), zero biases, unit LayerNorm gains),
the read-in and read-out as ``torch.nn.Linear`` initialises them (uniform in +-1/sqrt(fan_in)).

Every parameter has a leading ensemble axis of E members, each from its own seed, as in
`numerics._core.encoder`; the attention is the encoder's (`numerics.attention_heads`), so a
head is masked the same way (``head_mask`` (E, layers, h)) for the head importance (3.1).
``forward(Z, n)`` returns the predictions at the x tokens of examples n+1, n+2, ...: with
``n = k - 1`` they are the terms of (G.1), with n examples and one query the ICL prediction.
Its precision options are the encoder's (`numerics._core.encoder`: ``config.with_precision(p)``, a
`MixedPrecisionDecoderConfig` for tf32 or bf16; float32 configs as before the option existed).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import torch
import torch.nn.functional as F  # noqa: N812
from icl_verify.numerics._core.data import SparsePrompts
from icl_verify.numerics._core.encoder import (
    BlockStack,
    attention_heads,
    layer_norm,
    linear,
    matrix_precision,
    precision_output,
)
from torch import nn

__all__ = ["Decoder", "DecoderConfig", "decoder_tokens"]

INIT_STD = 0.02  # GPT-2's initializer_range
LN_EPS = 1e-5  # GPT-2's layer_norm_epsilon


@dataclass(frozen=True)
class DecoderConfig(BlockStack):
    """Architecture of an ensemble of decoders (reference chen2024 §2.7: d = 16, d_hid = 256,
    h = 8, layers in {4, 5, 6}, prompts of 24 examples: 48 positions).

    >>> DecoderConfig(d=16, d_hid=256, heads=8, layers=4, positions=48).head_dim
    32
    >>> DecoderConfig(positions=0)
    Traceback (most recent call last):
    ...
    ValueError: positions must be an integer >= 1, got 0
    """

    d: int = 16  # covariate dimension; a token is x or (y, 0, ..., 0), both of length d
    d_hid: int = 256  # hidden width
    heads: int = 8  # h; each head has d_hid / h dimensions
    layers: int = 4  # decoder blocks
    positions: int = 48  # learned position embeddings: the longest prompt, 2 (examples) tokens
    d_ffn: int | None = None  # FFN width; None: 4 d_hid (GPT-2)
    ensemble: int = 1  # E members on the leading axis

    SIZES = (*BlockStack.SIZES, "positions")

    def build(self, seeds: Sequence[int]) -> Decoder:
        """The ensemble of this architecture, member e initialised from ``seeds[e]``."""
        return Decoder(self, seeds)


@dataclass(frozen=True)
class MixedPrecisionDecoderConfig(DecoderConfig):
    """A `DecoderConfig` whose matrix products run in TF32 or bf16 (float32 weights, optimizer
    state and loss; `numerics._core.encoder`). Made by ``config.with_precision(p)``.

    >>> DecoderConfig(d_hid=16, heads=2).with_precision("tf32").precision
    'tf32'
    """

    precision: str = field(kw_only=True)  # "tf32" | "bf16" (float32: the plain DecoderConfig)


DecoderConfig.MIXED = MixedPrecisionDecoderConfig


def decoder_tokens(prompts: SparsePrompts) -> torch.Tensor:
    """The interleaved prompt ``(x_1, y_1, ..., x_m, y_m)`` of App. G, examples then queries
    (m = n + q), each y zero-padded to d: (..., 2m, d). The queries' labels are in it: the
    causal mask keeps each from its own prediction (and a later query sees earlier ones, as
    the loss (G.1) needs).

    >>> from icl_verify.numerics import sample_sparse_regression
    >>> from icl_verify.settings import SparseSetting
    >>> p = sample_sparse_regression(3, SparseSetting(d=4, s=2, sigma=0.1), 5, q=2,
    ...                              generator=torch.Generator().manual_seed(0))
    >>> Z = decoder_tokens(p)
    >>> tuple(Z.shape), bool((Z[:, 1::2, 0] == torch.cat([p.y, p.y_query], -1)).all())
    ((3, 14, 4), True)
    """
    X = torch.cat([prompts.X, prompts.X_query], dim=-2)  # (..., m, d)
    y = torch.cat([prompts.y, prompts.y_query], dim=-1)  # (..., m)
    Y = F.pad(y.unsqueeze(-1), (0, X.shape[-1] - 1))  # (..., m, d): (y, 0, ..., 0)
    return torch.stack([X, Y], dim=-2).flatten(-3, -2)  # (..., 2m, d)


class Decoder(nn.Module):
    """E decoders of one architecture, member e initialised from ``seeds[e]``.

    ``forward(Z, n)`` takes interleaved tokens (E, B, 2m, d) (`decoder_tokens`) and returns the
    predictions (E, B, m - n) at the x tokens of examples n+1..m, each from the tokens before it.

    >>> model = Decoder(DecoderConfig(d=4, d_hid=16, heads=4, layers=2, positions=14,
    ...                               ensemble=3), [0, 1, 2])
    >>> tuple(model(torch.randn(3, 8, 14, 4), n=5).shape)
    (3, 8, 2)
    """

    def __init__(self, config: DecoderConfig, seeds: Sequence[int]) -> None:
        super().__init__()
        if len(seeds) != config.ensemble:
            raise ValueError(
                f"seeds must give one seed per member ({config.ensemble}), got {len(seeds)}"
            )
        self.config = config
        E, D, K, F_, N, P = (
            config.ensemble, config.d, config.d_hid, config.ffn_width, config.layers,
            config.positions,
        )  # fmt: skip
        shapes = {  # weights act as x @ W^T on rows, as nn.Linear
            "W_in": (E, K, D), "b_in": (E, K), "W_pos": (E, P, K),
            "ln1_g": (E, N, K), "ln1_b": (E, N, K),
            "W_QKV": (E, N, 3 * K, K), "b_QKV": (E, N, 3 * K),
            "W_O": (E, N, K, K), "b_O": (E, N, K),
            "ln2_g": (E, N, K), "ln2_b": (E, N, K),
            "W_1": (E, N, F_, K), "b_1": (E, N, F_),
            "W_2": (E, N, K, F_), "b_2": (E, N, K),
            "lnf_g": (E, K), "lnf_b": (E, K),
            "W_R": (E, K), "b_R": (E,),
        }  # fmt: skip
        values = {name: torch.zeros(shape) for name, shape in shapes.items()}
        scaled = INIT_STD / math.sqrt(2 * N)  # GPT-2: each block's two output projections
        normal = {"W_pos": INIT_STD, "W_QKV": INIT_STD, "W_1": INIT_STD, "W_O": scaled,
                  "W_2": scaled}  # fmt: skip
        uniform = {"W_in": D, "b_in": D, "W_R": K, "b_R": K}  # nn.Linear: +-1/sqrt(fan_in)
        for e, seed in enumerate(seeds):  # member e's weights from its own seed, in a fixed order
            generator = torch.Generator().manual_seed(int(seed))
            for name, std in normal.items():
                values[name][e].normal_(0.0, std, generator=generator)
            for name, fan_in in uniform.items():
                bound = 1.0 / math.sqrt(fan_in)
                values[name][e].uniform_(-bound, bound, generator=generator)
        for name in ("ln1_g", "ln2_g", "lnf_g"):
            values[name].fill_(1.0)
        for name, value in values.items():
            self.register_parameter(name, nn.Parameter(value))

    def forward(
        self, Z: torch.Tensor, n: int, head_mask: torch.Tensor | None = None
    ) -> torch.Tensor:
        config = self.config
        T = Z.shape[2]
        if T % 2 or not 2 <= T <= config.positions:
            raise ValueError(
                f"Z must hold an even number of tokens in 2..{config.positions} (the positions "
                f"trained), got {T}"
            )
        if not 0 <= n < T // 2:
            raise ValueError(f"n must be in 0..{T // 2 - 1} (m = {T // 2} examples), got {n}")
        causal = torch.ones(T, T, dtype=torch.bool, device=Z.device).triu(1)  # key after query
        with matrix_precision(config.precision, Z.device):
            H = linear(Z, self.W_in, self.b_in) + self.W_pos[:, None, :T]  # (E, B, T, K)
            for i in range(config.layers):
                mixed = attention_heads(
                    layer_norm(H, self.ln1_g[:, i], self.ln1_b[:, i], LN_EPS), self.W_QKV[:, i],
                    self.b_QKV[:, i], config.heads, causal,
                    None if head_mask is None else head_mask[:, i], config.fused_attention,
                )  # (E, B, T, K)
                H = H + linear(mixed, self.W_O[:, i], self.b_O[:, i])
                inner = linear(layer_norm(H, self.ln2_g[:, i], self.ln2_b[:, i], LN_EPS),
                               self.W_1[:, i], self.b_1[:, i])  # fmt: skip
                H = H + linear(F.gelu(inner, approximate="tanh"), self.W_2[:, i], self.b_2[:, i])
            H = layer_norm(H, self.lnf_g, self.lnf_b, LN_EPS)  # (E, B, T, K)
            at_x = H[:, :, 0::2][:, :, n:]  # (E, B, m - n, K): the x tokens of examples n+1..m
            out = (at_x * self.W_R[:, None, None]).sum(-1) + self.b_R[:, None, None]
        return precision_output(out, config.precision, self.W_R.dtype)  # (E, B, m - n)
