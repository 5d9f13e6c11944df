"""Figure data of He et al. (2025) Figure 20 (`figures.softmax_norm.figure_20`,
HE-C-SOFTMAXNORM): per sweep of L ||softmax(omega X^T x_q)||^2, the theory at its points
(prediction) and the Monte Carlo summary (measurement), stored in results.json under the
keys ``{sweep}_{field}`` (``fixed_d_rho``, ``scaled_density``, ...).

>>> points = SweepTheory(*(np.ones(2),) * 8)
>>> theory = SoftmaxNormTheory((points,) * 3, np.ones(3), np.ones(3))
>>> [key for key in theory.to_record() if key.startswith("scaled_")][:2]
['scaled_leading', 'scaled_corrected']
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
from icl_verify.figures.data import fields_record, floats, read_fields

#: The three sweeps: (i) d fixed; (ii) d = L/8 at fixed omega; (iii) omega = c/sqrt(d), d = L/8.
SWEEPS = ("fixed_d", "proportional", "scaled")


@dataclass(frozen=True)
class SweepTheory:
    """One sweep's points and the theory's numbers there, (P,) each."""

    leading: np.ndarray  # M = (1 - 2 omega^2)^(-d/2)
    corrected: np.ndarray  # M + C_1/L
    next_term: np.ndarray  # |C_2|/L^2, the allowance where the expansion holds
    rho: np.ndarray  # the expansion parameter (e^(4 omega^2 d) - 1)/L
    approximation: np.ndarray  # the value predicted: corrected where it holds, else leading
    L: np.ndarray
    d: np.ndarray
    omega: np.ndarray


@dataclass(frozen=True)
class SoftmaxNormTheory:
    """HE-C-SOFTMAXNORM's prediction side: each sweep's theory (in `SWEEPS` order) and the
    density of the L -> infinity limit e^(omega^2 ||x_q||^2) on a grid y."""

    sweeps: tuple[SweepTheory, ...]
    limit_y: np.ndarray  # (Y,)
    limit_density: np.ndarray  # (Y,)

    def to_record(self) -> dict:
        record = {}
        for sweep, theory in zip(SWEEPS, self.sweeps, strict=True):
            record |= fields_record(theory, f"{sweep}_")
        return record | {"limit_y": self.limit_y, "limit_density": self.limit_density}

    @classmethod
    def from_record(cls, data: Mapping) -> SoftmaxNormTheory:
        sweeps = tuple(read_fields(SweepTheory, data, f"{sweep}_") for sweep in SWEEPS)
        return cls(sweeps, floats(data["limit_y"]), floats(data["limit_density"]))


@dataclass(frozen=True)
class SweepMeasured:
    """One sweep's Monte Carlo of L ||p||^2 per point: mean, SE, quantiles, a log-binned
    histogram."""

    mean: np.ndarray  # (P,)
    se: np.ndarray  # (P,)
    quantiles: np.ndarray  # (P, 3)
    edges: np.ndarray  # (B + 1,)
    density: np.ndarray  # (P, B)


@dataclass(frozen=True)
class SoftmaxNormMeasured:
    """HE-C-SOFTMAXNORM's measurement side: each sweep's summary, in `SWEEPS` order."""

    sweeps: tuple[SweepMeasured, ...]

    def to_record(self) -> dict:
        record = {}
        for sweep, measured in zip(SWEEPS, self.sweeps, strict=True):
            record |= fields_record(measured, f"{sweep}_")
        return record

    @classmethod
    def from_record(cls, data: Mapping) -> SoftmaxNormMeasured:
        return cls(tuple(read_fields(SweepMeasured, data, f"{sweep}_") for sweep in SWEEPS))
