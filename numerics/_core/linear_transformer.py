"""Multi-layer linear-attention network of Chen, Zhao, Zou (2024) (2.2) and its explicit weights.

One layer (reference chen2024 §1.4), columns are tokens, m = n + q:

    H^(i) = W_1 (H^(i-1) + Concat_j [V_j M K_j^T Q_j]),   Q_j = W_Qj H, K_j = W_Kj H, V_j = W_Vj H,

with ``M = diag(1_n, 0_q)``: every token (queries included) attends to the n labelled examples
only. No softmax, no normalisation; W_1 is the merged ReLU-free MLP. The network embeds the
prompt matrix (2.3) (`numerics.embed`) with W_E (d_hid, d+1), stacks layers (heads per
layer may differ) and reads out with W_O (1, d_hid): ``y_hat = W_O H^(L)``, one number per
token, ``y_hat_{n+i}`` the prediction for query i.

The constructions (reference §3.3-3.4, Props. 4.1/C.1 and 4.2/C.2), in the reading this
module builds (reference §7 items 1-2): W_E acts as a (3d, d+1) matrix; the GD layers' value
weight sits at the label row d+1; the read-out is ``W_O = -e_{d+1}``, because the GD layers
leave *minus* the GD prediction in each query's label slot (the paper leaves the sign
implicit):

- `preprocessing_layer(d, n)`, `preprocessing_embedding(d)`: d heads of dim 3, d_hid = 3d; the
  output has ``x_tilde = r_hat * x`` in rows 1..d (examples and queries) and the labels in row
  d+1, 0 at the queries (Algorithm 1, Eq. (4.2));
- `gd_layer(d, n, eta)`: one head; the label row becomes ``Y - (eta/n) sum_{j<=n} Y_j
  <x_tilde_j, x_tilde_k>``: context slots hold GD residuals, query slots minus predictions;
- `preprocess_then_gd_transformer(d, n, eta, t)`: both, t + 1 layers, read-out -e_{d+1};
- `preprocessing_layer_output`, `gd_layer_readouts`: that network on given prompts (numpy in
  and out, on the CPU, in float64 or float32): layer 1's data rows, the read-outs after each
  GD layer.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch
from icl_verify.numerics._core.data import SparsePrompts, embed

__all__ = [
    "LinearAttentionLayer",
    "LinearTransformer",
    "gd_layer",
    "gd_layer_readouts",
    "preprocess_then_gd_transformer",
    "preprocessing_embedding",
    "preprocessing_layer",
    "preprocessing_layer_output",
]


def _check_int(name: str, value, low: int) -> int:
    if isinstance(value, bool) or int(value) != value or value < low:
        raise ValueError(f"{name} must be an integer >= {low}, got {value!r}")
    return int(value)


def _check_eta(eta) -> float:
    eta = float(eta)
    if not math.isfinite(eta) or eta <= 0:
        raise ValueError(f"eta must be a finite number > 0, got {eta!r}")
    return eta


@dataclass(frozen=True)
class LinearAttentionLayer:
    """One layer of (2.2): h linear heads with the mask M, their concatenation, the merged MLP W_1.

    W_Q, W_K, W_V are (h, d_hid/h, d_hid), head j's rows of the query, key and value maps;
    W_1 is (d_hid, d_hid). Head j writes rows ``j d_hid/h ... (j+1) d_hid/h - 1`` of the
    concatenation.
    """

    W_Q: torch.Tensor  # (h, d_head, d_hid)
    W_K: torch.Tensor  # (h, d_head, d_hid)
    W_V: torch.Tensor  # (h, d_head, d_hid)
    W_1: torch.Tensor  # (d_hid, d_hid)

    def __post_init__(self) -> None:
        shape = tuple(self.W_Q.shape)
        if len(shape) != 3 or shape[0] * shape[1] != shape[2]:
            raise ValueError(f"W_Q must have shape (h, d_hid/h, d_hid), got {shape}")
        for name in ("W_K", "W_V"):
            if tuple(getattr(self, name).shape) != shape:
                got = tuple(getattr(self, name).shape)
                raise ValueError(f"{name} must have W_Q's shape {shape}, got {got}")
        if tuple(self.W_1.shape) != (shape[2], shape[2]):
            want, got = (shape[2], shape[2]), tuple(self.W_1.shape)
            raise ValueError(f"W_1 must have shape (d_hid, d_hid) = {want}, got {got}")

    @property
    def n_heads(self) -> int:
        return self.W_Q.shape[0]

    @property
    def d_hid(self) -> int:
        return self.W_Q.shape[2]

    @property
    def KQ(self) -> torch.Tensor:
        """``W_K^T W_Q`` per head, (h, d_hid, d_hid): the bilinear form ``K^T Q = H^T KQ H``."""
        return self.W_K.mT @ self.W_Q

    @property
    def OV(self) -> torch.Tensor:
        """``W_1[:, head rows] W_V`` per head, (h, d_hid, d_hid): what head j adds to the output
        per unit of attention score (W_1 plays the output map of the concatenation)."""
        blocks = self.W_1.reshape(self.d_hid, self.n_heads, -1).transpose(0, 1)  # (h, d_hid, e)
        return blocks @ self.W_V

    def forward(self, H: torch.Tensor, n: int) -> torch.Tensor:
        """``W_1 (H + Concat_j[V_j M K_j^T Q_j])`` for hidden states H (..., d_hid, m)."""
        m = H.shape[-1]
        Q = torch.einsum("hed,...dm->...hem", self.W_Q, H)  # (..., h, e, m)
        K = torch.einsum("hed,...dm->...hem", self.W_K, H)  # (..., h, e, m)
        V = torch.einsum("hed,...dm->...hem", self.W_V, H)  # (..., h, e, m)
        mask = (torch.arange(m, device=H.device) < n).to(H.dtype)  # (m,): the diagonal of M
        scores = K.mT @ Q  # (..., h, m, m): K_j^T Q_j
        heads = (V * mask) @ scores  # (..., h, e, m): V_j M K_j^T Q_j
        attention = heads.reshape(*H.shape[:-2], self.d_hid, m)  # (..., d_hid, m): Concat_j
        return self.W_1 @ (H + attention)

    def to(self, dtype=None, device=None) -> LinearAttentionLayer:
        """The layer with every weight cast to `dtype` / moved to `device`."""
        return LinearAttentionLayer(
            *(w.to(dtype=dtype, device=device) for w in (self.W_Q, self.W_K, self.W_V, self.W_1))
        )

    def absolute(self) -> LinearAttentionLayer:
        """The layer with |weights| (Higham's ``f_abs``: the computation with no cancellation)."""
        return LinearAttentionLayer(self.W_Q.abs(), self.W_K.abs(), self.W_V.abs(), self.W_1.abs())


@dataclass(frozen=True)
class LinearTransformer:
    """``y_hat = W_O TF_L ... TF_1 (W_E E)``: embedding, linear-attention layers, read-out (2.2)."""

    W_E: torch.Tensor  # (d_hid, d+1)
    layers: tuple[LinearAttentionLayer, ...]
    W_O: torch.Tensor  # (1, d_hid)

    def __post_init__(self) -> None:
        object.__setattr__(self, "layers", tuple(self.layers))
        d_hid = self.W_E.shape[0]
        if any(layer.d_hid != d_hid for layer in self.layers):
            raise ValueError(f"every layer must have d_hid = W_E.shape[0] = {d_hid}")
        if tuple(self.W_O.shape) != (1, d_hid):
            raise ValueError(f"W_O must have shape (1, {d_hid}), got {tuple(self.W_O.shape)}")

    def hidden_states(self, E: torch.Tensor, n: int) -> tuple[torch.Tensor, ...]:
        """``(H^(0) = W_E E, H^(1), ..., H^(L))``, each (..., d_hid, m), for prompts E (..., d+1, m)
        whose first n columns are the labelled examples (n in [1, m - 1]: q >= 1 queries)."""
        m = E.shape[-1]
        if isinstance(n, bool) or int(n) != n or not 1 <= n <= m - 1:
            raise ValueError(f"n must be an integer in [1, m-1] = [1, {m - 1}] (q >= 1), got {n!r}")
        states = [self.W_E @ E]  # (..., d_hid, m)
        for layer in self.layers:
            states.append(layer.forward(states[-1], n))
        return tuple(states)

    def readouts(self, E: torch.Tensor, n: int) -> torch.Tensor:
        """``W_O H^(l)`` after every layer l = 1..L: (..., L, m)."""
        states = self.hidden_states(E, n)[1:]
        return torch.stack([(self.W_O @ H)[..., 0, :] for H in states], dim=-2)

    def forward(self, E: torch.Tensor, n: int) -> torch.Tensor:
        """The predictions ``W_O H^(L)`` at every token, (..., m); the queries' are ``[..., n:]``.

        >>> model = preprocess_then_gd_transformer(2, 3, eta=0.5, t=1)
        >>> tuple(model.forward(torch.ones(4, 3, 5, dtype=torch.float64), 3).shape)
        (4, 5)
        """
        return (self.W_O @ self.hidden_states(E, n)[-1])[..., 0, :]

    def to(self, dtype=None, device=None) -> LinearTransformer:
        """The network with every weight cast to `dtype` / moved to `device`."""
        return LinearTransformer(
            self.W_E.to(dtype=dtype, device=device),
            tuple(layer.to(dtype, device) for layer in self.layers),
            self.W_O.to(dtype=dtype, device=device),
        )

    def absolute(self) -> LinearTransformer:
        """The network with |weights|; on |E| it evaluates Higham's ``f_abs`` of every output."""
        return LinearTransformer(
            self.W_E.abs(), tuple(layer.absolute() for layer in self.layers), self.W_O.abs()
        )


def preprocessing_embedding(d: int) -> torch.Tensor:
    """W_E of Prop. 4.1/C.1 as a (3d, d+1) matrix: block i of ``W_E E`` is (x_i; y; 0).

    >>> preprocessing_embedding(2)
    tensor([[1., 0., 0.],
            [0., 0., 1.],
            [0., 0., 0.],
            [0., 1., 0.],
            [0., 0., 1.],
            [0., 0., 0.]], dtype=torch.float64)
    """
    d = _check_int("d", d, 1)
    W_E = torch.zeros(3 * d, d + 1, dtype=torch.float64)  # (3d, d+1)
    blocks = torch.arange(d)
    W_E[3 * blocks, blocks] = 1.0  # row 3i copies x_i
    W_E[3 * blocks + 1, d] = 1.0  # row 3i+1 copies y
    return W_E


def preprocessing_layer(d: int, n: int) -> LinearAttentionLayer:
    """The layer of Prop. 4.1/C.1 (Chen et al. 2024, reference §3.3): Algorithm 1 with d heads.

    Head i (dim 3; only its third row is non-zero, 0-indexed rows of block i are 3i, 3i+1,
    3i+2): ``W_Ki = (1/n) e_{3i+1}``, ``W_Qi = W_Vi = e_{3i}``, so its third output row is
    ``x_i (y/n)^T M x_i = r_hat_i x_i`` at every token. ``W_1`` takes row 3i+2 (that output) to
    row i and row 1 (a copy of y) to row d; the other rows are 0. On ``W_E E`` (see
    `preprocessing_embedding`) the output's rows 0..d-1 are x_tilde and row d the labels, 0 at
    the queries (Eq. (4.2)). The layer is for prompts with n labelled examples.

    >>> layer = preprocessing_layer(3, 10)
    >>> layer.n_heads, layer.d_hid, tuple(layer.W_K.shape), float(layer.W_K[1, 2, 4])
    (3, 9, (3, 3, 9), 0.1)
    """
    d, n = _check_int("d", d, 1), _check_int("n", n, 1)
    d_hid = 3 * d
    W_Q = torch.zeros(d, 3, d_hid, dtype=torch.float64)  # (h=d, 3, 3d)
    W_K = torch.zeros(d, 3, d_hid, dtype=torch.float64)  # (h=d, 3, 3d)
    heads = torch.arange(d)
    W_Q[heads, 2, 3 * heads] = 1.0
    W_K[heads, 2, 3 * heads + 1] = 1.0 / n
    W_1 = torch.zeros(d_hid, d_hid, dtype=torch.float64)  # (3d, 3d)
    W_1[heads, 3 * heads + 2] = 1.0  # x_tilde_i to row i
    W_1[d, 1] = 1.0  # the labels to row d
    return LinearAttentionLayer(W_Q, W_K, W_Q.clone(), W_1)


def gd_layer(d: int, n: int, eta: float) -> LinearAttentionLayer:
    """One GD step (4.3) as the single-head layer of Prop. 4.2/C.2 (reference §3.4), d_hid = 3d.

    ``W_K = W_Q = [[I_d, 0], [0, 0]]``, ``W_V = -(eta/n) e_d e_d^T`` (the label row, 0-indexed d),
    ``W_1 = I``: the label row becomes ``Y_k - (eta/n) sum_{j<=n} Y_j <x_tilde_j, x_tilde_k>``
    (Ahn et al., Lemma 1), the other rows pass unchanged.

    >>> layer = gd_layer(2, 4, eta=0.5)
    >>> layer.n_heads, float(layer.W_V[0, 2, 2]), torch.equal(layer.W_1, torch.eye(6).double())
    (1, -0.125, True)
    """
    d, n, eta = _check_int("d", d, 1), _check_int("n", n, 1), _check_eta(eta)
    d_hid = 3 * d
    W_Q = torch.zeros(1, d_hid, d_hid, dtype=torch.float64)  # (h=1, 3d, 3d)
    W_Q[0, :d, :d] = torch.eye(d, dtype=torch.float64)
    W_V = torch.zeros(1, d_hid, d_hid, dtype=torch.float64)  # (h=1, 3d, 3d)
    W_V[0, d, d] = -eta / n
    return LinearAttentionLayer(W_Q, W_Q.clone(), W_V, torch.eye(d_hid, dtype=torch.float64))


def preprocess_then_gd_transformer(d: int, n: int, eta: float, t: int) -> LinearTransformer:
    """Algorithm 1 then t GD steps: `preprocessing_layer` and t `gd_layer`s, ``W_O = -e_d``.

    The (t+1)-layer network of Chen et al. (2024) §4 (reference §3.4): its prediction at query i
    is ``<w_tilde^t, R_hat x_{n+i}>``, all q queries in parallel. The read-out is *minus* the
    label row (0-indexed d): the GD layers leave ``-<w^l, x_tilde_{n+i}>`` in the query slots,
    so the paper's literal ``+e_{d+1}`` would return the negated prediction.

    >>> model = preprocess_then_gd_transformer(3, 8, eta=0.1, t=2)
    >>> len(model.layers), [layer.n_heads for layer in model.layers], model.W_O[0, 3].item()
    (3, [3, 1, 1], -1.0)
    """
    d, n, t = _check_int("d", d, 1), _check_int("n", n, 1), _check_int("t", t, 0)
    eta = _check_eta(eta)
    W_O = torch.zeros(1, 3 * d, dtype=torch.float64)  # (1, 3d)
    W_O[0, d] = -1.0
    layers = (preprocessing_layer(d, n),) + tuple(gd_layer(d, n, eta) for _ in range(t))
    return LinearTransformer(preprocessing_embedding(d), layers, W_O)


def _embedded(X: np.ndarray, y: np.ndarray, X_query: np.ndarray, dtype: torch.dtype):
    """The prompt matrix (2.3) of float64 prompts, cast to ``dtype``: (B, d+1, n+q)."""
    zeros = np.zeros(X_query.shape[:-1])  # (B, q): the query labels, unused
    prompts = SparsePrompts(
        *(torch.from_numpy(np.asarray(a, dtype=np.float64)) for a in (X, y, X_query, zeros)),
        w_star=torch.zeros(X.shape[0], X.shape[-1], dtype=torch.float64),  # unused
    )
    return embed(prompts).to(dtype)


def preprocessing_layer_output(
    X: np.ndarray, y: np.ndarray, X_query: np.ndarray, precision: str = "float64"
) -> np.ndarray:
    """Rows 1..d+1 of the output of Prop. 4.1's layer (`preprocessing_embedding`, then
    `preprocessing_layer`) on the prompts (X, y, X_query): ``x_tilde = r_hat * x`` of every
    token in rows 1..d and the labels, 0 at the queries, in row d+1 (Eq. (4.2)) up to rounding.

    Computed on the CPU in ``precision`` ("float64" or "float32": weights and prompts cast from
    float64; a GPU's TF32 products would round more than float32 does). Shapes: X (B, n, d),
    y (B, n), X_query (B, q, d) -> (B, d+1, n+q), float64.

    >>> rng = np.random.default_rng(0)
    >>> X, X_query = rng.standard_normal((2, 5, 3)), rng.standard_normal((2, 1, 3))
    >>> y = X @ np.array([1.0, 0.0, -1.0])
    >>> out = preprocessing_layer_output(X, y, X_query)
    >>> r_hat = np.einsum("bnd,bn->bd", X, y) / 5  # Algorithm 1
    >>> bool(np.allclose(out[:, :3, 5:], np.swapaxes(X_query * r_hat[:, None], 1, 2)))
    True
    >>> bool(np.all(out[:, 3, :5] == y)), bool(np.all(out[:, 3, 5:] == 0))
    (True, True)
    """
    d, n = X.shape[-1], X.shape[-2]
    dtype = getattr(torch, precision)
    model = preprocess_then_gd_transformer(d, n, 1.0, 0).to(dtype)  # no GD layer
    states = model.hidden_states(_embedded(X, y, X_query, dtype), n)
    return states[1][:, : d + 1].double().numpy()  # (B, d+1, n+q)


def gd_layer_readouts(
    X: np.ndarray,
    y: np.ndarray,
    X_query: np.ndarray,
    eta: float,
    t: int,
    precision: str = "float64",
) -> np.ndarray:
    """The query read-outs ``-e_{d+1}^T H^(l+1)`` of `preprocess_then_gd_transformer` after
    each GD layer l = 1..t: ``<w_tilde^l, R_hat x_{n+i}>``, l steps of GD (4.3) with step eta on
    Algorithm 1's data, up to rounding (Prop. 4.2).

    On the CPU in ``precision``, as `preprocessing_layer_output`. Shapes: X (B, n, d),
    y (B, n), X_query (B, q, d) -> (B, t, q), float64.

    >>> X = np.array([[[1.0, 0.0], [0.0, 1.0]]])  # n = d = 2; y = X w* with w* = (1, 2)
    >>> y, X_query = np.array([[1.0, 2.0]]), np.array([[[1.0, 1.0]]])
    >>> gd_layer_readouts(X, y, X_query, eta=1.0, t=2)  # r_hat = (1/2, 1): w^1 = (1/4, 1)
    array([[[1.125   ],
            [1.734375]]])
    """
    d, n = X.shape[-1], X.shape[-2]
    dtype = getattr(torch, precision)
    model = preprocess_then_gd_transformer(d, n, eta, t).to(dtype)
    readouts = model.readouts(_embedded(X, y, X_query, dtype), n)  # (B, t+1, n+q)
    return readouts[:, 1:, n:].double().numpy()  # (B, t, q)
