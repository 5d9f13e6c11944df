"""Figure data of He et al. (2025) Figure 8 (`figures.linear_attention.figure_length`,
HE-5.1-LENGTH): linear attention's exact frozen-step risk and debiased GD at η* against the test
length L' (prediction), and the measured test MSE of the linear members, the softmax models,
the debiased-GD baselines and Bayes (measurement), under the keys results.json has always held
(``frozen``, ``linear_members``, ``H2_mean``, ``dGDfit_se``, ...).

>>> curves = np.ones((len(CURVES), 2))
>>> data = LengthData(LengthModels(*(np.zeros(2),) * 4, 45.0, *(np.zeros(2),) * 4), curves,
...                   curves)
>>> record = data.to_record()
>>> record["H2_mean"].tolist(), LengthData.from_record(record).curve("Bayes")[1].tolist()
([1.0, 1.0], [1.0, 1.0])
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
from icl_verify.figures.data import FlatRecord, floats

#: The curves measured at every L' beside linear attention's
#: (`numerics.linear_vs_softmax_by_test_length`): the softmax models with one and two heads
#: (means over their seeds), debiased GD at η* and at the two-head seeds' fitted step, Bayes.
CURVES = ("H1", "H2", "dGD", "dGDfit", "Bayes")


@dataclass(frozen=True)
class LengthTheory(FlatRecord):
    """HE-5.1-LENGTH's prediction side: over the test lengths, the frozen-step risk R_lin(L')
    and debiased GD's risk at η* (exact); R_lin's argmin and best integer length, the grid's
    best length and its longest; how far step_atol moves R_lin per L'."""

    lengths: np.ndarray  # (n,)
    frozen: np.ndarray  # (n,)
    dgd: np.ndarray  # (n,)
    argmin: float
    best_length: float
    grid_best: float
    longest: float
    allowance: np.ndarray  # (n,)


@dataclass(frozen=True)
class LengthModels(FlatRecord):
    """The linear members' test MSE (each, and their mean ± SE over seeds), its argmin on the
    grid, the two-head seeds' fitted steps (drawn), and which softmax members were read."""

    lengths: np.ndarray  # (n,)
    linear_mean: np.ndarray  # (n,)
    linear_se: np.ndarray  # (n,)
    linear_members: np.ndarray  # (E, n)
    measured_argmin: float
    fitted_steps: np.ndarray  # (two-head seeds,)
    fitted_steps_se: np.ndarray
    one_head_members: np.ndarray  # member indices of the one-head seeds
    two_head_members: np.ndarray  # member indices of the (paired) two-head seeds


@dataclass(frozen=True)
class LengthData:
    """HE-5.1-LENGTH's measurement: the linear members and the `CURVES` (mean and SE per L').
    Each curve stored as ``{name}_mean`` and ``{name}_se``."""

    models: LengthModels
    curve_mean: np.ndarray  # (len(CURVES), n)
    curve_se: np.ndarray  # (len(CURVES), n)

    def curve(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        """The mean and SE of the curve ``name`` (one of `CURVES`), (n,) each."""
        k = CURVES.index(name)
        return self.curve_mean[k], self.curve_se[k]

    def to_record(self) -> dict:
        record = self.models.to_record()
        for name, mean, se in zip(CURVES, self.curve_mean, self.curve_se, strict=True):
            record |= {f"{name}_mean": mean, f"{name}_se": se}
        return record

    @classmethod
    def from_record(cls, data: Mapping) -> LengthData:
        return cls(LengthModels.from_record(data),
                   np.stack([floats(data[f"{name}_mean"]) for name in CURVES]),
                   np.stack([floats(data[f"{name}_se"]) for name in CURVES]))  # fmt: skip
