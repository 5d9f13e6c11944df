"""`icl-verify show ID`: a claim's statement, source, and every parameter it takes.

For each parameter: its type, what it means, the values it allows and its value in
each preset, so that a researcher knows what `--set KEY=VALUE` can change before a run.
Loads no torch and no matplotlib.
"""

from __future__ import annotations

import textwrap

from icl_verify.validation.claim import PRESET_NAMES, Claim
from icl_verify.validation.errors import CommandLineError
from icl_verify.validation.registry import select_claims


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "show",
        help="a claim's statement, source and parameters (meaning, allowed values, presets)",
        description="Show a claim: statement, source, and each parameter with its meaning, "
        "allowed values and preset values.",
    )
    parser.add_argument("id", metavar="ID", help="claim id (see `list`)")
    parser.set_defaults(func=show)


def show(args) -> int:
    try:
        (claim,) = select_claims([args.id])
    except ValueError as error:
        raise CommandLineError(str(error)) from None
    print(describe(claim))
    return 0


def describe(claim: Claim) -> str:
    """The text `icl-verify show` prints for `claim`.

    >>> from icl_verify.validation.registry import select_claims
    >>> print(describe(select_claims(["HE-MAN"])[0]))  # doctest: +ELLIPSIS, +NORMALIZE_WHITESPACE
    HE-MAN  He et al. 2025, §4.2, eq. (4.6)-(4.8)
    ...
    parameter    type   smoke  quick  paper  allowed                    meaning
    d            int    5      5      5      an integer in [1, 10000]   covariate dimension d
    ...
    """
    lines = [f"{claim.id}  {claim.source}", ""]
    lines += textwrap.wrap(claim.statement, width=88)
    lines += ["", f"Parameters ({claim.params.__name__}); change them with --set KEY=VALUE:", ""]
    rows = [["parameter", "type", *PRESET_NAMES, "allowed", "meaning"]]
    for info in claim.params.describe():
        values = [_value(getattr(claim.presets[name], info.name)) for name in PRESET_NAMES]
        rows.append([info.name, info.type, *values, info.allowed, info.help])
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]) - 1)]
    for row in rows:
        cells = [cell.ljust(width) for cell, width in zip(row, widths, strict=False)]
        lines.append("  ".join([*cells, row[-1]]).rstrip())
    return "\n".join(lines)


def _value(value) -> str:
    """A preset value in a table cell; a long list shortened to its ends and its length.

    >>> _value((10, 15, 20, 25, 30, 35, 40, 45)), _value(1e-13), _value(((5, 40), (2, 3)))
    ('[10,15,20,…,45] (8 values)', '1e-13', '[[5,40],[2,3]]')
    """
    if isinstance(value, tuple):
        items = [_value(v) for v in value]
        if len(items) > 6:
            return f"[{','.join(items[:3])},…,{items[-1]}] ({len(items)} values)"
        return f"[{','.join(items)}]"
    return f"{value:g}" if isinstance(value, float) else str(value)
