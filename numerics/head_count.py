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
  the same H).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from icl_verify.numerics.ensemble import TrainedEnsemble
from icl_verify.numerics.patterns import settled_mean, settled_value

from icl_verify.heads import DUMMY, head_types

__all__ = ["DummyDecay", "MemberScales", "dummy_decay", "member_scales", "pooled_spread"]

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
