"""numerics._he2025.patterns: the end-of-training error bars and the trajectory measures of He et
al. §3,
on series whose answer is known."""

from types import SimpleNamespace

import numpy as np
import pytest
from icl_verify.numerics import (
    fractions_by_h,
    group_patterns,
    logged_steps,
    logging_noise,
    pattern_dynamics,
    seed_spread,
    settled_value,
)


def test_settled_value_error_covers_a_converging_series():
    # x_t = exp(-t / tau): the error must exceed the remaining distance to the limit 0 when
    # the last quarter still falls by more than it (tau comparable with the run).
    t = np.arange(100.0)
    value, error = settled_value(np.exp(-t / 40))
    assert error > 0.1 * value
    # A settled series plus noise of SD 0.01: the error is about that SD (drift averages out).
    rng = np.random.default_rng(0)
    value, error = settled_value(0.5 + 0.01 * rng.normal(size=400))
    assert 0.005 < error < 0.02


def test_logging_noise_ignores_the_trend():
    rng = np.random.default_rng(1)
    t = np.linspace(0, 1, 2000)
    assert abs(logging_noise(3 * t + 0.02 * rng.normal(size=t.size)) - 0.02) < 0.002


def _two_head_member(omega_path, mu_path):
    """An ensemble of one paired two-head member with heads (+omega, +mu) and (-omega, -mu)."""
    omega = np.stack([omega_path, -omega_path], axis=-1)[:, None]  # (n, E=1, H=2)
    mu = np.stack([mu_path, -mu_path], axis=-1)[:, None]
    steps = np.arange(1, omega.shape[0] + 1)
    return SimpleNamespace(heads=np.array([2]), omega=omega, mu=mu, steps=steps)


def test_pattern_dynamics_of_a_rise_and_fall_with_growing_mu():
    t = np.linspace(0, 1, 400)
    omega = 0.2 + 0.3 * t * np.exp(-8 * t)  # peaks at t = 1/8, ends near 0.2
    mu = 0.1 + 2 * (1 - np.exp(-5 * t))  # grows monotonically
    dynamics = pattern_dynamics(_two_head_member(omega, mu), [0], noise_margin=4.0)
    assert dynamics.rise_and_fall.tolist() == [1.0, 1.0]
    assert dynamics.rise_and_fall_error.tolist() == [0.0, 0.0]
    assert np.all(dynamics.mu_drop == 0) and np.all(dynamics.group_sum_drop == 0)
    assert dynamics.persistence.tolist() == [1.0] and dynamics.formed_at.tolist() == [1.0]
    # the peak of |omega| at t = 1/8: log 1 + round(399 / 8) = 51 (steps count from 1)
    assert dynamics.peak_at.tolist() == [51.0] and dynamics.total_steps == 400
    assert dynamics.formed_by_peak.tolist() == [1.0]  # formed 50 logs before its peak


def test_pattern_formed_after_a_sign_change_is_dated_after_the_peak():
    # head 2 starts on head 1's side (same sign, no pattern) and crosses zero at log 200,
    # after |omega| peaked: formed_at > peak_at, what HE-OBS4's "early" rule rejects
    t = np.linspace(0, 1, 400)
    omega = 0.2 + 0.3 * t * np.exp(-8 * t)
    second = np.where(t < 0.5, 1.0, -1.0) * omega
    member = SimpleNamespace(
        heads=np.array([2]),
        omega=np.stack([omega, second], axis=-1)[:, None],
        mu=np.stack([omega, second], axis=-1)[:, None] * 10,
        steps=np.arange(1, 401),
    )
    dynamics = pattern_dynamics(member, [0], noise_margin=4.0)
    assert dynamics.formed_at.tolist() == [201.0] and dynamics.peak_at.tolist() == [51.0]
    assert dynamics.formed_by_peak.tolist() == [0.0]  # 150 logs after: resolved


def test_timings_the_logs_cannot_resolve_are_undecided():
    """Logged every 1000 steps from step 1000 (the paper preset): |omega| peaks at the first
    log, so its rise came before the logs (undecided, error 1, not "no rise"), and the pattern
    forming on the log of the peak or the next is neither early nor late (0.5)."""
    t = np.arange(1.0, 401.0)
    omega = 0.2 + 0.2 * np.exp(-t / 50)  # falls from the first log on
    for flip, outcome in ((0, 0.5), (1, 0.5), (2, 0.0)):
        second = np.where(t <= flip, 1.0, -1.0) * omega  # opposite from log index `flip` on
        member = SimpleNamespace(
            heads=np.array([2]),
            omega=np.stack([omega, second], axis=-1)[:, None],
            mu=np.stack([omega, second], axis=-1)[:, None] * 10,
            steps=1000 * np.arange(1, 401),
        )
        dynamics = pattern_dynamics(member, [0], noise_margin=4.0)
        assert dynamics.peak_at.tolist() == [1000.0]
        assert dynamics.formed_by_peak.tolist() == [outcome], flip
    assert dynamics.rise_and_fall.tolist() == [0.0, 0.0]
    assert dynamics.rise_and_fall_error.tolist() == [1.0, 1.0]


def test_seed_spread_is_the_final_spread_against_drift_plus_noise():
    # Two members of H = 2 on the same path, one 0.01 higher throughout and both noiseless:
    # spread 0.01 in mean |omega|; allowance the path's last-quarter drift (noise 0).
    t = np.linspace(0, 1, 400)
    path = 0.3 - 0.1 * t
    low, high = _two_head_member(path, 1 / path), _two_head_member(path + 0.01, 1 / path)
    both = SimpleNamespace(
        heads=np.array([2, 2]),
        omega=np.concatenate([low.omega, high.omega], axis=1),
        mu=np.concatenate([low.mu, high.mu], axis=1),
    )
    spread = seed_spread(both, [0, 1], noise_margin=4.0)
    assert spread.heads.tolist() == [2]
    np.testing.assert_allclose(spread.spread[0, 0], 0.01, rtol=1e-9)
    np.testing.assert_allclose(spread.spread[0, 1:], 0.0, atol=1e-12)
    drift = 0.1 * 100 / 399  # the quarter means of a line are 100 logs apart
    np.testing.assert_allclose(spread.allowance[0, 0], drift, rtol=1e-6, atol=1e-9)


def test_pattern_dynamics_sees_a_falling_mu_and_an_omega_still_rising():
    t = np.linspace(0, 1, 400)
    omega = 0.1 + 0.2 * t  # still rising at the end: undecided (error 1)
    mu = 2.0 - 0.5 * t  # falls by 0.5, a third of its final value 1.5
    dynamics = pattern_dynamics(_two_head_member(omega, mu), [0], noise_margin=4.0)
    assert dynamics.rise_and_fall.tolist() == [0.0, 0.0]
    assert dynamics.rise_and_fall_error.tolist() == [1.0, 1.0]
    # the moving average over 400 // 20 = 20 logs spans 19 of the 399 steps of the line
    np.testing.assert_allclose(dynamics.mu_drop, 0.5 * (1 - 19 / 399) / 1.5, rtol=1e-12)


def test_group_errors_hold_the_spread_across_the_seeds_of_one_h():
    """Three settled two-head members (seeds of one H) ending at common |omega| 0.2, 0.3, 0.4:
    each member's settled error is 0, so its error is the seeds' SD of the quantity, 0.1 for
    the group sum 2 omega sum_+ mu at mu = 1 (0.4, 0.6, 0.8: SD 0.2)."""
    flat = np.ones(200)
    members = [_two_head_member(w * flat, flat) for w in (0.2, 0.3, 0.4)]
    ensemble = SimpleNamespace(
        heads=np.array([2, 2, 2]),
        omega=np.concatenate([m.omega for m in members], axis=1),
        mu=np.concatenate([m.mu for m in members], axis=1),
        steps=members[0].steps,
    )
    groups = group_patterns(ensemble, [0, 1, 2], toward={})
    np.testing.assert_allclose(groups.value["eta_plus"], [0.4, 0.6, 0.8])
    np.testing.assert_allclose(groups.error["eta_plus"], 0.2)
    np.testing.assert_allclose(groups.error["homogeneity"], 0.0)  # equal |omega_h| in every seed


def test_fractions_by_h_are_agresti_coull_proportions_per_h():
    """Per H >= 2 (H = 1 members ignored): k/n and sqrt(p~(1 - p~)/(n + 4)), p~ = (k+2)/(n+4),
    the Wald SE of the proportion with two successes and two failures added, not 0 at 0/n or
    n/n."""
    heads = np.array([1, 1, 2, 2, 2, 2, 3, 3, 4, 4, 4, 8])
    paired = np.array([0, 0, 1, 1, 0, 0, 1, 1, 1, 1, 1, 0], dtype=bool)
    fractions = fractions_by_h(heads, paired)
    assert fractions.heads.tolist() == [2, 3, 4, 8]
    assert fractions.counts.tolist() == [4.0, 2.0, 3.0, 1.0]
    assert fractions.successes.tolist() == [2, 2, 3, 0]
    k, n = fractions.successes, fractions.counts
    np.testing.assert_array_equal(fractions.fraction, k / n)
    tilde = (k + 2) / (n + 4)
    np.testing.assert_allclose(fractions.fraction_se, np.sqrt(tilde * (1 - tilde) / (n + 4)))
    assert np.all(fractions.fraction_se > 0)  # the all-paired and the none-paired H too
    # 2 of 4: sqrt(0.5 * 0.5 / 8) = 0.177 (the Wald SE: sqrt(0.5 * 0.5 / 4) = 0.25)
    assert fractions.fraction_se[0] == pytest.approx(np.sqrt(0.25 / 8))


def test_logged_steps_are_the_logs_nearest_a_geometric_grid():
    """Each returned log is, among all logs, the nearest in log step to one of the geometric
    targets from the first positive step to ``last``; targets sharing a log give it once."""
    steps = np.arange(0, 10_001, 25)
    for last, count in [(10_000, 6), (1_000, 4), (10_000, 30)]:
        chosen = logged_steps(steps, last, count)
        targets = np.geomspace(25, last, count)
        nearest = {
            int(np.argmin(np.abs(np.log(np.maximum(steps, 0.5)) - np.log(t)))) for t in targets
        }
        assert chosen.tolist() == sorted(nearest)
        assert steps[chosen[0]] == 25 and steps[chosen[-1]] == last
    assert len(logged_steps(steps, 10_000, 30)) < 30  # the early targets share logs
    assert logged_steps(np.array([0, 10, 20]), 20, 5).tolist() == [1, 2]


def test_a_single_head_on_its_pattern_is_its_kernel_regressor(pattern_ensemble):
    """`kernel_reading` of members built on the pattern (3.1): their predictions are the
    Nadaraya-Watson regressor (4.12) at their (omega, mu) to float32 rounding (the model's
    dtype), and (omega, mu) are read back exactly from a settled history."""
    import dataclasses

    from icl_verify.numerics import kernel_reading

    built = pattern_ensemble([[0.45], [-0.3]], [[1.6], [-1.2]], d=5, L=40)
    logs = 8  # a settled history: the same value logged 8 times
    ensemble = dataclasses.replace(
        built, steps=np.arange(1, logs + 1), test_loss=np.repeat(built.test_loss, logs, 0),
        omega=np.repeat(built.omega, logs, 0), mu=np.repeat(built.mu, logs, 0),
        KQ_history=np.repeat(built.KQ_history, logs, 0),
        OV_history=np.repeat(built.OV_history, logs, 0),
    )  # fmt: skip
    reading = kernel_reading(ensemble, [0, 1], n_prompts=2048, seed=0)
    assert np.allclose(reading.omega, [0.45, -0.3]) and np.allclose(reading.mu, [1.6, -1.2])
    # a settled history has no error of its own: what is left is the seeds' spread of |omega|,
    # SD(0.45, 0.3) over the two one-head members
    np.testing.assert_allclose(reading.omega_error, np.std([0.45, 0.3], ddof=1), rtol=1e-6)
    assert np.all(reading.relative_gap < 1e-5), reading.relative_gap
    assert np.allclose(reading.model_mse, reading.kernel_mse, rtol=1e-4)
