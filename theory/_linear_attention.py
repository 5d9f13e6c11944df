"""Frozen one-head linear attention at a new prompt length, He et al. (2025) §5.1 (5.1).

One-head linear attention (5.1) with KQ block Gamma = gamma I predicts
y_hat = (gamma / L) sum_{i<=L} y_i x_i^T x_q: vanilla one-step GD with step gamma. Trained at
length L it reaches the GD optimum gamma* = eta_GD*(L) = L / (L + D + 1) (§HE-4.3-RISK), and
its weights freeze the coefficient gamma*/L. At a test length L' the model is vanilla GD over
L' examples with step L' gamma*/L, whose exact risk is (reference §HE-5.1-LENGTH)

    R_lin(L') = 1 + sigma2 - L' (2L + D + 1 - L') / (L + D + 1)^2,     D = d (1 + sigma2),

a parabola in L' with its minimum at L' = L + (D + 1)/2, a little past the training length
(derived with sympy in `theory.symbolic.linear_attention`); a trained step off gamma* moves the
risk at L' by `frozen_linear_attention_risk_shift`. A softmax model renormalises by
the actual number of keys instead, so its error keeps falling with L'.

Softmax attention emulates a linear head with twice the heads (5.2), §HE-5.1-SM2LIN: the pair
(eps KQ, OV/(2 eps)), (-eps KQ, -OV/(2 eps)) over the L context tokens outputs

    (1/L) OV sum_i z_i z_i^T KQ z_q  -  OV zbar zbar^T KQ z_q  +  eps^2 N  +  O(eps^4),

`softmax_pair_expansion` evaluates the three terms (derivation "softmax_pair").
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

import numpy as np
from icl_verify.theory._risks import gd_risk, optimal_gd

from icl_verify import MAX_PROMPT_LENGTH
from icl_verify.settings import Setting


def _test_lengths(L_test) -> np.ndarray:
    """L_test as an int64 array, each entry in 1..MAX_PROMPT_LENGTH; else a one-line ValueError."""
    allowed = f"L_test must be integers in 1..{MAX_PROMPT_LENGTH}"
    if isinstance(L_test, bool | np.bool_):
        raise ValueError(f"{allowed}, got {L_test!r} (a bool)")
    lengths = np.asarray(L_test)
    if lengths.dtype.kind not in "iu":
        shown = repr(L_test) if lengths.ndim == 0 else str(lengths.ravel()[:5].tolist())
        raise ValueError(f"{allowed}, got {shown} (dtype {lengths.dtype})")
    bad = lengths[(lengths < 1) | (lengths > MAX_PROMPT_LENGTH)]
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


def frozen_linear_attention_risk_shift(L_test, setting: Setting, step_shift: float) -> np.ndarray:
    """How far a learned step off the GD optimum moves the test risk of frozen linear attention.

    A model trained at L = setting.L with step gamma = eta_GD*(L) +- step_shift is vanilla GD at a
    test length L' with the frozen step L' gamma / L (module doc); this is
    max over the sign of |R_GD(L' gamma / L; L') - R_GD(L' eta_GD*(L) / L; L')|, with the exact
    finite-L' GD risk `theory.gd_risk` at (d, L', sigma2) (§HE-5.1-LENGTH: the allowance of the
    frozen risk for a trained step within step_shift of the optimum).

    Args:
        L_test: a sequence of integers in 1..100000, the test lengths L'.
        setting: d, the training length L and sigma2.
        step_shift: the largest |gamma - eta_GD*(L)|.

    Returns:
        A float64 array, one value per L'.

    >>> s = Setting(d=5, L=40, sigma2=0.1)
    >>> frozen_linear_attention_risk_shift([40, 100], s, 0.01).round(5)
    array([0.00012, 0.06518])
    """
    lengths = _test_lengths(L_test).ravel()
    eta = optimal_gd(setting).eta
    tests = [Setting(setting.d, int(n), setting.sigma2) for n in lengths]
    exact = np.array([gd_risk(eta * n / setting.L, s) for n, s in zip(lengths, tests, strict=True)])
    shifted_risks = [
        np.array(
            [gd_risk((eta + sign) * n / setting.L, s) for n, s in zip(lengths, tests, strict=True)]
        )
        for sign in (-step_shift, step_shift)
    ]
    return np.max([np.abs(r - exact) for r in shifted_risks], axis=0)


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


@dataclass(frozen=True)
class SoftmaxPairExpansion:
    """The small-eps expansion of a softmax head pair emulating one linear head (§HE-5.1-SM2LIN).

    pair(eps) = linear - centring + eps^2 next_term + O(eps^4), each array (B, D) (or (D,)).

    Attributes:
        linear: (1/L) OV sum_i z_i z_i^T KQ z_q, the linear-attention head (5.1).
        centring: OV zbar zbar^T KQ z_q, zbar the mean context token (subtracted).
        next_term: N = (1/6)(1/L) OV sum_i z_i (u_i^3 - 3 u_i m2 - m3), the eps^2 coefficient;
            v_i = z_i^T KQ z_q, u_i = v_i - mean(v), m2 = mean(u^2), m3 = mean(u^3).
    """

    linear: np.ndarray
    centring: np.ndarray
    next_term: np.ndarray


def _square(name: str, matrix, size: int) -> np.ndarray:
    matrix = np.asarray(matrix, dtype=float)
    if matrix.shape != (size, size) or not np.all(np.isfinite(matrix)):
        raise ValueError(
            f"{name} must be a finite ({size}, {size}) array (D = Z.shape[-2]), got shape "
            f"{matrix.shape}" + ("" if np.all(np.isfinite(matrix)) else " with non-finite entries")
        )
    return matrix


def softmax_pair_expansion(KQ, OV, Z) -> SoftmaxPairExpansion:
    """Terms of the output of the softmax pair (eps KQ, OV/(2 eps)), (-eps KQ, -OV/(2 eps)), (5.2).

    Each head attends to the L context tokens z_1..z_L of the prompt Z = [z_1..z_L, z_q] with
    weights softmax(eps z_i^T KQ z_q); as eps -> 0 the pair's summed output is
    linear - centring + eps^2 next_term + O(eps^4) (§HE-5.1-SM2LIN; the eps^2 term is the
    matrix form of HE-4.10's cubic term; derivation "softmax_pair").

    Args:
        KQ, OV: (D, D) arrays, the linear head's circuits.
        Z: (B, D, L + 1) prompts, context tokens first and the query last; or one prompt (D, L + 1),
            for which the B axis is dropped from the results. L >= 1.

    >>> Z = np.array([[1.0, -1.0, 0.5], [0.0, 2.0, 1.0]])  # (D, L + 1) = (2, 3)
    >>> terms = softmax_pair_expansion(np.eye(2), np.eye(2), Z)
    >>> terms.linear, terms.centring, terms.next_term.round(4)
    (array([-0.5,  1.5]), array([0., 1.]), array([ 0.0417, -0.0417]))
    """
    Z = np.asarray(Z, dtype=float)
    if Z.ndim not in (2, 3) or Z.shape[-1] < 2 or not np.all(np.isfinite(Z)):
        raise ValueError(
            "Z must be a finite (B, D, L + 1) or (D, L + 1) array with L >= 1, got shape "
            f"{Z.shape}" + ("" if np.all(np.isfinite(Z)) else " with non-finite entries")
        )
    KQ = _square("KQ", KQ, Z.shape[-2])
    OV = _square("OV", OV, Z.shape[-2])
    prompts = Z if Z.ndim == 3 else Z[None]  # (B, D, L + 1)
    context, query = prompts[:, :, :-1], prompts[:, :, -1]  # (B, D, L), (B, D)
    scores = np.einsum("bdl,de,be->bl", context, KQ, query)  # (B, L), v_i = z_i^T KQ z_q
    mean_score = scores.mean(axis=1, keepdims=True)  # (B, 1)
    u = scores - mean_score  # (B, L)
    m2 = np.mean(u**2, axis=1, keepdims=True)  # (B, 1)
    m3 = np.mean(u**3, axis=1, keepdims=True)  # (B, 1)
    mean_token = context.mean(axis=2)  # (B, D), zbar
    linear = np.einsum("bdl,bl->bd", context, scores) / scores.shape[1] @ OV.T  # (B, D)
    centring = (mean_token * mean_score) @ OV.T  # (B, D)
    cubic = (u**3 - 3.0 * u * m2 - m3) / 6.0  # (B, L)
    next_term = np.einsum("bdl,bl->bd", context, cubic) / scores.shape[1] @ OV.T  # (B, D)
    if Z.ndim == 2:
        linear, centring, next_term = linear[0], centring[0], next_term[0]
    return SoftmaxPairExpansion(linear=linear, centring=centring, next_term=next_term)
