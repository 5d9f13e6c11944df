"""`icl-verify list`: every registered claim with its source and one-sentence statement."""

from __future__ import annotations

from icl_verify.validation.registry import all_claims


def register(subparsers) -> None:
    parser = subparsers.add_parser("list", help="list the claims: id, source, statement")
    parser.set_defaults(func=list_claims)


def list_claims(args) -> int:
    """Print one block per claim: id and source, then the statement, indented; a heading per
    paper."""
    paper = None
    for claim in all_claims():
        if claim.source.paper != paper:
            paper = claim.source.paper
            print(f"# {paper}")
        print(f"{claim.id:<12} {claim.source}")
        print(f"{'':<12} {claim.statement}")
    return 0
