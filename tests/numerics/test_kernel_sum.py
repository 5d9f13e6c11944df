"""Measurements of the kernel-sum predictor (numerics._he2025.kernel_sum) against exact statements.

- (4.9): heads sharing a KQ scale compute the same softmax average, so any split of a group
  sum predicts what the two-head model predicts, to float64 rounding; a 1% error in a group
  sum shows far above it.
- The single-head profile is read off a quadratic in mu: at its minimiser the Monte Carlo loss
  at that mu (same prompts) equals the profile's minimum.
- (4.10): the ± pair's distance to debiased GD at fixed eta = 2 omega mu scales as omega^2;
  the slope of its RMS carries the larger of the fit's and the Monte Carlo standard error.
"""


import numpy as np
import pytest
import torch
from icl_verify.numerics import (
    SquareGaps,
    kernel_sum_loss_grid,
    relative_prediction_gap,
    sample_linear_regression,
    single_head_profile,
    square_gaps_to_debiased_gd,
)

from icl_verify.settings import Setting
from icl_verify.statistics import loglog_slope

SETTING = Setting(d=5, L=40, sigma2=0.1)
ROUNDING = 4 * (4 + 2) * np.finfo(np.float64).eps  # HE-4.9's tolerance for H <= 4


def _prompts(n=256, seed=1):
    generator = torch.Generator().manual_seed(seed)
    return sample_linear_regression(
        n, Setting(5, 40, 0.1), generator=generator, dtype=torch.float64
    )


def test_a_split_group_sum_predicts_what_the_pair_predicts():
    omega, mu = 0.2, 2.5
    heads, weights = [omega, omega, -omega, 0.0], [1.0, 1.5, -mu, 0.0]
    assert relative_prediction_gap(heads, weights, omega, mu, _prompts()) <= ROUNDING


def test_a_wrong_group_sum_shows_far_above_rounding():
    omega, mu = 0.2, 2.5
    heads, weights = [omega, omega, -omega, 0.0], [1.01, 1.515, -mu, 0.0]  # + group 1% high
    assert relative_prediction_gap(heads, weights, omega, mu, _prompts()) > 1e6 * ROUNDING


def test_single_head_profile_is_the_minimum_over_mu_on_the_same_prompts():
    mu, loss = single_head_profile([0.3, 0.5], SETTING, 4096, seed=3)
    grid = kernel_sum_loss_grid(
        [[0.3], [0.5]], [[mu[0]], [mu[1]], [mu[0] + 0.2]], SETTING, 4096, seed=3,
        dtype=torch.float64,
    )  # fmt: skip
    np.testing.assert_allclose(np.diag(grid.mean[:, :2]), loss, rtol=1e-12)
    assert grid.mean[0, 2] > loss[0]  # a step away from the minimiser is higher


def test_distance_to_debiased_gd_is_of_order_omega_squared_at_fixed_eta():
    gaps = square_gaps_to_debiased_gd([0.005, 0.01, 0.02], [40], 0.879, 5, 0.1, 1024, seed=0)
    slopes = np.diff(np.log(gaps.rms)) / np.log(2.0)
    np.testing.assert_allclose(slopes, 2.0, atol=0.01)
    assert gaps.log_slope_stderr([0.005, 0.01, 0.02]) < 0.01


def test_rms_slope_takes_the_larger_of_the_fit_and_monte_carlo_errors():
    x = np.array([1.0, 2.0, 4.0, 8.0])
    exact = SquareGaps(x**4, np.diag(1e-6 * x**8), 10**4)  # RMS = x^2: the fit has no residual
    slope, se = exact.rms_loglog_slope(x)
    assert slope == pytest.approx(2.0, abs=1e-12) and se == exact.log_slope_stderr(x) > 0
    bent = SquareGaps(x**4 * np.array([1.0, 1.2, 0.8, 1.0]), np.diag(1e-16 * x**8), 10**4)
    slope, se = bent.rms_loglog_slope(x)  # residuals dominate the tiny Monte Carlo error
    fit = loglog_slope(x, bent.rms)
    assert (slope, se) == (fit.slope, fit.slope_se) and se > 10 * bent.log_slope_stderr(x)
    gaps = square_gaps_to_debiased_gd([0.005, 0.01, 0.02], [40], 0.879, 5, 0.1, 512, seed=1)
    slope, se = gaps.rms_loglog_slope([0.005, 0.01, 0.02])
    assert abs(slope - 2.0) < 4 * se + 0.01  # order omega^2 (4.10)
