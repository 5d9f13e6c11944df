"""Claim CZZ-PREGD (Chen et al. 2024 Figure 2c) at smoke size: its numbers, its one-sided rule
either way, the wrong prediction, the figure and the CLI's one-line errors."""

import matplotlib.pyplot as plt
import numpy as np
import pytest
from icl_verify.figures.data.pre_gd import PreGdData
from icl_verify.validation.claims.chen2024.pre_gd import (
    CLAIM_PREGD,
    PRESETS,
    literal_theorem_gap,
    recorded_steps,
)
from icl_verify.validation.cli import main
from icl_verify.validation.estimates import AGREES, DISAGREES, INCONCLUSIVE, Estimate, Measurement

COMMON = ["--preset", "smoke", "--device", "cpu", "--no-progress"]


def test_smoke_measures_both_paths_at_every_sigma_and_pre_gd_ends_lower(at_smoke):
    params, prediction, measurement = at_smoke(CLAIM_PREGD)
    data = PreGdData.from_record(measurement.figure_data)
    steps = recorded_steps(params)
    assert data.gd.mean.shape == (len(params.sigma), steps.size)
    for path in data.paths():
        # every path starts at w = 0, whose excess risk is ||w*||^2 (mean s = 4)
        assert np.all(np.abs(path.mean[:, 0] - params.s) < 1.0)
        assert set(path.rate) <= set(params.rates)
    gap = measurement.values["gap"]
    np.testing.assert_allclose(gap.value, data.gd.mean[:, -1] - data.pre_gd.mean[:, -1])
    assert CLAIM_PREGD.verdicts(params, prediction, measurement) == {
        "gap": AGREES, "ridge_gap": AGREES, "ols_gap": AGREES
    }


@pytest.mark.parametrize(
    ("gap", "se", "verdict"),
    [(0.5, 0.1, AGREES), (0.2, 0.1, INCONCLUSIVE), (-0.2, 0.1, INCONCLUSIVE),
     (-0.5, 0.1, DISAGREES)],
)  # fmt: skip
def test_the_gap_is_decided_one_sided_at_three_se(at_smoke, gap, se, verdict):
    params, prediction, measurement = at_smoke(CLAIM_PREGD)
    size = len(params.sigma)
    values = {"gap": Estimate(np.full(size, gap), np.full(size, se))}
    changed = Measurement(measurement.values | values, {})
    assert CLAIM_PREGD.verdicts(params, prediction, changed)["gap"] == verdict


def test_the_literal_theorem_reading_is_rejected_and_follows_the_regime(at_smoke):
    params, prediction, measurement = at_smoke(CLAIM_PREGD)
    wrong = literal_theorem_gap(params, prediction)
    # n = 10 < d = 16: s (1 - n/d) + sigma^2 n/d
    np.testing.assert_allclose(wrong.values["gap"], [1.5, 1.5 + 0.64 * 10 / 16])
    assert CLAIM_PREGD.verdicts(params, wrong, measurement)["gap"] == DISAGREES
    many = params.with_overrides({"n": "64"})  # n >= d: sigma^2 d / n
    np.testing.assert_allclose(literal_theorem_gap(many, prediction).values["gap"], [0, 0.16])


def test_recorded_steps_run_from_zero_to_the_last_step_with_early_ones():
    steps = recorded_steps(PRESETS["quick"])
    assert steps[0] == 0 and steps[-1] == 9000 and np.all(np.diff(steps) > 0)
    assert 90 <= steps.size <= 100 and {1, 2, 100, 4500} <= set(steps.tolist())


def test_figure_2c_draws_the_stored_paths_and_gaps(at_smoke):
    params, prediction, measurement = at_smoke(CLAIM_PREGD)
    (figure,) = CLAIM_PREGD.draw(params, prediction, measurement)
    assert len(figure.axes) == len(params.sigma) + 1
    first = figure.axes[0]
    data = PreGdData.from_record(measurement.figure_data)
    np.testing.assert_allclose(first.lines[0].get_ydata(), data.gd.mean[0])
    assert f"η={data.pre_gd.rate[0]:g}" in first.lines[2].get_label()
    table = CLAIM_PREGD.table(params, prediction, measurement)
    # two tables (gd against pre-gd; least squares against pre-gd): a header and a row per σ
    assert table.count("\n| ") == 2 * (len(params.sigma) + 1)
    plt.close(figure)


@pytest.mark.parametrize(
    ("setting", "message"),
    [
        ("sigma=-0.1", "sigma must be a non-empty list of numbers in [0, 1e+12], got [-0.1]"),
        ("s=20", "s must be an integer in [1, d=16], got 20"),
        ("n=0", "n must be an integer in [1, 1e+09], got 0"),
        ("rates=0,0.01", "rates must be a non-empty list of numbers in (0, 1e+12], got [0, 0.01]"),
    ],
)
def test_a_bad_parameter_is_one_line_and_exit_2(setting, message, tmp_path, capsys):
    status = main(["run", "CZZ-PREGD", "--set", setting, "--out", str(tmp_path), *COMMON])
    assert status == 2
    err = capsys.readouterr().err
    assert message in err
    assert err.count("\n") == 1 and "Traceback" not in err
