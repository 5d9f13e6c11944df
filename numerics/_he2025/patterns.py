"""The head patterns of He et al. (2025) §3 read off a trained ensemble's logged history.

Observations 1 and 2 describe trained heads: the circuit pattern (3.1) of each head and the
opposite-head pattern (4.4)-(4.7) of a member. A trained model is read at the end of its
training, its error bar from the logged history (`numerics._he2025.settling`); how the heads
get there (Observation 4) is `numerics._he2025.trajectories`.

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
- `kernel_reading` (Obs. 1, (4.12)): how far a trained single head's predictions are from the
  Nadaraya-Watson regressor at its own (omega, mu), and both test errors, on shared prompts.

Dummy, positive and negative heads are those of `icl_verify.heads.head_types`.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from icl_verify.numerics._core.ensemble import TrainedEnsemble, member_kinds
from icl_verify.numerics._he2025.settling import logging_noise, settled_value

from icl_verify.heads import DUMMY, head_types
from icl_verify.statistics import proportion, replicate_spread

__all__ = [
    "CIRCUIT_MEASURES",
    "GROUP_QUANTITIES",
    "GroupPatterns",
    "HeadPatterns",
    "FractionsByH",
    "PatternGrid",
    "KernelReading",
    "group_patterns",
    "head_patterns",
    "kernel_reading",
    "fractions_by_h",
    "pattern_grid",
]

#: The per-head measures of `numerics.CircuitSummary` that `head_patterns` reads.
CIRCUIT_MEASURES = ("diagonality", "diagonal_spread", "kq_off_pattern", "ov_off_pattern")
#: The RMS-type measures that Adam's stationary noise alone lifts above zero.
_NOISE_FLOORED = ("diagonal_spread", "kq_off_pattern")


def _live(omega: np.ndarray, mu: np.ndarray) -> np.ndarray:
    """Non-dummy heads as a boolean mask, (..., H) -> (..., H)."""
    return head_types(omega, mu) != DUMMY


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
# Observation 1 and (4.12): a single head as the kernel regressor


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
