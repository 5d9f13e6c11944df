"""Two heads with a normalised activation as one-step GD, He et al. (2025) §5.2 (Table 1).

A normalised activation replaces the softmax by phi(v)_i = f(v_i) / sum_j f(v_j) (f = exp is the
softmax). The two heads (omega, mu), (-omega, -mu) on scores s_i = x_i^T x_q predict

    y_hat = mu sum_i y_i [phi(omega s)_i - phi(-omega s)_i].

First order in omega (§HE-5.2-ACT): with f(x) = f(0) [1 + a x + b x^2/2 + t x^3/6 + ...] this is
debiased GD (4.11) with step eta_eff = 2 a omega mu, a = a_f = f'(0)/f(0) (`first_order_step`).

Kernel mean (L -> infinity): given x_q, r = ||x_q||^2, the scores are s ~ N(0, r) and

    y_hat -> (beta^T x_q) eta(r),   eta(r) = mu E_s[s w(s)] / r,
    w(s) = f(omega s) / E f(omega s') - f(-omega s) / E f(-omega s');

the least-squares fit of these predictions by debiased GD, whose L -> infinity prediction is
eta beta^T x_q, has the step eta_km = E_r[r eta(r)] / d with r ~ chi^2_d (`kernel_mean_step`).
Its small-omega series (derivation "normalised_activation") is

    eta_km = 2 a omega mu [1 + (t/a - b)(d + 2) omega^2 / 2] + O(omega^5)   (`second_order_step`),

exact for the softmax (t/a - b = 0); for f = (1 + c x)^2 exactly
eta(r) = 4 c omega mu / (1 + c^2 omega^2 r).

An activation f is given as an `icl_verify.activations.Activation`, a spec string
(``"elu:0.5"``), a sympy expression in one symbol, or a Python callable. Its Taylor coefficients
come from one-sided sympy limits (a Piecewise f such as elu has a breakpoint at 0, where sympy's
diff is unreliable), or, for a callable that does not accept a sympy symbol, from one-sided
difference quotients with Richardson extrapolation.

The paper's Table 1 (the trained omega, mu and eta_eff per activation) is `PAPER_TABLE_1`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import sympy as sp
from scipy.special import roots_genlaguerre, roots_legendre

from icl_verify.activations import Activation, ActivationError, parse_activation
from icl_verify.settings import _positive_int

_POSITIVITY_POINTS = (-1e-2, -1e-3, 1e-3, 1e-2)  # f must be > 0 here (a neighbourhood of 0)
_SAME = 1e-12  # symbolic one-sided values (floats inside) agree to this, relative


@dataclass(frozen=True)
class ActivationCoefficients:
    """Taylor coefficients of f at 0 over f(0): f(x) = f0 [1 + a x + b x^2/2 + t x^3/6 + ...].

    Attributes:
        a: f'(0)/f(0), the first-order coefficient a_f of §HE-5.2-ACT (Table 1's eta_eff / (2 omega
            mu)).
        f0: f(0) > 0.
        b: f''(0)/f(0), or None where f is not twice differentiable at 0.
        t: f'''(0)/f(0), or None where f is not three times differentiable at 0 (then also when
            b is None).
    """

    a: float
    f0: float
    b: float | None
    t: float | None


@dataclass(frozen=True)
class _Resolved:
    """An activation in one form: its name for messages, sympy form (if any), numpy form."""

    name: str
    expression: sp.Basic | None
    symbol: sp.Symbol | None
    evaluate: Callable[[np.ndarray], np.ndarray]


def _vectorised(function: Callable) -> Callable[[np.ndarray], np.ndarray]:
    """function on float arrays, elementwise: as it is if it maps arrays to same-shape arrays."""

    def evaluate(x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, dtype=float)
        with np.errstate(all="ignore"):
            try:
                values = np.asarray(function(x), dtype=float)
                if values.shape == x.shape:
                    return values
            except Exception:  # a scalar-only callable (math.exp, an if on x): one value at a time
                pass
            return np.vectorize(lambda v: _scalar(function, v), otypes=[float])(x)

    return evaluate


def _scalar(function: Callable, value: float) -> float:
    """function(value) as a float; NaN where it overflows or is undefined (checked by callers)."""
    try:
        return float(function(float(value)))
    except (OverflowError, ValueError, ZeroDivisionError):
        return math.nan


def _from_expression(name: str, expression: sp.Basic, symbol: sp.Symbol | None) -> _Resolved:
    symbol = symbol if symbol is not None else sp.Symbol("x", real=True)
    return _Resolved(
        name, expression, symbol, _vectorised(sp.lambdify(symbol, expression, "numpy"))
    )


def _resolve(f) -> _Resolved:
    """An Activation, spec string, sympy expression or callable, in the form of `_Resolved`."""
    if isinstance(f, str):
        f = parse_activation(f)
    if isinstance(f, Activation):
        return _from_expression(repr(f.spec), f.expression, f.symbol)
    if isinstance(f, sp.Basic):
        free = sorted(f.free_symbols, key=str)
        if len(free) > 1:
            raise ActivationError(
                f"activation {f}: f must be an expression in one variable, got "
                f"{', '.join(map(str, free))}"
            )
        return _from_expression(str(f), f, free[0] if free else None)
    if callable(f):
        name = getattr(f, "__qualname__", type(f).__name__)
        symbol = sp.Symbol("x", real=True)
        try:  # numpy and math functions refuse a sympy symbol: then f is differentiated numerically
            expression = f(symbol)
        except Exception:
            expression = None
        if isinstance(expression, sp.Basic) and expression.free_symbols <= {symbol}:
            return _from_expression(name, expression, symbol)
        return _Resolved(name, None, None, _vectorised(f))
    raise ActivationError(
        "activation must be an Activation, a spec string, a sympy expression in x or a callable, "
        f"got {type(f).__name__}"
    )


def _check_positive_near_zero(f: _Resolved) -> float:
    """f(0), after checking that it is finite and > 0 and that f > 0 at +-1e-3, +-1e-2."""
    value = float(f.evaluate(np.zeros(1))[0])
    if not (math.isfinite(value) and value > 0):
        raise ActivationError(f"activation {f.name}: f(0) must be finite and > 0, got {value!r}")
    around = f.evaluate(np.array(_POSITIVITY_POINTS))
    if not np.all(np.isfinite(around) & (around > 0)):
        raise ActivationError(
            f"activation {f.name}: f must be positive near 0, got f = "
            f"{around.tolist()} at x = {list(_POSITIVITY_POINTS)}"
        )
    return value


# ---- Taylor coefficients at 0, exactly: one-sided sympy limits ----


def _one_sided_derivatives(
    expression: sp.Basic, symbol: sp.Symbol, order: int
) -> tuple[sp.Basic, sp.Basic]:
    """(left, right) limits of the order-th derivative at 0.

    x = +-h with h > 0 resolves a Piecewise whose breakpoint is 0, so each side is differentiated
    as the branch that holds there; by the mean value theorem the one-sided limit of f^(k) is the
    one-sided k-th derivative where f^(k-1) is continuous at 0.
    """
    h = sp.Symbol("h", positive=True)
    values = []
    for side in (-1, 1):
        branch = expression.subs(symbol, side * h)
        try:
            values.append(sp.limit(sp.diff(branch, h, order) * side**order, h, 0, "+"))
        except (NotImplementedError, ValueError, TypeError):
            values.append(sp.nan)
    return values[0], values[1]


def _agree(left: sp.Basic, right: sp.Basic) -> bool:
    """Both finite, real and equal (exactly, or to _SAME relative where they are floats)."""
    if not all(v.is_finite and v.is_real for v in (left, right)):
        return False
    difference = sp.simplify(left - right)
    if difference == 0:
        return True
    if difference.is_number:
        return abs(float(difference)) <= _SAME * max(1.0, abs(float(left)), abs(float(right)))
    return False


def exact_coefficients(
    expression: sp.Basic, symbol: sp.Symbol, name: str
) -> tuple[sp.Basic, sp.Basic, sp.Basic | None, sp.Basic | None]:
    """(f(0), f'(0), f''(0), f'''(0)) as sympy values (None where a derivative does not exist).

    The value at 0 and the one-sided limits of f and f' must agree (else `ActivationError`
    naming f); f'' and f''' are None where their one-sided limits differ or are infinite.
    Parameters such as c may stay symbolic.

    >>> x = sp.Symbol("x", real=True)
    >>> exact_coefficients(sp.Piecewise((sp.exp(x), x < 0), (1 + x, True)), x, "elu:1")
    (1, 1, None, None)
    """
    value = expression.subs(symbol, 0)
    left, right = _one_sided_derivatives(expression, symbol, 0)
    if not (_agree(left, value) and _agree(right, value)):
        raise ActivationError(
            f"activation {name}: f must be continuous at 0, got f(0) = {value}, one-sided limits "
            f"{left} (left) and {right} (right)"
        )
    derivatives: list[sp.Basic | None] = []
    for order in (1, 2, 3):
        left, right = _one_sided_derivatives(expression, symbol, order)
        if not _agree(left, right):
            if order == 1:
                raise ActivationError(
                    f"activation {name}: f must be differentiable at 0, got one-sided "
                    f"derivatives {left} (left) and {right} (right)"
                )
            break
        derivatives.append(right)
    derivatives += [None] * (3 - len(derivatives))
    return (value, *derivatives)


# ---- Taylor coefficients at 0, numerically: difference quotients with Richardson ----

_FIRST_STEP = 0.1  # largest step h of the difference quotients: f is evaluated on [-0.3, 0.3]
_HALVINGS = 6  # steps h, h/2, ..., h/2^6
# Measured errors of the extrapolated one-sided derivatives (exp(x), exp(3x), 1 + tanh(x),
# (1 + x)^2, 1/(1 + x + x^2), elu's branches) are below 3e-13, 5e-10 and 8e-7 (orders 1, 2, 3)
# relative to max(1, |f^(k)(0)/f(0)|). Each side must converge and the sides agree to these
# tolerances, ~100 times wider:
_NUMERIC_TOLERANCE = {1: 1e-10, 2: 1e-7, 3: 1e-4}


def _richardson(estimates: np.ndarray) -> tuple[float, float]:
    """Richardson extrapolation of estimates at steps h/2^j whose error is a power series in h:
    (extrapolated value, |difference of the last two diagonal entries| as its error)."""
    table = [np.asarray(estimates, dtype=float)]
    for level in range(1, len(estimates)):
        factor = 2.0**level
        previous = table[-1]
        table.append((factor * previous[1:] - previous[:-1]) / (factor - 1.0))
    return float(table[-1][0]), float(abs(table[-1][0] - table[-2][-1]))


def _one_sided_estimates(evaluate, order: int) -> tuple[tuple[float, float], tuple[float, float]]:
    """((value, error estimate) from the left, from the right) of the order-th derivative at 0:
    forward differences on each side (each side of a Piecewise f is smooth), Richardson."""
    steps = _FIRST_STEP / 2.0 ** np.arange(_HALVINGS + 1)  # (J,)
    binomial = np.array([(-1) ** (order - j) * math.comb(order, j) for j in range(order + 1)])
    sides = []
    for side in (-1, 1):
        values = evaluate(side * steps[:, None] * np.arange(order + 1))  # (J, order + 1)
        sides.append(_richardson(side**order * (values @ binomial) / steps**order))
    return sides[0], sides[1]


def _numeric_coefficients(f: _Resolved, f0: float) -> tuple[float, float | None, float | None]:
    """The first three derivatives at 0 over f(0) from difference quotients (None where one does
    not exist). Accuracy (f analytic on each side of 0 on [-0.3, 0.3], derivatives of moderate
    size): about 1e-12 relative for the first, 1e-9 for the second, 1e-6 for the third."""

    def normalised(x: np.ndarray) -> np.ndarray:
        values = f.evaluate(x) / f0
        if not np.all(np.isfinite(values)):
            raise ActivationError(
                f"activation {f.name}: f must be finite on [-{3 * _FIRST_STEP:g}, "
                f"{3 * _FIRST_STEP:g}] to be differentiated numerically"
            )
        return values

    coefficients: list[float | None] = []
    for order in (1, 2, 3):
        (left, left_error), (right, right_error) = _one_sided_estimates(normalised, order)
        tolerance = _NUMERIC_TOLERANCE[order] * max(1.0, abs(left), abs(right))
        converged = max(left_error, right_error) <= tolerance
        if not (converged and abs(left - right) <= tolerance):
            if order == 1:
                raise ActivationError(
                    f"activation {f.name}: f must be differentiable at 0, got one-sided "
                    f"derivative estimates {left:.6g} (left) and {right:.6g} (right)"
                    + ("" if converged else " that do not converge")
                )
            break
        coefficients.append((left + right) / 2.0)
    coefficients += [None] * (3 - len(coefficients))
    return coefficients[0], coefficients[1], coefficients[2]


def activation_coefficients(f) -> ActivationCoefficients:
    """a_f = f'(0)/f(0) of §HE-5.2-ACT, with f(0) and, where they exist, f''(0)/f(0), f'''(0)/f(0).

    Args:
        f: an `Activation`, a spec string (``"elu:0.5"``), a sympy expression in one symbol, or a
            callable. A callable is first called on a sympy symbol (``lambda x: (1 + x)**2``
            works); if that fails it is differentiated numerically: forward differences on
            each side of 0 with Richardson extrapolation, the two sides required to agree
            (central differences would average over a kink such as elu's in f''); accuracy
            about 1e-12 relative for a, 1e-9 for b, 1e-6 for t.

    Raises:
        ActivationError: (a ValueError, one line naming f) f(0) not finite or <= 0; f not
            positive at +-1e-3, +-1e-2; f not differentiable at 0.

    >>> activation_coefficients("quadratic:0.5")
    ActivationCoefficients(a=1.0, f0=1.0, b=0.5, t=0.0)
    >>> activation_coefficients("elu:0.8")
    ActivationCoefficients(a=0.8, f0=1.0, b=None, t=None)
    >>> activation_coefficients("f:1 + abs(x)")
    Traceback (most recent call last):
    ...
    icl_verify.activations.ActivationError: activation 'f:1 + abs(x)': f must be differentiable \
at 0, got one-sided derivatives -1 (left) and 1 (right)
    """
    resolved = _resolve(f)
    f0 = _check_positive_near_zero(resolved)
    if resolved.expression is None:
        a, b, t = _numeric_coefficients(resolved, f0)
        return ActivationCoefficients(a=a, f0=f0, b=b, t=t)
    value, *derivatives = exact_coefficients(resolved.expression, resolved.symbol, resolved.name)
    a, b, t = (None if v is None else float(v) / float(value) for v in derivatives)
    return ActivationCoefficients(a=a, f0=float(value), b=b, t=t)


# ---- steps of the two-head predictor ----


def _finite(name: str, value) -> np.ndarray:
    """value as a float array; a one-line ValueError naming it unless all finite real numbers."""
    try:
        array = None if isinstance(value, bool | np.bool_) else np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        array = None
    if array is None or not np.all(np.isfinite(array)):
        shown = repr(value) if np.ndim(value) == 0 else str(np.asarray(value).ravel()[:5].tolist())
        raise ValueError(f"{name} must be finite real numbers, got {shown}")
    return array


def _as_result(array: np.ndarray):
    return float(array) if array.ndim == 0 else array


def first_order_step(f, omega, mu):
    """Table 1's eta_eff = 2 a_f omega mu: the two heads (omega, mu), (-omega, -mu) are debiased
    GD (4.11) with this step to first order in omega (§HE-5.2-ACT).

    omega and mu broadcast; a float for scalars, else an array.

    >>> round(first_order_step("quadratic:0.5", 0.2882, 1.7561), 4)
    1.0122
    """
    a = activation_coefficients(f).a
    return _as_result(2.0 * a * _finite("omega", omega) * _finite("mu", mu))


def second_order_step(f, omega, mu, d: int):
    """The kernel-mean step to second order: 2 omega mu [a + (t - a b)(d + 2) omega^2 / 2].

    = 2 a omega mu [1 + (t/a - b)(d + 2) omega^2/2], the series of `kernel_mean_step` with error
    O(omega^5) (derivation "normalised_activation", §HE-5.2-ACT). Needs f three times
    differentiable at 0; else `ActivationError` (e.g. elu, whose f'' jumps at 0).

    >>> round(second_order_step("softmax", 0.2, 2.5, 5), 12)
    1.0
    >>> round(second_order_step("tanh", 0.2, 2.5, 5), 4)
    0.72
    """
    coefficients = activation_coefficients(f)
    if coefficients.t is None:
        raise ActivationError(
            f"activation {_resolve(f).name}: the second-order step needs f''(0) and f'''(0), "
            "which do not exist; use kernel_mean_step"
        )
    d = _positive_int("d", d)
    omega, mu = _finite("omega", omega), _finite("mu", mu)
    a, b, t = coefficients.a, coefficients.b, coefficients.t
    return _as_result(2.0 * omega * mu * (a + (t - a * b) * (d + 2) * omega**2 / 2.0))


# ---- the kernel mean, by quadrature ----

_R_NODES = 128  # generalised Gauss-Laguerre nodes for r ~ chi^2_d (those of weight > cut)
_R_WEIGHT_CUT = 1e-18  # r nodes of smaller (normalised) weight are dropped: they add < 1e-16
_PANEL = 0.5  # width of the Gauss-Legendre panels in z = s / sqrt(r); 0 is a panel edge
_PANEL_NODES = 16
_Z_MARGIN = 10.0  # panels reach |z| = 10 + max |omega| sqrt(r): e^-50 beyond the shifted peak
_TAIL = 1e-14  # the outermost panels must carry less than this share of each integral
_CHUNK = 2_000_000  # floats per (omega, r, z) block


def _chi_square_nodes(d: int) -> tuple[np.ndarray, np.ndarray]:
    """Nodes r and weights (summing to 1) of E_r g(r), r ~ chi^2_d: u = r/2 ~ Gamma(d/2)."""
    u, weights = roots_genlaguerre(_R_NODES, d / 2.0 - 1.0)
    weights = weights / weights.sum()
    keep = weights > _R_WEIGHT_CUT
    return 2.0 * u[keep], weights[keep]


def _normal_nodes(half_width: float) -> tuple[np.ndarray, np.ndarray]:
    """Composite Gauss-Legendre nodes z and weights x phi(z) on [-Z, Z], mirror-symmetric."""
    panels = math.ceil(half_width / _PANEL)
    base, base_weights = roots_legendre(_PANEL_NODES)  # on [-1, 1]
    left_edges = _PANEL * np.arange(panels)  # (P,)
    positive = (left_edges[:, None] + _PANEL * (base + 1.0) / 2.0).ravel()  # (P * n,)
    weights = np.tile(base_weights * _PANEL / 2.0, panels)
    z = np.concatenate([-positive[::-1], positive])  # (2 P n,)
    weights = np.concatenate([weights[::-1], weights]) * np.exp(-z * z / 2) / math.sqrt(2 * math.pi)
    return z, weights


def _tilted_means(f: _Resolved, omega: np.ndarray, r: np.ndarray) -> np.ndarray:
    """A(omega, r) = E_s[s f(omega s)] / E_s[f(omega s)], s ~ N(0, r): (len(omega), len(r))."""
    root_r = np.sqrt(r)  # (R,)
    z, weights = _normal_nodes(_Z_MARGIN + np.max(np.abs(omega)) * root_r.max())  # (Z,), (Z,)
    edge = np.abs(z) > z.max() - _PANEL  # the outermost panels
    out = np.empty((omega.size, r.size))
    rows = max(1, _CHUNK // (r.size * z.size))
    for start in range(0, omega.size, rows):
        block = omega[start : start + rows]
        values = f.evaluate(block[:, None, None] * root_r[:, None] * z)  # (n, R, Z)
        mass = values * weights  # (n, R, Z)
        total = mass.sum(axis=2)  # (n, R): E f(omega s)
        first = (mass * z).sum(axis=2)  # (n, R): E[z f(omega s)]
        tail = np.abs(mass[:, :, edge]).sum(axis=2) + np.abs(mass * z)[:, :, edge].sum(axis=2)
        if not (np.all(np.isfinite(values)) and np.all(total > 0)):
            raise ValueError(
                f"omega must keep f(omega s) finite and E f(omega s) > 0 for activation {f.name} "
                f"(|s| up to {z.max() * root_r.max():.3g}), got overflow or E f <= 0 at omega in "
                f"[{block.min():g}, {block.max():g}]"
            )
        if np.any(tail > _TAIL * (total + np.abs(first))):
            raise ValueError(
                f"omega is too large for the kernel-mean quadrature of activation {f.name}: "
                f"f(omega s) is not negligible at the edge, omega in [{block.min():g}, "
                f"{block.max():g}]"
            )
        out[start : start + rows] = root_r * first / total
    return out


def kernel_mean_step(f, omega, mu, d: int):
    """The step eta_km = E_r[r eta(r)]/d of the two heads (omega, mu), (-omega, -mu) as L -> oo.

    eta(r) = mu E_s[s w(s)] / r with w(s) = f(omega s)/E f(omega s') - f(-omega s)/E f(-omega s'),
    s ~ N(0, r), r = ||x_q||^2 ~ chi^2_d (§HE-5.2-ACT): the least-squares step of debiased GD
    fitted to the model's L -> infinity predictions.

    Quadrature: E_s by composite Gauss-Legendre in z = s/sqrt(r) (panels of width 0.5 with an
    edge at 0, where a Piecewise f such as elu has its kink; the outermost panels are checked to
    carry < 1e-14 of each integral), E_r by 128-node generalised Gauss-Laguerre. Accuracy: below
    3e-13 relative for f analytic on each side of 0 and |omega| <= 1, d = 1..100 (tested
    against the closed forms of the softmax and the quadratic family, c <= 1); it degrades where
    r eta(r) varies on a scale of r below ~1 (quadratic:1 at omega = 2: 3e-7 at d = 1, 4e-9 at
    d = 5). f(omega s) must stay finite in float64 for |s| up to (10 + |omega| sqrt(r)) sqrt(r),
    r up to the chi^2_d quantile 1 - 1e-18 (else ValueError).

    Args:
        f: the activation (as for `activation_coefficients`; only f > 0 near 0 is required).
        omega, mu: the heads' KQ and OV scales (arrays broadcast); d: the dimension.

    >>> round(kernel_mean_step("softmax", 0.2, 2.5, 5), 12)
    1.0
    >>> round(kernel_mean_step("quadratic:0.5", 0.2882, 1.7561, 5), 4)
    0.8876
    """
    resolved = _resolve(f)
    _check_positive_near_zero(resolved)
    d = _positive_int("d", d)
    omega, mu = np.broadcast_arrays(_finite("omega", omega), _finite("mu", mu))
    r, weights = _chi_square_nodes(d)  # (R,), (R,)
    scales = omega.ravel()  # (n,)
    with np.errstate(all="ignore"):
        tilted = _tilted_means(resolved, np.concatenate([scales, -scales]), r)  # (2n, R)
    difference = tilted[: scales.size] - tilted[scales.size :]  # (n, R): r eta(r) / mu
    step = mu.ravel() * (difference @ weights) / d  # (n,)
    return _as_result(step.reshape(omega.shape))


#: Table 1 of the paper (reference §HE-5.2-ACT; columns in the reference's reconstructed order,
#: which matches the activation specs of HE-5.2-ACT family by family): per activation spec of
#: `icl_verify.activations` omega, mu and eta_eff = 2 a_f omega mu.
PAPER_TABLE_1 = {
    "softmax": (0.1267, 3.5006, 0.8871),
    "tanh": (0.1504, 3.3362, 1.0035),
    "elu:0.5": (0.3677, 2.3963, 0.8810),
    "elu:0.8": (0.2411, 2.2819, 0.8802),
    "elu:1": (0.1979, 2.2221, 0.8794),
    "quadratic:0.5": (0.2882, 1.7561, 1.0122),
    "quadratic:0.8": (0.1810, 1.7487, 1.0128),
    "quadratic:1": (0.1452, 1.7448, 1.0132),
}
