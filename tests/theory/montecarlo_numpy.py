"""Monte Carlo of in-context linear regression in numpy, the independent source for theory tests.

Data model of He et al. (2025), Section 2 (reference §0.2): x_1..x_L, x_q ~ N(0, I_d),
beta ~ N(0, I_d / d), y_i = beta^T x_i + eps_i, y_q = beta^T x_q + eps_q, eps ~ N(0, sigma2).

Every predictor tested here is linear in the labels given the covariates,
y_hat = w^T y with weights w = w(X, x_q) of shape (L,). For such a predictor

    E_{beta, eps}[(w^T y - y_q)^2 | X, x_q] = ||X^T w - x_q||^2 / d + sigma2 ||w||^2 + sigma2   (*)

exactly: w^T y - y_q = (X^T w - x_q)^T beta + w^T eps - eps_q is a sum of three
independent zero-mean terms with variances ||X^T w - x_q||^2 / d (beta ~ N(0, I/d)),
sigma2 ||w||^2 and sigma2. Averaging (*) over sampled (X, x_q) is an unbiased
estimate of the risk with much smaller variance than sampling beta and eps too
(Rao-Blackwellisation); `plain_risk` does the latter, to cross-check (*).

This module never imports `theory` or `numerics`: it evaluates the predictors
themselves, not the formulas under test.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

# weights(X, x_q) -> w: X (n, L, d), x_q (n, d) -> (n, L)
Weights = Callable[[np.ndarray, np.ndarray], np.ndarray]
# matrix_weights(X) -> W with w = W x_q: X (n, L, d) -> (n, L, d)
QueryLinearWeights = Callable[[np.ndarray], np.ndarray]


@dataclass(frozen=True)
class Estimate:
    """A Monte Carlo mean and its standard error (sample std / sqrt(n))."""

    mean: float
    se: float
    n: int


def conditional_risk(w: np.ndarray, X: np.ndarray, x_q: np.ndarray, sigma2: float) -> np.ndarray:
    """Identity (*): risk of w^T y given (X, x_q); w (n, L), X (n, L, d), x_q (n, d) -> (n,)."""
    d = X.shape[-1]
    residual = np.einsum("nld,nl->nd", X, w) - x_q  # X^T w - x_q, (n, d)
    return np.sum(residual**2, axis=-1) / d + sigma2 * np.sum(w**2, axis=-1) + sigma2


def query_averaged_risk(W: np.ndarray, X: np.ndarray, sigma2: float) -> np.ndarray:
    """Identity (*) averaged over x_q for weights w = W x_q; W, X (n, L, d) -> (n,).

    ||X^T W - I||_F^2 / d + sigma2 ||W||_F^2 + sigma2, since E ||B x_q||^2 = ||B||_F^2
    for x_q ~ N(0, I).
    """
    d = X.shape[-1]
    residual = np.einsum("nld,nle->nde", X, W, optimize=True) - np.eye(d)  # X^T W - I, (n, d, d)
    return np.sum(residual**2, axis=(-2, -1)) / d + sigma2 * np.sum(W**2, axis=(-2, -1)) + sigma2


def _chunked_mean(per_prompt: Callable[[int], np.ndarray], n: int, chunk: int) -> Estimate:
    """Mean and SE of per-prompt values produced chunk by chunk (memory stays O(chunk L d))."""
    total = total_sq = 0.0
    done = 0
    while done < n:
        values = per_prompt(min(chunk, n - done))
        total += float(values.sum())
        total_sq += float((values**2).sum())
        done += values.size
    mean = total / n
    variance = max(total_sq / n - mean * mean, 0.0) * n / (n - 1)
    return Estimate(mean=mean, se=float(np.sqrt(variance / n)), n=n)


def sample_covariates(
    rng: np.random.Generator, n: int, d: int, L: int
) -> tuple[np.ndarray, np.ndarray]:
    """n prompts' covariates: X (n, L, d) and x_q (n, d), all N(0, 1) entries."""
    return rng.standard_normal((n, L, d)), rng.standard_normal((n, d))


def risk(
    weights: Weights,
    d: int,
    L: int,
    sigma2: float,
    rng: np.random.Generator,
    n: int,
    chunk: int = 4_096,
    baseline: Weights | None = None,
) -> Estimate:
    """Risk E(w^T y - y_q)^2 of a label-linear predictor: identity (*) averaged over n prompts.

    With a `baseline` predictor, the paired difference risk(weights) - risk(baseline) on the
    same prompts instead (its SE is small when the two predictors are close).
    """

    def per_prompt(m: int) -> np.ndarray:
        X, x_q = sample_covariates(rng, m, d, L)
        value = conditional_risk(weights(X, x_q), X, x_q, sigma2)
        if baseline is not None:
            value = value - conditional_risk(baseline(X, x_q), X, x_q, sigma2)
        return value

    return _chunked_mean(per_prompt, n, chunk)


def query_linear_risk(
    matrix_weights: QueryLinearWeights,
    d: int,
    L: int,
    sigma2: float,
    rng: np.random.Generator,
    n: int,
    chunk: int = 4_096,
) -> Estimate:
    """Risk of a predictor also linear in x_q (w = W(X) x_q): `query_averaged_risk` over n X's."""

    def per_prompt(m: int) -> np.ndarray:
        X = rng.standard_normal((m, L, d))
        return query_averaged_risk(matrix_weights(X), X, sigma2)

    return _chunked_mean(per_prompt, n, chunk)


def plain_risk(
    weights: Weights,
    d: int,
    L: int,
    sigma2: float,
    rng: np.random.Generator,
    n: int,
    chunk: int = 4_096,
) -> Estimate:
    """The same risk by plain Monte Carlo: beta, label noise and query noise sampled too."""

    def per_prompt(m: int) -> np.ndarray:
        X, x_q = sample_covariates(rng, m, d, L)
        beta = rng.standard_normal((m, d)) / np.sqrt(d)
        y = np.einsum("nld,nd->nl", X, beta) + np.sqrt(sigma2) * rng.standard_normal((m, L))
        y_q = np.sum(x_q * beta, axis=-1) + np.sqrt(sigma2) * rng.standard_normal(m)
        return (np.sum(weights(X, x_q) * y, axis=-1) - y_q) ** 2

    return _chunked_mean(per_prompt, n, chunk)


def softmax_attention_weights(omega, mu) -> Weights:
    """Weights of predictor (3.2): y_hat = sum_h mu_h sum_i y_i softmax(omega_h x_i^T x_q)_i."""
    omega = np.asarray(omega, dtype=float)
    mu = np.asarray(mu, dtype=float)

    def weights(X: np.ndarray, x_q: np.ndarray) -> np.ndarray:
        scores = np.einsum("nld,nd->nl", X, x_q)[:, None, :] * omega[None, :, None]  # (n, H, L)
        scores -= scores.max(axis=-1, keepdims=True)
        attention = np.exp(scores)
        attention /= attention.sum(axis=-1, keepdims=True)
        return np.einsum("h,nhl->nl", mu, attention)

    return weights


def one_step_gd_weights(eta: float, debiased: bool) -> QueryLinearWeights:
    """W of one-step GD, (eta / L) X, or of debiased GD (4.11), (eta / L) (X - xbar); w = W x_q."""

    def matrix_weights(X: np.ndarray) -> np.ndarray:
        centred = X - X.mean(axis=1, keepdims=True) if debiased else X
        return eta / X.shape[1] * centred

    return matrix_weights


def ridge_weights(sigma2: float) -> QueryLinearWeights:
    """W = X A^{-1} of the posterior mean x_q^T A^{-1} X^T y, A = X^T X + sigma2 d I; w = W x_q."""

    def matrix_weights(X: np.ndarray) -> np.ndarray:
        d = X.shape[-1]
        gram = np.einsum("nld,nle->nde", X, X, optimize=True) + sigma2 * d * np.eye(
            d
        )  # A, (n, d, d)
        # A is symmetric positive definite with eigenvalues >= sigma2 d: inv is accurate
        return np.einsum("nld,nde->nle", X, np.linalg.inv(gram), optimize=True)

    return matrix_weights


def as_query_weights(matrix_weights: QueryLinearWeights) -> Weights:
    """The weights w = W(X) x_q of a query-linear predictor, for `risk` and `plain_risk`."""
    return lambda X, x_q: np.einsum("nld,nd->nl", matrix_weights(X), x_q)
