"""`icl-verify run [IDS...]`: run claims under a preset, print the verdict table, exit 0/1/2.

The preset sizes every claim; `--set KEY=VALUE` (repeatable) and `--config FILE.toml`
(one table per claim id, e.g. ``["HE-P4.1"]`` then ``d = 10``) change any parameter
(`icl-verify show ID` lists them with their allowed values). `--set` applies to every
claim run that has the key, and wins over the file. The claims run on every core
(`--workers N`, default one process per core; four side by side on a CUDA device, which these
small launch-bound models share) or on a Dask cluster (`--scheduler tcp://HOST:PORT`), with
the same records either way (`validation.executors`). On a local pool the trainings the
claims read are tasks of their own, side by side, and a claim starts once its trainings are
made (`validation.runner.work_order`): no training is made twice, none waits behind a claim.

`--budget SECONDS` bounds the run's wall time: at the deadline every training writes its
checkpoint and stops, claims not yet started are not started, and the run exits 3 listing
what is unfinished; the same command with the same `--run-id` continues where it stopped
(finished claims are kept, trainings resume from their checkpoints).

Exit status: 0 when no claim run disagrees, 1 when any disagrees, 2 on bad input, 3 when
the budget stopped the run before every claim finished.
An *inconclusive* claim (the measurement too coarse to decide, e.g. the smoke
preset's few samples) prints a warning and exits 0: it says the run was too small,
not that the theory is wrong, and exit 1 is kept for findings. `--strict` makes
inconclusive claims exit 1, for gating on "every claim verified".
"""

from __future__ import annotations

import math
import os
import re
import sys
import tempfile
from datetime import datetime
from pathlib import Path

from icl_verify.validation import api
from icl_verify.validation.claim import DEFAULT_PRESET, PRESET_NAMES
from icl_verify.validation.errors import CommandLineError, Terminated
from icl_verify.validation.estimates import DISAGREES, INCONCLUSIVE
from icl_verify.validation.executors import ExecutorError
from icl_verify.validation.params import ParameterError
from icl_verify.validation.records import DamagedRunError, RunRecord, load_run
from icl_verify.validation.registry import all_claims, select_claims
from icl_verify.validation.report import REPORT_FILE
from icl_verify.validation.runner import (
    CUDA_WORKERS,
    RUN_ID_PATTERN,
    RunMismatchError,
    claim_parameters,
    reserve_run_folder,
)

from icl_verify import devices

UNFINISHED = 3  # exit status of a run its --budget stopped
MAX_SEED = api.MAX_SEED
SCHEDULER_PATTERN = re.compile(r"[a-z][a-z0-9+]*://\S+:\d+")


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "run",
        help="run claims and compare theory with simulation",
        description="Run claims; write OUT/RUN_ID/results.json, report.md and figures/.",
        epilog="exit status: 0 no claim disagrees (inconclusive ones print a warning), "
        "1 a claim disagrees (or, with --strict, is inconclusive), 2 bad input, "
        "3 stopped at --budget with claims unfinished (rerun with the same --run-id)",
    )
    parser.add_argument("ids", nargs="*", metavar="ID", help="claim ids (default: all; see `list`)")
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
        help="change a parameter of every claim run that has it, e.g. --set d=10 "
        "--set gap_L=40,80,160 (repeatable; see `icl-verify show ID`)",
    )
    parser.add_argument(
        "--config",
        type=Path,
        default=None,
        metavar="FILE.toml",
        help='parameters per claim: one TOML table per claim id, e.g. ["HE-P4.1"] d = 10',
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
    parser.add_argument("--seed", default="0", help=f"run seed, an integer in [0, {MAX_SEED}]")
    parser.add_argument(
        "--run-id",
        default=None,
        help="name of the run folder (default PRESET-YYYYmmdd-HHMMSS); "
        "an existing run id resumes that run",
    )
    parser.add_argument(
        "--strict", action="store_true", help="exit 1 also when a claim is inconclusive"
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress bars")
    parser.add_argument(
        "--budget",
        default=None,
        metavar="SECONDS",
        help="stop the run after this many seconds of wall time: trainings checkpoint and stop, "
        "claims not started are left; the same --run-id continues (exit 3 when unfinished)",
    )
    add_executor_options(parser, "claims", cuda_workers=CUDA_WORKERS)
    parser.set_defaults(func=run)


def add_executor_options(parser, what: str, cuda_workers: int | None = None) -> None:
    """--workers N | --scheduler ADDRESS (one or the other) and --cache DIR: where the
    independent `what` (claims, points) run (`validation.executors`); ``cuda_workers``: the
    default on a CUDA device, when it is not one per core."""
    where = parser.add_mutually_exclusive_group()
    on_cuda = f", {cuda_workers} on a CUDA device" if cuda_workers else ""
    where.add_argument(
        "--workers",
        default=None,
        metavar="N",
        help=f"local processes running the {what} (default: one per core{on_cuda}; 1 runs "
        "them here, one after another); the results are the same for any N",
    )
    where.add_argument(
        "--scheduler",
        default=None,
        metavar="ADDRESS",
        help=f"run the {what} on the Dask cluster of this scheduler, e.g. tcp://HOST:8786 "
        "(this process writes every file; workers need no shared file system)",
    )
    parser.add_argument(
        "--cache",
        type=Path,
        default=None,
        metavar="DIR",
        help="artefact cache (trained models) as the workers see their file system "
        "(default OUT/cache)",
    )


def parse_workers(text: str | None) -> int | None:
    """--workers as an integer >= 1 (None: one per core); CommandLineError otherwise.

    >>> parse_workers("2"), parse_workers(None)
    (2, None)
    """
    if text is None:
        return None
    try:
        workers = int(text)
    except ValueError:
        workers = 0
    if workers < 1:
        raise CommandLineError(f"--workers must be an integer >= 1, got {text!r}")
    return workers


def parse_scheduler(address: str | None) -> str | None:
    """--scheduler as a Dask address PROTOCOL://HOST:PORT; CommandLineError otherwise (the
    scheduler itself is reached when the work starts: `executors.connect`).

    >>> parse_scheduler("tcp://127.0.0.1:8786")
    'tcp://127.0.0.1:8786'
    """
    if address is not None and not SCHEDULER_PATTERN.fullmatch(address):
        raise CommandLineError(
            f"--scheduler must be a Dask scheduler address like tcp://HOST:8786, got {address!r}"
        )
    return address


def resolve_device(name: str) -> str:
    """The torch device string for --device (`icl_verify.devices.resolve_device`);
    CommandLineError (one line) when unknown or unavailable."""
    try:
        return devices.resolve_device(name)
    except ValueError as error:
        raise CommandLineError(f"--{error}") from None


def parse_budget(text: str | None) -> float | None:
    """--budget as a number of seconds > 0 (None: no limit); CommandLineError otherwise.

    >>> parse_budget("90"), parse_budget(None)
    (90.0, None)
    """
    if text is None:
        return None
    try:
        budget = float(text)
    except ValueError:
        budget = math.nan
    if not (math.isfinite(budget) and budget > 0):
        raise CommandLineError(f"--budget must be a number of seconds > 0, got {text!r}")
    return budget


def parse_seed(text: str) -> int:
    """--seed as an integer in [0, 2^63 - 1]; CommandLineError otherwise."""
    try:
        seed = int(text)
    except ValueError:
        seed = -1
    if not 0 <= seed <= MAX_SEED:
        raise CommandLineError(f"--seed must be an integer in [0, {MAX_SEED}], got {text!r}")
    return seed


def parse_sets(items: list[str]) -> dict[str, str]:
    """--set KEY=VALUE items as a dict (a later KEY wins); CommandLineError when malformed.

    >>> parse_sets(["d=10", "gap_L=40,80"])
    {'d': '10', 'gap_L': '40,80'}
    """
    values = {}
    for item in items:
        key, equals, value = item.partition("=")
        if not equals or not key.strip() or not value.strip():
            raise CommandLineError(f"--set must be KEY=VALUE, e.g. --set d=10, got {item!r}")
        values[key.strip()] = value.strip()
    return values


def load_config(path: Path | None) -> dict[str, dict]:
    """--config FILE.toml: claim id -> its parameter table; CommandLineError when malformed."""
    if path is None:
        return {}
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib
    try:
        data = tomllib.loads(path.read_text())
    except OSError as error:
        raise CommandLineError(f"--config {path}: cannot be read ({error.strerror})") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        raise CommandLineError(f"--config {path}: not valid TOML ({error})") from None
    except RecursionError:  # arrays or tables nested thousands deep
        raise CommandLineError(
            f"--config {path}: nested too deep to read (a parameter is a number or a flat list)"
        ) from None
    known = {claim.id for claim in all_claims()}
    for key, table in data.items():
        if not isinstance(table, dict):
            raise CommandLineError(
                f"--config {path}: top-level key {key!r} must be a table named by a claim id, "
                f'e.g. ["HE-P4.1"] then d = 10'
            )
        if key not in known:
            raise CommandLineError(
                f"--config {path}: unknown claim id {key!r} (see `icl-verify list`)"
            )
    return data


def writable_directory(path: Path, option: str = "--out") -> Path:
    """`path` if it is, or can be created as, a folder this process may write; else
    CommandLineError (one line). Leaves nothing behind: the nearest existing ancestor decides,
    by a folder made and removed in it (permissions alone do not tell: /proc admits root)."""
    existing = path
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        problem = f"{existing} is not a folder"
    else:
        try:
            os.rmdir(tempfile.mkdtemp(prefix=".icl-verify-probe-", dir=existing))
            return path
        except OSError as error:
            problem = f"cannot create a folder in {existing}: {error.strerror or error}"
    raise CommandLineError(f"{option} {path}: not a writable directory ({problem})")


def run(args) -> int:
    writable_directory(args.out)
    if args.preset not in PRESET_NAMES:
        raise CommandLineError(
            f"--preset must be one of {', '.join(PRESET_NAMES)}, got {args.preset!r}"
        )
    seed = parse_seed(args.seed)
    budget = parse_budget(args.budget)
    try:
        claims = select_claims(args.ids)
    except ValueError as error:
        raise CommandLineError(str(error)) from None
    tables = load_config(args.config)
    try:  # checked before any folder is made
        claim_parameters(claims, args.preset, parse_sets(args.set), tables)
    except ParameterError as error:
        raise CommandLineError(str(error)) from None
    run_id, workers, scheduler, device = run_target(
        args, f"{args.preset}-{datetime.now():%Y%m%d-%H%M%S}"
    )
    sets = parse_sets(args.set)  # text, parsed per claim by its fields' types: Python values
    typed = {claim.id: claim.params.parse_text(
        {**tables.get(claim.id, {}),
         **{k: v for k, v in sets.items() if k in claim.params.__dataclass_fields__}})
        for claim in claims}  # fmt: skip
    try:  # the Python API's run (`validation.api.run_many`) is the one way claims run
        record = api.run_many(
            [claim.id for claim in claims], args.preset,
            tables=typed, device=device, seed=seed, out=args.out, run_id=run_id,
            workers=workers, scheduler=scheduler, cache=args.cache, budget=budget,
            show_progress=not args.no_progress,
        ).record  # fmt: skip
    except (RunMismatchError, DamagedRunError, ExecutorError) as error:
        raise CommandLineError(str(error)) from None
    except KeyboardInterrupt as interrupt:
        report_interrupt(interrupt, args.out / run_id, "claim")
        raise
    print(verdict_table(record, [claim.id for claim in claims]))
    print(f"report: {args.out / run_id / REPORT_FILE}")
    if record.unfinished:
        for claim_id, why in record.unfinished.items():
            print(f"icl-verify: unfinished: {claim_id}: {why}", file=sys.stderr)
        print(
            f"icl-verify: the budget stopped the run; continue it with --run-id {run_id}",
            file=sys.stderr,
        )
        return UNFINISHED
    return exit_status(record, [claim.id for claim in claims], strict=args.strict)


def report_interrupt(interrupt: KeyboardInterrupt, run_dir: Path, what: str) -> None:
    """One line on stderr: the signal, how many records (``what``: "claim" or "point") of the
    run in ``run_dir`` are saved, how to resume."""
    try:
        saved = len(load_run(run_dir).claims)
    except ValueError:  # no results.json yet, or one not readable
        saved = 0
    name = "SIGTERM" if isinstance(interrupt, Terminated) else "SIGINT"
    print(
        f"icl-verify: interrupted ({name}): {saved} {what}{'' if saved == 1 else 's'} finished "
        f"and saved in {run_dir}; "
        f"resume with --run-id {run_dir.name}",
        file=sys.stderr,
    )


def run_target(args, default_run_id: str) -> tuple[str, int | None, str | None, str]:
    """The run id (`--run-id` or the default), the executor (`--workers`, `--scheduler`) and
    the device of `run` and `sweep`, checked before any work: the run folder, the cache and
    `--cache` must be writable. Bad input raises `CommandLineError` (one line)."""
    run_id = args.run_id or default_run_id
    if not RUN_ID_PATTERN.fullmatch(run_id):
        raise CommandLineError(
            f"--run-id must be 1-100 characters of letters, digits, '.', '_', '-', got {run_id!r}"
        )
    workers, scheduler = parse_workers(args.workers), parse_scheduler(args.scheduler)
    for folder in (args.out / run_id, args.out / "cache"):  # e.g. a run owned by another user
        writable_directory(folder, option="--out: folder")
    if args.cache is not None and scheduler is None:  # a cluster's workers have their own
        writable_directory(args.cache, option="--cache")
    device = resolve_device(args.device)
    if args.run_id is None:  # the default id: a fresh run, never another's folder
        run_id = reserve_run_folder(args.out, run_id)
    return run_id, workers, scheduler, device


def verdict_table(record: RunRecord, ids: list[str]) -> str:
    """One line per claim run: id, verdict, seconds (plain text for the terminal).

    >>> from types import SimpleNamespace as Record
    >>> record = Record(claims=[Record(id="HE-C-SOFTMAXNORM", verdict="agrees", seconds=6.0)])
    >>> print(verdict_table(record, ["HE-C-SOFTMAXNORM"]))
    claim             verdict        seconds
    HE-C-SOFTMAXNORM  agrees             6.0
    """
    width = max([len("claim"), *(len(claim_id) for claim_id in ids)]) + 2  # ids of any length
    rows = [f"{'claim':<{width}}{'verdict':<14}{'seconds':>8}"]
    for claim in record.claims:
        if claim.id in ids:
            rows.append(f"{claim.id:<{width}}{claim.verdict:<14}{claim.seconds:>8.1f}")
    return "\n".join(rows)


def exit_status(record: RunRecord, ids: list[str], strict: bool) -> int:
    """1 if a claim of `ids` disagrees (or, with strict, is inconclusive), else 0."""
    verdicts = {claim.id: claim.verdict for claim in record.claims if claim.id in ids}
    unclear = sorted(i for i, v in verdicts.items() if v == INCONCLUSIVE)
    if unclear:
        print(
            f"icl-verify: warning: inconclusive: {', '.join(unclear)} "
            "(measurement too coarse to decide; try a larger --preset)",
            file=sys.stderr,
        )
    if DISAGREES in verdicts.values() or (strict and unclear):
        return 1
    return 0
