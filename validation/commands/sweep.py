"""`icl-verify sweep ID --grid KEY=VALUES ...`: one claim over a grid of parameters; its
validity map.

Each point of the grid (the product of the `--grid` lists, or with `--zip` their
pairing) is a full run of the claim at those parameters, recorded in one
`OUT/RUN_ID/results.json`; report.md holds a table of the points and the validity map
`figures/ID-validity-map.png`. Rerunning a killed sweep with its `--run-id` redoes only
the unfinished points. Grid syntax: `KEY=5,10,20`, `KEY=logspace:40:640:5`,
`KEY=linspace:0:1:5`, `KEY=[[80,160],[160,320]]` (JSON, for list parameters); see
`validation.sweep`. The points run on every core (`--workers N`) or a Dask cluster
(`--scheduler tcp://HOST:PORT`); the records are the same either way.

Exit status as `run`: 0 when no point disagrees (inconclusive points print a warning),
1 when a point disagrees (or, with --strict, is inconclusive), 2 on bad input.
"""

from __future__ import annotations

import sys
from datetime import datetime
from pathlib import Path

from icl_verify.validation import api
from icl_verify.validation.claim import DEFAULT_PRESET, PRESET_NAMES
from icl_verify.validation.commands.run import (
    add_executor_options,
    parse_seed,
    parse_sets,
    report_interrupt,
    run_target,
    writable_directory,
)
from icl_verify.validation.errors import CommandLineError
from icl_verify.validation.estimates import DISAGREES, INCONCLUSIVE
from icl_verify.validation.executors import ExecutorError
from icl_verify.validation.params import ParameterError
from icl_verify.validation.records import DamagedRunError, RunRecord
from icl_verify.validation.registry import select_claims
from icl_verify.validation.report import REPORT_FILE, sweep_table, validity_map_path
from icl_verify.validation.runner import RunMismatchError, claim_parameters
from icl_verify.validation.sweep import parse_grid


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "sweep",
        help="run one claim over a grid of parameters and draw its validity map",
        description="Run one claim at every point of a parameter grid; write "
        "OUT/RUN_ID/results.json, report.md (a table of the points) and the validity map.",
        epilog="exit status: 0 no point disagrees (inconclusive ones print a warning), "
        "1 a point disagrees (or, with --strict, is inconclusive), 2 bad input",
    )
    parser.add_argument("id", metavar="ID", help="the claim id (see `icl-verify list`)")
    parser.add_argument(
        "--grid",
        action="append",
        required=True,
        metavar="KEY=VALUES",
        help="values of one parameter: KEY=5,10,20, KEY=logspace:40:640:5 (integers rounded, "
        "repeats dropped), KEY=linspace:0:1:5 or a JSON list KEY=[[80,160],[160,320]] "
        "(repeatable: the grid is their product)",
    )
    parser.add_argument(
        "--zip",
        action="store_true",
        help="pair the --grid lists element by element (equal lengths) instead of their product",
    )
    parser.add_argument(
        "--preset",
        default=DEFAULT_PRESET,
        help=f"sizes: one of {', '.join(PRESET_NAMES)} (default {DEFAULT_PRESET})",
    )
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="change a parameter at every point, e.g. --set sigma2=0.5 (repeatable)",
    )
    parser.add_argument(
        "--device", default="auto", help="auto (CUDA when present), cpu, cuda, cuda:N"
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=Path("results"),
        help="results folder (default results/); the cache lives in OUT/cache",
    )
    parser.add_argument("--seed", default="0", help="run seed; each point's seed derives from it")
    parser.add_argument(
        "--run-id",
        default=None,
        help="name of the run folder (default sweep-ID-YYYYmmdd-HHMMSS); an existing run id "
        "resumes that sweep",
    )
    parser.add_argument(
        "--strict", action="store_true", help="exit 1 also when a point is inconclusive"
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress bars")
    add_executor_options(parser, "points")
    parser.set_defaults(func=sweep)


def sweep(args) -> int:
    writable_directory(args.out)
    if args.preset not in PRESET_NAMES:
        raise CommandLineError(
            f"--preset must be one of {', '.join(PRESET_NAMES)}, got {args.preset!r}"
        )
    seed = parse_seed(args.seed)
    try:
        (claim,) = select_claims([args.id])
    except ValueError as error:
        raise CommandLineError(str(error)) from None
    sets = parse_sets(args.set)
    for text in args.grid:
        key = text.partition("=")[0].strip()
        if key in sets:
            raise CommandLineError(f"--grid {key}: also given by --set; sweep it or set it")
    try:
        base = claim_parameters([claim], args.preset, sets)[claim.id]
        grid = parse_grid(base, args.grid, zipped=args.zip)
    except ParameterError as error:
        raise CommandLineError(str(error)) from None
    for note in grid.notes:
        print(f"icl-verify: note: {note}", file=sys.stderr)
    run_id, workers, scheduler, device = run_target(
        args, f"sweep-{claim.id}-{datetime.now():%Y%m%d-%H%M%S}"
    )
    try:  # the Python API's sweep (`validation.api.sweep`) is the one way a sweep runs
        record = api.sweep(
            claim.id, args.grid, args.preset, zipped=args.zip, device=device, seed=seed,
            out=args.out, run_id=run_id, workers=workers, scheduler=scheduler,
            cache=args.cache, show_progress=not args.no_progress,
            **claim.params.parse_text(sets),  # the command line's text as Python values
        ).record  # fmt: skip
    except (RunMismatchError, DamagedRunError, ExecutorError) as error:
        raise CommandLineError(str(error)) from None
    except KeyboardInterrupt as interrupt:
        report_interrupt(interrupt, args.out / run_id, "point")
        raise
    print(sweep_table(record))
    print(f"validity map: {args.out / run_id / validity_map_path(record.sweep)}")
    print(f"report: {args.out / run_id / REPORT_FILE}")
    return exit_status(record, strict=args.strict)


def exit_status(record: RunRecord, strict: bool) -> int:
    """1 if a point disagrees (or, with strict, is inconclusive), else 0; warns of
    inconclusive points on stderr."""
    verdicts = [point.verdict for point in record.claims]
    unclear = verdicts.count(INCONCLUSIVE)
    if unclear:
        print(
            f"icl-verify: warning: {unclear} of {len(verdicts)} points inconclusive "
            "(measurement too coarse to decide; try a larger --preset)",
            file=sys.stderr,
        )
    return int(DISAGREES in verdicts or (strict and unclear > 0))
