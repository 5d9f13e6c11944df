"""HE-C-SOFTMAXNORM at smoke size: the rule's three regimes, the wrong prediction, bad input."""

import numpy as np
import pytest
from icl_verify.figures.data.softmax_norm import SoftmaxNormMeasured
from icl_verify.validation.claim import evaluate
from icl_verify.validation.claims.he2025.softmax_norm import (
    CLAIM_SOFTMAXNORM,
    PRESETS,
    RegimeRule,
)
from icl_verify.validation.cli import main
from icl_verify.validation.estimates import Estimate, worst_verdict


def test_smoke_measures_every_point_and_rejects_the_wrong_prediction(at_smoke):
    params, prediction, measurement = at_smoke(CLAIM_SOFTMAXNORM)
    measured = SoftmaxNormMeasured.from_record(measurement.figure_data)
    for sweep, sample in zip(("fixed_d", "proportional", "scaled"), measured.sweeps, strict=True):
        mean = measurement.values[f"mean_{sweep}"]
        assert mean.value.shape == prediction.values[f"mean_{sweep}"].shape
        density, widths = sample.density, np.diff(sample.edges)
        assert np.all((density * widths).sum(axis=1) > 0.98)  # 0.995 quantile of the top row
    verdicts = CLAIM_SOFTMAXNORM.verdicts(params, prediction, measurement)
    assert "disagrees" not in verdicts.values()
    wrong = CLAIM_SOFTMAXNORM.wrong(params, prediction)
    results = evaluate(CLAIM_SOFTMAXNORM.checks(params), wrong, measurement)
    assert worst_verdict(r.judgement.verdict for r in results) == "disagrees"


def test_proportional_sweep_crosses_from_holds_to_fails():
    (_, proportional, _) = CLAIM_SOFTMAXNORM.checks(PRESETS["quick"])
    assert proportional.rule.status[0] == "holds" and proportional.rule.status[-1] == "fails"


def test_a_failure_point_that_does_not_depart_disagrees():
    rule = RegimeRule("test", status=("fails",), allowance=(0.0,), failure_rtol=0.1)
    assert rule.judge([10.0], Estimate([9.8], [0.01])).verdict == "disagrees"
    assert rule.judge([10.0], Estimate([5.0], [0.01])).verdict == "agrees"
    assert rule.judge([10.0], Estimate([8.95], [0.1])).verdict == "inconclusive"


@pytest.mark.parametrize(
    "setting, message",
    [
        ("L_proportional=40,84", "L_proportional must be multiples of 8 (d = L/8), got [40, 84]"),
        ("omega=0.3", "omega must give omega^2 < 1/12"),
    ],
)
def test_bad_parameters_exit_2_with_one_line(setting, message, tmp_path, capsys):
    status = main(["run", "HE-C-SOFTMAXNORM", "--set", setting, "--out", str(tmp_path),
                   "--preset", "smoke", "--device", "cpu", "--no-progress"])  # fmt: skip
    assert status == 2
    err = capsys.readouterr().err.strip()
    assert message in err and "\n" not in err
