"""The Monte Carlo claims of the kernel-sum predictor at smoke size, against limits derived here.

HE-P4.1 (approximate loss), HE-4.9 / HE-4.12 / HE-T4.2i (predictors). That each claim runs,
round-trips, redraws and rejects its declared wrong prediction is
tests/validation/test_registry_claims.py; here: no claim disagrees where the theory holds,
the measurements sit where the mathematics puts them, and the rules catch errors that the
declared wrong predictions do not exercise.
"""

import math

import numpy as np
import pytest
from icl_verify.validation.claims.he2025.approximation import CLAIM_P41
from icl_verify.validation.claims.he2025.predictors_dgd_gap import CLAIM_T42I
from icl_verify.validation.claims.he2025.predictors_manifold import (
    CLAIM_49,
    ManifoldPredictionParams,
    draw_manifold_points,
)
from icl_verify.validation.claims.he2025.predictors_single_head import CLAIM_412
from icl_verify.validation.estimates import DISAGREES

CLAIMS = {c.id: c for c in (CLAIM_P41, CLAIM_49, CLAIM_412, CLAIM_T42I)}






@pytest.mark.parametrize("claim_id", ["HE-P4.1", "HE-4.9", "HE-T4.2i"])
def test_claims_that_hold_do_not_disagree(at_smoke, claim_id):
    verdicts = CLAIMS[claim_id].verdicts(*at_smoke(CLAIMS[claim_id]))
    assert DISAGREES not in verdicts.values(), verdicts


def test_p41_gap_matches_the_small_omega_limit(at_smoke):
    params, _, measurement = at_smoke(CLAIM_P41)
    data = measurement.figure_data
    d, omega, D = params.d, params.gap_omega, params.setting.D
    # Limit derived from the exact dGD risk at eta* = L/(L+D), sigma2 + (D+1)/(L+D), minus the
    # omega -> 0 value of Ltilde on the manifold, sigma2 + D/(L+D): gap -> 1/(L+D). The finite
    # omega allowance (1 + delta), |delta| <= 2 d omega^2 e^{d omega^2}, is the slope bias's.
    limit = 1.0 / (data["L"] + D)
    allowance = 2 * d * omega**2 * math.exp(d * omega**2) * limit
    assert np.all(np.abs(data["gap"] - limit) <= allowance + 4 * data["gap_se"])


def test_49_design_is_a_point_of_the_manifold():
    # Every trial: a positive and a negative head, group sums +-mu*(omega), dummies at mu = 0.
    points = draw_manifold_points(ManifoldPredictionParams(n_trials=20, H_max=6, n_prompts=1))
    for omega, mu, w, m in zip(
        points.omega, points.mu, points.omega_heads, points.mu_heads, strict=True
    ):
        assert 2 <= w.size <= 6 and set(np.sign(w)) >= {1.0, -1.0}
        assert np.isclose(m[w > 0].sum(), mu) and np.isclose(m[w < 0].sum(), -mu)
        assert np.all(m[w == 0] == 0) and np.all(np.abs(w[w != 0]) == omega)


def test_412_true_minimum_lies_above_the_approximate_one(at_smoke):
    _, prediction, measurement = at_smoke(CLAIM_412)
    # The Monte Carlo profile is the true loss; at omega = 1/sqrt(d) the reference measures
    # MC - Ltilde = 0.036 at L = 40, so the true minimum must lie above Ltilde* (4 SE).
    loss = measurement.values["loss_opt"]
    assert loss.value - 4 * loss.error > prediction.values["loss_opt"]


def test_t42i_rules_reject_a_wrong_length_order(at_smoke):
    params, prediction, measurement = at_smoke(CLAIM_T42I)
    # The declared wrong prediction moves the omega order; the L order has its own rule.
    wrong = CLAIM_T42I.wrong(params, prediction)
    wrong = wrong.with_values(length_slope=-1.0)  # 1/L, not a 1/sqrt(L) fluctuation
    assert CLAIM_T42I.verdicts(params, wrong, measurement) == {
        "omega_slope": DISAGREES,
        "length_slope": DISAGREES,
    }
