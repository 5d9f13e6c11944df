"""The agreement rules of a claim's checks: how a predicted value and a measured `Estimate` are
judged (`ZScore`, `Tolerance`, `LogLogSlope`, the one-sided `Inequality` and `BoundTrend`),
and the log-log slope fits whose slopes they judge.

Every rule reduces a comparison to three numbers per element (all >= 0):
the discrepancy |measured - predicted|, the discrepancy it *allows* (a tolerance
argued from a theorem's error term or a solver's accuracy) and the measurement's
*uncertainty* (a multiple of its standard error, or its error bound). Then

    disagrees     if  discrepancy > allowed + uncertainty           (the claim is contradicted)
    inconclusive  if  not disagrees and uncertainty > resolution    (the measurement is too coarse
                                                                     to tell the claim from a
                                                                     claim wrong by `resolution`)
    agrees        otherwise.

An array-valued quantity is judged element by element and takes its worst verdict
(disagrees > inconclusive > agrees); a claim takes the worst verdict of its checks.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from icl_verify.validation.estimates import (
    AGREES,
    DISAGREES,
    INCONCLUSIVE,
    Estimate,
    Judgement,
)

from icl_verify import statistics


def _decide(discrepancy, allowed, uncertainty, resolution) -> Judgement:
    """The three-way decision of the module docstring, worst over array elements."""
    discrepancy, allowed, uncertainty, resolution = (
        np.asarray(a, dtype=float) for a in (discrepancy, allowed, uncertainty, resolution)
    )
    disagrees = ~(discrepancy <= allowed + uncertainty)  # NaN counts as a disagreement
    inconclusive = ~disagrees & (uncertainty > resolution)
    verdict = DISAGREES if disagrees.any() else INCONCLUSIVE if inconclusive.any() else AGREES
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(discrepancy == 0, 0.0, discrepancy / (allowed + uncertainty))
    score = float(np.max(np.where(np.isnan(ratio), np.inf, ratio), initial=0.0))
    return Judgement(verdict, score)


def _critical(discrepancy, uncertainty, per_unit) -> float:
    """The multiple of a rule's tolerance at which its verdict turns between disagrees and not:
    the largest (discrepancy − uncertainty) / per_unit over the elements, where the tolerance
    allows ``per_unit`` times that multiple (0 when every element agrees at no tolerance)."""
    discrepancy, uncertainty, per_unit = np.broadcast_arrays(
        *(np.asarray(a, dtype=float) for a in (discrepancy, uncertainty, per_unit))
    )
    with np.errstate(divide="ignore", invalid="ignore"):
        needed = np.where(discrepancy - uncertainty <= 0, 0.0,
                          (discrepancy - uncertainty) / per_unit)  # fmt: skip
    return float(np.max(np.where(np.isnan(needed), np.inf, needed), initial=0.0))


def _turn(name: str, value: float, rule: float) -> str:
    """`changes_at`'s text: the rule's parameter ``name`` at which the verdict would turn, or
    that no value >= 0 makes it disagree (the measurement is within its error bar).

    >>> _turn("atol", 0.02, 0.05), _turn("atol", 0.0, 0.05)
    ('atol = 0.02 (rule: 0.05)', 'no atol ≥ 0 (within its error bar)')
    """
    if value == 0:
        return f"no {name} ≥ 0 (within its error bar)"
    return f"{name} = {value:.3g} (rule: {rule:.3g})"


def _positive(name: str, value: float, allow_zero: bool = False) -> float:
    value = float(value)
    if not math.isfinite(value) or value < 0 or (value == 0 and not allow_zero):
        bound = ">= 0" if allow_zero else "> 0"
        raise ValueError(f"{name} must be finite and {bound}, got {value!r}")
    return value


def _justified(justification: str) -> str:
    if not justification.strip():
        raise ValueError("justification must say why this rule and tolerance fit the claim")
    return justification


@dataclass(frozen=True)
class ZScore:
    """Monte Carlo agreement: |measured - predicted| <= max_z standard errors.

    Inconclusive when max_z * SE exceeds `resolution` = rel_resolution * |predicted|
    + abs_resolution: the measurement could not have told the prediction from one
    wrong by that much.

    >>> rule = ZScore(max_z=4, rel_resolution=0.05, justification="MC error only")
    >>> estimate = Estimate(1.01, 0.005)
    >>> rule.judge(1.0, estimate).verdict, rule.judge(1.1, estimate).verdict
    ('agrees', 'disagrees')
    >>> rule.judge(1.0, Estimate(1.01, 0.05)).verdict  # 4 SE = 0.2 > 5% of 1.0
    'inconclusive'
    """

    justification: str
    max_z: float = 4.0
    rel_resolution: float = 0.0
    abs_resolution: float = 0.0

    def __post_init__(self) -> None:
        _justified(self.justification)
        _positive("max_z", self.max_z)
        _positive("rel_resolution", self.rel_resolution, allow_zero=True)
        _positive("abs_resolution", self.abs_resolution, allow_zero=True)
        if self.rel_resolution == 0 and self.abs_resolution == 0:
            raise ValueError("ZScore needs rel_resolution > 0 or abs_resolution > 0")

    def describe(self) -> str:
        return f"|z| ≤ {self.max_z:g}"

    def judge(self, predicted, measured: Estimate) -> Judgement:
        predicted = np.asarray(predicted, dtype=float)
        uncertainty = self.max_z * np.asarray(measured.error)
        resolution = self.rel_resolution * np.abs(predicted) + self.abs_resolution
        return _decide(np.abs(measured.value - predicted), 0.0, uncertainty, resolution)

    def changes_at(self, predicted, measured: Estimate) -> str:
        """The number of standard errors at which the verdict would turn (the largest |z|).

        >>> ZScore("MC", rel_resolution=0.1).changes_at(1.0, Estimate([1.2, 1.05], 0.1))
        'max_z = 2 (rule: 4)'
        """
        z = _critical(np.abs(measured.value - np.asarray(predicted, dtype=float)), 0.0,
                      np.asarray(measured.error))  # fmt: skip
        return _turn("max_z", z, self.max_z)


@dataclass(frozen=True)
class Tolerance:
    """Deterministic agreement: |measured - predicted| <= rtol |predicted| + atol (+ error bound).

    For exact computations (a solver's optimum, an ODE solution): the tolerance is
    argued from a theorem's error term or the solver's accuracy, and the measurement's
    error (a bound) is added to it. Inconclusive when that error alone exceeds the
    tolerance: the solver was not accurate enough to test the claim.

    >>> rule = Tolerance(rtol=1e-6, justification="solver accuracy 1e-9")
    >>> rule.judge(2.0, Estimate(2.000001, 1e-9, "bound")).verdict
    'agrees'
    >>> rule.judge(2.0, Estimate(2.1, 1e-9, "bound")).verdict
    'disagrees'
    """

    justification: str
    rtol: float = 0.0
    atol: float = 0.0

    def __post_init__(self) -> None:
        _justified(self.justification)
        _positive("rtol", self.rtol, allow_zero=True)
        _positive("atol", self.atol, allow_zero=True)
        if self.rtol == 0 and self.atol == 0:
            raise ValueError("Tolerance needs rtol > 0 or atol > 0")

    def describe(self) -> str:
        terms = ([f"{self.rtol:.3g}·|pred|"] if self.rtol else []) + (
            [f"{self.atol:.3g}"] if self.atol else []
        )
        return "|meas − pred| ≤ " + " + ".join(terms)

    def judge(self, predicted, measured: Estimate) -> Judgement:
        predicted = np.asarray(predicted, dtype=float)
        allowed = self.rtol * np.abs(predicted) + self.atol
        error = np.asarray(measured.error)
        return _decide(np.abs(measured.value - predicted), allowed, error, allowed)

    def changes_at(self, predicted, measured: Estimate) -> str:
        """The tolerance at which the verdict would turn between disagrees and not: this
        rule's tolerance times the largest (|meas − pred| − error) / tolerance.

        >>> Tolerance("chosen", atol=0.05).changes_at(0.0, Estimate(0.02, 0.0, "bound"))
        'atol = 0.02 (rule: 0.05)'
        """
        predicted = np.asarray(predicted, dtype=float)
        factor = _critical(np.abs(measured.value - predicted), np.asarray(measured.error),
                           self.rtol * np.abs(predicted) + self.atol)  # fmt: skip
        if not self.rtol:
            return _turn("atol", factor * self.atol, self.atol)
        if not self.atol:
            return _turn("rtol", factor * self.rtol, self.rtol)
        return _turn("multiple of the tolerance", factor, 1.0)


@dataclass(frozen=True)
class LogLogSlope:
    """Rate agreement: a fitted log-log slope equals the predicted order within atol + max_z SE.

    The measured quantity is a slope from `fit_loglog_slope` (value and the fit's SE);
    the predicted value is the theorem's order. `atol` allows the bias of the
    neglected higher-order terms over the fitted range. Inconclusive when max_z SE > atol.

    >>> rule = LogLogSlope(atol=0.05, justification="next order is omega^4")
    >>> slope = Estimate(2.01, 0.002)
    >>> rule.judge(2.0, slope).verdict, rule.judge(1.0, slope).verdict
    ('agrees', 'disagrees')
    """

    justification: str
    atol: float
    max_z: float = 4.0

    def __post_init__(self) -> None:
        _justified(self.justification)
        _positive("atol", self.atol)
        _positive("max_z", self.max_z)

    def describe(self) -> str:
        return f"|slope − order| ≤ {self.atol:g} + {self.max_z:g}·SE"

    def judge(self, predicted, measured: Estimate) -> Judgement:
        uncertainty = self.max_z * np.asarray(measured.error)
        discrepancy = np.abs(measured.value - np.asarray(predicted, dtype=float))
        return _decide(discrepancy, self.atol, uncertainty, self.atol)

    def changes_at(self, predicted, measured: Estimate) -> str:
        """The allowance of the slope at which the verdict would turn.

        >>> LogLogSlope("next order", atol=0.05).changes_at(2.0, Estimate(2.03, 0.002))
        'atol = 0.022 (rule: 0.05)'
        """
        discrepancy = np.abs(measured.value - np.asarray(predicted, dtype=float))
        atol = _critical(discrepancy, self.max_z * np.asarray(measured.error), 1.0)
        return _turn("atol", atol, self.atol)


def _one_sided(excess, margin, uncertainty) -> Judgement:
    """The three-way decision for a one-sided claim ``excess <= margin``: contradicted beyond
    margin + uncertainty, confirmed when its clearance ``margin - excess`` exceeds the
    uncertainty, inconclusive in between."""
    excess = np.asarray(excess, dtype=float)
    clearance = np.maximum(margin - excess, 0.0)
    return _decide(np.maximum(excess, 0.0), margin, uncertainty, clearance)


_SIDES = ("at_most", "at_least", "within")


def _side(side: str) -> float:
    if side not in _SIDES:
        raise ValueError(f"side must be one of {', '.join(_SIDES)}, got {side!r}")
    return 1.0 if side == "at_most" else -1.0


def _excess(side: str, predicted, measured: Estimate) -> np.ndarray:
    """How far the measured values lie beyond the threshold on the wrong side (negative: on
    the right side); for ``within``, their distance from the predicted value."""
    difference = np.asarray(measured.value, dtype=float) - np.asarray(predicted, dtype=float)
    return np.abs(difference) if side == "within" else _side(side) * difference


@dataclass(frozen=True)
class Inequality:
    """One-sided agreement: the measured value is at most (or at least) the predicted threshold.

    For statements such as "pre-gd ends lower than gd" (a gap >= 0) or "the fraction is at
    least 1 - delta". With ``side="at_most"`` the claim is measured <= predicted + margin:

        disagrees     if  measured - predicted > margin + max_z SE      (the wrong side)
        agrees        if  predicted + margin - measured >= max_z SE     (the right side, clearly)
        inconclusive  otherwise                                         (too close to tell)

    and mirrored for ``side="at_least"`` (measured >= predicted - margin). With
    ``side="within"`` the same decision holds |measured - predicted| <= margin: a band around a
    point reading, whose margin halfway to a competing reading makes the rule reject that
    reading exactly where it confirms its own (e.g. "layer 1 uses all its heads" against "every
    layer uses one head").

    >>> rule = Inequality("at_least", justification="paired Monte Carlo", max_z=3)
    >>> [rule.judge(0.0, Estimate(g, 0.1)).verdict for g in (0.5, 0.1, -0.5)]
    ['agrees', 'inconclusive', 'disagrees']
    >>> band = Inequality("within", justification="halfway to one head", margin=0.5, max_z=3)
    >>> [band.judge(1.0, Estimate(s, 0.05)).verdict for s in (0.9, 0.6, 0.2)]
    ['agrees', 'inconclusive', 'disagrees']
    """

    side: str
    justification: str
    margin: float = 0.0
    max_z: float = 4.0

    def __post_init__(self) -> None:
        _side(self.side)
        _justified(self.justification)
        _positive("margin", self.margin, allow_zero=True)
        _positive("max_z", self.max_z)

    def describe(self) -> str:
        """The rule in one line, its direction in words.

        >>> Inequality("at_least", "paired", max_z=3).describe()
        'meas ≥ pred (agrees 3·SE above, disagrees 3·SE below)'
        >>> Inequality("within", "band", margin=0.5).describe()
        '|meas − pred| ≤ 0.5 (agrees 4·SE inside, disagrees 4·SE outside)'
        """
        z = f"{self.max_z:g}·SE"
        if self.side == "within":
            return f"|meas − pred| ≤ {self.margin:g} (agrees {z} inside, disagrees {z} outside)"
        relation = "≤" if self.side == "at_most" else "≥"
        margin = f" {'+' if self.side == 'at_most' else '−'} {self.margin:g}" if self.margin else ""
        right, wrong = ("below", "above") if self.side == "at_most" else ("above", "below")
        return f"meas {relation} pred{margin} (agrees {z} {right}, disagrees {z} {wrong})"

    def statistic(self, predicted, measured: Estimate) -> str:
        """What the report shows: the element closest to (or beyond) the threshold, in SEs.

        >>> Inequality("at_least", justification="paired").statistic(
        ...     [1.0, 1.0], Estimate([2.2, 16.5], [0.2, 1.0]))
        'closest: 2.2 ± 0.2 vs 1 (2 values in [2.2, 16.5])'
        """
        value = np.atleast_1d(np.asarray(measured.value, dtype=float))
        error = np.broadcast_to(np.asarray(measured.error, dtype=float), value.shape).ravel()
        threshold = np.broadcast_to(np.asarray(predicted, dtype=float), value.shape).ravel()
        value = value.ravel()  # an array of any shape: its elements
        beyond = _excess(self.side, threshold, Estimate(value, error))
        with np.errstate(divide="ignore", invalid="ignore"):
            excess = beyond / np.where(error > 0, error, 1.0)
        i = int(np.nanargmax(excess)) if np.any(~np.isnan(excess)) else 0
        closest = f"{value[i]:.4g} ± {error[i]:.2g} vs {threshold[i]:.4g}"
        if value.size == 1:
            return closest
        return f"closest: {closest} ({value.size} values in [{value.min():.4g}, {value.max():.4g}])"

    def judge(self, predicted, measured: Estimate) -> Judgement:
        excess = _excess(self.side, predicted, measured)
        return _one_sided(excess, self.margin, self.max_z * np.asarray(measured.error))

    def changes_at(self, predicted, measured: Estimate) -> str:
        """The margin at which the verdict would turn to disagrees (0: only a margin below
        zero, a stricter threshold than the prediction, would).

        >>> Inequality("at_most", "bound", margin=0.1).changes_at(1.0, Estimate(1.05, 0.01))
        'margin = 0.01 (rule: 0.1)'
        """
        excess = _excess(self.side, predicted, measured)
        margin = _critical(excess, self.max_z * np.asarray(measured.error), 1.0)
        return _turn("margin", margin, self.margin)


@dataclass(frozen=True)
class BoundTrend:
    """A rate bound up to one constant: ``measured(x) <= C predicted(x)`` (an upper bound,
    ``side="at_most"``) or ``>= c predicted(x)`` (a lower bound) for one C over the grid `x`.

    For "up to constants and logs" theorems (reference chen2024 §4.5): the predicted values
    are the full bound expression (logs included) on the grid x (e.g. sample sizes n), the
    measured ones the risks with their standard errors. The rule fits the least-squares slope
    of ``log(measured / predicted)`` against ``log x`` and asks that it be <= margin (an upper
    bound: no upward trend, so one constant C serves the whole grid; decaying faster than the
    bound is consistent) or >= -margin (a lower bound). The slope's SE propagates the
    measurements' SEs (independent draws per grid point) through the fit; it does not count
    the curvature of log(measured/predicted), which is what `margin` allows for. The decision
    is `Inequality`'s.

    >>> n = np.array([100.0, 300.0, 1000.0, 3000.0])
    >>> rule = BoundTrend("at_most", x=tuple(n), margin=0.1, justification="log factors")
    >>> risk = Estimate(2.0 / n, 0.02 / n)  # decays like 1/n
    >>> rule.judge(n**-0.5, risk).verdict, rule.judge(n**-2.0, risk).verdict
    ('agrees', 'disagrees')
    """

    side: str
    x: tuple[float, ...]
    justification: str
    margin: float = 0.1
    max_z: float = 4.0

    def __post_init__(self) -> None:
        if self.side not in ("at_most", "at_least"):  # a trend bounds one way
            raise ValueError(f"side must be one of at_most, at_least, got {self.side!r}")
        _justified(self.justification)
        _positive("margin", self.margin, allow_zero=True)
        _positive("max_z", self.max_z)
        x = np.asarray(self.x, dtype=float)
        if x.ndim != 1 or x.size < 3 or np.any(~(x > 0)) or np.ptp(np.log(x)) == 0:
            raise ValueError(f"x must hold >= 3 positive values, not all equal, got {self.x!r}")
        object.__setattr__(self, "x", tuple(float(v) for v in x))

    def describe(self) -> str:
        relation, sign = ("≤", "") if self.side == "at_most" else ("≥", "−")
        right, wrong = ("below", "above") if self.side == "at_most" else ("above", "below")
        z = f"{self.max_z:g}·SE"
        return (f"slope of log(meas/pred) vs log x {relation} {sign}{self.margin:g} (agrees {z} "
                f"{right}, disagrees {z} {wrong})")  # fmt: skip

    def trend(self, predicted, measured: Estimate) -> Estimate:
        """Slope of log(measured / predicted) against log x, with its propagated SE."""
        predicted = np.abs(np.asarray(predicted, dtype=float))
        ratio = Estimate(
            np.asarray(measured.value, dtype=float) / predicted,
            np.asarray(measured.error, dtype=float) / predicted,
        )
        return propagated_loglog_slope(self.x, ratio)

    def statistic(self, predicted, measured: Estimate) -> str:
        """What the report shows: the trend and the one constant over the grid.

        >>> n = (10.0, 100.0, 1000.0)
        >>> BoundTrend("at_most", x=n, justification="logs").statistic(
        ...     [1.0, 0.1, 0.01], Estimate([0.5, 0.1, 0.1], 0.01))
        'trend +0.651 ± 0.022 over x in [10, 1000]; C = max meas/pred = 10'
        """
        slope = self.trend(predicted, measured)
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.asarray(measured.value, dtype=float) / np.asarray(predicted, dtype=float)
        constant = (
            f"C = max meas/pred = {np.max(ratio):.3g}"
            if self.side == "at_most"
            else f"c = min meas/pred = {np.min(ratio):.3g}"
        )
        return (
            f"trend {slope.value:+.3g} ± {slope.error:.2g} over x in "
            f"[{min(self.x):g}, {max(self.x):g}]; {constant}"
        )

    def judge(self, predicted, measured: Estimate) -> Judgement:
        slope = self.trend(predicted, measured)
        excess = _side(self.side) * slope.value
        return _one_sided(excess, self.margin, self.max_z * slope.error)

    def changes_at(self, predicted, measured: Estimate) -> str:
        """The margin of the trend at which the verdict would turn to disagrees."""
        slope = self.trend(predicted, measured)
        margin = _critical(_side(self.side) * slope.value, self.max_z * slope.error, 1.0)
        return _turn("margin", margin, self.margin)


Rule = ZScore | Tolerance | LogLogSlope | Inequality | BoundTrend


@dataclass(frozen=True)
class FittedSlope:
    """Least-squares line log y = intercept + slope log x, with the slope's standard error."""

    slope: Estimate
    intercept: float


def fit_loglog_slope(x, y) -> FittedSlope:
    """`icl_verify.statistics.loglog_slope` with the slope as an `Estimate` (its SE from the
    residuals).

    >>> fit = fit_loglog_slope([1.0, 2.0, 4.0, 8.0], [3.0, 12.0, 48.0, 192.0])
    >>> round(fit.slope.value, 12), round(fit.slope.error, 12)
    (2.0, 0.0)
    """
    fit = statistics.loglog_slope(x, y)
    return FittedSlope(Estimate(fit.slope, fit.slope_se), fit.intercept)


def propagated_loglog_slope(x, measured: Estimate) -> Estimate:
    """`icl_verify.statistics.propagated_loglog_slope` of a measured `Estimate`: the slope of
    log|y| on log x with its SE propagated from the points' SEs.

    >>> fit = propagated_loglog_slope([1, 10, 100], Estimate([1, 0.1, 0.01], [0.1, 0.01, 1e-3]))
    >>> round(fit.value, 12), round(fit.error, 4)  # 10% SE per point: sqrt(2) 0.1 / ln(100)
    (-1.0, 0.0307)
    """
    return Estimate(*statistics.propagated_loglog_slope(x, measured.value, measured.error))


def weighted_log_slope(x, measured: Estimate) -> Estimate:
    """The slope of log|y| on x (an exponential rate) by least squares weighted with each
    point's inverse variance ``(SE_i / y_i)^-2`` (the delta method's), and its SE
    ``(sum_i w_i (x_i - xbar_w)^2)^-1/2``: for counts of rare events measured at a few x, where
    a point of few events must not weigh as much as one of many. (Here, not in
    `icl_verify.statistics`, whose code the cached trainings' versions are pinned to.)

    >>> y = np.exp([0.0, -0.5, -1.0])
    >>> fit = weighted_log_slope([0, 1, 2], Estimate(y, 0.1 * y))  # 10% SE: 0.1 in each log
    >>> round(fit.value, 12), round(fit.error, 4)  # 0.1 / sqrt(sum (x - 1)^2) = 0.1 / sqrt(2)
    (-0.5, 0.0707)
    """
    x, value, se = (np.asarray(a, dtype=float) for a in (x, measured.value, measured.error))
    if x.ndim != 1 or not x.shape == value.shape == se.shape or np.unique(x).size < 2:
        raise ValueError(f"x and the estimate must be 1-D of one length, >= 2 distinct x: {x}")
    if not (np.all(np.isfinite(value)) and np.all(value != 0) and np.all(se > 0)):
        raise ValueError(f"values must be finite and nonzero, SEs > 0: {value}, {se}")
    weights = (value / se) ** 2  # 1 / Var(log|y|)
    centred = x - np.sum(weights * x) / np.sum(weights)
    spread = np.sum(weights * centred**2)
    slope = np.sum(weights * centred * np.log(np.abs(value))) / spread
    return Estimate(float(slope), float(1.0 / math.sqrt(spread)))
