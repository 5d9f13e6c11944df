"""`icl-verify derive`: print the sympy derivations of `theory.symbolic` as terminal text or LaTeX.

    icl-verify derive --list                 names with a one-line description
    icl-verify derive manifold               one derivation, terminal text
    icl-verify derive --all --latex          every derivation, LaTeX

Exit status 0 when every identity a derivation checks holds, 1 otherwise, 2 on bad input.
"""

from __future__ import annotations

import argparse

from icl_verify.theory.symbolic import DERIVATIONS, derive
from icl_verify.validation.errors import CommandLineError

_HEADER = (
    "Sympy derivations behind the closed forms of He et al. (2025), Sections 4.1-4.3.\n"
    "Each: numbered steps (what is done, then the expression), terms dropped at leading order,\n"
    "and the identities verified on the way (residual 0 = exact). Sections refer to\n"
    "reference/he2025.md.\n"
)


def register(subparsers) -> None:
    """Add the `derive` subcommand to the `icl-verify` parser."""
    parser = subparsers.add_parser(
        "derive",
        help="print the symbolic derivations (sympy) of the theory's formulas",
        description="Print the sympy derivations behind the closed forms of He et al. (2025): "
        "steps, dropped terms and the identities checked on the way.",
    )
    parser.add_argument(
        "name",
        nargs="?",
        metavar="NAME",
        help=f"derivation to print, one of: {', '.join(DERIVATIONS)}",
    )
    parser.add_argument("--all", action="store_true", help="print every derivation")
    parser.add_argument("--list", action="store_true", help="list the derivations and exit")
    style = parser.add_mutually_exclusive_group()
    style.add_argument(
        "--plain",
        dest="format",
        action="store_const",
        const="plain",
        help="terminal text: each step, then its expression (default)",
    )
    style.add_argument(
        "--latex",
        dest="format",
        action="store_const",
        const="latex",
        help=r"LaTeX: one \subsection* per derivation",
    )
    parser.set_defaults(func=run, format="plain")


def _names(args: argparse.Namespace) -> list[str]:
    if args.all and args.name:
        raise CommandLineError(
            f"give either NAME or --all, not both (got NAME={args.name!r} and --all)"
        )
    if args.all:
        return list(DERIVATIONS)
    if args.name is None:
        raise CommandLineError(
            f"NAME or --all is required; NAME is one of: {', '.join(DERIVATIONS)}"
        )
    if args.name not in DERIVATIONS:
        raise CommandLineError(f"NAME must be one of: {', '.join(DERIVATIONS)} (got {args.name!r})")
    return [args.name]


def run(args: argparse.Namespace) -> int:
    """Print the requested derivations; 0 when all their checks passed, 1 otherwise."""
    if args.list:
        width = max(map(len, DERIVATIONS))
        for name, entry in DERIVATIONS.items():
            print(f"{name:<{width}}  {entry.summary}")
        return 0
    derivations = [derive(name) for name in _names(args)]
    if args.all and args.format == "plain":
        print(_HEADER)
    print("\n".join(d.latex() if args.format == "latex" else d.plain() for d in derivations))
    checks = [check for derivation in derivations for check in derivation.checks]
    failed = [d.name for d in derivations if not d.all_checks_passed]
    summary = f"{len(derivations)} derivation(s), {len(checks)} identities checked"
    if failed:
        print(f"{summary}; FAILED in: {', '.join(failed)}")
        return 1
    print(f"{summary}; all hold.")
    return 0
