"""`icl-verify figures he2025`: every paper figure from the claims' stored records, end to end.

One module-scoped run at the smoke preset, then a second call on the same run id, which must
only redraw: no claim is recomputed. The run's ``OUT/cache`` is the session's cache of runs at
seed 0 (`smoke_cache`: the registry's run makes the same trainings), and its claims run in this
process, not on a pool of their own per claim (the command runs one claim at a time; what a
pool changes is tests/validation/test_executors.py's): the figures command is what is tested.
"""

import re

import pytest
from icl_verify.validation import executors
from icl_verify.validation.cli import main
from icl_verify.validation.paper_figures import paper_claims, papers
from icl_verify.validation.records import load_run
from icl_verify.validation.registry import all_claims

COMMON = ["--preset", "smoke", "--device", "cpu", "--no-progress"]
HE2025, HE2025_OMITTED = papers()["he2025"]
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
pytestmark = pytest.mark.heavy  # the figures' claims run, then every figure drawn twice


@pytest.fixture(scope="module")
def figures_run(tmp_path_factory, smoke_cache):
    out = tmp_path_factory.mktemp("figures")
    (out / "cache").symlink_to(smoke_cache, target_is_directory=True)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(executors, "default_workers", lambda: 1)
        status = main(["figures", "he2025", "--out", str(out), *COMMON])
    run_dir = out / "figures-smoke"
    first = {c.id: (c.seconds, c.verdict) for c in load_run(run_dir).claims}
    stamps = {p.name: p.stat().st_mtime_ns for p in (run_dir / "he2025-figures").glob("*.png")}
    return status, run_dir, first, stamps


def _sections(index: str) -> dict[int, str]:
    """index.md's text per figure number."""
    parts = re.split(r"^## Figure (\d+)$", index, flags=re.MULTILINE)
    return {int(number): text for number, text in zip(parts[1::2], parts[2::2], strict=True)}


def test_every_figure_of_a_registered_claim_is_a_png_listed_in_the_index(figures_run, capsys):
    status, run_dir, _, _ = figures_run
    assert status == 0
    folder = run_dir / "he2025-figures"
    sections = _sections((folder / "index.md").read_text())
    numbers = [f.number for f in HE2025] + [f.number for f in HE2025_OMITTED]
    assert sorted(sections) == sorted(numbers)
    registered = {claim.id for claim in all_claims()}
    for figure in HE2025:
        text = sections[figure.number]
        assert "preset: `smoke`" in text
        for claim_id in figure.claims:
            assert claim_id in text
        if set(figure.claims) <= registered:
            png = folder / figure.file_name
            assert f"file: `{figure.file_name}`" in text
            assert png.read_bytes()[:8] == PNG_SIGNATURE and png.stat().st_size > 10_000
        else:
            missing = sorted(set(figure.claims) - registered)[0]
            assert f"not available: claim {missing} not registered" in text
            assert not (folder / figure.file_name).exists()
    for omitted in HE2025_OMITTED:
        assert "not drawn" in sections[omitted.number]
    drawn = {f.file_name for f in HE2025 if set(f.claims) <= registered}
    assert {p.name for p in folder.glob("*.png")} == drawn  # nothing the index does not list
    assert {"figure-01.png", "figure-04.png", "figure-05.png", "figure-22.png"} <= drawn


def test_the_run_holds_exactly_the_registered_claims_the_figures_read(figures_run):
    _, run_dir, first, _ = figures_run
    registered = {claim.id for claim in all_claims()}
    assert set(first) == set(paper_claims(HE2025)) & registered


def test_a_second_call_reuses_the_run_and_only_redraws(figures_run, capsys):
    _, run_dir, first, stamps = figures_run
    out = run_dir.parent
    capsys.readouterr()
    assert main(["figures", "he2025", "--out", str(out), *COMMON]) == 0
    assert capsys.readouterr().out.strip().endswith("he2025-figures/index.md")
    again = {c.id: (c.seconds, c.verdict) for c in load_run(run_dir).claims}
    assert again == first  # no claim recomputed: the stored seconds are those of the first run
    redrawn = {p.name: p.stat().st_mtime_ns for p in (run_dir / "he2025-figures").glob("*.png")}
    assert redrawn.keys() == stamps.keys()
    assert all(redrawn[name] > stamps[name] for name in stamps)  # drawn again from the records


@pytest.mark.parametrize(
    "arguments, message",
    [
        (["figures", "chen2099"], "PAPER must be one of he2025, chen2024, got 'chen2099'"),
        (["figures", "he2025", "--preset", "huge"], "--preset must be one of smoke, quick, paper"),
        (["figures", "he2025", "--seed", "-1"], "--seed must be an integer"),
        (["figures", "he2025", "--run-id", "a/b"], "--run-id must be 1-100 characters"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(arguments, message, tmp_path, capsys):
    assert main([*arguments, "--out", str(tmp_path)]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and message in error
    assert not any(tmp_path.iterdir())  # nothing run, nothing written


def test_an_unwritable_out_is_one_line_and_exit_2(tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    assert main(["figures", "he2025", "--out", str(blocker / "results"), *COMMON]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "not a writable directory" in error


def test_a_resumed_run_of_another_preset_is_refused(figures_run, capsys):
    _, run_dir, _, _ = figures_run
    arguments = ["figures", "he2025", "--out", str(run_dir.parent), "--run-id", run_dir.name]
    assert main([*arguments, "--preset", "quick", "--device", "cpu", "--no-progress"]) == 2
    assert "exists with preset 'smoke'" in capsys.readouterr().err
