"""Figure data of Chen, Zhao, Zou (2024) Figure 2c (`figures.pre_gd`, CZZ-PREGD): gd and pre-gd
paths per noise level σ at their tuned rates, and the early-stopped gaps, as stored in
results.json (keys ``steps``, ``gd_mean``, ``pre_gd_rate``, ..., ``best_gap``).

>>> path = TunedPaths(*(np.zeros((1, 2)),) * 9)
>>> data = PreGdData(np.array([0.0, 9.0]), path, path, np.zeros(1), np.zeros(1))
>>> [key for key in data.to_record() if key.startswith("pre_gd_")][:3]
['pre_gd_rate', 'pre_gd_mean', 'pre_gd_se']
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
from icl_verify.figures.data import RiskScale as RiskScale  # the prediction side
from icl_verify.figures.data import fields_record, floats, read_fields


@dataclass(frozen=True)
class TunedPaths:
    """One method's GD path per σ (`numerics.TunedPath`, stacked over σ)."""

    rate: np.ndarray  # (σ,) the rate chosen at the final step on tuning prompts
    mean: np.ndarray  # (σ, T) held-out excess risk per recorded step
    se: np.ndarray  # (σ, T)
    final_means: np.ndarray  # (σ, rates) tuning prompts' mean final risk per rate
    min_step: np.ndarray  # (σ,) the step of the lowest mean
    best_rate: np.ndarray  # (σ,) early stopping: (rate, step) chosen jointly
    best_step: np.ndarray  # (σ,)
    best_mean: np.ndarray  # (σ,)
    best_se: np.ndarray  # (σ,)


#: The two methods, as stored: GD on raw x, and on preprocessed R-hat x.
METHODS = ("gd", "pre_gd")


@dataclass(frozen=True)
class PreGdData:
    """CZZ-PREGD's measurement: the recorded steps, each method's paths, the early-stopped
    paired gaps risk(gd) − risk(pre-gd) per σ."""

    steps: np.ndarray  # (T,)
    gd: TunedPaths
    pre_gd: TunedPaths
    best_gap: np.ndarray  # (σ,)
    best_gap_se: np.ndarray  # (σ,)

    def paths(self) -> tuple[TunedPaths, TunedPaths]:
        """gd's and pre-gd's, in the order of `METHODS`."""
        return self.gd, self.pre_gd

    def to_record(self) -> dict:
        record = {"steps": self.steps}
        for method, paths in zip(METHODS, self.paths(), strict=True):
            record |= fields_record(paths, f"{method}_")
        return record | {"best_gap": self.best_gap, "best_gap_se": self.best_gap_se}

    @classmethod
    def from_record(cls, data: Mapping) -> PreGdData:
        gd, pre_gd = (read_fields(TunedPaths, data, f"{method}_") for method in METHODS)
        return cls(floats(data["steps"]), gd, pre_gd, floats(data["best_gap"]),
                   floats(data["best_gap_se"]))  # fmt: skip
