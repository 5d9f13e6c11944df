"""How the trained heads of He et al. (2025) §3 get to their pattern (Observation 4), read off a
trained ensemble's logged history (`numerics.TrainedEnsemble`):

- `pattern_dynamics`: whether |omega_h| rises then falls, the largest drops of |mu_h| and of the
  group sums after the opposite-head pattern forms, how long it persists, and when it formed
  against when |omega| peaked;
- `seed_spread`: how far members of the same H end apart, against the valley's drift.

Dummy, positive and negative heads are those of `icl_verify.heads.head_types`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from icl_verify.numerics._core.ensemble import TrainedEnsemble
from icl_verify.numerics._he2025.patterns import _live
from icl_verify.numerics._he2025.settling import logging_noise

__all__ = ["PatternDynamics", "SEED_QUANTITIES", "SeedSpread", "pattern_dynamics", "seed_spread"]


def _rise_and_fall(series: np.ndarray, margin: float) -> tuple[float, float]:
    """(1, 0) when |omega|(t) peaks inside the run above both ends by ``margin`` x
    `logging_noise`; (0, 1) when the logs cannot tell (undecided, error 1): the peak lies in
    the last quarter (it may still be rising), or within a log of the first log with no rise
    logged before it (a rise, if any, came before the logs began: the paper preset logs every
    1000 steps and most heads peak before step 1000); (0, 0) otherwise."""
    x = np.abs(series)
    margin, peak = margin * logging_noise(x), int(np.argmax(x))
    rose = x[peak] - x[0] > margin
    if (peak <= 1 and not rose) or (peak >= x.size - max(1, x.size // 4) and rose):
        return 0.0, 1.0
    rises_and_falls = 0 < peak and x[peak] - x[-1] > margin and rose
    return float(rises_and_falls), 0.0


def _largest_drop(series: np.ndarray, start: int) -> float:
    """Largest fall of the smoothed |mu|(t) below its running maximum from log ``start`` on,
    relative to the final |mu| (moving average over 1/20 of the logs removes the Adam noise)."""
    x = np.abs(series[start:])
    width = max(1, series.size // 20)
    if x.size > width:
        x = np.convolve(x, np.ones(width) / width, mode="valid")
    return float(np.max(np.maximum.accumulate(x) - x) / abs(series[-1]))


def _pattern_held(omega: np.ndarray, mu: np.ndarray) -> np.ndarray:
    """Per log: sign-matched non-dummy heads of both signs. (n, H) -> (n,)."""
    held = np.empty(omega.shape[0], dtype=bool)
    for t in range(omega.shape[0]):
        live = _live(omega[t], mu[t])
        signs = np.sign(omega[t, live])
        held[t] = bool(np.all(signs == np.sign(mu[t, live]))) and (
            (signs > 0).any() and (signs < 0).any()
        )
    return held


@dataclass(frozen=True)
class PatternDynamics:
    """How the read members' heads got to the pattern.

    Attributes:
        rise_and_fall, rise_and_fall_error: per non-dummy head, 1 when |omega_h(t)| peaks
            strictly inside the run above both ends by the noise margin, else 0; error 1 when
            the peak lies in the last quarter (undecided), else 0.
        mu_drop: per non-dummy head, the largest drop of the smoothed |mu_h(t)| below its running
            maximum after the pattern forms, relative to the final |mu_h|.
        group_sum_drop: the same for the OV group sums, per group (positive, negative) and member.
        persistence: per member, the share of logs after the pattern first forms (sign-matched
            non-dummy heads of both signs) on which it holds.
        formed_at: per member, the step at which the pattern first forms.
        peak_at: per member, the step at which the mean |omega_h| of its non-dummy heads peaks
            (the end of the growth phase, Appendix B's Phase II).
        formed_by_peak: per member, 1 when the pattern formed before the peak, 0 when after,
            as far as the logs resolve it (the formation lies between its log and the one
            before, the peak within a log of its own): 1 when it formed at least a log before
            the peak's log, 0 when its previous log is at least a log after it, 0.5 (undecided)
            when they are within a log of each other.
        total_steps: the last logged step (``formed_at / total_steps``: the fraction of training).
    """

    rise_and_fall: np.ndarray
    rise_and_fall_error: np.ndarray
    mu_drop: np.ndarray
    group_sum_drop: np.ndarray
    persistence: np.ndarray
    formed_at: np.ndarray
    peak_at: np.ndarray
    formed_by_peak: np.ndarray
    total_steps: float


def pattern_dynamics(
    ensemble: TrainedEnsemble, members: Sequence[int], noise_margin: float
) -> PatternDynamics:
    """Rise and fall of |omega_h|, drops of |mu_h| and group sums, persistence (see the fields).

    ``noise_margin``: a logged change counts only when it exceeds this many `logging_noise` SDs.
    """
    rise, rise_error, drop, group_drop, persistence, formed, peak, early = ([] for _ in range(8))
    for e in members:
        H = ensemble.heads[e]
        omega, mu = ensemble.omega[:, e, :H], ensemble.mu[:, e, :H]
        live = _live(omega[-1], mu[-1])
        held = _pattern_held(omega, mu)
        first = int(np.argmax(held)) if held.any() else held.size - 1
        for h in np.flatnonzero(live):
            value, error = _rise_and_fall(omega[:, h], noise_margin)
            rise.append(value)
            rise_error.append(error)
            drop.append(_largest_drop(mu[:, h], first))
        for group in (live & (omega[-1] > 0), live & (omega[-1] < 0)):
            group_drop.append(_largest_drop(mu[:, group].sum(axis=1), first))
        persistence.append(held[first:].mean() if held.any() else 0.0)
        top = int(np.argmax(np.abs(omega[:, live]).mean(axis=1)))  # log of the peak
        formed.append(float(ensemble.steps[first]))
        peak.append(float(ensemble.steps[top]))
        early.append(1.0 if first <= top - 1 else 0.0 if first >= top + 2 else 0.5)
    return PatternDynamics(
        rise_and_fall=np.array(rise),
        rise_and_fall_error=np.array(rise_error),
        mu_drop=np.array(drop),
        group_sum_drop=np.array(group_drop),
        persistence=np.array(persistence),
        formed_at=np.array(formed),
        peak_at=np.array(peak),
        formed_by_peak=np.array(early),
        total_steps=float(ensemble.steps[-1]),
    )


#: What `seed_spread` compares across the members of one H: the common KQ scale and the group sums.
SEED_QUANTITIES = ("mean |omega_h|", "sum_+ mu", "-sum_- mu")


@dataclass(frozen=True)
class SeedSpread:
    """How far members of the same H (different init seeds) end apart (Observation 4: "the
    same pattern across initialisations").

    Attributes:
        heads: (K,) the H values with at least two read members.
        spread: (K, 3) per H and `SEED_QUANTITIES`, max - min over its members of the final value.
        allowance: (K, 3) the valley's drift plus noise: the largest drift of a member's series
            over the last quarter of training (mean of the last quarter minus that of the third)
            plus ``noise_margin`` x sqrt(2) x the largest `logging_noise`. Members that start
            their descent along the valley up to a quarter of training apart may differ by it.
    """

    heads: np.ndarray
    spread: np.ndarray
    allowance: np.ndarray


def seed_spread(
    ensemble: TrainedEnsemble, members: Sequence[int], noise_margin: float
) -> SeedSpread:
    """Spread of the final (mean |omega_h|, sum_+ mu, -sum_- mu) across the ``members`` of each H,
    and the drift-plus-noise allowance it is held to (see `SeedSpread`).

    >>> from icl_verify.numerics import EnsembleTraining, train_ensemble
    >>> spec = EnsembleTraining(d=2, L=8, sigma2=0.1, heads=(2, 2), lr=1e-2, steps=48,
    ...     batch=16, seed=0, log_every=4, checkpoint_every=0, validation_batch=64)
    >>> seed_spread(train_ensemble(spec), [0, 1], 4.0).spread.shape
    (1, 3)
    """
    series = {}  # member -> (n, 3)
    for e in members:
        H = ensemble.heads[e]
        omega, mu = ensemble.omega[:, e, :H], ensemble.mu[:, e, :H]
        live = _live(omega[-1], mu[-1])
        positive, negative = live & (omega[-1] > 0), live & (omega[-1] < 0)
        series[e] = np.stack(
            [np.abs(omega[:, live]).mean(axis=1), mu[:, positive].sum(axis=1),
             -mu[:, negative].sum(axis=1)], axis=1)  # fmt: skip
    groups = {}
    for e in members:
        groups.setdefault(int(ensemble.heads[e]), []).append(e)
    heads = np.array(sorted(h for h, group in groups.items() if len(group) >= 2), dtype=int)
    spread, allowance = [], []
    for h in heads:
        x = np.stack([series[e] for e in groups[h]])  # (members, n, 3)
        quarter = max(1, x.shape[1] // 4)
        drift = np.abs(x[:, -quarter:].mean(axis=1) - x[:, -2 * quarter : -quarter].mean(axis=1))
        noise = np.array([[logging_noise(x[m, :, q]) for q in range(3)] for m in range(len(x))])
        spread.append(np.ptp(x[:, -1], axis=0))
        allowance.append(drift.max(axis=0) + noise_margin * np.sqrt(2) * noise.max(axis=0))
    return SeedSpread(heads, np.array(spread).reshape(-1, 3), np.array(allowance).reshape(-1, 3))
