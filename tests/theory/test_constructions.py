"""theory._constructions: Algorithm 1 and GD on its data against independent derivations, the
absolute evaluation, and the rounding bound's formula."""

import numpy as np
import pytest
from icl_verify.theory import (
    absolute_evaluation,
    algorithm_roundings,
    higham_gamma,
    network_roundings,
    normalised_error_bound,
    preprocessed_gd_predictions,
    preprocessed_prompt,
)
from icl_verify.theory._constructions import UNIT_ROUNDOFF


@pytest.fixture(scope="module")
def prompts():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((3, 30, 5))  # (B, n, d)
    y = X @ np.array([1.0, 0.0, -2.0, 0.0, 0.0]) + 0.1 * rng.standard_normal((3, 30))
    return X, y, rng.standard_normal((3, 2, 5))


def test_algorithm_1_against_a_loop(prompts):
    X, y, X_query = prompts
    matrix = preprocessed_prompt(X, y, X_query)  # (B, d+1, n+q)
    for b in range(3):
        r = [sum(X[b, i, j] * y[b, i] for i in range(30)) / 30 for j in range(5)]
        for k, x in enumerate(np.concatenate([X[b], X_query[b]])):
            np.testing.assert_allclose(matrix[b, :5, k], np.array(r) * x, rtol=1e-13)
        np.testing.assert_array_equal(matrix[b, 5], np.concatenate([y[b], [0.0, 0.0]]))


def test_gd_path_against_its_closed_form(prompts):
    """w^t = sum_{k<t} (I - eta G)^k eta b, G = X~^T X~ / n, b = X~^T y / n (unrolled (4.3))."""
    X, y, X_query = prompts
    eta, t = 0.7, 6
    path = preprocessed_gd_predictions(X, y, X_query, eta, t)  # (B, t+1, q)
    for b in range(3):
        r = X[b].T @ y[b] / 30
        Xt, Qt = X[b] * r, X_query[b] * r
        G, c = Xt.T @ Xt / 30, Xt.T @ y[b] / 30
        step = np.eye(5) - eta * G
        w = np.zeros(5)
        for s in range(t + 1):
            np.testing.assert_allclose(path[b, s], Qt @ w, rtol=1e-10, atol=1e-12)
            w = w + np.linalg.matrix_power(step, s) @ (eta * c)


def test_absolute_evaluation_is_gd_on_absolute_values_and_bounds_the_predictions(prompts):
    X, y, X_query = prompts
    eta, t = 0.3, 4
    matrix, path = absolute_evaluation(X, y, X_query, eta, t)
    assert np.all(np.abs(preprocessed_prompt(X, y, X_query)) <= matrix + 1e-15)
    assert np.all(np.abs(preprocessed_gd_predictions(X, y, X_query, eta, t)) <= path + 1e-12)
    # the residual form the network uses: a^{l+1} = a^l + (eta/n) |X~||X~|^T a^l, a^0 = |y|
    Xa, Qa = np.swapaxes(matrix[0, :5, :30], 0, 1), np.swapaxes(matrix[0, :5, 30:], 0, 1)
    a, slot = np.abs(y[0]), np.zeros(2)
    for s in range(1, t + 1):
        slot = slot + eta / 30 * Qa @ Xa.T @ a
        a = a + eta / 30 * Xa @ Xa.T @ a
        np.testing.assert_allclose(path[0, s], slot, rtol=1e-12)


def test_gamma_value_and_domain():
    u = UNIT_ROUNDOFF["float32"]
    assert higham_gamma(1000, u) == pytest.approx(1000 * u / (1 - 1000 * u), rel=1e-15)
    assert higham_gamma(0, u) == 0.0
    with pytest.raises(ValueError, match="k must be an integer in"):
        higham_gamma(2**24, u)


def test_the_counts_at_a_known_size():
    # network float64: c1 = n + 3, per GD layer 2 c1 + d + n + 3; float32 casts: c1 = n + 7
    assert network_roundings(5, 20, 0) == 23
    assert network_roundings(5, 20, 3) == 3 * (46 + 5 + 20 + 3)
    assert network_roundings(5, 20, 3, input_roundings=1) == 1 + 3 * (54 + 5 + 20 + 4)
    # algorithm: c1 = n + 2, per step 2 c1 + d + n + 4, prediction c1 + d
    assert algorithm_roundings(5, 20, 3) == 3 * (44 + 5 + 20 + 4) + 22 + 5


@pytest.mark.parametrize("precision", ["float64", "float32"])
def test_the_bound_grows_with_every_size(precision):
    base = normalised_error_bound(8, 64, 4, precision)
    for bigger in ((9, 64, 4), (8, 65, 4), (8, 64, 5)):
        assert normalised_error_bound(*bigger, precision) > base
    u = UNIT_ROUNDOFF[precision]
    k = network_roundings(8, 64, 4, int(precision == "float32"))
    assert higham_gamma(k, u) < base < 2.1 * higham_gamma(max(k, algorithm_roundings(8, 64, 4)), u)


def test_float32_bound_is_about_2_to_the_29_times_float64():
    ratio = normalised_error_bound(8, 64, 4, "float32") / normalised_error_bound(8, 64, 4)
    assert 2**28 < ratio < 2**30


def test_bad_arguments():
    X, y = np.ones((4, 2)), np.ones(4)
    with pytest.raises(ValueError, match="eta must be a finite number > 0, got 0.0"):
        preprocessed_gd_predictions(X, y, X, 0.0, 1)
    with pytest.raises(ValueError, match="t must be an integer >= 0, got -1"):
        absolute_evaluation(X, y, X, 0.1, -1)
    with pytest.raises(ValueError, match="precision must be one of"):
        normalised_error_bound(2, 4, 1, "float16")
