"""report.md of a run: metadata, one table of every check, then one section per claim,
grouped per paper.

Rendered from the run's record alone (`results.json`), so `icl-verify report`
re-renders it — and redraws the figures from their stored data — without
re-running anything. A disagreement is stated as a finding, in words.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from icl_verify.validation.claim import VERDICTS
from icl_verify.validation.params import ParameterError
from icl_verify.validation.records import CheckRecord, ClaimRecord, RunRecord

from icl_verify._files import write_atomic

REPORT_FILE = "report.md"
_MARK = {"agrees": "agrees", "inconclusive": "**inconclusive**", "disagrees": "**DISAGREES**"}


def format_number(value) -> str:
    """A scalar as 6 significant digits; an array as its count and range.

    >>> format_number(0.220879121), format_number([0.1, 0.3, 0.2])
    ('0.220879', '3 values in [0.1, 0.3]')
    """
    array = np.asarray(value, dtype=float)
    if array.ndim == 0:
        return f"{float(array):.6g}"
    return f"{array.size} values in [{array.min():.6g}, {array.max():.6g}]"


def format_measured(check: CheckRecord) -> str:
    """Measured value ± error; for arrays, the largest |measured − predicted| and largest error;
    the rule's statistic where it judged one (a `BoundTrend` slope).

    >>> from icl_verify.validation.records import CheckRecord
    >>> c = CheckRecord("q", "q", [1.0, 2.0], [1.1, 2.0], [0.01, 0.02], "se", "r", "j",
    ...                 "agrees", 0.5)
    >>> format_measured(c)
    'max |meas − pred| = 0.1 (errors ≤ 0.02, se)'
    """
    measured, error = np.asarray(check.measured, float), np.asarray(check.error, float)
    if check.statistic:  # the rule judged a statistic of the values, not their differences
        return check.statistic
    if measured.ndim == 0:
        return f"{float(measured):.6g} ± {float(error):.2g} ({check.error_kind})"
    gap = np.max(np.abs(measured - np.asarray(check.predicted, float)))
    return f"max |meas − pred| = {gap:.3g} (errors ≤ {error.max():.2g}, {check.error_kind})"


def paper_of(source: str) -> str:
    """The paper of a claim's source text (`Source.__str__`: "paper, §section, eq. ...").

    >>> paper_of("He et al. 2025, §4.1, eq. (4.1)")
    'He et al. 2025'
    """
    return source.split(", §")[0]


def _finding(claim: ClaimRecord) -> str:
    failed = [c for c in claim.checks if c.verdict == "disagrees"]
    unclear = [c for c in claim.checks if c.verdict == "inconclusive"]
    if failed:
        names = ", ".join(f"{c.label} (score {c.score:.3g} > 1)" for c in failed)
        return (
            f"**Finding: the measurement contradicts the claim** in {names}. "
            "The score is |measured − predicted| / (allowed + uncertainty)."
        )
    if unclear:
        names = ", ".join(c.label for c in unclear)
        return (
            f"**Inconclusive:** the measurement of {names} is too uncertain to decide; "
            "a larger preset would settle it."
        )
    return "All checks agree."


def _summary(record: RunRecord) -> list[str]:
    """Verdict counts, then one line per claim that did not agree, naming its failing checks."""
    counts = {verdict: 0 for verdict in VERDICTS}
    for claim in record.claims:
        counts[claim.verdict] += 1
    lines = [
        f"**{len(record.claims)} claims: {counts['agrees']} agree, "
        f"{counts['inconclusive']} inconclusive, {counts['disagrees']} disagree.**",
        "",
    ]
    for claim in record.claims:
        if claim.verdict == "agrees":
            continue
        checks = ", ".join(c.label for c in claim.checks if c.verdict == claim.verdict)
        lines.append(f"- {claim.id} {_MARK[claim.verdict]}: {checks}")
    return lines + ([""] if len(lines) > 2 else [])


def render_report(record: RunRecord) -> str:
    """The markdown text of report.md for `record`."""
    env = record.environment
    lines = [
        f"# icl-verify report: {record.run_id}",
        "",
        f"- preset `{record.preset}`, seed {record.seed}, device `{record.device}`",
        f"- started {record.started}, finished {record.finished or '(unfinished)'}",
        f"- icl-verify {env.get('package_version')}, git {env.get('git_commit')}, "
        f"python {env.get('python')}, numpy {env.get('numpy')}, torch {env.get('torch')}",
        f"- schema version {record.schema_version}; overall verdict: {_MARK[record.verdict()]}",
        "",
        *_summary(record),
        "| claim | quantity | prediction | measurement | rule | verdict |",
        "|---|---|---|---|---|---|",
    ]
    for claim in record.claims:
        for check in claim.checks:
            cells = (
                claim.id,
                check.label,
                format_number(check.predicted),
                format_measured(check),
                check.rule,
                _MARK[check.verdict],
            )
            lines.append("| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |")
    paper = None
    for claim in record.claims:
        if paper_of(claim.source) != paper:  # claims come grouped per paper (registry order)
            paper = paper_of(claim.source)
            lines += ["", f"## {paper}"]
        lines += [
            "",
            f"### {claim.id}: {_MARK[claim.verdict]}",
            "",
            f"*{claim.statement}*",
            "",
            f"Source: {claim.source}. Parameters: `{_params(claim.params)}`"
            + (
                f" (changed from the preset: `{_params(claim.overrides)}`)"
                if claim.overrides
                else ""
            )
            + f". Time: {claim.seconds:.1f} s on `{claim.device}`.",
            "",
            _finding(claim),
            "",
        ]
        explained: set[str] = set()  # a justification shared by several checks is said once
        for check in claim.checks:
            lines.append(
                f"- **{check.label}**: predicted {format_number(check.predicted)}; "
                f"measured {format_measured(check)}; rule `{check.rule}`; "
                f"{_MARK[check.verdict]} (score {check.score:.3g})."
            )
            if check.justification in explained:
                lines.append("  Why this rule: as above.")
            else:
                lines.append(f"  Why this rule: {check.justification}")
                explained.add(check.justification)
        for table in claim.tables:
            lines += ["", table.rstrip("\n")]
        lines += [""] + [f"![{claim.id}]({path})" for path in claim.figures]
    return "\n".join(lines) + "\n"


def _params(params: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in params.items())


def write_report(record: RunRecord, run_dir: Path) -> Path:
    """Write `<run_dir>/report.md` atomically; its path."""
    path = Path(run_dir) / REPORT_FILE
    write_atomic(path, render_report(record))
    return path


def redraw_figures(record: RunRecord, run_dir: Path) -> list[str]:
    """Redraw each claim's figure from its stored data; ids no longer registered are skipped."""
    from icl_verify.figures.style import save_figure
    from icl_verify.validation.registry import all_claims

    claims = {claim.id: claim for claim in all_claims()}
    redrawn = []
    for stored in record.claims:
        claim = claims.get(stored.id)
        if claim is None:
            continue
        try:
            params = stored.restored_params(claim)
        except ParameterError as error:
            raise ParameterError(f"{stored.id}: {error}") from None
        figures = claim.draw(
            params,
            stored.restored_prediction(),
            stored.restored_measurement(),
        )
        for figure, path in zip(figures, stored.figures, strict=False):
            save_figure(figure, Path(run_dir) / path)
        redrawn.append(stored.id)
    return redrawn
