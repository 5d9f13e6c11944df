"""Measured numbers live in records, not in prose (issue 38, item 4).

A number measured by a run goes stale the day a seed, a preset or the code changes; the
run's records and the pages generated from them are rewritten then, a docstring or a comment
is not. So a docstring or comment of the package may state what is measured and how it is
judged, but may not quote what a run measured: this test fails on a sentence that names a
run or a measurement (``measured``, ``at quick``, ``finding``, ``seed set``, ...) and quotes a
number with two or more significant decimals, a percentage or a count "k of n".

Numbers that a doctest computes are exempt (the doctest reruns them); so are formulas' own
constants, which carry no run word. Where a finding needs its numbers, they belong on the
findings page or in the claim's table, both drawn from the published records.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

import pytest

import icl_verify

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = ("icl_verify", *icl_verify.SUBPACKAGES)

#: Words that say a number came from a run (the preset names, the seeds, a measurement).
RUN_WORD = re.compile(
    r"\b(?:measured|measurements?|finding|observed|seen|(?:at|in|under) (?:the )?(?:quick|smoke)"
    r"|paper preset|seed sets?|members? (?:end|reach|sit|land)s?)\b|\bquick(?: preset)?[:,)]",
    re.IGNORECASE,
)
#: A quoted measurement: 0.123 (two or more decimals), 12%, 3.5e-4, or a count "21 of 40"
#: (not a section number such as §7.11 nor a claim id such as HE-4.12).
QUOTED = re.compile(
    r"(?<![\w.§-])(\d*\.\d{2,}|\d+(\.\d+)?\s?%|\d\.\d+e-?\d+|\d+ of \d+)(?![\w.])"
)


def prose(path: Path) -> list[tuple[int, str]]:
    """(line, text) of every docstring (doctest examples and their outputs removed) and
    comment of a source file."""
    source = path.read_text()
    found = []
    for node in ast.walk(ast.parse(source, str(path))):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            docstring = ast.get_docstring(node, clean=True)
            if docstring:
                line = node.body[0].lineno
                found.append((line, _without_examples(docstring)))
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            found.append((token.start[0], token.string.lstrip("#: ")))
    return found


def _without_examples(docstring: str) -> str:
    """The docstring without its doctest examples: a `>>>` line, its continuation lines and
    the expected output up to the next blank line."""
    kept, in_example = [], False
    for line in docstring.splitlines():
        stripped = line.strip()
        if stripped.startswith(">>>"):
            in_example = True
        elif not stripped:
            in_example = False
        if not in_example:
            kept.append(line)
    return "\n".join(kept)


def quoted_sentences(text: str) -> list[str]:
    """The sentences of a prose text that name a run and quote a number."""
    # Sentences end at a full stop or semicolon followed by a capital, or at a blank line; a
    # list item ("- " opening a line) is a sentence of its own.
    ends = r"(?<=[.;])\s+(?=[A-Z(])|\n\s*\n|\n\s*(?=- )"
    sentences = (" ".join(s.split()) for s in re.split(ends, text))
    return [s for s in sentences if RUN_WORD.search(s) and QUOTED.search(s)]


def quoted_measurements(path: Path) -> list[str]:
    """Every such sentence of a file's prose, as 'file:line: sentence'."""
    return [
        f"{path.name if not path.is_relative_to(ROOT) else path.relative_to(ROOT)}:{line}: "
        f"{sentence[:160]}"
        for line, text in prose(path)
        for sentence in quoted_sentences(text)
    ]


@pytest.mark.parametrize("folder", FOLDERS)
def test_no_measured_numbers_in_prose(folder):
    paths = sorted((ROOT / folder).rglob("*.py"))
    hits = [hit for path in paths for hit in quoted_measurements(path)]
    assert hits == [], "\n".join(
        ["Measured numbers quoted in prose (move them to the findings page or the records):"]
        + hits
    )


@pytest.mark.parametrize(
    "text, flagged",
    [
        ("Measured at quick (8 paired members): 6 form it at 0.25-1% of training.", True),
        ("Finding (quick, 10k Adam steps): both members end at |omega| = 0.521 and 0.522.", True),
        ("they end at mu^T omega = 0.728 (quick: 21 of 40 at H = 2).", True),
        ("In two seed sets the residual was 0.013 and 0.065.", True),
        # A formula's constant and a preset's size carry no run word / no measured number.
        ("The optimal step is 1/(1+kappa) = 0.879 at kappa = 0.1375.", False),
        ("quick: 8 members, 10k steps.", False),
        ("Measured on fresh prompts; the SE is the members' spread.", False),
        ("Measured at quick for HE-4.12, in the §7.11 setting.", False),
        ("The paper's Table 1 gives 0.1267 and 3.5006.", False),
    ],
)
def test_the_rule_flags_quoted_runs_and_only_those(tmp_path, text, flagged):
    """The detector on sentences of both kinds, so the test above can fail."""
    module = tmp_path / "module.py"
    module.write_text(f'"""{text}"""\n\n# {text}\n')
    assert bool(quoted_measurements(module)) is flagged


@pytest.mark.parametrize(
    "items, flagged",
    [
        # a run word in one item, an equation number in another: no quoted measurement
        (["Monte Carlo measurements of (3.2);", "the regressor (4.12)."], False),
        (["the regressor (4.12);", "measured at quick: 0.521 at H = 2."], True),
    ],
)
def test_each_item_of_a_list_is_a_sentence_of_its_own(tmp_path, items, flagged):
    module = tmp_path / "module.py"
    module.write_text('"""Modules:\n\n' + "".join(f"- `m{k}`: {item}\n" for k, item in
                                                 enumerate(items)) + '"""\n')  # fmt: skip
    assert bool(quoted_measurements(module)) is flagged


def test_doctest_outputs_are_exempt(tmp_path):
    module = tmp_path / "module.py"
    module.write_text('"""At quick:\n\n>>> round(0.12345, 3)\n0.123\n"""\n')
    assert quoted_measurements(module) == []
