"""`icl-verify stability [IDS...] --seeds K`: the claims under K independent seed sets, and
whether any verdict is the draw's (`validation.stability`).

Set k runs with ``--seed SEED+k`` and every seed parameter of a claim's setting (``train_seed``,
``design_seed``, ...) moved, so the sets share no prompt, start or member; each set is an
ordinary run under OUT (``RUN_ID-set<k>``, resumable like any run). The comparison is written
to ``OUT/RUN_ID-set0/stability.json`` and ``stability.md`` and printed: per claim its verdict
in every set, per check the sets' verdicts where they differ.

Exit status: 0 when no check agrees in one set and disagrees in another, 1 when one does
(a flip: its error bar left out the draw's variation), 2 on bad input, 3 when the budget
stopped a set.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from icl_verify.validation.claim import DEFAULT_PRESET, PRESET_NAMES
from icl_verify.validation.commands.run import (
    UNFINISHED,
    add_executor_options,
    parse_budget,
    parse_seed,
    parse_sets,
    run_target,
    writable_directory,
)
from icl_verify.validation.errors import CommandLineError
from icl_verify.validation.executors import ExecutorError
from icl_verify.validation.params import ParameterError
from icl_verify.validation.records import DamagedRunError
from icl_verify.validation.registry import select_claims
from icl_verify.validation.runner import RunMismatchError, claim_parameters
from icl_verify.validation.stability import STABILITY_FILE, compare, run_seed_sets

from icl_verify._files import write_atomic

MAX_SETS = 100


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "stability",
        help="run claims under K independent seed sets and compare their verdicts",
        description="Run claims under K seed sets (run seed and every seed of a claim's "
        "setting moved) and show, per claim and check, whether the verdict moves.",
        epilog="exit status: 0 no check flips between agrees and disagrees, 1 one does, "
        "2 bad input, 3 stopped at --budget (rerun with the same --run-id)",
    )
    parser.add_argument("ids", nargs="*", metavar="ID", help="claim ids (default: all)")
    parser.add_argument("--seeds", default="2", metavar="K",
                        help=f"seed sets, an integer in [2, {MAX_SETS}] (default 2)")
    parser.add_argument("--preset", default=DEFAULT_PRESET,
                        help=f"one of {', '.join(PRESET_NAMES)} (default {DEFAULT_PRESET})")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="change a parameter of every claim that has it (repeatable)")
    parser.add_argument("--device", default="auto", help="auto, cpu, cuda, cuda:N")
    parser.add_argument("--out", type=Path, default=Path("results"), help="results folder")
    parser.add_argument("--seed", default="0", help="run seed of set 0 (set k: SEED + k)")
    parser.add_argument("--run-id", default=None,
                        help="stem of the sets' run folders (default stability-YYYYmmdd-HHMMSS); "
                        "an existing one continues")  # fmt: skip
    parser.add_argument("--budget", default=None, metavar="SECONDS",
                        help="wall time for all sets; the same --run-id continues")
    parser.add_argument("--no-progress", action="store_true", help="no progress bars")
    add_executor_options(parser, "claims")
    parser.set_defaults(func=stability)


def parse_sets_count(text: str) -> int:
    """--seeds as an integer in [2, MAX_SETS]; CommandLineError otherwise.

    >>> parse_sets_count("3")
    3
    """
    try:
        count = int(text)
    except ValueError:
        count = 0
    if not 2 <= count <= MAX_SETS:
        raise CommandLineError(f"--seeds must be an integer in [2, {MAX_SETS}], got {text!r}")
    return count


def stability(args) -> int:
    writable_directory(args.out)
    if args.preset not in PRESET_NAMES:
        raise CommandLineError(
            f"--preset must be one of {', '.join(PRESET_NAMES)}, got {args.preset!r}"
        )
    sets, seed = parse_sets_count(args.seeds), parse_seed(args.seed)
    budget = parse_budget(args.budget)
    try:
        claims = select_claims(args.ids)
        parameters = claim_parameters(claims, args.preset, parse_sets(args.set))
    except ParameterError as error:
        raise CommandLineError(str(error)) from None
    except ValueError as error:
        raise CommandLineError(str(error)) from None
    args.run_id = args.run_id or f"stability-{datetime.now():%Y%m%d-%H%M%S}"
    run_id, workers, scheduler, device = run_target(args, args.run_id)
    try:
        records = run_seed_sets(
            claims, sets=sets, preset=args.preset, out=args.out, run_id=run_id, seed=seed,
            device=device, parameters=parameters, workers=workers, scheduler=scheduler,
            cache=args.cache, budget=budget, show_progress=not args.no_progress,
        )  # fmt: skip
    except (RunMismatchError, DamagedRunError, ExecutorError) as error:
        raise CommandLineError(str(error)) from None
    if len(records) < sets or any(r.unfinished for r in records):
        print(f"icl-verify: the budget stopped a seed set; continue with --run-id {run_id}")
        return UNFINISHED
    result = compare(records)
    folder = args.out / f"{run_id}-set0"
    result.save(folder / STABILITY_FILE)
    text = result.markdown()
    write_atomic(folder / "stability.md", text)
    print(text, end="")
    print(f"stability: {folder / STABILITY_FILE}")
    return 1 if result.flipping() else 0
