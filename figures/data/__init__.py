"""Typed figure data, one module per figure family: what a claim measures for its figure and
what the figure draws, as frozen dataclasses with ``to_record()`` (the plain JSON-able dict a
claim's record stores in results.json) and ``from_record()`` (the dataclass again, for the
figure and the claim's table). Each record key is spelled once, in the class that owns it.

NumPy only (no matplotlib), so a claim builds its figure's data without loading the plotting
stack; figures import these modules, and validation may (tests/test_layers.py).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np


def fields_record(item, prefix: str, suffix: str = "") -> dict:
    """A flat dataclass's fields keyed ``{prefix}{field}{suffix}``; bools and ints as floats,
    as results.json has stored them.

    >>> from dataclasses import dataclass
    >>> @dataclass(frozen=True)
    ... class Gap:
    ...     gap: float
    ...     reached: bool
    >>> fields_record(Gap(0.5, True), "L3_")
    {'L3_gap': 0.5, 'L3_reached': 1.0}
    >>> read_fields(Gap, {"L3_gap": 0.5, "L3_reached": 1.0}, "L3_")
    Gap(gap=0.5, reached=True)
    """
    fields = ((f.name, getattr(item, f.name)) for f in dataclasses.fields(item))
    return {prefix + name + suffix: float(v) if isinstance(v, (bool, int)) else v
            for name, v in fields}  # fmt: skip


def read_fields(cls, data: Mapping, prefix: str, suffix: str = ""):
    """The ``cls`` whose fields `fields_record` stored under ``prefix`` and ``suffix``: bool,
    int and float fields as such, every other field as a float array."""
    return cls(**{
        f.name: _SCALARS.get(f.type, floats)(data[prefix + f.name + suffix])
        for f in dataclasses.fields(cls)
    })  # fmt: skip


_SCALARS = {"bool": bool, "int": int, "float": float}


class FlatRecord:
    """A flat dataclass stored as its own fields, unprefixed (`fields_record` / `read_fields`):
    a figure family's part whose record keys are its field names.

    >>> from dataclasses import dataclass
    >>> @dataclass(frozen=True)
    ... class Scale(FlatRecord):
    ...     low: float
    >>> Scale.from_record(Scale(0.5).to_record())
    Scale(low=0.5)
    """

    def to_record(self) -> dict:
        return fields_record(self, "")

    @classmethod
    def from_record(cls, data: Mapping):
        return read_fields(cls, data, "")


class IndexedRecord:
    """A flat dataclass stored once per index i (an activation, a head count) as its fields
    suffixed ``_{i}``: a figure family's part that repeats over an index in one record.

    >>> from dataclasses import dataclass
    >>> @dataclass(frozen=True)
    ... class Run(IndexedRecord):
    ...     loss: float
    >>> Run(0.5).to_record(3)
    {'loss_3': 0.5}
    >>> Run.from_record({'loss_3': 0.5}, 3)
    Run(loss=0.5)
    """

    def to_record(self, index: int) -> dict:
        return fields_record(self, "", f"_{index}")

    @classmethod
    def from_record(cls, data: Mapping, index: int):
        return read_fields(cls, data, "", f"_{index}")


def floats(value) -> np.ndarray:
    """A stored list (or array) as a float array."""
    return np.asarray(value, dtype=float)


@dataclass(frozen=True)
class RiskScale(FlatRecord):
    """The y scale of the risk figures (prediction side): the null risk s, the excess risk
    of predicting 0 for an s-sparse w* with N(0, 1) entries."""

    null_risk: float

