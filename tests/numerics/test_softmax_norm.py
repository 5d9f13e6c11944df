"""The softmax-norm sampler: exact limits, reproducibility, chunking, bad input (one line)."""

import numpy as np
import pytest
import torch
from icl_verify.numerics import softmax_norm as module
from icl_verify.numerics.softmax_norm import softmax_norm_samples


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
