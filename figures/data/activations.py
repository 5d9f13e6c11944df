"""Figure data of He et al. (2025) Figures 9-11 and Table 1 (`figures.activations`,
HE-5.2-ACT): per activation the trained two-head members and, where one paired, their test MSE
against L'; the fixed pair models' steps (measurement) and the theory's a_f, kernel-mean steps
and optimal step (prediction). Stored in results.json under ``{field}_{a}`` per activation a.

>>> runs = ActivationRuns(2, *(np.zeros((3, 2, 2)),) * 2, *(np.zeros((2, 3, 3)),) * 2, shown=0)
>>> sorted(runs.to_record(1))[:3]
['KQ_1', 'OV_1', 'mu_history_1']
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
from icl_verify.figures.data import FlatRecord, IndexedRecord, floats


@dataclass(frozen=True)
class ActivationTheory(FlatRecord):
    """HE-5.2-ACT's prediction side: a_f per activation, the kernel-mean step of each fixed
    pair model on an omega grid, the optimal debiased step 1/(1+kappa), and the step allowance
    per L' of the tracking rule."""

    a_f: np.ndarray  # (A,)
    kernel_omegas: np.ndarray  # (n_omega,)
    kernel_step: np.ndarray  # (A, n_omega)
    eta_star: float
    step_shift: np.ndarray  # (n,)



@dataclass(frozen=True)
class ActivationRuns(IndexedRecord):
    """One activation's seeds: how many ended paired, omega_h(t) and mu_h(t) of each, and the
    shown member's (lowest-loss paired one) final KQ and OV circuits."""

    paired_count: int
    omega_history: np.ndarray  # (n, seeds, 2)
    mu_history: np.ndarray  # (n, seeds, 2)
    KQ: np.ndarray  # (2, D, D)
    OV: np.ndarray  # (2, D, D)
    shown: int  # the shown member, among this activation's seeds


@dataclass(frozen=True)
class PairedCurves(IndexedRecord):
    """An activation with a paired member: the paired seeds' mean test MSE against L' with its
    SE over seeds, and debiased GD at their mean fitted step (drawn, not judged)."""

    mse: np.ndarray  # (n,)
    mse_se: np.ndarray  # (n,)
    dgd_fit: np.ndarray  # (n,)

    @classmethod
    def from_record(cls, data: Mapping, a: int) -> PairedCurves | None:
        """The curves of activation a, None when it had no paired member (none stored)."""
        return super().from_record(data, a) if f"mse_{a}" in data else None


@dataclass(frozen=True)
class ActivationData:
    """HE-5.2-ACT's measurement side: the logged steps, per activation its runs and (paired
    only) its curves, the test lengths, debiased GD at the optimal step, the fixed pair models'
    measured steps, and per activation the learned (omega, mu, shown member) and fitted step."""

    log_steps: np.ndarray  # (n_logs,)
    runs: tuple[ActivationRuns, ...]  # per activation
    curves: tuple[PairedCurves | None, ...]  # per activation, None without a paired member
    lengths: np.ndarray  # (n,) test lengths L'
    dgd: np.ndarray  # (n,) debiased GD at 1/(1+kappa), the judged baseline
    kernel_measured: np.ndarray  # (A, n_omega)
    kernel_measured_se: np.ndarray  # (A, n_omega)
    table: np.ndarray  # (A, 3): omega, mu, shown member (NaN without a paired member)
    eta_fit: np.ndarray  # (A,) NaN without a paired member
    eta_fit_error: np.ndarray  # (A,)

    def to_record(self) -> dict:
        record = {"log_steps": self.log_steps}
        for a, (runs, curves) in enumerate(zip(self.runs, self.curves, strict=True)):
            record |= runs.to_record(a) | (curves.to_record(a) if curves else {})
        return record | {
            "lengths": self.lengths, "dgd": self.dgd, "kernel_measured": self.kernel_measured,
            "kernel_measured_se": self.kernel_measured_se, "table": self.table,
            "eta_fit": self.eta_fit, "eta_fit_error": self.eta_fit_error,
        }  # fmt: skip

    @classmethod
    def from_record(cls, data: Mapping, activations: int) -> ActivationData:
        """The record of a run of ``activations`` activations."""
        return cls(
            floats(data["log_steps"]),
            tuple(ActivationRuns.from_record(data, a) for a in range(activations)),
            tuple(PairedCurves.from_record(data, a) for a in range(activations)),
            *(floats(data[k]) for k in ("lengths", "dgd", "kernel_measured",
                                        "kernel_measured_se", "table", "eta_fit",
                                        "eta_fit_error")),
        )  # fmt: skip
