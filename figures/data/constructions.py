"""Figure data of Chen, Zhao, Zou (2024) Prop. 4.2 (`figures.constructions`, CZZ-P4.2): per
compared read-out its configuration and GD step, the configurations' sizes, and the rounding
bound per step in float64 and float32 (prediction side; the read-outs themselves are the claim's
values), under the keys results.json has always held (``config``, ``step``, ``d``, ...,
``bound_steps``, ``bound_float64``, ``bound_float32``).

>>> sizes = Sizes(*(np.array([2.0]),) * 5)
>>> data = GdLayersData(np.zeros(3), np.array([1.0, 2.0, 3.0]), sizes, np.arange(1.0, 4.0),
...                     np.ones(3), np.ones(3))
>>> sorted(data.to_record())[:4]
['bound_float32', 'bound_float64', 'bound_steps', 'config']
>>> GdLayersData.from_record(data.to_record()).bound("float32").tolist()
[1.0, 1.0, 1.0]
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
from icl_verify.figures.data import FlatRecord, floats


@dataclass(frozen=True)
class Sizes(FlatRecord):
    """The drawn configurations' sizes (CZZ-P4.1 and -P4.2), one entry per configuration."""

    d: np.ndarray  # (C,)
    n: np.ndarray  # (C,)
    q: np.ndarray  # (C,) queries
    t: np.ndarray  # (C,) GD layers
    eta: np.ndarray  # (C,)


@dataclass(frozen=True)
class GdLayersData:
    """CZZ-P4.2's figure data: each compared read-out's configuration and GD step l, the
    configurations' `Sizes`, and the stated rounding bound at the largest d, n per step l
    (`theory.normalised_error_bound`) for the float64 and the float32 network."""

    config: np.ndarray  # (values,) index into the configurations
    step: np.ndarray  # (values,) l = 1..t
    sizes: Sizes
    bound_steps: np.ndarray  # (t_max,)
    bound_float64: np.ndarray  # (t_max,)
    bound_float32: np.ndarray  # (t_max,)

    def bound(self, precision: str) -> np.ndarray:
        """The bound per step for the network in ``precision`` ("float64" or "float32")."""
        return getattr(self, f"bound_{precision}")

    def to_record(self) -> dict:
        return {"config": self.config, "step": self.step} | self.sizes.to_record() | {
            "bound_steps": self.bound_steps, "bound_float64": self.bound_float64,
            "bound_float32": self.bound_float32,
        }  # fmt: skip

    @classmethod
    def from_record(cls, data: Mapping) -> GdLayersData:
        bounds = (floats(data[k]) for k in ("bound_steps", "bound_float64", "bound_float32"))
        return cls(floats(data["config"]), floats(data["step"]), Sizes.from_record(data), *bounds)
