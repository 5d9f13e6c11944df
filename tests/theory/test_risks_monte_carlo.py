"""Exact one-step GD risks (He et al. 2025, §4.3, (4.11)) and the Bayes limit (Thm 4.2(iii)) vs MC.

The Monte Carlo (tests/theory/montecarlo_numpy.py) evaluates the predictors themselves:
one-step GD (eta/L) sum_i y_i x_i^T x_q, debiased GD (eta/L) sum_i y_i (x_i - xbar)^T x_q,
and the posterior mean x_q^T (X^T X + sigma2 d I)^{-1} X^T y, averaging the exact risk
given the covariates (identity (*) of that module). Agreement is judged within 4 SE.
"""

import mpmath
import numpy as np
import pytest
from icl_verify.theory import (
    Setting,
    bayes_risk_limit,
    compare_with_bayes,
    debiased_gd_risk,
    debiasing_gap,
    gd_risk,
    gd_risk_limit,
    optimal_gd,
)

from tests.theory import montecarlo_numpy as mc

SIGMA2 = 0.1
GD_POINTS = [(2, 3, 0.7, 200_000), (5, 40, 0.897, 100_000)]  # (d, L, eta, prompts)


@pytest.mark.parametrize("debiased", [False, True], ids=["vanilla", "debiased"])
@pytest.mark.parametrize("d, L, eta, n", GD_POINTS, ids=lambda v: str(v))
def test_one_step_gd_risk_matches_monte_carlo(d, L, eta, n, debiased):
    setting = Setting(d, L, SIGMA2)
    rng = np.random.default_rng(1000 * d + L + debiased)
    estimate = mc.query_linear_risk(mc.one_step_gd_weights(eta, debiased), d, L, SIGMA2, rng, n)
    predicted = float((debiased_gd_risk if debiased else gd_risk)(eta, setting))
    print(
        f"d={d} L={L} eta={eta} debiased={debiased}: MC {estimate.mean:.5f} ± {estimate.se:.5f}"
        f" vs exact {predicted:.5f}"
    )
    assert abs(estimate.mean - predicted) < 4 * estimate.se


def test_query_averaged_monte_carlo_agrees_with_plain_sampling():
    # the x_q-averaged identity against sampling beta, noise and x_q, at one small point
    d, L, eta = 2, 3, 0.7
    weights = mc.one_step_gd_weights(eta, debiased=True)
    plain = mc.plain_risk(
        mc.as_query_weights(weights), d, L, SIGMA2, np.random.default_rng(5), 200_000
    )
    averaged = mc.query_linear_risk(weights, d, L, SIGMA2, np.random.default_rng(6), 200_000)
    assert abs(plain.mean - averaged.mean) < 4 * np.hypot(plain.se, averaged.se)
    assert averaged.se < plain.se  # the point of averaging


@pytest.mark.parametrize("debiased", [False, True], ids=["vanilla", "debiased"])
@pytest.mark.parametrize("d, L, sigma2", [(2, 3, 0.1), (5, 40, 0.1), (20, 40, 1.0)])
def test_optimal_gd_step_minimises_the_risk(d, L, sigma2, debiased):
    setting = Setting(d, L, sigma2)
    risk = debiased_gd_risk if debiased else gd_risk
    tuned = optimal_gd(setting, debiased=debiased)
    assert tuned.risk == pytest.approx(float(risk(tuned.eta, setting)), rel=1e-14)
    for delta in (1e-1, 1e-3):
        assert risk(tuned.eta + delta, setting) > tuned.risk
        assert risk(tuned.eta - delta, setting) > tuned.risk
    # the risk is a quadratic in eta, so the step at which its central difference vanishes is eta*
    h = 1e-3
    slope = (risk(tuned.eta + h, setting) - risk(tuned.eta - h, setting)) / (2 * h)
    assert abs(slope) < 1e-9


# ---- Theorem 4.2(iii): the Bayes risk in the proportional limit d/L -> xi ----

XI = 1 / 8


def _ridge_gap(d, n, seed):
    """MC of the posterior-mean risk at (d, L = d / XI) minus the d -> inf limit, with its SE."""
    estimate = mc.query_linear_risk(
        mc.ridge_weights(SIGMA2), d, int(d / XI), SIGMA2, np.random.default_rng(seed), n, chunk=100
    )
    return estimate.mean - bayes_risk_limit(XI, SIGMA2), estimate.se


def test_bayes_risk_limit_matches_the_posterior_mean_at_finite_size():
    gap_25, se_25 = _ridge_gap(25, 2000, seed=25)
    gap_50, se_50 = _ridge_gap(50, 300, seed=50)
    print(f"ridge MC - limit: d=25 {gap_25:.2e} ± {se_25:.1e}, d=50 {gap_50:.2e} ± {se_50:.1e}")
    # Finite-size error: the risk is sigma2 + sigma2 E tr((X^T X + sigma2 d I)^{-1}), a smooth
    # spectral statistic whose mean reaches the Marchenko-Pastur value at rate O(1/d) (L = d / xi).
    # So doubling d halves the gap. (Measured while writing this test, d x gap = 0.00199 at
    # d = 6, 12, 25, 50 with SE ~3e-6 each.) Checked here: 2 gap_50 - gap_25 cancels the 1/d term.
    richardson_se = np.hypot(2 * se_50, se_25)
    assert abs(2 * gap_50 - gap_25) < 4 * richardson_se
    # The comparison at d = 50: 4 SE plus the finite-size allowance implied by the d = 25 gap under
    # 1/d decay, i.e. half its measured size (taken at its 4-SE upper end).
    allowance = 0.5 * (abs(gap_25) + 4 * se_25)
    assert abs(gap_50) < 4 * se_50 + allowance
    assert gap_50 > 0 and gap_25 > 2 * se_25  # the finite-size gap is real and positive ...
    assert abs(gap_50) < abs(gap_25)  # ... and shrinks


XI_GRID = np.geomspace(1e-3, 10.0, 25)
SIGMA2_GRID = [0.01, 0.1, 0.5, 1.0, 3.0, 10.0]


@pytest.mark.parametrize("sigma2", SIGMA2_GRID)
def test_compare_with_bayes_bounds_hold_on_a_grid(sigma2):
    for xi in XI_GRID:
        cmp = compare_with_bayes(float(xi), sigma2)
        assert cmp.gd_risk == gd_risk_limit(float(xi), sigma2)
        assert cmp.bayes_risk == bayes_risk_limit(float(xi), sigma2)
        # Bayes is optimal, so never worse than tuned GD; both include the noise floor
        assert sigma2 < cmp.bayes_risk <= cmp.gd_risk
        # rounding slack: the ratios are formed from O(1) numbers, relative error ~1e-15
        assert cmp.risk_ratio <= cmp.risk_ratio_bound * (1 + 1e-12)
        assert cmp.excess_ratio <= cmp.excess_ratio_bound * (1 + 1e-12)


@pytest.mark.parametrize("sigma2", [0.1, 1.0, 3.0])
def test_excess_ratio_tends_to_one_plus_one_over_sigma2_as_xi_vanishes(sigma2):
    # As xi -> 0: tuned GD excess = kappa / (1 + kappa) = xi (1 + sigma2) + O(xi^2), and the
    # ridge excess sigma2 tr((X^T X + sigma2 d I)^{-1}) ~ sigma2 d / L = sigma2 xi + O(xi^2).
    # So the ratio is (1 + sigma2) / sigma2 + O(xi): the error shrinks ~10x per decade of xi.
    limit = 1 + 1 / sigma2
    errors = [abs(compare_with_bayes(xi, sigma2).excess_ratio - limit) for xi in (1e-2, 1e-3, 1e-4)]
    assert errors[2] < 1e-3 * limit
    for coarse, fine in zip(errors, errors[1:], strict=False):
        assert fine / coarse == pytest.approx(0.1, rel=0.15)


def test_reference_table_of_limits():
    # reference §HE-T4.2iii table (independent hand derivation there), 3-4 significant digits
    table = [(0.05, 0.1, 0.1521, 0.1052), (0.125, 1.0, 1.2000, 1.1231), (0.5, 3.0, 3.6667, 3.6458)]
    for xi, sigma2, gd, bayes in table:
        assert gd_risk_limit(xi, sigma2) == pytest.approx(gd, abs=6e-5)
        assert bayes_risk_limit(xi, sigma2) == pytest.approx(bayes, abs=6e-5)


@pytest.mark.parametrize("xi", [1e-4, 1e-6, 1e-8, 1e-10])
@pytest.mark.parametrize("sigma2", [0.1, 3.0])
def test_bayes_limit_is_accurate_at_small_xi(xi, sigma2):
    # As xi -> 0 the closed form subtracts two ~1/xi numbers to get an excess ~sigma2 xi; the
    # reference is the same closed form in 50-digit arithmetic, where that cancellation is harmless.
    with mpmath.workdps(50):
        x, s = mpmath.mpf(xi), mpmath.mpf(sigma2)
        shifted = s + (1 - x) / x
        excess = (s + (x - 1) / x + mpmath.sqrt(shifted**2 + 4 * s)) / 2 - s
    assert bayes_risk_limit(xi, sigma2) - sigma2 == pytest.approx(float(excess), rel=1e-10)
    cmp = compare_with_bayes(xi, sigma2)
    assert cmp.excess_ratio <= cmp.excess_ratio_bound


@pytest.mark.parametrize("d, L", [(2, 3), (5, 40), (20, 60)])
def test_the_gap_of_debiased_and_vanilla_gd_matches_monte_carlo(d, L):
    # E(y_dGD - y_GD)^2 = eta^2 (D + 2) / L^2: the difference of the two predictors' weights is
    # label-linear, so identity (*) with the query's own term and noise left out (x_q -> 0,
    # minus sigma2) gives its mean square given the covariates
    eta, n = 0.8, 100_000
    gd, dgd = (mc.as_query_weights(mc.one_step_gd_weights(eta, flag)) for flag in (False, True))
    rng = np.random.default_rng(7 * d + L)

    def per_prompt(m):
        X, x_q = mc.sample_covariates(rng, m, d, L)
        gap = dgd(X, x_q) - gd(X, x_q)
        return mc.conditional_risk(gap, X, np.zeros_like(x_q), SIGMA2) - SIGMA2

    estimate = mc._chunked_mean(per_prompt, n, 4_096)
    predicted = float(debiasing_gap(eta, Setting(d, L, SIGMA2)))
    assert abs(estimate.mean - predicted) < 4 * estimate.se
    assert estimate.se < 0.02 * predicted  # resolves the 2 of (D + 2) at every point
