"""CZZ-D2's rate of decay of the lost support coordinates, on the numbers of a quick run: the
rules accept the proof's tail exponents and reject the competing readings; too few resolvable
points read inconclusive."""

import math

import numpy as np
import pytest
from icl_verify.validation.claim import evaluate
from icl_verify.validation.claims.chen2024.lemmas import (
    CLAIM_D2,
    D2_PRESETS,
    _loss_rate,
    d2_at_every_c,
)
from icl_verify.validation.estimates import AGREES, DISAGREES, INCONCLUSIVE, Estimate, Measurement

# a quick run of CZZ-D2 (seed set 0 of `icl-verify stability CZZ-D2 --preset quick`): per grid
# point n, the mean number of support coordinates lost per prompt, its SE over the 400 prompts,
# and the failure fraction with its Agresti-Coull SE
N = np.array([29.0, 58.0, 115.0, 229.0, 458.0, 916.0, 1832.0])
LOST = np.array([0.56, 0.26, 0.05, 0.005, 0.0, 0.0, 0.0])
LOST_SE = np.array([0.038985, 0.024901, 0.010911, 0.003531, 0.0, 0.0, 0.0])
FAILURE = np.array([0.41, 0.235, 0.05, 0.005, 0.0, 0.0, 0.0])
FAILURE_SE = np.array([0.0245, 0.0212, 0.0113, 0.0049, 0.0035, 0.0035, 0.0035])


def _judged(prediction, rate: Estimate) -> dict[str, str]:
    values = {"failure": Estimate(FAILURE, FAILURE_SE), "loss_rate": rate, "loss_rate_sharp": rate}
    results = evaluate(CLAIM_D2.checks(D2_PRESETS["quick"]), prediction, Measurement(values))
    return {r.check.quantity: r.judgement.verdict for r in results}


def test_the_quick_rate_lies_between_the_tail_exponents_and_the_competitors_are_rejected():
    params = D2_PRESETS["quick"]
    assert np.array_equal(params.n_values, N)
    rate, fitted = _loss_rate(N, LOST, LOST_SE, LOST * params.reps)
    assert fitted.tolist() == [True, True, True, False, False, False, False]  # >= 5 lost
    assert rate.value == pytest.approx(0.0277, abs=5e-4) and rate.error < 0.003
    prediction = CLAIM_D2.predict(params)
    assert set(_judged(prediction, rate).values()) == {AGREES}
    # the derived Gaussian-tail bound s exp(-n beta^2/(8V)) read as the law: rate 0.0052
    assert _judged(d2_at_every_c(params, prediction), rate)["loss_rate_sharp"] == DISAGREES
    # no dependence on n
    flat = prediction.with_values(loss_rate=0.0, loss_rate_sharp=0.0)
    assert _judged(flat, rate)["loss_rate_sharp"] == DISAGREES
    # a floor above the fastest coordinate's exponent (e.g. the exponent counted twice) fails
    double = prediction.with_values(loss_rate=2 * prediction.values["loss_rate_sharp"])
    assert _judged(double, rate)["loss_rate"] == DISAGREES


def test_fewer_than_two_resolvable_points_give_no_rate_and_an_inconclusive_verdict():
    params = D2_PRESETS["quick"]
    rate, fitted = _loss_rate(N, LOST, LOST_SE, np.array([228.0, 4, 4, 2, 0, 0, 0]))
    assert fitted.sum() == 1 and math.isinf(rate.error)
    verdicts = _judged(CLAIM_D2.predict(params), rate)
    assert verdicts["loss_rate"] == verdicts["loss_rate_sharp"] == INCONCLUSIVE
