"""numerics.head_count on synthetic logged histories with known answers, and on the smoke
ensemble against the per-head logs read directly."""

from types import SimpleNamespace

import numpy as np
import pytest
from icl_verify.numerics.head_count import dummy_decay, member_scales, pooled_spread


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
