"""Exact excess risks of numerics._core.sparse_regression against independent numpy computations:
the risk as a Monte Carlo test error, GD paths as a per-step numpy loop, ridge in the paper's
normalisation as a numpy solve, and the tuning rule on hand-made grids."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from icl_verify.numerics import (
    excess_risk,
    gd_excess_risks,
    gd_path,
    largest_gram_eigenvalue,
    least_squares_excess_risks,
    oracle_tuned,
    sample_sparse_regression,
)

from icl_verify.settings import SparseSetting

F64 = torch.float64


def _prompts(batch, d, n, s, sigma, seed=0, **kwargs):
    g = torch.Generator().manual_seed(seed)
    setting = SparseSetting(d, s, sigma)
    return sample_sparse_regression(batch, setting, n, generator=g, dtype=F64, **kwargs)


def test_excess_risk_is_the_test_error_above_the_noise_floor():
    # E(<x, v> - y)^2 - sigma^2 over fresh (x, y) from the same task, with a diagonal Sigma:
    # a Monte Carlo mean over 200k queries, within 4 of its standard errors.
    d, sigma = 5, 0.3
    variances = torch.linspace(0.5, 2.0, d, dtype=F64)
    p = _prompts(1, d, 1, 2, sigma, seed=1, q=200_000, covariance=torch.diag(variances))
    v = p.w_star + torch.tensor([0.3, -0.2, 0.1, 0.0, 0.5], dtype=F64)
    errors = (p.X_query[0] @ v[0] - p.y_query[0]) ** 2 - sigma**2
    se = float(errors.std()) / errors.numel() ** 0.5
    exact = float(excess_risk(v, p.w_star, variances))
    assert abs(float(errors.mean()) - exact) < 4 * se
    full = float(excess_risk(v, p.w_star, torch.diag(variances)))
    assert full == pytest.approx(exact, rel=1e-14)


def test_gd_path_records_the_per_step_numpy_loop():
    p = _prompts(3, 6, 9, 2, 0.2, seed=2)
    eta, steps = 0.2, [0, 1, 4, 4, 10]
    path = gd_path(p.X, p.y, eta, steps).numpy()  # (3, 5, 6)
    for b in range(3):
        X, y, w = p.X[b].numpy(), p.y[b].numpy(), np.zeros(6)
        expected = {0: w.copy()}
        for t in range(1, 11):
            w = w + eta / 9 * X.T @ (y - X @ w)
            expected[t] = w.copy()
        np.testing.assert_allclose(path[b], [expected[t] for t in steps], rtol=1e-12, atol=1e-14)
    with pytest.raises(ValueError, match="^steps must be a non-empty non-decreasing"):
        gd_path(p.X, p.y, eta, [3, 1])


@pytest.mark.parametrize("n", [6, 16, 40])  # n < d (a flat row-space complement), n = d, n > d
def test_gd_path_over_thousands_of_steps_is_the_stepped_recursion(n):
    # gd_path sums the recursion in an eigenbasis; stepping it 3000 times in numpy must land
    # on the same iterates. The loop's step rounds by at most ~(d + 2) u max|b| (a d-term dot
    # product, Higham's gamma_d) and GD's error map is a contraction at a stable step
    # (eta lambda_max < 2), so its error grows at most linearly in t; the symmetric
    # eigendecomposition's backward error is ~(n + d) u. Hence
    # |diff| <= ((n + d) + t (d + 2)) u max|b| (u = 2^-53; measured at most a quarter of it),
    # which a wrong filter (one step off, a missed eigenvalue) misses by orders of magnitude.
    p = _prompts(4, 16, n, 4, 0.3, seed=5)
    eta = 1.9 / largest_gram_eigenvalue(p.X)  # near the edge: the slowest contraction
    steps = [1, 7, 300, 3000]
    path = gd_path(p.X, p.y, eta, steps).numpy()  # (4, 4, 16)
    unit = np.finfo(np.float64).eps / 2
    for b in range(4):
        X, y, w = p.X[b].numpy(), p.y[b].numpy(), np.zeros(16)
        gram, correlation, rate = X.T @ X / n, X.T @ y / n, float(eta[b])
        for t in range(1, steps[-1] + 1):
            w = w + rate * (correlation - gram @ w)
            if t in steps:
                k = steps.index(t)
                gap = np.abs(path[b, k] - w).max()
                assert gap <= ((n + 16) + t * 18) * unit * np.abs(w).max(), (t, gap)


def test_gd_path_beyond_the_stable_step_grows_without_bound():
    p = _prompts(2, 8, 20, 2, 0.1, seed=6)
    edge = 2.0 / largest_gram_eigenvalue(p.X)
    rates = torch.stack([0.99 * edge, 1.01 * edge])  # (2 rates, 2 prompts)
    norms = gd_path(p.X, p.y, rates, [100, 5000]).norm(dim=-1)  # (rate, prompt, step)
    assert bool(torch.isfinite(norms[0]).all()) and bool((norms[0] < 1e3).all())
    assert not bool((norms[1, :, 1] < 1e30).any())  # overflowing (or inf/NaN), as the loop does


def test_preprocessed_risk_uses_the_effective_weight_r_hat_times_w():
    # Algorithm 1 written out in numpy, then GD on R_hat x; risk of v = R_hat w_tilde.
    p = _prompts(4, 8, 20, 3, 0.1, seed=3)
    risks = gd_excess_risks(p.X, p.y, p.w_star, 0.5, [7], preprocessed=True, relative=True)
    for b in range(4):
        X, y, w_star = p.X[b].numpy(), p.y[b].numpy(), p.w_star[b].numpy()
        r = X.T @ y / 20
        Xt = X * r
        eta = 0.5 / np.linalg.eigvalsh(Xt.T @ Xt / 20)[-1]
        w = np.zeros(8)
        for _ in range(7):
            w = w + eta / 20 * Xt.T @ (y - Xt @ w)
        assert float(risks[b, 0]) == pytest.approx(np.sum((r * w - w_star) ** 2), rel=1e-10)


def test_divergent_gd_gives_inf_never_nan():
    p = _prompts(2, 4, 10, 2, 0.1, seed=4)
    eta = 5.0 / largest_gram_eigenvalue(p.X)  # beyond the stable 2 / lambda_max
    risks = gd_excess_risks(p.X, p.y, p.w_star, eta, [0, 2000])
    assert torch.isinf(risks[:, 1]).all() and not torch.isnan(risks).any()


def test_ridge_uses_the_papers_normalisation():
    # w_lambda = (X^T X / n + lambda I)^{-1} X^T y / n (Thm 5.3), by a numpy solve.
    p = _prompts(3, 7, 12, 2, 0.5, seed=5)
    lambdas = [0.0, 0.1, 2.0]
    risks = least_squares_excess_risks(p.X, p.y, p.w_star, lambdas)
    assert risks.shape == (3, 3)
    for b in range(3):
        X, y, w_star = p.X[b].numpy(), p.y[b].numpy(), p.w_star[b].numpy()
        for k, lam in enumerate(lambdas):
            w = np.linalg.solve(X.T @ X / 12 + lam * np.eye(7), X.T @ y / 12)
            assert float(risks[k, b]) == pytest.approx(np.sum((w - w_star) ** 2), rel=1e-9)


def test_oracle_tuning_picks_the_lowest_mean_and_reads_the_held_out_prompts():
    tuning = torch.tensor([[[5.0, 5.0], [2.0, 4.0]], [[1.0, np.inf], [3.0, 3.5]]])  # (2, 2, N=2)
    held_out = torch.arange(12.0).reshape(2, 2, 3)
    tuned = oracle_tuned(tuning, held_out)
    assert tuned.index == (0, 1)  # mean 3.0; (1, 0) diverged on one prompt
    assert tuned.risks.tolist() == [3.0, 4.0, 5.0]
    assert tuned.mean == 4.0 and tuned.se == pytest.approx(1.0 / 3**0.5)
    assert torch.isinf(tuned.grid_means[1, 0])
