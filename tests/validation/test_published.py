"""Publishing paper-size runs under docs/paper/ and their generated index
(`validation.published`, `icl-verify publish`)."""

import dataclasses
import json
import re
from pathlib import Path

import pytest
from icl_verify.validation import api, published
from icl_verify.validation.cli import main
from icl_verify.validation.records import load_run, value_text
from icl_verify.validation.registry import all_claims, select_claims, trained_claims
from icl_verify.validation.report import RECONSTRUCTED_MARK, format_measured
from icl_verify.validation.site import Verdicts

ROOT = Path(__file__).resolve().parents[2]
CLAIM = "HE-S2-BOUND"  # cheap at smoke (a fraction of a second), untrained, one figure
#: CLAIM's verdicts are marked: it rests on a reconstructed formula (test_reconstructed.py)
MARK = RECONSTRUCTED_MARK if select_claims([CLAIM])[0].source.reconstructed else ""


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("runs")
    result = api.run_many([CLAIM], "smoke", out=out, run_id="paper-x")
    (result.run_dir / "checkpoint.pt").write_bytes(b"not for docs")  # never published
    return result.run_dir


def _saved(record, folder: Path, run_dir: Path) -> Path:
    """``record`` saved as a run in ``folder``, with a report and the figures of ``run_dir``."""
    import shutil

    record.save(folder)
    (folder / "report.md").write_text("# report\n")
    shutil.copytree(run_dir / "figures", folder / "figures", dirs_exist_ok=True)
    return folder


def _quick(verdict: str, run: Path) -> Verdicts:
    """A quick summary holding CLAIM with ``verdict`` and the run's own checks."""
    entry = Verdicts.from_run(run).claims[CLAIM]
    return Verdicts("quick", "run quick-x", {CLAIM: {**entry, "verdict": verdict}})


def test_a_publication_is_the_report_figures_and_record_never_checkpoints(run_dir, tmp_path):
    folder = published.publish(run_dir, "cpu-x", tmp_path)
    names = sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file())
    figures = sorted(f"figures/{p.name}" for p in (run_dir / "figures").glob("*.png"))
    assert names == sorted(["report.md", "results.json", *figures]) and figures
    assert load_run(folder) == load_run(run_dir)


def test_republishing_keeps_the_notes_and_leaves_no_staging(run_dir, tmp_path):
    published.publish(run_dir, "cpu-x", tmp_path)
    (tmp_path / "cpu-x" / published.NOTES_FILE).write_text("ran on 2 cores\n")
    with pytest.raises(ValueError, match="exists: give --replace to replace it"):
        published.publish(run_dir, "cpu-x", tmp_path)  # never without a word
    published.publish(run_dir, "cpu-x", tmp_path, replace=True)
    assert (tmp_path / "cpu-x" / published.NOTES_FILE).read_text() == "ran on 2 cores\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cpu-x"]


def test_a_run_with_a_figure_missing_is_refused_and_a_stopped_run_is_marked(run_dir, tmp_path):
    """A run whose figures/ was deleted would publish links to nothing: refused, with the
    command that redraws them; a run stopped before its end (killed, no budget left) says so
    in the index's table of runs."""
    import shutil

    copy = tmp_path / "copy"
    shutil.copytree(run_dir, copy)
    shutil.rmtree(copy / "figures")
    with pytest.raises(ValueError, match=r"missing, e\.g\. figures/.*icl-verify report"):
        published.publish(copy, "cpu-y", tmp_path / "docs")
    assert not (tmp_path / "docs" / "cpu-y").exists()
    stopped = dataclasses.replace(load_run(run_dir), finished=None)
    docs = tmp_path / "docs2"
    published.publish(run_dir, "cpu-z", docs)
    stopped.save(docs / "cpu-z")
    text = published.paper_index(_quick("agrees", run_dir), published.publications(docs))
    row = next(line for line in text.splitlines() if line.startswith("| [cpu-z]"))
    assert "0 (stopped before its end)" in row


def test_the_index_has_every_claim_and_says_why_one_has_no_paper_verdict(run_dir, tmp_path):
    published.publish(run_dir, "cpu-x", tmp_path)
    record = load_run(run_dir).claims[0]
    text = published.paper_index(_quick(record.verdict, run_dir), published.publications(tmp_path))
    rows = [line for line in text.splitlines() if line.startswith("| ") and "-" in line[:12]]
    assert [row.split(" | ")[0][2:] for row in rows[1:]] == [c.id for c in all_claims()]
    row = next(r for r in rows if r.startswith(f"| {CLAIM} |"))
    # the verdicts beside the claim, then what is checked, the size and the figure
    assert re.search(rf"\| \*\*{record.verdict}\*\*{MARK} \| .+ \| smoke; cpu, \d+ s \| \[", row)
    assert f"(cpu-x/{record.figures[0]})" in row
    for claim in trained_claims():
        assert f"| {claim.id} |" in text
        row = next(r for r in rows if r.startswith(f"| {claim.id} |"))
        assert "needs a GPU: not yet run" in row
    assert "No verdict changed with size." in text


def test_a_verdict_that_changed_with_size_names_the_checks_that_moved(run_dir, tmp_path):
    published.publish(run_dir, "cpu-x", tmp_path)
    record = load_run(run_dir).claims[0]
    quick = _quick("disagrees", run_dir)
    moved = quick.claims[CLAIM]["checks"][0]
    quick.claims[CLAIM]["checks"][0] = {**moved, "verdict": "disagrees", "summary": "9.99 ± 1",
                                        "score": "2.5"}  # fmt: skip
    text = published.paper_index(quick, published.publications(tmp_path))
    changed = text.split("## Where quick and paper size differ")[1]
    verdicts = f"disagrees{MARK} at quick → {record.verdict}{MARK} at paper size"
    assert f"**{CLAIM}**: {verdicts}" in changed
    paper = f"paper {moved['summary']}, score {value_text(moved['score'])} ({record.verdict})"
    quick_side = f"{moved['label']} (`{moved['rule']}`): quick 9.99 ± 1, score 2.5 (disagrees)"
    assert f"{quick_side} → {paper}" in changed


def test_a_paper_size_disagreement_is_listed_with_its_numbers(run_dir, tmp_path):
    record = load_run(run_dir)
    claim = record.claims[0]
    check = dataclasses.replace(claim.checks[0], verdict="disagrees")
    failing = dataclasses.replace(claim, verdict="disagrees", checks=(check, *claim.checks[1:]))
    failing_run = _saved(dataclasses.replace(record, claims=(failing,)), tmp_path / "failing",
                         run_dir)  # fmt: skip
    published.publish(failing_run, "cpu-y", tmp_path / "docs")
    text = published.paper_index(_quick("agrees", run_dir),
                                 published.publications(tmp_path / "docs"))  # fmt: skip
    section = text.split("## Disagreements at the papers' size")[1].split("## Where")[0]
    line = f"- **{CLAIM}** ([report](cpu-y/report.md)): {check.label}: {format_measured(check)}"
    assert line in section


def test_the_command_publishes_and_writes_the_index(run_dir, tmp_path, capsys):
    quick = tmp_path / "quick.json"
    quick.write_text(json.dumps({"preset": "quick", "source": "run q", "claims": {}}))
    docs = tmp_path / "paper"
    assert main(["publish", str(run_dir), "--name", "cpu-x", "--docs", str(docs),
                 "--quick", str(quick)]) == 0  # fmt: skip
    assert (docs / "cpu-x" / "results.json").is_file() and (docs / "README.md").is_file()
    assert main(["publish", "--docs", str(docs), "--quick", str(quick)]) == 0


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--name", "x"], "--name: give RESULTS_DIR and --name together"),
        (["RUN", "--name", "../x"], "--name: name must be a plain folder name"),
        (["RUN", "--name", "x", "--quick", "nowhere.json"], "--quick: must be a quick verdict"),
        (["--docs", "nowhere"], "--docs: must be a folder of publications"),
        (["nowhere", "--name", "x"], "RESULTS_DIR: results directory must contain"),
        (["DAMAGED", "--name", "x"], "RESULTS_DIR: "),
    ],
)
def test_bad_input_is_one_line_and_exit_2(run_dir, tmp_path, capsys, argv, message):
    damaged = tmp_path.parent / f"{tmp_path.name}-damaged"  # outside the docs folder
    damaged.mkdir()
    (damaged / "results.json").write_text('{"run_id": ')
    argv = [str(run_dir) if a == "RUN" else str(damaged) if a == "DAMAGED" else a for a in argv]
    defaults = {"--docs": str(tmp_path), "--quick": str(ROOT / "docs" / "verdicts-quick.json")}
    argv += [x for key, value in defaults.items() if key not in argv for x in (key, value)]
    assert main(["publish", *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"icl-verify: error: {message}") and "\n" not in err
    assert "--run-id" not in err  # an option publish does not have
    assert list(tmp_path.iterdir()) == []  # nothing written


def test_the_committed_index_is_what_the_command_writes():
    # regenerate with `icl-verify publish` after publishing a run
    docs = ROOT / "docs" / "paper"
    expected = published.paper_index(
        Verdicts.from_summary(ROOT / "docs" / "verdicts-quick.json"), published.publications(docs)
    )
    assert (docs / published.INDEX_FILE).read_text() == expected


def test_a_claim_published_from_both_devices_shows_both_verdicts_and_the_checks_that_differ(
    run_dir, tmp_path
):
    published.publish(run_dir, "cpu-x", tmp_path)
    record = load_run(run_dir)
    claim = record.claims[0]
    moved = dataclasses.replace(claim.checks[0], verdict="inconclusive")
    on_cuda = dataclasses.replace(claim, device="cuda", checks=(moved, *claim.checks[1:]))
    cuda = _saved(dataclasses.replace(record, device="cuda", claims=(on_cuda,)),
                  tmp_path / "run-cuda", run_dir)  # fmt: skip
    published.publish(cuda, "gpu-x", tmp_path / "docs")
    published.publish(run_dir, "cpu-x", tmp_path / "docs")
    pubs = published.publications(tmp_path / "docs")
    assert list(published.newest_by_device(CLAIM, pubs)) == ["cpu", "cuda"]
    text = published.paper_index(_quick(claim.verdict, run_dir), pubs)
    row = next(r for r in text.splitlines() if r.startswith(f"| {CLAIM} |"))
    assert f"**{claim.verdict}** (cpu), **{claim.verdict}** (cuda)" in row
    section = text.split("## The same claims on the CPU and on CUDA")[1]
    n = len(claim.checks)
    assert f"| {n - 1} of {n} | {moved.label.replace('|', chr(92) + '|')}: cpu " in section
    assert "(inconclusive)" in section.split(f"| {CLAIM} |")[1]


def test_a_reduced_run_is_not_a_second_full_size_verdict(run_dir, tmp_path):
    record = load_run(run_dir)
    reduced = dataclasses.replace(record.claims[0], device="cuda", overrides={"d": 3})
    cuda = _saved(dataclasses.replace(record, device="cuda", claims=(reduced,)),
                  tmp_path / "run-cuda", run_dir)  # fmt: skip
    published.publish(cuda, "gpu-x", tmp_path / "docs")
    published.publish(run_dir, "cpu-x", tmp_path / "docs")
    pubs = published.publications(tmp_path / "docs")
    assert list(published.newest_by_device(CLAIM, pubs)) == ["cpu"]
