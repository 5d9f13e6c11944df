"""The problem setting of He et al. (2025), Section 2: dimensions and noise level.

Every closed form in `theory` takes a `Setting`. It is validated once, when made,
so that the formulas can trust it.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass


def _positive_int(name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise ValueError(f"{name} must be a positive integer (>= 1), got {value!r}")
    return int(value)


def _nonnegative_finite(name: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be a finite real number >= 0, got {value!r}")
    value = float(value)
    if not math.isfinite(value) or value < 0:
        raise ValueError(f"{name} must be a finite real number >= 0, got {value!r}")
    return value


@dataclass(frozen=True)
class Setting:
    """In-context linear regression: x ~ N(0, I_d), beta ~ N(0, I_d / d), label noise sigma2.

    A prompt holds L labelled examples and one query whose label is also noisy,
    so every mean squared error includes the floor sigma2 (reference §0.2).

    Attributes:
        d: covariate dimension, an integer >= 1.
        L: number of in-context examples, an integer >= 1.
        sigma2: label-noise variance, finite and >= 0.

    Derived quantities (reference §0.1): ``c = (1 + sigma2) / L``,
    ``kappa = c d``, ``D = d (1 + sigma2)``.

    >>> s = Setting(d=5, L=40, sigma2=0.1)
    >>> round(s.kappa, 4)
    0.1375
    >>> Setting(d=0, L=40, sigma2=0.1)
    Traceback (most recent call last):
    ...
    ValueError: d must be a positive integer (>= 1), got 0
    """

    d: int
    L: int
    sigma2: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "d", _positive_int("d", self.d))
        object.__setattr__(self, "L", _positive_int("L", self.L))
        object.__setattr__(self, "sigma2", _nonnegative_finite("sigma2", self.sigma2))

    @property
    def c(self) -> float:
        """(1 + sigma2) / L, the weight of the variance term of (4.1)."""
        return (1.0 + self.sigma2) / self.L

    @property
    def kappa(self) -> float:
        """(1 + sigma2) d / L, the one combination that controls the risks."""
        return self.c * self.d

    @property
    def D(self) -> float:
        """d (1 + sigma2)."""
        return self.d * (1.0 + self.sigma2)
