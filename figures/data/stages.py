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
from icl_verify.figures.data import FlatRecord, fields_record, floats, read_fields


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
class StageOneTheory(FlatRecord):
    """HE-S1's prediction side: the limit 1/(1+kappa) of (4.3), the judged window's times and
    the band 2 x valley-floor deficit there, and the end of Stage I."""

    limit: float
    window_t: np.ndarray  # (W,)
    band: np.ndarray  # (W,)
    stage_one_start: float



@dataclass(frozen=True)
class StageTwoTheory(FlatRecord):
    """HE-S2's prediction side: the loss of the same-sign single-head optimum (every head at
    omega = 1/sqrt(d)) and the infimum of Ltilde on S_omega."""

    trap_loss: float
    manifold_floor: float



@dataclass(frozen=True)
class BoundTheory(FlatRecord):
    """HE-S2-BOUND's prediction side: HE-S2's loss-gap threshold for 'on S_omega'."""

    tolerance: float



@dataclass(frozen=True)
class BoundPoints:
    """HE-S2-BOUND's measurement side: Ltilde (4.1) and its gap to the bound (4.5) at random
    sign-matched points and at points on S_omega; per H the gap at each flow's end and whether
    that run ended on S_omega (HE-S2's runs)."""

    random_loss: np.ndarray  # (P,)
    random_gap: np.ndarray  # (P,)
    manifold_loss: np.ndarray  # (P,)
    manifold_gap: np.ndarray  # (P,)
    end_gap: Mapping[int, np.ndarray]  # H -> (runs,)
    ends_on: Mapping[int, np.ndarray]  # H -> (runs,) bool: ended on S_omega

    def to_record(self) -> dict:
        return {
            "random_loss": self.random_loss, "random_gap": self.random_gap,
            "manifold_loss": self.manifold_loss, "manifold_gap": self.manifold_gap,
            **{f"H{H}_gap": gap for H, gap in self.end_gap.items()},
            **{f"H{H}_on": on.astype(float) for H, on in self.ends_on.items()},
        }  # fmt: skip

    @classmethod
    def from_record(cls, data: Mapping, heads: Sequence[int]) -> BoundPoints:
        return cls(
            *(floats(data[k]) for k in ("random_loss", "random_gap", "manifold_loss",
                                        "manifold_gap")),
            end_gap={H: floats(data[f"H{H}_gap"]) for H in heads},
            ends_on={H: floats(data[f"H{H}_on"]) > 0.5 for H in heads},
        )  # fmt: skip
