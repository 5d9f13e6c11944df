"""Agreement rules: each agrees on a right prediction, disagrees on a wrong one, and says
inconclusive exactly when the measurement's uncertainty exceeds the rule's resolution."""

import numpy as np
import pytest
from icl_verify.validation.claim import Check, evaluate
from icl_verify.validation.estimates import (
    AGREES,
    DISAGREES,
    INCONCLUSIVE,
    Estimate,
    Measurement,
    Prediction,
    worst_verdict,
)
from icl_verify.validation.rules import (
    BoundTrend,
    Inequality,
    LogLogSlope,
    Tolerance,
    ZScore,
    fit_loglog_slope,
)


def _monte_carlo_mean(rng, true_mean, n):
    """Sample mean of n N(true_mean, 1) draws with its standard error (the MC estimate to judge)."""
    draws = true_mean + rng.standard_normal(n)
    return Estimate(draws.mean(), draws.std(ddof=1) / np.sqrt(n))


def test_zscore_agrees_with_the_true_mean_and_rejects_a_wrong_one():
    rng = np.random.default_rng(0)
    estimate = _monte_carlo_mean(rng, 0.5, 40_000)  # SE = 0.005
    rule = ZScore("MC error of a sample mean", max_z=4, rel_resolution=0.1)
    assert rule.judge(0.5, estimate).verdict == AGREES
    # 0.55 is 10 SE away: a deliberately wrong prediction must be rejected.
    assert rule.judge(0.55, estimate).verdict == DISAGREES


def test_zscore_is_inconclusive_when_four_se_exceed_the_resolution():
    rng = np.random.default_rng(1)
    estimate = _monte_carlo_mean(rng, 0.5, 100)  # SE = 0.1, 4 SE = 0.4 > 10% of 0.5
    rule = ZScore("MC error of a sample mean", max_z=4, rel_resolution=0.1)
    assert rule.judge(0.5, estimate).verdict == INCONCLUSIVE
    # ...but a prediction far beyond 4 SE is still a disagreement, however coarse the sample.
    assert rule.judge(5.0, estimate).verdict == DISAGREES


def test_tolerance_adds_the_error_bound_and_rejects_a_wrong_value():
    rule = Tolerance("solver accurate to 1e-12", rtol=1e-9)
    exact = np.array([1.0, 2.0, 3.0])
    solved = Estimate(exact * (1 + 1e-12), 1e-12, "bound")
    assert rule.judge(exact, solved).verdict == AGREES
    wrong = exact.copy()
    wrong[1] *= 1 + 1e-6  # one element off by 1e-6 > rtol: the whole array disagrees
    judgement = rule.judge(wrong, solved)
    assert judgement.verdict == DISAGREES
    assert judgement.score > 1


def test_tolerance_is_inconclusive_when_the_error_bound_exceeds_it():
    rule = Tolerance("solver accurate to 1e-12", atol=1e-9)
    assert rule.judge(1.0, Estimate(1.0, 1e-6, "bound")).verdict == INCONCLUSIVE


def test_loglog_slope_recovers_a_known_power_and_rejects_a_wrong_order():
    rng = np.random.default_rng(2)
    x = np.geomspace(0.01, 0.1, 12)
    y = 3.0 * x**2 * np.exp(0.01 * rng.standard_normal(x.size))  # slope 2, 1% noise
    fit = fit_loglog_slope(x, y)
    # Independent check of the fit's SE: the noise of log y is 0.01, so
    # SE(slope) = 0.01 / sqrt(sum (log x - mean)^2), and the estimate is within 4 SE of 2.
    spread = np.sqrt(np.sum((np.log(x) - np.log(x).mean()) ** 2))
    assert fit.slope.error == pytest.approx(0.01 / spread, rel=0.5)
    assert abs(fit.slope.value - 2.0) < 4 * 0.01 / spread
    rule = LogLogSlope("next order omega^4", atol=0.05)
    assert rule.judge(2.0, fit.slope).verdict == AGREES
    assert rule.judge(1.0, fit.slope).verdict == DISAGREES  # the t^{-1/2}-type wrong order
    assert rule.judge(2.5, fit.slope).verdict == DISAGREES


def test_loglog_slope_is_inconclusive_when_the_fit_is_too_noisy():
    rule = LogLogSlope("next order omega^4", atol=0.05)
    assert rule.judge(2.0, Estimate(2.0, 0.1)).verdict == INCONCLUSIVE


def test_nan_measurement_disagrees():
    rule = Tolerance("exact", atol=1e-9)
    assert rule.judge(1.0, Estimate(np.nan, 0.0, "bound")).verdict == DISAGREES


def test_inequality_is_decided_by_the_clearance_in_standard_errors():
    at_most = Inequality("at_most", justification="paired Monte Carlo", max_z=2, margin=0.1)
    # claim: measured <= 1.0 + 0.1; SE 0.05, so 2 SE = 0.1
    assert at_most.judge(1.0, Estimate(0.85, 0.05)).verdict == AGREES  # clearance 0.25 > 0.1
    assert at_most.judge(1.0, Estimate(1.05, 0.05)).verdict == INCONCLUSIVE  # clearance 0.05
    assert at_most.judge(1.0, Estimate(1.15, 0.05)).verdict == INCONCLUSIVE  # over by < 2 SE
    assert at_most.judge(1.0, Estimate(1.25, 0.05)).verdict == DISAGREES  # over by 0.15 > 0.1
    at_least = Inequality("at_least", justification="paired Monte Carlo", max_z=2)
    gaps = Estimate(np.array([0.5, 0.3]), np.array([0.1, 0.1]))
    assert at_least.judge(0.0, gaps).verdict == AGREES
    assert at_least.judge(0.0, Estimate(np.array([0.5, -0.3]), 0.1)).verdict == DISAGREES
    assert at_least.judge(0.0, Estimate(np.nan, 0.0)).verdict == DISAGREES


def test_bound_trend_takes_one_constant_and_rejects_a_bound_with_the_wrong_exponent():
    rng = np.random.default_rng(3)
    n = np.geomspace(100, 10_000, 6)
    # risks ~ 3 log(n) / n with 2% Monte Carlo error, against bounds of several orders
    truth = 3 * np.log(n) / n
    risk = Estimate(truth * (1 + 0.02 * rng.standard_normal(n.size)), 0.02 * truth)
    upper = BoundTrend("at_most", x=tuple(n), margin=0.1, justification="log factors")
    assert upper.judge(np.log(n) / n, risk).verdict == AGREES  # the right bound, C = 3
    assert upper.judge(n**-0.5, risk).verdict == AGREES  # looser: decaying faster is consistent
    assert upper.judge(n**-2.0, risk).verdict == DISAGREES  # wrong exponent: ratio grows like n
    assert upper.trend(np.log(n) / n, risk).value == pytest.approx(0.0, abs=0.05)
    lower = BoundTrend("at_least", x=tuple(n), margin=0.1, justification="log factors")
    assert lower.judge(np.log(n) / n, risk).verdict == AGREES
    assert lower.judge(n**-0.5, risk).verdict == DISAGREES  # the risk falls below c n^-1/2
    noisy = Estimate(truth, 0.5 * truth)  # SE of the slope ~ 0.3 > margin
    assert upper.judge(np.log(n) / n, noisy).verdict == INCONCLUSIVE
    assert upper.judge(np.log(n) / n, Estimate(np.full(n.size, np.inf), 0.0)).verdict == DISAGREES


@pytest.mark.parametrize(
    "make",
    [
        lambda: Inequality("below", justification="why"),
        lambda: Inequality("at_most", justification=" "),
        lambda: BoundTrend("at_most", x=(1.0, 2.0), justification="why"),
        lambda: BoundTrend("at_most", x=(1.0, 2.0, -3.0), justification="why"),
        lambda: ZScore("", rel_resolution=0.1),
        lambda: ZScore("why", max_z=-1, rel_resolution=0.1),
        lambda: ZScore("why"),
        lambda: Tolerance("why"),
        lambda: LogLogSlope("why", atol=0.0),
    ],
)
def test_rules_refuse_missing_justification_or_degenerate_tolerances(make):
    with pytest.raises(ValueError):
        make()


def test_claim_verdict_is_the_worst_check():
    checks = (
        Check("a", Tolerance("exact", atol=1e-9)),
        Check("b", Tolerance("exact", atol=1e-9)),
    )
    prediction = Prediction({"a": 1.0, "b": 2.0})
    measurement = Measurement({"a": Estimate(1.0, 0.0, "bound"), "b": Estimate(2.0, 1.0, "bound")})
    verdicts = [r.judgement.verdict for r in evaluate(checks, prediction, measurement)]
    assert verdicts == [AGREES, INCONCLUSIVE]
    assert worst_verdict(verdicts) == INCONCLUSIVE
    assert worst_verdict([AGREES, DISAGREES, INCONCLUSIVE]) == DISAGREES


def test_estimates_refuse_negative_or_nan_errors():
    with pytest.raises(ValueError, match="error must be >= 0"):
        Estimate(1.0, -0.1)
    with pytest.raises(ValueError, match="error must be >= 0"):
        Estimate([1.0, 2.0], [0.1, np.nan])
    with pytest.raises(ValueError, match="error_kind"):
        Estimate(1.0, 0.1, "sd")


@pytest.mark.parametrize("measured", [Estimate([0.93, 1.04, 1.10], [0.01, 0.02, 0.015]),
                                      Estimate(0.7, 0.05), Estimate(1.0005, 0.0)])  # fmt: skip
def test_the_tolerance_a_check_reports_is_where_its_verdict_turns(measured):
    """`changes_at` names the rule's own tolerance at which agrees/inconclusive turns into
    disagrees: a rule with that tolerance 1% larger does not disagree, 1% smaller does."""
    def turning(text: str) -> float:
        return 0.0 if text.startswith("no ") else float(text.split("=")[1].split("(")[0])

    cases = [
        (lambda x: Tolerance("chosen", atol=x), Tolerance("chosen", atol=0.05)),
        (lambda x: Tolerance("chosen", rtol=x), Tolerance("chosen", rtol=0.05)),
        (lambda x: ZScore("MC", max_z=x, rel_resolution=1.0), ZScore("MC", rel_resolution=1.0)),
        (lambda x: LogLogSlope("order", atol=x), LogLogSlope("order", atol=0.05)),
        (lambda x: Inequality("at_most", "bound", margin=x), Inequality("at_most", "bound")),
    ]
    for build, rule in cases:
        if isinstance(rule, ZScore) and not np.all(np.asarray(measured.error) > 0):
            continue  # no standard error: no z
        critical = turning(rule.changes_at(1.0, measured))
        if critical == 0:
            assert build(1e-9).judge(1.0, measured).verdict != DISAGREES
            continue
        assert build(1.01 * critical).judge(1.0, measured).verdict != DISAGREES, rule
        assert build(0.99 * critical).judge(1.0, measured).verdict == DISAGREES, rule
