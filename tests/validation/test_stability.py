"""Verdicts across seed sets (`validation.stability`, `icl-verify stability`): each set moves
the run seed and every seed of a claim's setting, each set is an ordinary resumable run, and a
check that agrees in one set and disagrees in another is reported as a flip (exit 1)."""

import dataclasses
import json

import pytest
from icl_verify.validation import published, site
from icl_verify.validation.cli import main
from icl_verify.validation.estimates import AGREES, DISAGREES
from icl_verify.validation.records import load_run
from icl_verify.validation.registry import select_claims
from icl_verify.validation.report import marked
from icl_verify.validation.stability import (
    SEED_SET_STRIDE,
    compare,
    run_seed_sets,
    seed_set_overrides,
)

CLAIM = "HE-MAN"  # a second at smoke, untrained, with a seed of its setting (design_seed)
COMMON = ["--preset", "smoke", "--device", "cpu", "--workers", "1", "--no-progress"]


@pytest.fixture(scope="module")
def two_sets(tmp_path_factory):
    out = tmp_path_factory.mktemp("stability")
    records = run_seed_sets(select_claims([CLAIM]), sets=2, preset="smoke", out=out, run_id="s",
                            seed=5, device="cpu", workers=1)  # fmt: skip
    return out, records


def test_every_seed_of_the_setting_moves_and_set_0_is_the_plain_run():
    params = select_claims(["HE-S2-BOUND"])[0].parameters("smoke")
    moved = seed_set_overrides(params, 3)
    assert moved == {"design_seed": params.design_seed + 3 * SEED_SET_STRIDE,
                     "points_seed": params.points_seed + 3 * SEED_SET_STRIDE}  # fmt: skip
    assert seed_set_overrides(params, 0) == {"design_seed": params.design_seed,
                                             "points_seed": params.points_seed}  # fmt: skip


def test_each_set_is_a_run_with_its_own_seeds(two_sets):
    out, (first, second) = two_sets
    assert (first.run_id, first.seed, second.run_id, second.seed) == ("s-set0", 5, "s-set1", 6)
    default = select_claims([CLAIM])[0].parameters("smoke").design_seed
    used = [r.claims[0].params["design_seed"] for r in (first, second)]
    assert used == [default, default + SEED_SET_STRIDE]
    assert first.claims[0].measurement != second.claims[0].measurement  # other draws


def test_a_check_that_agrees_in_one_set_and_disagrees_in_another_flips(two_sets):
    out, (first, second) = two_sets
    assert compare([first, second]).flipping() == []
    claim = second.claims[0]
    check = claim.checks[0]
    flipped = dataclasses.replace(claim, verdict=DISAGREES,
                                  checks=(dataclasses.replace(check, verdict=DISAGREES),
                                          *claim.checks[1:]))  # fmt: skip
    assert check.verdict == AGREES and claim.verdict == AGREES
    result = compare([first, dataclasses.replace(second, claims=(flipped,))])
    ((claim_id, moved),) = result.flipping()
    assert (claim_id, moved.label, moved.verdicts) == (CLAIM, check.label, (AGREES, DISAGREES))
    assert result.claims[0].stability == "seed-dependent: 1 agrees, 1 disagrees"
    assert f"**flips** {CLAIM}, {check.label}: set 0: " in result.markdown()


def test_the_command_compares_the_sets_and_resumes_them(tmp_path, capsys):
    argv = ["stability", CLAIM, "--seeds", "2", "--out", str(tmp_path), "--run-id", "st", *COMMON]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    assert f"| {CLAIM} | agrees | agrees | stable over 2 seed sets |" in printed
    stored = json.loads((tmp_path / "st-set0" / "stability.json").read_text())
    assert stored["runs"] == ["st-set0", "st-set1"] and stored["claims"][CLAIM]["verdicts"]
    before = load_run(tmp_path / "st-set1")
    assert main(argv) == 0  # finished sets are read back, not run again
    assert load_run(tmp_path / "st-set1").claims == before.claims


@pytest.mark.parametrize(("argv", "message"), [
    (["--seeds", "1"], "--seeds must be an integer in [2, 100], got '1'"),
    (["--seeds", "x"], "--seeds must be an integer in [2, 100], got 'x'"),
    (["--set", "d=-1"], "d must be"),
    (["--preset", "huge"], "--preset must be one of"),
])  # fmt: skip
def test_bad_input_is_one_line_and_exit_2(argv, message, tmp_path, capsys):
    assert main(["stability", CLAIM, "--out", str(tmp_path), "--device", "cpu", *argv]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1
    assert not any(tmp_path.iterdir())  # nothing written


def test_the_committed_summary_carries_the_sets_to_the_pages_and_the_index(two_sets, tmp_path):
    out, records = two_sets
    compare(records).save(tmp_path / "stability.json")
    summary = tmp_path / "summary.json"
    site.write_verdict_summary(out / "s-set0", summary, tmp_path / "stability.json")
    latest = site.Verdicts.from_summary(summary)
    claim = select_claims([CLAIM])[0]
    page = site.claim_page(claim, latest, {})
    assert "**Across seed sets:** stable over 2 seed sets; verdicts agrees, agrees" in page
    verdict = marked("agrees", claim.source.reconstruction)  # HE-MAN rests on (4.6)-(4.7)
    assert f"| {verdict} | stable over 2 seed sets |" in site.claims_index(latest)
    row = next(line for line in published.paper_index(latest, {}).splitlines()
               if line.startswith(f"| {CLAIM} |"))  # fmt: skip
    assert f"| {verdict}; stable over 2 seed sets |" in row
