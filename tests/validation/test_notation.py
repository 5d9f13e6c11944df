"""One notation in what a reader of a claim sees (issue 39 item 5): its statement, summary, each
check's label and rule text, each justification, the wrong prediction's text and the parameters'
help use the symbols (ω, μ, σ², L̃, →, ≤, √d, ‖·‖) and ``^{...}`` / ``_{...}`` for longer
superscripts and subscripts, which the site renders; names as typed (parameters, code) stay in
code spans. This test fails on an ASCII spelling of a symbol outside a code span."""

from __future__ import annotations

import inspect
import re

import pytest
from icl_verify.validation.registry import all_claims

#: ASCII spellings of the notation's symbols, as whole words; "delta method" is a name.
ASCII_MATH = re.compile(
    r"\b(omega|mu|sigma2?|Sigma|kappa|eta|beta|epsilon|eps|delta(?![ -]method)|Delta|Gamma|"
    r"gamma|lambda|xi|theta|rho|zeta|Ltilde)(?=\b|_)(?!(?:_\w+)?=)"
    r"|->|<=|>=|>~|<~|\bsqrt\(|\|\|"
)


def outside_code(text: str) -> str:
    """The text with its code spans blanked (``...`` and `...`)."""
    return re.sub(r"`+[^`]*`+", " ", text)


def display_texts(claim) -> list[tuple[str, str]]:
    """(where, text) of everything a claim page shows in words."""
    params = claim.presets["quick"]
    texts = [("statement", claim.statement), ("summary", claim.summary or "")]
    for check in claim.checks(params):
        texts += [(f"label of {check.quantity}", check.title),
                  (f"rule of {check.quantity}", check.rule.describe()),
                  (f"justification of {check.quantity}", check.rule.justification)]
    texts.append(("wrong prediction", inspect.getdoc(claim.wrong) or ""))
    texts += [(f"help of {info.name}", info.help) for info in claim.params.describe()]
    return texts


@pytest.mark.parametrize("claim", all_claims(), ids=lambda claim: claim.id)
def test_a_claims_words_use_one_notation(claim):
    found = [f"{where}: {match.group(0)!r} in {text[:90]!r}"
             for where, text in display_texts(claim)
             for match in [ASCII_MATH.search(outside_code(text))] if match]  # fmt: skip
    assert found == [], "\n".join(found)


@pytest.mark.parametrize(
    "text, ascii_found",
    [("ω → 0 with μ ≤ 1/√d and ‖x‖ ≥ 1", False), ("`sigma2` and `omega_max=0.3`", False),
     ("the delta method", False), ("omega -> 0", True), ("mu_h <= 1", True), ("||x||", True),
     ("at d^{-1/2}, Ltilde", True)],
)  # fmt: skip
def test_the_check_finds_ascii_and_only_outside_code(text, ascii_found):
    assert bool(ASCII_MATH.search(outside_code(text))) is ascii_found
