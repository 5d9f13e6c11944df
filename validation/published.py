"""The paper-size reports published under ``docs/paper/`` and their index page.

A *publication* is a finished (or budget-stopped) run copied into ``docs/paper/<name>/``:
its results.json, report.md and figures, never its checkpoints or cache. The index,
``docs/paper/README.md``, is generated from the publications and the committed quick verdicts
(``docs/verdicts-quick.json``): every claim of both papers with its verdict at quick and at
the paper's size, the size and device that produced the latter, its figure, the claims that
disagree at paper size, and, where quick and paper differ, which checks moved and by how much.
``icl-verify publish`` writes both; nothing in the index is written by hand.

>>> from icl_verify.validation.site import Verdicts
>>> text = paper_index(Verdicts("quick", "run q", {}), {})
>>> "| HE-OBS1 |" in text and "needs a GPU: not yet run" in text
True
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

from icl_verify.validation.records import (
    RESULTS_FILE,
    UNRECOVERABLE,
    ClaimRecord,
    RunRecord,
    load_run,
    value_text,
)
from icl_verify.validation.registry import all_claims, trained_claims
from icl_verify.validation.report import (
    REPORT_FILE,
    marked,
    reconstruction_footnote,
    reconstruction_sentence,
)
from icl_verify.validation.site import Verdicts, check_entry, check_text, stability_text

from icl_verify._files import write_atomic

__all__ = ["INDEX_FILE", "NOTES_FILE", "Publication", "check_name", "newest", "newest_by_device",
           "paper_index", "publications", "publish", "write_index"]

INDEX_FILE = "README.md"
#: A publication's own account (machine, session, what was cut), written by a person and
#: linked from the index when present.
NOTES_FILE = "notes.md"


@dataclass(frozen=True)
class Publication:
    """One run published under ``docs/paper/<name>/``."""

    folder: Path
    record: RunRecord

    @property
    def name(self) -> str:
        return self.folder.name

    @property
    def notes_path(self) -> Path:
        return self.folder / NOTES_FILE

    def claim(self, claim_id: str) -> ClaimRecord | None:
        return self.record.claim(claim_id)


def check_name(name: str) -> None:
    """ValueError (one line) unless ``name`` is a plain folder name.

    >>> check_name("cpu-untrained"); check_name("../x")
    Traceback (most recent call last):
    ValueError: name must be a plain folder name (e.g. cpu-untrained), got '../x'
    """
    if not name or name != Path(name).name or name.startswith(".") or name in ("..", "."):
        raise ValueError(f"name must be a plain folder name (e.g. cpu-untrained), got {name!r}")


def publish(run_dir: Path, name: str, docs: Path, replace: bool = False) -> Path:
    """Copy the run in ``run_dir`` (results.json, report.md, figures/*.png; no checkpoints)
    into ``docs/<name>/``; returns the folder. An earlier publication of that name is replaced
    only with ``replace`` (its notes.md kept).

    Raises ValueError (one line) when ``run_dir`` holds no readable run, a figure its records
    name is missing, ``name`` is not a plain folder name (`check_name`), or a publication of
    that name exists and ``replace`` is not given.
    """
    check_name(name)
    record = load_run(run_dir, advice=UNRECOVERABLE)  # damaged: fails before anything changes
    missing = [path for claim in record.claims for path in claim.figures
               if not (Path(run_dir) / path).is_file()]  # fmt: skip
    if missing:
        raise ValueError(
            f"{len(missing)} figure(s) its records name are missing, e.g. {missing[0]}: redraw "
            f"them with `icl-verify report {run_dir}`"
        )
    target = Path(docs) / name
    if target.exists() and not replace:
        raise ValueError(
            f"a publication {target} exists: give --replace to replace it (its notes.md is kept)"
        )
    staging = Path(docs) / f".{name}.publishing"
    shutil.rmtree(staging, ignore_errors=True)
    (staging / "figures").mkdir(parents=True)
    for file in (RESULTS_FILE, REPORT_FILE):
        shutil.copy2(Path(run_dir) / file, staging / file)
    for png in sorted((Path(run_dir) / "figures").glob("*.png")):
        shutil.copy2(png, staging / "figures" / png.name)
    if (target / NOTES_FILE).is_file():  # a person's notes outlive a republication
        shutil.copy2(target / NOTES_FILE, staging / NOTES_FILE)
    # the old publication stays whole until the new one is: killed at any moment, one of the
    # two is complete under its own name (the staging or the old one is left, never half)
    retired = Path(docs) / f".{name}.retired"
    shutil.rmtree(retired, ignore_errors=True)
    if target.exists():
        target.rename(retired)
    staging.rename(target)
    shutil.rmtree(retired, ignore_errors=True)
    return target


def publications(docs: Path) -> dict[str, Publication]:
    """Every publication under ``docs``, by folder name."""
    return {
        path.parent.name: Publication(path.parent, load_run(path.parent))
        for path in sorted(Path(docs).glob(f"*/{RESULTS_FILE}"))
    }


def newest(claim_id: str, published: dict[str, Publication]) -> Publication | None:
    """The newest publication that finished ``claim_id``."""
    holding = [p for p in published.values() if p.claim(claim_id) is not None]
    return max(holding, key=lambda p: p.record.started, default=None)


def newest_by_device(claim_id: str, published: dict[str, Publication]) -> dict[str, Publication]:
    """Per device, the newest publication that finished ``claim_id`` at its full preset (no
    parameter changed): where there are two, the claim was decided at full size on two
    independent random streams (the CPU's and CUDA's generators draw different prompts)."""
    full = {}
    for pub in sorted(published.values(), key=lambda p: p.record.started):
        record = pub.claim(claim_id)
        if record is not None and not record.overrides:
            full[record.device.split(":")[0]] = pub
    return dict(sorted(full.items()))


def _unfinished(claim_id: str, published: dict[str, Publication]) -> Publication | None:
    return next((p for p in published.values() if claim_id in p.record.unfinished), None)


def _cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _size(record: ClaimRecord, run: RunRecord) -> str:
    """The preset, what was changed from it (a reduced size, marked), device and wall time;
    a trained claim that took under a minute read trainings made before it (by another claim,
    or as tasks of their own), which its cell says instead of a bare "0 s"."""
    changed = ", ".join(f"{k}={value_text(v)}" for k, v in sorted(record.overrides.items()))
    preset = f"{run.preset}, **reduced**: {changed}" if changed else run.preset
    time = f"{record.seconds:.0f} s"
    if record.seconds < 60 and record.id in {claim.id for claim in trained_claims()}:
        time += " + a shared training"
    return f"{preset}; {record.device}, {time}"


def _check_line(check: dict) -> str:
    """A check's numbers in one line (`site.check_entry`): its summary, score, rule, verdict."""
    return (f"{check['label']}: {check['summary']}, score {check['score']} "
            f"(`{check['rule']}`): {check['verdict']}")  # fmt: skip


def _as_text(record: ClaimRecord) -> dict[str, dict]:
    """A stored claim's checks by label, as the quick summary holds them (`site.check_text`)."""
    return {check.label: check_text(check_entry(check)) for check in record.checks}


def _devices_row(shown: str, devices: dict[str, Publication], claim_id: str,
                 reconstruction: str = "") -> str:  # fmt: skip
    """One row of the two-device table: each device's verdict (marked when the claim rests on a
    reconstructed formula), the checks whose verdicts are the same on every device, and each
    check that differs with every device's numbers."""
    texts = {device: _as_text(pub.claim(claim_id)) for device, pub in devices.items()}
    labels = [label for label in next(iter(texts.values())) if all(label in t for t in
                                                                    texts.values())]
    same = [label for label in labels if len({t[label]["verdict"] for t in texts.values()}) == 1]
    differ = "; ".join(
        f"{label}: " + ", ".join(f"{device} {t[label]['summary']}, score {t[label]['score']} "
                                 f"({t[label]['verdict']})" for device, t in texts.items())
        for label in labels if label not in same
    )
    verdicts = ", ".join(f"{p.claim(claim_id).verdict} ([{device}]({p.name}/{REPORT_FILE}))"
                         for device, p in devices.items())  # fmt: skip
    verdicts = marked(verdicts, reconstruction)
    return (f"| {shown} | {verdicts} | {len(same)} of {len(labels)} | "
            f"{_cell(differ) or 'none'} |")


def _moved(quick: dict, record: ClaimRecord) -> list[str]:
    """The checks whose verdict differs between the quick summary and the paper-size run."""
    before = {c["label"]: c for c in quick["checks"]}
    after = _as_text(record)
    lines = []
    for label, check in after.items():
        if label not in before:
            lines.append(f"  - only at paper size: {_check_line(check)}")
        elif before[label]["verdict"] != check["verdict"]:
            was = before[label]
            lines.append(f"  - {label} (`{check['rule']}`): quick {was['summary']}, score "
                         f"{was['score']} ({was['verdict']}) → paper {check['summary']}, score "
                         f"{check['score']} ({check['verdict']})")  # fmt: skip
    lines += [f"  - only at quick: {_check_line(c)}" for label, c in before.items()
              if label not in after and c["verdict"] != "agrees"]  # fmt: skip
    return lines


def paper_index(
    quick: Verdicts,
    published: dict[str, Publication],
    findings: str = "../site/findings-explained.md",
    notes: bool = True,
    claim_link: str = "",
) -> str:
    """The index page of ``docs/paper/`` (markdown), from the quick verdicts and the
    publications; a claim without a paper-size verdict says why (a GPU's training, or not
    yet run). ``findings``: the link to the findings explained; ``notes``: a column linking
    each publication's notes (the documentation site copies the reports, not the notes);
    ``claim_link``: where a claim's id links to, e.g. ``"../claims/{id}.md"`` (none: plain)."""
    trained = {c.id for c in trained_claims()}
    lines = [
        "# Every claim at the papers' size",
        "",
        "Generated by `icl-verify publish` from the published runs below and the committed "
        f"quick verdicts ({quick.source}); regenerate it after publishing a run. A claim's "
        "paper verdict is the newest published run that finished it; *reduced* marks a run "
        "below the paper preset's size, with what was changed.",
        "",
        *_runs_table(published, notes),
    ]
    changed, disagree, both = [], [], []
    claims = all_claims()
    for paper_name in dict.fromkeys(claim.source.paper for claim in claims):
        ours = [claim for claim in claims if claim.source.paper == paper_name]
        lines += ["", f"## {paper_name}", "",
                  "| claim | quick | paper size | what is checked | size; device, time | "
                  "figure |", "|---|---|---|---|---|---|"]  # fmt: skip
        # the verdicts beside the claim: on a phone's width the later columns scroll
        for claim in ours:
            row, its_disagree, its_changed, its_both = _claim_row(
                claim, quick, published, claim_link, claim.id in trained
            )
            lines.append(row)
            disagree += its_disagree
            changed += its_changed
            both += its_both
        lines += reconstruction_footnote({c.id: c.source.reconstruction for c in ours})
    return "\n".join(lines + _closing_sections(disagree, changed, both, findings)) + "\n"


def _runs_table(published: dict[str, Publication], notes: bool) -> list[str]:
    """The index's table of published runs, one row per publication."""
    lines = [
        "## Published runs",
        "",
        "| folder | preset | device | claims finished | their time (sum) | unfinished | started |"
        + (" notes |" if notes else ""),
        "|---|---|---|---|---|---|---|" + ("---|" if notes else ""),
    ]
    for name, pub in published.items():
        run = pub.record
        told = (f" [{NOTES_FILE}]({name}/{NOTES_FILE}) |" if pub.notes_path.is_file() else " |"
                ) if notes else ""  # fmt: skip
        minutes = sum(c.seconds for c in run.claims) / 60
        stopped = "" if run.finished else " (stopped before its end)"
        lines.append(f"| [{name}]({name}/{REPORT_FILE}) | {run.preset} | {run.device} | "
                     f"{len(run.claims)} | {minutes:.1f} min | {len(run.unfinished)}{stopped} | "
                     f"{run.started[:16]} |{told}")  # fmt: skip
    return lines


def _claim_row(
    claim, quick: Verdicts, published: dict[str, Publication], claim_link: str, trained: bool
) -> tuple[str, list[str], list[str], list[str]]:
    """One claim's row of its paper's table, and its lines for the closing sections: (row,
    disagreement lines, changed-with-size lines, both-devices rows)."""
    shown = f"[{claim.id}]({claim_link.format(id=claim.id)})" if claim_link else claim.id
    flag = claim.source.reconstruction
    entry = quick.claims.get(claim.id)
    at_quick = marked(entry["verdict"], flag) if entry else "not run"
    if entry and stability_text(entry):
        at_quick += f"; {stability_text(entry)}"
    pub = newest(claim.id, published)
    if pub is None:
        stopped = _unfinished(claim.id, published)
        at_paper = (f"unfinished ([{stopped.name}]({stopped.name}/{REPORT_FILE}))"
                    if stopped else "needs a GPU: not yet run" if trained
                    else "not yet run")  # fmt: skip
        return f"| {shown} | {at_quick} | {at_paper} | {_cell(claim.summary)} | | |", [], [], []
    record = pub.claim(claim.id)
    devices = newest_by_device(claim.id, published)
    at_paper = marked(", ".join(f"**{p.claim(claim.id).verdict}** ({device})"
                                for device, p in devices.items())
                      if len(devices) > 1 else f"**{record.verdict}**", flag)  # fmt: skip
    both = [_devices_row(shown, devices, claim.id, flag)] if len(devices) > 1 else []
    figure = (f"[{Path(record.figures[0]).name}]({pub.name}/{record.figures[0]})"
              if record.figures else "")  # fmt: skip
    row = (f"| {shown} | {at_quick} | {at_paper} | {_cell(claim.summary)} | "
           f"{_cell(_size(record, pub.record))} | {figure} |")  # fmt: skip
    disagree = []
    if record.verdict == "disagrees":
        failed = [c for c in record.checks if c.verdict == "disagrees"]
        checks = _as_text(record)
        disagree.append(f"- **{claim.id}** ([report]({pub.name}/{REPORT_FILE})): "
                        + "; ".join(_check_line(checks[c.label]) for c in failed))
        disagree += [f"  {reconstruction_sentence(flag)}"] if flag else []
    changed = []
    if entry is not None and entry["verdict"] != record.verdict:
        changed += [f"- **{claim.id}**: {at_quick} at quick → "
                    f"{marked(record.verdict, flag)} at paper size:",
                    *_moved(entry, record)]  # fmt: skip
    return row, disagree, changed, both


def _closing_sections(
    disagree: list[str], changed: list[str], both: list[str], findings: str
) -> list[str]:
    """The index's closing sections: disagreements at the papers' size, verdicts that
    changed with size, and the claims run on both devices."""
    lines = ["", "## Disagreements at the papers' size", "",
             "Each claim whose paper-size run disagrees, with the checks that do. What they "
             f"mean: [The findings, explained]({findings}) (the quick "
             "preset's evidence) and each run's report.", ""]  # fmt: skip
    lines += disagree or ["None published yet."]
    lines += ["", "## Where quick and paper size differ", "",
              "Each claim whose verdict changed with size, and the checks whose verdict moved: "
              "the measurement at quick → at paper size as the reports summarise it (for a "
              "list of values, the largest |measured − predicted| and the largest error), and "
              "the score, |measured − predicted| over what the rule allows (> 1 disagrees).",
              ""]  # fmt: skip
    lines += changed or ["No verdict changed with size."]
    lines += ["", "## The same claims on the CPU and on CUDA", "",
              "Claims decided at the full paper preset on both devices. The two runs drew "
              "independent random streams (the CPU's Mersenne twister, CUDA's Philox: other "
              "prompts, other initial weights), so where their verdicts agree the verdict is "
              "not the draw's; a check that differs is listed with both measurements.", ""]
    lines += (["| claim | verdicts | checks with one verdict on both | checks that differ |",
               "|---|---|---|---|", *both] if both
              else ["No claim has been published at full size from both devices yet."])
    return lines


def write_index(docs: Path, quick_summary: Path) -> Path:
    """Regenerate ``docs/README.md`` (`paper_index`) from what is published there."""
    path = Path(docs) / INDEX_FILE
    write_atomic(path, paper_index(Verdicts.from_summary(quick_summary), publications(docs)))
    return path
