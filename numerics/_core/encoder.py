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
``state_dict``, so fine-tuning (`numerics.train` with ``initial``) keeps it pruned: a
masked head's slice is zero, so its weights get no gradient and Adam leaves them unchanged.

Every parameter carries a leading ensemble axis of E independent members (their own init seeds),
so E models train in one optimizer step, as `numerics.MultiHeadAttention` does; a
member's arithmetic does not depend on E. Tokens are rows here: a prompt is (m, d + 1) with
m = n + q, the transpose of the paper's (2.3).

Precision (`PRECISIONS`; DESIGN "Numerics conventions": these models are matrix-product bound):
a plain `EncoderConfig` computes in float32 as it always has (explicit softmax attention); its
mixed-precision subclass `MixedPrecisionEncoderConfig` (``config.with_precision(p)``) runs the
matrix products on a GPU's matrix units, the weights, Adam's state and the loss staying float32:

- ``"bf16"``: the forward under ``torch.autocast(dtype=torch.bfloat16)`` (CPU or CUDA), the
  prediction cast back to float32 before the loss;
- ``"tf32"``: float32 tensors, the matrix products in TF32 (CUDA's
  ``torch.backends.cuda.matmul.fp32_precision = "tf32"``, set for the forward and for this
  model's backward pass only, then restored); refused on the CPU, which has no TF32.

Both take attention through ``torch.nn.functional.scaled_dot_product_attention`` (fused kernels
on CUDA; the same function as the explicit softmax, which stays for float32 and for reading the
weights). A precision is a field only of the subclass, so a float32 config's repr (the trainer's
checkpoint fingerprint) is what it was before the option existed.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

import torch
import torch.nn.functional as F  # noqa: N812
from icl_verify.numerics._core.data import SparsePrompts
from torch import nn

# The flat exports (numerics/__init__.pyi); the precision helpers are imported from here.
__all__ = ["BlockStack", "EncoderConfig", "Encoder", "attention_heads", "encoder_tokens"]

INIT_STD = 0.02  # BERT's initializer_range
LN_EPS = 1e-12  # BERT's layer_norm_eps
PRECISIONS = ("float32", "tf32", "bf16")  # the arithmetic of the matrix products


def check_precision(precision: str, name: str = "precision") -> None:
    """ValueError (one line naming ``name``) unless ``precision`` is one of `PRECISIONS`.

    >>> check_precision("bf16")
    >>> check_precision("fp16")
    Traceback (most recent call last):
    ...
    ValueError: precision must be one of ('float32', 'tf32', 'bf16'), got 'fp16'
    """
    if precision not in PRECISIONS:
        raise ValueError(f"{name} must be one of {PRECISIONS}, got {precision!r}")


def with_precision(value, precision: str, plain: type, mixed: type):
    """``value`` (a ``plain`` dataclass or its subclass ``mixed``) at ``precision``: float32 gives
    the ``plain`` dataclass, whose fields (hence repr and `dataclasses.asdict`) have no
    precision, as before the option existed; tf32 or bf16 give ``mixed`` with that precision.
    What `BlockStack.with_precision` and `numerics.EncoderTraining.with_precision` return.

    >>> with_precision(EncoderConfig(d=4), "bf16", EncoderConfig, MixedPrecisionEncoderConfig)
    MixedPrecisionEncoderConfig(d=4, d_hid=256, heads=8, layers=4, d_ffn=None, \
mask_queries=False, ensemble=1, precision='bf16')
    """
    check_precision(precision)
    values = {f.name: getattr(value, f.name) for f in dataclasses.fields(plain)}
    return plain(**values) if precision == "float32" else mixed(**values, precision=precision)


class BlockStack:
    """What the configs of the encoder and of the decoder (`numerics._core.decoder`) share: the
    checks of their sizes (each of `SIZES` an integer >= 1, heads dividing d_hid, d_ffn an
    integer or None), the head width, the FFN width, a slice of the members and the precision
    of the matrix products (`PRECISIONS`). A subclass is a frozen dataclass with the fields d,
    d_hid, heads, layers, d_ffn, ensemble and the other `SIZES` it names; its ``MIXED`` subclass
    adds the field ``precision``."""

    SIZES = ("d", "d_hid", "heads", "layers", "ensemble")
    precision = "float32"  # no field: the mixed-precision subclass's field (tf32 or bf16)

    def __post_init__(self) -> None:
        for name in self.SIZES:
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
        if self.d_hid % self.heads:
            raise ValueError(f"heads must divide d_hid = {self.d_hid}, got {self.heads}")
        if self.d_ffn is not None and (not isinstance(self.d_ffn, int) or self.d_ffn < 1):
            raise ValueError(f"d_ffn must be an integer >= 1 or None, got {self.d_ffn!r}")
        check_precision(self.precision)

    @property
    def head_dim(self) -> int:
        return self.d_hid // self.heads

    @property
    def ffn_width(self) -> int:
        return self.d_ffn or 4 * self.d_hid

    def members(self, lo: int, hi: int):
        """Members lo..hi-1 as an ensemble of their own (every member has this architecture)."""
        return dataclasses.replace(self, ensemble=hi - lo)

    def with_precision(self, precision: str):
        """This architecture with its matrix products in ``precision`` (`PRECISIONS`): float32
        the plain config, tf32 or bf16 its ``MIXED`` subclass (`with_precision`)."""
        return with_precision(self, precision, self.MIXED.__base__, self.MIXED)

    @property
    def fused_attention(self) -> bool:
        """Whether attention runs through `F.scaled_dot_product_attention` (tf32, bf16)."""
        return self.precision != "float32"


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


@dataclass(frozen=True)
class MixedPrecisionEncoderConfig(EncoderConfig):
    """An `EncoderConfig` whose matrix products run in TF32 or bf16 (float32 weights, optimizer
    state and loss; module docstring). Made by ``config.with_precision(p)``.

    >>> EncoderConfig(d_hid=16, heads=2).with_precision("bf16").precision
    'bf16'
    >>> EncoderConfig().with_precision("bf16").with_precision("float32") == EncoderConfig()
    True
    """

    precision: str = field(kw_only=True)  # "tf32" | "bf16" (float32: the plain EncoderConfig)


EncoderConfig.MIXED = MixedPrecisionEncoderConfig


@contextlib.contextmanager
def matrix_precision(precision: str, device: torch.device) -> Iterator[None]:
    """The arithmetic of the matrix products inside the block (`PRECISIONS`): float32 as is;
    bf16 under ``torch.autocast(device.type, dtype=torch.bfloat16)``; tf32 with CUDA's float32
    matrix products in TF32 (``torch.backends.cuda.matmul.fp32_precision``), restored after.
    TF32 is refused on the CPU (ValueError): it has no such format, and float32 under that name
    would make two cache entries of one arithmetic.

    >>> with matrix_precision("bf16", torch.device("cpu")):
    ...     (torch.ones(2, 3) @ torch.ones(3, 2)).dtype
    torch.bfloat16
    """
    check_precision(precision)
    if precision == "bf16":
        with torch.autocast(device.type, dtype=torch.bfloat16):
            yield
    elif precision == "tf32":
        if device.type != "cuda":
            raise ValueError(
                f"precision 'tf32' needs a CUDA device (TF32 is a GPU matrix-unit format), got "
                f"{device.type}; use 'float32' or 'bf16' there"
            )
        matmul = torch.backends.cuda.matmul
        before, matmul.fp32_precision = matmul.fp32_precision, "tf32"
        try:
            yield
        finally:
            matmul.fp32_precision = before
    else:
        yield


def precision_output(out: torch.Tensor, precision: str, dtype: torch.dtype) -> torch.Tensor:
    """A prediction computed in ``precision`` as the loss takes it: in ``dtype`` (the weights'),
    and under tf32 with the model's backward pass in TF32 too (a hook on ``out`` sets TF32 when
    the backward reaches the prediction and queues its restoring at the end of that backward).

    >>> with matrix_precision("bf16", torch.device("cpu")):
    ...     out = torch.ones(2, 3) @ torch.ones(3)
    >>> out.dtype, precision_output(out, "bf16", torch.float32).dtype
    (torch.bfloat16, torch.float32)
    """
    if precision == "tf32" and out.requires_grad:
        out.register_hook(_tf32_backward)
    return out.to(dtype)


def _tf32_backward(grad: torch.Tensor) -> None:
    """The hook of `precision_output`: TF32 from here to the end of this backward pass."""
    matmul = torch.backends.cuda.matmul
    before, matmul.fp32_precision = matmul.fp32_precision, "tf32"

    def restore() -> None:
        matmul.fp32_precision = before

    torch.autograd.Variable._execution_engine.queue_callback(restore)


def encoder_tokens(prompts: SparsePrompts) -> torch.Tensor:
    """The prompt (2.3) as rows of tokens: (..., n + q, d + 1), query labels 0.

    >>> from icl_verify.numerics import sample_sparse_regression
    >>> from icl_verify.settings import SparseSetting
    >>> p = sample_sparse_regression(3, SparseSetting(d=4, s=2, sigma=0.1), 5, q=2,
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
        with matrix_precision(config.precision, Z.device):
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
            out = (H[:, :, n:] * self.W_R[:, None, None]).sum(-1) + self.b_R[:, None, None]
        out = precision_output(out, config.precision, self.W_R.dtype)  # (E, B, q)
        return (out, [s.to(out.dtype) for s in states]) if hidden else out

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
                               mask, per_layer, self.config.fused_attention)  # fmt: skip


def attention_heads(
    H: torch.Tensor,
    W_QKV: torch.Tensor,
    b_QKV: torch.Tensor,
    heads: int,
    mask: torch.Tensor | None = None,
    head_mask: torch.Tensor | None = None,
    fused: bool = False,
) -> torch.Tensor:
    """Multi-head softmax attention of one layer, per member, before its output projection:
    the concatenated head outputs (E, B, m, d_hid) of H (E, B, m, d_hid), head j in columns
    ``j dh : (j+1) dh`` (dh = d_hid / heads), times ``head_mask[:, j]`` ((E, heads)) when given:
    ``softmax(Q K^T / sqrt(dh)) V`` per head, Q K V the slices of ``H W_QKV^T + b_QKV``.
    ``mask``: True where a query may not attend to a key, (m,) over keys or (m, m) (query, key).
    ``fused``: through `torch.nn.functional.scaled_dot_product_attention` (fused kernels on
    CUDA), else the explicit softmax. The one attention of the encoder and of the decoder
    (`numerics._core.decoder`).

    >>> H, W, b = torch.randn(2, 3, 5, 8), 0.3 * torch.randn(2, 24, 8), torch.zeros(2, 24)
    >>> out = attention_heads(H, W, b, heads=2)
    >>> tuple(out.shape), torch.allclose(out, attention_heads(H, W, b, 2, fused=True), atol=1e-6)
    ((2, 3, 5, 8), True)
    """
    dh = H.shape[-1] // heads
    qkv = linear(H, W_QKV, b_QKV)  # (E, B, m, 3 d_hid)
    q, k, v = qkv.unflatten(-1, (3, heads, dh)).permute(3, 0, 1, 4, 2, 5)  # (E, B, h, m, dh)
    if fused:  # SDPA's boolean mask is True where a query MAY attend, (m, m) (query, key)
        m = H.shape[-2]
        keep = None if mask is None else torch.broadcast_to(~mask, (m, m))
        out = F.scaled_dot_product_attention(q.flatten(0, 1), k.flatten(0, 1), v.flatten(0, 1),
                                             attn_mask=keep)  # fmt: skip
        out = out.unflatten(0, q.shape[:2])  # (E, B, h, m, dh)
    else:
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
