"""Theorem 5.3's expressions (theory._sparse_isotropic): the exact Gaussian-design OLS risks
against Monte Carlo of OLS itself (numpy lstsq / pinv, an independent code path), and the bounds
at hand-computed values."""

import math

import numpy as np
import pytest
from icl_verify.theory import (
    lasso_rate,
    ols_excess_risk,
    theorem_5_3_lower_bound,
    theorem_5_3_step_budget,
    theorem_5_3_upper_bound,
)


def _ols_monte_carlo(n, d, sigma, reps, seed):
    """Mean and SE of ||b_ols - w*||^2 over reps Gaussian designs, w* a fixed unit vector."""
    rng = np.random.default_rng(seed)
    w_star = np.zeros(d)
    w_star[:4] = 0.5  # ||w*|| = 1, the ±1/sqrt(s) prior's norm at s = 4
    risks = np.empty(reps)
    for k in range(reps):
        X = rng.standard_normal((n, d))
        y = X @ w_star + sigma * rng.standard_normal(n)
        b = np.linalg.pinv(X) @ y  # minimum-norm least squares, both regimes
        risks[k] = np.sum((b - w_star) ** 2)
    return risks.mean(), risks.std(ddof=1) / math.sqrt(reps)


@pytest.mark.parametrize(
    ("n", "d", "sigma"),
    [(40, 10, 1.0), (120, 30, 0.5), (10, 40, 0.5), (25, 60, 1.0)],  # n > d + 1 and d > n + 1
)
def test_exact_ols_risk_matches_monte_carlo(n, d, sigma):
    mean, se = _ols_monte_carlo(n, d, sigma, reps=2000, seed=n * d)
    exact = float(ols_excess_risk(n, d, sigma))
    assert abs(mean - exact) <= 4 * se, (mean, se, exact)
    # sharp enough to reject the naive sigma^2 d / n (or sigma^2 n / d without the -1)
    naive = sigma**2 * d / n if n > d else (1 - n / d) + sigma**2 * n / d
    assert abs(naive - exact) > 4 * se


def test_ols_risk_is_infinite_at_the_interpolation_peak():
    assert np.isinf(ols_excess_risk([31, 30, 29], 30, 1.0)).all()


def test_upper_bound_at_hand_computed_values():
    # n = 100, d = 50, s = 2, sigma = 1, delta = 0.1: ln^2(200) ln^2(500) (0.02 + 50*4/1e4)
    expected = math.log(200) ** 2 * math.log(500) ** 2 * (0.02 + 0.02)
    assert float(theorem_5_3_upper_bound(100, 50, 2, 1.0)) == pytest.approx(expected, rel=1e-14)
    # the discussion's reading keeps d s / n^2 = 0.01
    discussion = math.log(200) ** 2 * math.log(500) ** 2 * (0.02 + 0.01)
    value = theorem_5_3_upper_bound(100, 50, 2, 1.0, reading="discussion")
    assert float(value) == pytest.approx(discussion, rel=1e-14)
    # sigma^2 enters twice: in front and inside the first log
    half = theorem_5_3_upper_bound(100, 50, 2, 0.5)
    assert float(half) == pytest.approx(
        0.25 * math.log(800) ** 2 * math.log(500) ** 2 * 0.04, rel=1e-14
    )


def test_lower_bound_regimes_and_lasso_rate_by_hand():
    np.testing.assert_allclose(
        theorem_5_3_lower_bound([100, 100, 50], [50, 100, 400], [1.0, 2.0, 0.5]),
        [0.5, 4.0, 1 - 0.125 + 0.25 * 0.125],
    )
    assert float(lasso_rate(200, 40, 4, 0.5)) == pytest.approx(0.25 * 4 * math.log(10) / 200)


def _smallest_t(eta, n, s, sigma):
    """The first t at which F.1's bias bound s (1 - eta beta^2/2)^(2t), beta^2 = 1/s, falls to
    sigma^2/n, by iterating it (no logarithm, no closed form)."""
    bias, t = float(s), 0
    while bias > sigma**2 / n:
        bias *= (1 - eta / (2 * s)) ** 2
        t += 1
    return t


def test_step_budget_is_what_the_bias_bound_iterated_needs_in_the_beta_reading():
    # a small absolute step (eta beta^2 <= 0.025): (1 - x/2)^(2t) ~ exp(-x t), so the iterated
    # bound needs eta t = s ln(n s/sigma^2) up to O(eta/s) and one step of rounding
    eta, n, sigma, s = 0.05, 1000, 0.5, np.array([2, 4, 8, 16])
    needed = np.array([eta * _smallest_t(eta, n, k, sigma) for k in s])
    np.testing.assert_allclose(needed / theorem_5_3_step_budget(n, s, sigma), 1.0, rtol=0.02)
    # the appendix's printed t >~ log/(eta s) misses it by s^2: 64x over s = 2..16
    ratio = needed / theorem_5_3_step_budget(n, s, sigma, reading="appendix")
    assert ratio[-1] / ratio[0] == pytest.approx(64.0, rel=0.02)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: theorem_5_3_upper_bound(100, 50, 2, 0.0), "sigma must be finite and > 0"),
        (lambda: theorem_5_3_upper_bound(0, 50, 2, 1.0), "n must be finite and > 0"),
        (lambda: theorem_5_3_upper_bound(10, 50, 2, 1.0, reading="x"), "reading must be one of"),
        (lambda: ols_excess_risk(10, 5, -1.0), "sigma must be >= 0"),
        (lambda: theorem_5_3_step_budget(10, 2, 1.0, reading="x"), "reading must be one of"),
        (lambda: theorem_5_3_step_budget(10, 0, 1.0), "s must be finite and > 0"),
    ],
)
def test_bad_input_is_one_line_value_error(call, message):
    with pytest.raises(ValueError, match=message) as error:
        call()
    assert "\n" not in str(error.value)
