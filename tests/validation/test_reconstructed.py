"""A claim whose prediction rests on a formula the paper's text does not confirm says so beside
its verdict: the declaration (`validation.claim.Reconstructed` in the claim's `Source`) is
well-formed and tagged so in the paper's reference catalogue, and the claim's page, the claims
index, the paper-size index and the run report mark the verdict and name the formula."""

import dataclasses
import os
import re
import shutil
from pathlib import Path

import pytest
from icl_verify.validation import api, published, site
from icl_verify.validation.claim import RECONSTRUCTION_TAGS, Reconstructed, Source
from icl_verify.validation.records import load_run
from icl_verify.validation.registry import all_claims, paper_of, select_claims
from icl_verify.validation.report import RECONSTRUCTED_MARK, render_report, retabulate

ROOT = Path(__file__).resolve().parents[2]
SUMMARY = ROOT / "docs" / "verdicts-quick.json"
#: The reference catalogues (`shared/reference/<paper>.md`), beside the checkout unless named.
REFERENCE = Path(os.environ.get("ICL_VERIFY_REFERENCE", ROOT.parent / "shared" / "reference"))
FLAGGED = "HE-S2-BOUND"  # rests on (4.4)-(4.5); cheap at smoke (a fraction of a second)
PLAIN = "HE-4.12"  # rests on nothing unconfirmed (its optimum is derived from the code's (4.1))
#: Catalogue entries tagged [RECON] / [OPEN] that no claim's prediction rests on, and why.
NOT_RESTED_ON = {
    "HE-2.2": "the model's definition; the authors' code implements it (its [CODE] beside it)",
    "HE-5.1-LENGTH": "the [OPEN] is the linear-attention run's training settings, no formula; "
    "the claim rests on (5.1), declared as HE-5.1-LIN's",
    "7": "the paper's figure numbering, no formula",
}


@pytest.mark.parametrize(
    ("flag", "message"),
    [
        (("", "HE-MAN", "RECON"), "formula must name the formula on one line"),
        (("(4.7)\nand (4.8)", "HE-MAN", "RECON"), "formula must name the formula on one line"),
        (("(4.7)", "§HE-MAN", "RECON"), "entry must be a catalogue entry's id"),
        (("(4.7)", "HE MAN", "RECON"), "entry must be a catalogue entry's id"),
        (("(4.7)", "HE-MAN", "recon"), "tag must be one of RECON, OPEN"),
    ],
)
def test_a_malformed_flag_is_one_line_naming_the_parameter(flag, message):
    with pytest.raises(ValueError, match=re.escape(message)) as error:
        Reconstructed(*flag)
    assert "\n" not in str(error.value)


def test_a_source_takes_flags_only_as_reconstructed():
    flag = Reconstructed("(4.7)", "HE-MAN", "RECON")
    assert Source("p", "4.2", "(4.7)", flag).reconstructed == (flag,)
    with pytest.raises(ValueError, match="reconstructed must be a Reconstructed or a tuple"):
        Source("p", "4.2", "(4.7)", "(4.7), reconstructed from the prose")


def _catalogue(paper: str) -> str:
    path = REFERENCE / f"{paper}.md"
    if not path.is_file():
        pytest.skip(f"no reference catalogue at {path} (set ICL_VERIFY_REFERENCE)")
    return path.read_text()


def _sections(catalogue: str) -> dict[str, str]:
    """The catalogue's entries by id: "### HE-MAN ..." as "HE-MAN", "## 5. ..." as "5"."""
    parts = re.split(r"(?m)^(#{2,3} \S+)", catalogue)
    heads, bodies = parts[1::2], parts[2::2]
    return {head.split()[1].rstrip("."): head + body
            for head, body in zip(heads, bodies, strict=True)}  # fmt: skip


def _tagged(section: str, tag: str) -> bool:
    """Whether ``section`` tags something [tag] (alone or with others, e.g. [RECON+DERIVED])."""
    return re.search(rf"\[{tag}\b[^\]]*\]", section) is not None


def test_every_flag_names_an_entry_its_catalogue_tags_so():
    # a flag points at the catalogue entry that tags it, with the equation labels it names
    flagged = [claim for claim in all_claims() if claim.source.reconstructed]
    assert flagged
    for claim in flagged:
        sections = _sections(_catalogue(paper_of(claim)))
        for flag in claim.source.reconstructed:
            section = sections.get(flag.entry, "")
            assert _tagged(section, flag.tag), f"{claim.id}: §{flag.entry} has no [{flag.tag}]"
            for label in re.findall(r"\((?:[A-Z]\.)?\d+(?:\.\d+)?\)", flag.formula):
                assert label in section, f"{claim.id}: §{flag.entry} does not mention {label}"


def test_every_unconfirmed_formula_of_a_catalogue_is_declared_by_the_claims_resting_on_it():
    # a [RECON] / [OPEN] entry (one whose tag the authors' code does not back) is declared by
    # a claim or is in NOT_RESTED_ON with the reason
    for paper in sorted({paper_of(claim) for claim in all_claims()}):
        declared = {flag.entry for claim in all_claims() if paper_of(claim) == paper
                    for flag in claim.source.reconstructed}  # fmt: skip
        unconfirmed = {
            entry for entry, section in _sections(_catalogue(paper)).items()
            if any(re.search(rf"\[{tag}\b(?![^\]]*CODE)[^\]]*\]", section)
                   for tag in RECONSTRUCTION_TAGS)
        }  # fmt: skip
        assert unconfirmed - declared == (set(NOT_RESTED_ON) if paper == "he2025" else set())
        assert not declared & set(NOT_RESTED_ON)


def test_a_flagged_claims_page_and_the_claims_index_mark_its_verdict_and_name_the_formula():
    latest = site.Verdicts.from_summary(SUMMARY)
    flagged, plain = select_claims([FLAGGED, PLAIN])
    page = site.claim_page(flagged, latest, {})
    verdict = latest.claims[FLAGGED]["verdict"]
    assert f"**{verdict}**{RECONSTRUCTED_MARK} at the quick preset" in page
    sentence = next(
        line for line in page.splitlines() if "rests on a reconstructed formula" in line
    )
    assert sentence.startswith(RECONSTRUCTED_MARK) and "reference §HE-S2 [RECON]" in sentence
    assert RECONSTRUCTED_MARK not in site.claim_page(plain, latest, {})
    index = site.claims_index(latest)
    assert f"| {verdict}{RECONSTRUCTED_MARK} |" in _row(index, f"[{FLAGGED}]")
    assert RECONSTRUCTED_MARK not in _row(index, f"[{PLAIN}]")
    assert f"- {FLAGGED}: (4.4)-(4.5)" in index


def _row(text: str, start: str) -> str:
    return next(line for line in text.splitlines() if line.startswith(f"| {start}"))


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    return api.run_many([FLAGGED], "smoke", out=tmp_path_factory.mktemp("runs")).run_dir


def test_the_report_marks_the_verdict_and_a_run_recorded_before_the_flag_gets_it(run_dir):
    record = load_run(run_dir)
    claim = select_claims([FLAGGED])[0]
    assert record.claims[0].reconstructed == claim.source.reconstruction
    report = (run_dir / "report.md").read_text()
    assert f"| {FLAGGED}{RECONSTRUCTED_MARK} |" in report
    assert f"### {FLAGGED}: {record.claims[0].verdict}{RECONSTRUCTED_MARK}" in report
    assert f"- {FLAGGED}: {claim.source.reconstruction}" in report
    older = dataclasses.replace(
        record, claims=(dataclasses.replace(record.claims[0], reconstructed=""),)
    )
    assert RECONSTRUCTED_MARK not in render_report(older)
    assert render_report(retabulate(older)) == render_report(record)


def test_the_paper_index_marks_both_verdicts_and_a_disagreement_names_the_formula(
    run_dir, tmp_path
):
    run = load_run(run_dir)
    check = dataclasses.replace(run.claims[0].checks[0], verdict="disagrees")
    failing = dataclasses.replace(run.claims[0], verdict="disagrees", checks=(check,))
    dataclasses.replace(run, claims=(failing,)).save(tmp_path / "failing")
    (tmp_path / "failing" / "report.md").write_text("# report\n")
    shutil.copytree(run_dir / "figures", tmp_path / "failing" / "figures")
    docs = tmp_path / "paper"
    published.publish(tmp_path / "failing", "cpu-y", docs)
    quick = site.Verdicts.from_run(run_dir)
    text = published.paper_index(quick, published.publications(docs))
    row = _row(text, f"{FLAGGED} |")
    assert f"| agrees{RECONSTRUCTED_MARK} | **disagrees**{RECONSTRUCTED_MARK} |" in row
    section = text.split("## Disagreements at the papers' size")[1].split("## Where")[0]
    assert f"rests on a reconstructed formula: {failing.reconstructed}" in section
    assert f"- {FLAGGED}: {failing.reconstructed}" in text
