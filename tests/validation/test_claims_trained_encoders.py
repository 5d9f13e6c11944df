"""CZZ-HEADS, -IMPORTANCE, -PRUNE, -PPROBE (Chen et al. 2024, trained encoders) at smoke size:
the shared trainings, the regime gate either way, and the CLI's one-line errors."""

import numpy as np
import pytest
from icl_verify.validation.claim import DISAGREES, INCONCLUSIVE, Estimate, Inequality
from icl_verify.validation.claims.chen2024._encoders import Regime, gated, training
from icl_verify.validation.claims.chen2024.trained_heads import CLAIM_HEADS
from icl_verify.validation.claims.chen2024.trained_importance import CLAIM_IMPORTANCE
from icl_verify.validation.claims.chen2024.trained_pprobe import CLAIM_PPROBE
from icl_verify.validation.claims.chen2024.trained_prune import CLAIM_PRUNE
from icl_verify.validation.cli import main
from icl_verify.validation.registry import select_claims
from icl_verify.validation.runner import claim_parameters, schedule

COMMON = ["--preset", "smoke", "--device", "cpu", "--no-progress"]
CLAIMS = (CLAIM_HEADS, CLAIM_IMPORTANCE, CLAIM_PRUNE, CLAIM_PPROBE)


def test_the_four_claims_read_the_same_trainings_one_per_h_and_two_start_in_parallel():
    for preset in ("smoke", "quick", "paper"):
        trainings = {c.id: set(c.trains(c.presets[preset])) for c in CLAIMS}
        params = CLAIMS[0].presets[preset]
        every = {training(params, h) for h in params.heads}
        assert trainings["CZZ-IMPORTANCE"] == every - {training(params, 1)}
        assert all(trainings[i] == every for i in ("CZZ-HEADS", "CZZ-PRUNE", "CZZ-PPROBE"))
    claims = select_claims([c.id for c in CLAIMS])  # catalogue order
    order = [c.id for c in schedule(claims, claim_parameters(claims, "quick"))]
    assert order[:2] == ["CZZ-IMPORTANCE", "CZZ-HEADS"]  # h > 1 and h = 1 begun side by side


def test_the_paper_preset_is_the_papers_recipe():
    params = CLAIM_HEADS.presets["paper"]
    assert (params.d, params.s, params.n_train, params.q_train) == (16, 4, 12, 4)
    assert (params.d_hid, params.layers, params.heads) == (256, 4, (1, 2, 4, 8))
    assert (params.lr, params.batch, params.steps) == (1e-4, 64, 320_000)
    assert params.sigmas == (0.0, 0.1, 0.2, 0.4, 0.8)


@pytest.mark.parametrize(("reached", "verdict"), [(True, DISAGREES), (False, INCONCLUSIVE)])
def test_outside_the_papers_regime_a_wrong_sign_is_inconclusive_inside_it_disagrees(
    reached, verdict
):
    regime = Regime(risk=1.0, ridge=2.0 if reached else 0.5, gap=1.0 if reached else -0.5,
                    gap_se=0.1)  # fmt: skip
    measured = gated(Estimate([-1.0], [0.1]), regime, scale=4.0)  # -1 is inside the range
    rule = Inequality("at_least", justification="paired", max_z=3)
    assert rule.judge(0.0, measured).verdict == verdict


def test_smoke_importance_rows_sum_to_one_and_effective_heads_match_them(at_smoke):
    params, prediction, measurement = at_smoke(CLAIM_IMPORTANCE)
    data = measurement.figure_data
    for h in [h for h in params.heads if h > 1]:
        W = np.asarray(data[f"h{h}_weights"])
        assert W.shape == (len(params.member_sigmas), params.layers, h)
        np.testing.assert_allclose(W.sum(axis=-1), 1.0, rtol=1e-9)
        np.testing.assert_allclose(data[f"h{h}_effective"], 1 / (W**2).sum(-1), rtol=1e-12)


@pytest.mark.parametrize(
    ("claim_id", "setting", "message"),
    [
        ("CZZ-HEADS", "heads=1,3", "heads must divide d_hid = 8, got 3"),
        ("CZZ-IMPORTANCE", "layers=0", "layers must be an integer in [1, 1e+09], got 0"),
        ("CZZ-PRUNE", "q_train=0", "q_train must be an integer in [1, 1e+09], got 0"),
        ("CZZ-PPROBE", "q_probe=1", "q_probe must be an integer in [2, 1e+09], got 1"),
        ("CZZ-HEADS", "heads=2,4", "heads must list 1 and at least one h > 1, got [2, 4]"),
        ("CZZ-HEADS", "n_eval=12,14", "few_shot must be >= the smallest n_eval = 12, got 10"),
    ],
)
def test_bad_settings_are_one_line_and_exit_2(claim_id, setting, message, tmp_path, capsys):
    assert main(["run", claim_id, "--set", setting, "--out", str(tmp_path), *COMMON]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1 and "Traceback" not in err
