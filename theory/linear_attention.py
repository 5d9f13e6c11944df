"""Frozen one-head linear attention at a new prompt length, He et al. (2025) §5.1 (5.1).

One-head linear attention (5.1) with KQ block Gamma = gamma I predicts
y_hat = (gamma / L) sum_{i<=L} y_i x_i^T x_q: vanilla one-step GD with step gamma. Trained at
length L it reaches the GD optimum gamma* = eta_GD*(L) = L / (L + D + 1) (§HE-4.3-RISK), and
its weights freeze the coefficient gamma*/L. At a test length L' the model is vanilla GD over
L' examples with step L' gamma*/L, whose exact risk is (reference §HE-5.1-LENGTH)

    R_lin(L') = 1 + sigma2 - L' (2L + D + 1 - L') / (L + D + 1)^2,     D = d (1 + sigma2),

a parabola in L' with its minimum at L' = L + (D + 1)/2, a little past the training length
(derived with sympy in `theory.symbolic.linear_attention`). A softmax model renormalises by
the actual number of keys instead, so its error keeps falling with L'.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

import numpy as np
from icl_verify.theory.setting import Setting

MAX_TEST_LENGTH = 100_000  # largest L' accepted


def _test_lengths(L_test) -> np.ndarray:
    """L_test as an int64 array, each entry in 1..MAX_TEST_LENGTH; else a one-line ValueError."""
    allowed = f"L_test must be integers in 1..{MAX_TEST_LENGTH}"
    if isinstance(L_test, bool | np.bool_):
        raise ValueError(f"{allowed}, got {L_test!r} (a bool)")
    lengths = np.asarray(L_test)
    if lengths.dtype.kind not in "iu":
        shown = repr(L_test) if lengths.ndim == 0 else str(lengths.ravel()[:5].tolist())
        raise ValueError(f"{allowed}, got {shown} (dtype {lengths.dtype})")
    bad = lengths[(lengths < 1) | (lengths > MAX_TEST_LENGTH)]
    if bad.size:
        raise ValueError(f"{allowed}, got {bad.ravel()[:5].tolist()}")
    return lengths.astype(np.int64)


def _frozen_risk(lengths, setting: Setting) -> np.ndarray:
    """R_lin(L') of the module docstring, for L' of any numeric type (no checks)."""
    L, D = setting.L, setting.D
    return 1.0 + setting.sigma2 - lengths * (2.0 * L + D + 1.0 - lengths) / (L + D + 1.0) ** 2


def frozen_linear_attention_risk(L_test, setting: Setting):
    """Risk of one-head linear attention trained at L = setting.L and tested at L' = L_test.

    R_lin(L') = 1 + sigma2 - L' (2L + D + 1 - L') / (L + D + 1)^2 (§HE-5.1-LIN, §HE-5.1-LENGTH):
    the frozen coefficient eta_GD*(L)/L = 1/(L + D + 1) summed over L' examples.

    Args:
        L_test: an integer, or an array of integers (any shape), in 1..100000.
        setting: d, the training length L and sigma2.

    Returns:
        A float for an integer L_test, else a float64 array of L_test's shape.

    >>> s = Setting(d=5, L=40, sigma2=0.1)
    >>> round(frozen_linear_attention_risk(40, s), 4)
    0.2398
    >>> frozen_linear_attention_risk([20, 100], s).round(4)
    array([0.4849, 1.7243])
    >>> frozen_linear_attention_risk(0, s)
    Traceback (most recent call last):
    ...
    ValueError: L_test must be integers in 1..100000, got [0]
    """
    lengths = _test_lengths(L_test)
    risk = _frozen_risk(lengths.astype(float), setting)
    if isinstance(L_test, numbers.Integral):
        return float(risk)
    return risk


@dataclass(frozen=True)
class FrozenLinearMinimum:
    """Where frozen linear attention generalises best in length (§HE-5.1-LENGTH).

    Attributes:
        length: the real argmin L + (D + 1)/2 of R_lin(L').
        best_length: the integer L' >= 1 of least risk (the smaller one on a tie).
        risk: R_lin(best_length).
    """

    length: float
    best_length: int
    risk: float


def frozen_linear_attention_minimum(setting: Setting) -> FrozenLinearMinimum:
    """The test length at which frozen linear attention (5.1) has the least risk.

    R_lin is a parabola in L' with vertex L + (D + 1)/2 (§HE-5.1-LENGTH), so the best integer
    length is one of the two integers around it.

    >>> m = frozen_linear_attention_minimum(Setting(d=5, L=40, sigma2=0.1))
    >>> m.length, m.best_length, round(m.risk, 5)
    (43.25, 43, 0.23493)
    """
    vertex = setting.L + (setting.D + 1.0) / 2.0
    below = max(1, math.floor(vertex))
    risks = _frozen_risk(np.array([below, below + 1], dtype=float), setting)
    best = below + int(risks[1] < risks[0])
    return FrozenLinearMinimum(length=vertex, best_length=best, risk=float(min(risks)))
