"""Claims on App. F of Chen et al. (2024) at smoke size: CZZ-F1 (Lemma F.1) fails against the
competing orders sigma^2/n and sigma^2 d/n^2 and its wrong reading; CZZ-F-STEPS and
CZZ-F-CROSS judge F.1's steps apart; CLI errors one line and exit 2."""

import numpy as np
import pytest
from icl_verify.validation.claim import evaluate
from icl_verify.validation.claims.chen2024.app_f_steps import CLAIM_F_CROSS, CLAIM_F_STEPS
from icl_verify.validation.claims.chen2024.lemma_f1 import CLAIM_F1
from icl_verify.validation.cli import main
from icl_verify.validation.estimates import DISAGREES, Estimate

COMMON = ["--preset", "smoke", "--device", "cpu", "--no-progress"]


@pytest.mark.parametrize(
    ("order", "fails"),
    [
        (lambda n, d: d / n, ()),  # the lemma's own order: one c serves the grid
        (lambda n, d: 1.0 / n, ("quantile_by_d",)),  # no d: falls like 1/d along d
        (lambda n, d: d / n**2, ("quantile_by_n",)),  # n^-2: falls like 1/n along n
    ],
    ids=["sigma2_d_over_n", "sigma2_over_n", "sigma2_d_over_n2"],
)
def test_lemma_f1_rule_fails_against_the_competing_orders(order, fails):
    """A quantity of each order, with 2% SEs, judged against sigma^2 d/n: only the lemma's own
    passes both trends; each competitor fails along the axis it gets wrong."""
    params = CLAIM_F1.presets["smoke"]
    n, d = params.grid
    truth = 0.3 * order(n, d)
    measurement = Estimate(truth, 0.02 * truth)
    prediction = CLAIM_F1.predict(params)
    verdicts = {
        check.quantity: check.rule.judge(prediction.values[check.quantity], measurement).verdict
        for check in CLAIM_F1.checks(params)
    }
    assert {q for q, v in verdicts.items() if v == DISAGREES} == set(fails)


def test_lemma_f1_measured_quantile_is_below_the_mean_and_its_wrong_reading_disagrees(at_smoke):
    params, prediction, measurement = at_smoke(CLAIM_F1)
    quantile = measurement.values["quantile_by_d"]
    assert np.all(np.asarray(quantile.error) > 0)
    assert np.all(quantile.value < measurement.figure_data["mean"])  # a lower quantile
    wrong = {
        r.check.quantity: r.judgement.verdict
        for r in evaluate(CLAIM_F1.checks(params), CLAIM_F1.wrong(params, prediction), measurement)
    }
    assert wrong["quantile_by_n"] == DISAGREES


def test_app_f_steps_and_cross_term_are_separate_claims():
    params = CLAIM_F_STEPS.presets["smoke"]
    assert CLAIM_F_CROSS.presets == CLAIM_F_STEPS.presets
    steps = {c.quantity for c in CLAIM_F_STEPS.checks(params)}
    assert steps == {"bias", "bias_vs_noise", "variance"}
    assert [c.quantity for c in CLAIM_F_CROSS.checks(params)] == ["cross_share"]


@pytest.mark.parametrize(
    ("claim", "setting", "message"),
    [
        ("CZZ-F1", "d_values=4,4,8", "d_values must hold >= 3 distinct values"),
        ("CZZ-F1", "n_grid=1,2,3", "n_grid must be a non-empty list of integers in [2, 1e+09]"),
        ("CZZ-F1", "delta=0.7", "delta must be a number in (0, 0.5), got 0.7"),
        ("CZZ-F1", "tasks=5", "tasks must be an integer in [20, 1e+09], got 5"),
        ("CZZ-F-STEPS", "sigma=0", "sigma must be a number > 0"),
        ("CZZ-F-CROSS", "n_grid=64,64,128", "n_grid must hold >= 3 distinct sizes"),
    ],
)
def test_bad_parameters_are_one_line_and_exit_2(claim, setting, message, tmp_path, capsys):
    status = main(["run", claim, "--set", setting, "--out", str(tmp_path), *COMMON])
    assert status == 2
    err = capsys.readouterr().err
    assert message in err
    assert err.count("\n") == 1 and "Traceback" not in err
