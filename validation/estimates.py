"""What a claim compares and what it concludes: the numbers and the verdicts.

A claim's theory gives a `Prediction` (values compared by its checks, figure data only drawn),
its simulation a `Measurement` (each compared value an `Estimate`: a value with its standard
error or error bound); a rule of `validation.rules` judges a predicted value against an
estimate (`Judgement`: one of `VERDICTS` and a score), and a claim takes the worst verdict of
its checks (`worst_verdict`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

AGREES = "agrees"
INCONCLUSIVE = "inconclusive"
DISAGREES = "disagrees"
VERDICTS = (AGREES, INCONCLUSIVE, DISAGREES)  # ordered from best to worst


def worst_verdict(verdicts) -> str:
    """The worst of several verdicts (disagrees > inconclusive > agrees); agrees for none.

    >>> worst_verdict(["agrees", "inconclusive", "agrees"])
    'inconclusive'
    """
    return max(verdicts, key=VERDICTS.index, default=AGREES)


@dataclass(frozen=True)
class Estimate:
    """A measured value (scalar or array) with its error: a standard error or a bound.

    `error_kind` says which: "se" (one standard error of a Monte Carlo or a fit)
    or "bound" (a guaranteed bound, e.g. a solver's distance to the exact optimum).

    >>> Estimate([0.25, 0.5], 0.01).error  # one error for every element
    array([0.01, 0.01])
    """

    value: Any
    error: Any
    error_kind: str = "se"

    def __post_init__(self) -> None:
        if self.error_kind not in ("se", "bound"):
            raise ValueError(f"error_kind must be 'se' or 'bound', got {self.error_kind!r}")
        value = np.asarray(self.value, dtype=float)
        error = np.broadcast_to(np.asarray(self.error, dtype=float), value.shape)
        if np.any(~(error >= 0)):
            raise ValueError(f"error must be >= 0 (not NaN), got {self.error!r}")
        object.__setattr__(self, "value", value if value.ndim else float(value))
        object.__setattr__(self, "error", error.copy() if value.ndim else float(error))


@dataclass(frozen=True)
class Prediction:
    """The theory's numbers: `values` are compared by the checks; `figure_data` only drawn.

    Values and figure data are floats or float arrays (stored in results.json as lists).
    """

    values: Mapping[str, Any]
    figure_data: Mapping[str, Any] = field(default_factory=dict)

    def with_values(self, **values) -> Prediction:
        """A copy with some compared values replaced (e.g. a deliberately wrong one).

        >>> Prediction({"loss": 1.0, "slope": 2.0}).with_values(slope=1.0).values
        {'loss': 1.0, 'slope': 1.0}
        """
        return Prediction({**self.values, **values}, self.figure_data)


@dataclass(frozen=True)
class Measurement:
    """The simulation's numbers: `values` as `Estimate`s (compared); `figure_data` only drawn."""

    values: Mapping[str, Estimate]
    figure_data: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Judgement:
    """A rule applied to one quantity: the verdict and its worst normalised score.

    `score` = max over elements of discrepancy / (allowed + uncertainty): the claim
    is contradicted exactly where the score exceeds 1.
    """

    verdict: str
    score: float

