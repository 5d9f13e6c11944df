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
  (Algorithm 1) at several t, for one step size or a grid of them, on the same prompts.

Nothing here imports `theory`.
"""

from __future__ import annotations

import torch
from icl_verify.numerics.estimators import feature_label_correlations, gd_path

__all__ = ["excess_risk", "gd_excess_risks", "largest_gram_eigenvalue"]


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
    return torch.nan_to_num(risk, nan=torch.inf)


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
