"""Which times of a flow are kept: an explicit increasing grid, log-spaced by default.

Gradient flows on Ltilde have structure on every time scale (Phase I ends at
t ~ 3, Phase III decays like t^{-1/6} out to t = 1e8), so the default grid is
log-spaced.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class SaveAt:
    """A strictly increasing grid of finite times t_1 < ... < t_T at which the solution is recorded.

    >>> SaveAt.log_spaced((0.0, 100.0), n=4).ts.tolist()
    [0.0, 0.01, 1.0, 100.0]
    >>> SaveAt([1.0, 0.5])
    Traceback (most recent call last):
    ...
    ValueError: ts must be a non-empty, finite, strictly increasing 1-D grid, got [1.0, 0.5]
    """

    ts: np.ndarray  # (T,)

    def __post_init__(self) -> None:
        ts = np.array(self.ts, dtype=float)
        if ts.ndim != 1 or ts.size == 0 or not np.all(np.isfinite(ts)) or np.any(np.diff(ts) <= 0):
            raise ValueError(
                f"ts must be a non-empty, finite, strictly increasing 1-D grid, got {ts.tolist()}"
            )
        ts.setflags(write=False)
        object.__setattr__(self, "ts", ts)

    @classmethod
    def log_spaced(cls, t_span: tuple[float, float], n: int = 400, first: float = 1e-2) -> SaveAt:
        """n log-spaced times from t0 to t1; from t0 = 0: 0, then log-spaced from min(first, t1/10).

        Args:
            t_span: (t0, t1) with 0 <= t0 < t1.
            n: number of times, >= 2.
            first: the first positive time when t0 = 0.
        """
        t0, t1 = float(t_span[0]), float(t_span[1])
        if not 0 <= t0 < t1:
            raise ValueError(f"t_span must satisfy 0 <= t0 < t1 for a log grid, got {(t0, t1)}")
        if n < 2:
            raise ValueError(f"n must be an integer >= 2, got {n!r}")
        if t0 > 0:
            return cls(np.geomspace(t0, t1, n))
        return cls(np.concatenate([[0.0], np.geomspace(min(first, t1 / 10.0), t1, n - 1)]))
