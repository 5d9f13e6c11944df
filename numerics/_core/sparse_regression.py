"""Exact excess risks of in-context estimators on sparse regression, Chen, Zhao, Zou (2024) §4-5.

Every estimator of their Section 5 returns a weight vector ``v`` in raw coordinates (for
preprocess-then-GD ``v = R_hat w_tilde``, reference §3.2), so its population excess risk is
exact, with no test sampling (reference §1.1, §6):

    E(v) = E(<x, v> - y)^2 - sigma^2 = (v - w*)^T Sigma (v - w*).

This is the quantity the proofs bound (their eq. D.2); the main text's definition for pre-gd
carries a factor 1/2 that the proofs drop (reference §6 and §7.4), so a reader comparing with
that definition halves these numbers.

- `excess_risk`: ``(v - w*)^T Sigma (v - w*)`` for a batch of weight vectors;
- `gd_excess_risks`: the excess risk of t-step GD from 0 on raw or on preprocessed covariates
  (Algorithm 1) at several t, for one step size or a grid of them, on the same prompts;
- `least_squares_excess_risks`, `lasso_excess_risks`: OLS (minimum norm when d > n) and ridge,
  and Lasso, over a grid of their regularisation in the paper's normalisation;
- `oracle_tuned`: the risk at the grid point of lowest mean risk (the paper's "tuned" baselines,
  reference §2.2 and §4.5), chosen on one set of prompts and, when given, reported on another.

Nothing here imports `theory`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from icl_verify.numerics._core.estimators import (
    feature_label_correlations,
    gd_path,
    lasso_coordinate_descent,
    lasso_kkt_violations,
    least_squares_coefficients,
)

__all__ = [
    "TunedRisks",
    "excess_risk",
    "gd_excess_risks",
    "largest_gram_eigenvalue",
    "lasso_excess_risks",
    "least_squares_excess_risks",
    "oracle_tuned",
]


def excess_risk(v: torch.Tensor, w_star: torch.Tensor, covariance=None) -> torch.Tensor:
    """Population excess risk ``(v - w*)^T Sigma (v - w*)`` (Chen et al. 2024 §2, reference §1.1).

    ``covariance`` None is Sigma = I; a (d,) tensor is a diagonal Sigma; a (d, d) tensor is
    Sigma itself. Overflowed weights (a divergent GD) give inf, never NaN. Shapes: v (..., d),
    w_star broadcasting against it -> (...,).

    >>> excess_risk(torch.tensor([1.0, 0.0]), torch.tensor([0.0, 0.0]), torch.tensor([2.0, 1.0]))
    tensor(2.)
    """
    error = v - w_star  # (..., d)
    if covariance is None:
        risk = (error * error).sum(dim=-1)
    else:
        covariance = torch.as_tensor(covariance, dtype=v.dtype, device=v.device)
        if covariance.ndim == 1:
            risk = (covariance * error * error).sum(dim=-1)
        else:
            risk = torch.einsum("...i,ij,...j->...", error, covariance, error)
    return torch.where(torch.isnan(risk), torch.inf, risk)


def largest_gram_eigenvalue(X: torch.Tensor) -> torch.Tensor:
    """``lambda_max(X^T X / n)``, the curvature of the least-squares loss; GD from 0 with step eta
    converges iff ``eta < 2 / lambda_max``. Shapes: X (..., n, d) -> (...,).

    >>> largest_gram_eigenvalue(torch.tensor([[2.0, 0.0], [0.0, 1.0]]))
    tensor(2.)
    """
    return torch.linalg.eigvalsh(X.mT @ X / X.shape[-2])[..., -1]


def gd_excess_risks(
    X: torch.Tensor,
    y: torch.Tensor,
    w_star: torch.Tensor,
    eta,
    steps,
    *,
    preprocessed: bool = False,
    relative: bool = False,
    covariance=None,
) -> torch.Tensor:
    """Excess risks of t-step GD from 0 (``gd``) or preprocess-then-GD (``pre-gd``) at each t.

    gd: the iterates ``w^t`` of GD on ``(1/2n) ||X w - y||^2`` (Chen et al. 2024 §5, Thm 5.2);
    pre-gd: Algorithm 1's ``x_tilde = R_hat x`` first, then GD, risk of ``v = R_hat w_tilde^t``
    (eq. 4.3, Thm 5.1). ``relative=True`` reads eta as a multiple of ``1 / lambda_max`` of each
    prompt's (preprocessed) Gram matrix ``X^T X / n`` (reference §4.4-4.5: the preprocessed
    features are of size ~1/sqrt(s), so a fixed grid does not fit every n).

    Shapes: X (..., n, d), y (..., n), w_star (..., d), eta a number or a tensor broadcasting
    against (...) (a grid: give it a leading axis and X, y, w_star a length-1 axis there);
    returns (..., len(steps)), inf where GD diverged.

    >>> X, w = torch.eye(2, dtype=torch.float64), torch.tensor([1.0, 0.0], dtype=torch.float64)
    >>> gd_excess_risks(X, X @ w, w, 2.0, [0, 1, 5])  # X^T X / n = I / 2: one step of 2 is exact
    tensor([1., 0., 0.], dtype=torch.float64)
    """
    scales = None
    if preprocessed:
        scales = feature_label_correlations(X, y)  # (..., d): R_hat's diagonal
        X = X * scales[..., None, :]  # (..., n, d): rows R_hat x_i
    eta = torch.as_tensor(eta, dtype=X.dtype, device=X.device)
    if relative:
        eta = eta / largest_gram_eigenvalue(X)
    path = gd_path(X, y, eta, steps)  # (..., T, d)
    if scales is not None:
        path = path * scales[..., None, :]  # effective raw-space weights R_hat w_tilde^t
    return excess_risk(path, w_star[..., None, :], covariance)  # (..., T)


def least_squares_excess_risks(
    X: torch.Tensor, y: torch.Tensor, w_star: torch.Tensor, lambdas=(0.0,), covariance=None
) -> torch.Tensor:
    """Excess risks of ridge ``w_lambda = (Sigma_hat + lambda I)^{-1} X^T y / n`` at each lambda
    (Chen et al. 2024 Thm 5.3, reference §4.4; lambda = 0 is OLS, minimum norm when d > n).

    lambda is in the paper's normalisation (``Sigma_hat = X^T X / n``), i.e. the unnormalised
    ridge of `estimators.least_squares_coefficients` with ``n lambda``. Shapes: X (..., n, d),
    y (..., n), w_star (..., d), lambdas (K,) -> (K, ...).

    >>> X = torch.eye(2, dtype=torch.float64)
    >>> least_squares_excess_risks(X, torch.tensor([2.0, 0.0], dtype=torch.float64),
    ...                            torch.tensor([1.0, 0.0], dtype=torch.float64), [0.0, 0.5])
    tensor([1., 0.], dtype=torch.float64)
    """
    n = X.shape[-2]
    return torch.stack(
        [
            excess_risk(least_squares_coefficients(X, y, n * float(lam)), w_star, covariance)
            for lam in lambdas
        ]
    )  # (K, ...)


def lasso_excess_risks(
    X: torch.Tensor,
    y: torch.Tensor,
    w_star: torch.Tensor,
    alphas,
    covariance=None,
    *,
    tol: float = 1e-8,
    max_iter: int = 1_000_000,
) -> torch.Tensor:
    """Excess risks of the Lasso ``argmin_b (1/2n) ||X b - y||^2 + alpha ||b||_1`` at each alpha
    (Chen et al. 2024 §2.2 and the s/n rate of §5 discussion, reference §4.4), by coordinate
    descent (`estimators.lasso_coordinate_descent`, scikit-learn's `lasso_path`, all alphas in
    one warm-started pass per problem), each solution held to the KKT rule of
    `estimators.lasso_coefficients` (violation <= tol; raises otherwise). Coordinate descent
    rather than our FISTA: at n <= d FISTA stalls on the flat objective (KKT 1e-3 left the
    objective 12% above the optimum at n = 6, d = 16; at n = d = 16 it does not reach 1e-6 in
    20k iterations), and at n > d it is no faster (n = 20, 24: 12 s and 2.4 s against 3.2 s
    and 1.9 s for 1920 prompts x 5 alphas). Shapes: X (..., n, d), y (..., n),
    w_star (..., d), alphas (K,) -> (K, ...).

    >>> X = torch.eye(2, dtype=torch.float64) * 2 ** 0.5  # X^T X / n = I
    >>> y = torch.tensor([2.0, 0.2], dtype=torch.float64) * 2 ** 0.5
    >>> lasso_excess_risks(X, y, torch.tensor([1.5, 0.0], dtype=torch.float64), [0.5])
    tensor([0.], dtype=torch.float64)
    """
    alphas = [float(alpha) for alpha in alphas]
    coefs = lasso_coordinate_descent(X, y, alphas, max_iter=max_iter).to(X.dtype)  # (K, ..., d)
    risks = []
    for alpha, coef in zip(alphas, coefs, strict=True):
        violation = float(lasso_kkt_violations(X, y, coef, alpha).max())
        if violation > tol:
            raise RuntimeError(
                f"Lasso at alpha={alpha:g} stopped with KKT violation {violation:.3g} > "
                f"tol={tol:g} (coordinate descent, max_iter={max_iter})"
            )
        risks.append(excess_risk(coef, w_star, covariance))
    return torch.stack(risks)  # (K, ...)


@dataclass(frozen=True, eq=False)
class TunedRisks:
    """Excess risks at the oracle-tuned grid point (reference chen2024 §4.5).

    Attributes:
        index: the chosen grid point, an index into the grid axes.
        risks: (N,) per-prompt excess risks there, on the evaluation prompts.
        grid_means: (grid...) mean excess risk of every grid point on the tuning prompts
            (inf where some prompt diverged).
    """

    index: tuple[int, ...]
    risks: torch.Tensor
    grid_means: torch.Tensor

    @property
    def mean(self) -> float:
        return float(self.risks.mean())

    @property
    def se(self) -> float:
        """Standard error of `mean` over the evaluation prompts."""
        n = self.risks.numel()
        return float(self.risks.std()) / math.sqrt(n) if n > 1 else math.inf


def oracle_tuned(risks: torch.Tensor, held_out: torch.Tensor | None = None) -> TunedRisks:
    """The grid point of lowest mean excess risk, and the risks there (the paper's tuning rule).

    ``risks`` has the grid axes first and the prompts last, (grid..., N); the point is chosen
    on it. ``held_out`` (grid..., N'), risks of the same grid on independent prompts, is
    where the chosen point's risks are then read, so the reported mean carries no selection
    bias; without it they are read on ``risks`` itself.

    >>> tuned = oracle_tuned(torch.tensor([[3.0, 5.0], [1.0, 2.0], [4.0, 4.0]]))
    >>> tuned.index, tuned.risks.tolist(), tuned.mean
    ((1,), [1.0, 2.0], 1.5)
    """
    means = torch.where(torch.isnan(risks), torch.inf, risks).mean(dim=-1)  # (grid...)
    flat = int(torch.argmin(means.flatten()))
    index = tuple(int(i) for i in torch.unravel_index(torch.tensor(flat), means.shape))
    source = risks if held_out is None else held_out
    return TunedRisks(index=index, risks=source[index], grid_means=means)
