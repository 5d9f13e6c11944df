"""The Monte Carlo risk claims (HE-4.3-RISK, HE-T4.2iii) at smoke size, and their parameters.

The registry test (test_registry_claims.py) runs them, redraws their figures and feeds them
their declared wrong predictions. Here: no check disagrees where the theory holds; each rule
is sharp enough to refuse a plausible slip on its own; the parameters refuse sizes the
measurement cannot use.
"""

import numpy as np
import pytest
from icl_verify.validation.cache import ArtefactCache
from icl_verify.validation.claim import DISAGREES, Prediction, evaluate
from icl_verify.validation.claims.he2025.risks import (
    CLAIM_43,
    CLAIM_T42III,
    OneStepRiskParams,
    ProportionalParams,
)
from icl_verify.validation.params import ParameterError
from icl_verify.validation.runtime import Runtime

CLAIMS = {c.id: c for c in (CLAIM_43, CLAIM_T42III)}


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Each claim once at smoke size: (params, prediction, measurement)."""
    results = {}
    for claim_id, claim in CLAIMS.items():
        params = claim.presets["smoke"]
        runtime = Runtime("cpu", 0, ArtefactCache(tmp_path_factory.mktemp("cache")))
        results[claim_id] = (params, claim.predict(params), claim.measure(params, runtime))
    return results


def _verdicts(claim_id, params, prediction, measurement):
    checks = CLAIMS[claim_id].checks(params)
    return {
        r.check.quantity: r.judgement.verdict for r in evaluate(checks, prediction, measurement)
    }


def _with_values(prediction, **values):
    return Prediction({**prediction.values, **values}, prediction.figure_data)


@pytest.mark.parametrize("claim_id", ["HE-4.3-RISK", "HE-T4.2iii"])
def test_claims_that_hold_do_not_disagree(runs, claim_id):
    verdicts = _verdicts(claim_id, *runs[claim_id])
    assert DISAGREES not in verdicts.values(), verdicts


def test_43_risk_swapped_formulas_fail_in_both_checks(runs):
    params, prediction, measurement = runs["HE-4.3-RISK"]
    # Swapping the vanilla and debiased risks is wrong by ~0.1 at d=2, L=3.
    wrong = _with_values(
        prediction, gd_risk=prediction.values["dgd_risk"], dgd_risk=prediction.values["gd_risk"]
    )
    assert set(_verdicts("HE-4.3-RISK", params, wrong, measurement).values()) == {DISAGREES}


def test_43_measures_the_optimal_steps_written_out_here(runs):
    params, _, measurement = runs["HE-4.3-RISK"]
    steps = measurement.figure_data["steps"].reshape(len(params.cases), -1)  # (cases, steps)
    for (d, L), row in zip(params.cases, steps, strict=True):
        D = d * (1 + params.sigma2)
        np.testing.assert_allclose(row, [*params.etas, L / (L + D + 1), L / (L + D)], rtol=1e-15)


def test_t42iii_gd_limit_in_place_of_bayes_fails(runs):
    params, prediction, measurement = runs["HE-T4.2iii"]
    wrong = _with_values(prediction, bayes_risk=prediction.values["gd_risk"])
    assert _verdicts("HE-T4.2iii", params, wrong, measurement)["bayes_risk"] == DISAGREES


@pytest.mark.parametrize(
    "change, field",
    [
        (dict(n_prompts=(8192,)), "n_prompts"),
        (dict(cases=((5, 40, 1),)), "cases"),
        (dict(etas=(-0.1,)), "etas"),
        (dict(cases=((0, 40), (2, 3))), "cases"),
    ],
)
def test_one_step_parameters_refuse_unusable_sizes(change, field):
    with pytest.raises(ParameterError, match=field):
        OneStepRiskParams(**{**CLAIM_43.presets["smoke"].as_json(), **change})


@pytest.mark.parametrize(
    "change, field",
    [
        (dict(cases=((0.3, 0.1),)), "d_values / xi"),  # L = 8 / 0.3 is not an integer
        (dict(d_values=(16, 16)), "d_values"),
        (dict(cases=((0.125, 0.0),)), "cases"),  # the Bayes comparison needs sigma2 > 0
    ],
)
def test_proportional_parameters_refuse_unusable_sizes(change, field):
    with pytest.raises(ParameterError, match=field):
        ProportionalParams(**{**CLAIM_T42III.presets["smoke"].as_json(), **change})
