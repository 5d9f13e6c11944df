"""The pages of the documentation site that are generated from the code (`make docs`;
``docs/site/gen_pages.py`` writes them at build time, so none can go stale).

- `claim_page`: one page per claim from the registry: statement, source, what is checked,
  each rule with its justification (at the quick preset), the parameters with their presets
  and allowed values, the deliberately wrong prediction, and the latest verdicts with their
  figures (quick; paper where a paper-size report exists);
- `claims_index`: the claims per paper with their verdicts;
- `findings_page`: every claim that disagrees, with the checks that do;
- `derivation_page`: a sympy derivation of `icl_verify.theory.symbolic` as mathematics.

Verdicts come from `Verdicts`: the summary committed with the docs (``docs/verdicts-quick.json``,
written by `write_verdict_summary` from the quick runs of `icl-verify stability`) and the
paper-size publications; `validation.site_pages` assembles the site from them alone.
"""

from __future__ import annotations

import inspect
import json
import os
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from icl_verify.validation.claim import Claim
from icl_verify.validation.coverage import open_items
from icl_verify.validation.records import CheckRecord, RunRecord, load_run, value_text
from icl_verify.validation.registry import all_claims
from icl_verify.validation.report import (
    format_measured,
    marked,
    reconstruction_footnote,
    reconstruction_sentence,
)

__all__ = [
    "PAGE_WIDE",
    "Verdicts",
    "check_entry",
    "check_text",
    "claim_page",
    "claims_index",
    "derivation_page",
    "findings_page",
    "glossary_page",
    "stability_entry",
    "stability_text",
    "write_verdict_summary",
]


@dataclass(frozen=True)
class Verdicts:
    """Per claim id, a run's verdict and checks (label, rule, verdict, predicted, measured),
    its tables (`Claim.table`, markdown) and its figure files; ``preset`` and ``source`` say
    which run."""

    preset: str
    source: str
    claims: dict = field(default_factory=dict)  # id -> {"verdict", "checks", "tables", "figures"}

    @classmethod
    def from_run(cls, run_dir: Path) -> Verdicts:
        return cls.from_record(load_run(run_dir), run_dir)

    @classmethod
    def from_record(cls, record: RunRecord, run_dir: Path) -> Verdicts:
        """The verdicts of ``record``, a run stored in ``run_dir`` (its figures' folder)."""
        claims = {
            c.id: {
                "verdict": c.verdict,
                "checks": [check_entry(check) for check in c.checks],
                "tables": list(c.tables),
                "figures": [str(Path(run_dir) / f) for f in c.figures],
            }
            for c in record.claims
        }
        return cls(record.preset, f"run {record.run_id}", claims)

    @classmethod
    def from_summary(cls, path: Path) -> Verdicts:
        """The committed summary at ``path`` (`write_verdict_summary`), its figures' paths
        resolved from the summary's folder."""
        data = json.loads(Path(path).read_text())
        claims = {i: {**c, "figures": [str(Path(path).parent / f) for f in c["figures"]]}
                  for i, c in data["claims"].items()}  # fmt: skip
        return cls(data["preset"], data["source"], claims)


def check_entry(check: CheckRecord) -> dict:
    """A stored check as the pages show it: label, rule, verdict, the values, their one-line
    summary as the report gives it (`report.format_measured`: for arrays, the largest
    |measured − predicted| and the largest error) and the score (|meas − pred| over what the
    rule allows; > 1 disagrees)."""
    return {"label": check.label, "rule": check.rule, "verdict": check.verdict,
            "predicted": check.predicted, "measured": check.measured, "error": check.error,
            "summary": format_measured(check), "score": check.score,
            "changes_at": check.changes_at}  # fmt: skip


def check_text(entry: dict) -> dict:
    """A `check_entry` with its values as one-line text (`records.value_text`), as the
    committed summary holds them: a few values each."""
    return {k: value_text(v) if k in ("predicted", "measured", "error", "score") else v
            for k, v in entry.items()}  # fmt: skip


def write_verdict_summary(run_dir: Path, path: Path, stability: Path | None = None) -> None:
    """The verdicts of the run in ``run_dir`` as the docs' committed summary at ``path``, with
    the run's figures copied beside it (``<path without .json>/figures/``, replacing what was
    there), which the summary names relative to its own folder. With ``stability`` (the
    stability.json of `icl-verify stability`, whose set 0 is ``run_dir``), each claim also
    holds its verdict in every seed set, in a few words, and the checks whose verdict differs
    between sets (`stability_entry`)."""
    path = Path(path)
    verdicts = Verdicts.from_run(run_dir)
    across = json.loads(Path(stability).read_text())["claims"] if stability else {}
    figures = path.with_suffix("") / "figures"
    shutil.rmtree(figures, ignore_errors=True)
    figures.mkdir(parents=True)
    for c in verdicts.claims.values():
        for figure in map(Path, c["figures"]):
            shutil.copy2(figure, figures / figure.name)
    claims = {
        i: {**c, "checks": [check_text(check) for check in c["checks"]],
            "figures": [(figures / Path(f).name).relative_to(path.parent).as_posix()
                        for f in c["figures"]],
            **({"stability": stability_entry(across[i])} if i in across else {})}
        for i, c in verdicts.claims.items()
    }  # fmt: skip
    path.write_text(json.dumps({"preset": verdicts.preset, "source": verdicts.source,
                                "claims": claims}, indent=1) + "\n")  # fmt: skip


def stability_entry(across: dict) -> dict:
    """A claim of a stability.json as the summary keeps it: its verdicts per seed set, the
    words (e.g. "stable over 2 seed sets") and only the checks whose verdict differs.

    >>> stability_entry({"verdicts": ["agrees", "agrees"], "stability": "stable over 2 sets",
    ...                  "checks": [{"label": "a", "verdicts": ["agrees", "agrees"],
    ...                              "measured": ["1", "2"]}]})["moved"]
    []
    """
    moved = [c for c in across["checks"] if len(set(c["verdicts"])) > 1]
    return {"verdicts": across["verdicts"], "text": across["stability"], "moved": moved}


def stability_text(entry: dict) -> str:
    """A claim's stability across seed sets in one line, for a page or a table cell ("" when
    the summary holds none).

    >>> stability_text({"stability": {"verdicts": ["agrees", "inconclusive"], "moved": [],
    ...                               "text": "seed-dependent: 1 agrees, 1 inconclusive"}})
    'seed-dependent: 1 agrees, 1 inconclusive'
    """
    return entry.get("stability", {}).get("text", "")


def _md(text) -> str:
    """Running text as markdown shows it: ``*`` and ``_`` escaped (``μ*(ω)``, ``a_1``), and the
    claims' notation for a superscript or subscript of more than one character, ``^{...}`` and
    ``_{...}``, set as one; except inside code spans, which markdown shows as they are
    (reStructuredText's double backticks read as single ones).

    >>> print(_md("a_1 and `max_z` and ``side``"))
    a\\_1 and `max_z` and `side`
    >>> print(_md("d^{−1/2} and e^{dω²}, x_{ij}; `d^{-1/2}`"))
    d<sup>−1/2</sup> and e<sup>dω²</sup>, x<sub>ij</sub>; `d^{-1/2}`
    """
    parts = str(text).replace("``", "`").split("`")
    for k in range(0, len(parts), 2):  # the parts outside code spans
        escaped = parts[k].replace("\\", "\\\\").replace("*", "\\*")
        escaped = re.sub(r"\^\{([^{}]*)\}", r"<sup>\1</sup>", escaped)
        escaped = re.sub(r"_\{([^{}]*)\}", r"<sub>\1</sub>", escaped)
        parts[k] = escaped.replace("_", "\\_")
    return "`".join(parts)


def _linked(markdown: str, own: str = "") -> str:
    """Markdown with every registered claim id (e.g. HE-S2, §HE-OBS2) that is not ``own`` and
    not inside a code span linked to its page (pages of claims are siblings).

    >>> _linked("as HE-OBS3 does; see §HE-S2 and `HE-S2`", own="HE-OBS1")
    'as [HE-OBS3](HE-OBS3.md) does; see §[HE-S2](HE-S2.md) and `HE-S2`'
    """
    ids = sorted((claim.id for claim in all_claims()), key=len, reverse=True)  # longest first
    pattern = re.compile(r"(?<![\w\-\[/])(" + "|".join(map(re.escape, ids)) + r")(?![\w\-])")
    parts = markdown.split("`")
    for k in range(0, len(parts), 2):  # outside code spans
        parts[k] = pattern.sub(
            lambda m: m.group(1) if m.group(1) == own else f"[{m.group(1)}]({m.group(1)}.md)",
            parts[k],
        )
    return "`".join(parts)


def _cell(text) -> str:
    """Text for a table cell: escaped, on one line, ``|`` escaped."""
    return _md(text).replace("|", "\\|").replace("\n", " ")


def _verdict_section(entry: dict, verdicts: Verdicts, reconstruction: str = "") -> list[str]:
    """A run's verdict of one claim, its checks and its tables, as lines of markdown; marked,
    with a sentence saying which, when the claim rests on a reconstructed formula
    (``reconstruction``: `Source.reconstruction`)."""
    verdict = marked(f"**{entry['verdict']}**", reconstruction)
    lines = [f"{verdict} at the {verdicts.preset} preset ({verdicts.source}). How to read the "
             f"table: [verdicts, score and rules]({GLOSSARY_LINK}).", "",
             "| verdict | check | rule | predicted | measured | score | verdict turns at |",
             "|---|---|---|---|---|---|---|"]  # fmt: skip
    for c in entry["checks"]:  # the verdict first: on a phone's width the last columns scroll
        lines.append(f"| {c['verdict']} | {_cell(c['label'])} | {_cell(c['rule'])} | "
                     f"{_cell(value_text(c['predicted']))} | {_cell(c['summary'])} | "
                     f"{_cell(value_text(c['score']))} | "
                     f"{_cell(c.get('changes_at', ''))} |")  # fmt: skip
    across = entry.get("stability")
    if across:
        sets = ", ".join(str(k) for k in range(len(across["verdicts"])))
        lines += ["", f"**Across seed sets:** {_md(across['text'])}; verdicts "
                  f"{', '.join(across['verdicts'])} (sets {sets}: `icl-verify stability`)."]
        if across["moved"]:
            lines += ["", "Checks whose verdict differs between the sets:", ""]
        lines += [f"- {_md(c['label'])}: " + "; ".join(
                  f"set {k}: {_md(m)} ({v})" for k, (v, m) in
                  enumerate(zip(c["verdicts"], c["measured"], strict=True)))
                  for c in across["moved"]]  # fmt: skip
    if reconstruction:
        lines += ["", _md(reconstruction_sentence(reconstruction))]
    for table in entry["tables"]:
        lines += ["", table.rstrip("\n")]
    return [*lines, ""]


#: The glossary page, linked from every verdict table (a path from a claim's page).
GLOSSARY_LINK = "../glossary.md"


def glossary_page() -> str:
    """How to read a verdict table: the three verdicts, each column, the two kinds of error
    bar, and every rule form the registered claims use (each rule's own docstring, so a new
    rule is explained where it is defined).

    >>> page = glossary_page()
    >>> "## Rules" in page and "Inequality" in page and "score" in page
    True
    """
    rules: dict[type, str] = {}  # rule class -> the form one of its checks prints
    for claim in all_claims():
        for check in claim.checks(claim.presets["quick"]):
            rules.setdefault(type(check.rule), check.rule.describe())
    lines = [
        "# How to read a verdict", "",
        "Every claim's checks are tables of one row per check, its columns:", "",
        "- **verdict**: *agrees* when every element is inside the rule's allowance by more than "
        "its error bar; *disagrees* when one is outside it by more than its error bar (a "
        "finding); *inconclusive* otherwise: the measurement is not precise enough to decide "
        "(a larger preset may).",
        "- **check**: what is compared, per element where it says so (a row judges all of its "
        "elements; the worst decides).",
        "- **rule**: the form of the comparison (below); *pred* is the theory's value, *meas* "
        "the simulation's, *SE* its error bar.",
        "- **predicted** and **measured**: the values (a list's first three, or one value when "
        "all are equal), the measured ones with their error bar: *se* a standard error (Monte "
        "Carlo, a fit, the seeds' spread), *bound* a guaranteed bound on the error (a solver's "
        "tolerance, a drift).",
        "- **score**: the worst element's distance beyond the prediction over what the rule "
        "allows it (its tolerance plus its error bar): at most 1 it is within, above 1 outside. "
        "A score below 1 can still be inconclusive, when the error bar alone is too wide to "
        "tell.",
        "- **verdict turns at**: the tolerance (or margin, or number of SEs) at which the "
        "verdict would change: how much the verdict rests on a tolerance the project chose.", "",
        "A claim *rests on a reconstructed formula* (marked †) when the paper's text lost the "
        "formula and the reference catalogue reconstructed it; a disagreement there may be the "
        "reconstruction's. *Across seed sets* gives the verdicts of independent seed sets "
        "(`icl-verify stability`).", "",
        "## Rules", "",
        "Each rule form the claims use, as a row prints it, and what it decides:", "",
    ]  # fmt: skip
    for rule, form in sorted(rules.items(), key=lambda item: item[0].__name__):
        doc = inspect.getdoc(rule) or ""
        summary = " ".join(doc.split("\n\n")[0].split())
        lines += [f"- `{form}` ({rule.__name__}): {_md(summary)}"]
    return "\n".join(lines) + "\n"


#: The front matter of a page of figures: no table of contents beside it (mkdocs-material's
#: ``hide``), so that the figures take the page's whole width.
PAGE_WIDE = ["---", "hide: [toc]", "---", ""]


def _rules_section(checks, prose) -> list[str]:
    """The rules of a claim's checks, as list items; checks whose rules share one justification
    (one source for their tolerances) are listed together under it, and the sentences that open
    every justification of the claim alike are said once above them, so that a reader meets
    each reason once, beside every check it covers.

    >>> from icl_verify.validation.claim import Check
    >>> from icl_verify.validation.rules import ZScore
    >>> shared = ZScore("Paired prompts. Monte Carlo SE only.", rel_resolution=0.1)
    >>> own = ZScore("Paired prompts. Exact.", rel_resolution=0.1)
    >>> for line in _rules_section([Check("a", shared), Check("b", shared), Check("c", own)], str):
    ...     print(line)
    Common to these rules: Paired prompts.
    <BLANKLINE>
    - **a** — `|z| ≤ 4`
    - **b** — `|z| ≤ 4`
    <BLANKLINE>
      *Why these rules:* Monte Carlo SE only.
    - **c** — `|z| ≤ 4`
      *Why this rule:* Exact.
    """
    groups: dict[str, list] = {}
    for check in checks:
        groups.setdefault(check.rule.justification, []).append(check)
    common = _common_sentences(list(groups)) if len(groups) > 1 else ""
    lines = [f"Common to these rules: {prose(common)}", ""] if common else []
    for justification, group in groups.items():
        why = prose(justification[len(common):].lstrip())
        items = [f"- **{_md(check.title)}** — `{check.rule.describe()}`" for check in group]
        if len(group) == 1:
            lines += [items[0] + "  ", f"  *Why this rule:* {why}"]
        else:
            lines += [*items, "", f"  *Why these rules:* {why}"]
    return lines


def _common_sentences(texts: list[str]) -> str:
    """The longest run of whole sentences (a full stop, a space, a capital: not "w.p. ≥")
    that opens every text, '' if none.

    >>> _common_sentences(["A b. C d. E.", "A b. C d. F.", "A b. G."])
    'A b.'
    >>> _common_sentences(["With prob. ≥ 1. X.", "With prob. ≥ 1. Y."])
    'With prob. ≥ 1.'
    """
    prefix = os.path.commonprefix(texts)
    for match in reversed(list(re.finditer(r"\. ", prefix))):
        end = match.start() + 1
        if all(t[end + 1 : end + 2].isupper() for t in texts):
            return prefix[:end]
    return ""


def claim_page(
    claim: Claim,
    latest: Verdicts | None,
    figures: dict[str, list[str]],
    paper: tuple[Verdicts, ...] = (),
    paper_figures: dict[str, list[str]] | None = None,
) -> str:
    """The claim's page (markdown); ``figures`` maps claim ids to the figures of ``latest``, as
    paths relative to the page in the site; ``paper``: the paper-size reports under
    ``docs/paper/``, whose figures ``paper_figures`` maps the same way."""
    params = claim.presets["quick"]
    def prose(text) -> str:
        return _linked(_md(text), own=claim.id)

    lines = [
        *PAGE_WIDE, f"# {claim.id}", "", f"*{prose(claim.statement)}*", "",
        f"**Source:** {_md(claim.source)}  ", f"**What is checked:** {prose(claim.summary)}", "",
        "## Rules", "",
    ]  # fmt: skip
    lines += _rules_section(claim.checks(params), prose)
    lines += ["", "## Parameters", "",
              "| parameter | type | smoke | quick | paper | allowed | meaning |",
              "|---|---|---|---|---|---|---|"]  # fmt: skip
    presets = {name: claim.presets[name].as_json() for name in ("smoke", "quick", "paper")}
    for info in claim.params.describe():
        cells = [value_text(presets[p][info.name]) for p in ("smoke", "quick", "paper")]
        lines.append(f"| `{info.name}` | {info.type} | " + " | ".join(map(_cell, cells))
                     + f" | {_cell(info.allowed)} | {_cell(info.help)} |")  # fmt: skip
    wrong = inspect.getdoc(claim.wrong) or ""
    lines += ["", "## The wrong prediction its rules must reject", "",
              prose(wrong) if wrong else f"`{claim.wrong.__name__}`", ""]  # fmt: skip
    lines += ["## Latest verdicts", "", "### At the quick preset", ""]
    entry = latest.claims.get(claim.id) if latest else None
    if entry is None:
        lines += ["Not run yet here: `make verify` runs every claim at the quick preset.", ""]
    else:
        lines += _verdict_section(entry, latest, claim.source.reconstruction)
    lines += [f"![{claim.id}]({path})\n" for path in figures.get(claim.id, [])]
    for report in paper:
        if claim.id in report.claims:
            lines += ["### At the paper's size", ""]
            lines += _verdict_section(report.claims[claim.id], report, claim.source.reconstruction)
            lines += [f"![{claim.id} at the {report.preset} preset]({path})\n"
                      for path in (paper_figures or {}).get(claim.id, [])]  # fmt: skip
    return "\n".join(lines)


def claims_index(latest: Verdicts | None) -> str:
    """The claims per paper, each linked to its page, with its latest verdict."""
    lines = ["# Claims", "",
             "Every checkable statement of the two papers, one page each (generated from the "
             "registry)."]  # fmt: skip
    claims = all_claims()
    for paper in dict.fromkeys(claim.source.paper for claim in claims):
        lines += ["", f"## {paper}", "",
                  "| claim | verdict | across seed sets | what is checked |",
                  "|---|---|---|---|"]  # fmt: skip
        ours = [claim for claim in claims if claim.source.paper == paper]
        for claim in ours:
            entry = latest.claims.get(claim.id) if latest else None
            verdict = marked(entry["verdict"] if entry else "not run", claim.source.reconstruction)
            across = stability_text(entry) if entry else ""
            lines.append(f"| [{claim.id}]({claim.id}.md) | {verdict} | {_cell(across)} | "
                         f"{_cell(claim.summary)} |")  # fmt: skip
        footnote = reconstruction_footnote({c.id: c.source.reconstruction for c in ours})
        lines += [_md(line) for line in footnote]
        lines += _open_items_section(open_items().get(paper, ()))
    return "\n".join(lines) + "\n"


def _open_items_section(items) -> list[str]:
    """The paper's items that no claim judges in full (`validation.coverage`): what part is
    judged, by which claims, and what is left and why."""
    if not items:
        return []
    lines = ["", "### Judged in part, or not at all", "",
             "Every other item of the paper (a theorem part, lemma, observation, table, figure "
             "or quantitative sentence) is judged in full by a claim above.", "",
             "| item | judged | by | what is left, and why |", "|---|---|---|---|"]  # fmt: skip
    for item in items:
        claims = ", ".join(f"[{c}]({c}.md)" for c in item.claims) or "no claim"
        judged = f"in part: {item.judged}" if item.claims else "not at all"
        lines.append(f"| {_cell(item.item)} | {_cell(judged)} | {claims} | {_cell(item.why)} |")
    return lines


def findings_page(latest: Verdicts | None) -> str:
    """Every claim that disagrees in the latest run, with the checks that disagree."""
    lines = ["# Findings", "",
             "Where simulation contradicts the paper's statement (the report and the README "
             "explain each with its evidence)."]  # fmt: skip
    if latest is None:
        return "\n".join(lines + ["", "No run yet: `make verify`."]) + "\n"
    lines += ["", f"From the {latest.preset} preset ({latest.source}).", ""]
    for claim in all_claims():
        entry = latest.claims.get(claim.id)
        if not entry or entry["verdict"] != "disagrees":
            continue
        lines += [f"## [{claim.id}](claims/{claim.id}.md)", "", f"*{_md(claim.statement)}*", ""]
        lines += [
            f"- **{_cell(c['label'])}**: predicted {_cell(value_text(c['predicted']))}, measured "
            f"{_cell(value_text(c['measured']))} ± {_cell(value_text(c['error']))} (`{c['rule']}`)"
            for c in entry["checks"] if c["verdict"] == "disagrees"
        ]  # fmt: skip
        lines.append("")
    return "\n".join(lines)


def derivation_page(name: str) -> str:
    """A derivation of `icl_verify.theory.symbolic` (`Derivation.markdown`), with its name."""
    from icl_verify.theory.symbolic import derive

    return f"# {name}\n\n`icl-verify derive {name}`\n\n" + derive(name).markdown()
