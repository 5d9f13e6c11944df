"""Figure data of Chen, Zhao, Zou (2024) Theorem 5.3 (`figures.isotropic`, CZZ-T5.3): the bounds,
the Lasso rate and F.1's eta t budgets in both readings of §7.11 (prediction), and the tuned
estimators' risks on both n grids, pre-gd's tuned eta t per panel, the ratio and the §7.11
slopes (measurement), under the keys results.json has always held (``pregd_narrow``,
``ols_wide_se``, ``ridge_index_narrow``, ``pregd_eta_t_step``, ``step_budget_beta``, ...).

>>> risks = Risks(*(np.ones((5, 2)),) * 2, index=(np.zeros(2),) * 4)
>>> record = risks.to_record("wide")
>>> record["ols_wide"].tolist(), sorted(record)[:2]
([1.0, 1.0], ['gd_index_wide', 'gd_wide'])
>>> Risks.from_record(record, "wide").at("lasso")[1].tolist()
[1.0, 1.0]
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
from icl_verify.figures.data import FlatRecord, floats

#: The estimators compared on both n grids; all but OLS are tuned (`TUNED`, an index each).
ESTIMATORS = ("ols", "ridge", "gd", "pregd", "lasso")
TUNED = ESTIMATORS[1:]
#: §7.11's readings of the bound's s-dependence and of F.1's condition on t, as `theory.READINGS`
#: and `theory.STEP_READINGS` name them (tests/test_figure_data_families.py compares them).
READINGS = ("theorem", "discussion")
STEP_READINGS = ("beta", "appendix")
#: The panels whose pre-gd tuning is reported: over n (n >~ d), over s at n_step, over s at d_wide.
PANELS = ("narrow", "step", "reading")


@dataclass(frozen=True)
class IsotropicTheory(FlatRecord):
    """CZZ-T5.3's prediction side for the figure: the Lasso rate over n_grid, F.1's eta t
    budget and its s-exponent in each reading of the condition on t (over s_reading at n_step;
    over n_grid in the claim's reading), and the bound in each §7.11 reading over s_reading
    with its s-exponent (`theory.READINGS`, `theory.STEP_READINGS`)."""

    lasso_rate: np.ndarray  # (n,)
    step_budget_beta: np.ndarray  # (s,)
    step_budget_appendix: np.ndarray  # (s,)
    step_slope_beta: float
    step_slope_appendix: float
    step_budget_narrow: np.ndarray  # (n,)
    reading_theorem: np.ndarray  # (s,)
    reading_discussion: np.ndarray  # (s,)
    reading_slope_theorem: float
    reading_slope_discussion: float

    def step_budget(self, reading: str) -> np.ndarray:
        """F.1's eta t over s_reading in the step reading ``reading``."""
        return getattr(self, f"step_budget_{reading}")

    def step_slope(self, reading: str) -> float:
        return getattr(self, f"step_slope_{reading}")

    def bound(self, reading: str) -> np.ndarray:
        """The bound over s_reading in the §7.11 reading ``reading``."""
        return getattr(self, f"reading_{reading}")

    def bound_slope(self, reading: str) -> float:
        return getattr(self, f"reading_slope_{reading}")


@dataclass(frozen=True)
class Risks:
    """One n grid (``"narrow"``: n >~ d, ``"wide"``: d >~ n): per estimator of `ESTIMATORS`
    its mean excess risk over the evaluation prompts and SE per n, and per tuned estimator
    (`TUNED`) its tuned grid point per n. Stored as ``{e}_{regime}``, ``{e}_{regime}_se``,
    ``{e}_index_{regime}``."""

    mean: np.ndarray  # (len(ESTIMATORS), n)
    se: np.ndarray  # (len(ESTIMATORS), n)
    index: tuple[np.ndarray, ...]  # per TUNED: (n,) lambda or alpha, (n, 2) (eta, t)

    def at(self, estimator: str) -> tuple[np.ndarray, np.ndarray]:
        """The mean and SE of ``estimator`` (one of `ESTIMATORS`), (n,) each."""
        k = ESTIMATORS.index(estimator)
        return self.mean[k], self.se[k]

    def to_record(self, regime: str) -> dict:
        record = {}
        for e, mean, se in zip(ESTIMATORS, self.mean, self.se, strict=True):
            record |= {f"{e}_{regime}": mean, f"{e}_{regime}_se": se}
        return record | {f"{e}_index_{regime}": i for e, i in zip(TUNED, self.index, strict=True)}

    @classmethod
    def from_record(cls, data: Mapping, regime: str) -> Risks:
        return cls(
            np.stack([floats(data[f"{e}_{regime}"]) for e in ESTIMATORS]),
            np.stack([floats(data[f"{e}_{regime}_se"]) for e in ESTIMATORS]),
            tuple(floats(data[f"{e}_index_{regime}"]) for e in TUNED),
        )  # fmt: skip


@dataclass(frozen=True)
class PregdTuning:
    """Pre-gd's tuning in one of `PANELS`: per setting its absolute eta t and s lambda_max of
    the preprocessed Gram (mean over prompts, SE) and its tuned (eta, t) grid point. Stored as
    ``pregd_{field}_{panel}`` (``_se`` after the panel)."""

    eta_t: np.ndarray  # (settings,)
    eta_t_se: np.ndarray
    s_curvature: np.ndarray  # (settings,)
    s_curvature_se: np.ndarray
    index: np.ndarray  # (settings, 2) indices into etas and steps

    def to_record(self, panel: str) -> dict:
        return {
            f"pregd_eta_t_{panel}": self.eta_t, f"pregd_eta_t_{panel}_se": self.eta_t_se,
            f"pregd_s_curvature_{panel}": self.s_curvature,
            f"pregd_s_curvature_{panel}_se": self.s_curvature_se,
            f"pregd_index_{panel}": self.index,
        }  # fmt: skip

    @classmethod
    def from_record(cls, data: Mapping, panel: str) -> PregdTuning:
        return cls(*(floats(data[f"pregd_{name}_{panel}{se}"]) for name in ("eta_t", "s_curvature")
                     for se in ("", "_se")), floats(data[f"pregd_index_{panel}"]))  # fmt: skip


@dataclass(frozen=True)
class Slopes(FlatRecord):
    """The ratio panel and §7.11's fitted slopes: best baseline / pre-gd at n = 4 d s per d
    (with which baseline it was, and which was best on the n >~ d grid), pre-gd over s_reading
    at d_wide and its s-exponent, and the s-exponent of pre-gd's eta t in the step panel (the
    checked one) and in the reading panel (reported)."""

    ratio: np.ndarray  # (ratio_d,)
    ratio_se: np.ndarray
    ratio_baseline_is_ridge: np.ndarray  # (ratio_d,) 1 ridge, 0 GD
    narrow_baseline_is_ridge: np.ndarray  # (n,)
    pregd_reading: np.ndarray  # (s,)
    pregd_reading_se: np.ndarray
    reading_slope: float
    reading_slope_se: float
    step_slope: float
    step_slope_se: float  # inf when the tuned t is censored by the steps grid
    step_slope_reading: float
    step_slope_reading_se: float


@dataclass(frozen=True)
class IsotropicData:
    """CZZ-T5.3's measurement for the figure and the table: both n grids' risks, pre-gd's
    tuning per panel (`PANELS`) and the slopes."""

    narrow: Risks
    wide: Risks
    tuning: tuple[PregdTuning, ...]  # per PANELS
    slopes: Slopes

    def tuned(self, panel: str) -> PregdTuning:
        return self.tuning[PANELS.index(panel)]

    def to_record(self) -> dict:
        record = self.narrow.to_record("narrow") | self.wide.to_record("wide")
        for panel, tuning in zip(PANELS, self.tuning, strict=True):
            record |= tuning.to_record(panel)
        return record | self.slopes.to_record()

    @classmethod
    def from_record(cls, data: Mapping) -> IsotropicData:
        return cls(Risks.from_record(data, "narrow"), Risks.from_record(data, "wide"),
                   tuple(PregdTuning.from_record(data, p) for p in PANELS),
                   Slopes.from_record(data))  # fmt: skip
