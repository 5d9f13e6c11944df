"""numerics._chen2024.sparse_lemmas: Algorithm 1's r_hat beside r = Sigma w* (Chen et al. 2024
Lemmas D.1, D.2), against the prompts replayed from the seed, and the events of the lemmas computed
by hand; the noise's ||X^T eps / n||^2 (Lemma F.1) replayed, and against its chi-square product
moments; the sample covariance's error (Lemma D.3) replayed, and against the Marchenko-Pastur edge.
"""

import numpy as np
import pytest
import torch
from icl_verify.numerics import (
    CorrelationDraws,
    covariance_errors,
    noise_correlation_norms,
    sample_correlations,
    sample_sparse_regression,
)

from icl_verify.settings import SparseSetting

COVARIANCE = np.diag(np.linspace(0.5, 1.0, 6))


def test_r_hat_and_r_are_those_of_the_prompts_drawn_from_the_seed():
    draws = sample_correlations(5, SparseSetting(6, 2, 0.3), 30, seed=7, covariance=COVARIANCE)
    replay = sample_sparse_regression(
        5, SparseSetting(6, 2, 0.3), 30, generator=torch.Generator().manual_seed(7), signal="sign",
        dtype=torch.float64, covariance=torch.tensor(COVARIANCE)
    )  # fmt: skip
    X, y, w = replay.X.numpy(), replay.y.numpy(), replay.w_star.numpy()
    np.testing.assert_allclose(draws.r_hat, np.einsum("bnd,bn->bd", X, y) / 30, rtol=1e-12)
    np.testing.assert_allclose(draws.r, w @ COVARIANCE, rtol=1e-15)
    np.testing.assert_array_equal(draws.w_star, w)


def test_chunks_cover_every_prompt_and_r_hat_concentrates_at_the_n_to_the_minus_half_rate():
    small = sample_correlations(300, SparseSetting(6, 2, 0.3), 100, seed=0, covariance=COVARIANCE,
                                chunk_elements=6 * 100 * 7)  # fmt: skip
    large = sample_correlations(300, SparseSetting(6, 2, 0.3), 1600, seed=1, covariance=COVARIANCE)
    assert small.r_hat.shape == (300, 6)
    ratio = small.sup_error.mean() / large.sup_error.mean()  # n x 16: error / 4
    assert 3.4 < ratio < 4.6


def test_the_lemmas_events_by_hand():
    draws = CorrelationDraws(
        r_hat=np.array([[0.5, -0.1, 0.0], [0.2, 0.3, 0.4]]),
        r=np.array([[0.6, 0.0, 0.0], [0.5, 0.0, 0.3]]),
        w_star=np.array([[1.0, 0.0, 0.0], [1.0, 0.0, 1.0]]),
    )
    np.testing.assert_allclose(draws.sup_error, [0.1, 0.3])
    # prompt 0 keeps its support (0.5 >= 0.3); prompt 1 loses coordinate 0 (0.2 < 0.25)
    np.testing.assert_array_equal(draws.support_kept, [True, False])
    np.testing.assert_array_equal(draws.support_lost, [0, 1])  # coordinate 2 kept: 0.4 >= 0.15


@pytest.mark.parametrize("reps", [1, 4])
def test_without_a_covariance_r_is_w_star(reps):
    draws = sample_correlations(reps, SparseSetting(4, 2, 0.0), 10, seed=2)
    np.testing.assert_array_equal(draws.r, draws.w_star)


def test_noise_norms_are_those_of_the_draws_replayed_from_the_seed():
    norms = noise_correlation_norms(5, n=30, d=4, sigma=0.7, seed=3, chunk_elements=30 * 4 * 2)
    generator = torch.Generator().manual_seed(3)
    expected = []
    for size in (2, 2, 1):  # chunks of two draws, all from one generator
        X = torch.randn(size, 30, 4, generator=generator, dtype=torch.float64)
        eps = 0.7 * torch.randn(size, 30, generator=generator, dtype=torch.float64)
        expected.append((torch.einsum("bnd,bn->bd", X, eps) / 30).square().sum(-1))
    np.testing.assert_allclose(norms, torch.cat(expected).numpy(), rtol=1e-12)


def test_noise_norms_have_the_chi_square_product_moments():
    """||X^T eps||^2 = ||eps||^2 chi2_d given eps (X^T u ~ N(0, I_d) for a unit u): mean
    sigma^2 d / n, variance sigma^4 ((n^2 + 2n)(d^2 + 2d) - n^2 d^2) / n^4."""
    n, d, sigma, reps = 40, 6, 0.5, 20000
    norms = noise_correlation_norms(reps, n=n, d=d, sigma=sigma, seed=4)
    mean = sigma**2 * d / n
    variance = sigma**4 * ((n**2 + 2 * n) * (d**2 + 2 * d) - n**2 * d**2) / n**4
    assert abs(norms.mean() - mean) < 4 * np.sqrt(variance / reps)
    assert abs(norms.var(ddof=1) / variance - 1) < 0.1  # the variance's relative SE ~ 0.02


def test_covariance_errors_are_those_of_the_draws_replayed_from_the_seed():
    spectrum = np.array([2.0, 1.0, 0.25])
    errors = covariance_errors(5, n=20, spectrum=spectrum, seed=5, chunk_elements=20 * 3 * 2)
    generator = torch.Generator().manual_seed(5)
    expected = []
    for size in (2, 2, 1):  # chunks of two draws, all from one generator
        X = torch.randn(size, 20, 3, generator=generator, dtype=torch.float64).numpy()
        X = X * np.sqrt(spectrum)  # rows N(0, diag(spectrum))
        gaps = np.einsum("bni,bnj->bij", X, X) / 20 - np.diag(spectrum)
        expected += [np.linalg.norm(gap, ord=2) for gap in gaps]
    np.testing.assert_allclose(errors, expected, rtol=1e-12)


def test_isotropic_covariance_error_is_the_tracy_widom_centred_marchenko_pastur_edge():
    """Sigma = I, d/n = y = 1/4: the error is the top eigenvalue of X^T X / n minus 1 (the lower
    edge's 1 - (1 - sqrt y)^2 = 0.75 is far below). Johnstone (2001): lambda_max is about
    mu + sigma TW1 with mu = (sqrt(n - 1/2) + sqrt(d - 1/2))^2 / n and
    sigma = (sqrt(n - 1/2) + sqrt(d - 1/2)) (1/sqrt(n - 1/2) + 1/sqrt(d - 1/2))^{1/3} / n,
    TW1's mean -1.2065, so the mean error is 1.1963 here, 0.054 below the limit edge
    2 sqrt(y) + y = 1.25. Allowed: 4 SEs of the mean of the draws (their own spread) plus the
    centring's error, O(d^{-2/3}) TW units (0.046 sigma at d = 100; 0.05 sigma allowed); the
    edge without the Tracy-Widom shift lies outside that band and must be refused."""
    n, d, reps = 400, 100, 100
    errors = covariance_errors(reps, n=n, spectrum=np.ones(d), seed=6)
    a, b = np.sqrt(n - 0.5), np.sqrt(d - 0.5)
    sigma = (a + b) * (1 / a + 1 / b) ** (1 / 3) / n
    predicted = (a + b) ** 2 / n - 1.2065 * sigma - 1.0
    allowed = 4 * errors.std(ddof=1) / np.sqrt(reps) + 0.05 * sigma
    assert abs(errors.mean() - predicted) < allowed
    assert abs(errors.mean() - (2 * np.sqrt(d / n) + d / n)) > allowed  # the unshifted edge
