"""HE-T4.2ii (Theorem 4.2(ii)) at smoke size: an exact statement about Ltilde measured by an
optimiser, so it must agree, and each of its rules must refuse a plausible slip on its own.

Independent source: the limit sigma2 + kappa/(1 + kappa) = sigma2 + D/(L + D) and the
closed-form profile written out here from d, L, sigma2. The registry test
(test_registry_claims.py) runs the claim, redraws the figure and checks its wrong prediction.
"""

import numpy as np
import pytest
from icl_verify.validation.claims.he2025.optimality import CLAIM_T42II, OptimalityParams
from icl_verify.validation.estimates import AGREES, DISAGREES
from icl_verify.validation.params import ParameterError


def _written_out(params):
    """c = (1 + sigma2)/L, D = d (1 + sigma2) and the grid, from the parameters alone."""
    c, D = (1 + params.sigma2) / params.L, params.d * (1 + params.sigma2)
    grid = np.geomspace(params.omega_min, params.omega_max, params.n_omega)
    return c, D, grid


def test_t42ii_agrees_at_smoke_size(at_smoke):
    verdicts = CLAIM_T42II.verdicts(*at_smoke(CLAIM_T42II))
    assert set(verdicts.values()) == {AGREES}, verdicts


def test_t42ii_brute_force_is_the_closed_form_and_reaches_the_limit_from_above(at_smoke):
    params, _, measurement = at_smoke(CLAIM_T42II)
    c, D, grid = _written_out(params)
    closed_form = 1 + params.sigma2 - 1 / (1 + c * np.sinh(params.d * grid**2) / grid**2)
    profile = measurement.values["profile"]
    assert np.all(np.abs(profile.value - closed_form) <= profile.error + 1e-15)
    limit = params.sigma2 + D / (params.L + D)
    assert np.all(profile.value > limit)
    assert np.all(np.diff(profile.value) > 0)
    assert abs(measurement.values["eta"].value - params.L / (params.L + D)) < 1e-5


def test_t42ii_disagrees_with_exp_in_place_of_sinh(at_smoke):
    params, prediction, measurement = at_smoke(CLAIM_T42II)
    c, _, grid = _written_out(params)
    # The one-head-style profile (exp instead of sinh) is a plausible slip; it must fail.
    wrong = 1 + params.sigma2 - 1 / (1 + c * np.exp(params.d * grid**2) / grid**2)
    verdicts = CLAIM_T42II.verdicts(params, prediction.with_values(profile=wrong), measurement)
    assert verdicts["profile"] == DISAGREES


def test_t42ii_disagrees_with_a_wrong_limit_and_a_decreasing_profile(at_smoke):
    params, prediction, measurement = at_smoke(CLAIM_T42II)
    _, D, _ = _written_out(params)
    wrong = prediction.with_values(
        infimum=params.sigma2 + D / params.L,  # kappa: forgot the 1/(1+kappa)
        eta=1.0,  # the low-dimensional step instead of 1/(1+kappa)
        increments=-prediction.values["increments"],  # a decreasing profile
        dummy_share=np.full_like(prediction.values["dummy_share"], 0.01),
    )
    verdicts = CLAIM_T42II.verdicts(params, wrong, measurement)
    assert verdicts == {"profile": AGREES, "infimum": DISAGREES, "eta": DISAGREES,
                        "increments": DISAGREES, "dummy_share": DISAGREES,
                        "eta_order": AGREES}  # fmt: skip


def test_t42ii_step_decrements_have_order_four_not_two(at_smoke):
    params, prediction, measurement = at_smoke(CLAIM_T42II)
    # (4.8) written out: 1/(1+kappa) - 2 omega mu* = kappa d^2 omega^4 / (6 (1+kappa)^2) + ...,
    # so the decrements between neighbouring grid points fall with omega like omega^4.
    assert CLAIM_T42II.verdicts(params, prediction, measurement)["eta_order"] == AGREES
    # A shortfall of order kappa d omega^2 (slope 2, as if the u^2 of sinh(u)/u - 1 were u) fails.
    wrong = prediction.with_values(eta_order=2.0)
    assert CLAIM_T42II.verdicts(params, wrong, measurement)["eta_order"] == DISAGREES


@pytest.mark.parametrize(
    "change, field",
    [
        (dict(omega_min=0.0), "omega_min"),
        (dict(omega_min=0.7), "omega_min must be < omega_max"),
        (dict(H=2), "H"),  # no pattern would hold +, - and dummy heads
        (dict(n_omega=2), "n_omega"),
        (dict(order_u_max=0.02), "order_u_max"),  # one grid point with d omega^2 <= 0.02
    ],
)
def test_t42ii_parameters_refuse_unusable_sizes(change, field):
    with pytest.raises(ParameterError, match=field):
        OptimalityParams(**{**CLAIM_T42II.presets["smoke"].as_json(), **change})
