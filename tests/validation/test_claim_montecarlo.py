"""The Monte Carlo risk claims (HE-4.3-RISK, HE-T4.2iii) at smoke size, and their parameters.

The registry test (test_registry_claims.py) runs them, redraws their figures and feeds them
their declared wrong predictions. Here: no check disagrees where the theory holds; each rule
is sharp enough to refuse a plausible slip on its own; the parameters refuse sizes the
measurement cannot use.
"""

import numpy as np
import pytest
from icl_verify.figures.data.risks import RecordedSteps
from icl_verify.validation.claims.he2025.risks import (
    CLAIM_43,
    CLAIM_T42III,
    OneStepRiskParams,
    ProportionalParams,
)
from icl_verify.validation.estimates import DISAGREES
from icl_verify.validation.params import ParameterError

CLAIMS = {c.id: c for c in (CLAIM_43, CLAIM_T42III)}


@pytest.mark.parametrize("claim_id", ["HE-4.3-RISK", "HE-T4.2iii"])
def test_claims_that_hold_do_not_disagree(at_smoke, claim_id):
    verdicts = CLAIMS[claim_id].verdicts(*at_smoke(CLAIMS[claim_id]))
    assert DISAGREES not in verdicts.values(), verdicts


def test_43_risk_swapped_formulas_fail_in_both_checks(at_smoke):
    params, prediction, measurement = at_smoke(CLAIM_43)
    # Swapping the vanilla and debiased risks is wrong by ~0.1 at d=2, L=3.
    wrong = prediction.with_values(
        gd_risk=prediction.values["dgd_risk"], dgd_risk=prediction.values["gd_risk"]
    )
    verdicts = CLAIM_43.verdicts(params, wrong, measurement)
    assert (verdicts["gd_risk"], verdicts["dgd_risk"]) == (DISAGREES, DISAGREES)


def test_43_the_gap_of_the_two_predictors_refuses_the_proportional_regimes_order(at_smoke):
    # at fixed d the gap falls as L^-2; with d growing in proportion to L it would fall as L^-1
    params, prediction, measurement = at_smoke(CLAIM_43)
    assert CLAIM_43.verdicts(params, prediction, measurement)["gap_order"] == "agrees"
    wrong = prediction.with_values(gap_order=-1.0)
    assert CLAIM_43.verdicts(params, wrong, measurement)["gap_order"] == DISAGREES


def test_43_measures_the_optimal_steps_written_out_here(at_smoke):
    params, _, measurement = at_smoke(CLAIM_43)
    steps = RecordedSteps.from_record(measurement.figure_data).steps
    steps = steps.reshape(len(params.cases), -1)  # (cases, steps)
    for (d, L), row in zip(params.cases, steps, strict=True):
        D = d * (1 + params.sigma2)
        np.testing.assert_allclose(row, [*params.etas, L / (L + D + 1), L / (L + D)], rtol=1e-15)


def test_t42iii_gd_limit_in_place_of_bayes_fails(at_smoke):
    params, prediction, measurement = at_smoke(CLAIM_T42III)
    wrong = prediction.with_values(bayes_risk=prediction.values["gd_risk"])
    assert CLAIM_T42III.verdicts(params, wrong, measurement)["bayes_risk"] == DISAGREES


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
