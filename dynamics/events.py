"""Events of a flow: times at which a scalar function g(t, y) of the state crosses zero.

Used, e.g., to locate the peak of omega in Appendix B (d omega/dt = 0) by root
finding on the solver's dense output instead of reading it off a grid.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Event:
    """A zero crossing g(t, y) = 0 of a scalar function of time and state, in a given direction.

    direction: +1 records only crossings from below, -1 only from above, 0 both.
    terminal: stop the solve at the first crossing.

    >>> Event("peak", lambda t, y: y[0], direction=-1).direction
    -1
    """

    name: str
    condition: Callable[[float, np.ndarray], float]
    direction: int = 0
    terminal: bool = False

    def __post_init__(self) -> None:
        if self.direction not in (-1, 0, 1):
            raise ValueError(f"direction must be -1, 0 or 1, got {self.direction!r}")
        if not callable(self.condition):
            raise ValueError(f"condition must be callable, got {type(self.condition).__name__}")

    def as_scipy(self) -> Callable[[float, np.ndarray], float]:
        """The condition with the attributes solve_ivp reads (terminal, direction)."""

        def condition(t: float, y: np.ndarray) -> float:
            return self.condition(t, y)

        condition.terminal = self.terminal
        condition.direction = self.direction
        return condition
