"""The Monte Carlo claims at smoke size: they run, and their rules catch deliberately wrong theory.

HE-P4.1 (approximate loss), HE-4.9 / HE-4.12 / HE-T4.2i (predictors), HE-4.3-RISK and
HE-T4.2iii (risks). At smoke size a verdict may be inconclusive; these tests check that no
claim disagrees where the theory holds, that each rule fails on a wrong prediction, and
the measurements against limits derived here.
"""

import math

import numpy as np
import pytest
import torch
from icl_verify.numerics.data import sample_linear_regression
from icl_verify.validation.cache import ArtefactCache
from icl_verify.validation.claim import DISAGREES, Estimate, Measurement, Prediction, evaluate
from icl_verify.validation.claims.he2025.approximation import CLAIM_P41
from icl_verify.validation.claims.he2025.predictors import (
    CLAIM_49,
    CLAIM_412,
    CLAIM_T42I,
    _manifold_trials,
    relative_prediction_gap,
)
from icl_verify.validation.claims.he2025.risks import CLAIM_43, CLAIM_T42III
from icl_verify.validation.presets import claim_params
from icl_verify.validation.runtime import Runtime

CLAIMS = {c.id: c for c in (CLAIM_P41, CLAIM_49, CLAIM_412, CLAIM_T42I, CLAIM_43, CLAIM_T42III)}


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


@pytest.mark.parametrize("claim_id", ["HE-P4.1", "HE-4.9", "HE-T4.2i", "HE-4.3-RISK", "HE-T4.2iii"])
def test_claims_that_hold_do_not_disagree(runs, claim_id):
    verdicts = _verdicts(claim_id, *runs[claim_id])
    assert DISAGREES not in verdicts.values(), verdicts


def test_p41_gap_matches_the_small_omega_limit_and_wrong_order_fails(runs):
    params, prediction, measurement = runs["HE-P4.1"]
    data = measurement.figure_data
    d, sigma2, omega = params["d"], params["sigma2"], params["gap_omega"]
    D = d * (1 + sigma2)
    # Limit derived from the exact dGD risk at eta* = L/(L+D), sigma2 + (D+1)/(L+D), minus the
    # omega -> 0 value of Ltilde on the manifold, sigma2 + D/(L+D): gap -> 1/(L+D). The finite
    # omega allowance (1 + delta), |delta| <= 2 d omega^2 e^{d omega^2}, is slope_tolerance's.
    limit = 1.0 / (data["L"] + D)
    allowance = 2 * d * omega**2 * math.exp(d * omega**2) * limit
    assert np.all(np.abs(data["gap"] - limit) <= allowance + 4 * data["gap_se"])
    wrong = _verdicts("HE-P4.1", params, _with_values(prediction, gap_slope=-0.5), measurement)
    assert wrong["gap_slope"] == DISAGREES


def test_49_catches_a_split_with_the_wrong_group_sum(runs):
    params, prediction, measurement = runs["HE-4.9"]
    prompts = sample_linear_regression(
        256, params["d"], params["L"], params["sigma2"],
        generator=torch.Generator().manual_seed(1), dtype=torch.float64,
    )  # fmt: skip
    omega, mu, omega_heads, mu_heads = _manifold_trials(params)[0]
    # A 1% error in the positive group's sum must show far above the rounding tolerance.
    wrong_mu = np.where(omega_heads > 0, 1.01 * mu_heads, mu_heads)
    gap = relative_prediction_gap(omega_heads, wrong_mu, omega, mu, prompts)
    wrong = Measurement({"prediction_gap": Estimate(np.array([gap]), 0.0, "bound")})
    verdicts = _verdicts("HE-4.9", params, Prediction({"prediction_gap": np.zeros(1)}), wrong)
    assert verdicts["prediction_gap"] == DISAGREES


def test_412_true_minimum_lies_above_the_approximate_one_and_wrong_omega_fails(runs):
    params, prediction, measurement = runs["HE-4.12"]
    # The Monte Carlo profile is the true loss; at omega = 1/sqrt(d) the reference measures
    # MC - Ltilde = 0.036 at L = 40, so the true minimum must lie above Ltilde* (4 SE).
    loss = measurement.values["loss_opt"]
    assert loss.value - 4 * loss.error > prediction.values["loss_opt"]
    wrong = _with_values(prediction, omega_opt=0.3)  # far below the grid's minimum
    assert _verdicts("HE-4.12", params, wrong, measurement)["omega_opt"] == DISAGREES


def test_t42i_wrong_orders_fail(runs):
    params, prediction, measurement = runs["HE-T4.2i"]
    wrong = _with_values(prediction, omega_slope=1.0, length_slope=-1.0)
    verdicts = _verdicts("HE-T4.2i", params, wrong, measurement)
    assert verdicts == {"omega_slope": DISAGREES, "length_slope": DISAGREES}


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
