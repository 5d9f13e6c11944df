"""`Derivation` objects: immutable results, plain and LaTeX rendering, bad arguments."""

from __future__ import annotations

import pytest
import sympy as sp
from icl_verify.theory.symbolic import Check, Derivation, Step, derive_approximate_loss
from icl_verify.theory.symbolic.derivation import residual_check
from icl_verify.theory.symbolic.symbols import heads

x = sp.Symbol("x")
EXAMPLE = Derivation(
    name="example",
    title="a_b & 50% of {x}",
    source="§test",
    steps=(Step("square x_1", x**2), Step("then halve", x**2 / 2)),
    results={"half_square": x**2 / 2},
    dropped=(Step("cubic term", x**3),),
    checks=(residual_check("x^2/2 - x x/2", x**2 / 2, x * x / 2), Check("1 = 2", 1, False)),
    notes=("a note",),
)


def test_results_are_read_only():
    with pytest.raises(TypeError):
        EXAMPLE.results["other"] = x


def test_plain_numbers_steps_and_marks_failed_checks():
    text = EXAMPLE.plain()
    assert text.startswith("== example: a_b & 50% of {x}  [§test]")
    assert "  1. square x_1" in text and "  2. then halve" in text
    assert "Dropped at leading order:" in text and "- cubic term" in text
    assert "[ok  ] x^2/2 - x x/2: 0" in text and "[FAIL] 1 = 2: 1" in text
    assert "Note: a note" in text
    assert not EXAMPLE.all_checks_passed


def test_latex_escapes_running_text_and_keeps_math():
    text = EXAMPLE.latex()
    assert r"\subsection*{a\_b \& 50\% of \{x\} (§test)}" in text
    assert r"\item square x\_1" in text
    assert r"\[ \frac{x^{2}}{2} \]" in text
    assert r"\item[$\times$] 1 = 2" in text


def test_residual_check_fails_on_a_false_identity():
    check = residual_check("sin = cos", sp.sin(x), sp.cos(x))
    assert not check.passed and check.evidence != 0


@pytest.mark.parametrize("bad", [0, -1])
def test_head_count_must_be_positive(bad):
    with pytest.raises(ValueError, match="head_count must be an integer >= 1"):
        derive_approximate_loss(bad)
    with pytest.raises(ValueError, match="count .number of heads. must be an integer >= 1"):
        heads(bad)
