"""Figure data of He et al. (2025) Figures 16-19 and Table 2 (`figures.multitask`, HE-5.4-MT):
the paper's modes and optimal steps (prediction), and per trained H the shown member's heads
(measurement), stored in results.json under ``{field}_{H}`` (``KQ11_3``, ``mode_2``, ...).

>>> member = MemberHeads(0, *(np.zeros((1, 2, 2)),) * 2, np.zeros((1, 3)), np.zeros((1, 2)),
...                      np.zeros((2, 3)), np.zeros(2), mode=1)
>>> sorted(member.to_record(1))[:3]
['KQ11_1', 'gamma_groups_1', 'labels_1']
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from icl_verify.figures.data import FlatRecord, IndexedRecord


@dataclass(frozen=True)
class MultiTaskTheory(FlatRecord):
    """HE-5.4-MT's prediction side: the paper's mode of every trained H (ascending), the
    optimal restricted steps eta*_k, and the paper's Table 2 conditions."""

    paper_modes: np.ndarray  # (trained H,) mode codes (`icl_verify.heads.MODE_NAMES`)
    eta_star: np.ndarray  # (K,)
    paper_zero_sum: np.ndarray  # (K,)
    paper_gamma: np.ndarray  # Table 2's Gamma on and off the supports, concatenated



@dataclass(frozen=True)
class MemberHeads(IndexedRecord):
    """The shown member with H heads (the lowest validation loss), its final heads: KQ11
    blocks, OV label blocks, omega and mu per head, the task preconditioners Gamma_k per
    coordinate group, the zero-sum conditions, and the mode read."""

    member: int
    KQ11: np.ndarray  # (H, d, d)
    labels: np.ndarray  # (H, K, K)
    omega_groups: np.ndarray  # (H, G)
    mu: np.ndarray  # (H, K)
    gamma_groups: np.ndarray  # (K, G)
    zero_sum: np.ndarray  # (K,) sum over heads of mu^h_k
    mode: int  # `icl_verify.heads.MODE_NAMES` code


@dataclass(frozen=True)
class MultiTaskData:
    """HE-5.4-MT's measurement side: the logged steps, the first-order gap of each judged H's
    shown member, every member's final mode, the final test losses, and per trained H its
    shown member."""

    log_steps: np.ndarray  # (n,)
    first_order_gap: np.ndarray  # (judged H,)
    modes_final: np.ndarray  # (E,) mode codes
    test_loss: np.ndarray  # (E,)
    members: Mapping[int, MemberHeads]  # H -> its shown member

    def to_record(self) -> dict:
        record = {"log_steps": self.log_steps, "first_order_gap": self.first_order_gap,
                  "modes_final": self.modes_final, "test_loss": self.test_loss}  # fmt: skip
        for H, member in self.members.items():
            record |= member.to_record(H)
        return record

    @classmethod
    def from_record(cls, data: Mapping, heads: Sequence[int]) -> MultiTaskData:
        """The record of a run that trained the H of ``heads`` (each once)."""
        members = {H: MemberHeads.from_record(data, H) for H in sorted(set(heads))}
        return cls(*(np.asarray(data[k], dtype=float) for k in
                     ("log_steps", "first_order_gap", "modes_final", "test_loss")),
                   members=members)  # fmt: skip
