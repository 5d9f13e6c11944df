"""The trained-model claims HE-OBS1..4 at smoke size, and the shared trained ensemble.

At smoke size (300 Adam steps) the models have not settled, so verdicts may honestly be
"inconclusive" or "disagrees"; these tests check that every claim runs, yields finite records
and a figure, and that each rule fails on a deliberately wrong prediction (a wrong prediction
far outside what any run can produce, so the check must catch it whatever the training did).
"""

import numpy as np
import pytest
from icl_verify.theory import Setting, gd_risk, single_head_optimum
from icl_verify.validation.cache import ArtefactCache
from icl_verify.validation.claim import DISAGREES, VERDICTS, Prediction, evaluate
from icl_verify.validation.claims._trained import _train, trained_ensemble
from icl_verify.validation.claims.he2025.observations import (
    CLAIM_OBS1,
    CLAIM_OBS2,
    CLAIM_OBS3,
    CLAIM_OBS4,
    member_kinds,
    settled_value,
)
from icl_verify.validation.presets import claim_params
from icl_verify.validation.runtime import Runtime

CLAIMS = (CLAIM_OBS1, CLAIM_OBS2, CLAIM_OBS3, CLAIM_OBS4)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    runtime = Runtime("cpu", 0, ArtefactCache(tmp_path_factory.mktemp("obs") / "cache"))
    results = {}
    for claim in CLAIMS:
        params = claim_params("smoke", claim.id)
        results[claim.id] = (params, claim.predict(params), claim.measure(params, runtime))
    return results, runtime


def _verdicts(claim, params, prediction, measurement):
    return {r.check.quantity: r.judgement.verdict
            for r in evaluate(claim.checks(params), prediction, measurement)}  # fmt: skip


def _with(prediction, **values):
    return Prediction({**prediction.values, **values}, prediction.figure_data)


@pytest.mark.parametrize("claim", CLAIMS, ids=lambda c: c.id)
def test_claim_runs_with_finite_records_and_a_figure(claim, runs, tmp_path):
    import matplotlib.pyplot as plt

    params, prediction, measurement = runs[0][claim.id]
    verdicts = _verdicts(claim, params, prediction, measurement)
    assert set(verdicts) == {c.quantity for c in claim.checks(params)}
    assert set(verdicts.values()) <= set(VERDICTS)
    for estimate in measurement.values.values():
        assert np.all(np.isfinite(estimate.value)) and np.all(np.isfinite(estimate.error))
    figure = claim.figure(params, prediction, measurement)
    figure.savefig(tmp_path / f"{claim.id}.png")
    plt.close(figure)
    assert (tmp_path / f"{claim.id}.png").stat().st_size > 10_000


def test_all_claims_share_one_training(runs):
    _, runtime = runs
    folders = [p for p in runtime.cache.root.iterdir() if (p / "result.npz").exists()]
    assert len(folders) == 1  # four claims, one cached training


def test_obs1_catches_a_sign_mismatch_and_a_non_diagonal_kq(runs):
    params, prediction, measurement = runs[0]["HE-OBS1"]
    # Anti-matched signs (-1 per head) and "KQ11 has no diagonal" (ratio 0) cannot hold.
    wrong = _with(prediction, sign_product=-1.0, diagonality=0.0)
    verdicts = _verdicts(CLAIM_OBS1, params, wrong, measurement)
    assert verdicts["sign_product"] == DISAGREES
    assert verdicts["diagonality"] == DISAGREES


def test_obs2_catches_a_manifold_off_by_two_and_a_non_zero_sum(runs):
    params, prediction, measurement = runs[0]["HE-OBS2"]
    # 2 omega mu* doubled (a factor-2 slip between mu* and the group sum ||mu||_1 = 2 mu*),
    # and OV weights all of one sign (zero-sum ratio 1).
    wrong = _with(prediction, manifold_eta=2 * prediction.values["manifold_eta"], zero_sum=1.0)
    verdicts = _verdicts(CLAIM_OBS2, params, wrong, measurement)
    assert verdicts["manifold_eta"] == DISAGREES
    assert verdicts["zero_sum"] == DISAGREES


def test_obs2_counts_every_multi_head_member(runs):
    params, _, measurement = runs[0]["HE-OBS2"]
    heads = np.array(params["training"]["heads"])
    data = measurement.figure_data
    assert data["counts"].tolist() == [np.sum(heads == h) for h in np.unique(heads[heads >= 2])]
    assert np.all(data["paired_counts"] <= data["counts"])


def test_obs3_catches_single_head_level_multi_head_models_and_worse_with_length(runs):
    params, prediction, measurement = runs[0]["HE-OBS3"]
    setting = Setting(5, 40, 0.1)
    lengths = params["lengths"]
    multi = [h for h in params["compare_heads"] if h >= 2]
    # Wrong theory 1: multi-head models at vanilla GD with the single head's step scale
    # eta = 2 * omega* mu* of the one-head optimum (about 1.46), far from the optimal dGD risk.
    head = single_head_optimum(setting)
    eta = 2 * head.omega * head.mu
    wrong_curve = np.array([gd_risk(eta, Setting(5, n, 0.1)) for n in lengths], dtype=float)
    # Wrong theory 2: models get worse beyond the training length (negative gain).
    wrong = _with(prediction, tf_vs_dgd=np.tile(wrong_curve, len(multi)),
                  length_gain=-prediction.values["length_gain"])  # fmt: skip
    verdicts = _verdicts(CLAIM_OBS3, params, wrong, measurement)
    assert verdicts["tf_vs_dgd"] == DISAGREES
    assert verdicts["length_gain"] == DISAGREES


def test_obs3_dgd_monte_carlo_matches_the_exact_risk_within_4_se(runs):
    # The dGD baseline is an exact formula (reference §HE-4.3-RISK): the MC on the shared
    # prompts must agree within 4 SE whatever the training did.
    params, prediction, measurement = runs[0]["HE-OBS3"]
    estimate = measurement.values["dgd_mc"]
    assert np.all(np.abs(estimate.value - prediction.values["dgd_mc"]) <= 4 * estimate.error)


def test_obs4_catches_a_pattern_that_never_persists(runs):
    params, prediction, measurement = runs[0]["HE-OBS4"]
    if measurement.values["persistence"].value.size == 0:
        pytest.skip("no paired member at smoke size")
    wrong = _with(prediction, persistence=0.0)
    assert _verdicts(CLAIM_OBS4, params, wrong, measurement)["persistence"] == DISAGREES


def test_member_kinds_partition_the_ensemble(runs):
    _, runtime = runs
    ensemble = trained_ensemble(claim_params("smoke", "HE-OBS1"), runtime)
    kinds = member_kinds(ensemble)
    total = kinds.single.astype(int) + kinds.paired.astype(int) + kinds.trapped.astype(int)
    assert np.all(total == 1)
    assert np.all(kinds.single == (ensemble.heads == 1))


def test_settled_value_error_covers_a_converging_series():
    # x_t = exp(-t / tau): the error must exceed the remaining distance to the limit 0 when
    # the last quarter still falls by more than it (tau comparable with the run).
    t = np.arange(100.0)
    value, error = settled_value(np.exp(-t / 40))
    assert error > 0.1 * value
    # A settled series plus noise of SD 0.01: the error is about that SD (drift averages out).
    rng = np.random.default_rng(0)
    value, error = settled_value(0.5 + 0.01 * rng.normal(size=400))
    assert 0.005 < error < 0.02


def test_resumed_training_matches_an_uninterrupted_one(tmp_path):
    base = {"d": 2, "L": 8, "sigma2": 0.1, "heads": [1, 2], "lr": 3e-3, "batch": 16, "seed": 0,
            "log_every": 5, "checkpoint_every": 10, "validation_batch": 64}  # fmt: skip
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
    whole = _train({**base, "steps": 20}, "cpu", tmp_path / "a" / "checkpoint.pt")
    _train({**base, "steps": 10}, "cpu", tmp_path / "b" / "checkpoint.pt")  # "killed" at 10
    resumed = _train({**base, "steps": 20}, "cpu", tmp_path / "b" / "checkpoint.pt")
    for key in ("W_Q", "W_O", "omega", "mu", "KQ_history", "OV_history", "steps"):
        np.testing.assert_array_equal(resumed[key], whole[key])
    assert not np.isnan(resumed["KQ_history"]).any()
