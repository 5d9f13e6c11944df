"""What the transformers of Chen, Zhao, Zou (2024) Props. 4.1/4.2 compute, and its rounding bound.

The paper's constructions (reference chen2024 §3.3-3.4) claim that one linear-attention layer
with d heads runs Algorithm 1 (feature-label correlations ``r_hat = X^T y / n``, every covariate,
context and query, rescaled to ``x_tilde = r_hat * x``; Eq. (4.2)) and that t single-head layers
stacked on it run t steps of GD (4.3) on the preprocessed examples, predicting
``<w_tilde^t, R_hat x_{n+i}>`` at every query. This module is the formula side, numpy float64,
written independently of the network (`numerics._core.linear_transformer`):

- `preprocessed_prompt`: Algorithm 1's output as the prompt matrix (4.2);
- `preprocessed_gd_predictions`: the query predictions after 0, 1, ..., t GD steps;
- `absolute_evaluation`: the same computation on absolute values, every term adding
  (Higham's ``f_abs``), the scale of the rounding bound;
- `network_roundings`, `algorithm_roundings`, `normalised_error_bound`: the stated bound on
  ``|network - algorithm| / f_abs``.

Both sides are divided by the same ``f_abs``, computed here from the prompts: dividing the
network's output by its own absolute evaluation would hide a uniform scale error (a key
weight without its 1/n scales x_tilde and its ``f_abs`` alike).

The bound (Higham, *Accuracy and Stability of Numerical Algorithms*, 2nd ed., §3.1-3.4): a
straight-line program of sums and products computes each output as a sum of monomials of its
inputs, each multiplied by at most K factors ``(1 + delta)``, ``|delta| <= u``; then
``|fl(f) - f| <= gamma_K f_abs`` with ``gamma_K = K u / (1 - K u)`` and ``f_abs`` the same
program evaluated on absolute values (no cancellation). K counts the roundings along the
longest chain; products by 0 or 1 and sums with exact zeros are exact in IEEE arithmetic, so
the constructions' selection matrices add none (and an inner product of length p with k
non-zero terms costs at most k roundings per monomial, in any summation order). Assumes no
underflow or overflow. Both computations have the same ``f_abs`` (the network's residual
recursion on absolute values equals the algorithm's), so
``|network - algorithm| <= (gamma_net + gamma_alg) f_abs``.
"""

from __future__ import annotations

import numpy as np

UNIT_ROUNDOFF = {"float64": 2.0**-53, "float32": 2.0**-24}  # u = eps / 2, round to nearest


def _check_steps(t: int) -> int:
    if isinstance(t, bool) or int(t) != t or t < 0:
        raise ValueError(f"t must be an integer >= 0, got {t!r}")
    return int(t)


def _check_eta(eta: float) -> float:
    eta = float(eta)
    if not np.isfinite(eta) or eta <= 0:
        raise ValueError(f"eta must be a finite number > 0, got {eta!r}")
    return eta


def higham_gamma(k: int, u: float) -> float:
    """Higham's ``gamma_k = k u / (1 - k u)``: ``|prod_{i<=k} (1 + delta_i)^{±1} - 1| <= gamma_k``.

    >>> round(higham_gamma(10, 2.0**-53) / (10 * 2.0**-53), 12), higham_gamma(2, 0.25)
    (1.0, 1.0)
    """
    if k < 0 or k * u >= 1:
        raise ValueError(f"k must be an integer in [0, 1/u), got {k!r}")
    return k * u / (1 - k * u)


def preprocessed_prompt(X: np.ndarray, y: np.ndarray, X_query: np.ndarray) -> np.ndarray:
    """Algorithm 1's output as the prompt matrix (4.2) of Chen et al. (2024) (reference §3.1).

    ``r_hat = X^T y / n``; the columns are ``(r_hat * x_i, y_i)`` for the n examples and
    ``(r_hat * x_{n+i}, 0)`` for the q queries. Shapes: X (..., n, d), y (..., n),
    X_query (..., q, d) -> (..., d+1, n+q).

    >>> X = np.array([[1.0, 2.0], [3.0, 0.0]]); y = np.array([1.0, 1.0])
    >>> preprocessed_prompt(X, y, np.array([[1.0, 1.0]]))  # r_hat = (2, 1)
    array([[2., 6., 2.],
           [2., 0., 1.],
           [1., 1., 0.]])
    """
    r_hat = np.einsum("...nd,...n->...d", X, y) / X.shape[-2]  # (..., d)
    tokens = np.concatenate([X, X_query], axis=-2) * r_hat[..., None, :]  # (..., n+q, d)
    labels = np.concatenate([y, np.zeros(X_query.shape[:-1])], axis=-1)  # (..., n+q)
    return np.concatenate([np.swapaxes(tokens, -1, -2), labels[..., None, :]], axis=-2)


def _gd_path(X_tilde, y, X_query_tilde, eta: float, t: int) -> np.ndarray:
    """Query predictions ``<w^l, x_tilde_q>`` of GD (4.3) from w^0 = 0, l = 0..t: (..., t+1, q)."""
    n = X_tilde.shape[-2]
    step = eta / n
    w = np.zeros(X_tilde.shape[:-2] + X_tilde.shape[-1:])  # (..., d)
    path = [np.zeros(X_query_tilde.shape[:-1])]  # (..., q) per step
    for _ in range(t):
        residual = y - np.einsum("...nd,...d->...n", X_tilde, w)  # (..., n)
        w = w + step * np.einsum("...nd,...n->...d", X_tilde, residual)
        path.append(np.einsum("...qd,...d->...q", X_query_tilde, w))
    return np.stack(path, axis=-2)


def preprocessed_gd_predictions(
    X: np.ndarray, y: np.ndarray, X_query: np.ndarray, eta: float, t: int
) -> np.ndarray:
    """Predictions ``<w_tilde^l, R_hat x_{n+i}>`` of GD on Algorithm 1's data, l = 0, ..., t.

    Chen et al. (2024) eq. (4.3) (reference §3.2): ``w^0 = 0``,
    ``w^{l+1} = w^l + (eta/n) X_tilde^T (y - X_tilde w^l)`` with ``X_tilde = X R_hat``; every
    query is predicted by ``<w^l, R_hat x_{n+i}>``. Shapes: X (..., n, d), y (..., n),
    X_query (..., q, d) -> (..., t+1, q) (row 0 is the zero prediction).

    >>> X = np.array([[1.0, 0.0], [0.0, 1.0]]); y = np.array([2.0, 4.0])  # r_hat = (1, 2)
    >>> preprocessed_gd_predictions(X, y, np.array([[1.0, 1.0]]), eta=1.0, t=2)
    array([[0. ],
           [9. ],
           [1.5]])
    """
    eta, t = _check_eta(eta), _check_steps(t)
    r_hat = np.einsum("...nd,...n->...d", X, y) / X.shape[-2]  # (..., d)
    X_tilde = X * r_hat[..., None, :]  # (..., n, d)
    return _gd_path(X_tilde, y, X_query * r_hat[..., None, :], eta, t)


def absolute_evaluation(
    X: np.ndarray, y: np.ndarray, X_query: np.ndarray, eta: float, t: int
) -> tuple[np.ndarray, np.ndarray]:
    """Higham's ``f_abs`` of Algorithm 1 and of its GD predictions: every term taken positive.

    ``r_abs = |X|^T |y| / n``, ``x_abs = r_abs * |x|``; GD on the absolute values with the signs
    chosen so every term adds: ``w^{l+1} = w^l + (eta/n) X_abs^T (|y| + X_abs w^l)`` (that is,
    `_gd_path` with labels ``-|y|`` and step ``-eta``), predictions ``<w^l, x_abs_q>``.
    Returns (the prompt matrix (4.2) on absolute values (..., d+1, n+q), the predictions
    (..., t+1, q)). The network's computation has the same ``f_abs``: its context label slots
    hold ``|y| + X_abs w^l`` and its query slots the predictions.

    >>> X = np.array([[1.0, -1.0], [0.0, 1.0]]); y = np.array([2.0, -4.0])
    >>> matrix, path = absolute_evaluation(X, y, np.array([[1.0, 1.0]]), eta=1.0, t=1)
    >>> matrix[:2, 2], path[1]  # r_abs = (1, 3), x_abs_q = (1, 3), w^1 = (1/2)(2, 6+12)
    (array([1., 3.]), array([28.]))
    """
    eta, t = _check_eta(eta), _check_steps(t)
    X, y, X_query = np.abs(X), np.abs(y), np.abs(X_query)
    matrix = preprocessed_prompt(X, y, X_query)
    d, n = X.shape[-1], X.shape[-2]
    tokens = np.swapaxes(matrix[..., :d, :], -1, -2)  # (..., n+q, d)
    return matrix, _gd_path(tokens[..., :n, :], -y, tokens[..., n:, :], -eta, t)


def network_roundings(d: int, n: int, t: int, input_roundings: int = 0) -> int:
    """K of the network of Props. 4.1/4.2 (`numerics._core.linear_transformer`), per output.

    ``input_roundings`` (0 in float64, 1 for float32 inputs cast from float64) is added to every
    input; the weights 1/n and -eta/n carry one rounding more (computed, then cast). Per
    monomial, with i = input_roundings and w = i + 1:

    - layer 1 (d heads of dim 3): key ``fl(1/n) y_j`` (w + i + 1), ``K^T Q`` times ``x_k``
      (+ i + 1), ``V M K^T Q`` sums n non-zero products (+ i + n): ``c1 = n + 2 + w + 3i``
      for ``x_tilde``; the label row is copied exactly;
    - each GD layer: the Gram ``<x_tilde_j, x_tilde_k>`` (2 c1 + d), ``V_j = fl(-eta/n) Y_j``
      (+ w + 1), the sum over n examples (+ n), the residual (+ 1):
      ``c(Y^{l+1}) = c(Y^l) + 2 c1 + d + n + w + 2``, ``c(Y^0) = i``.

    Returns c1 for t = 0 (Prop. 4.1's output) and ``i + t (2 c1 + d + n + w + 2)`` otherwise.

    >>> network_roundings(4, 10, 0), network_roundings(4, 10, 2)
    (13, 86)
    """
    i = input_roundings
    weight = i + 1
    first = n + 2 + weight + 3 * i
    if t == 0:
        return first
    return i + t * (2 * first + d + n + weight + 2)


def algorithm_roundings(d: int, n: int, t: int) -> int:
    """K of `preprocessed_prompt` / `preprocessed_gd_predictions` in float64, per output.

    ``r_hat = X^T y / n`` (n products and sums, one division: n + 1), ``x_tilde = r_hat x``
    (+1): c1 = n + 2. A GD step: ``X_tilde w`` (c1 + c(w) + d), the residual (+1),
    ``X_tilde^T residual`` (+ c1 + n), times ``fl(eta/n)`` (+2) and added (+1):
    ``c(w^{l+1}) = c(w^l) + 2 c1 + d + n + 4``; the prediction ``<w^t, x_tilde_q>`` adds c1 + d.

    >>> algorithm_roundings(4, 10, 0), algorithm_roundings(4, 10, 2)
    (12, 100)
    """
    first = n + 2
    if t == 0:
        return first
    return t * (2 * first + d + n + 4) + first + d


def normalised_error_bound(d: int, n: int, t: int, precision: str = "float64") -> float:
    """Bound on ``|network - algorithm| / F_hat`` (Props. 4.1/4.2; module docstring), F_hat the
    float64 `absolute_evaluation` of the same prompts (one scale for both sides).

    With ``|a - f| <= g_a F``, ``|b - f| <= g_b F`` (a the network in `precision`, b the float64
    algorithm, f exact, F the exact ``f_abs``) and ``F_hat >= (1 - g_b) F`` (`absolute_evaluation`
    rounds like the algorithm and adds no cancellation): ``|a - b| / F_hat <= (g_a + g_b) /
    (1 - g_b)``. g_a is the network's gamma in `precision` (float32: inputs and weights cast
    from float64, one rounding each more), g_b the float64 gamma of `algorithm_roundings`.
    t = 0 is Prop. 4.1's layer (rows 1..d of its output), t >= 1 the prediction after t GD
    layers. Depends only on (d, n, t) and the unit roundoff.

    >>> [f"{normalised_error_bound(8, 64, 3, p):.2e}" for p in ("float64", "float32")]
    ['1.47e-13', '3.90e-05']
    """
    if precision not in UNIT_ROUNDOFF:
        raise ValueError(f"precision must be one of float64, float32, got {precision!r}")
    cast = int(precision == "float32")
    g_a = higham_gamma(network_roundings(d, n, t, cast), UNIT_ROUNDOFF[precision])
    g_b = higham_gamma(algorithm_roundings(d, n, t), UNIT_ROUNDOFF["float64"])
    return (g_a + g_b) / (1 - g_b)
