"""The network (2.2) of Chen, Zhao, Zou (2024) with the weights of Props. 4.1/4.2, against a
plain per-prompt loop of Algorithm 1 and GD written out here; the mask; the read-out sign."""

import numpy as np
import pytest
import torch
from icl_verify.numerics import (
    LinearAttentionLayer,
    embed,
    gd_layer,
    preprocess_then_gd_transformer,
    preprocessing_layer,
    sample_sparse_regression,
)

from icl_verify.settings import SparseSetting


def _prompts(seed, batch, d, n, q, dtype=torch.float64):
    g = torch.Generator().manual_seed(seed)
    s = 1 + seed % d
    return sample_sparse_regression(
        batch, SparseSetting(d, s, 0.3), n, q=q, generator=g, dtype=dtype
    )


def _loop(X, y, X_query, eta, t):
    """Algorithm 1 then t GD steps, one prompt, by explicit loops: (x_tilde of all tokens
    (n+q, d), predictions after 0..t steps (t+1, q))."""
    n, d = X.shape
    r = [sum(X[i, j] * y[i] for i in range(n)) / n for j in range(d)]
    tokens = [[r[j] * x[j] for j in range(d)] for x in np.concatenate([X, X_query])]
    w, path = [0.0] * d, [[0.0] * len(X_query)]
    for _ in range(t):
        residual = [y[i] - sum(tokens[i][j] * w[j] for j in range(d)) for i in range(n)]
        w = [w[j] + eta / n * sum(tokens[i][j] * residual[i] for i in range(n)) for j in range(d)]
        path.append([sum(tokens[n + k][j] * w[j] for j in range(d)) for k in range(len(X_query))])
    return np.array(tokens), np.array(path)


@pytest.mark.parametrize("seed", range(4))
def test_random_sizes_match_algorithm_1_and_gd(seed):
    rng = np.random.default_rng(seed)
    d, n, q, t = int(rng.integers(1, 7)), int(rng.integers(1, 25)), int(rng.integers(1, 4)), 3
    eta = float(rng.uniform(0.01, 0.2))
    p = _prompts(seed, 3, d, n, q)
    model = preprocess_then_gd_transformer(d, n, eta, t)
    E = embed(p)  # (3, d+1, n+q)
    layer1 = model.hidden_states(E, n)[1]  # (3, 3d, n+q)
    readouts = model.readouts(E, n)[..., n:]  # (3, t+1, q)
    for b in range(3):
        tokens, path = _loop(p.X[b].numpy(), p.y[b].numpy(), p.X_query[b].numpy(), eta, t)
        scale = 1 + np.abs(path).max()
        np.testing.assert_allclose(layer1[b, :d].numpy(), tokens.T, rtol=1e-12, atol=1e-13)
        np.testing.assert_array_equal(layer1[b, d, :n].numpy(), p.y[b].numpy())
        np.testing.assert_array_equal(layer1[b, d, n:].numpy(), 0.0)
        np.testing.assert_allclose(readouts[b].numpy(), path, rtol=0, atol=1e-11 * scale)
    np.testing.assert_allclose(model.forward(E, n)[..., n:], readouts[:, -1], rtol=0, atol=0)


def test_query_tokens_never_influence_any_other_token():
    d, n, q = 4, 9, 3
    model = preprocess_then_gd_transformer(d, n, eta=0.1, t=3)
    E = embed(_prompts(0, 2, d, n, q))
    changed = E.clone()
    changed[..., n] = torch.randn(2, d + 1, generator=torch.Generator().manual_seed(1)) * 10
    before, after = model.hidden_states(E, n), model.hidden_states(changed, n)
    others = [k for k in range(n + q) if k != n]
    for H, G in zip(before[1:], after[1:], strict=True):
        assert torch.equal(H[..., others], G[..., others])  # bit for bit: masked terms are 0
    assert not torch.equal(before[-1][..., n], after[-1][..., n])  # its own output does change


def test_query_slots_hold_minus_the_prediction_so_the_read_out_is_minus_e_d():
    d, n, q, eta, t = 3, 12, 2, 0.15, 2
    p = _prompts(2, 2, d, n, q)
    model = preprocess_then_gd_transformer(d, n, eta, t)
    label_row = model.hidden_states(embed(p), n)[-1][:, d, n:]  # (2, q)
    assert model.W_O[0, d] == -1 and torch.count_nonzero(model.W_O) == 1
    for b in range(2):
        _, path = _loop(p.X[b].numpy(), p.y[b].numpy(), p.X_query[b].numpy(), eta, t)
        np.testing.assert_allclose(-label_row[b].numpy(), path[-1], rtol=1e-12)
        assert np.abs(path[-1]).max() > 1e-3  # so the sign is visible


def test_the_network_runs_in_float32():
    d, n = 3, 10
    model = preprocess_then_gd_transformer(d, n, eta=0.1, t=2)
    E = embed(_prompts(3, 2, d, n, 2))
    out32 = model.to(torch.float32).forward(E.float(), n)
    assert out32.dtype == torch.float32
    np.testing.assert_allclose(out32.double(), model.forward(E, n), rtol=1e-4, atol=1e-5)


def test_circuits_of_the_gd_layer():
    layer = gd_layer(2, 5, eta=0.5)
    expected_kq = torch.zeros(6, 6, dtype=torch.float64)
    expected_kq[:2, :2] = torch.eye(2)
    expected_ov = torch.zeros(6, 6, dtype=torch.float64)
    expected_ov[2, 2] = -0.1
    assert torch.equal(layer.KQ[0], expected_kq) and torch.allclose(layer.OV[0], expected_ov)
    # in layer 1 head i's circuit reads x_i against y / n and writes row i
    pre = preprocessing_layer(2, 4)
    assert pre.KQ[1][4, 3] == 0.25 and pre.OV[1][1, 3] == 1.0


def test_the_absolute_network_bounds_every_output():
    d, n = 4, 15
    model = preprocess_then_gd_transformer(d, n, eta=0.2, t=3)
    E = embed(_prompts(4, 3, d, n, 2))
    assert torch.all(model.readouts(E, n).abs() <= model.absolute().readouts(E.abs(), n) + 1e-12)


@pytest.mark.parametrize(
    "build, message",
    [
        (lambda: preprocessing_layer(0, 5), "d must be an integer >= 1, got 0"),
        (lambda: preprocessing_layer(2, 0), "n must be an integer >= 1, got 0"),
        (lambda: gd_layer(2, 5, eta=0.0), "eta must be a finite number > 0, got 0.0"),
        (lambda: gd_layer(2, 5, eta=float("inf")), "eta must be a finite number > 0, got inf"),
        (lambda: preprocess_then_gd_transformer(2, 5, 0.1, -1), "t must be an integer >= 0"),
        (
            lambda: preprocess_then_gd_transformer(2, 5, 0.1, 1).forward(
                torch.zeros(3, 5, dtype=torch.float64), 5
            ),
            "n must be an integer in [1, m-1] = [1, 4] (q >= 1), got 5",
        ),
        (
            lambda: LinearAttentionLayer(*(torch.zeros(2, 2, 4),) * 3, torch.eye(3)),
            "W_1 must have shape (d_hid, d_hid) = (4, 4), got (3, 3)",
        ),
    ],
)
def test_bad_arguments_are_one_line(build, message):
    with pytest.raises(ValueError) as error:
        build()
    assert message in str(error.value) and "\n" not in str(error.value)


@pytest.mark.parametrize("seed", range(3))
def test_the_numpy_entry_points_match_algorithm_1_and_gd(seed):
    """`preprocessing_layer_output` and `gd_layer_readouts` against the plain loop, and their
    float32 runs within float32 rounding of it."""
    from icl_verify.numerics import gd_layer_readouts, preprocessing_layer_output

    rng = np.random.default_rng(seed)
    d, n, q, t = int(rng.integers(1, 6)), int(rng.integers(2, 20)), int(rng.integers(1, 4)), 4
    eta = float(rng.uniform(0.01, 0.2))
    p = _prompts(seed, 2, d, n, q)
    X, y, X_query = p.X.numpy(), p.y.numpy(), p.X_query.numpy()
    layer1 = preprocessing_layer_output(X, y, X_query)  # (2, d+1, n+q)
    readouts = gd_layer_readouts(X, y, X_query, eta, t)  # (2, t, q)
    assert layer1.shape == (2, d + 1, n + q) and readouts.shape == (2, t, q)
    for b in range(2):
        tokens, path = _loop(X[b], y[b], X_query[b], eta, t)
        scale = 1 + np.abs(path).max()
        np.testing.assert_allclose(layer1[b, :d], tokens.T, rtol=1e-12, atol=1e-13)
        np.testing.assert_array_equal(layer1[b, d], np.r_[y[b], np.zeros(q)])
        np.testing.assert_allclose(readouts[b], path[1:], rtol=0, atol=1e-11 * scale)
    single = gd_layer_readouts(X, y, X_query, eta, t, precision="float32")
    assert single.dtype == np.float64 and 0 < np.abs(single - readouts).max() < 1e-4 * scale
