"""theory._sparse_gd: the closed form (D.1-D.3) against GD iterated in numerics, the bound
expressions at hand-computed values, Lemma D.2's tail exponents against the product's moment
generating function sampled and maximised numerically, and against every support."""

import itertools
import math

import numpy as np
import pytest
import torch
from icl_verify.theory import (
    coordinate_loss_probability,
    lemma_d1_bound,
    lemma_d2_sample_size,
    lemma_d3_bound,
    preprocessed_gd_closed_form,
    product_mean_rate,
    support_loss_rates,
    support_margin,
    theorem_5_1_bound,
    theorem_5_2_bound,
)
from scipy.optimize import minimize_scalar

from icl_verify import numerics


@pytest.mark.parametrize("seed", range(4))
def test_closed_form_equals_iterated_gd_at_random_sizes(seed):
    rng = np.random.default_rng(seed)
    n, d, s, t = int(rng.integers(5, 80)), int(rng.integers(2, 30)), 1, int(rng.integers(1, 200))
    s = int(rng.integers(1, d + 1))
    X = rng.normal(size=(3, n, d))
    w = np.zeros((3, d))
    w[:, :s] = rng.choice([-1.0, 1.0], size=(3, s)) / math.sqrt(s)
    y = np.einsum("bnd,bd->bn", X, w) + 0.7 * rng.normal(size=(3, n))
    cov = rng.uniform(0.3, 1.0, size=d)
    Xt, yt = torch.tensor(X), torch.tensor(y)
    r_hat = numerics.feature_label_correlations(Xt, yt)
    eta = 1.2 / numerics.largest_gram_eigenvalue(Xt * r_hat[..., None, :])  # (3,)
    closed = preprocessed_gd_closed_form(X, y, w, eta.numpy(), t, cov)
    iterate = numerics.gd_path(Xt * r_hat[..., None, :], yt, eta, [t])[..., 0, :].numpy()
    np.testing.assert_allclose(closed.w_tilde, iterate, rtol=1e-8, atol=1e-10)
    risk = numerics.gd_excess_risks(
        Xt,
        yt,
        torch.tensor(w),
        1.2,
        [t],
        preprocessed=True,
        relative=True,
        covariance=torch.tensor(cov),
    )[..., 0].numpy()
    np.testing.assert_allclose(closed.bias + closed.variance + closed.cross, risk, rtol=1e-8)


def test_parts_are_gd_on_the_clean_labels_and_on_the_noise():
    rng = np.random.default_rng(7)
    X, w = rng.normal(size=(40, 6)), np.array([0.5, -0.5, 0, 0, 0, 0.0])
    y = X @ w + rng.normal(size=40)
    closed = preprocessed_gd_closed_form(X, y, w, 0.3, 25)
    r_hat = X.T @ y / 40
    Xt = torch.tensor(X * r_hat)
    clean = numerics.gd_path(Xt, torch.tensor(X @ w), 0.3, [25])[0].numpy()
    noise = numerics.gd_path(Xt, torch.tensor(y - X @ w), 0.3, [25])[0].numpy()
    assert closed.bias == pytest.approx(np.sum((r_hat * clean - w) ** 2), rel=1e-9)
    assert closed.variance == pytest.approx(np.sum((r_hat * noise) ** 2), rel=1e-9)
    assert closed.cross != pytest.approx(0.0, abs=1e-6)  # one draw: the cross term is there


def test_bounds_at_hand_values():
    b = theorem_5_1_bound(
        1e4,
        d=100,
        s=4,
        sigma=2.0,
        trace_sigma=50.0,
        trace_rsr=0.5,
        norm_rsr=0.25,
        beta=0.25,
        delta=0.01,
    )
    L = math.log(1e4)
    A = 4 * 0.5 * L / 1e4 + 4 * 4 * 50 * L**2 / 1e8
    t = A**-0.5 / 0.25 / 4.0
    assert (b.A, b.eta, b.t) == pytest.approx((A, 4.0, t))
    assert b.value == pytest.approx(max(math.log(t), 1) / 0.25 * math.sqrt(A))
    g = theorem_5_2_bound(400.0, d=100, sigma=1.0, trace_sigma=50.0, norm_sigma=2.0, delta=0.01)
    assert g.t == pytest.approx(2.0 * (50 * L / 400) ** -0.5)
    assert lemma_d1_bound(400.0, d=100, s=4, delta=0.01, K=3.0) == pytest.approx(
        3 * math.sqrt(4 * L / 400)
    )
    assert lemma_d2_sample_size(d=100, s=4, delta=0.01, beta=0.5) == pytest.approx(16 * L)
    # Lemma D.3 on spectrum (2, 1, 1): ||Sigma|| = 2, r = 4/2 = 2; log(1/0.01) = 4.6 > r, so the
    # log terms lead: sqrt(4.6/400) at n = 400, and 4.6/2 at n = 2 (where the linear terms lead)
    covariance = lemma_d3_bound([400.0, 2.0], spectrum=[1.0, 2.0, 1.0], delta=0.01)
    np.testing.assert_allclose(covariance, [2 * math.sqrt(math.log(100) / 400), math.log(100)])
    assert lemma_d3_bound(2.0, spectrum=[1.0] * 10, delta=0.5) == pytest.approx(10 / 2)  # r = d
    assert float(support_margin([0.0, 0.5, -0.5], [1.0, 0.5, 2.0])) == 0.25


def test_the_products_mgf_is_sampled_and_its_legendre_transform_maximised():
    """M(theta) = ((1 - c theta)^2 - vx vy theta^2)^(-1/2) against 2e6 sampled products, and the
    closed-form maximiser against a bounded numerical maximisation of theta u - log M."""
    vx, vy, c, theta = 0.5, 1.0, 0.25, -0.3
    rng = np.random.default_rng(0)
    x = rng.standard_normal(2_000_000) * math.sqrt(vx)
    y = c / vx * x + rng.standard_normal(x.size) * math.sqrt(vy - c**2 / vx)  # Cov(x, y) = c
    sample = np.exp(theta * x * y)
    mgf = ((1 - c * theta) ** 2 - vx * vy * theta**2) ** -0.5
    assert abs(sample.mean() - mgf) < 4 * sample.std() / math.sqrt(x.size)

    def minus_objective(t, u):
        return -(t * u + 0.5 * math.log((1 - c * t) ** 2 - vx * vy * t**2))

    pole = 1 / (c - math.sqrt(vx * vy))
    for u in (0.0, 0.05, c / 2, 0.24):
        best = minimize_scalar(minus_objective, bounds=(pole * (1 - 1e-9), 0.0), args=(u,),
                               method="bounded", options={"xatol": 1e-12})  # fmt: skip
        assert float(product_mean_rate(vx, vy, c, u)) == pytest.approx(-best.fun, rel=1e-7)


def test_the_exponent_falls_with_the_labels_variance_and_is_gaussian_near_the_mean():
    rates = product_mean_rate(0.5, np.linspace(0.6, 2.0, 8), 0.25, 0.125)
    assert np.all(np.diff(rates) < 0)  # what support_loss_rates' q-range relies on
    level = 0.25 - 1e-3
    gauss = 1e-3**2 / (2 * (0.5 * 1.0 + 0.25**2))
    assert float(product_mean_rate(0.5, 1.0, 0.25, level)) == pytest.approx(gauss, rel=1e-2)
    with pytest.raises(ValueError, match="level < cov"):
        product_mean_rate(0.5, 1.0, 0.25, 0.3)


def test_the_loss_probability_is_sampled_and_its_secants_tend_to_cramers_exponent():
    """Exact P(|mean x y| < cov/2) against 2e5 sampled means at n = 29 (an independent draw of
    the event), and its log-secants between n and 2n approaching the Cramér exponent by the
    Bahadur-Rao prefactor's ln(2)/(2n)."""
    vx, vy, c, n, draws = 0.5, 1.0, 0.25, 29, 200_000
    rng = np.random.default_rng(1)
    x = rng.standard_normal((draws, n)) * math.sqrt(vx)
    y = c / vx * x + rng.standard_normal((draws, n)) * math.sqrt(vy - c**2 / vx)
    sampled = np.mean(np.abs((x * y).mean(axis=1)) < c / 2)
    exact = coordinate_loss_probability(n, vx, vy, c)
    assert abs(sampled - exact) < 4 * math.sqrt(exact * (1 - exact) / draws)
    exponent = float(product_mean_rate(vx, vy, c, c / 2))
    for m in (1000, 4000):
        secant = math.log(coordinate_loss_probability(m, vx, vy, c)
                          / coordinate_loss_probability(2 * m, vx, vy, c)) / m  # fmt: skip
        assert secant - exponent == pytest.approx(math.log(2) / (2 * m), rel=0.1)


def test_support_loss_rates_are_the_extremes_over_every_support():
    spectrum, s, sigma, n = np.array([0.3, 0.45, 0.5, 0.7, 0.8, 1.0, 1.2]), 3, 0.6, [10, 40, 90]
    secants, exponents = [], []
    for support in itertools.combinations(range(spectrum.size), s):
        q = spectrum[list(support)].mean()  # w*^T Sigma w* under the ±1/sqrt(s) prior
        for i in support:
            cov, var_y = spectrum[i] / math.sqrt(s), q + sigma**2
            log_p = np.log([coordinate_loss_probability(m, spectrum[i], var_y, cov) for m in n])
            secants.extend(-np.diff(log_p) / np.diff(n))
            exponents.append(float(product_mean_rate(spectrum[i], var_y, cov, cov / 2)))
    rates = support_loss_rates(spectrum[::-1], s=s, sigma=sigma, n=n)  # any order
    assert (rates.slowest, rates.fastest) == pytest.approx((min(secants), max(secants)))
    assert rates.exponent == pytest.approx(min(exponents))
