"""A fraction of independent trials and its standard error (runs that reach a pattern, say).

The Agresti-Coull standard error sqrt(p~ (1 - p~) / (n + 4)), p~ = (k + 2) / (n + 4), stays
honest at k = 0 and k = n, where the Wald SE sqrt(p (1 - p) / n) is 0 (Agresti & Coull 1998).
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["proportion"]


def proportion(successes) -> tuple[float, float]:
    """The fraction k/n of True among n trials and its Agresti-Coull standard error.

    Args:
        successes: booleans, shape (n,), n >= 1.

    >>> fraction, se = proportion([True] * 40)
    >>> fraction, round(se, 4)  # 40/40, yet the SE is not 0
    (1.0, 0.0314)
    """
    successes = np.asarray(successes, dtype=bool)
    n, k = successes.size, float(np.sum(successes))
    if n == 0:
        raise ValueError("successes must hold at least one trial, got none")
    tilde = (k + 2.0) / (n + 4.0)
    return k / n, math.sqrt(tilde * (1.0 - tilde) / (n + 4.0))
