"""The data models of the two papers, one typed setting each, validated once when made.

- `Setting(d, L, sigma2)`: He et al. (2025), Section 2, in-context linear regression (reference
  §0.1-§0.2), and its multi-task variant §HE-5.4-MT (sigma2 then the noise relative to each
  task's signal);
- `SparseSetting(d, s, sigma)`: Chen, Zhao, Zou (2024), §2.1, sparse linear regression.

A setting is checked in its constructor (a bad field raises a one-line ``ValueError`` naming it)
and frozen, so the layers below the command line trust it: theory's closed forms and numerics'
prompt samplers take one and check none of its fields again. A test length L' is
``dataclasses.replace(setting, L=L')``, which validates the new length. Plain Python, so every
layer may import it; ``theory.Setting`` is this `Setting`.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

__all__ = ["Setting", "SparseSetting"]


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

    He et al. (2025), Section 2. A prompt holds L labelled examples and one query whose label
    is also noisy, so every mean squared error includes the floor sigma2 (reference §0.2).

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


@dataclass(frozen=True)
class SparseSetting:
    """Sparse linear regression: x ~ N(0, I_d), w* with s non-zero coordinates, label noise sigma.

    Chen, Zhao, Zou (2024), §1.1 and §2.1: the support of w* is drawn afresh per prompt; every
    label, context and query, carries noise of standard deviation ``sigma`` (their grids are in
    standard deviations, {0, 0.1, 0.2, 0.4, 0.8}). The prompt's shape (n examples, q queries)
    and the prior on w*'s values are the sampler's arguments, not the data model's.

    Attributes:
        d: covariate dimension, an integer >= 1.
        s: support size of w*, an integer in [1, d].
        sigma: label-noise standard deviation, finite and >= 0.

    >>> SparseSetting(d=16, s=4, sigma=0.1)
    SparseSetting(d=16, s=4, sigma=0.1)
    >>> SparseSetting(d=8, s=9, sigma=0.1)
    Traceback (most recent call last):
    ...
    ValueError: s must be an integer in [1, d=8], got 9
    """

    d: int
    s: int
    sigma: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "d", _positive_int("d", self.d))
        object.__setattr__(self, "s", _positive_int("s", self.s))
        if self.s > self.d:
            raise ValueError(f"s must be an integer in [1, d={self.d}], got {self.s}")
        object.__setattr__(self, "sigma", _nonnegative_finite("sigma", self.sigma))
