"""numerics._he2025.normalised_attention: groups of two-head members per activation, read on their
paired seeds against debiased GD at a given step (He et al. §5.2, reference §HE-5.2-ACT). Members
built on the pattern (a pair (omega, mu), (-omega, -mu) at small omega is debiased GD at
2 a_f omega mu; a same-sign pair is trapped), so every read-out has a known value."""

import numpy as np
import pytest
from icl_verify.numerics import fitted_steps, read_activation_groups
from icl_verify.theory import Setting, debiased_gd_risk

D_COV, L, ETA = 3, 20, 0.8
ATTENTION = ("softmax", "softmax", "tanh", "tanh", "quadratic:0.5", "quadratic:0.5")
# group 0: two identical pairs (a_f = 1: two seeds, no spread); group 1: two trapped; group 2:
# trapped, a pair with a_f = 2c = 1 (one paired seed). Pairs at omega = 0.01 with 2 a_f omega
# mu = ETA.
OMEGA = [[0.01, -0.01], [0.01, -0.01], [0.2, 0.3], [-0.2, -0.2], [0.3, 0.2], [0.01, -0.01]]
MU = [[40.0, -40.0], [40.0, -40.0], [1.0, 1.0], [-1.0, -1.0], [1.0, 1.0], [40.0, -40.0]]


_READ = {}  # read once per module: (groups, ensemble)


@pytest.fixture
def groups_and_ensemble(pattern_ensemble):
    if not _READ:
        ensemble = pattern_ensemble(OMEGA, MU, d=D_COV, L=L, attention=ATTENTION)
        groups = read_activation_groups(
            ensemble, 2, [10, 20, 40], debiased_step=ETA, n_prompts=8192, seed=3
        )
        _READ["read"] = (groups, ensemble)
    return _READ["read"]


def test_the_paired_seeds_of_each_group_apply_their_step_and_track_dgd(groups_and_ensemble):
    groups, ensemble = groups_and_ensemble
    assert groups.paired_count.tolist() == [2, 0, 1]
    assert groups.reached.tolist() == [True, False, True]
    assert groups.shown[2] == 5 and groups.shown[0] in (0, 1)
    np.testing.assert_allclose(groups.omega[[0, 2]], 0.01)
    np.testing.assert_allclose(groups.mu[[0, 2]], 40.0)
    # to O(omega^2): the step is 2 a_f omega mu; two identical seeds: no spread, the error is
    # the Monte Carlo SE; one paired seed: its spread is unknown, an infinite error
    fitted = fitted_steps(ensemble, [0, 1, 5], n_prompts=8192, seed=3)
    np.testing.assert_allclose(groups.step[[0, 2]], fitted.value[[0, 2]], rtol=1e-12)
    assert groups.step_error[0] == pytest.approx(fitted.stderr[0], rel=1e-9)
    assert groups.step_error[2] == np.inf
    assert np.all(np.abs(fitted.value - ETA) < 4 * fitted.stderr + 1e-3)
    # and its test MSE is debiased GD's at the given step (here the pairs' own) at every L', to
    # O(omega^2); the given step's curve is the exact risk, the fitted one's close to it
    gap = np.abs(groups.ratio[0] - 1.0)
    assert np.all(gap < 4 * groups.ratio_se[0] + 1e-3), gap
    exact = [debiased_gd_risk(ETA, Setting(D_COV, n, 0.1)) for n in (10, 20, 40)]
    np.testing.assert_allclose(groups.dgd, exact, rtol=0.05)
    np.testing.assert_allclose(groups.mse[[0, 2]], groups.dgd_fit[[0, 2]], rtol=1e-2)
    np.testing.assert_allclose(groups.dgd_fit[0], groups.dgd, rtol=1e-2)


def test_a_group_without_a_paired_member_has_no_step(groups_and_ensemble):
    groups, _ = groups_and_ensemble
    assert groups.step[1] == 0.0 and groups.step_error[1] == np.inf
    assert np.all(groups.ratio[1] == 0.0) and np.all(groups.ratio_se[1] == np.inf)
    assert np.isnan(groups.omega[1]) and np.all(np.isnan(groups.mse[1]))


def test_the_seeds_spread_is_in_the_error_of_the_step(pattern_ensemble):
    """Two paired seeds whose steps differ by 10% (mu 40 and 44): the step is their mean and its
    error holds their spread with two seeds' t factor (1.84 at one SE), far above the SE of the
    shared prompts' Monte Carlo."""
    ensemble = pattern_ensemble([OMEGA[0]] * 2, [[40.0, -40.0], [44.0, -44.0]], d=D_COV, L=L)
    groups = read_activation_groups(ensemble, 2, [20], debiased_step=ETA, n_prompts=4096, seed=0)
    fitted = fitted_steps(ensemble, [0, 1], n_prompts=4096, seed=0)
    assert groups.step[0] == pytest.approx(fitted.value.mean(), rel=1e-12)
    half_spread = abs(fitted.value[1] - fitted.value[0]) / 2
    assert groups.step_error[0] >= 1.8 * half_spread > 10 * fitted.stderr.mean()
