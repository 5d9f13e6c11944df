"""Figure data of He et al. (2025) §4.3 (`figures.risks`): the exact one-step GD risks against
the step (HE-4.3-RISK, eq. (4.11)) and the Bayes comparison in the proportional limit against
xi = d/L (HE-T4.2iii, Theorem 4.2(iii)), one curve per case k, stored in results.json under
the keys ``{curve}_{k}`` (``gd_0``, ``ratio_bound_1``, ...).

>>> curves = StepCurves(np.linspace(0.0, 1.6, 3), np.zeros((2, 3)), np.ones((2, 3)))
>>> list(curves.to_record())
['eta_fine', 'gd_0', 'dgd_0', 'gd_1', 'dgd_1']
>>> StepCurves.from_record(curves.to_record(), cases=2).dgd.shape
(2, 3)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
from icl_verify.figures.data import FlatRecord, fields_record, floats, read_fields


@dataclass(frozen=True)
class StepCurves:
    """HE-4.3-RISK's prediction side: the exact risks R_GD and R_dGD of eq. (4.11) on a fine
    grid of steps, one row per (d, L) case."""

    eta_fine: np.ndarray  # (F,) steps
    gd: np.ndarray  # (cases, F)
    dgd: np.ndarray  # (cases, F)

    def to_record(self) -> dict:
        record = {"eta_fine": self.eta_fine}
        for k, (gd, dgd) in enumerate(zip(self.gd, self.dgd, strict=True)):
            record |= {f"gd_{k}": gd, f"dgd_{k}": dgd}
        return record

    @classmethod
    def from_record(cls, data: Mapping, cases: int) -> StepCurves:
        def rows(name):
            return np.stack([floats(data[f"{name}_{k}"]) for k in range(cases)])

        return cls(floats(data["eta_fine"]), rows("gd"), rows("dgd"))


@dataclass(frozen=True)
class RecordedSteps(FlatRecord):
    """HE-4.3-RISK's measurement side: the step of every Monte Carlo point, case-major."""

    steps: np.ndarray  # (cases * steps per case,)



@dataclass(frozen=True)
class XiCurves:
    """One case's limits over the xi grid (Theorem 4.2(iii)): Bayes and tuned-GD risks, their
    ratio with its bound, and the excess-risk ratio, (F,) each."""

    bayes: np.ndarray
    gd: np.ndarray
    ratio: np.ndarray
    ratio_bound: np.ndarray
    excess_ratio: np.ndarray


@dataclass(frozen=True)
class ProportionalCurves:
    """HE-T4.2iii's prediction side: the xi grid, each case's excess-ratio bound and its
    `XiCurves`."""

    xi_fine: np.ndarray  # (F,)
    excess_ratio_bound: np.ndarray  # (cases,)
    cases: tuple[XiCurves, ...]

    def to_record(self) -> dict:
        record = {"xi_fine": self.xi_fine, "excess_ratio_bound": self.excess_ratio_bound}
        for k, curves in enumerate(self.cases):
            record |= fields_record(curves, "", f"_{k}")
        return record

    @classmethod
    def from_record(cls, data: Mapping) -> ProportionalCurves:
        bound = floats(data["excess_ratio_bound"])
        cases = tuple(read_fields(XiCurves, data, "", f"_{k}") for k in range(bound.size))
        return cls(floats(data["xi_fine"]), bound, cases)


@dataclass(frozen=True)
class LimitRisks(FlatRecord):
    """HE-T4.2iii's measurement side: the per-d Monte Carlo Bayes and tuned-GD risks behind the
    extrapolation to d -> infinity."""

    raw: np.ndarray  # (cases, 2, len(d_values))

