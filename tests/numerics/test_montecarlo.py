"""Monte Carlo losses: exact GD risks derived here, honest SEs, reproducibility, chunking, grids."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.stats
import torch
from icl_verify.numerics import (
    RANDOMNESS_BLOCK,
    JointMonteCarloEstimate,
    LinearInLabels,
    Prompts,
    bayes_prediction,
    gd_prediction,
    kernel_sum_loss_grid,
    kernel_sum_prediction,
    kms_covariance,
    lasso_prediction,
    monte_carlo_loss,
    monte_carlo_losses,
    ols_prediction,
    ridge_prediction,
    sample_linear_regression,
)

from icl_verify.settings import Setting


def gd(eta, debiased=False):
    return lambda p: gd_prediction(p.X, p.y, p.x_query, eta, debiased=debiased)


# --------------------------------------------------------------------------------------------
# evidence (b): Monte Carlo of one-step GD risks against formulas derived in this test
#
# Data (§0.2): x_i, x_q ~ N(0, I_d), beta ~ N(0, I_d/d), eps ~ N(0, sigma2), y_q noisy.
# A predictor linear in y, y_hat = w^T y with w = w(X, x_q), has
#     E[(y_hat - y_q)^2 | X, x_q] = ||X^T w - x_q||^2 / d + sigma2 ||w||^2 + sigma2.
# Vanilla GD: w = (eta/L) X x_q, so X^T w = (eta/L) W x_q with W = X^T X ~ Wishart_d(L, I).
# Wishart moments: E W = sum_i E x_i x_i^T = L I;
#     E W^2 = sum_{i,j} E x_i x_i^T x_j x_j^T = L E[||x||^2 x x^T] + L(L-1) I
#           = L (d + 2) I + L (L - 1) I = L (L + d + 1) I.
# Averaging over x_q (E x_q x_q^T = I): E||(eta/L) W x_q - x_q||^2 = tr E((eta/L) W - I)^2
#     = d [eta^2 (L + d + 1)/L - 2 eta + 1], and sigma2 E||w||^2 = sigma2 (eta/L)^2 tr E W
#     = sigma2 eta^2 d / L. Dividing the first by d and adding:
#     R_GD(eta) = 1 + sigma2 - 2 eta + eta^2 (L + d (1 + sigma2) + 1) / L.
# Debiased GD (4.11): w = (eta/L) P X x_q with the centring projector P = I - 11^T/L (rank L-1),
# so X^T w = (eta/L) X^T P X x_q and X^T P X ~ Wishart_d(L - 1, I) (rotate P to diag(I_{L-1}, 0)):
#     R_dGD(eta) = 1 + sigma2 - 2 eta (L-1)/L + eta^2 (L-1)(L + d(1 + sigma2)) / L^2.


def gd_risk_derived(eta, d, L, sigma2):
    return 1 + sigma2 - 2 * eta + eta**2 * (L + d * (1 + sigma2) + 1) / L


def debiased_gd_risk_derived(eta, d, L, sigma2):
    return 1 + sigma2 - 2 * eta * (L - 1) / L + eta**2 * (L - 1) * (L + d * (1 + sigma2)) / L**2


@pytest.mark.parametrize(
    "d, L, sigma2, eta",
    [(5, 20, 0.25, 0.7), (3, 4, 0.5, 0.6)],  # the second: L small, so the "+1" and (L-1) matter
)
@pytest.mark.parametrize("debiased", [False, True])
def test_monte_carlo_of_one_step_gd_matches_the_derived_risk(d, L, sigma2, eta, debiased):
    setting = Setting(d=d, L=L, sigma2=sigma2)
    exact = (debiased_gd_risk_derived if debiased else gd_risk_derived)(eta, d, L, sigma2)
    joint = monte_carlo_losses(
        {"plain": gd(eta, debiased), "conditional": LinearInLabels(gd(eta, debiased))},
        setting,
        60_000,
        seed=11,
    )
    for name in ("plain", "conditional"):
        assert abs(joint[name].z_score(exact)) < 4, (name, joint[name], exact)
    assert joint["conditional"].stderr < joint["plain"].stderr  # the point of conditioning


def test_derived_risk_rejects_the_formula_without_the_wishart_fourth_moment_term():
    # The test above has teeth: replacing E W^2 = L(L + d + 1) I by the Gaussian-free guess
    # L(L + d) I (dropping the "+1" from E||x||^2 x x^T = (d + 2) I) shifts the risk by eta^2 / L,
    # which at d=3, L=4 the Monte Carlo resolves by far more than 4 SE.
    d, L, sigma2, eta = 3, 4, 0.5, 0.6
    setting = Setting(d=d, L=L, sigma2=sigma2)
    estimate = monte_carlo_loss(LinearInLabels(gd(eta)), setting, 40_000, seed=12)
    wrong = gd_risk_derived(eta, d, L, sigma2) - eta**2 / L
    assert abs(estimate.z_score(wrong)) > 10, estimate


def test_ols_risk_matches_the_inverse_wishart_mean():
    # For L > d + 1, OLS reproduces beta exactly up to noise: X^T w = x_q with
    # w = X (X^T X)^{-1} x_q, so the conditional risk is sigma2 + sigma2 x_q^T (X^T X)^{-1} x_q;
    # with E (X^T X)^{-1} = I / (L - d - 1) (inverse Wishart mean), R_OLS = sigma2 (1 + d/(L-d-1)).
    d, L, sigma2 = 4, 12, 0.3
    estimate = monte_carlo_loss(
        lambda p: ols_prediction(p.X, p.y, p.x_query),
        Setting(d=d, L=L, sigma2=sigma2),
        40_000,
        seed=13,
    )
    assert abs(estimate.z_score(sigma2 * (1 + d / (L - d - 1)))) < 4, estimate


def test_bayes_prediction_beats_ridge_with_any_other_lambda():
    # The posterior mean minimises E(y_hat - y_q)^2 among all predictors, so on the same prompts
    # ridge with lambda != sigma2 d has a larger loss; the paired difference resolves it.
    d, L, sigma2 = 5, 10, 0.5
    best = sigma2 * d
    predictors = {
        "bayes": LinearInLabels(lambda p: bayes_prediction(p.X, p.y, p.x_query, sigma2)),
        "smaller": LinearInLabels(lambda p: ridge_prediction(p.X, p.y, p.x_query, best / 4)),
        "larger": LinearInLabels(lambda p: ridge_prediction(p.X, p.y, p.x_query, best * 4)),
    }
    joint = monte_carlo_losses(predictors, Setting(d=d, L=L, sigma2=sigma2), 20_000)
    for other in ("smaller", "larger"):
        gain = joint.difference(other, "bayes")
        assert gain.mean > 4 * gain.stderr, (other, gain)


# --------------------------------------------------------------------------------------------
# the variance-reduced estimator against the plain one, on the same prompts


@pytest.mark.parametrize(
    "name, predictor",
    [
        ("ols", lambda p: ols_prediction(p.X, p.y, p.x_query)),
        ("ridge", lambda p: ridge_prediction(p.X, p.y, p.x_query, 2.0)),
        (
            "two-head kernel sum",
            lambda p: kernel_sum_prediction(
                torch.tensor([0.3, -0.3]), torch.tensor([1.5, -1.5]), p.X, p.y, p.x_query
            ),
        ),
    ],
)
def test_conditional_estimator_agrees_with_plain_within_4_se(name, predictor):
    joint = monte_carlo_losses(
        {"plain": predictor, "conditional": LinearInLabels(predictor)},
        Setting(d=4, L=12, sigma2=0.2),
        30_000,
        seed=3,
    )
    difference = joint.difference("conditional", "plain")
    assert abs(difference.mean) < 4 * difference.stderr, (name, difference)


def test_conditional_estimator_holds_for_correlated_covariates():
    # The conditional risk integrates out beta and the noise only; x ~ N(0, KMS) is sampled.
    setting = Setting(d=4, L=16, sigma2=0.1)
    predictor = gd(0.5, debiased=True)
    joint = monte_carlo_losses(
        {"plain": predictor, "conditional": LinearInLabels(predictor)},
        setting,
        30_000,
        seed=4,
        covariance=kms_covariance(4, 0.5, dtype=torch.float32),
    )
    difference = joint.difference("conditional", "plain")
    assert abs(difference.mean) < 4 * difference.stderr


def test_linear_in_labels_rejects_a_nonlinear_predictor_and_a_bare_sampler():
    setting = Setting(d=3, L=10, sigma2=0.1)
    lasso = LinearInLabels(lambda p: lasso_prediction(p.X, p.y, p.x_query, 0.05))
    with pytest.raises(ValueError, match="must be linear in the labels"):
        monte_carlo_loss(lasso, setting, 100)

    def sampler(n, generator):
        return sample_linear_regression(n, Setting(3, 10, 0.1), generator=generator)

    with pytest.raises(ValueError, match="source must be a Setting"):
        monte_carlo_loss(LinearInLabels(gd(0.5)), sampler, 100)


# --------------------------------------------------------------------------------------------
# standard errors, reproducibility, chunking


def test_reported_standard_error_matches_the_spread_of_independent_repeats():
    # R independent estimates (seeds 0..R-1) of the same loss: the sample variance of their means,
    # over the mean reported SE^2, is ~ chi2_{R-1}/(R-1) when the SEs are honest (means of
    # n = 4000 prompts are close to Gaussian). Accept inside the central 99.9% interval.
    R, n = 30, 4000
    setting = Setting(d=5, L=20, sigma2=0.1)
    estimates = [monte_carlo_loss(gd(0.8), setting, n, seed=s) for s in range(R)]
    means = np.array([e.mean for e in estimates])
    reported = np.mean([e.stderr**2 for e in estimates])
    ratio = means.var(ddof=1) / reported
    low, high = scipy.stats.chi2.ppf([0.0005, 0.9995], R - 1) / (R - 1)
    assert low < ratio < high, (ratio, low, high)


def test_paired_ratio_is_the_delta_method_on_the_samples_and_its_se_is_honest():
    # The ratio from the means and covariance equals statistics.ratio_of_means on the per-draw
    # values it summarises; over R independent repeats the ratios' spread matches the reported
    # SE (chi2 band as above). Correlated pairs: b = a + independent noise, so pairing matters.
    from icl_verify import statistics

    rng = np.random.default_rng(0)
    R, n = 40, 4000
    ratios, reported = [], []
    for _ in range(R):
        a = rng.chisquare(2, n)
        b = 0.5 * a + rng.chisquare(1, n)
        joint = JointMonteCarloEstimate(
            ("a", "b"), np.array([a.mean(), b.mean()]), np.cov(np.stack([a, b])), n
        )
        estimate = joint.ratio("a", "b")
        assert np.allclose((estimate.mean, estimate.stderr), statistics.ratio_of_means(a, b))
        ratios.append(estimate.mean)
        reported.append(estimate.stderr**2)
    ratio = np.var(ratios, ddof=1) / np.mean(reported)
    low, high = scipy.stats.chi2.ppf([0.0005, 0.9995], R - 1) / (R - 1)
    assert low < ratio < high, (ratio, low, high)


def test_same_seed_same_numbers_and_different_seeds_differ():
    setting = Setting(d=3, L=8, sigma2=0.1)
    first = monte_carlo_loss(gd(0.5), setting, 3000, seed=5)
    assert monte_carlo_loss(gd(0.5), setting, 3000, seed=5) == first
    assert monte_carlo_loss(gd(0.5), setting, 3000, seed=6).mean != first.mean


def test_estimate_does_not_depend_on_the_chunk_size():
    n = 2 * RANDOMNESS_BLOCK + 517  # spans three randomness blocks, the last partial
    setting = Setting(d=3, L=8, sigma2=0.1)
    estimates = [
        monte_carlo_loss(gd(0.5), setting, n, seed=7, chunk=chunk, dtype=torch.float64)
        for chunk in (333, RANDOMNESS_BLOCK, 10 * n)
    ]
    for other in estimates[1:]:
        assert other.n == n
        np.testing.assert_allclose(other.mean, estimates[0].mean, rtol=1e-12)
        np.testing.assert_allclose(other.stderr, estimates[0].stderr, rtol=1e-9)


def test_memory_is_bounded_by_the_chunk():
    sizes = []

    def recording(p: Prompts) -> torch.Tensor:
        sizes.append(p.y_query.shape[0])
        return gd_prediction(p.X, p.y, p.x_query, 0.5)

    n, chunk = RANDOMNESS_BLOCK + 1000, 700
    monte_carlo_loss(recording, Setting(d=3, L=8, sigma2=0.1), n, chunk=chunk)
    assert max(sizes) <= chunk and sum(sizes) == n


def test_a_sampler_source_draws_the_same_prompts_as_the_equivalent_setting():
    setting = Setting(d=3, L=8, sigma2=0.2)

    def sampler(n, generator):
        return sample_linear_regression(n, Setting(3, 8, 0.2), generator=generator)

    assert monte_carlo_loss(gd(0.5), sampler, 2000, seed=9) == monte_carlo_loss(
        gd(0.5), setting, 2000, seed=9
    )


def test_bad_arguments_raise_one_line_errors():
    setting = Setting(d=3, L=8, sigma2=0.1)
    with pytest.raises(ValueError, match="n_prompts must be an integer >= 2"):
        monte_carlo_loss(gd(0.5), setting, 1)
    with pytest.raises(ValueError, match="chunk must be an integer >= 1"):
        monte_carlo_loss(gd(0.5), setting, 10, chunk=0)
    with pytest.raises(ValueError, match="source must be a Setting or a sampler"):
        monte_carlo_loss(gd(0.5), 42, 10)
    with pytest.raises(ValueError, match="name must be one of"):
        monte_carlo_losses({"a": gd(0.5)}, setting, 10)["b"]


# --------------------------------------------------------------------------------------------
# the (omega, mu) landscape


@pytest.mark.parametrize("heads", [1, 2])
def test_grid_equals_the_plain_estimator_on_the_same_prompts(heads):
    # Independent path: `monte_carlo_loss` evaluates kernel_sum_prediction per point; the grid
    # gets every mu from accumulated 2nd and 4th moments. Same seed, same prompts: equal.
    setting = Setting(d=4, L=10, sigma2=0.1)
    w = torch.tensor([0.05, 0.3, 1.2], dtype=torch.float64)
    m = torch.tensor([0.5, 2.0, 6.0], dtype=torch.float64)
    omega = torch.stack([w, -w], 1) if heads == 2 else w[:, None]
    mu = torch.stack([m, -m], 1) if heads == 2 else m[:, None]
    grid = kernel_sum_loss_grid(omega, mu, setting, 3000, seed=8, chunk=1000, dtype=torch.float64)
    assert grid.mean.shape == grid.stderr.shape == (3, 3) and grid.n == 3000
    for g in range(3):
        for k in range(3):
            plain = monte_carlo_loss(
                lambda p, g=g, k=k: kernel_sum_prediction(omega[g], mu[k], p.X, p.y, p.x_query),
                setting,
                3000,
                seed=8,
                dtype=torch.float64,
            )
            np.testing.assert_allclose(grid.mean[g, k], plain.mean, rtol=1e-10)
            np.testing.assert_allclose(grid.stderr[g, k], plain.stderr, rtol=1e-6)


def test_grid_rejects_mismatched_head_counts():
    with pytest.raises(ValueError, match="same number of heads H"):
        kernel_sum_loss_grid([[0.1, -0.1]], [[1.0]], Setting(d=3, L=8, sigma2=0.1), 10)
