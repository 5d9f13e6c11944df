"""The Monte Carlo claims at smoke size: they run, and their rules catch deliberately wrong theory.

HE-4.3-RISK and HE-T4.2iii (risks); those of the kernel-sum predictor (HE-P4.1, HE-4.9,
HE-4.12, HE-T4.2i) are in tests/validation/test_claims_kernel_sum.py. At smoke size a verdict
may be inconclusive; these tests check that no claim disagrees where the theory holds, that
each rule fails on a wrong prediction, and the measurements against limits derived here.
"""

import pytest
from icl_verify.validation.cache import ArtefactCache
from icl_verify.validation.claim import DISAGREES, Prediction, evaluate
from icl_verify.validation.claims.he2025.risks import CLAIM_43, CLAIM_T42III
from icl_verify.validation.presets import claim_params
from icl_verify.validation.runtime import Runtime

CLAIMS = {c.id: c for c in (CLAIM_43, CLAIM_T42III)}


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Each claim once at smoke size: (params, prediction, measurement)."""
    results = {}
    for claim_id, claim in CLAIMS.items():
        params = claim_params("smoke", claim_id)
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


def test_43_risk_swapped_formulas_fail(runs):
    params, prediction, measurement = runs["HE-4.3-RISK"]
    # Swapping the vanilla and debiased risks is wrong by ~0.1 at d=2, L=3.
    wrong = _with_values(
        prediction, gd_risk=prediction.values["dgd_risk"], dgd_risk=prediction.values["gd_risk"]
    )
    assert set(_verdicts("HE-4.3-RISK", params, wrong, measurement).values()) == {DISAGREES}


def test_t42iii_gd_limit_in_place_of_bayes_fails(runs):
    params, prediction, measurement = runs["HE-T4.2iii"]
    wrong = _with_values(prediction, bayes_risk=prediction.values["gd_risk"])
    assert _verdicts("HE-T4.2iii", params, wrong, measurement)["bayes_risk"] == DISAGREES


@pytest.mark.parametrize("claim_id", list(CLAIMS))
def test_figures_draw_from_stored_numbers(runs, claim_id):
    import matplotlib.pyplot as plt

    figure = CLAIMS[claim_id].figure(*runs[claim_id])
    assert len(figure.axes) >= 1
    plt.close(figure)
