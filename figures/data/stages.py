"""Figure data of He et al. (2025) Stage I and II from random starts (`figures.dynamics`
`figure_stage_one`, `figure_stage_two`; HE-S1, HE-S2): the gradient-flow runs per number of
heads H (measurement, stored in results.json under ``H{H}_{field}``) and each claim's theory
lines (prediction).

>>> runs = HeadRuns(np.zeros((2, 3)), *(np.zeros(2),) * 7)
>>> sorted(RandomStarts(np.arange(3.0), {2: runs}).to_record())[:3]
['H2_dispersion', 'H2_homogeneous', 'H2_loss_gap']
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from icl_verify.figures.data import fields_record, floats, read_fields


@dataclass(frozen=True)
class HeadRuns:
    """The S random starts with H heads: mu^T omega along the flow, the end state's zero-sum
    ratio, KQ dispersion and loss gap to S_omega, and when each pattern first holds to t_end
    (inf: never)."""

    p: np.ndarray  # (S, T) mu^T omega at the saved times
    zero_sum: np.ndarray  # (S,)
    dispersion: np.ndarray  # (S,)
    loss_gap: np.ndarray  # (S,)
    stage_one: np.ndarray  # (S,) sign-matched and zero-sum from then on
    homogeneous: np.ndarray  # (S,)
    sign_time: np.ndarray  # (S,)
    zero_sum_time: np.ndarray  # (S,)


@dataclass(frozen=True)
class RandomStarts:
    """HE-S1's and HE-S2's measurement: the saved flow times and the runs per H."""

    t: np.ndarray  # (T,)
    runs: Mapping[int, HeadRuns]  # H -> its runs

    def to_record(self) -> dict:
        record = {"t": self.t}
        for H, runs in self.runs.items():
            record |= fields_record(runs, f"H{H}_")
        return record

    @classmethod
    def from_record(cls, data: Mapping, heads: Sequence[int]) -> RandomStarts:
        return cls(floats(data["t"]), {H: read_fields(HeadRuns, data, f"H{H}_") for H in heads})


@dataclass(frozen=True)
class StageOneTheory:
    """HE-S1's prediction side: the limit 1/(1+kappa) of (4.3), the judged window's times and
    the band 2 x valley-floor deficit there, and the end of Stage I."""

    limit: float
    window_t: np.ndarray  # (W,)
    band: np.ndarray  # (W,)
    stage_one_start: float

    def to_record(self) -> dict:
        return fields_record(self, "")

    @classmethod
    def from_record(cls, data: Mapping) -> StageOneTheory:
        return read_fields(cls, data, "")


@dataclass(frozen=True)
class StageTwoTheory:
    """HE-S2's prediction side: the loss of the same-sign single-head optimum (every head at
    omega = 1/sqrt(d)) and the infimum of Ltilde on S_omega."""

    trap_loss: float
    manifold_floor: float

    def to_record(self) -> dict:
        return fields_record(self, "")

    @classmethod
    def from_record(cls, data: Mapping) -> StageTwoTheory:
        return read_fields(cls, data, "")
