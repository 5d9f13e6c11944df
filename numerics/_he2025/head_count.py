"""Read-outs of the shared trained ensemble for He et al. (2025) App. A.1 (Figures 13, 14).

Trained models with H = 2, 3, 4, 8 heads are compared by what the solution manifold S_omega
(4.7) fixes: the common KQ scale of the non-dummy heads and the OV group sums. Where the live
heads of a member do not yet share one |omega_h| exactly, the scale read is the |mu|-weighted
mean ``sum |omega_h mu_h| / sum |mu_h|`` (non-dummy heads): the scale that, with the group sums,
reproduces the member's first-order step ``sum_h omega_h mu_h`` (reference §HE-4.10), so a
head carrying little OV weight moves it little. Dummy heads (`icl_verify.heads.head_types`)
are read by how far their KQ norm and |mu_h| have fallen from their maxima over training.

- `member_scales`: per member the weighted scale, the group sums and ``2 sum_group |omega mu|``,
  each where the training settles (`numerics.settled_mean`: the last-quarter mean, its error the
  drift plus the batch-means SE), so members are compared without their final Adam noise;
- `dummy_decay`: per dummy head ``||KQ_h||_F`` and ``|mu_h|`` at the end relative to their
  maxima, settled toward 0 (a head still decaying reads as such, not as settled);
- `pooled_spread`: the pooled within-group SD of a value (the seed spread between members of
  the same H);
- `scales_per_heads`: the members' scales and mean |group sums| averaged per H, each with its
  error (settled errors plus seed SEs), and `relative_to_reference`, each H's mean relative to
  the first H's with the propagated error;
- `dummy_example`: the member drawn in Figure 14 (the lowest-loss paired member of one H with
  a dummy head) and its history.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from icl_verify.numerics._core.ensemble import TrainedEnsemble
from icl_verify.numerics._he2025.settling import logged_steps, settled_mean, settled_value

from icl_verify.heads import DUMMY, head_types

__all__ = [
    "DummyDecay",
    "DummyExample",
    "MemberScales",
    "ScalesPerHeads",
    "dummy_decay",
    "dummy_example",
    "member_scales",
    "pooled_spread",
    "relative_to_reference",
    "scales_per_heads",
]

#: The quantities of `MemberScales` (each with a settled value and error).
SCALE_QUANTITIES = ("omega", "sum_plus", "sum_minus", "eta_plus", "eta_minus")


@dataclass(frozen=True)
class MemberScales:
    """Per read member (arrays of shape (m,)).

    Attributes:
        value, error: quantity -> last-quarter mean and its error (`settled_mean`):
            ``omega`` = sum |omega_h mu_h| / sum |mu_h| over non-dummy heads; ``sum_plus``,
            ``sum_minus`` = OV sums of the positive and negative heads (final signs);
            ``eta_plus``, ``eta_minus`` = 2 sum |omega_h mu_h| over each group (= 2 omega
            |sum mu| on S_omega).
        heads: each member's H.
    """

    value: dict[str, np.ndarray]
    error: dict[str, np.ndarray]
    heads: np.ndarray


def member_scales(ensemble: TrainedEnsemble, members: Sequence[int]) -> MemberScales:
    """The weighted common scale, group sums and group steps of ``members`` (see `MemberScales`).

    Heads are grouped by their final type; each quantity's logged series (every log, same
    grouping) is read with `settled_mean`.

    >>> from types import SimpleNamespace
    >>> omega = np.broadcast_to([[[0.2, -0.2, 0.001]]], (40, 1, 3))  # (n, E=1, H=3): pair + dummy
    >>> mu = np.broadcast_to([[[2.0, -2.0, 0.01]]], (40, 1, 3))
    >>> scales = member_scales(SimpleNamespace(heads=np.array([3]), omega=omega, mu=mu), [0])
    >>> scales.value["omega"].round(3), scales.value["eta_minus"].round(3), scales.error["omega"]
    (array([0.2]), array([0.8]), array([0.]))
    """
    value = {key: [] for key in SCALE_QUANTITIES}
    error = {key: [] for key in SCALE_QUANTITIES}
    for e in members:
        H = ensemble.heads[e]
        omega, mu = ensemble.omega[:, e, :H], ensemble.mu[:, e, :H]  # (n, H)
        types = head_types(omega[-1], mu[-1])
        live, positive, negative = types != DUMMY, types > 0, types < 0
        share = np.abs(omega * mu)  # (n, H): each head's |omega_h mu_h|
        series = {
            "omega": share[:, live].sum(axis=1) / np.abs(mu[:, live]).sum(axis=1),
            "sum_plus": mu[:, positive].sum(axis=1),
            "sum_minus": mu[:, negative].sum(axis=1),
            "eta_plus": 2 * share[:, positive].sum(axis=1),
            "eta_minus": 2 * share[:, negative].sum(axis=1),
        }
        for key in SCALE_QUANTITIES:
            settled, bound = settled_mean(series[key])
            value[key].append(settled)
            error[key].append(bound)
    return MemberScales(
        value={k: np.array(v) for k, v in value.items()},
        error={k: np.array(v) for k, v in error.items()},
        heads=np.asarray(ensemble.heads)[list(members)].astype(int),
    )


@dataclass(frozen=True)
class DummyDecay:
    """The dummy heads of the read members, n in all (arrays of shape (n,)).

    Attributes:
        member, head: where each dummy head sits.
        kq, kq_error: ``||KQ_h||_F`` at the end / its maximum over the logs, settled toward 0.
        mu, mu_error: ``|mu_h|`` at the end / its maximum over the logs, settled toward 0.
        kq_peak_step: the logged step of the KQ norm's maximum.
    """

    member: np.ndarray
    head: np.ndarray
    kq: np.ndarray
    kq_error: np.ndarray
    mu: np.ndarray
    mu_error: np.ndarray
    kq_peak_step: np.ndarray


def dummy_decay(ensemble: TrainedEnsemble, members: Sequence[int]) -> DummyDecay:
    """How far each dummy head (final type) of ``members`` has decayed (see `DummyDecay`).

    The relative series ``||KQ_h||_F(t) / max_t ||KQ_h||_F`` and ``|mu_h(t)| / max_t |mu_h|``
    are read with `settled_value` toward 0: a head still falling gets the error
    ``|value - 0|`` (it may yet reach 0), a settled one its drift plus Adam noise.

    >>> from types import SimpleNamespace
    >>> n = 40
    >>> omega = np.tile([0.2, -0.2, 0.0], (n, 1))[:, None]  # (n, E=1, H=3)
    >>> mu = np.tile([2.0, -2.0, 0.0], (n, 1))[:, None].copy()
    >>> mu[:, 0, 2] = np.r_[np.linspace(0.1, 0.01, n // 2), np.full(n // 2, 0.01)]  # settles
    >>> KQ = np.zeros((n, 1, 3, 2, 2)); KQ[:, 0, 2] = np.linspace(1, 0.3, n)[:, None, None]
    >>> ens = SimpleNamespace(heads=np.array([3]), omega=omega, mu=mu, KQ_history=KQ,
    ...     steps=np.arange(1, n + 1))
    >>> decay = dummy_decay(ens, [0])
    >>> decay.head.tolist(), decay.kq.round(2).tolist(), decay.kq_error.round(2).tolist()
    ([2], [0.3], [0.3])
    >>> decay.mu.round(2).tolist(), decay.mu_error.tolist()  # settled at 10% of its maximum
    ([0.1], [0.0])
    """
    member, head, kq, kq_error, mu_ratio, mu_error, peak = [], [], [], [], [], [], []
    for e in members:
        H = ensemble.heads[e]
        omega, mu = ensemble.omega[:, e, :H], ensemble.mu[:, e, :H]  # (n, H)
        norms = np.linalg.norm(ensemble.KQ_history[:, e, :H], axis=(-2, -1))  # (n, H)
        for h in np.flatnonzero(head_types(omega[-1], mu[-1]) == DUMMY):
            kq_value, kq_bound = settled_value(norms[:, h] / norms[:, h].max(), toward=0.0)
            mu_value, mu_bound = settled_value(np.abs(mu[:, h]) / np.abs(mu[:, h]).max(), 0.0)
            member.append(e)
            head.append(h)
            kq.append(kq_value)
            kq_error.append(kq_bound)
            mu_ratio.append(mu_value)
            mu_error.append(mu_bound)
            peak.append(float(ensemble.steps[np.argmax(norms[:, h])]))
    return DummyDecay(
        member=np.array(member, dtype=int),
        head=np.array(head, dtype=int),
        kq=np.array(kq),
        kq_error=np.array(kq_error),
        mu=np.array(mu_ratio),
        mu_error=np.array(mu_error),
        kq_peak_step=np.array(peak),
    )


def pooled_spread(values: np.ndarray, groups: np.ndarray) -> tuple[float, int]:
    """Pooled within-group SD of ``values`` and its degrees of freedom (NaN, 0 with none).

    ``sqrt(sum_g sum_i (x_gi - mean_g)^2 / sum_g (n_g - 1))``: the seed spread of members
    sharing a group (their H), with groups of one member adding nothing.

    >>> pooled_spread(np.array([1.0, 3.0, 10.0, 12.0, 7.0]), np.array([2, 2, 4, 4, 8]))
    (1.4142135623730951, 2)
    >>> pooled_spread(np.array([1.0, 3.0]), np.array([2, 4]))
    (nan, 0)
    """
    values, groups = np.asarray(values, dtype=float), np.asarray(groups)
    squares, dof = 0.0, 0
    for g in np.unique(groups):
        x = values[groups == g]  # (n_g,)
        squares += float(np.sum((x - x.mean()) ** 2))
        dof += x.size - 1
    return (float(np.sqrt(squares / dof)) if dof else float("nan")), dof


# ---------------------------------------------------------------------------------------------
# the members compared per H


@dataclass(frozen=True)
class ScalesPerHeads:
    """The read members' scales and group sums averaged per H (k numbers of heads, m members).

    Attributes:
        heads: (k,) the H with a read member, ascending (the first is the reference H).
        omega, omega_error: (k,) per H the mean of its members' weighted scales
            (`MemberScales`) and its error (see `scales_per_heads`).
        sums, sums_error: (k,) the same for the mean |group sum| ``(sum_+ mu - sum_- mu) / 2``.
        member_sums: (m,) each member's mean |group sum|.
        seed_dof: degrees of freedom of the pooled seed spread (`pooled_spread`).
    """

    heads: np.ndarray
    omega: np.ndarray
    omega_error: np.ndarray
    sums: np.ndarray
    sums_error: np.ndarray
    member_sums: np.ndarray
    seed_dof: int


def _mean_per_group(value, error, groups, compared, spread, seed_z) -> tuple[np.ndarray, ...]:
    """Per group in ``compared``: the mean of ``value`` and the mean ``error`` plus ``seed_z``
    seed SEs ``spread / sqrt(n_g)`` (none where ``spread`` is NaN)."""
    means, errors = [], []
    sd = 0.0 if np.isnan(spread) else spread  # the seed SD pooled over the groups
    for g in compared:
        at = groups == g
        means.append(value[at].mean())
        errors.append(error[at].mean() + seed_z * sd / np.sqrt(at.sum()))
    return np.array(means), np.array(errors)


def scales_per_heads(scales: MemberScales, seed_z: float) -> ScalesPerHeads:
    """Per H of the read members: the mean weighted scale and mean |group sum| with errors.

    The error of a per-H mean is the mean of its members' `settled_mean` errors (drift plus
    batch-means SE) plus ``seed_z`` seed standard errors ``s / sqrt(n_H)``, s the seed spread
    pooled over every H with two or more members (`pooled_spread`; where no H has two, none).
    A member's mean |group sum| is ``(sum_+ mu - sum_- mu) / 2`` with error the mean of the two
    sums' errors.

    >>> scales = MemberScales(
    ...     value={"omega": np.array([0.16, 0.18, 0.15]), "sum_plus": np.array([2.6, 2.8, 2.7]),
    ...            "sum_minus": np.array([-2.6, -2.6, -2.7])},
    ...     error={"omega": np.array([0.01, 0.01, 0.02]), "sum_plus": np.array([0.1, 0.1, 0.1]),
    ...            "sum_minus": np.array([0.1, 0.1, 0.1])},
    ...     heads=np.array([2, 2, 4]))
    >>> per = scales_per_heads(scales, seed_z=2.0)
    >>> per.heads.tolist(), per.omega.round(3).tolist(), per.sums.round(3).tolist()
    ([2, 4], [0.17, 0.15], [2.65, 2.7])
    >>> per.omega_error.round(4).tolist(), per.seed_dof  # 0.01 + 2 * 0.01414 / sqrt(2)
    ([0.03, 0.0483], 1)
    """
    value, error = scales.value, scales.error
    sums = (value["sum_plus"] - value["sum_minus"]) / 2  # (m,): mean |group sum|
    sums_error = (error["sum_plus"] + error["sum_minus"]) / 2
    compared = np.array(sorted(set(scales.heads.tolist())), dtype=int)
    omega_spread, dof = pooled_spread(value["omega"], scales.heads)
    sums_spread, _ = pooled_spread(sums, scales.heads)
    omega, omega_error = _mean_per_group(
        value["omega"], error["omega"], scales.heads, compared, omega_spread, seed_z
    )
    sums_mean, sums_mean_error = _mean_per_group(
        sums, sums_error, scales.heads, compared, sums_spread, seed_z
    )
    return ScalesPerHeads(
        heads=compared,
        omega=omega,
        omega_error=omega_error,
        sums=sums_mean,
        sums_error=sums_mean_error,
        member_sums=sums,
        seed_dof=dof,
    )


def relative_to_reference(
    means: np.ndarray, errors: np.ndarray
) -> tuple[np.ndarray | float, np.ndarray | float]:
    """``means[1:] / means[0] - 1`` and its propagated error bound; ``(0, inf)`` for one mean.

    The bound of a ratio r = a / b of values known to within e_a, e_b (to first order):
    ``(e_a + |r| e_b) / |b|``. With a single mean there is nothing to compare: error infinite.

    >>> relative, error = relative_to_reference(np.array([2.0, 2.2]), np.array([0.02, 0.04]))
    >>> relative.round(6).tolist(), error.round(6).tolist()  # (0.04 + 1.1 * 0.02) / 2
    ([0.1], [0.031])
    >>> relative_to_reference(np.array([2.0]), np.array([0.02]))
    (0.0, inf)
    """
    if means.size < 2:
        return 0.0, math.inf
    ratio = means[1:] / means[0]
    error = (errors[1:] + np.abs(ratio) * errors[0]) / abs(means[0])
    return ratio - 1.0, error


# ---------------------------------------------------------------------------------------------
# Figure 14: a member with a dummy head


@dataclass(frozen=True)
class DummyExample:
    """One member of H heads and its history (n logs, S snapshots, D = d + 1).

    Attributes:
        member: its index in the ensemble.
        has_dummy: whether it has a dummy head (else it is only the lowest-loss member of H).
        snapshot_steps: (S,) the snapshots' logged steps (float).
        snapshot_KQ, snapshot_OV: (S, H, D, D) its circuits at the snapshots.
        omega, mu: (n, H) its heads' omega_h(t), mu_h(t).
        kq_norm: (n, H) ``||KQ_h(t)||_F``.
    """

    member: int
    has_dummy: bool
    snapshot_steps: np.ndarray
    snapshot_KQ: np.ndarray
    snapshot_OV: np.ndarray
    omega: np.ndarray
    mu: np.ndarray
    kq_norm: np.ndarray


def dummy_example(
    ensemble: TrainedEnsemble, heads: int, paired: np.ndarray, snapshots: int
) -> DummyExample:
    """The lowest-final-validation-loss paired member with ``heads`` heads and a dummy head
    (`dummy_decay`), else the lowest-loss member with ``heads`` heads, and its history, with
    its circuits at ``snapshots`` logs geometrically spaced up to the end (`logged_steps`).

    Args:
        ensemble: the trained ensemble (E members).
        heads: the H drawn (trained).
        paired: (E,) whether each member is paired (`numerics.member_kinds`).
        snapshots: how many snapshots (fewer where two share a log).

    >>> from types import SimpleNamespace
    >>> n = 40
    >>> omega = np.tile([0.2, -0.2, 0.001], (n, 2, 1))  # (n, E=2, H=3): member 1 has a dummy
    >>> mu = np.tile([2.0, -2.0, 0.01], (n, 2, 1))
    >>> omega[:, 0, 2], mu[:, 0, 2] = 0.2, 2.0  # member 0: three live heads, the lower loss
    >>> KQ = np.ones((n, 2, 3, 2, 2))
    >>> ens = SimpleNamespace(heads=np.array([3, 3]), omega=omega, mu=mu, KQ_history=KQ,
    ...     OV_history=KQ, steps=np.arange(n) * 10, test_loss=np.array([[0.2, 0.3]]))
    >>> example = dummy_example(ens, 3, np.array([True, True]), snapshots=3)
    >>> example.member, example.has_dummy, example.snapshot_steps.tolist()
    (1, True, [10.0, 60.0, 390.0])
    >>> example.snapshot_KQ.shape, example.kq_norm[-1].tolist()
    ((3, 3, 2, 2), [2.0, 2.0, 2.0])
    """
    of_heads = np.asarray(ensemble.heads) == heads
    with_dummy = np.unique(dummy_decay(ensemble, np.flatnonzero(of_heads & paired)).member)
    pool = with_dummy if with_dummy.size else np.flatnonzero(of_heads)
    member = int(pool[np.argmin(ensemble.test_loss[-1, pool])])
    steps = ensemble.steps
    shown = logged_steps(steps, steps[-1], snapshots)
    KQ = ensemble.KQ_history[:, member, :heads]  # (n, H, D, D)
    return DummyExample(
        member=member,
        has_dummy=bool(with_dummy.size > 0),
        snapshot_steps=steps[shown].astype(float),
        snapshot_KQ=KQ[shown],  # (S, H, D, D)
        snapshot_OV=ensemble.OV_history[shown][:, member, :heads],
        omega=ensemble.omega[:, member, :heads],  # (n, H)
        mu=ensemble.mu[:, member, :heads],
        kq_norm=np.linalg.norm(KQ, axis=(-2, -1)),  # (n, H)
    )
