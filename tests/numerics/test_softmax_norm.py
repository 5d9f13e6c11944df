"""The softmax-norm sampler: exact limits, reproducibility, chunking, bad input (one line);
its sweep summary: the statistics of each point's samples and the large-L limit law."""

import math

import numpy as np
import pytest
import torch
from icl_verify.numerics import softmax_norm_samples, softmax_norm_sweep
from icl_verify.numerics._he2025 import softmax_norm as module

from icl_verify.statistics import mean_se


def test_limits_of_the_weights():
    assert torch.allclose(
        softmax_norm_samples(0.0, 5, 40, 10, seed=0), torch.ones(10, dtype=torch.float64)
    )
    x = softmax_norm_samples(50.0, 5, 40, 200, seed=0)  # near one-hot: L ||p||^2 -> L
    assert x.dtype == torch.float64 and x.shape == (200,)
    assert float(x.min()) >= 1.0 and float(x.max()) <= 40.0 + 1e-9
    assert float(x.median()) > 30


def test_same_seed_same_samples_and_chunk_size_does_not_matter(monkeypatch):
    a = softmax_norm_samples(0.3, 4, 16, 500, seed=3)
    assert torch.equal(a, softmax_norm_samples(0.3, 4, 16, 500, seed=3))
    assert not torch.equal(a, softmax_norm_samples(0.3, 4, 16, 500, seed=4))
    monkeypatch.setattr(module, "CHUNK_ELEMENTS", 16 * 4 * 50)  # 50 samples per chunk
    chunked = softmax_norm_samples(0.3, 4, 16, 500, seed=3)
    assert chunked.shape == a.shape and float(chunked.mean()) == pytest.approx(
        float(a.mean()), rel=0.05
    )


def test_mean_matches_a_numpy_loop_at_small_size():
    rng = np.random.default_rng(0)
    values = []
    for _ in range(4000):
        keys, query = rng.standard_normal((8, 3)), rng.standard_normal(3)
        p = np.exp(0.5 * keys @ query)
        p /= p.sum()
        values.append(8 * (p**2).sum())
    x = softmax_norm_samples(0.5, 3, 8, 4000, seed=1).numpy()
    se = np.hypot(np.std(values), x.std()) / np.sqrt(4000)
    assert abs(x.mean() - np.mean(values)) < 4 * se


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"omega": float("inf")}, "omega must be a finite real number, got inf"),
        ({"d": 0}, "d must be an integer >= 1, got 0"),
        ({"L": 2.5}, "L must be an integer >= 1, got 2.5"),
        ({"seed": -1}, "seed must be an integer >= 0, got -1"),
    ],
)
def test_bad_input_is_one_line(kwargs, message):
    arguments = {"omega": 0.2, "d": 5, "L": 40, "n": 10, "seed": 0, **kwargs}
    with pytest.raises(ValueError) as raised:
        softmax_norm_samples(**arguments)
    assert str(raised.value) == message


def test_sweep_summarises_each_points_own_samples():
    L, d, omega, seeds = [16, 32], [4, 2], [0.3, 0.5], [3, 8]
    sweep = softmax_norm_sweep(L, d, omega, 500, seeds=seeds, bins=12, quantiles=(0.1, 0.9))
    for k in range(2):
        x = softmax_norm_samples(omega[k], d[k], L[k], 500, seed=seeds[k]).numpy()
        mean, se = mean_se(x)
        assert sweep.mean[k] == mean and sweep.se[k] == se
        np.testing.assert_array_equal(sweep.quantiles[k], np.quantile(x, [0.1, 0.9]))
        inside = np.mean((x >= sweep.edges[0]) & (x <= sweep.edges[-1]))
        mass = (sweep.density[k] * np.diff(sweep.edges)).sum()  # a density over the edges
        assert mass == pytest.approx(inside, rel=1e-12)
    assert sweep.edges[0] == 1.0 and np.all(np.diff(np.log(sweep.edges)) > 0)


def test_sweep_at_large_L_follows_the_limit_law():
    # L ||p||^2 -> e^{omega^2 r}, r = ||x_q||^2 ~ chi2_d: for d = 2 its q-quantile is
    # e^{-2 omega^2 log(1 - q)} and its mean (1 - 2 omega^2)^{-d/2}; corrections O(L^{-1/2}).
    omega, levels = 0.3, (0.25, 0.5, 0.75)
    sweep = softmax_norm_sweep([4000], [2], [omega], 2000, seeds=[0], bins=20, quantiles=levels)
    limit = [math.exp(-2 * omega**2 * math.log(1 - q)) for q in levels]
    np.testing.assert_allclose(sweep.quantiles[0], limit, rtol=0.02)
    assert abs(sweep.mean[0] - 1 / (1 - 2 * omega**2)) < 4 * sweep.se[0] + 0.01


def test_tilted_moments_are_reproducible_and_their_errors_honest():
    """The same seed gives the same means; over 40 independent seeds the z-scores of the weight
    moment against its exact value e^{omega^2 r / 2} (written out here) have unit spread."""
    import math

    from icl_verify.numerics import tilted_moment_estimates

    omega, x_query, beta = [0.4], [[1.0, -0.5, 2.0]], [[0.3, 0.1, -0.2]]
    first = tilted_moment_estimates(omega, x_query, beta, 0.1, 5000, seed=4)
    again = tilted_moment_estimates(omega, x_query, beta, 0.1, 5000, seed=4)
    assert first.weight[0] == again.weight[0] and first.square[0] == again.square[0]
    exact = math.exp(0.5 * 0.4**2 * (1 + 0.25 + 4))
    z = [(m.weight[0] - exact) / m.weight_se[0]
         for m in (tilted_moment_estimates(omega, x_query, beta, 0.1, 5000, seed=s)
                   for s in range(40))]  # fmt: skip
    assert abs(np.mean(z)) < 4 / math.sqrt(40) and 0.6 < np.std(z) < 1.4
