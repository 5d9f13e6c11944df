"""Claim HE-5.3-KMS (He et al. 2025 §5.3) at smoke size: what it measures, the sharpness of its
rules beyond the wrong prediction the registry test feeds it, its figures and its CLI errors."""

import matplotlib.pyplot as plt
import numpy as np
import pytest
from icl_verify.validation.claims.he2025.preconditioning import CLAIM_KMS
from icl_verify.validation.cli import main
from icl_verify.validation.estimates import AGREES, DISAGREES, INCONCLUSIVE, Estimate, Measurement

COMMON = ["--preset", "smoke", "--device", "cpu", "--no-progress"]


def test_smoke_counts_every_member_and_measures_the_paired_ones(at_smoke):
    params, prediction, measurement = at_smoke(CLAIM_KMS)
    data = measurement.figure_data
    assert data["paired_count"] + data["trapped_count"] == params.members
    assert data["paired_count"] >= 2  # smoke must measure something
    assert np.asarray(data["learned"]).shape == (data["paired_count"], params.d, params.d)
    # the three relative distances; Sigma^{-1} is 32% from Gamma*_d: the learned one is nearer
    distances = np.asarray(data["distances"])
    assert distances.shape == (3,) and distances[0] < distances[2]
    assert measurement.values["distance_dgd"].value == pytest.approx(distances[0])
    assert DISAGREES not in CLAIM_KMS.verdicts(params, prediction, measurement).values()


def _with(measurement, **values):
    return Measurement({**measurement.values, **values}, measurement.figure_data)


def test_closer_is_decided_at_three_se_either_way(at_smoke):
    params, prediction, measurement = at_smoke(CLAIM_KMS)

    def verdict(margin, error):
        changed = _with(measurement, closer=Estimate(margin, error))
        return CLAIM_KMS.verdicts(params, prediction, changed)["closer"]

    assert verdict(0.8, 0.3) == AGREES  # 3 SE = 0.3 < margin
    assert verdict(-0.8, 0.3) == DISAGREES  # closer to Sigma^{-1} by more than 3 SE
    assert verdict(0.1, np.inf) == INCONCLUSIVE  # |margin| < 3 SE: not resolved (measure_kms)


def test_distance_and_risk_reject_a_model_off_by_twice_their_allowance(at_smoke):
    params, prediction, measurement = at_smoke(CLAIM_KMS)
    checks = {c.quantity: c.rule for c in CLAIM_KMS.checks(params)}
    far = _with(
        measurement,
        distance_dgd=Estimate(2 * checks["distance_dgd"].atol, 0.0),
        risk=Estimate(prediction.values["risk"] + 2 * checks["risk"].atol, 0.0),
    )
    verdicts = CLAIM_KMS.verdicts(params, prediction, far)
    assert verdicts["distance_dgd"] == verdicts["risk"] == DISAGREES
    assert 0 < checks["risk"].atol < 0.1 * prediction.values["risk"]


def test_figures_12_and_15_draw_the_stored_numbers(at_smoke):
    params, prediction, measurement = at_smoke(CLAIM_KMS)
    twelve, fifteen = CLAIM_KMS.draw(params, prediction, measurement)
    assert len(twelve.axes) == 8 + 2  # 2 x 4 panels + 2 colour bars
    assert len(fifteen.axes) == 4 + 1
    # figure 15 draws the inverse of the stored mean Gamma_eff in its first panel
    drawn = fifteen.axes[0].images[0].get_array()
    expected = np.linalg.inv(np.asarray(measurement.figure_data["learned_mean"]))
    np.testing.assert_allclose(np.asarray(drawn), expected)
    empty = Measurement(measurement.values, {"paired_count": 1.0, "trapped_count": 2.0})
    for figure in (twelve, fifteen, *CLAIM_KMS.draw(params, prediction, empty)):
        plt.close(figure)


@pytest.mark.parametrize("value", ["1", "-1.5"])
def test_rho_outside_the_open_interval_is_one_line_and_exit_2(value, tmp_path, capsys):
    status = main(["run", "HE-5.3-KMS", "--set", f"rho={value}", "--out", str(tmp_path), *COMMON])
    assert status == 2
    err = capsys.readouterr().err
    assert f"rho must be a number in (-1, 1), got {value}" in err
    assert err.count("\n") == 1 and "Traceback" not in err
