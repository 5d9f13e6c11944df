"""OLS, ridge and Lasso of `numerics._core.estimators` / `numerics._core.sparse_regression` against
scikit-learn on the same data (the peer of Chen et al. 2024 §2.2's baselines).

Tolerances are argued from the solvers:
- OLS and ridge are direct solves on both sides (our QR / Cholesky-type solve, sklearn's SVD
  lstsq / Cholesky): they agree to cond(X)^k * machine epsilon; Gaussian designs with n, d
  this small have cond < 50, so 1e-10 relative is generous and still fails any normalisation
  or min-norm mistake by orders of magnitude.
- Lasso: our FISTA stops at KKT violation v (sup norm of the smallest subgradient), sklearn's
  coordinate descent at duality gap G (its `dual_gap_`, in the same (1/2n) objective). With F
  mu-strongly convex (mu = lambda_min(X^T X / n) > 0 when n > d), ||b - b*||_2 <= sqrt(d) v / mu
  and ||b_sk - b*||_2 <= sqrt(2 G / mu); their sum bounds the distance. Without strong
  convexity (d > n) the objective values are compared: F(b) - F(b_sk) <= v ||b - b_sk||_1 (a
  subgradient of size <= v at b) and F(b_sk) - F(b) <= G.
"""

import numpy as np
import pytest
import torch
from icl_verify.numerics import (
    excess_risk,
    lasso_coefficients,
    lasso_excess_risks,
    least_squares_coefficients,
    least_squares_excess_risks,
    sample_sparse_regression,
)

from icl_verify.settings import SparseSetting

linear_model = pytest.importorskip("sklearn.linear_model")


def _prompt(d, n, s=3, sigma=0.5, seed=0):
    g = torch.Generator().manual_seed(seed)
    p = sample_sparse_regression(
        1, SparseSetting(d, s, sigma), n, generator=g, signal="sign", dtype=torch.float64
    )
    return p.X[0], p.y[0], p.w_star[0]  # (n, d), (n,), (d,)


@pytest.mark.parametrize(("d", "n"), [(10, 50), (30, 12)])  # n > d: OLS; d > n: min-norm
def test_ols_is_sklearns_least_squares_and_min_norm_when_d_exceeds_n(d, n):
    X, y, _ = _prompt(d, n)
    ours = least_squares_coefficients(X, y).numpy()
    peer = linear_model.LinearRegression(fit_intercept=False).fit(X.numpy(), y.numpy()).coef_
    np.testing.assert_allclose(ours, peer, rtol=1e-10, atol=1e-12)
    if d > n:  # the interpolant of smallest norm: in the row space of X
        row_space = np.linalg.lstsq(X.numpy().T, ours, rcond=None)[0]
        np.testing.assert_allclose(X.numpy().T @ row_space, ours, atol=1e-12)


@pytest.mark.parametrize(("d", "n"), [(10, 50), (30, 12)])
@pytest.mark.parametrize("lam", [1e-3, 0.3, 10.0])
def test_ridge_in_the_papers_normalisation_is_sklearn_ridge_with_alpha_n_lambda(d, n, lam):
    X, y, w_star = _prompt(d, n, seed=1)
    peer = linear_model.Ridge(alpha=n * lam, fit_intercept=False, solver="cholesky")
    coef = peer.fit(X.numpy(), y.numpy()).coef_
    np.testing.assert_allclose(
        least_squares_coefficients(X, y, n * lam).numpy(), coef, rtol=1e-10, atol=1e-12
    )
    risk = least_squares_excess_risks(X, y, w_star, [lam])[0]
    expected = excess_risk(torch.as_tensor(coef), w_star)
    assert float(risk) == pytest.approx(float(expected), rel=1e-9)
    # and the normalisation matters: alpha = lambda (no n) is a different estimator
    wrong = linear_model.Ridge(alpha=lam, fit_intercept=False).fit(X.numpy(), y.numpy()).coef_
    assert np.abs(wrong - coef).max() > 1e-4


def _objective(X, y, b, alpha):
    return 0.5 * np.mean((X @ b - y) ** 2) + alpha * np.abs(b).sum()


@pytest.mark.parametrize("alpha", [0.003, 0.03, 0.3])
def test_lasso_agrees_with_sklearn_within_both_stopping_rules(alpha):
    X, y, w_star = _prompt(16, 80, s=4, seed=2)
    tol = 1e-10
    ours = lasso_coefficients(X, y, alpha, tol=tol, max_iter=200_000)
    assert ours.converged
    peer = linear_model.Lasso(alpha=alpha, fit_intercept=False, tol=1e-14, max_iter=1_000_000)
    peer.fit(X.numpy(), y.numpy())
    Xn = X.numpy()
    mu = np.linalg.eigvalsh(Xn.T @ Xn / Xn.shape[0])[0]
    bound = np.sqrt(16) * ours.kkt_violation / mu + np.sqrt(2 * max(peer.dual_gap_, 0.0) / mu)
    distance = np.linalg.norm(ours.coef.numpy() - peer.coef_)
    assert distance <= bound + 1e-12
    assert bound < 1e-4  # the comparison is sharp: a normalisation slip would be O(alpha)
    # and lasso_excess_risks reads the same solution
    risk = lasso_excess_risks(X, y, w_star, [alpha], tol=tol)[0]
    expected = excess_risk(torch.as_tensor(peer.coef_), w_star)
    assert abs(float(risk) - float(expected)) <= 2 * (bound + 1e-12) * (
        np.linalg.norm(peer.coef_ - w_star.numpy()) + bound
    )


def test_lasso_objective_matches_sklearn_when_d_exceeds_n():
    X, y, _ = _prompt(60, 20, s=3, seed=3)
    alpha, tol = 0.02, 1e-9
    ours = lasso_coefficients(X, y, alpha, tol=tol, max_iter=200_000)
    assert ours.converged
    peer = linear_model.Lasso(alpha=alpha, fit_intercept=False, tol=1e-14, max_iter=1_000_000)
    peer.fit(X.numpy(), y.numpy())
    b, b_sk = ours.coef.numpy(), peer.coef_
    gap = _objective(X.numpy(), y.numpy(), b, alpha) - _objective(X.numpy(), y.numpy(), b_sk, alpha)
    assert gap <= ours.kkt_violation * np.abs(b - b_sk).sum() + 1e-14
    assert -gap <= max(peer.dual_gap_, 0.0) + 1e-14


def test_lasso_excess_risks_reach_the_optimum_where_fista_stalls():
    # n << d: FISTA within 200 iterations leaves a KKT violation far above 1e-8 on these
    # prompts; lasso_excess_risks (coordinate descent, held to the same KKT rule) gives the
    # risks of sklearn's optimum
    from icl_verify.numerics import lasso_kkt_violations

    problems = [_prompt(16, 6, s=4, seed=seed) for seed in range(8)]
    X = torch.stack([p[0] for p in problems])  # (8, 6, 16)
    y, w_star = torch.stack([p[1] for p in problems]), torch.stack([p[2] for p in problems])
    alpha, tol = 1e-3, 1e-8
    stalled = lasso_coefficients(X, y, alpha, tol=tol, max_iter=200)
    assert float(lasso_kkt_violations(X, y, stalled.coef, alpha).max()) > 100 * tol
    risks = lasso_excess_risks(X, y, w_star, [alpha], tol=tol)[0]
    for k in range(8):
        peer = linear_model.Lasso(alpha=alpha, fit_intercept=False, tol=1e-14, max_iter=1_000_000)
        peer.fit(X[k].numpy(), y[k].numpy())
        expected = excess_risk(torch.as_tensor(peer.coef_), w_star[k])
        assert abs(float(risks[k]) - float(expected)) < 1e-6 * (1 + float(expected))


def test_pregd_curvature_is_numpys_largest_eigenvalue_of_the_evaluation_prompts():
    """`isotropic_risks`'s curvature (the unit of pre-gd's relative step) against numpy on the
    evaluation prompts replayed from the same generator: r_hat = X^T y / n, eigvalsh of
    (X diag(r_hat))^T (X diag(r_hat)) / n. Direct symmetric eigensolves: 1e-10 relative."""
    from icl_verify.numerics import isotropic_risks

    risks = isotropic_risks(
        12, 40, 3, 0.5, prompts=5, generator=torch.Generator().manual_seed(3),
        etas=[1.0], steps=[2], lambdas=[0.0],
    )  # fmt: skip
    replay = torch.Generator().manual_seed(3)
    _, held = (
        sample_sparse_regression(
            5, SparseSetting(12, 3, 0.5), 40, generator=replay, signal="sign", dtype=torch.float64
        )
        for _ in range(2)
    )  # tuning, evaluation: drawn in this order
    X, y = held.X.numpy(), held.y.numpy()
    r_hat = np.einsum("bnd,bn->bd", X, y) / 40
    features = X * r_hat[:, None, :]
    gram = np.einsum("bni,bnj->bij", features, features) / 40
    np.testing.assert_allclose(
        risks.pregd_curvature.numpy(), np.linalg.eigvalsh(gram)[:, -1], rtol=1e-10
    )
