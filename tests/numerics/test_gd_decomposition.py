"""numerics._chen2024.gd_decomposition: pre-gd's excess risk split into bias, variance and cross
parts by iterating GD (Chen et al. 2024 App. D, (D.1)-(D.3)).

Checked against GD iterated by hand in numpy on the clean labels and on the noise, against the
pre-gd risk of `sparse_regression.gd_excess_risks`, and statistically: with R_hat from an
independent half the cross term has mean 0 (it is linear in noise R_hat does not see), with
R_hat from the same labels it does not.
"""

import numpy as np
import torch
from icl_verify.numerics import (
    gd_excess_risks,
    pre_gd_parts,
    sample_sparse_regression,
    split_pre_gd_parts,
)

from icl_verify.settings import SparseSetting
from icl_verify.statistics import mean_se

SPECTRUM = np.linspace(0.5, 1.0, 5)


def _prompts(batch, n, sigma, seed):
    g = torch.Generator().manual_seed(seed)
    diagonal = torch.tensor(SPECTRUM)
    p = sample_sparse_regression(
        batch, SparseSetting(5, 2, sigma), n, generator=g, signal="sign", dtype=torch.float64,
        covariance=diagonal
    )
    return p.X.numpy(), p.y.numpy(), p.w_star.numpy()


def _by_hand(X, y, w_star, eta, t, r):
    """(v_signal, v_noise) of one prompt: GD iterated on X w* and on y - X w*, R_hat = diag(r)."""
    n = X.shape[0]
    Xt = X * r
    step = eta / np.linalg.eigvalsh(Xt.T @ Xt / n)[-1]
    parts = []
    for labels in (X @ w_star, y - X @ w_star):
        w = np.zeros(X.shape[1])
        for _ in range(t):
            w = w + step * Xt.T @ (labels - Xt @ w) / n
        parts.append(r * w)
    return parts


def test_parts_are_gd_on_the_clean_labels_and_on_the_noise_and_sum_to_the_excess():
    X, y, w_star = _prompts(6, 30, 0.7, 0)
    parts = pre_gd_parts(X, y, w_star, 1.3, 7, SPECTRUM)
    for b in range(6):
        r = X[b].T @ y[b] / 30
        signal, noise = _by_hand(X[b], y[b], w_star[b], 1.3, 7, r)
        bias_error = signal - w_star[b]
        np.testing.assert_allclose(parts.bias[b], bias_error @ (SPECTRUM * bias_error), rtol=1e-10)
        np.testing.assert_allclose(parts.variance[b], noise @ (SPECTRUM * noise), rtol=1e-10)
        np.testing.assert_allclose(parts.cross[b], 2 * bias_error @ (SPECTRUM * noise), rtol=1e-9)
    np.testing.assert_allclose(parts.bias + parts.variance + parts.cross, parts.excess, rtol=1e-12)
    risk = gd_excess_risks(
        *map(torch.from_numpy, (X, y, w_star)), 1.3, [7], preprocessed=True, relative=True,
        covariance=torch.tensor(SPECTRUM),
    )[..., 0].numpy()  # fmt: skip
    np.testing.assert_allclose(parts.excess, risk, rtol=1e-12)


def test_a_given_r_hat_replaces_algorithm_1s():
    X, y, w_star = _prompts(3, 20, 0.5, 1)
    r_hat = np.abs(w_star) + 0.1  # any fixed diagonal
    parts = pre_gd_parts(X, y, w_star, 1.0, 5, SPECTRUM, r_hat=r_hat)
    signal, noise = _by_hand(X[0], y[0], w_star[0], 1.0, 5, r_hat[0])
    np.testing.assert_allclose(parts.variance[0], noise @ (SPECTRUM * noise), rtol=1e-10)
    Xt = X[0] * r_hat[0]
    np.testing.assert_allclose(parts.step[0], 1.0 / np.linalg.eigvalsh(Xt.T @ Xt / 20)[-1])


def test_the_cross_term_has_mean_zero_only_with_sample_splitting():
    split = split_pre_gd_parts(
        16, spectrum=SPECTRUM, s=2, sigma=1.0, tasks=3000, eta=1.0, t=4, seed=0, chunk=1000
    )
    mean, se = mean_se(split.cross)
    assert abs(mean) < 4 * se
    X, y, w_star = _prompts(3000, 16, 1.0, 2)
    same = pre_gd_parts(X, y, w_star, 1.0, 4, SPECTRUM)  # R_hat sees the noise
    mean, se = mean_se(same.cross)
    assert abs(mean) > 6 * se


def test_sample_splitting_gives_one_row_per_task_in_chunks_and_repeats_with_its_seed():
    kwargs = dict(spectrum=SPECTRUM, s=2, sigma=0.5, tasks=7, eta=1.0, t=3, chunk=3)
    first, again = split_pre_gd_parts(8, seed=5, **kwargs), split_pre_gd_parts(8, seed=5, **kwargs)
    assert first.stacked().shape == (4, 7) and first.step.shape == (7,)
    np.testing.assert_array_equal(first.stacked(), again.stacked())
    other = split_pre_gd_parts(8, seed=6, **kwargs)
    assert not np.array_equal(first.excess, other.excess)
