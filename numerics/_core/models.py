"""One-layer multi-head attention for in-context regression, batched over an ensemble of models.

Follows He, Pan, Chen, Yang (ICML 2025), *In-Context Linear Regression Demystified*, Section 2
(reference §HE-2.1-2.4) and the released code (``MultiHeadAttention``):

    TF(Z) = Z + sum_h W_O^h W_V^h Z attn( M o (Z^T W_K^h^T W_Q^h Z) / sqrt(D) )          (2.2)

with Z the (D, L+1) prompt matrix of (2.1) (``D = d + n_labels``), attn the column-wise softmax,
M the strict causal mask (token j sees tokens i < j) and the prediction the last entry of the
last column (2.3). No layer norm, no positional encoding, no biases. Variants:

- ``attention="linear"``: linear attention (5.1), scores times a FIXED 1/L (L = ``train_length``);
- ``attention="tanh"``, ``"elu:0.5"``, ... (a spec of `icl_verify.activations`) or ``attention=f``
  (a callable): normalised activation (5.2), weights ``f(s_i) / sum_j f(s_j)``;
- `KernelSumModel`: the reparametrised predictor (3.2) in (omega, mu), through
  ``numerics.kernel_sum_prediction``.

Every model here is an ENSEMBLE of E independent members stacked on a leading axis: parameters
are (E, H, D, D) and every tensor carries the member axis first, so E small models train in one
optimizer step (Adam is element-wise, so this is exact). Members may have different numbers of
heads: the extra heads are inactive (zero W_O, masked out, no gradient).

Circuits (the papers' order): ``KQ_h = W_K^h^T W_Q^h / sqrt(D)`` (the effective score matrix,
reference §0.4) and ``OV_h = W_O^h W_V^h``.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import numbers
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch
from icl_verify.numerics._core.circuits import kq_circuit, ov_circuit
from icl_verify.numerics._core.data import Prompts
from icl_verify.numerics._core.estimators import kernel_sum_prediction
from torch import nn

from icl_verify.activations import FAMILIES, ActivationError, parse_activation

__all__ = ["AttentionConfig", "MultiHeadAttention", "KernelSumModel"]

INITS = ("default", "small_identity", "symmetric")


@dataclass(frozen=True)
class AttentionConfig:
    """Architecture and initialisation of an ensemble of one-layer multi-head attention models.

    Initialisations (per member, from its own seed): "default" draws every W as
    ``nn.Linear(D, D, bias=False)`` does (kaiming uniform, U(-1/sqrt D, 1/sqrt D));
    "small_identity" sets every W = s (I + 0.1 G) with G i.i.d. N(0, 1) and s = init_scale
    (all heads start near the same positive head); "symmetric" is Def. B.1 for H = 2:
    omega_1 = -omega_2 = mu_1 = -mu_2 = eps = init_scale, with KQ11 = ±eps I, OV last row
    (0, ..., 0, ±eps) and all other circuit entries 0.

    Attention: "softmax" (2.2), "linear" (5.1), the spec of a normalised activation (5.2) as
    `icl_verify.activations.parse_activation` reads it (stored in its normal form), or a callable f;
    or a tuple of E such strings, member e with attention[e] (several activations train in one
    optimizer step, so the fixed cost of a step is paid once for all of them).

    >>> AttentionConfig(attention="elu:.5").attention
    'elu:0.5'
    >>> AttentionConfig(ensemble=2, attention=("softmax", "tanh")).attention
    ('softmax', 'tanh')
    >>> AttentionConfig(attention="elu")
    Traceback (most recent call last):
    ...
    icl_verify.activations.ActivationError: attention must be 'linear' or a spec: ... 'elu:c' ...
    """

    d: int = 5  # covariate dimension (reference §0.5: d = 5)
    heads: int | tuple[int, ...] = 2  # H per member; a tuple gives each member its own H
    ensemble: int = 1  # E, members stacked on the leading axis
    n_labels: int = 1  # label rows of a token (K for multi-task prompts, §HE-5.4-MT)
    attention: str | tuple[str, ...] | Callable[[torch.Tensor], torch.Tensor] = "softmax"
    train_length: int = 40  # the fixed L of linear attention's 1/L (5.1); unused otherwise
    init: str = "default"  # "default" (nn.Linear), "small_identity", "symmetric" (Def. B.1)
    init_scale: float = 0.01  # s of small_identity, eps of symmetric

    def __post_init__(self) -> None:
        for name in ("d", "ensemble", "n_labels", "train_length"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
                raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
        heads = self.heads if isinstance(self.heads, tuple) else (self.heads,) * self.ensemble
        if len(heads) != self.ensemble or not all(
            isinstance(h, numbers.Integral) and not isinstance(h, bool) and h >= 1 for h in heads
        ):
            raise ValueError(
                f"heads must be an integer >= 1 or a tuple of {self.ensemble} such integers, "
                f"got {self.heads!r}"
            )
        object.__setattr__(self, "heads", tuple(int(h) for h in heads))
        if isinstance(self.attention, tuple):
            if len(self.attention) != self.ensemble or not all(
                isinstance(a, str) for a in self.attention
            ):
                raise ValueError(
                    f"attention must be one attention or a tuple of {self.ensemble} attention "
                    f"strings (one per member), got {self.attention!r}"
                )
            specs = tuple(_attention_spec(a) for a in self.attention)
            object.__setattr__(self, "attention", specs[0] if len(set(specs)) == 1 else specs)
        elif isinstance(self.attention, str):
            object.__setattr__(self, "attention", _attention_spec(self.attention))
        elif not callable(self.attention):
            raise ValueError(
                "attention must be 'softmax', 'linear', an activation spec ('tanh', 'elu:c', "
                f"'quadratic:c', 'f:<expression in x>') or a callable f, got {self.attention!r}"
            )
        if self.init not in INITS:
            raise ValueError(f"init must be one of {INITS}, got {self.init!r}")
        if self.init == "symmetric" and set(self.heads) != {2}:
            raise ValueError(f"heads must be 2 for init='symmetric' (Def. B.1), got {self.heads!r}")
        scale = self.init_scale
        if not isinstance(scale, numbers.Real) or not math.isfinite(scale) or scale <= 0:
            raise ValueError(f"init_scale must be a finite number > 0, got {scale!r}")

    @property
    def d_embed(self) -> int:
        """Token length D = d + n_labels."""
        return self.d + self.n_labels

    @property
    def max_heads(self) -> int:
        """Head axis length: the largest H over members."""
        return max(self.heads)

    def build(self, seeds) -> MultiHeadAttention:
        """The ensemble of this architecture, member e initialised from ``seeds[e]``."""
        return MultiHeadAttention(self, seeds)

    def members(self, lo: int, hi: int) -> AttentionConfig:
        """Members lo..hi-1 as an ensemble of their own (their heads and attention).

        >>> AttentionConfig(heads=(1, 2, 4), ensemble=3).members(1, 3).heads
        (2, 4)
        """
        attention = self.attention
        return dataclasses.replace(
            self,
            ensemble=hi - lo,
            heads=self.heads[lo:hi],
            attention=attention[lo:hi] if isinstance(attention, tuple) else attention,
        )


def _attention_spec(attention: str) -> str:
    """ "linear", or the normal form of an activation spec (one-line error otherwise)."""
    if attention == "linear":
        return attention
    try:
        return parse_activation(attention).spec
    except ActivationError as error:
        raise ActivationError(f"attention must be 'linear' or a spec: {error}") from None


def _default_weights(D: int, generator: torch.Generator) -> torch.Tensor:
    """One (D, D) weight as ``nn.Linear(D, D, bias=False)`` draws it (kaiming uniform, a = sqrt 5).

    Drawn in float32, nn.Linear's default dtype, so a float64 model holds the same numbers.
    """
    weight = torch.empty(D, D, dtype=torch.float32)
    nn.init.kaiming_uniform_(weight, a=math.sqrt(5), generator=generator)  # U(-1/sqrt D, 1/sqrt D)
    return weight


def _member_weights(config: AttentionConfig, heads: int, seed: int) -> torch.Tensor:
    """W_Q, W_K, W_V, W_O of one member's active heads: (4, heads, D, D), float64 on the CPU.

    Drawn from ``torch.Generator().manual_seed(seed)`` head by head, in the order Q, K, V, O:
    - default: each W as nn.Linear(D, D, bias=False) initialises its weight;
    - small_identity: each W = s (I + 0.1 G), G with i.i.d. N(0, 1) entries, s = init_scale;
    - symmetric (Def. B.1, H = 2): W_K = P = diag(1,..,1,0), W_Q^h = ±eps sqrt(D) P,
      W_V = W_O^h / (±eps) = e_D e_D^T, so KQ_h = ±eps P (KQ11 = ±eps I) and the OV last row
      is (0, ..., 0, ±eps): omega_1 = -omega_2 = mu_1 = -mu_2 = eps. (No randomness.)
    """
    D, s = config.d_embed, float(config.init_scale)
    generator = torch.Generator().manual_seed(seed)
    if config.init == "symmetric":
        P = torch.diag(torch.cat([torch.ones(config.d), torch.zeros(config.n_labels)])).double()
        label = torch.zeros(D, D, dtype=torch.float64)
        label[-1, -1] = 1.0
        signs = torch.tensor([1.0, -1.0], dtype=torch.float64)[:, None, None]  # (2, 1, 1)
        return torch.stack(
            [
                s * math.sqrt(D) * signs * P,
                P.expand(2, D, D),
                label.expand(2, D, D),
                s * signs * label,
            ]
        )
    weights = torch.empty(heads, 4, D, D, dtype=torch.float64)
    for h in range(heads):
        for k in range(4):
            if config.init == "default":
                weights[h, k] = _default_weights(D, generator)
            else:
                noise = torch.randn(D, D, generator=generator, dtype=torch.float64)
                weights[h, k] = s * (torch.eye(D, dtype=torch.float64) + 0.1 * noise)
    return weights.transpose(0, 1)  # (4, heads, D, D)


def _attention_kind(attention) -> tuple[str, Callable | None]:
    """("softmax" | "linear" | "activation", f): f of a normalised activation, else None."""
    if attention in ("softmax", "linear"):
        return attention, None
    f = parse_activation(attention).torch_function() if isinstance(attention, str) else attention
    return "activation", f


def _formula(spec: str) -> tuple[str, str, Callable | None, float | None]:
    """(key, kind, f, c) of a member's attention spec: members with one key share one formula.

    A family with a parameter (``elu:c``, ``quadratic:c``) is keyed by its family and f takes c
    as a second argument, f(x, c), lambdified from the family's sympy expression with c a
    symbol, so members of one family with different c share the formula's operators; any other
    spec is keyed by itself, with the kind and f of `_attention_kind` (c None).

    >>> key, kind, f, c = _formula("elu:0.5")
    >>> key, kind, c, f(torch.tensor([-2.0, 2.0]), torch.tensor(0.5)).tolist()
    ('elu', 'activation', 0.5, [0.3678794503211975, 2.0])
    >>> _formula("tanh")[:2], _formula("softmax")[:2]
    (('tanh', 'activation'), ('softmax', 'softmax'))
    """
    if spec in ("softmax", "linear") or parse_activation(spec).c is None:
        return (spec, *_attention_kind(spec), None)
    import sympy as sp

    activation = parse_activation(spec)
    c = sp.Symbol("c", real=True)
    names = {"x": activation.symbol, "c": c}
    expression = sp.sympify(FAMILIES[activation.family][0], locals=names)
    f = sp.lambdify((activation.symbol, c), expression, modules="torch")
    return activation.family, "activation", f, activation.c


class MultiHeadAttention(nn.Module):
    """E one-layer H-head attention models (2.2) with parameters W_Q, W_K, W_V, W_O of (E, H, D, D).

    ``seeds[e]`` initialises member e (see `_member_weights`); heads beyond member e's H are
    inactive: all their weights are zero and W_O is masked, so they add nothing and get no
    gradient. Inputs are prompt matrices Z of shape (E, B, D, L+1) (`numerics.embed`, then
    ``.expand(E, ...)`` to share prompts across members).

    >>> from icl_verify.numerics import embed, sample_linear_regression
    >>> from icl_verify.settings import Setting
    >>> model = MultiHeadAttention(AttentionConfig(d=5, heads=(2, 4), ensemble=2), seeds=[0, 1])
    >>> tuple(model.W_Q.shape), model.active.tolist()
    ((2, 4, 6, 6), [[True, True, False, False], [True, True, True, True]])
    >>> g = torch.Generator().manual_seed(0)
    >>> prompts = sample_linear_regression(8, Setting(5, 40, 0.1), generator=g)
    >>> tuple(model(embed(prompts).expand(2, -1, -1, -1)).shape)
    (2, 8)
    """

    def __init__(self, config: AttentionConfig, seeds: Sequence[int]) -> None:
        super().__init__()
        if len(seeds) != config.ensemble:
            raise ValueError(f"seeds must hold {config.ensemble} integers, got {len(seeds)}")
        self.config = config
        attention = config.attention
        # runs of consecutive members that share one formula (`_formula`): (kind, f, their c
        # or None, size); members listed family by family make one run per family, so the
        # operators of a step grow with the families, not with the activations (elu:0.5 and
        # elu:1 are one run)
        if isinstance(attention, tuple):
            runs = []
            for _, run in itertools.groupby(map(_formula, attention), key=lambda f: f[0]):
                run = list(run)
                _, kind, f, c = run[0]
                cs = None if c is None else tuple(formula[3] for formula in run)
                runs.append((kind, f, cs, len(run)))
        else:
            runs = [(*_attention_kind(attention), None, config.ensemble)]
        self._sizes = [size for *_, size in runs]  # the runs' slices of the member axis
        # blocks: a softmax or linear run alone, or adjacent activation runs (lo, f, cs), whose
        # f values are joined and normalised together
        self._blocks: list[tuple[str, list[tuple[int, Callable | None, tuple | None]]]] = []
        lo = 0
        for kind, f, cs, size in runs:
            if kind == "activation" and self._blocks and self._blocks[-1][0] == kind:
                self._blocks[-1][1].append((lo, f, cs))
            else:
                self._blocks.append((kind, [(lo, f, cs)]))
            lo += size
        self._coefficients: dict[tuple, torch.Tensor] = {}  # a run's c per (lo, dtype, device)
        E, H, D = config.ensemble, config.max_heads, config.d_embed
        weights = torch.zeros(4, E, H, D, D, dtype=torch.float64)  # (Q K V O, E, H, D, D)
        for e, (heads, seed) in enumerate(zip(config.heads, seeds, strict=True)):
            weights[:, e, :heads] = _member_weights(config, heads, int(seed))
        dtype = torch.get_default_dtype()
        self.W_Q = nn.Parameter(weights[0].to(dtype))  # (E, H, D, D)
        self.W_K = nn.Parameter(weights[1].to(dtype))  # (E, H, D, D)
        self.W_V = nn.Parameter(weights[2].to(dtype))  # (E, H, D, D)
        self.W_O = nn.Parameter(weights[3].to(dtype))  # (E, H, D, D)
        active = torch.arange(H)[None, :] < torch.tensor(config.heads)[:, None]  # (E, H)
        self.register_buffer("active", active)

    @classmethod
    def from_circuits(
        cls, KQ, OV, attention: str | Callable = "softmax", train_length: int = 40
    ) -> MultiHeadAttention:
        """A float64 model (one label row, D = d + 1) whose circuits are the given KQ and OV.

        KQ, OV: (E, H, D, D). Weights ``W_K = sqrt(D) I``, ``W_Q = KQ``, ``W_V = I``,
        ``W_O = OV``, so `KQ` = W_K^T W_Q / sqrt(D) and `OV` = W_O W_V give them back (KQ up to
        the rounding of sqrt(D) KQ / sqrt(D)). ``attention`` and ``train_length`` as in
        `AttentionConfig`.

        >>> KQ = torch.zeros(1, 2, 3, 3, dtype=torch.float64); KQ[0, :, :2, :2] = torch.eye(2)
        >>> model = MultiHeadAttention.from_circuits(KQ, KQ.flip(-1))
        >>> torch.allclose(model.KQ, KQ, rtol=0, atol=1e-15), torch.equal(model.OV, KQ.flip(-1))
        (True, True)
        """
        KQ = torch.as_tensor(KQ, dtype=torch.float64)
        OV = torch.as_tensor(OV, dtype=torch.float64)
        if KQ.ndim != 4 or KQ.shape[-1] != KQ.shape[-2] or KQ.shape[-1] < 2 or OV.shape != KQ.shape:
            raise ValueError(
                f"KQ and OV must both have shape (E, H, D, D) with D >= 2, got "
                f"{tuple(KQ.shape)} and {tuple(OV.shape)}"
            )
        E, H, D, _ = KQ.shape
        config = AttentionConfig(
            d=D - 1, heads=H, ensemble=E, attention=attention, train_length=train_length
        )
        model = cls(config, seeds=[0] * E).double()
        identity = torch.eye(D, dtype=torch.float64).expand(E, H, D, D)
        with torch.no_grad():
            model.W_K.copy_(math.sqrt(D) * identity)
            model.W_Q.copy_(KQ)
            model.W_V.copy_(identity)
            model.W_O.copy_(OV)
        return model

    # -- circuits ---------------------------------------------------------------------------

    @property
    def KQ(self) -> torch.Tensor:
        """Effective score matrices ``KQ_h = W_K^h^T W_Q^h / sqrt(D)``, (E, H, D, D)."""
        return kq_circuit(self.W_K, self.W_Q)

    @property
    def OV(self) -> torch.Tensor:
        """Output-value matrices ``OV_h = W_O^h W_V^h`` (inactive heads: 0), (E, H, D, D)."""
        return ov_circuit(self._W_O_active, self.W_V)

    @property
    def _W_O_active(self) -> torch.Tensor:
        return self.W_O * self.active[..., None, None].to(self.W_O.dtype)  # (E, H, D, D)

    # -- attention weights ------------------------------------------------------------------

    def _attention_weights(self, scores: torch.Tensor, keep: torch.Tensor | None) -> torch.Tensor:
        """Normalise scores over the key axis (the last); ``keep`` masks keys (None = all).

        scores: (E, B, H, ..., keys). Each run of members (`_formula`) takes its slice of the
        member axis (`torch.split`: views, one join in the backward pass); the runs' weights are
        joined by `torch.cat`, so a step's operators do not grow with the members.
        """
        parts = iter(scores.split(self._sizes) if len(self._sizes) > 1 else (scores,))
        weights = []
        for kind, runs in self._blocks:
            if kind == "softmax":  # (2.2)
                part = next(parts)
                if keep is None:
                    weights.append(torch.softmax(part, dim=-1))
                else:
                    masked = torch.softmax(part.masked_fill(~keep, -math.inf), dim=-1)
                    weights.append(masked.masked_fill(~keep, 0.0))  # no keys: no weight
            elif kind == "linear":  # (5.1): fixed 1/L, no normalisation
                part = next(parts) / self.config.train_length
                weights.append(part if keep is None else part * keep)
            else:  # (5.2): f(s_i) / sum_j f(s_j)
                values = [self._activation(lo, f, cs, next(parts)) for lo, f, cs in runs]
                values = values[0] if len(values) == 1 else torch.cat(values)
                if keep is not None:
                    values = values * keep
                total = values.sum(dim=-1, keepdim=True)
                weights.append(values / torch.where(total == 0, torch.ones_like(total), total))
        return weights[0] if len(weights) == 1 else torch.cat(weights)

    def _activation(self, lo: int, f, cs: tuple[float, ...] | None, scores: torch.Tensor):
        """f(scores), of the scores' shape (a constant f returns a number), with the run's c
        per member as f's second argument when it has one: made on first use from the specs'
        numbers (a float64 model gets them exactly) and kept, so that a CUDA graph captured
        after the first steps reads the same tensor."""
        if cs is None:
            values = f(scores)
        else:
            key = (lo, scores.dtype, scores.device)
            if key not in self._coefficients:
                self._coefficients[key] = torch.tensor(cs, dtype=scores.dtype, device=scores.device)
            values = f(scores, self._coefficients[key].view(-1, *(1,) * (scores.ndim - 1)))
        values = torch.as_tensor(values, dtype=scores.dtype, device=scores.device)
        return torch.broadcast_to(values, scores.shape)

    # -- forward passes ---------------------------------------------------------------------

    def forward(self, Z: torch.Tensor) -> torch.Tensor:
        """Prediction (2.3): the label entries of the last column of TF(Z), query position only.

        The query z_q = Z[..., -1] attends to the L context tokens Z[..., :-1] (no mask needed;
        this is what training uses and equals `forward_sequence` at the last column).
        Z: (E, B, D, L+1) -> (E, B) (or (E, B, K) when n_labels = K > 1).
        """
        K = self.config.n_labels
        context, query = Z[..., :-1], Z[..., -1]  # (E, B, D, L), (E, B, D)
        kq_query = torch.einsum("ehij,ebj->ebhi", self.KQ, query)  # (E, B, H, D): KQ_h z_q
        scores = torch.einsum("ebhi,ebil->ebhl", kq_query, context)  # (E, B, H, L)
        weights = self._attention_weights(scores, None)  # (E, B, H, L)
        mixed = torch.einsum("ebhl,ebil->ebhi", weights, context)  # (E, B, H, D)
        readout = self.OV[..., -K:, :]  # (E, H, K, D): label rows of OV_h
        prediction = query[..., -K:] + torch.einsum("ehki,ebhi->ebk", readout, mixed)  # (E, B, K)
        return prediction.squeeze(-1) if K == 1 else prediction

    def forward_sequence(self, Z: torch.Tensor) -> torch.Tensor:
        """TF(Z) of (2.2) at every position under the strict causal mask: (E, B, D, T) -> same.

        Token t attends to tokens 0..t-1; token 0 sees none and keeps its residual only. The
        mask applies to every variant (the paper's (5.1) has none; at the query column the two
        agree when the query's own value is zero, e.g. on the pattern OV last row (0, .., 0, 1)).
        """
        T = Z.shape[-1]
        kq_Z = torch.einsum("ehij,ebjs->ebhis", self.KQ, Z)  # (E, B, H, D, T)
        scores = torch.einsum("ebit,ebhis->ebhst", Z, kq_Z)  # (E, B, H, T queries, T keys)
        keep = torch.ones(T, T, dtype=torch.bool, device=Z.device).tril(diagonal=-1)  # key < query
        weights = self._attention_weights(scores, keep)  # (E, B, H, T, T)
        mixed = torch.einsum("ebjt,ebhst->ebhjs", Z, weights)  # (E, B, H, D, T)
        return Z + torch.einsum("ehij,ebhjs->ebis", self.OV, mixed)  # (E, B, D, T)


class KernelSumModel(nn.Module):
    """The reparametrised predictor (3.2) with parameters omega, mu of shape (E, H).

    ``y_hat = sum_h mu_h sum_i y_i softmax_i(omega_h x_i^T x_q)``: multi-head softmax attention
    restricted to its trained pattern (KQ11 = omega_h I, OV last row (0, ..., 0, mu_h)).
    Evaluated by ``numerics.kernel_sum_prediction``.

    >>> from icl_verify.numerics import sample_linear_regression
    >>> from icl_verify.settings import Setting
    >>> model = KernelSumModel(torch.tensor([[0.13, -0.13]]), torch.tensor([[3.45, -3.45]]))
    >>> g = torch.Generator().manual_seed(0)
    >>> tuple(model(sample_linear_regression((1, 16), Setting(5, 40, 0.1), generator=g)).shape)
    (1, 16)
    """

    def __init__(self, omega: torch.Tensor, mu: torch.Tensor) -> None:
        super().__init__()
        omega, mu = torch.as_tensor(omega), torch.as_tensor(mu)
        if omega.ndim != 2 or omega.shape != mu.shape:
            raise ValueError(
                f"omega and mu must both have shape (E, H), got {tuple(omega.shape)} "
                f"and {tuple(mu.shape)}"
            )
        self.omega = nn.Parameter(omega.clone())  # (E, H)
        self.mu = nn.Parameter(mu.clone())  # (E, H)

    def forward(self, prompts: Prompts) -> torch.Tensor:
        """Prompts with batch shape (E, B) -> predictions (E, B)."""
        return kernel_sum_prediction(
            self.omega[:, None, :], self.mu[:, None, :], prompts.X, prompts.y, prompts.x_query
        )
