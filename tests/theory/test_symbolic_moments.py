"""The Gaussian moments and dropped terms behind (4.1), against quadrature and Monte Carlo.

`theory.symbolic.approximate_loss` integrates these with sympy; here the same
quantities come from scipy quadrature (to its tolerance) or from sampling the
kernel-sum predictor's ingredients directly (within 4 standard errors).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from icl_verify.theory.symbolic.approximate_loss import (
    a,
    b,
    beta_norm2,
    derive_approximate_loss,
    gaussian_moments,
    omega_a,
    omega_b,
    q,
)
from icl_verify.theory.symbolic.symbols import L, sigma2
from scipy import integrate


def gaussian_quad(power: int, rate: float, quadratic: float, variance: float):
    """E[s^power exp(rate s + quadratic s^2)] for s ~ N(0, variance), by scipy quadrature,
    as a `pytest.approx` carrying its tolerance.

    The exponent is combined before exponentiating; the range +-60 sd loses < e^-1000.
    The tolerance is where quad stopped: its own error estimate (QUADPACK's, which includes
    a rounding term 50 eps |integrand|; <= 1e-12 relative when it meets the asked epsrel),
    doubled, plus the rounding of the closed form it is compared with (64 eps |value|).
    """
    precision = 1.0 / variance - 2.0 * quadratic  # > 0
    width = 60.0 / math.sqrt(precision) + abs(rate) / precision

    def integrand(s: float) -> float:
        exponent = rate * s - precision * s * s / 2
        return s**power * math.exp(exponent) / math.sqrt(2 * math.pi * variance)

    value, error = integrate.quad(integrand, -width, width, epsabs=0, epsrel=1e-12, limit=200)
    assert error <= 1e-9 * abs(value), (value, error)  # precise enough to tell
    return pytest.approx(value, rel=0, abs=2 * error + 64 * np.finfo(float).eps * abs(value))


@pytest.mark.parametrize("rate, variance", [(-1.0, 0.5), (0.3, 3.0), (1.2, 1.0)])
def test_score_moments_equal_quadrature(rate, variance):
    moments = gaussian_moments()
    for power, key in enumerate(("E exp(a s)", "E s exp(a s)", "E s^2 exp(a s)")):
        expected = gaussian_quad(power, rate, 0.0, variance)
        derived = float(moments[key].subs({a: rate, q: variance}))
        assert derived == expected, key


@pytest.mark.parametrize("rate", [-1.0, 0.2, 0.45])
def test_chi_square_moment_and_fourth_moment_equal_quadrature(rate):
    moments = gaussian_moments()
    expected = gaussian_quad(0, 0.0, rate, 1.0)
    assert float(moments["E exp(a z^2)"].subs(a, rate)) == expected
    assert float(moments["E z^4"]) == gaussian_quad(4, 0.0, 0.0, 1.0)


def test_per_sample_second_moment_matches_monte_carlo():
    # Given x_q and beta (d = 3), sample contexts x and noise; average T_h T_h'.
    rng = np.random.default_rng(1)
    x_q, beta, noise, heads = (
        np.array([1.0, -0.5, 0.8]),
        np.array([0.6, 0.3, -0.9]),
        0.2,
        (0.3, -0.5),
    )
    n = 400_000
    x = rng.standard_normal((n, 3))
    score = x @ x_q
    y = x @ beta + math.sqrt(noise) * rng.standard_normal(n)
    sq_norm = float(x_q @ x_q)
    terms = [y * np.exp(w * score - w * w * sq_norm / 2) for w in heads]
    product = terms[0] * terms[1]
    formula = derive_approximate_loss(2).results["per_sample_second_moment"]
    expected = float(
        formula.subs(
            {
                omega_a: heads[0],
                omega_b: heads[1],
                q: sq_norm,
                b: float(beta @ x_q),
                beta_norm2: float(beta @ beta),
                sigma2: noise,
            }
        )
    )
    se = product.std() / math.sqrt(n)
    assert abs(product.mean() - expected) < 4 * se


def test_ratio_estimator_bias_is_the_leading_1_over_L_term():
    # One head on labels y = (b/q) s (beta along x_q, no noise): the mean of the softmax
    # ratio minus omega b, times L, is C + C'/L + O(1/L^2). Fit C + C'/L over three L
    # (weighted least squares) and compare the intercept with the derived constant.
    rng = np.random.default_rng(2)
    sq_norm, w, label = 4.0, 0.4, 1.0
    lengths = np.array([20, 40, 80])
    scaled_bias, errors = [], []
    for length in lengths:
        score = rng.standard_normal((12_000_000 // length, length)) * math.sqrt(sq_norm)
        weight = np.exp(w * score)
        ratio = (label / sq_norm) * (score * weight).sum(1) / weight.sum(1)
        scaled_bias.append(length * (ratio.mean() - w * label))
        errors.append(length * ratio.std() / math.sqrt(ratio.size))
    design = np.stack([np.ones(3), 1.0 / lengths], axis=1) / np.array(errors)[:, None]
    coef, *_ = np.linalg.lstsq(design, np.array(scaled_bias) / np.array(errors), rcond=None)
    intercept_se = math.sqrt(np.linalg.inv(design.T @ design)[0, 0])
    bias = derive_approximate_loss(2).results["ratio_bias"]
    derived = float((bias * L).subs({omega_a: w, q: sq_norm, b: label}))
    assert abs(coef[0] - derived) < 4 * intercept_se, (coef[0], derived, intercept_se)
    assert intercept_se < 0.05 * abs(derived)  # the test can tell e.g. exp(w^2 q/2) from exp(w^2 q)
