"""numerics._he2025.length_generalisation: the fixed kernel predictors of He et al. Figure 4 (right)
on the prompts of `mse_by_test_length`, checked against trained-model ensembles built on the same
pattern (KQ11 = omega I, OV last row (0, ..., 0, mu)), whose predictions are those kernels."""

import numpy as np
import pytest
from icl_verify.numerics import fixed_kernel_mse_by_test_length, length_curve, mse_by_test_length

D, L, SIGMA2 = 5, 40, 0.1
LENGTHS = (10, 40, 100)
PAIR = (0.13, 3.45)  # the paper's trained ± pair at d=5, L=40
SINGLE = (0.45, 1.2)


@pytest.fixture
def kernels_as_models(pattern_ensemble):
    """Member 0: the ± pair PAIR; member 1: the single head SINGLE (its second head silent)."""
    (w, m), (w1, m1) = PAIR, SINGLE
    return pattern_ensemble([[w, -w], [w1, 0.0]], [[m, -m], [m1, 0.0]], d=D, L=L)


def test_the_kernels_see_the_prompts_of_mse_by_test_length(kernels_as_models):
    """Same seed, same sampler: the kernel predictors' losses are those of the models carrying
    the same kernels, up to float32 rounding (relative ~1e-8), far below the Monte Carlo SE
    (~1-4%) that independent prompts would leave."""
    losses = mse_by_test_length(
        {"pair": (kernels_as_models, 0), "single": (kernels_as_models, 1)}, LENGTHS,
        n_prompts=4096, seed=7, bayes=False,
    )  # fmt: skip
    curves = fixed_kernel_mse_by_test_length(
        PAIR, [SINGLE[0]] * 3, [SINGLE[1]] * 3, LENGTHS, d=D, sigma2=SIGMA2, n_prompts=4096,
        seed=7,
    )  # fmt: skip
    for name, mean, se in [
        ("pair", curves.pair_mean, curves.pair_se),
        ("single", curves.single_mean, curves.single_se),
    ]:
        expected_mean, expected_se = length_curve(losses, name, LENGTHS)
        np.testing.assert_allclose(mean, expected_mean, rtol=1e-6)
        np.testing.assert_allclose(se, expected_se, rtol=1e-4)
    # the pair renormalises: it improves with L' beyond the training L (Observation 3)
    assert curves.pair_mean[2] < curves.pair_mean[1] < curves.pair_mean[0]


def test_the_single_head_may_change_with_the_length():
    """The single head's (omega, mu) of length k is used at length k only: a head with mu = 0
    predicts 0, whose loss is E y_q^2 = E|beta|^2 + sigma2, the same at every L'."""
    mus = [0.0, 1.2, 0.0]
    curves = fixed_kernel_mse_by_test_length(
        PAIR, [0.45] * 3, mus, LENGTHS, d=D, sigma2=SIGMA2, n_prompts=4096, seed=3
    )
    same = fixed_kernel_mse_by_test_length(
        PAIR, [0.45] * 3, [1.2] * 3, LENGTHS, d=D, sigma2=SIGMA2, n_prompts=4096, seed=3
    )
    assert curves.single_mean[0] == curves.single_mean[2]  # predicting 0 on nested prompts
    assert curves.single_mean[1] == same.single_mean[1]
    np.testing.assert_array_equal(curves.pair_mean, same.pair_mean)


def test_length_curve_reads_each_length_in_order(kernels_as_models):
    losses = mse_by_test_length(
        {"pair": (kernels_as_models, 0)}, [40, 10], n_prompts=256, seed=1, bayes=False
    )
    mean, se = length_curve(losses, "pair", [10, 40])
    assert mean.tolist() == [losses["pair@10"].mean, losses["pair@40"].mean]
    assert se.tolist() == [losses["pair@10"].stderr, losses["pair@40"].stderr]
    with pytest.raises(ValueError, match="name must be one of"):
        length_curve(losses, "pair", [20])
