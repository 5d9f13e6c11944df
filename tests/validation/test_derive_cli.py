"""`icl-verify derive` end to end: listing, printing, exit statuses and one-line errors."""

from __future__ import annotations

import icl_verify.validation.commands.derive as derive_command
import pytest
from icl_verify.theory.symbolic import (
    DERIVATIONS,
    Check,
    Derivation,
    RegisteredDerivation,
    Step,
    derive_single_head,
)
from icl_verify.validation.cli import main


def run(capsys, *argv):
    status = main(["derive", *argv])
    out, err = capsys.readouterr()
    return status, out, err


def test_list_names_every_derivation_with_a_description(capsys):
    status, out, err = run(capsys, "--list")
    assert status == 0 and err == ""
    lines = out.strip().splitlines()
    assert [line.split()[0] for line in lines] == list(DERIVATIONS)
    assert all(len(line.split(maxsplit=1)) == 2 for line in lines)


def test_plain_prints_steps_then_expressions_and_the_check_summary(capsys):
    status, out, _ = run(capsys, "single_head", "--plain")
    assert status == 0
    assert out.startswith("== single_head:")
    assert "1. Ltilde (4.1) with one head" in out
    assert "√d" in out  # omega* = 1/sqrt(d), drawn by the pretty printer
    assert "[FAIL]" not in out
    checks = len(derive_single_head().checks)
    assert out.strip().endswith(f"1 derivation(s), {checks} identities checked; all hold.")


def test_plain_is_the_default_format(capsys):
    assert run(capsys, "single_head")[1] == run(capsys, "single_head", "--plain")[1]


def test_latex_prints_display_equations(capsys):
    status, out, _ = run(capsys, "single_head", "--latex")
    assert status == 0
    assert "\\subsection*{" in out
    assert "\\frac{1}{\\sqrt{d}}" in out
    assert out.count("\\[") == out.count("\\]") > 0


def test_all_prints_every_derivation(capsys):
    status, out, _ = run(capsys, "--all", "--plain")
    assert status == 0
    for name in DERIVATIONS:
        assert f"== {name}:" in out
    assert f"{len(DERIVATIONS)} derivation(s)" in out and "all hold." in out


@pytest.mark.parametrize(
    "argv, fragment",
    [
        ([], "NAME or --all is required"),
        (["bogus"], "NAME must be one of: " + ", ".join(DERIVATIONS)),
        (["single_head", "--all"], "either NAME or --all"),
        (["single_head", "--latex", "--plain"], "not allowed with argument"),
    ],
)
def test_bad_input_exits_2_with_one_line(capsys, argv, fragment):
    status, out, err = run(capsys, *argv)
    assert status == 2 and out == ""
    assert err.count("\n") == 1 and fragment in err


def test_a_failed_identity_exits_1(capsys, monkeypatch):
    broken = Derivation(
        name="broken",
        title="an identity that does not hold",
        source="test",
        steps=(Step("one", 1),),
        results={},
        checks=(Check("1 = 2", 1, False),),
    )
    registry = {"broken": RegisteredDerivation(lambda: broken, "broken")}
    monkeypatch.setattr(derive_command, "DERIVATIONS", registry)
    monkeypatch.setattr(derive_command, "derive", lambda name: registry[name].function())
    status, out, _ = run(capsys, "broken")
    assert status == 1
    assert "[FAIL] 1 = 2" in out and "FAILED in: broken" in out
