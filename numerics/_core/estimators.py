"""In-context estimators: what a prompt (X, y, x_query) predicts for y_query, batched in torch.

The baselines of He et al. (2025) Section 4.3 and Chen, Zhao, Zou (2024) Sections 3-5, and the
kernel-sum predictor (3.2) that a trained multi-head softmax attention layer reduces to
(reference `he2025.md` §HE-OBS1, §HE-4.11, §HE-4.12, §HE-T4.2iii; `chen2024.md` §3):

- least squares: minimum-norm OLS, ridge(lambda), the Bayes posterior mean
  (ridge with lambda = sigma2 d);
- gradient descent from 0 on the in-context least-squares loss (1/2L) ||X b - y||^2: one step
  (vanilla, debiased (4.11), preconditioned) and t steps;
- softmax kernel regressors: single head (4.12) and the sum over heads (3.2);
- sparse regression: Lasso (FISTA) and preprocess-then-GD (Chen et al. 2024, Algorithm 1).

Every estimator takes X (..., L, d), y (..., L), x_query (..., d) and returns predictions (...,);
parameters (eta, lambda, omega, mu, ...) may be tensors broadcasting against the batch shape
(...), so a grid of parameters is one call. Nothing here imports `theory`.
"""

from __future__ import annotations

import math
import numbers
import warnings
from dataclasses import dataclass

import numpy as np
import torch

__all__ = [
    "LassoSolution",
    "bayes_prediction",
    "feature_label_correlations",
    "gd_coefficients",
    "gd_path",
    "gd_prediction",
    "kernel_head_averages",
    "kernel_regression_prediction",
    "kernel_sum_prediction",
    "lasso_coefficients",
    "lasso_coordinate_descent",
    "lasso_kkt_violations",
    "lasso_prediction",
    "least_squares_coefficients",
    "multi_step_gd_prediction",
    "ols_prediction",
    "preconditioned_gd_prediction",
    "preprocessed_gd_prediction",
    "ridge_prediction",
]


# ---------------------------------------------------------------------------------------------
# argument checks (one line, naming the parameter, its value and the allowed range)


def _parameter(name: str, value, like: torch.Tensor, *, minimum: float | None = None):
    """``value`` as a tensor of ``like``'s dtype/device; finite and ``>= minimum`` when given."""
    tensor = torch.as_tensor(value, dtype=like.dtype, device=like.device)
    bad = ~torch.isfinite(tensor)
    if minimum is not None:
        bad = bad | (tensor < minimum)
    if bool(bad.any()):
        allowed = "finite" if minimum is None else f"finite and >= {minimum:g}"
        shown = value if isinstance(value, numbers.Real) else "a tensor with entries"
        raise ValueError(f"{name} must be {allowed}, got {shown} outside that range")
    return tensor


def _steps(steps) -> int:
    if isinstance(steps, bool) or not isinstance(steps, numbers.Integral) or steps < 0:
        raise ValueError(f"steps must be an integer >= 0, got {steps!r}")
    return int(steps)


def _dot(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """Inner product over the last axis, broadcasting the leading ones."""
    return (a * b).sum(dim=-1)


def _matvec(A: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """A v for A (..., m, n), v (..., n) -> (..., m)."""
    return (A @ v[..., None])[..., 0]


# ---------------------------------------------------------------------------------------------
# least squares: OLS, ridge, Bayes posterior mean


def least_squares_coefficients(X: torch.Tensor, y: torch.Tensor, lam=0.0) -> torch.Tensor:
    """Ridge coefficients ``argmin_b ||X b - y||^2 + lam ||b||^2`` (lam = 0: minimum-norm OLS).

    Computed by a linear solve, never an explicit inverse or pseudo-inverse:

    - ``L >= d``: lam > 0 solves ``(X^T X + lam I_d) b = X^T y``; lam = 0 solves ``R b = Q^T y``
      with the QR factors of X (no squared condition number; bit-reproducible from run to run,
      which LAPACK's gelsy, lstsq's CPU default, is not);
    - ``L < d``: the dual form ``b = X^T (X X^T + lam I_L)^{-1} y``, which at lam = 0 is the
      minimum-norm interpolant ``X^+ y``.

    Shapes: X (..., L, d), y (..., L), lam a number or a tensor broadcasting against (...);
    returns (..., d).

    >>> X = torch.tensor([[1.0, 0.0], [0.0, 2.0], [0.0, 0.0]])
    >>> least_squares_coefficients(X, torch.tensor([1.0, 4.0, 5.0]))
    tensor([1., 2.])
    >>> least_squares_coefficients(torch.tensor([[3.0, 4.0]]), torch.tensor([5.0]))  # min norm
    tensor([0.6000, 0.8000])
    """
    L, d = X.shape[-2:]
    exact_ols = isinstance(lam, numbers.Real) and float(lam) == 0.0
    lam = _parameter("lam", lam, X, minimum=0.0)[..., None, None]  # (..., 1, 1)
    if L < d:
        gram = X @ X.mT + lam * torch.eye(L, dtype=X.dtype, device=X.device)  # (..., L, L)
        return _matvec(X.mT, torch.linalg.solve(gram, y[..., None])[..., 0])
    if exact_ols:  # Householder QR, R b = Q^T y: deterministic, unlike lstsq's default gelsy
        Q, R = torch.linalg.qr(X)  # (..., L, d), (..., d, d)
        return torch.linalg.solve_triangular(R, Q.mT @ y[..., None], upper=True)[..., 0]
    gram = X.mT @ X + lam * torch.eye(d, dtype=X.dtype, device=X.device)  # (..., d, d)
    return torch.linalg.solve(gram, _matvec(X.mT, y)[..., None])[..., 0]


def ols_prediction(X: torch.Tensor, y: torch.Tensor, x_query: torch.Tensor) -> torch.Tensor:
    """Minimum-norm least squares ``y_hat = x_q^T X^+ y`` (Chen et al. 2024 §2.2 baseline).

    Shapes: X (..., L, d), y (..., L), x_query (..., d) -> (...,). For L >= d this is ordinary
    least squares; for L < d the interpolant of least norm.

    >>> X = torch.tensor([[1.0, 0.0], [0.0, 2.0], [0.0, 0.0]])
    >>> ols_prediction(X, torch.tensor([1.0, 4.0, 5.0]), torch.tensor([1.0, 1.0]))
    tensor(3.)
    """
    return _dot(least_squares_coefficients(X, y), x_query)


def ridge_prediction(X: torch.Tensor, y: torch.Tensor, x_query: torch.Tensor, lam) -> torch.Tensor:
    """Ridge regression ``y_hat = x_q^T (X^T X + lam I)^{-1} X^T y`` (lam unnormalised, >= 0).

    Shapes: X (..., L, d), y (..., L), x_query (..., d), lam a number or a tensor broadcasting
    against (...) -> (...,).

    >>> X = torch.tensor([[1.0, 0.0], [0.0, 1.0]])
    >>> ridge_prediction(X, torch.tensor([2.0, 4.0]), torch.tensor([1.0, 1.0]), lam=1.0)
    tensor(3.)
    """
    return _dot(least_squares_coefficients(X, y, lam), x_query)


def bayes_prediction(
    X: torch.Tensor, y: torch.Tensor, x_query: torch.Tensor, sigma2
) -> torch.Tensor:
    """Bayes-optimal prediction ``E[y_q | prompt]``: ridge with ``lam = sigma2 d`` (§HE-T4.2iii).

    Why that lambda: with prior ``beta ~ N(0, I_d / d)`` and ``y = X beta + eps``,
    ``eps ~ N(0, sigma2 I)``, the posterior of beta is Gaussian with precision
    ``X^T X / sigma2 + d I`` and mean ``(X^T X / sigma2 + d I)^{-1} X^T y / sigma2
    = (X^T X + sigma2 d I)^{-1} X^T y``; the query noise has mean 0, so the posterior-mean
    prediction ``x_q^T E[beta | X, y]`` minimises the MSE. It does not depend on the law of x.
    sigma2 = 0 gives the minimum-norm interpolant (the limit of the posterior mean).

    Shapes: X (..., L, d), y (..., L), x_query (..., d), sigma2 >= 0 -> (...,).

    >>> X = torch.tensor([[1.0, 0.0], [0.0, 1.0]])
    >>> bayes_prediction(X, torch.tensor([2.0, 4.0]), torch.tensor([1.0, 1.0]), sigma2=0.5)
    tensor(3.)
    """
    d = X.shape[-1]
    return ridge_prediction(X, y, x_query, _parameter("sigma2", sigma2, X, minimum=0.0) * d)


# ---------------------------------------------------------------------------------------------
# gradient descent on (1/2L) ||X b - y||^2 from b = 0


def _one_step_direction(X: torch.Tensor, y: torch.Tensor, debiased: bool) -> torch.Tensor:
    """(1/L) sum_i y_i x_i, or (1/L) sum_i y_i (x_i - xbar) when debiased; (..., d)."""
    if debiased:
        X = X - X.mean(dim=-2, keepdim=True)  # (..., L, d) centred covariates
    return _matvec(X.mT, y) / X.shape[-2]


def gd_prediction(
    X: torch.Tensor, y: torch.Tensor, x_query: torch.Tensor, eta, *, debiased: bool = False
) -> torch.Tensor:
    """One GD step from 0 (§HE-4.11): ``y_hat = (eta/L) sum_i y_i x_i^T x_q``.

    With ``debiased=True`` it is debiased GD (4.11):
    ``y_hat = (eta/L) sum_i y_i (x_i - xbar)^T x_q``, ``xbar = (1/L) sum_i x_i`` — the omega -> 0
    limit of the two-head (±omega, ±mu) attention with ``eta = 2 omega mu``. Shapes: X (..., L, d),
    y (..., L), x_query (..., d), eta a number or a tensor broadcasting against (...) -> (...,).

    >>> X = torch.tensor([[1.0, 0.0], [3.0, 0.0]])
    >>> y, xq = torch.tensor([1.0, 1.0]), torch.tensor([1.0, 0.0])
    >>> gd_prediction(X, y, xq, 0.5), gd_prediction(X, y, xq, 0.5, debiased=True)
    (tensor(1.), tensor(0.))
    """
    eta = _parameter("eta", eta, X)
    return eta * _dot(_one_step_direction(X, y, debiased), x_query)


def preconditioned_gd_prediction(
    X: torch.Tensor, y: torch.Tensor, x_query: torch.Tensor, gamma, *, debiased: bool = False
) -> torch.Tensor:
    """Preconditioned one-step GD (§HE-5.1-LIN, (5.5)): ``y_hat = (1/L) sum_i y_i x_i^T Gamma x_q``.

    Gamma absorbs the step (Gamma = eta I is `gd_prediction`); ``debiased=True`` centres the
    covariates as in (5.5). This is what one-head linear attention with KQ11 = Gamma computes.
    Shapes: X (..., L, d), y (..., L), x_query (..., d), gamma (..., d, d) -> (...,).

    >>> X = torch.tensor([[1.0, 0.0], [0.0, 1.0]])
    >>> gamma = torch.tensor([[2.0, 0.0], [0.0, 0.0]])
    >>> preconditioned_gd_prediction(X, torch.tensor([1.0, 1.0]), torch.tensor([1.0, 1.0]), gamma)
    tensor(1.)
    """
    gamma = _parameter("gamma", gamma, X)
    return _dot(_one_step_direction(X, y, debiased), _matvec(gamma, x_query))


def gd_path(X: torch.Tensor, y: torch.Tensor, eta, steps) -> torch.Tensor:
    """GD iterates from ``b_0 = 0`` on ``(1/2L) ||X b - y||^2`` at several step counts.

    The recursion ``b <- b + (eta/L) X^T (y - X b)`` of Chen et al. (2024) eq. (4.3) (there on
    preprocessed covariates), recorded at each entry of ``steps`` (non-decreasing integers
    >= 0), summed in an eigenbasis rather than stepped. With ``X^T X / L = V diag(lambda) V^T``
    and ``c = X^T y / L``,

        b_t = V diag(phi_t(lambda)) V^T c,   phi_t(lambda) = sum_{k<t} eta (1 - eta lambda)^k
                                                           = (1 - (1 - eta lambda)^t) / lambda

    (``eta t`` at lambda = 0); when L < d the same sum runs over the L x L kernel
    ``X X^T / L = U diag(lambda) U^T`` (the iterates stay in X's row space):
    ``b_t = X^T U diag(phi_t(lambda)) U^T y / L``. These are the stepped iterates to rounding
    (tested against the step-by-step loop), at the cost of one symmetric eigendecomposition
    however many steps (9000 steps of a d = 16 problem: one 16 x 16 eigh against 9000
    matrix-vector products). ``1 - (1 - eta lambda)^t`` is taken as
    ``-expm1(t log1p(-eta lambda))`` where ``|eta lambda| < 1/2``, so a small eigenvalue keeps
    its relative accuracy. A step too large for a prompt (``eta lambda > 2``) makes its
    iterates overflow to inf/NaN, which are returned as they are.
    Shapes: X (..., L, d), y (..., L), eta a number or a tensor broadcasting against (...);
    returns (..., len(steps), d).

    >>> X = torch.tensor([[1.0, 0.0], [0.0, 1.0]])
    >>> gd_path(X, torch.tensor([2.0, 4.0]), eta=1.0, steps=[0, 1, 2])
    tensor([[0.0000, 0.0000],
            [1.0000, 2.0000],
            [1.5000, 3.0000]])
    """
    steps = [_steps(t) for t in ([steps] if isinstance(steps, numbers.Integral) else list(steps))]
    if not steps or any(a > b for a, b in zip(steps[:-1], steps[1:], strict=True)):
        raise ValueError(f"steps must be a non-empty non-decreasing list of integers, got {steps}")
    eta = _parameter("eta", eta, X)[..., None, None]  # (..., 1, 1)
    L, d = X.shape[-2:]
    if L >= d:  # the d x d Gram matrix
        lam, basis = torch.linalg.eigh(X.mT @ X / L)  # (..., d), (..., d, d)
        rotated = _matvec(basis.mT, _matvec(X.mT, y) / L)  # (..., d): V^T c
    else:  # the L x L kernel matrix
        lam, basis = torch.linalg.eigh(X @ X.mT / L)  # (..., L), (..., L, L)
        rotated = _matvec(basis.mT, y) / L  # (..., L): U^T y / L
    lam = lam[..., None, :]  # (..., 1, r)
    t = torch.tensor(steps, dtype=X.dtype, device=X.device)[:, None]  # (T, 1)
    rate = eta * lam  # (..., 1, r)
    small = rate.abs() < 0.5
    decayed = torch.where(  # 1 - (1 - eta lambda)^t, (..., T, r)
        small,
        -torch.expm1(t * torch.log1p(-torch.where(small, rate, 0.0))),
        1.0 - (1.0 - rate) ** t,
    )
    phi = torch.where(lam != 0, decayed / torch.where(lam != 0, lam, 1.0), eta * t)  # (..., T, r)
    path = (phi * rotated[..., None, :]) @ basis.mT  # (..., T, r) -> (..., T, d) or (..., T, L)
    return path if L >= d else path @ X  # (..., T, d): b_t = X^T a_t


def gd_coefficients(X: torch.Tensor, y: torch.Tensor, eta, steps: int) -> torch.Tensor:
    """t GD steps from ``b_0 = 0`` on ``(1/2L) ||X b - y||^2``: ``b <- b + (eta/L) X^T (y - X b)``.

    This is the recursion of Chen et al. (2024) eq. (4.3) (there on preprocessed covariates),
    the last iterate of `gd_path`. Shapes: X (..., L, d), y (..., L), eta a number or a tensor
    broadcasting against (...), steps >= 0 -> (..., d).

    >>> X = torch.tensor([[1.0, 0.0], [0.0, 1.0]])
    >>> gd_coefficients(X, torch.tensor([2.0, 4.0]), eta=1.0, steps=2)
    tensor([1.5000, 3.0000])
    """
    return gd_path(X, y, eta, [steps])[..., 0, :]


def multi_step_gd_prediction(
    X: torch.Tensor, y: torch.Tensor, x_query: torch.Tensor, eta, steps: int
) -> torch.Tensor:
    """t-step GD prediction ``x_q^T b_t`` with b_t from `gd_coefficients`; t = 1 is `gd_prediction`.

    Shapes: X (..., L, d), y (..., L), x_query (..., d) -> (...,).

    >>> X = torch.tensor([[1.0, 0.0], [0.0, 1.0]])
    >>> multi_step_gd_prediction(X, torch.tensor([2.0, 4.0]), torch.tensor([1.0, 1.0]), 1.0, 2)
    tensor(4.5000)
    """
    return _dot(gd_coefficients(X, y, eta, steps), x_query)


# ---------------------------------------------------------------------------------------------
# softmax kernel regressors (3.2), (4.12)


def kernel_softmax(omega: torch.Tensor, X: torch.Tensor, x_query: torch.Tensor) -> torch.Tensor:
    """Per-head attention weights ``softmax_i(omega_h x_i^T x_q)`` of the kernel sum (3.2).

    The softmax is max-shifted (``exp(z - logsumexp z)``), so any omega is safe. Shapes:
    omega (..., H) broadcasting against the prompt batch (...), X (..., L, d), x_query (..., d)
    -> (..., H, L).

    >>> kernel_softmax(torch.tensor([0.0]), torch.tensor([[1.0], [-1.0]]), torch.tensor([1.0]))
    tensor([[0.5000, 0.5000]])
    """
    omega = torch.as_tensor(omega, dtype=X.dtype, device=X.device)
    scores = _matvec(X, x_query)  # (..., L): s_i = x_i^T x_q
    return torch.softmax(omega[..., :, None] * scores[..., None, :], dim=-1)  # (..., H, L)


def kernel_head_averages(
    omega: torch.Tensor, X: torch.Tensor, y: torch.Tensor, x_query: torch.Tensor
) -> torch.Tensor:
    """Per-head kernel averages ``a_h = sum_i y_i softmax_i(omega_h x_i^T x_q)`` of (3.2).

    Shapes: omega (..., H) broadcasting against the prompt batch (...), X (..., L, d),
    y (..., L), x_query (..., d) -> (..., H).

    >>> X = torch.tensor([[1.0], [-1.0]])
    >>> y, xq = torch.tensor([3.0, 5.0]), torch.tensor([1.0])
    >>> kernel_head_averages(torch.tensor([0.0, 1e4]), X, y, xq)
    tensor([4., 3.])
    """
    return _matvec(kernel_softmax(omega, X, x_query), y)  # (..., H)


def kernel_sum_weights(
    omega: torch.Tensor, mu: torch.Tensor, X: torch.Tensor, x_query: torch.Tensor
) -> torch.Tensor:
    """The label weights of the kernel sum (3.2), ``w_i = sum_h mu_h softmax_i(omega_h s)``:
    the predictor is ``w^T y``. Shapes: omega, mu (..., H) -> (..., L).

    >>> X, xq = torch.tensor([[1.0], [-1.0]]), torch.tensor([1.0])
    >>> kernel_sum_weights(torch.tensor([0.0, 0.0]), torch.tensor([1.0, 3.0]), X, xq)
    tensor([2., 2.])
    """
    mu = torch.as_tensor(mu, dtype=X.dtype, device=X.device)
    return (mu[..., :, None] * kernel_softmax(omega, X, x_query)).sum(dim=-2)  # (..., L)


def kernel_sum_prediction(
    omega: torch.Tensor, mu: torch.Tensor, X: torch.Tensor, y: torch.Tensor, x_query: torch.Tensor
) -> torch.Tensor:
    """Multi-head attention on its pattern (3.2): ``sum_h mu_h sum_i y_i softmax_i(omega_h s)``.

    ``s_i = x_i^T x_q``: a sum of H Nadaraya-Watson regressors with kernels
    ``exp(omega_h <x, x_q>)`` (He et al. 2025 §HE-OBS1, the authors' ``TFEst.Est``). Shapes:
    omega, mu (..., H) broadcasting against the prompt batch (...), X (..., L, d), y (..., L),
    x_query (..., d) -> (...,). Example: a ± pair at small omega is close to debiased GD with
    eta = 2 omega mu (§HE-T4.2i).

    >>> g = torch.Generator().manual_seed(0)
    >>> X, y = torch.randn(40, 5, generator=g), torch.randn(40, generator=g)
    >>> xq = torch.randn(5, generator=g)
    >>> omega, mu = torch.tensor([1e-3, -1e-3]), torch.tensor([450.0, -450.0])
    >>> tf = kernel_sum_prediction(omega, mu, X, y, xq)
    >>> bool(abs(tf - gd_prediction(X, y, xq, 0.9, debiased=True)) < 1e-3)
    True
    """
    mu = torch.as_tensor(mu, dtype=X.dtype, device=X.device)
    return (mu * kernel_head_averages(omega, X, y, x_query)).sum(dim=-1)


def kernel_regression_prediction(
    omega, mu, X: torch.Tensor, y: torch.Tensor, x_query: torch.Tensor
) -> torch.Tensor:
    """Single-head attention (4.12): ``y_hat = mu sum_i y_i exp(omega s_i) / sum_j exp(omega s_j)``.

    The H = 1 case of `kernel_sum_prediction`; the approximate-loss optimum is omega = 1/sqrt(d)
    (§HE-4.12). Shapes: omega, mu numbers or tensors broadcasting against (...) -> (...,).

    >>> X = torch.tensor([[1.0], [-1.0]])
    >>> kernel_regression_prediction(0.0, 2.0, X, torch.tensor([3.0, 5.0]), torch.tensor([1.0]))
    tensor(8.)
    """
    omega = torch.as_tensor(omega, dtype=X.dtype, device=X.device)
    mu = torch.as_tensor(mu, dtype=X.dtype, device=X.device)
    return kernel_sum_prediction(omega[..., None], mu[..., None], X, y, x_query)


# ---------------------------------------------------------------------------------------------
# sparse regression: Lasso and preprocess-then-GD (Chen et al. 2024)


@dataclass(frozen=True)
class LassoSolution:
    """Batched Lasso solution of ``min_b (1/2L) ||X b - y||^2 + alpha ||b||_1``.

    Attributes:
        coef: (..., d) coefficients.
        iterations: FISTA iterations run.
        kkt_violation: largest violation of the optimality conditions over the batch,
            ``max_j |g_j + alpha sign(b_j)|`` on b_j != 0 and ``max(|g_j| - alpha, 0)`` on b_j = 0,
            ``g = X^T (X b - y) / L``.
        converged: whether ``kkt_violation <= tol`` was reached within ``max_iter``.
    """

    coef: torch.Tensor
    iterations: int
    kkt_violation: float
    converged: bool


def _kkt_violation(gradient: torch.Tensor, coef: torch.Tensor, alpha: torch.Tensor) -> torch.Tensor:
    """Largest violation of ``0 in g + alpha d||b||_1`` per problem, (...,)."""
    on_support = (gradient + alpha * coef.sign()).abs()
    off_support = (gradient.abs() - alpha).clamp(min=0.0)
    return torch.where(coef != 0, on_support, off_support).amax(dim=-1)


def lasso_coefficients(
    X: torch.Tensor,
    y: torch.Tensor,
    alpha,
    *,
    tol: float = 1e-6,
    max_iter: int = 20_000,
    check_every: int = 10,
) -> LassoSolution:
    """Lasso ``argmin_b (1/2L) ||X b - y||^2 + alpha ||b||_1`` by FISTA with adaptive restart.

    The scikit-learn normalisation that Chen et al. (2024) §2.2 use for their baseline.
    Step ``1/lambda_max(X^T X / L)`` per prompt; momentum restarts when it points uphill
    (O'Donoghue & Candès 2015). Stops once every prompt's KKT violation (`LassoSolution`) is
    at most ``tol`` (checked every ``check_every`` iterations) or after ``max_iter`` iterations.
    Shapes: X (..., L, d), y (..., L), alpha >= 0 a number or a tensor broadcasting against (...).

    >>> X = torch.eye(2, dtype=torch.float64) * 2 ** 0.5  # X^T X / L = I
    >>> s = lasso_coefficients(X, torch.tensor([2.0, 0.2], dtype=torch.float64) * 2 ** 0.5, 0.5)
    >>> s.coef.tolist(), s.converged
    ([1.5, 0.0], True)
    """
    if not (isinstance(tol, numbers.Real) and tol > 0):
        raise ValueError(f"tol must be a number > 0, got {tol!r}")
    if isinstance(max_iter, bool) or not isinstance(max_iter, numbers.Integral) or max_iter < 1:
        raise ValueError(f"max_iter must be an integer >= 1, got {max_iter!r}")
    with torch.no_grad():  # an iterative solver: no graph through its iterations
        return _fista(X, y, _parameter("alpha", alpha, X, minimum=0.0), tol, max_iter, check_every)


def lasso_kkt_violations(
    X: torch.Tensor, y: torch.Tensor, coef: torch.Tensor, alpha
) -> torch.Tensor:
    """Per problem, the largest violation of the Lasso's optimality conditions at ``coef``
    (`LassoSolution.kkt_violation`, not maximised over the batch): (...,).

    >>> X = torch.eye(2, dtype=torch.float64) * 2 ** 0.5
    >>> y = torch.tensor([2.0, 0.2], dtype=torch.float64) * 2 ** 0.5
    >>> lasso_kkt_violations(X, y, torch.tensor([1.5, 0.0], dtype=torch.float64), 0.5).item()
    0.0
    """
    alpha = _parameter("alpha", alpha, X, minimum=0.0)[..., None]
    gradient = _matvec(X.mT, _matvec(X, coef) - y) / X.shape[-2]
    return _kkt_violation(gradient, coef, alpha)


def lasso_coordinate_descent(
    X: torch.Tensor, y: torch.Tensor, alphas, *, max_iter: int = 1_000_000
) -> torch.Tensor:
    """The Lasso of `lasso_coefficients` at every alpha by coordinate descent (scikit-learn's
    `lasso_path`: the same objective ``(1/2L) ||X b - y||^2 + alpha ||b||_1``, no intercept,
    all alphas in one warm-started pass per problem, to a duality gap of 1e-14 relative to
    ``||y||^2``): where FISTA stalls (L <= d, a flat objective whose small gradient violation
    leaves the coefficients far from the optimum), and no slower elsewhere. Shapes:
    X (..., L, d), y (..., L), alphas (K,) -> (K, ..., d) float64 on X's device.

    >>> X = torch.eye(2, dtype=torch.float64) * 2 ** 0.5
    >>> y = torch.tensor([2.0, 0.2], dtype=torch.float64) * 2 ** 0.5
    >>> lasso_coordinate_descent(X, y, [0.5, 2.5]).tolist()
    [[1.5, 0.0], [0.0, 0.0]]
    """
    from sklearn.linear_model import lasso_path

    alphas = np.asarray([float(a) for a in alphas])
    order = np.argsort(-alphas)  # lasso_path runs from the largest alpha down
    batch = X.shape[:-2]
    Xs = X.detach().reshape(-1, *X.shape[-2:]).double().cpu().numpy()
    ys = y.detach().reshape(-1, y.shape[-1]).double().cpu().numpy()
    coefs = np.empty((alphas.size, len(Xs), X.shape[-1]))
    with warnings.catch_warnings():  # non-convergence is judged by the caller's KKT check
        warnings.simplefilter("ignore")
        for i, (Xi, yi) in enumerate(zip(Xs, ys, strict=True)):
            _, path, _ = lasso_path(Xi, yi, alphas=alphas[order], tol=1e-14, max_iter=max_iter)
            coefs[order, i] = path.T  # path: (d, K) in the order of alphas[order]
    out = torch.as_tensor(coefs.reshape(alphas.size, *batch, X.shape[-1]), dtype=torch.float64)
    return out.to(X.device)


def _fista(X, y, alpha, tol, max_iter, check_every) -> LassoSolution:
    """FISTA with adaptive restart for `lasso_coefficients` (arguments already validated)."""
    L = X.shape[-2]
    alpha = alpha[..., None]  # (..., 1)
    gram = X.mT @ X / L  # (..., d, d)
    correlation = _matvec(X.mT, y) / L  # (..., d)
    step = 1.0 / torch.linalg.matrix_norm(gram, ord=2).clamp(min=torch.finfo(X.dtype).tiny)
    step = step[..., None]  # (..., 1)
    shape = torch.broadcast_shapes(correlation.shape, alpha.shape)
    coef = torch.zeros(shape, dtype=X.dtype, device=X.device)  # (..., d)
    extrapolated = coef
    momentum = torch.ones(shape[:-1] + (1,), dtype=X.dtype, device=X.device)  # FISTA t_k
    violation = torch.full(shape[:-1], math.inf, dtype=X.dtype, device=X.device)
    for iteration in range(1, max_iter + 1):
        moved = extrapolated - step * (_matvec(gram, extrapolated) - correlation)
        new = moved.sign() * (moved.abs() - step * alpha).clamp(min=0.0)  # soft threshold
        uphill = (_dot(extrapolated - new, new - coef) < 0)[..., None]  # restart test
        momentum = torch.where(uphill, torch.ones_like(momentum), momentum)
        next_momentum = (1.0 + torch.sqrt(1.0 + 4.0 * momentum**2)) / 2.0
        extrapolated = new + ((momentum - 1.0) / next_momentum) * (new - coef)
        coef, momentum = new, next_momentum
        if iteration % check_every == 0 or iteration == max_iter:
            violation = _kkt_violation(_matvec(gram, coef) - correlation, coef, alpha)
            if float(violation.max()) <= tol:
                break
    worst = float(violation.max()) if violation.numel() else 0.0
    return LassoSolution(
        coef=coef, iterations=iteration, kkt_violation=worst, converged=worst <= tol
    )


def lasso_prediction(
    X: torch.Tensor,
    y: torch.Tensor,
    x_query: torch.Tensor,
    alpha,
    *,
    tol: float = 1e-6,
    max_iter: int = 20_000,
) -> torch.Tensor:
    """Lasso prediction ``x_q^T b_lasso(alpha)`` (Chen et al. 2024 §2.2); warns if not converged.

    Shapes: X (..., L, d), y (..., L), x_query (..., d) -> (...,). See `lasso_coefficients`.

    >>> X = torch.eye(2, dtype=torch.float64) * 2 ** 0.5
    >>> y = torch.tensor([2.0, 0.2], dtype=torch.float64) * 2 ** 0.5
    >>> lasso_prediction(X, y, torch.tensor([1.0, 1.0], dtype=torch.float64), 0.5)
    tensor(1.5000, dtype=torch.float64)
    """
    solution = lasso_coefficients(X, y, alpha, tol=tol, max_iter=max_iter)
    if not solution.converged:
        warnings.warn(
            f"Lasso stopped after {solution.iterations} iterations with KKT violation "
            f"{solution.kkt_violation:.3g} > tol={tol:g}",
            RuntimeWarning,
            stacklevel=2,
        )
    return _dot(solution.coef, x_query)


def feature_label_correlations(X: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Algorithm 1 of Chen et al. (2024) (reference §3.1): ``r_hat_j = (1/n) sum_i x_ij y_i``.

    ``R_hat = diag(r_hat)`` rescales every covariate, context and query: ``x_tilde = R_hat x``,
    i.e. ``r_hat * x``. Its population value is ``r = Sigma w*``. Shapes: X (..., n, d),
    y (..., n) -> (..., d).

    >>> feature_label_correlations(torch.tensor([[1.0, 2.0], [3.0, 0.0]]), torch.tensor([1.0, 1.0]))
    tensor([2., 1.])
    """
    return _matvec(X.mT, y) / X.shape[-2]


def preprocessed_gd_prediction(
    X: torch.Tensor, y: torch.Tensor, x_query: torch.Tensor, eta, steps: int
) -> torch.Tensor:
    """Preprocess-then-GD of Chen et al. (2024): Algorithm 1, then t GD steps (eq. 4.3), §3.1-3.2.

    Algorithm 1 (`feature_label_correlations`) turns every covariate into ``x_tilde = R_hat x``;
    ``w_t`` = t steps of GD from 0 with step eta on ``(1/2n) sum_i (y_i - <w, x_tilde_i>)^2``,
    and the prediction is ``<w_t, R_hat x_q>`` (effective raw-space weight ``R_hat w_t``).
    A sensible eta is ``c / ||R_hat Sigma_hat R_hat||`` with c < 2 (reference §4.5).
    Shapes: X (..., L, d), y (..., L), x_query (..., d) -> (...,).

    >>> X = torch.tensor([[1.0, 0.0], [0.0, 1.0]])
    >>> preprocessed_gd_prediction(X, torch.tensor([2.0, 0.0]), torch.tensor([1.0, 1.0]), 1.0, 1)
    tensor(1.)
    """
    r_hat = feature_label_correlations(X, y)  # (..., d)
    X_tilde = X * r_hat[..., None, :]  # (..., L, d): rows R_hat x_i
    return _dot(gd_coefficients(X_tilde, y, eta, steps), r_hat * x_query)
