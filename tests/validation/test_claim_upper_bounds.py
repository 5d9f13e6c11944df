"""Claims CZZ-T5.1, CZZ-T5.2, CZZ-D1, CZZ-D2 at smoke size: wrong exponents rejected, the
closed-form identities tight, CLI errors one line and exit 2."""

import numpy as np
import pytest
from icl_verify.validation.claim import DISAGREES, evaluate
from icl_verify.validation.claims.chen2024.lemmas import CLAIM_D1, CLAIM_D2
from icl_verify.validation.claims.chen2024.upper_bounds import CLAIM_T51, CLAIM_T52
from icl_verify.validation.cli import main

COMMON = ["--preset", "smoke", "--device", "cpu", "--no-progress"]


@pytest.mark.parametrize("claim", [CLAIM_T51, CLAIM_T52, CLAIM_D1, CLAIM_D2], ids=lambda c: c.id)
def test_wrong_exponent_disagrees_and_the_bound_does_not(claim, at_smoke):
    params, prediction, measurement = at_smoke(claim)
    checks = claim.checks(params)
    first = checks[0].quantity
    right = {
        r.check.quantity: r.judgement.verdict for r in evaluate(checks, prediction, measurement)
    }
    wrong = {
        r.check.quantity: r.judgement.verdict
        for r in evaluate(checks, claim.wrong(params, prediction), measurement)
    }
    assert right[first] != DISAGREES and wrong[first] == DISAGREES


def test_closed_form_identities_hold_to_rounding(at_smoke):
    params, prediction, measurement = at_smoke(CLAIM_T51)
    for name in ("bias_identity", "variance_identity", "excess_identity"):
        assert measurement.values[name].value < 1e-11
    data = measurement.figure_data
    np.testing.assert_allclose(
        data["mean_bias"] + data["mean_variance"] + data["mean_cross"],
        data["mean_excess"],
        rtol=1e-9,
    )


@pytest.mark.parametrize(
    ("claim", "setting", "message"),
    [
        ("CZZ-T5.1", "s=40", "s must be an integer in [1, d=16], got 40"),
        ("CZZ-T5.2", "s=0", "s must be an integer >= 1, got 0"),
        ("CZZ-T5.1", "n_grid=0,32,64", "n_grid must be a non-empty list of integers >= 1"),
        ("CZZ-T5.2", "sigma=-1", "sigma must be a number >= 0, got -1"),
        ("CZZ-T5.1", "sigma=0", "sigma must be a number > 0"),
        ("CZZ-T5.1", "kappa=0.5", "kappa must be a number >= 1, got 0.5"),
        ("CZZ-T5.2", "etas=2.5", "etas must be a non-empty list of numbers in (0, 2)"),
        ("CZZ-D1", "n_grid=32,32,64", "n_grid must hold >= 3 distinct sample sizes"),
        ("CZZ-D2", "c_grid=0,1", "c_grid must be a non-empty list of numbers > 0"),
        ("CZZ-D2", "delta=1", "delta must be a number in (0, 1), got 1"),
    ],
)
def test_bad_parameters_are_one_line_and_exit_2(claim, setting, message, tmp_path, capsys):
    status = main(["run", claim, "--set", setting, "--out", str(tmp_path), *COMMON])
    assert status == 2
    err = capsys.readouterr().err
    assert message in err
    assert err.count("\n") == 1 and "Traceback" not in err
