"""numerics._he2025.head_count on synthetic logged histories with known answers, and on the smoke
ensemble against the per-head logs read directly."""

from types import SimpleNamespace

import numpy as np
import pytest
from icl_verify.numerics import (
    MemberScales,
    dummy_decay,
    dummy_example,
    member_scales,
    pooled_spread,
    relative_to_reference,
    scales_per_heads,
)


def _ensemble(omega, mu, KQ=None):
    """A logged history (n, E, H) in the shape of `numerics.TrainedEnsemble`."""
    omega, mu = np.asarray(omega, dtype=float), np.asarray(mu, dtype=float)
    n, E, H = omega.shape
    if KQ is None:
        KQ = omega[..., None, None] * np.eye(3)  # (n, E, H, 3, 3)
    return SimpleNamespace(
        heads=np.full(E, H), omega=omega, mu=mu, KQ_history=KQ, steps=np.arange(1, n + 1) * 10
    )


def test_weighted_scale_and_group_steps_of_unequal_heads():
    """Two positive heads at different |omega| and one negative: the weighted scale is
    sum |omega mu| / sum |mu|, the group steps 2 sum |omega mu|; constant logs settle exactly."""
    omega = np.broadcast_to([0.1, 0.3, -0.2], (40, 1, 3))  # (n, E=1, H=3)
    mu = np.broadcast_to([1.0, 3.0, -4.0], (40, 1, 3))
    scales = member_scales(_ensemble(omega, mu), [0])
    assert scales.value["omega"][0] == pytest.approx((0.1 + 0.9 + 0.8) / 8.0)
    assert scales.value["eta_plus"][0] == pytest.approx(2 * (0.1 + 0.9))
    assert scales.value["eta_minus"][0] == pytest.approx(2 * 0.8)
    assert scales.value["sum_plus"][0] == pytest.approx(4.0)
    assert scales.value["sum_minus"][0] == pytest.approx(-4.0)
    assert all(error[0] < 1e-12 for error in scales.error.values())  # roundoff only


def test_a_drifting_scale_carries_its_drift():
    """omega of both heads falling linearly by 0.04 over the run: the last-quarter mean and an
    error at least the drift between the last two quarters (0.01)."""
    fall = np.linspace(0.2, 0.16, 400)[:, None, None]  # (n, 1, 1)
    omega = np.concatenate([fall, -fall], axis=2)  # (n, E=1, H=2)
    mu = np.broadcast_to([2.5, -2.5], (400, 1, 2))
    scales = member_scales(_ensemble(omega, mu), [0])
    assert scales.value["omega"][0] == pytest.approx(fall[-100:].mean())
    assert scales.error["omega"][0] >= 0.01 - 1e-9


def test_dummy_decay_reads_the_dummy_head_only_and_its_peak():
    n = 80
    omega = np.tile([0.2, -0.2, 0.05], (n, 1))[:, None]  # (n, E=1, H=3)
    mu = np.tile([2.0, -2.0, 0.0], (n, 1))[:, None].copy()
    rise_fall = np.r_[np.linspace(0.1, 1.0, 10), np.exp(-np.linspace(0, 5, n - 10))]  # (n,)
    mu[:, 0, 2] = 0.1 * rise_fall
    KQ = np.ones((n, 1, 3, 3, 3))
    KQ[:, 0, 2] *= rise_fall[:, None, None]
    decay = dummy_decay(_ensemble(omega, mu, KQ), [0])
    assert decay.head.tolist() == [2] and decay.member.tolist() == [0]
    assert decay.kq[0] == pytest.approx(np.exp(-5.0)) and decay.mu[0] == pytest.approx(np.exp(-5))
    assert decay.kq_peak_step[0] == 100.0  # log 10 (steps 10, 20, ...)
    assert decay.kq_error[0] == pytest.approx(decay.kq[0])  # still falling: error to 0


def test_pooled_spread_matches_the_one_way_anova_residual_variance():
    """Independent form: residual sum of squares from the groups' least-squares fit (a design
    matrix of group indicators) over n - groups degrees of freedom."""
    rng = np.random.default_rng(1)
    groups = np.array([2, 2, 2, 3, 3, 4, 4, 4, 4, 8])
    values = rng.normal(size=groups.size) + groups
    design = (groups[:, None] == np.unique(groups)[None]).astype(float)  # (n, G)
    residual = values - design @ np.linalg.lstsq(design, values, rcond=None)[0]
    dof = groups.size - np.unique(groups).size
    spread, measured_dof = pooled_spread(values, groups)
    assert measured_dof == dof
    assert spread == pytest.approx(np.sqrt(residual @ residual / dof))


def _scales(omega, sum_plus, sum_minus, heads, error=0.01):
    """A `MemberScales` of given per-member values, each with the same settled error."""
    value = {"omega": np.asarray(omega, float), "sum_plus": np.asarray(sum_plus, float),
             "sum_minus": np.asarray(sum_minus, float)}  # fmt: skip
    return MemberScales(
        value=value,
        error={key: np.full(v.size, error) for key, v in value.items()},
        heads=np.asarray(heads),
    )


def test_per_heads_means_carry_the_settled_error_and_the_pooled_seed_se():
    """Per H: the mean over its members; its error the mean settled error plus seed_z pooled
    seed SDs over sqrt(n_H) (a lone member of its H gets the spread of the others)."""
    omega = np.array([0.16, 0.18, 0.15, 0.16, 0.17, 0.14])
    heads = np.array([2, 2, 4, 4, 4, 8])
    sum_plus = np.array([2.6, 2.8, 2.7, 2.6, 2.5, 2.9])
    sum_minus = -sum_plus + np.array([0.0, 0.2, 0.0, -0.2, 0.1, 0.0])
    per = scales_per_heads(_scales(omega, sum_plus, sum_minus, heads), seed_z=2.0)
    assert per.heads.tolist() == [2, 4, 8] and per.seed_dof == 3
    spread = np.sqrt((2 * 0.01**2 + 2 * 0.01**2) / 3)  # omega about 0.17 and 0.16
    np.testing.assert_allclose(per.omega, [0.17, 0.16, 0.14])
    np.testing.assert_allclose(
        per.omega_error, 0.01 + 2.0 * spread / np.sqrt([2, 3, 1]), rtol=1e-12
    )
    np.testing.assert_allclose(per.member_sums, (sum_plus - sum_minus) / 2)
    np.testing.assert_allclose(per.sums, [2.65, (2.7 + 2.7 + 2.45) / 3, 2.9])


def test_without_two_members_of_one_h_there_is_no_seed_se():
    per = scales_per_heads(_scales([0.16, 0.15], [2.6, 2.7], [-2.6, -2.7], [2, 4]), seed_z=2.0)
    assert per.seed_dof == 0
    np.testing.assert_array_equal(per.omega_error, [0.01, 0.01])


def test_relative_error_bounds_the_ratio_over_the_error_box():
    """The first-order bound (e_a + |r| e_b) / |b| of r = a / b - 1 covers a / b - 1 at every
    corner of the box |a' - a| <= e_a, |b' - b| <= e_b, to second order in the errors."""
    means, errors = np.array([2.0, 2.2, 1.7]), np.array([0.02, 0.03, 0.01])
    relative, bound = relative_to_reference(means, errors)
    np.testing.assert_allclose(relative, means[1:] / means[0] - 1)
    for k in (1, 2):
        corners = [
            (means[k] + sa * errors[k]) / (means[0] + sb * errors[0]) - 1
            for sa in (-1, 1)
            for sb in (-1, 1)
        ]
        worst = max(abs(c - relative[k - 1]) for c in corners)
        assert worst == pytest.approx(bound[k - 1], rel=2 * errors[0] / means[0])
    assert relative_to_reference(np.array([2.0]), np.array([0.1])) == (0.0, np.inf)


def _figure_ensemble(dummy_members, losses, n=40):
    """Four-head members: a ± pair plus two heads, which are dummies (omega mu ~ 0) in
    ``dummy_members``, else live positive heads."""
    E = len(losses)
    omega = np.tile([0.2, -0.2, 0.2, 0.2], (n, E, 1))  # (n, E, H=4)
    mu = np.tile([2.0, -2.0, 2.0, 2.0], (n, E, 1))
    for e in dummy_members:
        mu[:, e, 2:] = 1e-3
    KQ = np.arange(n * E * 4 * 9, dtype=float).reshape(n, E, 4, 3, 3)
    return SimpleNamespace(
        heads=np.full(E, 4), omega=omega, mu=mu, KQ_history=KQ, OV_history=-KQ,
        steps=np.arange(n) * 25, test_loss=np.array([losses]),
    )  # fmt: skip


def test_the_figure_member_is_the_best_with_a_dummy_head_else_the_best():
    ensemble = _figure_ensemble([1, 2], losses=[0.20, 0.26, 0.24])
    example = dummy_example(ensemble, 4, np.array([True, True, True]), snapshots=5)
    assert example.member == 2 and example.has_dummy  # member 0 is better but has no dummy
    # targets 25 x 39^(k/4) = 25, 62, 156, 390, 975: the nearest logs (every 25) in log step
    assert example.snapshot_steps.tolist() == [25.0, 75.0, 150.0, 400.0, 975.0]
    np.testing.assert_array_equal(example.snapshot_KQ, ensemble.KQ_history[[1, 3, 6, 16, 39], 2])
    np.testing.assert_array_equal(example.omega, ensemble.omega[:, 2])
    np.testing.assert_array_equal(example.snapshot_OV, -example.snapshot_KQ)
    np.testing.assert_allclose(
        example.kq_norm, np.linalg.norm(ensemble.KQ_history[:, 2], axis=(-2, -1))
    )
    none = dummy_example(_figure_ensemble([], [0.20, 0.26, 0.24]), 4, np.ones(3, bool), 5)
    assert none.member == 0 and not none.has_dummy
    unpaired = dummy_example(ensemble, 4, np.array([True, True, False]), snapshots=5)
    assert unpaired.member == 1  # member 2's dummy does not count: it is not paired
