"""Claim CZZ-T5.3 (Chen et al. 2024 Theorem 5.3) at smoke size: the wrong exponent and the wrong
OLS level are each called `disagrees`, the §7 reading is a parameter, the figure draws the stored
numbers, and bad settings are one line with exit 2."""

import matplotlib.pyplot as plt
import numpy as np
import pytest
from icl_verify.validation.claim import evaluate
from icl_verify.validation.claims.chen2024.isotropic import CLAIM_ISOTROPIC
from icl_verify.validation.cli import main
from icl_verify.validation.estimates import DISAGREES

COMMON = ["--preset", "smoke", "--device", "cpu", "--no-progress"]


def _verdicts(params, prediction, measurement):
    results = evaluate(CLAIM_ISOTROPIC.checks(params), prediction, measurement)
    return {r.check.quantity: r.judgement.verdict for r in results}


def test_smoke_measures_every_estimator_on_both_grids(at_smoke):
    params, prediction, measurement = at_smoke(CLAIM_ISOTROPIC)
    data = measurement.figure_data
    for name in ("ols", "ridge", "gd", "pregd", "lasso"):
        assert np.asarray(data[f"{name}_narrow"]).shape == (len(params.n_grid),)
    for name in ("pregd", "lasso"):  # the Lasso in the d >~ n regime too (§5's discussion)
        assert np.asarray(data[f"{name}_wide"]).shape == (3,)
    # pre-gd beats the best baseline at every n of the n >~ d grid (reference §4.5 pilot: ~8-16x)
    assert np.all(data["pregd_narrow"] < measurement.values["baseline_lower"].value)
    assert DISAGREES not in _verdicts(params, prediction, measurement).values()


def test_a_bound_with_the_wrong_exponent_and_a_wrong_ols_level_each_disagree(at_smoke):
    params, prediction, measurement = at_smoke(CLAIM_ISOTROPIC)
    n = np.array(params.n_grid, dtype=float)
    steeper = prediction.with_values(pregd_upper=prediction.values["pregd_upper"] * n[0] / n)
    assert _verdicts(params, steeper, measurement)["pregd_upper"] == DISAGREES
    higher = prediction.with_values(ols_exact=1.5 * prediction.values["ols_exact"])
    assert _verdicts(params, higher, measurement)["ols_exact"] == DISAGREES


def test_eta_t_grows_with_s_and_the_appendix_reading_of_t_disagrees(at_smoke):
    """§7.11: pre-gd's tuned absolute eta t grows with s (the beta^2 = 1/s reading, slope ~ +1),
    so F.1's printed log/(eta s) (slope ~ -1) is called `disagrees` (unless the smoke grid
    censors the tuned t, when the check must say inconclusive, never agree)."""
    params, prediction, measurement = at_smoke(CLAIM_ISOTROPIC)
    eta_t = measurement.figure_data["pregd_eta_t_step"]
    assert eta_t[-1] > 2 * eta_t[0]
    appendix = prediction.with_values(step_slope=prediction.figure_data["step_slope_appendix"])
    censored = not np.isfinite(measurement.values["step_slope"].error)
    expected = "inconclusive" if censored else DISAGREES
    assert _verdicts(params, appendix, measurement)["step_slope"] == expected


def test_the_reading_parameter_switches_the_s_dependence_of_the_bound():
    theorem = CLAIM_ISOTROPIC.parameters("smoke")
    discussion = CLAIM_ISOTROPIC.parameters("smoke", {"reading": "discussion"})
    a = CLAIM_ISOTROPIC.predict(theorem).values["reading"]
    b = CLAIM_ISOTROPIC.predict(discussion).values["reading"]
    growth = np.log(a[-1] / a[0]) - np.log(b[-1] / b[0])
    assert growth > 0.5 * np.log(theorem.s_reading[-1] / theorem.s_reading[0])


def test_figure_draws_six_panels_from_the_stored_numbers(at_smoke):
    params, prediction, measurement = at_smoke(CLAIM_ISOTROPIC)
    (figure,) = CLAIM_ISOTROPIC.draw(params, prediction, measurement)
    assert len(figure.axes) == 6
    ratio_points = figure.axes[2].lines[0].get_ydata()
    np.testing.assert_allclose(ratio_points, measurement.figure_data["ratio"])
    eta_t_points = figure.axes[4].lines[0].get_ydata()
    np.testing.assert_allclose(eta_t_points, measurement.figure_data["pregd_eta_t_step"])
    plt.close(figure)


@pytest.mark.parametrize(
    ("setting", "message"),
    [
        ("s=65", "s must be an integer in [1, d=64], got 65"),
        ("s=0", "s must be an integer in [1, 1e+09], got 0"),
        ("n_grid=0,256,512", "n_grid must be"),
        ("sigma=-1", "sigma must be a number in [0, 1e+12], got -1"),
        ("sigma_wide=0", "sigma_wide must be a number > 0"),
        ("n_wide=50,100,300", "n_wide must be <= d_wide/2=80"),
        ("n_step=100", "n_step must be >= 2d=128, got 100"),
        ("s_reading=2,4,128", "s_reading <= min(d, d_wide)=64"),
        ("step_reading=x", "step_reading must be one of"),
    ],
)
def test_bad_settings_are_one_line_and_exit_2(setting, message, tmp_path, capsys):
    status = main(["run", "CZZ-T5.3", "--set", setting, "--out", str(tmp_path), *COMMON])
    assert status == 2
    err = capsys.readouterr().err
    assert message in err
    assert err.count("\n") == 1 and "Traceback" not in err
