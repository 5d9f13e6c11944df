"""Stage I/II from small random starts (HE-S1, HE-S2): order of appearance and the end state."""

import math

import numpy as np
import pytest
from icl_verify.dynamics import SaveAt, random_init_stages
from icl_verify.dynamics.random_init import _appearance_time
from icl_verify.theory import Setting

SETTING = Setting(d=5, L=40, sigma2=0.1)


def test_appearance_time_is_the_start_of_the_final_run_of_trues():
    t = np.array([0.0, 1.0, 2.0, 3.0, 4.0])
    assert _appearance_time(t, np.array([False, True, False, True, True])) == 3.0
    assert _appearance_time(t, np.ones(5, bool)) == 0.0
    assert _appearance_time(t, np.array([True, True, True, True, False])) == math.inf


@pytest.fixture(scope="module")
def stages():
    return random_init_stages(SETTING, 3, seeds=(0, 1, 2), t_end=2e3)


def test_sign_matching_comes_first_and_fast(stages):
    """Sign matching relaxes at rate ~2 (HE-S1: d(mu_h - omega_h)/dt ~ -2 (mu_h - omega_h)),
    the zero-sum direction only at rate 2cH = 0.165 (H = 3): sign matching appears before
    zero-sum OV and within a few of the zero-sum time constants 1/(2cH) = 6.1.
    (Homogeneous KQ at the same 1% level is not ordered after zero-sum; see the report.)"""
    assert np.all(np.isfinite(stages.stage_one_time))
    assert np.all(stages.sign_matching_time <= stages.zero_sum_time)
    assert np.all(stages.sign_matching_time < 1 / (2 * SETTING.c * 3))


def test_end_state_is_near_the_manifold(stages):
    """Seeds that reach Stage II end within the slow-manifold lag of S_omega (<< 0.05)."""
    finite = np.isfinite(stages.homogeneous_time)
    assert np.all(stages.final_distance[finite] < 0.05)
    assert stages.dummy_heads.shape == (3,) and 0.0 <= stages.dummy_fraction <= 1.0


def test_bad_inputs():
    with pytest.raises(ValueError, match="num_heads must be an integer >= 2, got 1"):
        random_init_stages(SETTING, 1)
    with pytest.raises(ValueError, match="scale must be a finite number > 0"):
        random_init_stages(SETTING, 2, scale=-1.0)


def test_two_same_sign_heads_have_an_attracting_single_head_critical_point():
    """Why some H = 2 random starts end off S_omega: at omega_1 = omega_2 = 1/sqrt(d) with
    mu_1 + mu_2 = sqrt(d)/(1 + e kappa) (the single-head optimum (4.12)), Ltilde equals the
    one-head minimum, the gradient vanishes and the Hessian is positive semi-definite (its
    zero mode only moves mass between mu_1 and mu_2); a flow started near it returns."""
    from icl_verify.dynamics import ODESolver, SaveAt, gradient_flow
    from icl_verify.theory import (
        approximate_loss,
        approximate_loss_grad,
        approximate_loss_hessian,
        single_head_optimum,
    )

    one = single_head_optimum(SETTING)
    omega, mu = np.full(2, one.omega), np.array([0.6, 0.4]) * one.mu
    assert approximate_loss(omega, mu, SETTING) == pytest.approx(one.loss, rel=1e-12)
    assert max(np.abs(g).max() for g in approximate_loss_grad(omega, mu, SETTING)) < 1e-12
    eigenvalues = np.linalg.eigvalsh(approximate_loss_hessian(omega, mu, SETTING))
    assert eigenvalues[0] > -1e-12 and eigenvalues[1] > 0.1
    start = omega + np.array([0.01, -0.01])
    path = gradient_flow(start, mu, SETTING, (0.0, 1e3), ODESolver(rtol=1e-8), SaveAt([0.0, 1e3]))
    # Where the flow stopped, from the stop: the end point z is the Newton step H^+ g from a
    # critical point (H, g the Hessian and gradient at z; H's null direction (0, 0, 1, -1) moves
    # only mu, so it does not enter omega). Bound: twice the step (margin for the quadratic
    # model over so short a distance) plus the rounding of g (16 eps times the size of its
    # terms, 2 |mu| (1 + mu.omega) + 2cd mu (E (mu o omega)) < 8) carried through |H^+|.
    end_omega, end_mu = path.omega[-1], path.mu[-1]
    g = np.concatenate(approximate_loss_grad(end_omega, end_mu, SETTING))
    eigenvalues, vectors = np.linalg.eigh(approximate_loss_hessian(end_omega, end_mu, SETTING))
    assert abs(eigenvalues[0]) < 1e-12 and eigenvalues[1] > 0.1
    assert np.abs(vectors[:2, 0]).max() < 1e-12  # the null direction leaves omega alone
    inverse = (vectors[:, 1:] / eigenvalues[1:]) @ vectors[:, 1:].T
    rounding = np.abs(inverse) @ np.full(4, 16 * np.finfo(float).eps * 8.0)
    bound = 2 * (np.abs(inverse @ g) + rounding)[:2]
    assert np.all(bound < 1e-6)  # it has come back (to 1e-6 or closer)
    assert np.all(np.abs(end_omega - omega) <= bound)
    assert path.zero_sum_ratio[-1] == pytest.approx(1.0)


def test_tuple_seeds_draw_the_starts_of_a_seed_sequence_and_arrays_round_trip():
    """A seed (design_seed, H, s) starts from default_rng((design_seed, H, s)).normal(0, scale);
    the per-seed end state agrees with the flow from that start; `arrays` round-trips exactly."""
    from icl_verify.dynamics import RandomInitStages, gradient_flow

    stages = random_init_stages(SETTING, 2, seeds=[(8, 2, 0), (8, 2, 1)], t_end=300.0, n_times=50)
    omega0, mu0 = np.random.default_rng((8, 2, 1)).normal(0.0, 1e-2, (2, 2))
    path = gradient_flow(omega0, mu0, SETTING, (0.0, 300.0), saveat=SaveAt([0.0, 300.0]))
    np.testing.assert_allclose(stages.final_omega[1], path.omega[-1], rtol=1e-5)
    assert stages.t.shape == (50,) and stages.mu_dot_omega.shape == (2, 50)
    back = RandomInitStages.from_arrays(stages.arrays())
    assert back.setting == stages.setting and back.num_heads == 2
    for name in ("seeds", "mu_dot_omega", "final_loss_gap", "stage_one_time", "final_sign_matched"):
        np.testing.assert_array_equal(getattr(back, name), getattr(stages, name))
