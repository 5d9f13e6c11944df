"""numerics.normalised_attention: groups of two-head members per activation, read against
debiased GD at their fitted step (He et al. §5.2, reference §HE-5.2-ACT). Members built on the
pattern (a pair (omega, mu), (-omega, -mu) at small omega is debiased GD at 2 a_f omega mu; a
same-sign pair is trapped), so every read-out has a known value."""

import dataclasses

import numpy as np
import pytest
from icl_verify.numerics.effective_steps import fitted_steps
from icl_verify.numerics.normalised_attention import read_activation_groups

D_COV, L, ETA = 3, 20, 0.8
ATTENTION = ("softmax", "softmax", "tanh", "tanh", "quadratic:0.5", "quadratic:0.5")
# group 0: a pair (a_f = 1), a trapped member; group 1: two trapped; group 2: trapped, a pair
# with a_f = 2c = 1. Pairs at omega = 0.01 with 2 a_f omega mu = ETA.
OMEGA = [[0.01, -0.01], [0.2, 0.2], [0.2, 0.3], [-0.2, -0.2], [0.3, 0.2], [0.01, -0.01]]
MU = [[40.0, -40.0], [1.0, 1.0], [1.0, 1.0], [-1.0, -1.0], [1.0, 1.0], [40.0, -40.0]]


_READ = {}  # read once per module: (groups, ensemble)


@pytest.fixture
def groups_and_ensemble(pattern_ensemble):
    if not _READ:
        ensemble = pattern_ensemble(OMEGA, MU, d=D_COV, L=L, attention=ATTENTION)
        groups = read_activation_groups(ensemble, 2, [10, 20, 40], n_prompts=8192, seed=3)
        _READ["read"] = (groups, ensemble)
    return _READ["read"]


def test_the_paired_member_of_each_group_is_shown_and_applies_its_step(groups_and_ensemble):
    groups, ensemble = groups_and_ensemble
    assert groups.paired_count.tolist() == [1, 0, 1]
    assert groups.reached.tolist() == [True, False, True]
    assert groups.shown[[0, 2]].tolist() == [0, 5]
    np.testing.assert_allclose(groups.omega[[0, 2]], 0.01)
    np.testing.assert_allclose(groups.mu[[0, 2]], 40.0)
    # to O(omega^2): the step is 2 a_f omega mu; one log, so no Adam noise: the error is the SE
    fitted = fitted_steps(ensemble, [0, 5], n_prompts=8192, seed=3)
    np.testing.assert_array_equal(groups.step[[0, 2]], fitted.value)
    np.testing.assert_array_equal(groups.step_error[[0, 2]], fitted.stderr)
    assert np.all(np.abs(fitted.value - ETA) < 4 * fitted.stderr + 1e-3)
    # and its test MSE is debiased GD's at that step at every L', to O(omega^2)
    gap = np.abs(groups.ratio[[0, 2]] - 1.0)
    assert np.all(gap < 4 * groups.ratio_se[[0, 2]] + 1e-3), gap
    np.testing.assert_allclose(groups.mse[[0, 2]], groups.dgd[[0, 2]], rtol=1e-2)


def test_a_group_without_a_paired_member_has_no_step(groups_and_ensemble):
    groups, _ = groups_and_ensemble
    assert groups.step[1] == 0.0 and groups.step_error[1] == np.inf
    assert np.all(groups.ratio[1] == 0.0) and np.all(groups.ratio_se[1] == np.inf)
    assert np.isnan(groups.omega[1]) and np.all(np.isnan(groups.mse[1]))


def test_the_error_adds_the_adam_noise_of_the_step_in_quadrature(pattern_ensemble):
    # logged |omega mu| summed over heads: 0.8 at every log but the last quarter's two, 0.7 and
    # 0.9: relative SD 0.1 / 0.8 over that quarter, times the step, joins the Monte Carlo SE
    ensemble = pattern_ensemble([OMEGA[0]], [MU[0]], d=D_COV, L=L)
    mu = np.full((8, 1, 2), 40.0) * [1.0, -1.0]
    mu[6:, 0, 1] = [-30.0, -50.0]
    logged = dataclasses.replace(
        ensemble, steps=np.arange(8), omega=np.full((8, 1, 2), 0.01) * [1.0, -1.0], mu=mu,
        test_loss=np.zeros((8, 1)),
    )  # fmt: skip
    groups = read_activation_groups(logged, 1, [20], n_prompts=2048, seed=0)
    fitted = fitted_steps(logged, [0], n_prompts=2048, seed=0)
    expected = np.hypot(fitted.stderr[0], fitted.value[0] * 0.1 / 0.8)
    assert groups.step_error[0] == pytest.approx(expected, rel=1e-12)
