"""report.md of a run: metadata, one table of every check, then one section per claim,
grouped per paper.

Rendered from the run's record alone (`results.json`), so `icl-verify report`
re-renders it — and redraws the figures from their stored data — without
re-running anything. A disagreement is stated as a finding, in words.

A sweep's report (`icl-verify sweep`) opens with the sweep: one table row per grid point
(swept values, verdict, worst check and its score) and the validity map, a figure of the
verdict at each point drawn from the stored checks (`validity_map_figure`); then one
section per point.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
from icl_verify.validation.estimates import VERDICTS
from icl_verify.validation.params import ParameterError
from icl_verify.validation.records import CheckRecord, ClaimRecord, RunRecord, SweepSpec

from icl_verify._files import write_atomic

REPORT_FILE = "report.md"
_MARK = {"agrees": "agrees", "inconclusive": "**inconclusive**", "disagrees": "**DISAGREES**"}
#: Beside a verdict: the claim rests on a formula the paper's text does not confirm
#: (`claim.Source.reconstruction`); the table's footnote (`reconstruction_footnote`) says which.
RECONSTRUCTED_MARK = "†"


def marked(text: str, reconstruction: str) -> str:
    """``text`` (a verdict, a claim id) with `RECONSTRUCTED_MARK` when ``reconstruction`` is set.

    >>> marked("disagrees", "(B.18)'s exponent: not pinned down"), marked("agrees", "")
    ('disagrees†', 'agrees')
    """
    return f"{text}{RECONSTRUCTED_MARK}" if reconstruction else text


def reconstruction_footnote(reconstructions: dict[str, str]) -> list[str]:
    """The footnote of a table whose marked claims (`marked`) rest on reconstructed formulas:
    a line per claim id of ``reconstructions`` (id -> `Source.reconstruction`, "" for none),
    with a blank line before it; [] when none is marked.

    >>> lines = reconstruction_footnote({"HE-MAN": "(4.7): reconstructed", "HE-4.12": ""})
    >>> lines[1][:35], lines[3]
    ('† rests on a reconstructed formula ', '- HE-MAN: (4.7): reconstructed')
    """
    flagged = [f"- {claim_id}: {text}" for claim_id, text in reconstructions.items() if text]
    if not flagged:
        return []
    return ["", f"{RECONSTRUCTED_MARK} rests on a reconstructed formula (a disagreement may be the "
            "reconstruction's, not the paper's):", "", *flagged]  # fmt: skip


def reconstruction_sentence(reconstruction: str) -> str:
    """A claim's reconstructed formulas as a sentence beside its verdict ("" for none).

    >>> print(reconstruction_sentence("(4.7): reconstructed (reference §HE-MAN [RECON])"))
    ... # doctest: +NORMALIZE_WHITESPACE
    † Its prediction rests on a reconstructed formula: (4.7): reconstructed (reference §HE-MAN
    [RECON]); where it disagrees, the reconstruction may be at fault rather than the paper.
    """
    if not reconstruction:
        return ""
    return (f"{RECONSTRUCTED_MARK} Its prediction rests on a reconstructed formula: "
            f"{reconstruction}; where it disagrees, the reconstruction may be at fault rather "
            "than the paper.")  # fmt: skip


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
        lines.append(f"- {claim.id} {marked(_MARK[claim.verdict], claim.reconstructed)}: {checks}")
    for claim_id, why in record.unfinished.items():
        lines.append(f"- {claim_id} unfinished (the run's budget): {why}")
    return lines + ([""] if len(lines) > 2 else [])


def _header(record: RunRecord) -> list[str]:
    """The run's metadata lines."""
    env = record.environment
    return [
        f"# icl-verify report: {record.run_id}",
        "",
        f"- preset `{record.preset}`, seed {record.seed}, device `{record.device}`",
        f"- started {record.started}, "
        + (f"finished {record.finished}" if record.finished else "not finished"),
        f"- icl-verify {env.get('package_version')}, git {env.get('git_commit')}, "
        f"python {env.get('python')}, numpy {env.get('numpy')}, torch {env.get('torch')}",
        f"- schema version {record.schema_version}; overall verdict: {_MARK[record.verdict()]}",
        "",
    ]


def render_report(record: RunRecord) -> str:
    """The markdown text of report.md for `record` (`render_sweep_report` for a sweep)."""
    if record.sweep is not None:
        return render_sweep_report(record)
    lines = [
        *_header(record),
        *_summary(record),
        "| claim | quantity | prediction | measurement | rule | verdict |",
        "|---|---|---|---|---|---|",
    ]
    for claim in record.claims:
        for check in claim.checks:
            cells = (
                marked(claim.id, claim.reconstructed),
                check.label,
                format_number(check.predicted),
                format_measured(check),
                check.rule,
                _MARK[check.verdict],
            )
            lines.append("| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |")
    lines += reconstruction_footnote({claim.id: claim.reconstructed for claim in record.claims})
    paper = None
    for claim in record.claims:
        if paper_of(claim.source) != paper:  # claims come grouped per paper (registry order)
            paper = paper_of(claim.source)
            lines += ["", f"## {paper}"]
        lines += _claim_section(claim, f"### {claim.id}: {_mark(claim)}")
    return "\n".join(lines) + "\n"


def _claim_section(claim: ClaimRecord, heading: str) -> list[str]:
    """One claim's section: statement, source, parameters, finding, checks, tables, figures."""
    lines = [
        "",
        heading,
        "",
        f"*{claim.statement}*",
        "",
        f"Source: {claim.source}. Parameters: `{_params(claim.params)}`"
        + (f" (changed from the preset: `{_params(claim.overrides)}`)" if claim.overrides else "")
        + f". Time: {claim.seconds:.1f} s on `{claim.device}`.",
        "",
        _finding(claim),
        "",
    ] + ([reconstruction_sentence(claim.reconstructed), ""] if claim.reconstructed else [])
    explained: set[str] = set()  # a justification shared by several checks is said once
    for check in claim.checks:
        lines.append(
            f"- **{check.label}**: predicted {format_number(check.predicted)}; "
            f"measured {format_measured(check)}; rule `{check.rule}`; "
            f"{_MARK[check.verdict]} (score {check.score:.3g}"
            + (f"; the verdict turns at {check.changes_at}" if check.changes_at else "") + ")."
        )
        if check.justification in explained:
            lines.append("  Why this rule: as above.")
        else:
            lines.append(f"  Why this rule: {check.justification}")
            explained.add(check.justification)
    for table in claim.tables:
        lines += ["", table.rstrip("\n")]
    lines += [""] + [f"![{claim.id}]({path})" for path in claim.figures]
    return lines


def _mark(claim: ClaimRecord) -> str:
    """A stored claim's verdict as a heading shows it, marked when it rests on a reconstruction."""
    return marked(_MARK[claim.verdict], claim.reconstructed)


def _params(params: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in params.items())


def write_report(record: RunRecord, run_dir: Path) -> Path:
    """Write `<run_dir>/report.md` atomically; its path."""
    path = Path(run_dir) / REPORT_FILE
    write_atomic(path, render_report(record))
    return path


def _restored(record: RunRecord):
    """(position, claim, stored record, its parameters) of each stored claim (a sweep: each
    point) whose claim is still registered."""
    from icl_verify.validation.registry import all_claims

    claims = {claim.id: claim for claim in all_claims()}
    for position, stored in enumerate(record.claims):
        claim = claims.get(stored.id)
        if claim is None:
            continue
        try:
            params = stored.restored_params(claim)
        except ParameterError as error:
            raise ParameterError(f"{stored.id}: {error}") from None
        yield position, claim, stored, params


def redraw_figures(record: RunRecord, run_dir: Path) -> list[str]:
    """Redraw each claim's figure from its stored data, and a sweep's validity map; ids no
    longer registered are skipped."""
    from icl_verify.figures.style import save_figure

    redrawn = []
    for _, claim, stored, params in _restored(record):
        figures = claim.draw(
            params,
            stored.restored_prediction(),
            stored.restored_measurement(),
        )
        for figure, path in zip(figures, stored.figures, strict=False):
            save_figure(figure, Path(run_dir) / path)
        redrawn.append(stored.id)
    if record.sweep is not None and record.claims:
        draw_validity_map(record, run_dir)
    return redrawn


def retabulate(record: RunRecord) -> RunRecord:
    """The record with each claim's tables re-rendered from its stored numbers by the claim's
    `Claim.table` as it is now, and each check's rule text and ``changes_at`` (where its
    verdict would turn) from the claim's rule of the same label, as figures are redrawn: a run
    recorded by an older version reports what its claims give today. Each stored record (a
    sweep: each point) from its own numbers; claims no longer registered, without a table, or
    checks whose rule is gone, keep what was stored."""
    claims = list(record.claims)
    for position, claim, stored, params in _restored(record):
        prediction, measurement = stored.restored_prediction(), stored.restored_measurement()
        rules = {check.title: check.rule for check in claim.checks(params)}
        checks = tuple(
            replace(check, rule=rules[check.label].describe(),
                    changes_at=rules[check.label].changes_at(
                        prediction.values[check.quantity], measurement.values[check.quantity]))
            if hasattr(rules.get(check.label), "changes_at") else check
            for check in stored.checks
        )  # fmt: skip
        tables = (claim.table(params, prediction, measurement),) if claim.table else stored.tables
        claims[position] = replace(
            stored, tables=tables, checks=checks, reconstructed=claim.source.reconstruction
        )
    return replace(record, claims=tuple(claims))


# -- sweeps: the table of points and the validity map ------------------------------------------


def describe_values(params: dict, keys: Sequence[str]) -> str:
    """``key=value, ...`` of `keys` in JSON-form parameters (numbers with :g).

    >>> describe_values({"d": 5, "L": 40, "sigma2": 0.1, "L_values": [80, 160]},
    ...                 ("d", "sigma2", "L_values"))
    'd=5, sigma2=0.1, L_values=[80,160]'
    """

    def show(value) -> str:
        if isinstance(value, float):
            return f"{value:g}"
        return json.dumps(value, separators=(",", ":")) if isinstance(value, list) else str(value)

    return ", ".join(f"{key}={show(params[key])}" for key in keys)


def worst_check(claim: ClaimRecord) -> CheckRecord | None:
    """The check that decides a point's verdict: the worst verdict, then the largest score.

    >>> from types import SimpleNamespace as Check
    >>> checks = [Check(verdict="agrees", score=0.9), Check(verdict="inconclusive", score=0.2)]
    >>> worst_check(Check(checks=checks)).verdict
    'inconclusive'
    """
    return max(claim.checks, key=lambda c: (VERDICTS.index(c.verdict), c.score), default=None)


def sweep_points(record: RunRecord) -> list[ClaimRecord | None]:
    """Each grid point's record in grid order, None where the point is not finished."""
    found: list[ClaimRecord | None] = [None] * len(record.sweep.points)
    for claim in record.claims:
        index = record.sweep.index(claim.params)
        if index is not None:
            found[index] = claim
    return found


def sweep_table(record: RunRecord) -> str:
    """A markdown table, one row per grid point: swept values, verdict, worst check, its score.

    >>> from types import SimpleNamespace as Record
    >>> check = Record(label="μ sum", verdict="agrees", score=0.031)
    >>> point = Record(params={"d": 3, "L": 40}, verdict="agrees", checks=[check])
    >>> spec = SweepSpec("HE-MAN", ("d",), "product", ({"d": 3}, {"d": 5}))
    >>> print(sweep_table(Record(sweep=spec, claims=[point])))
    | point | d | verdict | worst check | score |
    |---|---|---|---|---|
    | 1 | 3 | agrees | μ sum | 0.031 |
    | 2 | 5 | (not run) |  |  |
    """
    spec = record.sweep
    lines = [
        "| point | " + " | ".join(spec.keys) + " | verdict | worst check | score |",
        "|---|" + "---|" * len(spec.keys) + "---|---|---|",
    ]
    for i, (values, claim) in enumerate(zip(spec.points, sweep_points(record), strict=True)):
        check = worst_check(claim) if claim else None
        cells = (
            str(i + 1),
            *(describe_values(values, (key,)).partition("=")[2] for key in spec.keys),
            _MARK[claim.verdict] if claim else "(not run)",
            check.label if check else "",
            f"{check.score:.3g}" if check else "",
        )
        lines.append("| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |")
    return "\n".join(lines)


def render_sweep_report(record: RunRecord) -> str:
    """The markdown text of a sweep's report.md: the table of points and the validity map,
    then one section per finished point."""
    spec = record.sweep
    points = sweep_points(record)
    finished = [claim for claim in points if claim is not None]
    counts = {verdict: sum(c.verdict == verdict for c in finished) for verdict in VERDICTS}
    paired = " (paired element by element: --zip)" if spec.mode == "zip" else ""
    lines = [*_header(record), f"## Sweep of {spec.claim} over {' × '.join(spec.keys)}{paired}"]
    if finished:
        lines += ["", f"*{finished[0].statement}*", "", f"Source: {finished[0].source}."]
    lines += [
        "",
        f"**{len(points)} points, {len(finished)} finished: {counts['agrees']} agree, "
        f"{counts['inconclusive']} inconclusive, {counts['disagrees']} disagree.** "
        "A check's score is |measured − predicted| / (allowed + uncertainty); above 1 the "
        "point contradicts the claim.",
        "",
        sweep_table(record),
        "",
        f"![{spec.claim} validity map]({validity_map_path(spec)})",
        "",
        "## Points",
    ]
    for i, claim in enumerate(points):
        if claim is not None:
            values = describe_values(claim.params, spec.keys)
            lines += _claim_section(claim, f"### point {i + 1}: {values}: {_mark(claim)}")
    return "\n".join(lines) + "\n"


def validity_map_path(spec: SweepSpec) -> str:
    """The validity map's path relative to the run folder.

    >>> validity_map_path(SweepSpec("HE-MAN", ("d",), "product", ({"d": 3},)))
    'figures/HE-MAN-validity-map.png'
    """
    return f"figures/{spec.claim}-validity-map.png"


@dataclass(frozen=True)
class ValidityMap:
    """The numbers of a sweep's validity map, as `figures.validity_map` draws them.

    2-D (`y_values` set) for a product of two numeric parameters: `verdicts` and `scores`
    are (ny, nx), each point's verdict ("" where unfinished) and its worst check's score
    (NaN where unfinished). 1-D otherwise: x is the swept parameter when one numeric
    parameter is swept, else the point number (zip sweeps, 3+ keys, list values);
    `verdicts` is (n,) and `series` holds (label, predicted, measured, error) arrays (n,)
    per check: a check with one number per point as itself; an array-valued check as its
    worst score at each point against the line 1 (above it: contradicted).
    """

    title: str
    x_name: str
    x_values: np.ndarray
    verdicts: np.ndarray
    y_name: str = ""
    y_values: np.ndarray | None = None
    scores: np.ndarray | None = None
    series: tuple = ()


def validity_map_data(record: RunRecord) -> ValidityMap:
    """The validity map of a sweep's record, from the stored checks alone."""
    spec = record.sweep
    points = sweep_points(record)
    title = f"{spec.claim}: verdict per point ({record.preset} preset)"
    columns = {key: [values[key] for values in spec.points] for key in spec.keys}
    numeric = all(_is_number(v) for column in columns.values() for v in column)
    if spec.mode == "product" and len(spec.keys) == 2:  # list values become category labels
        (x_name, xs), (y_name, ys) = ((k, _distinct(columns[k])) for k in spec.keys)
        verdicts = np.full((len(ys), len(xs)), "", dtype=object)
        scores = np.full((len(ys), len(xs)), np.nan)
        for values, claim in zip(spec.points, points, strict=True):
            if claim is not None:
                cell = ys.index(values[y_name]), xs.index(values[x_name])
                verdicts[cell], scores[cell] = claim.verdict, worst_check(claim).score
        return ValidityMap(title, x_name, _ticks(xs), verdicts, y_name, _ticks(ys), scores)
    if len(spec.keys) == 1 and numeric:
        x_name, x_values = spec.keys[0], np.asarray(columns[spec.keys[0]], float)
    else:
        x_name = f"point ({', '.join(spec.keys)}: see the table)"
        x_values = np.arange(1.0, len(points) + 1)
    verdicts = np.array([claim.verdict if claim else "" for claim in points], dtype=object)
    columns = {}  # a check is matched across points by quantity (labels may carry parameters)
    for j, claim in enumerate(points):
        for i, check in enumerate(claim.checks if claim else ()):
            key = (check.quantity, [c.quantity for c in claim.checks[:i]].count(check.quantity))
            columns.setdefault(key, [None] * len(points))[j] = check
    series = tuple(_series(checks) for checks in columns.values())
    return ValidityMap(title, x_name, x_values, verdicts, series=series)


def _distinct(values: list) -> list:
    """The distinct values in order of first appearance (lists allowed, unlike dict keys)."""
    distinct = []
    for value in values:
        if value not in distinct:
            distinct.append(value)
    return distinct


def _ticks(values: list) -> np.ndarray:
    """An axis's values: floats when every value is a number, else their JSON text
    (list-valued parameters such as HE-S2's heads, e.g. "[2]")."""
    if all(_is_number(v) for v in values):
        return np.asarray(values, float)
    return np.array([json.dumps(v) for v in values], dtype=object)


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _series(checks: list[CheckRecord | None]) -> tuple:
    """(label, predicted, measured, error) of one check over the points (None where missing:
    NaN); labelled by its label, or its quantity where the label differs between points."""
    found = [c for c in checks if c is not None]
    labels = {c.label for c in found}
    label = found[0].label if len(labels) == 1 else found[0].quantity
    if all(np.ndim(part) == 0 for c in found for part in (c.predicted, c.measured, c.error)):
        columns = [
            np.array([float(getattr(c, part)) if c else np.nan for c in checks])
            for part in ("predicted", "measured", "error")
        ]
        return (label, *columns)
    scores = np.array([c.score if c else np.nan for c in checks])
    return (f"{label}: worst score (1 = contradicted)", np.ones_like(scores), scores, 0 * scores)


def draw_validity_map(record: RunRecord, run_dir: Path) -> Path:
    """Draw the sweep's validity map (`validity_map_data`) into the run folder; its path."""
    from icl_verify.figures.style import save_figure
    from icl_verify.figures.validity_map import validity_map_1d, validity_map_2d

    data = validity_map_data(record)
    if data.y_values is not None:
        figure = validity_map_2d(
            data.x_name, data.x_values, data.y_name, data.y_values, data.verdicts, data.scores,
            data.title,
        )  # fmt: skip
    else:
        figure = validity_map_1d(
            data.x_name, data.x_values, list(data.series), data.verdicts, data.title
        )
    path = Path(run_dir) / validity_map_path(record.sweep)
    save_figure(figure, path)
    return path
