"""CZZ-HEADS, -IMPORTANCE, -PRUNE, -PPROBE (Chen et al. 2024, trained encoders) and App. G's
CZZ-G-DECODER, -DENSE, -CORRELATED at smoke size: the shared trainings over the depth grid,
the regime gate either way, and the CLI's one-line errors."""

import json

import numpy as np
import pytest
from icl_verify.figures.data.trained_encoders import ImportanceData, Regime, Settings
from icl_verify.validation.claim import evaluate
from icl_verify.validation.claims.chen2024._encoders import gated
from icl_verify.validation.claims.chen2024.trained_heads import CLAIM_HEADS
from icl_verify.validation.claims.chen2024.trained_importance import CLAIM_IMPORTANCE
from icl_verify.validation.claims.chen2024.trained_pprobe import CLAIM_PPROBE
from icl_verify.validation.claims.chen2024.trained_prune import CLAIM_PRUNE
from icl_verify.validation.cli import main
from icl_verify.validation.estimates import (
    AGREES,
    DISAGREES,
    INCONCLUSIVE,
    Estimate,
    Measurement,
    worst_verdict,
)
from icl_verify.validation.registry import select_claims
from icl_verify.validation.rules import Inequality
from icl_verify.validation.runner import claim_parameters, schedule

COMMON = ["--preset", "smoke", "--device", "cpu", "--no-progress"]
CLAIMS = (CLAIM_HEADS, CLAIM_IMPORTANCE, CLAIM_PRUNE, CLAIM_PPROBE)


def test_the_four_claims_read_the_same_trainings_one_per_h_and_depth_and_two_start_in_parallel():
    for preset in ("smoke", "quick", "paper"):
        trainings = {c.id: set(c.trainings(c.presets[preset])) for c in CLAIMS}
        params = CLAIMS[0].presets[preset]
        every = {params.training(h, layers=L) for h in params.heads for L in params.layers}
        one_head = {t for t in every if t.heads == 1}
        assert trainings["CZZ-IMPORTANCE"] == every - one_head
        assert all(trainings[i] == every for i in ("CZZ-HEADS", "CZZ-PRUNE"))
        depth = CLAIM_PPROBE.presets[preset].probe_depth
        assert trainings["CZZ-PPROBE"] == {t for t in every if t.layers == depth}
    claims = select_claims([c.id for c in CLAIMS])  # catalogue order
    order = [c.id for c in schedule(claims, claim_parameters(claims, "quick"))]
    assert order[:2] == ["CZZ-IMPORTANCE", "CZZ-HEADS"]  # h > 1 and h = 1 begun side by side


def test_the_paper_preset_is_the_papers_recipe():
    params = CLAIM_HEADS.presets["paper"]
    assert (params.d, params.s, params.n_train, params.q_train) == (16, 4, 12, 4)
    assert (params.d_hid, params.layers, params.heads) == (256, (3, 4, 5, 6), (1, 2, 4, 8))
    assert CLAIM_PRUNE.presets["paper"].prune_heads == (4, 8)  # Figures 5-8
    assert (params.lr, params.batch, params.steps) == (1e-4, 64, 320_000)
    assert params.sigmas == (0.0, 0.1, 0.2, 0.4, 0.8)


@pytest.mark.parametrize(("reached", "verdict"), [(True, DISAGREES), (False, INCONCLUSIVE)])
def test_outside_the_papers_regime_a_wrong_sign_is_inconclusive_inside_it_disagrees(
    reached, verdict
):
    regime = Regime(risk=1.0, ridge=2.0 if reached else 0.5, gap=1.0 if reached else -0.5,
                    gap_se=0.1, reached=reached)  # fmt: skip
    measured = gated(Estimate([-1.0], [0.1]), regime, scale=4.0)  # -1 is inside the range
    rule = Inequality("at_least", justification="paired", max_z=3)
    assert rule.judge(0.0, measured).verdict == verdict


@pytest.mark.parametrize(
    ("layer_1", "later", "paper", "one_head"),
    [
        (0.9, 0.1, AGREES, DISAGREES),  # the paper's pattern: the competitor rejected
        (0.1, 0.1, DISAGREES, AGREES),  # one head everywhere: the paper's reading rejected
        (0.55, 0.1, INCONCLUSIVE, INCONCLUSIVE),  # halfway: neither can be told
    ],
)
def test_in_the_regime_the_importance_rules_reject_one_head_everywhere(
    layer_1, later, paper, one_head
):
    """CZZ-IMPORTANCE (and G-DECODER, G-CORRELATED, the same rules) on in-regime numbers
    (share of heads used, SE 0.02 as from two models' bootstrap): the paper's reading and the
    competitor "every layer uses one head" (the claim's wrong prediction) are told apart in
    both directions, which no run can show before the paper's size opens the gate."""
    params = CLAIM_IMPORTANCE.presets["smoke"]
    prediction = CLAIM_IMPORTANCE.predict(params)
    n_first, n_later = (len(prediction.values[k]) for k in ("layer_1", "later_layers"))
    measurement = Measurement(values={
        "layer_1": Estimate(np.full(n_first, layer_1), np.full(n_first, 0.02)),
        "later_layers": Estimate(np.full(n_later, later), np.full(n_later, 0.02)),
    })  # fmt: skip
    checks = CLAIM_IMPORTANCE.checks(params)
    wrong = CLAIM_IMPORTANCE.wrong(params, prediction)
    for predicted, verdict in ((prediction, paper), (wrong, one_head)):
        results = evaluate(checks, predicted, measurement)
        assert worst_verdict(r.judgement.verdict for r in results) == verdict


def test_smoke_importance_rows_sum_to_one_and_effective_heads_match_them(at_smoke):
    params, prediction, measurement = at_smoke(CLAIM_IMPORTANCE)
    settings = Settings.from_record(prediction.figure_data)
    data = ImportanceData.from_record(measurement.figure_data, len(settings))
    for head_map, h, L in zip(data.maps, settings.heads, settings.layers, strict=True):
        W = head_map.weights
        assert W.shape == (len(params.member_sigmas), L, h)
        np.testing.assert_allclose(W.sum(axis=-1), 1.0, rtol=1e-9)
        np.testing.assert_allclose(head_map.effective, 1 / (W**2).sum(-1), rtol=1e-12)


@pytest.mark.parametrize(
    ("claim_id", "setting", "message"),
    [
        ("CZZ-HEADS", "heads=1,3", "heads must divide d_hid = 8, got 3"),
        ("CZZ-IMPORTANCE", "layers=0",
         "layers must be a non-empty list of integers in [1, 1e+09], got [0]"),
        ("CZZ-HEADS", "layers=3,2", "layers must be increasing, got [3, 2]"),
        ("CZZ-PPROBE", "probe_depth=5", "probe_depth must be one of layers [2], got 5"),
        ("CZZ-PRUNE", "prune_heads=4", "prune_heads must be among heads [1, 2], got [4]"),
        ("CZZ-G-DECODER", "k=30", "k must be an integer in [1, n_train=12], got 30"),
        ("CZZ-G-DECODER", "n_train=8", "n_train must be >= 11"),
        ("CZZ-G-DENSE", "s_sparse=16", "s_sparse must be an integer in [1, s=16)"),
        ("CZZ-G-DENSE", "s=17", "s must be an integer in [1, d=16], got 17"),
        ("CZZ-G-CORRELATED", "zetas=0,-0.1",
         "zetas must be a non-empty list of numbers in [0, 1e+12], got [0, -0.1]"),
        ("CZZ-G-CORRELATED", "heads=1", "heads must list at least one h > 1, got [1]"),
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


def test_two_depths_give_a_gate_and_a_panel_row_each(tmp_path):
    # the depth grid end to end at smoke size: every claim reads both depths, the gate per depth
    assert main(["run", "CZZ-HEADS", "CZZ-PRUNE", "--set", "layers=2,3", "--out",
                 str(tmp_path), "--run-id", "two", *COMMON]) in (0, 1)  # fmt: skip
    record = json.loads((tmp_path / "two" / "results.json").read_text())
    by_id = {c["id"]: c for c in record["claims"]}
    heads = by_id["CZZ-HEADS"]["measurement"]["values"]["more_heads"]["value"]
    assert np.asarray(heads, dtype=float).shape == (2, 1, 1)  # (depths, pairs of h, sigmas)
    data = by_id["CZZ-PRUNE"]["measurement"]["figure_data"]
    assert {"L2_regime_reached", "L3_regime_reached", "h2_L2_pruned_mean",
            "h2_L3_pruned_mean"} <= set(data)  # fmt: skip
    closer = by_id["CZZ-PRUNE"]["measurement"]["values"]["closer"]["value"]
    assert len(closer) == 2 + 3  # layers >= 1 of each depth


def test_the_pruning_figures_depths_are_the_claims():
    from icl_verify.figures.trained_encoders import PRUNING_DEPTHS
    from icl_verify.validation.claims.chen2024.trained_prune import PRUNING_FIGURES

    assert PRUNING_DEPTHS == PRUNING_FIGURES


def test_the_app_g_claims_share_the_main_claims_trainings_where_the_setting_is_the_same():
    # the dense claim's sparse reference is CZZ-HEADS's, the correlated claim's zeta = 0 column
    # CZZ-IMPORTANCE's: no training twice
    from icl_verify.validation.claims.chen2024.trained_correlated import CLAIM_CORRELATED
    from icl_verify.validation.claims.chen2024.trained_dense import CLAIM_DENSE

    for preset in ("quick", "paper"):
        heads = set(CLAIM_HEADS.trainings(CLAIM_HEADS.presets[preset]))
        dense = set(CLAIM_DENSE.trainings(CLAIM_DENSE.presets[preset]))
        assert {t for t in dense if t.s == 4} == heads
        correlated = set(CLAIM_CORRELATED.trainings(CLAIM_CORRELATED.presets[preset]))
        zero = {t for t in correlated if t.zeta == 0}
        assert zero and zero <= set(CLAIM_IMPORTANCE.trainings(CLAIM_IMPORTANCE.presets[preset]))
