"""Estimators of numerics._core.estimators against independent float64 numpy computations and
limits."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from icl_verify.numerics import (
    bayes_prediction,
    gd_coefficients,
    gd_prediction,
    kernel_head_averages,
    kernel_regression_prediction,
    kernel_sum_prediction,
    lasso_coefficients,
    lasso_prediction,
    least_squares_coefficients,
    multi_step_gd_prediction,
    ols_prediction,
    preconditioned_gd_prediction,
    preprocessed_gd_prediction,
    ridge_prediction,
)

F64 = torch.float64


def prompts(batch: int, L: int, d: int, seed: int = 0):
    """Random float64 (X, y, x_query) as torch tensors; y is an arbitrary label vector."""
    g = torch.Generator().manual_seed(seed)
    X = torch.randn(batch, L, d, generator=g, dtype=F64)
    beta = torch.randn(batch, d, generator=g, dtype=F64) / d**0.5
    y = torch.einsum("bld,bd->bl", X, beta) + 0.3 * torch.randn(batch, L, generator=g, dtype=F64)
    x_query = torch.randn(batch, d, generator=g, dtype=F64)
    return X, y, x_query


# --------------------------------------------------------------------------------------------
# least squares


@pytest.mark.parametrize("L, d", [(12, 4), (3, 7)])
def test_ols_is_the_minimum_norm_solution_of_numpy_pinv(L, d):
    X, y, xq = prompts(6, L, d)
    expected = [xq[b].numpy() @ np.linalg.pinv(X[b].numpy()) @ y[b].numpy() for b in range(6)]
    np.testing.assert_allclose(ols_prediction(X, y, xq).numpy(), expected, rtol=1e-9, atol=1e-11)


@pytest.mark.parametrize("L, d", [(12, 4), (3, 7)])
def test_ridge_matches_a_numpy_solve_of_the_normal_equations(L, d):
    X, y, xq = prompts(5, L, d, seed=1)
    lam = 0.7
    expected = [
        xq[b].numpy()
        @ np.linalg.solve(
            X[b].T.numpy() @ X[b].numpy() + lam * np.eye(d), X[b].T.numpy() @ y[b].numpy()
        )
        for b in range(5)
    ]
    np.testing.assert_allclose(ridge_prediction(X, y, xq, lam).numpy(), expected, rtol=1e-10)


def test_ridge_broadcasts_a_grid_of_lambdas_against_the_batch():
    X, y, xq = prompts(4, 10, 3, seed=2)
    lams = torch.tensor([0.1, 1.0, 10.0], dtype=F64)[:, None]  # (3, 1) against batch (4,)
    grid = ridge_prediction(X, y, xq, lams)
    assert grid.shape == (3, 4)
    for k in range(3):
        torch.testing.assert_close(grid[k], ridge_prediction(X, y, xq, float(lams[k, 0])))


def test_bayes_prediction_is_the_gaussian_posterior_mean():
    # Independent form: conditioning the joint Gaussian (beta, y) with beta ~ N(0, I/d),
    # Cov(y) = X X^T / d + sigma2 I, Cov(beta, y) = X^T / d, gives
    # E[beta | y] = (X^T / d) (X X^T / d + sigma2 I)^{-1} y   (no ridge formula used).
    d, L, sigma2 = 6, 9, 0.4
    X, y, xq = prompts(5, L, d, seed=3)
    expected = []
    for b in range(5):
        Xb = X[b].numpy()
        posterior_mean = (
            Xb.T / d @ np.linalg.solve(Xb @ Xb.T / d + sigma2 * np.eye(L), y[b].numpy())
        )
        expected.append(xq[b].numpy() @ posterior_mean)
    np.testing.assert_allclose(bayes_prediction(X, y, xq, sigma2).numpy(), expected, rtol=1e-10)


def test_least_squares_rejects_a_negative_lambda():
    X, y, _ = prompts(1, 5, 2)
    with pytest.raises(ValueError, match="lam must be finite and >= 0"):
        least_squares_coefficients(X, y, -1.0)


# --------------------------------------------------------------------------------------------
# gradient descent


def test_one_step_gd_and_debiased_gd_match_their_sums():
    X, y, xq = prompts(4, 15, 3, seed=4)
    eta, L = 0.8, 15
    Xn, yn, qn = X.numpy(), y.numpy(), xq.numpy()
    vanilla = eta / L * np.einsum("bl,bld,bd->b", yn, Xn, qn)
    centred = Xn - Xn.mean(axis=1, keepdims=True)
    debiased = eta / L * np.einsum("bl,bld,bd->b", yn, centred, qn)
    np.testing.assert_allclose(gd_prediction(X, y, xq, eta).numpy(), vanilla, rtol=1e-12)
    np.testing.assert_allclose(
        gd_prediction(X, y, xq, eta, debiased=True).numpy(), debiased, rtol=1e-12
    )


@pytest.mark.parametrize("debiased", [False, True])
def test_preconditioned_gd_with_gamma_eta_identity_is_gd_and_matches_numpy(debiased):
    X, y, xq = prompts(4, 15, 3, seed=5)
    eta = 0.6
    torch.testing.assert_close(
        preconditioned_gd_prediction(X, y, xq, eta * torch.eye(3, dtype=F64), debiased=debiased),
        gd_prediction(X, y, xq, eta, debiased=debiased),
    )
    gamma = torch.tensor([[1.0, 0.3, 0.0], [0.3, 2.0, 0.1], [0.0, 0.1, 0.5]], dtype=F64)
    Xn = X.numpy() - (X.numpy().mean(axis=1, keepdims=True) if debiased else 0.0)
    expected = np.einsum("bl,bld,de,be->b", y.numpy(), Xn, gamma.numpy(), xq.numpy()) / 15
    np.testing.assert_allclose(
        preconditioned_gd_prediction(X, y, xq, gamma, debiased=debiased).numpy(),
        expected,
        rtol=1e-12,
    )


def test_t_step_gd_with_one_step_is_vanilla_gd():
    X, y, xq = prompts(6, 20, 4, seed=6)
    torch.testing.assert_close(
        multi_step_gd_prediction(X, y, xq, 0.7, 1), gd_prediction(X, y, xq, 0.7)
    )


def test_t_step_gd_matches_the_closed_form_and_converges_to_ols():
    # GD on (1/2L)||Xb - y||^2 from 0 is linear: b_t = (I - (I - eta W/L)^t) W^{-1} X^T y,
    # W = X^T X (induction on t); as t -> inf with eta < 2L/lambda_max(W) it tends to OLS.
    L, d, eta, t = 20, 4, 0.5, 7
    X, y, xq = prompts(3, L, d, seed=7)
    for b in range(3):
        W, r = X[b].T.numpy() @ X[b].numpy(), X[b].T.numpy() @ y[b].numpy()
        contraction = np.linalg.matrix_power(np.eye(d) - eta * W / L, t)
        expected = (np.eye(d) - contraction) @ np.linalg.solve(W, r)
        np.testing.assert_allclose(
            gd_coefficients(X[b], y[b], eta, t).numpy(), expected, rtol=1e-10
        )
    torch.testing.assert_close(
        multi_step_gd_prediction(X, y, xq, eta, 2000),
        ols_prediction(X, y, xq),
        rtol=1e-9,
        atol=1e-9,
    )
    assert torch.equal(multi_step_gd_prediction(X, y, xq, eta, 0), torch.zeros(3, dtype=F64))


def test_gd_rejects_a_negative_step_count():
    X, y, xq = prompts(1, 5, 2)
    with pytest.raises(ValueError, match="steps must be an integer >= 0"):
        multi_step_gd_prediction(X, y, xq, 0.1, -1)


# --------------------------------------------------------------------------------------------
# softmax kernel regressors


def test_kernel_sum_matches_explicit_exponentials():
    X, y, xq = prompts(5, 12, 3, seed=8)
    omega = torch.tensor([0.4, -0.2, 0.0], dtype=F64)
    mu = torch.tensor([1.5, -0.5, 0.3], dtype=F64)
    s = np.einsum("bld,bd->bl", X.numpy(), xq.numpy())
    expected = np.zeros(5)
    for w, m in zip(omega.numpy(), mu.numpy(), strict=True):
        kernel = np.exp(w * s)
        expected += m * (kernel * y.numpy()).sum(1) / kernel.sum(1)
    np.testing.assert_allclose(
        kernel_sum_prediction(omega, mu, X, y, xq).numpy(), expected, rtol=1e-12
    )
    torch.testing.assert_close(
        kernel_regression_prediction(0.4, 1.5, X, y, xq),
        kernel_sum_prediction(omega[:1], mu[:1], X, y, xq),
    )


def test_kernel_sum_is_stable_at_large_omega_and_picks_the_nearest_key():
    # As omega -> +inf the softmax becomes one-hot on argmax_i x_i^T x_q (no overflow to nan).
    X, y, xq = prompts(8, 30, 5, seed=9)
    prediction = kernel_regression_prediction(1e4, 2.0, X, y, xq)
    nearest = torch.einsum("bld,bd->bl", X, xq).argmax(dim=1)
    assert torch.isfinite(prediction).all()
    torch.testing.assert_close(prediction, 2.0 * y[torch.arange(8), nearest])


def test_kernel_head_averages_broadcast_a_grid_of_heads_over_the_batch():
    X, y, xq = prompts(7, 10, 3, seed=10)
    omega = torch.tensor([[0.1, -0.1], [0.5, -0.5], [1.0, 0.0]], dtype=F64)[:, None, :]  # (3,1,2)
    grid = kernel_head_averages(omega, X, y, xq)
    assert grid.shape == (3, 7, 2)
    torch.testing.assert_close(grid[1, 4], kernel_head_averages(omega[1, 0], X[4], y[4], xq[4]))


def test_plus_minus_pair_tends_to_debiased_gd_with_error_of_order_omega_squared():
    # §HE-T4.2i / HE-4.10: heads (omega, mu), (-omega, -mu) with eta = 2 omega mu; the even
    # orders of the softmax expansion cancel, so TF - dGD(eta) = O(eta omega^2). Fit the order.
    X, y, xq = prompts(200, 40, 5, seed=11)
    eta = 0.9
    dgd = gd_prediction(X, y, xq, eta, debiased=True)
    omegas = np.array([0.02, 0.01, 0.005, 0.0025])
    errors = []
    for w in omegas:
        mu = eta / (2 * w)
        tf = kernel_sum_prediction(
            torch.tensor([w, -w], dtype=F64), torch.tensor([mu, -mu], dtype=F64), X, y, xq
        )
        errors.append(float((tf - dgd).pow(2).mean().sqrt()))
    slope = np.polyfit(np.log(omegas), np.log(errors), 1)[0]
    assert abs(slope - 2.0) < 0.05, (slope, errors)


# --------------------------------------------------------------------------------------------
# sparse regression


def test_lasso_satisfies_its_kkt_conditions():
    # Optimality of min (1/2L)||Xb - y||^2 + alpha||b||_1: with g = X^T (X b - y) / L,
    # g_j = -alpha sign(b_j) where b_j != 0 and |g_j| <= alpha where b_j = 0. Recomputed here.
    L, d, tol = 30, 12, 1e-9
    X, y, xq = prompts(6, L, d, seed=12)
    alpha = torch.tensor([0.01, 0.05, 0.1, 0.2, 0.3, 0.5], dtype=F64)
    solution = lasso_coefficients(X, y, alpha, tol=tol)
    assert solution.converged
    for b in range(6):
        coef = solution.coef[b].numpy()
        g = X[b].numpy().T @ (X[b].numpy() @ coef - y[b].numpy()) / L
        a = float(alpha[b])
        on = coef != 0
        assert np.all(np.abs(g[on] + a * np.sign(coef[on])) <= 2 * tol)
        assert np.all(np.abs(g[~on]) <= a + 2 * tol)
    assert (solution.coef[-1] == 0).sum() > (solution.coef[0] == 0).sum()  # sparser as alpha grows


def test_lasso_limits_zero_above_alpha_max_and_ols_as_alpha_vanishes():
    # b = 0 is optimal iff alpha >= ||X^T y||_inf / L; at alpha = 0 the problem is least squares.
    L, d = 25, 5
    X, y, xq = prompts(4, L, d, seed=13)
    alpha_max = torch.einsum("bld,bl->bd", X, y).abs().amax(dim=1) / L
    zero = lasso_coefficients(X, y, alpha_max * 1.001, tol=1e-10)
    assert torch.equal(zero.coef, torch.zeros_like(zero.coef))
    torch.testing.assert_close(
        lasso_prediction(X, y, xq, 0.0, tol=1e-11), ols_prediction(X, y, xq), rtol=1e-8, atol=1e-8
    )


def test_lasso_warns_when_it_stops_before_converging():
    X, y, xq = prompts(2, 10, 8, seed=14)
    with pytest.warns(RuntimeWarning, match="KKT violation"):
        lasso_prediction(X, y, xq, 0.01, tol=1e-14, max_iter=3)


def test_preprocessed_gd_follows_algorithm_1_step_by_step():
    # Chen et al. (2024) Alg. 1 for one prompt, written out: r_j = (1/n) sum_i x_ij y_i,
    # x_tilde = r * x, then w <- w - eta * grad (1/2n) sum (y_i - <w, x_tilde_i>)^2, t times.
    n, d, eta, t = 16, 6, 0.3, 5
    X, y, xq = prompts(3, n, d, seed=15)
    for b in range(3):
        Xb, yb, qb = X[b].numpy(), y[b].numpy(), xq[b].numpy()
        r = np.array([sum(Xb[i, j] * yb[i] for i in range(n)) / n for j in range(d)])
        Xt = Xb * r
        w = np.zeros(d)
        for _ in range(t):
            w = w - eta * (-(Xt.T @ (yb - Xt @ w)) / n)
        expected = w @ (r * qb)
        assert abs(float(preprocessed_gd_prediction(X[b], y[b], xq[b], eta, t)) - expected) < 1e-12


def test_preprocessed_gd_converges_to_ols_when_n_exceeds_d():
    # R_hat is invertible a.s., so the preprocessed least-squares fit is the OLS fit
    # (chen2024 §4.5 note); use the safe step 1 / lambda_max of the preprocessed Gram / n.
    n, d = 30, 4
    X, y, xq = prompts(3, n, d, seed=16)
    r = torch.einsum("bld,bl->bd", X, y) / n
    Xt = X * r[:, None, :]
    eta = 1.0 / torch.linalg.matrix_norm(Xt.mT @ Xt / n, ord=2)
    torch.testing.assert_close(
        preprocessed_gd_prediction(X, y, xq, eta, 20_000),
        ols_prediction(X, y, xq),
        rtol=1e-6,
        atol=1e-6,
    )
