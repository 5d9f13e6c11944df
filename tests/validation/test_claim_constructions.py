"""Claims CZZ-P4.1 and CZZ-P4.2 (Chen, Zhao, Zou 2024, Props. 4.1/4.2) at smoke size: they agree,
the paper's literal read-out and a corrupted weight disagree, bad settings exit 2 in one line."""

import numpy as np
import pytest
from icl_verify.numerics._core import linear_transformer
from icl_verify.validation.cache import ArtefactCache
from icl_verify.validation.claims.chen2024.construction_gd import CLAIM_P42
from icl_verify.validation.claims.chen2024.construction_preprocessing import CLAIM_P41
from icl_verify.validation.cli import main
from icl_verify.validation.estimates import AGREES, DISAGREES
from icl_verify.validation.runtime import Runtime

COMMON = ["--preset", "smoke", "--device", "cpu", "--no-progress"]
CLAIMS = (CLAIM_P41, CLAIM_P42)


@pytest.mark.parametrize("claim", CLAIMS, ids=lambda c: c.id)
def test_smoke_agrees_within_the_stated_bound(at_smoke, claim):
    params, prediction, measurement = at_smoke(claim)
    assert set(claim.verdicts(params, prediction, measurement).values()) == {AGREES}
    for check in claim.checks(params):
        key = check.quantity
        error = np.abs(measurement.values[key].value - prediction.values[key]).max()
        assert error < check.rule.atol
        assert error > 0 or not key.endswith("float32")  # float32 rounding is seen


def test_the_papers_literal_read_out_disagrees(at_smoke):
    params, prediction, measurement = at_smoke(CLAIM_P42)
    verdicts = CLAIM_P42.verdicts(params, CLAIM_P42.wrong(params, prediction), measurement)
    assert set(verdicts.values()) == {DISAGREES}


def test_unpreprocessed_queries_disagree(at_smoke):
    params, prediction, measurement = at_smoke(CLAIM_P41)
    verdicts = CLAIM_P41.verdicts(params, CLAIM_P41.wrong(params, prediction), measurement)
    assert set(verdicts.values()) == {DISAGREES}


@pytest.mark.parametrize("claim", CLAIMS, ids=lambda c: c.id)
def test_a_key_weight_without_its_1_over_n_disagrees(claim, monkeypatch, tmp_path):
    build = linear_transformer.preprocessing_layer

    def corrupted(d, n):
        layer = build(d, n)
        return linear_transformer.LinearAttentionLayer(
            layer.W_Q, layer.W_K * n, layer.W_V, layer.W_1
        )

    monkeypatch.setattr(linear_transformer, "preprocessing_layer", corrupted)
    params = claim.presets["smoke"]
    measurement = claim.measure(params, Runtime("cpu", 0, ArtefactCache(tmp_path)))
    verdicts = claim.verdicts(params, claim.predict(params), measurement)
    assert set(verdicts.values()) == {DISAGREES}


@pytest.mark.parametrize(
    "claim, setting, message",
    [
        ("CZZ-P4.1", "q_max=0", "q_max must be an integer in [1, 1e+09], got 0"),
        ("CZZ-P4.1", "n_min=0", "n_min must be an integer in [1, 1e+09], got 0"),
        ("CZZ-P4.1", "d_min=0", "d_min must be an integer in [1, 1e+09], got 0"),
        ("CZZ-P4.1", "sigma=-1", "sigma must be a number in [0, 1e+12], got -1"),
        ("CZZ-P4.2", "n_min=30", "n_min must be <= n_max, got n_min=30, n_max=20"),
        ("CZZ-P4.2", "t_max=0", "t_max must be an integer in [1, 1e+09], got 0"),
        ("CZZ-P4.2", "eta_scale_min=0", "eta_scale_min must be a number in (0, 1e+12], got 0"),
        ("CZZ-P4.2", "eta_scale_min=3", "eta_scale_min must be < eta_scale_max"),
    ],
)
def test_bad_settings_exit_2_with_one_line(claim, setting, message, tmp_path, capsys):
    status = main(["run", claim, "--set", setting, "--out", str(tmp_path), *COMMON])
    assert status == 2
    err = capsys.readouterr().err.strip()
    assert message in err and "\n" not in err, err
