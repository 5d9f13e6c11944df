"""`icl-verify publish [RESULTS_DIR --name NAME]`: copy a paper-size run into docs/paper/NAME
and regenerate docs/paper/README.md, the index of every claim at the papers' size
(`validation.published`). Without RESULTS_DIR, only the index is regenerated."""

from __future__ import annotations

from pathlib import Path

from icl_verify.validation.errors import CommandLineError
from icl_verify.validation.published import check_name, write_index
from icl_verify.validation.published import publish as publish_run


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "publish",
        help="copy a paper-size run into docs/paper/ and regenerate its index page",
        description="Copy a run (results.json, report.md, figures; never checkpoints) into "
        "DOCS/NAME and regenerate DOCS/README.md: every claim of both papers with its "
        "verdict at quick (QUICK_SUMMARY) and at the papers' size. Without RESULTS_DIR, only "
        "the index is regenerated.",
    )
    parser.add_argument(
        "results_dir", metavar="RESULTS_DIR", type=Path, nargs="?",
        help="a run folder holding results.json, e.g. results/paper-cpu",
    )  # fmt: skip
    parser.add_argument(
        "--name", help="the folder under DOCS to publish it as, e.g. cpu-untrained"
    )
    parser.add_argument(
        "--replace", action="store_true",
        help="replace a publication of that name (its notes.md is kept)",
    )  # fmt: skip
    parser.add_argument(
        "--docs", type=Path, default=Path("docs/paper"),
        help="where publications live (default docs/paper)",
    )  # fmt: skip
    parser.add_argument(
        "--quick", type=Path, default=Path("docs/verdicts-quick.json"), metavar="QUICK_SUMMARY",
        help="the committed quick verdicts (default docs/verdicts-quick.json)",
    )  # fmt: skip
    parser.set_defaults(func=publish)


def publish(args) -> int:
    if (args.results_dir is None) != (args.name is None):
        raise CommandLineError("--name: give RESULTS_DIR and --name together, or neither")
    if args.name is not None:
        try:
            check_name(args.name)
        except ValueError as error:
            raise CommandLineError(f"--name: {error}") from None
    elif not args.docs.is_dir():
        raise CommandLineError(f"--docs: must be a folder of publications, none at {args.docs}")
    if not args.quick.is_file():
        raise CommandLineError(f"--quick: must be a quick verdict summary, none at {args.quick}")
    if args.results_dir is not None:
        try:
            print(publish_run(args.results_dir, args.name, args.docs, replace=args.replace))
        except ValueError as error:
            raise CommandLineError(f"RESULTS_DIR: {error}") from None
    try:
        print(write_index(args.docs, args.quick))
    except ValueError as error:  # a damaged publication
        raise CommandLineError(f"--docs: {error}") from None
    return 0
