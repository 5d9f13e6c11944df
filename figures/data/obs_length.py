"""Figure data of He et al. (2025) Observation 3 and Figure 4 (`figures.observations.figure_obs3`,
`figures.paper.figure_4`, HE-OBS3): the exact risks of GD and debiased GD at their training-L
optimal steps, the best single head's L̃ and Theorem 4.2(iii)'s Bayes factors against the test
length L' (prediction), and the Monte Carlo test MSE of the trained members, the baselines and
the paper's fixed kernels on shared prompts (measurement), under the keys results.json has
always held (``H2_mean``, ``dGDeff2_se``, ``pair_mean``, ``bayes_sharp``, ...).

>>> shown_heads((1, 2), (1, 2, 4, 2))
(1, 2, 4)
>>> curves = np.zeros((2, 2, 3))
>>> data = Obs3Data(np.arange(3.0), np.ones(2), np.zeros(2), (1, 2), curves, np.zeros((3, 2, 3)),
...                 curves, FixedKernels(*(np.zeros(3),) * 4), np.zeros((1, 3)),
...                 np.zeros((1, 3)), np.zeros((2, 2)), np.zeros((2, 1)))
>>> [k for k in data.to_record() if k.startswith(("H", "dGD"))]
['H1_mean', 'H1_se', 'H2_mean', 'H2_se', 'dGD_mean', 'dGD_se', 'dGDeff1_mean', 'dGDeff1_se', \
'dGDeff2_mean', 'dGDeff2_se']
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from icl_verify.figures.data import FlatRecord, floats

#: The baselines measured at every L': debiased GD and GD at their training-L optimal steps,
#: and the Bayes predictor (ridge at λ = σ²d).
BASELINES = ("dGD", "GD", "Bayes")


def shown_heads(compare_heads: Sequence[int], heads: Sequence[int]) -> tuple[int, ...]:
    """The H whose representative member HE-OBS3 reads at every L': the compared ones, then
    every other trained H ascending (drawn in Figure 4 only)."""
    drawn = [h for h in sorted(set(heads)) if h not in compare_heads]
    return (*compare_heads, *drawn)


@dataclass(frozen=True)
class Obs3Theory(FlatRecord):
    """HE-OBS3's prediction side over L': the exact risks of debiased GD and GD at their
    training-L optimal steps, L̃ of the best single head, Theorem 4.2(iii)'s sharp factor
    R_dGD*/R_Bayes at ξ = d/L' and its uniform factor 1 + 1/σ²."""

    dgd: np.ndarray  # (n,)
    gd: np.ndarray  # (n,)
    single: np.ndarray  # (n,)
    bayes_sharp: np.ndarray  # (n,)
    bayes_uniform: float


@dataclass(frozen=True)
class FixedKernels(FlatRecord):
    """Figure 4 (right): the test MSE of the paper's fixed ± pair and of the single head at
    (1/√d, μ*(L')), mean and SE per L'."""

    pair_mean: np.ndarray  # (n,)
    pair_se: np.ndarray
    single_mean: np.ndarray  # (n,)
    single_se: np.ndarray


@dataclass(frozen=True)
class Obs3Data:
    """HE-OBS3's measurement: per L' the test MSE (mean, SE) of each shown H's member
    (`shown_heads`), of the `BASELINES` and of debiased GD at each compared member's η_eff;
    the fixed kernels; each multi-head member's MSE over the Bayes risk (paired) per L' and at
    L' = L on prompts of its own; and per compared H its slope of log(MSE − σ²) on log L'."""

    lengths: np.ndarray  # (n,)
    eta_eff: np.ndarray  # (compared H,) sum_h ω_h μ_h of each compared member
    members: np.ndarray  # (compared H,) the members read
    heads: tuple[int, ...]  # shown_heads: the compared H, then the others
    models: np.ndarray  # (len(heads), 2, n) mean, SE
    baselines: np.ndarray  # (len(BASELINES), 2, n)
    at_eta_eff: np.ndarray  # (compared H, 2, n) debiased GD at each member's η_eff
    fixed: FixedKernels
    bayes_ratio_mean: np.ndarray  # (multi-head H, n)
    bayes_ratio_se: np.ndarray
    slopes: np.ndarray  # (compared H, 2) value, SE
    bayes_sharp_ratio: np.ndarray  # (2, multi-head H) mean, SE at L' = L

    def model(self, h: int) -> np.ndarray:
        """The member with h heads: (2, n), mean then SE."""
        return self.models[self.heads.index(h)]

    def baseline(self, name: str) -> np.ndarray:
        """The baseline ``name`` (one of `BASELINES`): (2, n), mean then SE."""
        return self.baselines[BASELINES.index(name)]

    def dgd_at_eta_eff(self, h: int) -> np.ndarray:
        """Debiased GD at the compared h-head member's η_eff: (2, n), mean then SE."""
        return self.at_eta_eff[self.heads.index(h)]

    def to_record(self) -> dict:
        record = {"lengths": self.lengths, "eta_eff": self.eta_eff, "members": self.members}
        names = [f"H{h}" for h in self.heads] + list(BASELINES)
        names += [f"dGDeff{h}" for h in self.heads[: len(self.at_eta_eff)]]
        for name, (mean, se) in zip(names, [*self.models, *self.baselines, *self.at_eta_eff],
                                    strict=True):  # fmt: skip
            record |= {f"{name}_mean": mean, f"{name}_se": se}
        return record | self.fixed.to_record() | {
            "bayes_ratio_mean": self.bayes_ratio_mean, "bayes_ratio_se": self.bayes_ratio_se,
            "slopes": self.slopes, "bayes_sharp_ratio": self.bayes_sharp_ratio,
        }  # fmt: skip

    @classmethod
    def from_record(cls, data: Mapping, compare_heads: Sequence[int],
                    heads: Sequence[int]) -> Obs3Data:  # fmt: skip
        """The record of a run that compared ``compare_heads`` and trained ``heads``."""
        def curves(names):
            return np.array([[floats(data[f"{n}_{s}"]) for s in ("mean", "se")] for n in names])

        shown = shown_heads(compare_heads, heads)
        return cls(
            floats(data["lengths"]), floats(data["eta_eff"]), floats(data["members"]), shown,
            curves([f"H{h}" for h in shown]), curves(BASELINES),
            curves([f"dGDeff{h}" for h in compare_heads]), FixedKernels.from_record(data),
            *(floats(data[k]) for k in ("bayes_ratio_mean", "bayes_ratio_se", "slopes",
                                        "bayes_sharp_ratio")),
        )  # fmt: skip
