"""The pilot claims at smoke size: they agree, and they disagree with deliberately wrong theory.

HE-T4.2ii (Theorem 4.2(ii)) and HE-MAN part (i) (eq. (4.6)) are exact statements about
Ltilde, measured by an optimiser; a wrong closed form must therefore be caught.
"""

import numpy as np
import pytest
from icl_verify.theory import Setting
from icl_verify.validation.cache import ArtefactCache
from icl_verify.validation.claim import AGREES, DISAGREES, Prediction, evaluate, worst_verdict
from icl_verify.validation.claims.he2025.manifold import CLAIM_MANIFOLD, draw_trials
from icl_verify.validation.claims.he2025.optimality import CLAIM_T42II, omega_grid
from icl_verify.validation.presets import claim_params
from icl_verify.validation.runtime import Runtime


def _run(claim, tmp_path):
    params = claim_params("smoke", claim.id)
    runtime = Runtime("cpu", 0, ArtefactCache(tmp_path / "cache"))
    return params, claim.predict(params), claim.measure(params, runtime)


@pytest.fixture(scope="module")
def t42ii(tmp_path_factory):
    return _run(CLAIM_T42II, tmp_path_factory.mktemp("t42ii"))


@pytest.fixture(scope="module")
def manifold(tmp_path_factory):
    return _run(CLAIM_MANIFOLD, tmp_path_factory.mktemp("manifold"))


def _verdicts(claim, params, prediction, measurement):
    return {r.check.quantity: r.judgement.verdict
            for r in evaluate(claim.checks(params), prediction, measurement)}  # fmt: skip


def _with_values(prediction, **values):
    return Prediction({**prediction.values, **values}, prediction.figure_data)


def test_t42ii_agrees_at_smoke_size(t42ii):
    verdicts = _verdicts(CLAIM_T42II, *t42ii)
    assert set(verdicts.values()) == {AGREES}, verdicts


def test_t42ii_brute_force_reaches_the_limit_from_above(t42ii):
    params, prediction, measurement = t42ii
    setting = Setting(params["d"], params["L"], params["sigma2"])
    # Independent limit: sigma2 + kappa/(1+kappa) written out from d, L, sigma2.
    limit = params["sigma2"] + (1 + params["sigma2"]) * params["d"] / (
        params["L"] + (1 + params["sigma2"]) * params["d"]
    )
    profile = measurement.values["profile"].value
    assert np.all(profile > limit)
    assert np.all(np.diff(profile) > 0)
    assert setting.kappa == pytest.approx((1 + params["sigma2"]) * params["d"] / params["L"])


def test_t42ii_disagrees_with_exp_in_place_of_sinh(t42ii):
    params, prediction, measurement = t42ii
    setting = Setting(params["d"], params["L"], params["sigma2"])
    grid = omega_grid(params)
    # The one-head-style profile (exp instead of sinh) is a plausible slip; it must fail.
    wrong = 1 + setting.sigma2 - 1 / (1 + setting.c * np.exp(setting.d * grid**2) / grid**2)
    verdicts = _verdicts(CLAIM_T42II, params, _with_values(prediction, profile=wrong), measurement)
    assert verdicts["profile"] == DISAGREES


def test_t42ii_disagrees_with_a_wrong_limit_and_a_decreasing_profile(t42ii):
    params, prediction, measurement = t42ii
    setting = Setting(params["d"], params["L"], params["sigma2"])
    wrong = _with_values(
        prediction,
        infimum=setting.sigma2 + setting.kappa,  # forgot the 1/(1+kappa)
        eta=1.0,  # the low-dimensional step instead of 1/(1+kappa)
        increments=-prediction.values["increments"],  # a decreasing profile
        dummy_share=np.full_like(prediction.values["dummy_share"], 0.01),
    )
    verdicts = _verdicts(CLAIM_T42II, params, wrong, measurement)
    assert verdicts == {"profile": AGREES, "infimum": DISAGREES, "eta": DISAGREES,
                        "increments": DISAGREES, "dummy_share": DISAGREES}  # fmt: skip


def test_manifold_agrees_at_smoke_size(manifold):
    verdicts = _verdicts(CLAIM_MANIFOLD, *manifold)
    assert set(verdicts.values()) == {AGREES}, verdicts


def test_manifold_disagrees_with_a_slightly_wrong_mu_star(manifold):
    params, prediction, measurement = manifold
    # mu* off by one part in 1e4 (far above the optimiser's bounds) must be caught.
    scaled = {k: prediction.values[k] * (1 + 1e-4) for k in ("plus_sum", "minus_sum")}
    verdicts = _verdicts(CLAIM_MANIFOLD, params, _with_values(prediction, **scaled), measurement)
    assert verdicts["plus_sum"] == verdicts["minus_sum"] == DISAGREES


def test_manifold_design_has_every_kind_of_head():
    params = claim_params("smoke", "HE-MAN")
    trials = draw_trials(params)
    assert len(trials.signs) == params["n_trials"]
    for signs in trials.signs:
        assert 2 <= signs.size <= params["H_max"]
        assert {1, -1} <= set(signs.tolist())
        assert (0 in signs) == (signs.size >= 3)


def test_manifold_measurement_depends_on_the_seed_only_through_the_starts(tmp_path):
    """Another seed changes the optimiser's starts (and the split of mu within a group),
    but not the verdict: only the group sums are determined."""
    params = claim_params("smoke", "HE-MAN")
    runtime = Runtime("cpu", 12345, ArtefactCache(tmp_path))
    measurement = CLAIM_MANIFOLD.measure(params, runtime)
    prediction = CLAIM_MANIFOLD.predict(params)
    results = evaluate(CLAIM_MANIFOLD.checks(params), prediction, measurement)
    assert worst_verdict(r.judgement.verdict for r in results) == AGREES


def test_figures_draw_from_the_stored_numbers(t42ii, manifold, tmp_path):
    from icl_verify.figures.style import save_figure

    for claim, (params, prediction, measurement) in (
        (CLAIM_T42II, t42ii),
        (CLAIM_MANIFOLD, manifold),
    ):
        path = tmp_path / f"{claim.id}.png"
        save_figure(claim.figure(params, prediction, measurement), path)
        assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_claims_refuse_bad_sizes():
    params = {**claim_params("smoke", "HE-T4.2ii"), "omega_min": 0.0}
    with pytest.raises(ValueError, match="omega_min"):
        CLAIM_T42II.predict(params)
    with pytest.raises(ValueError, match="H must be >= 3"):
        CLAIM_T42II.measure({**claim_params("smoke", "HE-T4.2ii"), "H": 2}, None)
