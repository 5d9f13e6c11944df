"""The head patterns of He et al. (2025) §3 read off a trained ensemble's logged history.

Observations 1, 2 and 4 describe trained heads: the circuit pattern (3.1) of each head, the
opposite-head pattern (4.4)-(4.7) of a member, and how omega_h(t), mu_h(t) get there. A trained
model is read at the end of its training, and its error bar comes from the logged history
(`numerics.TrainedEnsemble`: omega, mu and the circuits every ``log_every`` steps):

- `logging_noise`: the Adam noise of a logged series about its trend;
- `settled_value`: an end value with the error of a value that may still drift;
- `head_patterns` (Obs. 1): every circuit measure of `numerics.summarize_circuits`, per
  non-dummy head, settled, with Adam's noise floor on the RMS-type measures and the spread over
  the seeds of its H;
- `group_patterns` (Obs. 2): per member, KQ homogeneity, the zero-sum ratio of the OV weights
  and the group sums ``2 omega sum_{+/-} mu``, settled, with the spread over the seeds of its H;
- `fractions_by_h` (Obs. 2, 4): per H >= 2 the fraction of members with an outcome (reached the
  opposite-head pattern; formed it by the peak of |omega|), with its Agresti-Coull standard
  error;
- `pattern_grid` (Section 3's robustness): the paired counts and `group_patterns` of several
  ensembles, one per optimiser / batch size / learning rate;
- `pattern_dynamics` (Obs. 4): whether |omega_h| rises then falls, the largest drops of |mu_h|
  and of the group sums after the pattern forms, how long the pattern persists, and when it
  formed against when |omega| peaked;
- `seed_spread` (Obs. 4): how far members of the same H end apart, against the valley's drift;
- `logged_steps`: the logs nearest to geometrically spaced steps (the snapshots drawn);
- `kernel_reading` (Obs. 1, (4.12)): how far a trained single head's predictions are from the
  Nadaraya-Watson regressor at its own (omega, mu), and both test errors, on shared prompts.

Dummy, positive and negative heads are those of `icl_verify.heads.head_types`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from icl_verify.numerics._core.ensemble import TrainedEnsemble, member_kinds

from icl_verify.heads import DUMMY, head_types
from icl_verify.statistics import batch_means_se, proportion, replicate_spread

__all__ = [
    "CIRCUIT_MEASURES",
    "GROUP_QUANTITIES",
    "GroupPatterns",
    "HeadPatterns",
    "FractionsByH",
    "PatternDynamics",
    "PatternGrid",
    "KernelReading",
    "SEED_QUANTITIES",
    "SeedSpread",
    "group_patterns",
    "head_patterns",
    "kernel_reading",
    "logged_steps",
    "logging_noise",
    "fractions_by_h",
    "pattern_dynamics",
    "pattern_grid",
    "seed_spread",
    "settled_mean",
    "settled_value",
]

#: The per-head measures of `numerics.CircuitSummary` that `head_patterns` reads.
CIRCUIT_MEASURES = ("diagonality", "diagonal_spread", "kq_off_pattern", "ov_off_pattern")
#: The RMS-type measures that Adam's stationary noise alone lifts above zero.
_NOISE_FLOORED = ("diagonal_spread", "kq_off_pattern")


def _live(omega: np.ndarray, mu: np.ndarray) -> np.ndarray:
    """Non-dummy heads as a boolean mask, (..., H) -> (..., H)."""
    return head_types(omega, mu) != DUMMY


# ---------------------------------------------------------------------------------------------
# a logged series: its noise, its settled end value


def logging_noise(series: np.ndarray) -> float:
    """SD of the fluctuation of a logged series about its trend over the last quarter of logs.

    The residual SD of a straight-line fit to the last quarter: it contains the Adam noise,
    including its slow (correlated over many logs) part, but not the trend. series: (n,), n >= 12.

    >>> rng = np.random.default_rng(0)
    >>> x = np.linspace(0, 1, 4000) + 0.01 * rng.normal(size=4000)
    >>> round(logging_noise(x), 3)
    0.01
    """
    x = np.asarray(series, dtype=float)
    last = x[-max(3, x.size // 4) :]
    t = np.arange(last.size)
    residual = last - np.polyval(np.polyfit(t, last, 1), t)
    return float(residual.std(ddof=2))


def settled_value(series: np.ndarray, toward: float | None = None) -> tuple[float, float]:
    """An end-of-training value and its error: ``(x[-1], error)``, from the logged series.

    ``drift = mean(last quarter) - mean(third quarter)``, ``noise = SD(last quarter)``, q logs
    per quarter. The error is ``|drift| + noise``: a settled value is judged to within its Adam
    noise. A value still drifting (``|drift| > 2 noise sqrt(2/q)``, two naive SEs of the
    difference of the quarter means) toward ``toward`` (the claimed limit, a structural
    constant such as 0 or 1) may still reach it: its error is ``|x[-1] - toward|``, so the claim
    reads inconclusive, never contradicted, until the value settles. NaN logs (lost at a
    resume) are skipped.
    series: (n,), n >= 4.

    >>> settled_value(np.r_[np.linspace(1, 0.5, 50), np.full(50, 0.5)], toward=0.0)
    (0.5, 0.0)
    >>> value, error = settled_value(np.linspace(1, 0.5, 100), toward=0.0)  # still falling
    >>> value, error
    (0.5, 0.5)
    >>> round(settled_value(np.linspace(1, 0.5, 100), toward=2.0)[1], 3)  # falling away
    0.163
    """
    x = np.asarray(series, dtype=float)
    quarter = max(1, x.size // 4)
    third, last = x[-2 * quarter : -quarter], x[-quarter:]
    drift = np.nanmean(last) - np.nanmean(third)
    noise = np.nanstd(last)
    value = float(x[-1])
    moving = abs(drift) > 2 * noise * np.sqrt(2 / quarter)
    approaching = toward is not None and moving and drift * (toward - value) > 0
    return value, float(abs(value - toward) if approaching else abs(drift) + noise)


def settled_mean(series: np.ndarray, batches: int = 5) -> tuple[float, float]:
    """Where a training settles: the mean of the last quarter of the logs, and its error.

    The error is ``|drift| + SE``: the drift of `settled_value` (last-quarter mean minus
    third-quarter mean) plus the batch-means standard error of the last-quarter mean (the
    quarter cut into ``batches`` consecutive batches, so correlated Adam noise is not counted
    as independent). Where `settled_value` judges the final snapshot within its Adam noise, this
    judges the value the noise fluctuates around. NaN logs are skipped. series: (n,), n >= 4.

    >>> rng = np.random.default_rng(0)
    >>> value, error = settled_mean(0.86 + 0.01 * rng.standard_normal(400))
    >>> abs(value - 0.86) < error < 0.01
    True
    """
    x = np.asarray(series, dtype=float)
    quarter = max(1, x.size // 4)
    third, last = x[-2 * quarter : -quarter], x[-quarter:]
    drift = np.nanmean(last) - np.nanmean(third)
    return float(np.nanmean(last)), float(abs(drift) + batch_means_se(last, batches))


# ---------------------------------------------------------------------------------------------
# Observation 1: the circuit pattern of each head


@dataclass(frozen=True)
class HeadPatterns:
    """The non-dummy heads of the read members, n in all (arrays of shape (n,)).

    Attributes:
        value, error: measure (`CIRCUIT_MEASURES`) -> settled end value and its error bound.
        sign_product: ``sign(omega_h) sign(mu_h)`` at the end (exact).
        member: the member each head belongs to.
    """

    value: Mapping[str, np.ndarray]
    error: Mapping[str, np.ndarray]
    sign_product: np.ndarray
    member: np.ndarray


def head_patterns(
    ensemble: TrainedEnsemble, members: Sequence[int], toward: Mapping[str, float]
) -> HeadPatterns:
    """The circuit measures of every non-dummy head of ``members``, settled, with errors.

    Each measure (`numerics.summarize_circuits`) is read at the end of training with
    its `settled_value` error toward ``toward[measure]`` (the pattern's value), from the circuits
    logged over the second half of the run. The RMS-type measures (diagonal spread, KQ
    off-pattern) are lifted by Adam's stationary noise even on an exact mean pattern: a head
    whose d diagonal entries fluctuate independently has entry-wise SD sqrt(d) SD(omega_h), so
    that relative floor, sqrt(d) `logging_noise`(omega_h) / |omega_h|, is added to their error.
    The seeds' variation is added in quadrature: the `replicate_spread` of the measure over the
    non-dummy heads of the members sharing the head's H (other seeds, and heads a member holds
    interchangeably), so a verdict does not rest on which heads one seed left settling.
    """
    final = ensemble.summaries()
    logs = range(ensemble.steps.size // 2, ensemble.steps.size)
    history = [ensemble.summaries(log) for log in logs]  # second half, per log
    value = {name: [] for name in CIRCUIT_MEASURES}
    error = {name: [] for name in CIRCUIT_MEASURES}
    sign_product, member = [], []
    for e in members:
        live = ~final[e].dummy
        H = ensemble.heads[e]
        omega = ensemble.omega[:, e, :H]
        # Adam noise floor of a spread/off-pattern RMS: entry-wise fluctuation sqrt(d) SD(omega_h)
        floor = [
            np.sqrt(ensemble.d) * logging_noise(omega[:, h]) / abs(omega[-1, h]) for h in range(H)
        ]
        for name in CIRCUIT_MEASURES:
            series = np.array([getattr(summaries[e], name) for summaries in history])  # (n, H)
            for h in np.flatnonzero(live):
                settled, bound = settled_value(series[:, h], toward=toward[name])
                value[name].append(settled)
                error[name].append(bound + (floor[h] if name in _NOISE_FLOORED else 0.0))
        sign_product.extend(np.sign(final[e].omega[live]) * np.sign(final[e].mu[live]))
        member.extend([e] * int(live.sum()))
    configuration = ensemble.heads[np.array(member, dtype=int)]
    return HeadPatterns(
        value={name: np.array(v) for name, v in value.items()},
        error={
            name: np.hypot(v, replicate_spread(value[name], configuration))
            for name, v in error.items()
        },
        sign_product=np.array(sign_product),
        member=np.array(member, dtype=int),
    )


# ---------------------------------------------------------------------------------------------
# Observation 2: the opposite-head pattern of a member

#: The quantities `group_patterns` reads per member (see `_group_quantities`).
GROUP_QUANTITIES = (
    "homogeneity",
    "zero_sum",
    "eta_plus",
    "eta_minus",
    "omega",
    "sum_plus",
    "sum_minus",
)


def _group_quantities(omega: np.ndarray, mu: np.ndarray, live: np.ndarray) -> dict[str, np.ndarray]:
    """Homogeneity, zero-sum ratio and 2 omega |group sums| along logs; omega, mu (n, H)."""
    abs_omega = np.abs(omega[:, live])
    positive, negative = live & (omega[-1] > 0), live & (omega[-1] < 0)
    scale = abs_omega.mean(axis=1)  # (n,): the common |omega| of the pattern
    return {
        "homogeneity": abs_omega.max(axis=1) / abs_omega.min(axis=1) - 1.0,
        "zero_sum": np.abs(mu.sum(axis=1)) / np.abs(mu).sum(axis=1),
        "eta_plus": 2 * scale * mu[:, positive].sum(axis=1),
        "eta_minus": -2 * scale * mu[:, negative].sum(axis=1),
        "omega": scale,
        "sum_plus": mu[:, positive].sum(axis=1),
        "sum_minus": mu[:, negative].sum(axis=1),
    }


@dataclass(frozen=True)
class GroupPatterns:
    """The read members, m in all (arrays of shape (m,)).

    Attributes:
        value, error: quantity -> settled end value and error (`settled_value`):
            ``homogeneity`` = max/min |omega_h| - 1 over non-dummy heads; ``zero_sum`` =
            |sum_h mu_h| / sum_h |mu_h|; ``omega`` = mean |omega_h| over non-dummy heads (the
            common scale); ``sum_plus``, ``sum_minus`` = OV group sums of the positive and
            negative heads; ``eta_plus``, ``eta_minus`` = 2 omega sum_+ mu and -2 omega sum_- mu.
        dummy_heads: number of dummy heads of each member.
    """

    value: Mapping[str, np.ndarray]
    error: Mapping[str, np.ndarray]
    dummy_heads: np.ndarray


def group_patterns(
    ensemble: TrainedEnsemble, members: Sequence[int], toward: Mapping[str, float]
) -> GroupPatterns:
    """Per member: the `GROUP_QUANTITIES` settled at the end of training, with their errors.

    The heads are grouped by their final signs (non-dummy heads); each quantity's series over
    all logs gives its `settled_value` error, toward ``toward[quantity]`` where given (a
    structural limit such as a zero-sum ratio of 0), with the seeds' variation added in
    quadrature: the `replicate_spread` of the quantity over the members sharing the member's H.
    """
    settled = _settled_groups(ensemble, members, toward)
    return _with_seed_spread(settled, ensemble.heads[np.asarray(members, dtype=int)])


def _settled_groups(
    ensemble: TrainedEnsemble, members: Sequence[int], toward: Mapping[str, float]
) -> GroupPatterns:
    """`group_patterns` before the seeds' variation: each member's own settled errors."""
    value = {key: [] for key in GROUP_QUANTITIES}
    error = {key: [] for key in GROUP_QUANTITIES}
    dummies = []
    for e in members:
        H = ensemble.heads[e]
        omega, mu = ensemble.omega[:, e, :H], ensemble.mu[:, e, :H]
        live = _live(omega[-1], mu[-1])
        dummies.append(int((~live).sum()))
        series = _group_quantities(omega, mu, live)
        for key in GROUP_QUANTITIES:
            settled, bound = settled_value(series[key], toward=toward.get(key))
            value[key].append(settled)
            error[key].append(bound)
    return GroupPatterns(
        value={k: np.array(v) for k, v in value.items()},
        error={k: np.array(v) for k, v in error.items()},
        dummy_heads=np.array(dummies, dtype=int),
    )


def _with_seed_spread(groups: GroupPatterns, configuration: np.ndarray) -> GroupPatterns:
    """``groups`` with each error widened in quadrature by the `replicate_spread` of its
    quantity over the members of the same ``configuration`` (one label per member)."""
    return GroupPatterns(
        value=groups.value,
        error={
            k: np.hypot(v, replicate_spread(groups.value[k], configuration))
            for k, v in groups.error.items()
        },
        dummy_heads=groups.dummy_heads,
    )


@dataclass(frozen=True)
class PatternGrid:
    """Observation 2's pattern read on several ensembles, one per setting of a grid (Section 3's
    robustness: optimiser, batch size, learning rate).

    Attributes:
        members, paired: (P,) members and paired members (opposite heads) per point; the
            rest are trapped (same-sign heads acting as one head, `member_kinds`).
        point: (M,) the grid point of each paired member, in point order.
        value, error: `GROUP_QUANTITIES` -> (M,) each paired member's settled end value and its
            error (`group_patterns`).
    """

    members: np.ndarray
    paired: np.ndarray
    point: np.ndarray
    value: Mapping[str, np.ndarray]
    error: Mapping[str, np.ndarray]


def pattern_grid(ensembles: Sequence[TrainedEnsemble], toward: Mapping[str, float]) -> PatternGrid:
    """`group_patterns` of the paired members of every ensemble, and the paired counts; the
    seeds' variation is the `replicate_spread` over the members of one grid point and H, pooled
    over the grid for a point that paired a single member.

    >>> from icl_verify.numerics import EnsembleTraining, train_ensemble
    >>> spec = EnsembleTraining(d=2, L=8, sigma2=0.1, heads=(2, 2), lr=1e-2, steps=48,
    ...     batch=16, seed=0, log_every=4, checkpoint_every=0, validation_batch=64)
    >>> grid = pattern_grid([train_ensemble(spec)] * 2, {"zero_sum": 0.0})
    >>> grid.members.tolist(), bool(grid.point.size == 2 * grid.paired[0])
    ([2, 2], True)
    """
    members, paired, point, configuration, readings = [], [], [], [], []
    for k, ensemble in enumerate(ensembles):
        chosen = np.flatnonzero(member_kinds(ensemble).paired)
        members.append(ensemble.heads.size)
        paired.append(chosen.size)
        point += [k] * chosen.size
        configuration += [f"{k}:{h}" for h in ensemble.heads[chosen]]
        readings.append(_settled_groups(ensemble, chosen, toward))
    settled = GroupPatterns(
        value={q: np.concatenate([r.value[q] for r in readings]) for q in GROUP_QUANTITIES},
        error={q: np.concatenate([r.error[q] for r in readings]) for q in GROUP_QUANTITIES},
        dummy_heads=np.concatenate([r.dummy_heads for r in readings]),
    )
    grid = _with_seed_spread(settled, np.array(configuration))
    return PatternGrid(
        members=np.array(members),
        paired=np.array(paired),
        point=np.array(point, dtype=int),
        value=grid.value,
        error=grid.error,
    )


@dataclass(frozen=True)
class FractionsByH:
    """Per number of heads H >= 2 of an ensemble, H ascending (arrays of shape (k,)).

    Attributes:
        heads: the H.
        counts: members with H heads (float).
        successes: those of them with the outcome.
        undecided: those whose outcome the data cannot tell (outcome 0.5).
        fraction, fraction_se: ``(successes + undecided / 2) / counts``, the middle of the
            range the undecided leave, and its error: the Agresti-Coull standard error
            (`icl_verify.statistics.proportion`) of the decided ones' share plus half that
            range, ``undecided / (2 counts)``.
    """

    heads: np.ndarray
    counts: np.ndarray
    successes: np.ndarray
    undecided: np.ndarray
    fraction: np.ndarray
    fraction_se: np.ndarray


def fractions_by_h(heads: np.ndarray, outcome: np.ndarray) -> FractionsByH:
    """How many members of each H >= 2 have a yes/no outcome: reached the opposite-head pattern
    (4.7) (Observation 2), formed it by the peak of |omega| (Observation 4).

    Args:
        heads: (E,) each member's H.
        outcome: (E,) the members' outcomes: True / 1, False / 0, or 0.5 where the data cannot
            tell (`PatternDynamics.formed_by_peak`).

    The fraction of each H is a proportion of independent runs (one init seed each), with
    the Agresti-Coull SE ``sqrt(p~ (1 - p~) / (n + 4))``, ``p~ = (k + 2) / (n + 4)``, of the
    yes among the n runs, widened by half the range the undecided runs leave.

    >>> f = fractions_by_h(np.array([1, 2, 2, 2, 2, 4]), np.array([0, 1, 1, 0, 0, 1], bool))
    >>> f.heads.tolist(), f.counts.tolist(), f.successes.tolist(), f.fraction.tolist()
    ([2, 4], [4.0, 1.0], [2, 1], [0.5, 1.0])
    >>> f.fraction_se.round(4).tolist()  # sqrt(0.5 * 0.5 / 8), sqrt(0.6 * 0.4 / 5): not 0 at 1/1
    [0.1768, 0.2191]
    >>> g = fractions_by_h(np.array([2, 2]), np.array([1.0, 0.5]))  # one yes, one undecided
    >>> g.fraction.tolist(), round(float(g.fraction_se[0] - np.sqrt(0.5 * 0.5 / 6)), 4)
    ([0.75], 0.25)
    """
    heads, outcome = np.asarray(heads), np.asarray(outcome, dtype=float)
    if not np.all(np.isin(outcome, (0.0, 0.5, 1.0))):
        raise ValueError(f"outcome must hold 0, 0.5 or 1, got {np.unique(outcome).tolist()}")
    multi = np.unique(heads[heads >= 2])
    rows = [(heads == h, proportion(outcome[heads == h] == 1.0)) for h in multi]
    counts = np.array([mine.sum() for mine, _ in rows], dtype=float)
    undecided = np.array([np.sum(outcome[mine] == 0.5) for mine, _ in rows], dtype=int)
    return FractionsByH(
        heads=multi,
        counts=counts,
        successes=np.array([np.sum(outcome[mine] == 1.0) for mine, _ in rows], dtype=int),
        undecided=undecided,
        fraction=np.array([outcome[mine].mean() for mine, _ in rows], dtype=float),
        fraction_se=np.array([se for _, (_, se) in rows], dtype=float) + undecided / (2 * counts),
    )


# ---------------------------------------------------------------------------------------------
# Observation 4: the trajectories


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


# ---------------------------------------------------------------------------------------------
# the snapshots drawn


def logged_steps(steps: np.ndarray, last: float, count: int) -> np.ndarray:
    """Indices of the logged ``steps`` nearest to ``count`` steps spaced geometrically from the
    first positive logged step to ``last`` (each index once, nearest in log step): the
    snapshots of He et al. Figures 1, 5 and 14.

    Args:
        steps: (n,) logged steps, ascending (`TrainedEnsemble.steps`).
        last: the last step wanted (e.g. the final step, or a tenth of it).
        count: snapshots wanted; fewer come back where two targets share a log.

    >>> logged_steps(np.arange(0, 1001, 10), 1000, 3)
    array([  1,  10, 100])
    """
    positive = steps[steps > 0]
    first = positive.min() if positive.size else 1
    targets = np.geomspace(first, max(last, first), count)
    nearest = np.abs(np.log(np.maximum(steps, 0.5))[:, None] - np.log(targets)).argmin(axis=0)
    return np.unique(nearest)


@dataclass(frozen=True, eq=False)
class KernelReading:
    """Per member (M,): its settled (omega, mu), the error of |omega| (`settled_value` and the
    seeds' variation, the `replicate_spread` of |omega| over the members when there are two or
    more), the RMS of
    (model - Nadaraya-Watson at (omega, mu)) over the RMS of the model's predictions with the
    seeds' spread of it as its error, and the test MSE of both on the same prompts
    (``model_mse``, ``kernel_mse``)."""

    omega: np.ndarray
    omega_error: np.ndarray
    mu: np.ndarray
    relative_gap: np.ndarray
    relative_gap_error: np.ndarray
    model_mse: np.ndarray
    kernel_mse: np.ndarray


def kernel_reading(
    ensemble: TrainedEnsemble, members: Sequence[int], n_prompts: int, seed: int
) -> KernelReading:
    """Single-head members read as the kernel regressor (4.12) they should be: their logged
    (omega, mu) at the end, and their predictions against ``mu sum_i y_i softmax(omega s)_i`` on
    ``n_prompts`` fresh prompts of their training distribution (one set for all members).

    >>> from icl_verify.numerics import EnsembleTraining, train_ensemble
    >>> spec = EnsembleTraining(d=2, L=8, sigma2=0.1, heads=(1, 1), lr=1e-2, steps=48,
    ...     batch=16, seed=0, log_every=4, checkpoint_every=0, validation_batch=64)
    >>> reading = kernel_reading(train_ensemble(spec), [0, 1], n_prompts=256, seed=0)
    >>> reading.relative_gap.shape, bool((reading.relative_gap < 1).all())
    ((2,), True)
    """
    import torch
    from icl_verify.numerics._core.data import embed, sample_linear_regression
    from icl_verify.numerics._core.estimators import kernel_regression_prediction

    from icl_verify.settings import Setting

    members = ensemble.member_indices(members)
    if any(int(ensemble.heads[e]) != 1 for e in members):
        raise ValueError(f"members must have one head, got heads {ensemble.heads[members]}")
    settled = [[settled_value(series[:, e, 0]) for e in members]
               for series in (ensemble.omega, ensemble.mu)]  # fmt: skip
    omega, omega_error = (np.array(v) for v in zip(*settled[0], strict=True))
    mu = np.array([value for value, _ in settled[1]])
    generator = torch.Generator().manual_seed(int(seed))
    setting = Setting(ensemble.d, ensemble.L, ensemble.sigma2)
    prompts = sample_linear_regression(int(n_prompts), setting, generator=generator)
    Z = embed(prompts)  # (n, D, L+1)
    with torch.no_grad():
        model = ensemble.model(members)(Z.expand(len(members), *Z.shape)).double()  # (M, n)
    X, y, xq = (t.double() for t in (prompts.X, prompts.y, prompts.x_query))
    kernel = torch.stack([kernel_regression_prediction(w, m, X, y, xq)
                          for w, m in zip(omega, mu, strict=True)])  # (M, n)  # fmt: skip
    target = prompts.y_query.double()
    gap = ((model - kernel).pow(2).mean(1).sqrt() / model.pow(2).mean(1).sqrt()).numpy()
    # the members are replicates of one configuration (H = 1); with one member (the smoke
    # preset) their spread cannot be read and the bars are the member's own
    seeds = np.ones(len(members))
    spread = {name: replicate_spread(x, seeds) if len(members) > 1 else np.zeros(len(members))
              for name, x in (("omega", np.abs(omega)), ("gap", gap))}  # fmt: skip
    return KernelReading(
        omega=omega, omega_error=np.hypot(omega_error, spread["omega"]),
        mu=mu, relative_gap=gap, relative_gap_error=spread["gap"],
        model_mse=(model - target).pow(2).mean(1).numpy(),
        kernel_mse=(kernel - target).pow(2).mean(1).numpy(),
    )  # fmt: skip
