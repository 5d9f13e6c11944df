"""`icl-verify list`: every registered claim with its source and one-sentence statement.

``--markdown`` prints the same registry as one table per paper (claim, what is checked,
source, verdict): the README's claim tables are this output (`tests/test_readme.py` fails when
the README's copy differs from the registry). ``--verdicts RESULTS_DIR`` fills the verdict
column from a run's results.json and names its preset in the column's header.
"""

from __future__ import annotations

from pathlib import Path

from icl_verify.validation.errors import CommandLineError
from icl_verify.validation.registry import all_claims

TABLE_HEADER = ("claim", "what is checked", "source")


def register(subparsers) -> None:
    parser = subparsers.add_parser("list", help="list the claims: id, source, statement")
    parser.add_argument(
        "--markdown", action="store_true", help="one markdown table per paper (the README's)"
    )
    parser.add_argument(
        "--verdicts",
        type=Path,
        default=None,
        metavar="RESULTS_DIR",
        help="with --markdown: the verdicts of this run (a folder holding results.json)",
    )
    parser.set_defaults(func=list_claims)


def list_claims(args) -> int:
    """Print one block per claim (id and source, then the statement, indented; a heading per
    paper), or with ``--markdown`` the tables of `claim_tables`."""
    if args.verdicts is not None and not args.markdown:
        raise CommandLineError("--verdicts needs --markdown")
    if args.markdown:
        print(claim_tables(*_verdicts(args.verdicts)) if args.verdicts else claim_tables())
        return 0
    paper = None
    for claim in all_claims():
        if claim.source.paper != paper:
            paper = claim.source.paper
            print(f"# {paper}")
        print(f"{claim.id:<12} {claim.source}")
        print(f"{'':<12} {claim.statement}")
    return 0


def _verdicts(run_dir: Path) -> tuple[dict[str, str], str]:
    """Claim id -> verdict of the run in ``run_dir``, and its preset; one line when unreadable."""
    from icl_verify.validation.records import load_run

    try:
        record = load_run(run_dir)
    except ValueError as error:
        raise CommandLineError(f"--verdicts: {error}") from None
    return {claim.id: claim.verdict for claim in record.claims}, record.preset


def claim_tables(verdicts: dict[str, str] | None = None, preset: str | None = None) -> str:
    """The registry as markdown: per paper a ``### <paper>`` heading and a table of its claims
    (id, `Claim.summary`, the source without the paper), with a verdict column when
    ``verdicts`` (claim id -> verdict, of a run of ``preset``) are given.

    >>> print(claim_tables().splitlines()[2])
    | claim | what is checked | source |
    """
    columns = TABLE_HEADER + ((f"{preset} verdict",) if verdicts is not None else ())
    lines, paper = [], None
    for claim in all_claims():
        if claim.source.paper != paper:
            paper = claim.source.paper
            if lines:
                lines.append("")
            lines += [f"### {paper}", "", _row(columns), _row(["---"] * len(columns))]
        source = str(claim.source).removeprefix(f"{paper}, ")
        cells = [claim.id, claim.summary, source]
        if verdicts is not None:
            cells.append(verdicts.get(claim.id, "not run"))
        lines.append(_row(cell.replace("|", "\\|") for cell in cells))
    return "\n".join(lines)


def _row(cells) -> str:
    return "| " + " | ".join(cells) + " |"
