"""Preprocess-then-GD of Chen, Zhao, Zou (2024) §4-5 and App. D as formulas, in float64 numpy.

Reference `chen2024.md` §3.1-3.2 (Algorithm 1, eq. 4.3), §4.1-4.2 (Theorems 5.1, 5.2 and
Lemmas D.1-D.3, D.5-D.7) and §6 (the excess risk the proofs bound, with no factor 1/2):

- the population correlations ``R = diag(Sigma w*)`` and the support margin
  ``beta = min_{i in S} |r_i|`` (`population_correlations`, `support_margin`);
- the closed form (D.1-D.3) of the GD iterate on preprocessed covariates and its excess risk
  split into bias, variance and the cross term the paper leaves out (`preprocessed_gd_closed_form`);
- the bound expressions, with every constant the theorems hide set to 1:
  Theorem 5.1 ``(log t / beta) sqrt(A)`` at the prescribed eta and t (`theorem_5_1_bound`),
  Theorem 5.2 ``log t sqrt(sigma^2 Tr(Sigma) log(d/delta) / n)`` (`theorem_5_2_bound`),
  Lemma D.1 ``K sqrt(s log(d/delta) / n)`` (`lemma_d1_bound`), Lemma D.3's sample-covariance
  bound ``||Sigma|| max(sqrt(r/n), r/n, ...)`` (`lemma_d3_bound`), Lemma D.2's sample size
  ``s log(d/delta) / beta^2`` (`lemma_d2_sample_size`) and an explicit-constant version of it
  from the Gaussian tail of ``r_hat_i`` (`support_retention_sample_size`, **derived here**),
  and the exact (Cramér) exponents with which its proof's per-coordinate tails fall with n
  (`product_mean_rate`, `support_loss_rates`, **re-derived**: the lemma's constant is unstated);
- for the ``±1/sqrt(s)`` prior of §4.3: Theorem 5.1's constants (`sign_prior_constants`),
  §4.3's bounds on ``s / (n^2 beta^2)`` in both readings (`margin_term_bounds`).

``log t`` in the bounds is read as ``max(log t, 1)``: the theorems' ``log t`` is an order
factor (the proofs get it from a harmonic sum over the steps), and at the prescribed ``t < e``
(small n) the bare logarithm would make the bound 0 or negative.

Nothing here imports torch.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

__all__ = [
    "PreprocessedGD",
    "RateBound",
    "coordinate_loss_probability",
    "lemma_d1_bound",
    "lemma_d2_sample_size",
    "margin_term_bounds",
    "population_correlations",
    "preprocessed_gd_closed_form",
    "product_mean_rate",
    "sign_prior_constants",
    "support_loss_rates",
    "support_margin",
    "support_retention_sample_size",
    "SupportLossRates",
    "theorem_5_1_bound",
    "theorem_5_2_bound",
]


def _quadratic(a: np.ndarray, b: np.ndarray, covariance) -> np.ndarray:
    """``a^T Sigma b`` over the last axis; Sigma None (identity), (d,) diagonal or (d, d)."""
    if covariance is None:
        return np.sum(a * b, axis=-1)
    covariance = np.asarray(covariance, dtype=float)
    if covariance.ndim == 1:
        return np.sum(a * covariance * b, axis=-1)
    return np.einsum("...i,ij,...j->...", a, covariance, b)


def population_correlations(w_star, covariance=None) -> np.ndarray:
    """Algorithm 1's population correlations ``r = E[x y] = Sigma w*`` (reference §3.1), the
    diagonal of R. Sigma None (identity), (d,) diagonal or (d, d); w_star (..., d) -> (..., d).

    >>> population_correlations([0.5, 0.0, -0.5], [2.0, 1.0, 0.5]).tolist()
    [1.0, 0.0, -0.25]
    """
    w_star = np.asarray(w_star, dtype=float)
    if covariance is None:
        return w_star.copy()
    covariance = np.asarray(covariance, dtype=float)
    if covariance.ndim == 1:
        return covariance * w_star
    return np.einsum("ij,...j->...i", covariance, w_star)


def support_margin(w_star, covariance=None) -> np.ndarray:
    """``beta = min_{i in S} |r_i|``, S the support of w* (Theorem 5.1's beta, reference §4):
    the smallest population correlation Algorithm 1 must keep. w_star (..., d) -> (...,).

    >>> float(support_margin([0.5, 0.0, -0.5], [2.0, 1.0, 0.5]))
    0.25
    """
    w_star = np.asarray(w_star, dtype=float)
    r = np.abs(population_correlations(w_star, covariance))
    return np.min(np.where(w_star != 0, r, np.inf), axis=-1)


@dataclass(frozen=True)
class PreprocessedGD:
    """t steps of GD on Algorithm 1's covariates, in closed form (reference §4.1, D.1-D.3).

    Attributes:
        w_tilde: (..., d) the iterate ``w_tilde^t`` (the effective raw weight is R_hat w_tilde).
        bias: (...,) ``||Sigma^{1/2} R_hat (I - eta G_hat)^t R_bar w*||^2``.
        variance: (...,) ``eta^2 ||Sigma^{1/2} R_hat (1/n) sum_i (I - eta G_hat)^{i-1}
            X_tilde^T eps||^2``.
        cross: (...,) twice the Sigma-inner product of the two error vectors, which the paper's
            "excess = bias + variance" leaves out (it vanishes only in expectation, if at all).
    """

    w_tilde: np.ndarray
    bias: np.ndarray
    variance: np.ndarray
    cross: np.ndarray

    @property
    def excess(self) -> np.ndarray:
        """``E(R_hat w_tilde^t) = bias + variance + cross`` (eq. D.2, no factor 1/2)."""
        return self.bias + self.variance + self.cross


def _geometric_sums(rate: np.ndarray, steps: int) -> tuple[np.ndarray, np.ndarray]:
    """``(1 - rate)^t`` and ``sum_{i=1}^t (1 - rate)^{i-1}`` per eigen-direction, without the
    cancellation of ``(1 - (1 - rate)^t) / rate`` at small rates."""
    small = np.abs(rate) < 0.5
    safe = np.where(small, rate, 0.0)
    decay = np.where(small, np.exp(steps * np.log1p(-safe)), (1.0 - rate) ** steps)
    loss = np.where(small, -np.expm1(steps * np.log1p(-safe)), 1.0 - decay)  # 1 - (1-rate)^t
    with np.errstate(divide="ignore", invalid="ignore"):
        total = np.where(rate == 0, float(steps), loss / np.where(rate == 0, 1.0, rate))
    return decay, total


def preprocessed_gd_closed_form(X, y, w_star, eta, steps: int, covariance=None) -> PreprocessedGD:
    """The GD iterate on preprocessed covariates and its excess risk in closed form (App. D).

    Algorithm 1: ``r_hat = X^T y / n``, ``x_tilde = R_hat x``; GD from 0 on
    ``(1/2n) ||X_tilde w - y||^2`` (eq. 4.3). With ``G_hat = X_tilde^T X_tilde / n``,
    ``R_bar = diag(1/r_hat_j on S, 0 off S)`` and ``eps = y - X w*`` (reference §4.1, D.1):

        w_tilde^t = (I - (I - eta G_hat)^t) R_bar w* + (eta/n) sum_{i=1}^t (I - eta G_hat)^{i-1}
                    X_tilde^T eps,

    evaluated in the eigenbasis of G_hat (no iteration), and
    ``R_hat w_tilde^t - w* = -R_hat (I - eta G_hat)^t R_bar w* + R_hat (variance part)``,
    whose squared Sigma-norm is bias + variance + cross (`PreprocessedGD`).

    Shapes: X (..., n, d), y (..., n), w_star (..., d), eta a number or (...,) array, steps >= 0;
    covariance None (identity), (d,) diagonal or (d, d). Needs r_hat_i != 0 on S (a.s.).

    >>> X = np.array([[1.0, 0.0], [0.0, 2.0], [1.0, 1.0]])
    >>> w = np.array([1.0, 0.0]); y = X @ w  # noiseless: variance and cross are 0
    >>> part = preprocessed_gd_closed_form(X, y, w, eta=0.5, steps=200)
    >>> round(float(part.bias), 12), float(part.variance), float(part.cross)
    (0.0, 0.0, 0.0)
    """
    X, y, w_star = (np.asarray(a, dtype=float) for a in (X, y, w_star))
    n = X.shape[-2]
    eta = np.asarray(eta, dtype=float)[..., None]  # (..., 1)
    r_hat = np.einsum("...nd,...n->...d", X, y) / n  # (..., d)
    X_tilde = X * r_hat[..., None, :]  # (..., n, d)
    gram = np.swapaxes(X_tilde, -1, -2) @ X_tilde / n  # (..., d, d)
    lam, U = np.linalg.eigh(gram)  # (..., d), (..., d, d)
    noise = y - np.einsum("...nd,...d->...n", X, w_star)  # (..., n): eps
    on_support = w_star != 0
    target = np.where(on_support, w_star / np.where(on_support, r_hat, 1.0), 0.0)  # R_bar w*
    score = np.einsum("...nd,...n->...d", X_tilde, noise) / n  # (..., d): X_tilde^T eps / n
    decay, total = _geometric_sums(eta * lam, steps)  # (..., d) each

    def rotate(coefficients):  # U diag(coefficients) U^T applied to a vector
        return lambda v: np.einsum("...ij,...j->...i", U, coefficients * _project(U, v))

    signal_part = rotate(1.0 - decay)(target)
    noise_part = rotate(eta * total)(score)
    bias_error = -r_hat * rotate(decay)(target)  # (..., d): R_hat w_signal - w*
    noise_error = r_hat * noise_part  # (..., d)
    return PreprocessedGD(
        w_tilde=signal_part + noise_part,
        bias=_quadratic(bias_error, bias_error, covariance),
        variance=_quadratic(noise_error, noise_error, covariance),
        cross=2.0 * _quadratic(bias_error, noise_error, covariance),
    )


def _project(U: np.ndarray, v: np.ndarray) -> np.ndarray:
    """``U^T v`` for U (..., d, d), v (..., d)."""
    return np.einsum("...ji,...j->...i", U, v)


@dataclass(frozen=True)
class RateBound:
    """A theorem's excess-risk bound at sample sizes n, with the step size and step count it
    prescribes (constants set to 1). Arrays of n's shape.

    Attributes:
        value: the bound expression.
        A: the noise level under the square root (Theorem 5.1's A; sigma^2 Tr(Sigma) log(d/delta)/n
            for Theorem 5.2).
        eta: the prescribed step size.
        t: the prescribed number of steps, ``eta t = (1/beta) A^{-1/2}`` (5.1) or
            ``A^{-1/2}`` (5.2); not rounded.
    """

    value: np.ndarray
    A: np.ndarray
    eta: float
    t: np.ndarray


def _log_factor(t: np.ndarray) -> np.ndarray:
    return np.maximum(np.log(t), 1.0)


def theorem_5_1_bound(
    n,
    *,
    d: int,
    s: int,
    sigma: float,
    trace_sigma: float,
    trace_rsr: float,
    norm_rsr: float,
    beta: float,
    delta: float,
) -> RateBound:
    """Theorem 5.1's bound ``E(w_tilde^t) <~ (log t / beta) sqrt(A)`` (reference §4.1), with

        A = sigma^2 Tr(R Sigma R) log(d/delta) / n + sigma^2 s Tr(Sigma) log^2(d/delta) / n^2,

    ``eta = 1 / ||R Sigma R||_2`` and ``eta t = (1/beta) A^{-1/2}`` (the theorem's ``<~`` and
    ``≍`` with constant 1); ``log t`` read as ``max(log t, 1)`` (module docstring). sigma is the
    noise standard deviation; n a number or array.

    >>> b = theorem_5_1_bound(100.0, d=10, s=1, sigma=1.0, trace_sigma=10.0, trace_rsr=1.0,
    ...                       norm_rsr=1.0, beta=1.0, delta=1.0)
    >>> L = math.log(10.0); A = L / 100 + 10 * L**2 / 100**2
    >>> bool(np.isclose(b.A, A)), bool(np.isclose(b.t, A**-0.5))
    (True, True)
    >>> bool(np.isclose(b.value, math.log(A**-0.5) * A**0.5))
    True
    """
    n = np.asarray(n, dtype=float)
    log_d = math.log(d / delta)
    A = sigma**2 * trace_rsr * log_d / n + sigma**2 * s * trace_sigma * log_d**2 / n**2
    eta = 1.0 / norm_rsr
    t = A**-0.5 / (beta * eta)
    return RateBound(_log_factor(t) / beta * np.sqrt(A), A, eta, t)


def theorem_5_2_bound(
    n, *, d: int, sigma: float, trace_sigma: float, norm_sigma: float, delta: float
) -> RateBound:
    """Theorem 5.2's bound for plain GD, ``E(w^t) <~ log t sqrt(sigma^2 Tr(Sigma) log(d/delta)/n)``
    (reference §4.2), with ``eta = 1 / ||Sigma||_2`` and ``eta t = (sigma^2 Tr(Sigma)
    log(d/delta) / n)^{-1/2}`` (constants 1); ``log t`` read as ``max(log t, 1)``.

    >>> b = theorem_5_2_bound(np.array([10.0, 1e4]), d=10, sigma=1.0, trace_sigma=10.0,
    ...                       norm_sigma=1.0, delta=1.0)
    >>> A = 10 * math.log(10.0) / np.array([10.0, 1e4])
    >>> np.allclose(b.value, np.maximum(np.log(A**-0.5), 1) * A**0.5), bool(b.value[0] == A[0]**0.5)
    (True, True)
    """
    n = np.asarray(n, dtype=float)
    A = sigma**2 * trace_sigma * math.log(d / delta) / n
    eta = 1.0 / norm_sigma
    t = A**-0.5 / eta
    return RateBound(_log_factor(t) * np.sqrt(A), A, eta, t)


def lemma_d4_bound(n, *, s: int, rank_sigma: float, rank_rsr: float) -> np.ndarray:
    """Lemma D.4's bound on ``||R_hat Sigma_hat R_hat - R Sigma R||_2`` up to its constant and
    polylog (reference §4.1):

        sqrt(s) [ sqrt(r(R Sigma R)/n) + (sqrt(r(Sigma)) + r(R Sigma R))/n + r(Sigma)/n^{3/2} ],

    with the effective ranks ``r(M) = Tr(M)/||M||_2``; its leading order is n^{-1/2}. n a number
    or array.

    >>> lemma_d4_bound(np.array([100.0, 10_000.0]), s=1, rank_sigma=1.0, rank_rsr=1.0).round(4)
    array([0.121 , 0.0102])
    """
    n = np.asarray(n, dtype=float)
    return math.sqrt(s) * (
        np.sqrt(rank_rsr / n) + (math.sqrt(rank_sigma) + rank_rsr) / n + rank_sigma / n**1.5
    )


def noise_term_independent(n, spectrum, *, sigma: float) -> np.ndarray:
    """``E ||(1/n) R_hat X^T eps||^2`` (Lemma D.7's quantity) when R_hat comes from a sample
    independent of eps, for ``x ~ N(0, diag(spectrum))``, averaged over the ``±1/sqrt(s)`` prior
    on a uniform support [DERIVED]:

        sigma^2/n [ E Tr(R Sigma R) (1 + 1/n) + Tr(Sigma^2) (E w*^T Sigma w* + sigma^2) / n ],

    from ``E (X^T eps/n)_j^2 = sigma^2 Sigma_jj / n`` and ``E r_hat_j^2 = r_j^2 + (Sigma_jj
    (w*^T Sigma w* + sigma^2) + r_j^2)/n`` (Gaussian x: ``E x_j^2 y^2 = Sigma_jj E y^2 + 2 r_j^2``),
    with ``E Tr(R Sigma R) = mean(Sigma_jj^3)`` and ``E w*^T Sigma w* = mean(Sigma_jj)`` over
    supports. It is A of Theorem 5.1 without its log(d/delta) factors and with Tr(Sigma^2) for
    s Tr(Sigma) in the n^-2 term. n a number or array.

    >>> float(noise_term_independent(128.0, np.ones(4), sigma=1.0))  # (1 (1 + 1/128) + 4 2/128)/128
    0.00836181640625
    """
    n = np.asarray(n, dtype=float)
    spectrum = np.asarray(spectrum, dtype=float)
    trace_rsr = float(np.mean(spectrum**3))
    return (
        sigma**2
        / n
        * (
            trace_rsr * (1 + 1 / n)
            + float(np.sum(spectrum**2)) * (float(np.mean(spectrum)) + sigma**2) / n
        )
    )


def sign_prior_constants(spectrum, s: int) -> dict[str, float]:
    """The constants of Theorem 5.1 for the ``±1/sqrt(s)`` prior (reference §4.3) on a diagonal
    ``Sigma = diag(spectrum)``, w* ``±1/sqrt(s)`` on a uniform random support S of size s.

    ``r_i = Sigma_ii w*_i`` gives the guaranteed margin ``beta = min_S |r_i| >= min_j
    Sigma_jj / sqrt(s)`` (every support), the largest ``||R Sigma R|| = max_S Sigma_ii^3 / s <=
    max_j Sigma_jj^3 / s`` and the mean over supports ``E Tr(R Sigma R) = (1/d) sum_j
    Sigma_jj^3``. spectrum (d,).

    >>> {k: float(v) for k, v in sign_prior_constants([0.5, 1.0], 1).items()}  # Tr: (1/8 + 1)/2
    {'beta': 0.5, 'norm_rsr': 1.0, 'trace_rsr': 0.5625}
    """
    spectrum = np.asarray(spectrum, dtype=float)
    return {
        "beta": float(spectrum.min()) / np.sqrt(s),
        "norm_rsr": float(spectrum.max() ** 3) / s,
        "trace_rsr": float(np.mean(spectrum**3)),
    }


def margin_term_bounds(n, *, kappa: float, s: int) -> dict[str, np.ndarray]:
    """§4.3's bound on ``s / (n^2 beta^2)`` for the ``±1/sqrt(s)`` prior (``beta >= 1/(kappa
    sqrt s)``) in both readings (reference §7 item 10): ``kappa^2 s^2 / n^2`` (the algebra's,
    "over_n2") and the printed ``kappa^2 s^2 / n`` ("over_n"); and the condition's right side
    ``1/n`` ("condition"). n (N,) -> arrays (N,).

    >>> b = margin_term_bounds(np.array([32.0, 128.0, 512.0]), kappa=2.0, s=2)
    >>> [float(b[key][0]) for key in ("over_n2", "over_n", "condition")]
    [0.015625, 0.5, 0.03125]
    """
    n = np.asarray(n, dtype=float)
    scale = kappa**2 * s**2
    return {"over_n2": scale / n**2, "over_n": scale / n, "condition": 1.0 / n}


def lemma_d1_bound(n, *, d: int, s: int, delta: float, K: float) -> np.ndarray:
    """Lemma D.1: ``||R_hat - R||_2 <~ K sqrt(s log(d/delta) / n)`` (reference §4.1), with
    ``K = max_i Sigma_ii + sigma^2`` (the lemma's C set to 1). n a number or array.

    >>> round(float(lemma_d1_bound(100.0, d=10, s=4, delta=1.0, K=2.0)), 6)
    0.606971
    """
    return K * np.sqrt(s * math.log(d / delta) / np.asarray(n, dtype=float))


def lemma_d3_bound(n, *, spectrum, delta: float) -> np.ndarray:
    """Lemma D.3 (Bartlett et al. 2020, Thm 9): ``||Sigma_hat - Sigma||_2 <~ ||Sigma|| max(
    sqrt(r/n), r/n, sqrt(log(1/delta)/n), log(1/delta)/n)`` with the effective rank
    ``r = Tr(Sigma)/||Sigma||`` (reference §4.1; the lemma's c set to 1). ``spectrum``: Sigma's
    eigenvalues, (d,); n a number or array.

    >>> round(float(lemma_d3_bound(100.0, spectrum=[1.0, 1.0, 0.5, 0.5], delta=0.05)), 6)
    0.173205
    """
    spectrum = np.asarray(spectrum, dtype=float)
    norm = float(spectrum.max())
    n = np.asarray(n, dtype=float)
    rates = [rank / n for rank in (float(spectrum.sum()) / norm, math.log(1.0 / delta))]
    return norm * np.maximum.reduce([*rates, *(np.sqrt(rate) for rate in rates)])


def lemma_d2_sample_size(*, d: int, s: int, delta: float, beta: float) -> float:
    """Lemma D.2's sample size ``s log(d/delta) / beta^2`` (reference §4.1): beyond a constant
    multiple of it, ``|r_hat_i| >= |r_i| / 2`` on all of S with probability >= 1 - delta.

    >>> round(lemma_d2_sample_size(d=64, s=4, delta=0.05, beta=0.25), 3)
    457.895
    """
    return s * math.log(d / delta) / beta**2


def support_retention_sample_size(*, s: int, delta: float, beta: float, variance: float) -> float:
    """**Derived** explicit-constant form of Lemma D.2: ``n* = 8 V log(s/delta) / beta^2``.

    Reading ``r_hat_i - r_i`` as Gaussian with variance ``V/n``, ``V >= max_i Var(x_i y)``, the
    Chernoff tail ``2 Phi(-z) <= exp(-z^2/2)`` at ``z = |r_i| sqrt(n) / (2 sqrt(V))`` and a
    union bound over the s coordinates of S give ``P(some |r_hat_i| < |r_i|/2) <= s exp(-n
    beta^2 / (8V)) <= delta`` once ``n >= n*``. (The Gaussian reading is the CLT's; the lemma's
    own proof uses a sub-exponential tail with an unstated constant.)

    >>> n_star = support_retention_sample_size(s=4, delta=0.05, beta=0.25, variance=1.5)
    >>> bool(np.isclose(4 * math.exp(-n_star * 0.25**2 / (8 * 1.5)), 0.05))
    True
    """
    return 8.0 * variance * math.log(s / delta) / beta**2


def product_mean_rate(var_x, var_y, cov, level):
    """**[re-derived]** Cramér's exponent of the mean of n iid products ``X Y`` of a centred
    jointly Gaussian pair (variances var_x, var_y, covariance cov > 0) falling to ``level`` < cov:
    ``P(mean <= level) = exp(-n I + o(n))`` with ``I = sup_{theta < 0} theta level - log M(theta)``
    and the product's moment generating function
    ``M(theta) = ((1 - cov theta)^2 - var_x var_y theta^2)^{-1/2}``.

    Setting ``d log M / d theta = level`` gives the quadratic
    ``level D theta^2 + (D - 2 level cov) theta + level - cov = 0``, ``D = cov^2 - var_x var_y``
    (< 0), whose root in ``(1 / (cov - sqrt(var_x var_y)), 0)`` is the maximiser. This is the
    exact exponent of the tail that Lemma D.2's proof (Chen et al. 2024, App. D; reference
    `chen2024.md` §4.1) bounds by a sub-exponential one with an unstated constant, for
    ``r_hat_i = mean_k x_ki y_k`` dropping to ``|r_i| / 2`` (``X = x_i``, ``Y = sign(r_i) y``).
    Near ``level = cov`` it is the Gaussian reading ``(cov - level)^2 / (2 Var(XY))``,
    ``Var(XY) = var_x var_y + cov^2``. Broadcasts; float64.

    >>> round(float(product_mean_rate(1.0, 1.0, 0.5, 0.25)), 6)
    0.030024
    >>> gauss = 0.01**2 / (2 * (1.0 + 0.25))  # the Gaussian reading, level near cov
    >>> bool(abs(float(product_mean_rate(1.0, 1.0, 0.5, 0.49)) / gauss - 1) < 0.01)
    True
    """
    var_x, var_y, cov, level = np.broadcast_arrays(
        *(np.asarray(a, dtype=float) for a in (var_x, var_y, cov, level))
    )
    if np.any(cov <= 0) or np.any(level >= cov) or np.any(cov**2 >= var_x * var_y):
        raise ValueError("product_mean_rate needs 0 < cov < sqrt(var_x var_y) and level < cov")
    D = cov**2 - var_x * var_y  # < 0
    a, b, c = level * D, D - 2 * level * cov, level - cov
    low = 1.0 / (cov - np.sqrt(var_x * var_y))  # the MGF's pole on theta < 0
    with np.errstate(divide="ignore", invalid="ignore"):
        roots = np.stack(
            [(-b + sign * np.sqrt(b**2 - 4 * a * c)) / (2 * a) for sign in (-1.0, 1.0)]
        )
        linear = -c / b  # level = 0: the quadratic is linear
    inside = (roots < 0) & (roots > low)
    theta = np.where(level == 0, linear, np.where(inside[0], roots[0], roots[1]))
    return theta * level + 0.5 * np.log((1 - cov * theta) ** 2 - var_x * var_y * theta**2)


def coordinate_loss_probability(n: int, var_x: float, var_y: float, cov: float) -> float:
    """**[re-derived]** Exactly ``P(|mean_k X_k Y_k| < cov / 2)`` over n iid centred jointly
    Gaussian pairs (variances var_x, var_y, covariance cov > 0): the probability that Algorithm
    1's ``r_hat_i`` loses support coordinate i (Lemma D.2's event, Chen et al. 2024 App. D;
    reference `chen2024.md` §4.1), ``X = x_i``, ``Y = sign(r_i) y``.

    Writing ``Y = (cov / var_x) X + E`` with E independent, ``N(0, var_y - cov^2 / var_x)``, the
    mean given ``A = sum_k X_k^2`` (var_x times a chi-square with n degrees of freedom) is
    Gaussian, centre ``cov A / (var_x n)``, SD ``sqrt(Var E A) / n``; one quadrature over A
    (`scipy.integrate.quad`, relative accuracy 1e-10). Its log falls with n at Cramér's
    exponent (`product_mean_rate`) as n grows.

    >>> round(coordinate_loss_probability(100, 0.5, 1.0, 0.25), 6)
    0.041838
    """
    from scipy.integrate import quad

    if not 0 < cov < math.sqrt(var_x * var_y) or n < 1:
        raise ValueError(
            f"coordinate_loss_probability needs n >= 1 and 0 < cov < sqrt(var_x var_y), got "
            f"n={n}, var_x={var_x}, var_y={var_y}, cov={cov}"
        )
    noise = math.sqrt(var_y - cov**2 / var_x)  # SD of E
    log_norm = -0.5 * n * math.log(2.0) - math.lgamma(0.5 * n)  # of the chi-square(n) density

    def integrand(a):  # a = A / var_x ~ chi-square(n)
        if a <= 0.0:
            return 0.0
        centre, spread = cov * a / n, noise * math.sqrt(var_x * a) * math.sqrt(2.0) / n
        inside = 0.5 * (math.erfc((centre - cov / 2) / spread)
                        - math.erfc((centre + cov / 2) / spread))  # fmt: skip
        return inside * math.exp(log_norm + (0.5 * n - 1) * math.log(a) - 0.5 * a)

    edges = [0.0, *(n * f for f in (0.1, 0.25, 0.5, 0.75, 1.0, 1.5)), n + 40 * math.sqrt(2 * n)]
    return float(sum(quad(integrand, lo, hi, epsabs=0.0, epsrel=1e-10, limit=200)[0]
                     for lo, hi in zip(edges[:-1], edges[1:], strict=True)))  # fmt: skip


@dataclass(frozen=True)
class SupportLossRates:
    """How fast the expected number of support coordinates lost falls with n on a grid
    (`support_loss_rates`): the smallest and largest secant slope ``-Δ log P_i / Δn`` of a
    coordinate's exact loss probability between neighbouring grid points, over the coordinates
    and the supports holding them; and ``exponent``, the smallest Cramér exponent, the rate as
    n -> infinity."""

    slowest: float
    fastest: float
    exponent: float


def support_loss_rates(spectrum, *, s: int, sigma: float, n) -> SupportLossRates:
    """**[re-derived]** Lemma D.2's proof, a tail per support coordinate and a union bound over
    S, for the ``±1/sqrt(s)`` prior on a uniform random support of size s and ``Sigma =
    diag(spectrum)`` (Chen et al. 2024, App. D; reference `chen2024.md` §4.1, §4.3), on the
    sample sizes n (increasing, >= 2).

    ``r_hat_i = mean_k x_ki y_k`` with ``(x_i, sign(w*_i) y)`` centred Gaussian, variances
    ``Sigma_ii`` and ``q + sigma^2`` (``q = w*^T Sigma w* = mean_{j in S} Sigma_jj``), covariance
    ``|r_i| = Sigma_ii / sqrt(s)``, so coordinate i's loss probability
    (`coordinate_loss_probability`) depends on (Sigma_ii, q) alone, and grows with q; q over
    the supports holding i runs from ``(Sigma_ii + the s - 1 smallest others) / s`` to
    ``(Sigma_ii + the s - 1 largest others) / s``. The expected number of coordinates lost,
    ``E sum_{i in S} P_i`` (the union bound, exact as an expectation), is a positive mixture of
    the P_i, so its secant slope of log between two grid points lies between the smallest and
    largest of theirs, and so does any least-squares slope of its log over grid points (a
    positively weighted mean of secants). The secants are taken at the q extremes (the
    loss probability's rate falls with q). spectrum (d,), d > s.

    >>> rates = support_loss_rates(np.linspace(0.5, 1.0, 64), s=4, sigma=0.5, n=[29, 58, 115])
    >>> round(rates.slowest, 4), round(rates.fastest, 4), round(rates.exponent, 4)
    (0.0178, 0.0425, 0.0137)
    """
    spectrum = np.sort(np.asarray(spectrum, dtype=float))
    n = np.asarray(n)
    d = spectrum.size
    if d <= s or s < 1:
        raise ValueError(f"spectrum must hold more than s >= 1 values, got d={d}, s={s}")
    if n.ndim != 1 or n.size < 2 or np.any(np.diff(n) <= 0) or n[0] < 1:
        raise ValueError(f"n must be >= 2 increasing sample sizes >= 1, got {n.tolist()}")
    secants, exponents = [], []
    for i, variance in enumerate(spectrum):
        others = np.delete(spectrum, i)  # sorted
        cov = variance / math.sqrt(s)
        for q in ((variance + others[: s - 1].sum()) / s, (variance + others[d - s :].sum()) / s):
            log_p = np.log([coordinate_loss_probability(int(m), variance, q + sigma**2, cov)
                            for m in n])  # fmt: skip
            secants.append(-np.diff(log_p) / np.diff(n))
            exponents.append(float(product_mean_rate(variance, q + sigma**2, cov, cov / 2)))
    secants = np.concatenate(secants)
    return SupportLossRates(float(secants.min()), float(secants.max()), min(exponents))
