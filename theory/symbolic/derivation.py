"""The result type of every symbolic derivation: named steps, results, dropped terms and checks.

A `Derivation` is what `theory.symbolic` hands back: the sympy expressions it
derived (`results`), the chain of named steps a reader can follow from the
model to the formula (`steps`), the terms a leading-order argument throws away
(`dropped`), and the identities it verified on the way (`checks`). It renders
itself as terminal text (`plain`) or as LaTeX (`latex`).
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

import sympy as sp


@dataclass(frozen=True)
class Step:
    """One step of a derivation: what it does, in words, and the expression it arrives at."""

    description: str
    expression: sp.Basic


@dataclass(frozen=True)
class Check:
    """An identity verified during a derivation.

    `evidence` is what was computed (usually the simplified residual, which must
    be 0); `passed` records whether the identity held.
    """

    description: str
    evidence: sp.Basic
    passed: bool


def residual_check(description: str, left: sp.Basic, right: sp.Basic) -> Check:
    """Check that sympy simplifies `left - right` to exactly 0.

    >>> x = sp.Symbol("x")
    >>> residual_check("double angle", sp.sin(2 * x), 2 * sp.sin(x) * sp.cos(x)).passed
    True
    """
    residual = sp.cancel(sp.together(sp.expand((left - right).rewrite(sp.exp))))
    if residual != 0:  # radicals and the like: let sympy's full simplifier try
        residual = sp.simplify(residual)
    return Check(description, residual, residual == 0)


_WIDTH = 100  # columns of terminal text


def _latex_math(expression: sp.Basic) -> str:
    """sp.latex, with a trailing * in a symbol's name drawn as a superscript (mu* -> \\mu^{*})."""
    starred = {
        symbol: sp.latex(sp.Symbol(symbol.name[:-1])) + "^{*}"
        for symbol in getattr(expression, "free_symbols", ())
        if isinstance(symbol, sp.Symbol) and symbol.name.endswith("*")
    }
    return sp.latex(expression, symbol_names=starred)


def _pretty(expression: sp.Basic) -> str:
    return sp.pretty(expression, use_unicode=True, num_columns=_WIDTH)


def _wrap(text: str, first: str, rest: str) -> str:
    return textwrap.fill(
        text, width=_WIDTH, initial_indent=first, subsequent_indent=rest, break_on_hyphens=False
    )


def _indent(text: str, prefix: str = "      ") -> str:
    return "\n".join(prefix + line if line.strip() else line for line in text.splitlines())


@dataclass(frozen=True)
class Derivation:
    """A finished derivation: title, source in the reference catalogue, steps, results, checks.

    Attributes:
        name: registry name (``"approximate_loss"``, ...).
        title: one line saying what is derived.
        source: the reference-catalogue sections it follows (``"§HE-P4.1"``).
        steps: the argument, in order.
        results: name -> sympy expression of each derived quantity, in the base
            symbols of `theory.symbolic.symbols` (d, L, sigma2, ...), ready for
            `sympy.lambdify`.
        dropped: terms a leading-order argument neglects, each with its size.
        checks: identities verified on the way; all must have passed.
        notes: remarks in words (conventions, which quantity a symbol is).
    """

    name: str
    title: str
    source: str
    steps: tuple[Step, ...]
    results: Mapping[str, sp.Basic]
    dropped: tuple[Step, ...] = ()
    checks: tuple[Check, ...] = ()
    notes: tuple[str, ...] = field(default=())

    def __post_init__(self) -> None:
        object.__setattr__(self, "results", MappingProxyType(dict(self.results)))

    @property
    def all_checks_passed(self) -> bool:
        """True when every recorded identity held."""
        return all(check.passed for check in self.checks)

    def plain(self) -> str:
        """Terminal text: each step's description, then its expression (sympy's pretty printer)."""
        lines = [f"== {self.name}: {self.title}  [{self.source}]", ""]
        for number, step in enumerate(self.steps, start=1):
            lines += [
                _wrap(f"{number}. {step.description}", "  ", "     "),
                _indent(_pretty(step.expression)),
                "",
            ]
        if self.dropped:
            lines.append("  Dropped at leading order:")
            for step in self.dropped:
                lines += [
                    _wrap(f"- {step.description}", "   ", "     "),
                    _indent(_pretty(step.expression)),
                    "",
                ]
        if self.checks:
            lines.append("  Checks:")
            for check in self.checks:
                mark = "ok  " if check.passed else "FAIL"
                lines.append(
                    _wrap(
                        f"[{mark}] {check.description}: {sp.sstr(check.evidence)}",
                        "   ",
                        "          ",
                    )
                )
            lines.append("")
        for note in self.notes:
            lines.append(_wrap(f"Note: {note}", "  ", "        "))
        return "\n".join(lines).rstrip() + "\n"

    def latex(self) -> str:
        """LaTeX source: a subsection with one display equation per step."""

        def item(step: Step) -> str:
            return f"\\item {_latex_text(step.description)}\n\\[ {_latex_math(step.expression)} \\]"

        parts = [f"\\subsection*{{{_latex_text(self.title)} ({_latex_text(self.source)})}}"]
        parts.append(
            "\\begin{enumerate}\n" + "\n".join(item(s) for s in self.steps) + "\n\\end{enumerate}"
        )
        if self.dropped:
            parts.append(
                "Dropped at leading order:\n\\begin{itemize}\n"
                + "\n".join(item(s) for s in self.dropped)
                + "\n\\end{itemize}"
            )
        if self.checks:
            marks = {True: r"\checkmark", False: r"$\times$"}
            rows = "\n".join(
                rf"\item[{marks[c.passed]}] {_latex_text(c.description)}: "
                f"${_latex_math(c.evidence)}$"
                for c in self.checks
            )
            parts.append("Checks:\n\\begin{itemize}\n" + rows + "\n\\end{itemize}")
        parts += [f"\\emph{{Note.}} {_latex_text(note)}" for note in self.notes]
        return "\n\n".join(parts) + "\n"

    def markdown(self) -> str:
        """Markdown with display mathematics (``$$ ... $$``, rendered by MathJax on the
        documentation site): the steps as a numbered list, the dropped terms, the checks."""

        def item(step: Step) -> str:
            return f"{step.description}\n\n    $$ {_latex_math(step.expression)} $$\n"

        lines = [f"## {self.title}", "", f"*{self.source}*", ""]
        lines += [f"{k}. " + item(s) for k, s in enumerate(self.steps, start=1)]
        if self.dropped:
            lines += ["**Dropped at leading order:**", ""]
            lines += ["- " + item(s) for s in self.dropped]
        if self.checks:
            lines += ["**Checks** (residual 0 = exact):", ""]
            lines += [
                f"- {'✓' if c.passed else '✗'} {c.description}: ${_latex_math(c.evidence)}$"
                for c in self.checks
            ]
        lines += [""] + [f"*Note.* {note}" for note in self.notes]
        return "\n".join(lines) + "\n"

    def __str__(self) -> str:
        return self.plain()


_LATEX_SPECIAL = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "#": r"\#",
    "_": r"\_",
    "^": r"\^{}",
    "$": r"\$",
    "{": r"\{",
    "}": r"\}",
    "~": r"\~{}",
}


def _latex_text(text: str) -> str:
    """Escape the characters of running text that LaTeX treats specially.

    >>> print(_latex_text("c_1 = 50% of {x}"))
    c\\_1 = 50\\% of \\{x\\}
    """
    return re.sub(r"[\\&%#_^${}~]", lambda match: _LATEX_SPECIAL[match.group()], text)
