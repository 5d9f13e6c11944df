"""`icl-verify report RESULTS_DIR`: re-render report.md, its tables and figures from results.json.
Each check's ``changes_at`` (where its verdict would turn) is recomputed by today's rule too.

The tables (`Claim.table`) are re-rendered from the stored numbers by the claims as they are
now and written back into results.json, so a run recorded by an older version reports (and
publishes) today's tables; nothing is re-run.
"""

from __future__ import annotations

from pathlib import Path

from icl_verify.validation.errors import CommandLineError
from icl_verify.validation.params import ParameterError
from icl_verify.validation.records import UNRECOVERABLE, load_run
from icl_verify.validation.report import redraw_figures, retabulate, write_report


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "report",
        help="re-render report.md, its tables and figures of a finished (or partial) run",
    )
    parser.add_argument(
        "results_dir",
        metavar="RESULTS_DIR",
        type=Path,
        help="a run folder holding results.json, e.g. results/quick-20260101-120000",
    )
    parser.add_argument(
        "--no-figures",
        action="store_true",
        help="only re-render report.md; keep the existing figures",
    )
    parser.set_defaults(func=report)


def report(args) -> int:
    try:
        record = load_run(args.results_dir, advice=UNRECOVERABLE)
    except ValueError as error:
        raise CommandLineError(f"RESULTS_DIR: {error}") from None
    try:
        if not args.no_figures:
            redraw_figures(record, args.results_dir)
        tabulated = retabulate(record)
    except ParameterError as error:  # a record whose parameters its claim no longer allows
        raise CommandLineError(f"RESULTS_DIR: stored parameters: {error}") from None
    if tabulated.claims != record.claims:
        tabulated.save(args.results_dir)
    print(write_report(tabulated, args.results_dir))
    return 0
