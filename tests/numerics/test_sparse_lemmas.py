"""numerics.sparse_lemmas: Algorithm 1's r_hat beside r = Sigma w* (Chen et al. 2024 Lemmas D.1,
D.2), against the prompts replayed from the seed, and the events of the lemmas computed by hand.
"""

import numpy as np
import pytest
import torch
from icl_verify.numerics.data import sample_sparse_regression
from icl_verify.numerics.sparse_lemmas import CorrelationDraws, sample_correlations

COVARIANCE = np.diag(np.linspace(0.5, 1.0, 6))


def test_r_hat_and_r_are_those_of_the_prompts_drawn_from_the_seed():
    draws = sample_correlations(5, 6, 30, 2, 0.3, seed=7, covariance=COVARIANCE)
    replay = sample_sparse_regression(
        5, 6, 30, 2, 0.3, generator=torch.Generator().manual_seed(7), signal="sign",
        dtype=torch.float64, covariance=torch.tensor(COVARIANCE),
    )  # fmt: skip
    X, y, w = replay.X.numpy(), replay.y.numpy(), replay.w_star.numpy()
    np.testing.assert_allclose(draws.r_hat, np.einsum("bnd,bn->bd", X, y) / 30, rtol=1e-12)
    np.testing.assert_allclose(draws.r, w @ COVARIANCE, rtol=1e-15)
    np.testing.assert_array_equal(draws.w_star, w)


def test_chunks_cover_every_prompt_and_r_hat_concentrates_at_the_n_to_the_minus_half_rate():
    small = sample_correlations(300, 6, 100, 2, 0.3, seed=0, covariance=COVARIANCE,
                                chunk_elements=6 * 100 * 7)  # fmt: skip
    large = sample_correlations(300, 6, 1600, 2, 0.3, seed=1, covariance=COVARIANCE)
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


@pytest.mark.parametrize("reps", [1, 4])
def test_without_a_covariance_r_is_w_star(reps):
    draws = sample_correlations(reps, 4, 10, 2, 0.0, seed=2)
    np.testing.assert_array_equal(draws.r, draws.w_star)
