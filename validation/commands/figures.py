"""`icl-verify figures PAPER`: every figure of a paper, drawn from its claims' stored records.

The claims the paper's figures read (`validation.paper_figures`) are run through the runner
into one run folder, ``OUT/RUN_ID`` (default ``results/figures-PRESET``): a second call with
the same run id resumes that run, so finished claims are not recomputed (and trained ensembles
come from the artefact cache ``OUT/cache``); the figures are then drawn from the records in
results.json alone, never from live objects, into ``OUT/RUN_ID/PAPER-figures/``, with an
``index.md`` naming each figure's file, claims (and their verdicts), preset, what the paper
shows and what is drawn. A claim that disagrees or is inconclusive still yields its figure; a
figure whose claim is not registered (or crashed) is listed as not available.

Exit status: 0 when every figure of a registered claim was drawn, 1 when one could not be
(a claim crashed, or a stored record lacks its numbers), 2 on bad input.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from icl_verify.validation.claim import DEFAULT_PRESET, PRESET_NAMES
from icl_verify.validation.commands.run import (
    parse_seed,
    resolve_device,
    writable_directory,
)
from icl_verify.validation.errors import CommandLineError
from icl_verify.validation.paper_figures import (
    OmittedFigure,
    PaperFigure,
    StoredClaim,
    paper_claims,
    papers,
)
from icl_verify.validation.params import ParameterError
from icl_verify.validation.records import DamagedRunError, RunRecord, load_run
from icl_verify.validation.registry import all_claims
from icl_verify.validation.runner import (
    RUN_ID_PATTERN,
    RunMismatchError,
    claim_parameters,
    run_claims,
)

from icl_verify._files import write_atomic

INDEX_FILE = "index.md"


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "figures",
        help="draw every figure of a paper from its claims (reusing a cached run)",
        description="Run the claims a paper's figures read (resuming OUT/RUN_ID), then draw "
        "the figures from the stored records into OUT/RUN_ID/PAPER-figures/ with an index.md.",
        epilog="exit status: 0 every figure of a registered claim drawn, 1 one could not be "
        "(its claim crashed or its record lacks the numbers), 2 bad input",
    )
    parser.add_argument(
        "paper", metavar="PAPER", help="the paper, by its claims' subpackage (e.g. he2025)"
    )
    parser.add_argument(
        "--preset",
        default=DEFAULT_PRESET,
        help=f"sizes: one of {', '.join(PRESET_NAMES)} (default {DEFAULT_PRESET})",
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=Path("results"),
        help="results folder (default results/); the cache lives in OUT/cache",
    )
    parser.add_argument(
        "--device", default="auto", help="auto (CUDA when present), cpu, cuda, cuda:N"
    )
    parser.add_argument("--seed", default="0", help="run seed, an integer >= 0")
    parser.add_argument(
        "--run-id",
        default=None,
        help="run folder (default figures-PRESET): an existing one is resumed, its finished "
        "claims are only redrawn",
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress bars")
    parser.set_defaults(func=figures)


@dataclass(frozen=True)
class DrawnFigure:
    """One figure of the index: its entry and, when it could not be drawn, why."""

    figure: PaperFigure
    problem: str | None  # None: drawn to `figure.file_name`


def figures(args) -> int:
    known = papers()
    if args.paper not in known:
        raise CommandLineError(f"PAPER must be one of {', '.join(known)}, got {args.paper!r}")
    if args.preset not in PRESET_NAMES:
        raise CommandLineError(
            f"--preset must be one of {', '.join(PRESET_NAMES)}, got {args.preset!r}"
        )
    writable_directory(args.out)
    seed = parse_seed(args.seed)
    run_id = args.run_id or f"figures-{args.preset}"
    if not RUN_ID_PATTERN.fullmatch(run_id):
        raise CommandLineError(
            f"--run-id must be 1-100 characters of letters, digits, '.', '_', '-', got {run_id!r}"
        )
    run_dir = args.out / run_id
    for folder in (run_dir, args.out / "cache", run_dir / f"{args.paper}-figures"):
        writable_directory(folder, option="--out: folder")
    device = resolve_device(args.device)
    drawn, omitted = known[args.paper]
    registered = {claim.id: claim for claim in all_claims()}
    claims = [registered[i] for i in paper_claims(drawn) if i in registered]
    try:
        parameters = claim_parameters(claims, args.preset)
    except ParameterError as error:
        raise CommandLineError(str(error)) from None
    crashed: dict[str, str] = {}
    for claim in claims:  # one at a time: a claim that crashes leaves the others' figures
        try:
            run_claims(
                [claim],
                preset=args.preset,
                out=args.out,
                run_id=run_id,
                seed=seed,
                device=device,
                parameters={claim.id: parameters[claim.id]},
                show_progress=not args.no_progress,
            )
        except (RunMismatchError, DamagedRunError) as error:
            raise CommandLineError(str(error)) from None
        except OSError:
            raise  # the machine's failure (disk full, ...): main reports it in one line
        except Exception as error:  # noqa: BLE001 - a claim's own failure, reported per figure
            crashed[claim.id] = _one_line(error)
            print(f"icl-verify: warning: {claim.id} failed: {crashed[claim.id]}", file=sys.stderr)
    record = load_run(run_dir)
    folder = run_dir / f"{args.paper}-figures"
    results = draw_figures(drawn, record, registered, crashed, folder)
    index = folder / INDEX_FILE
    write_atomic(index, render_index(args.paper, record, results, omitted))
    print(index)
    return 1 if any(r.problem and "not registered" not in r.problem for r in results) else 0


def stored_claims(record: RunRecord, registered: Mapping) -> dict[str, StoredClaim]:
    """Each finished, registered claim of `record` as its figure functions read it."""
    return {
        c.id: StoredClaim(
            c.restored_params(registered[c.id]), c.restored_prediction(), c.restored_measurement()
        )
        for c in record.claims
        if c.id in registered
    }


def draw_figures(
    figures: tuple[PaperFigure, ...],
    record: RunRecord,
    registered: Mapping,
    crashed: Mapping[str, str],
    folder: Path,
) -> list[DrawnFigure]:
    """Draw each figure whose claims are in `record` into `folder`; say why for the others."""
    from icl_verify.figures.style import save_figure  # matplotlib only when drawing

    stored = stored_claims(record, registered)
    results = []
    for figure in figures:
        problem = None
        for claim_id in figure.claims:
            if claim_id not in registered:
                problem = f"not available: claim {claim_id} not registered"
            elif claim_id in crashed:
                problem = f"not available: claim {claim_id} failed ({crashed[claim_id]})"
            if problem:
                break
        if problem is None:
            try:
                save_figure(figure.draw(stored), folder / figure.file_name)
            except KeyError as error:  # a record written before its claim stored these numbers
                problem = (
                    f"not drawn: the stored record lacks {error}; run again with another --run-id"
                )
        results.append(DrawnFigure(figure, problem))
    return results


def render_index(
    paper: str, record: RunRecord, results: list[DrawnFigure], omitted: tuple[OmittedFigure, ...]
) -> str:
    """index.md: one section per figure in number order (file, claims, preset, paper, caption)."""
    verdicts = {c.id: c.verdict for c in record.claims}
    sections: dict[int, list[str]] = {}
    for result in results:
        figure = result.figure
        claims = ", ".join(f"{i} ({verdicts.get(i, 'not run')})" for i in figure.claims)
        lines = [f"## Figure {figure.number}", ""]
        lines.append(
            f"- file: `{figure.file_name}`"
            if result.problem is None
            else f"- file: none — {result.problem}"
        )
        lines += [
            f"- claims: {claims}",
            f"- preset: `{record.preset}`",
            f"- the paper shows: {figure.shows}",
            f"- drawn here: {figure.caption}",
        ]
        if result.problem is None:
            lines += ["", f"![Figure {figure.number}]({figure.file_name})"]
        sections[figure.number] = lines
    for figure in omitted:
        sections[figure.number] = [
            f"## Figure {figure.number}",
            "",
            f"- not drawn: {figure.reason}",
        ]
    drawn = sum(r.problem is None for r in results)
    head = [
        f"# Figures of {paper}",
        "",
        f"Run `{record.run_id}` (preset `{record.preset}`, seed {record.seed}); drawn from the "
        f"stored records of ../results.json (claims' reports: ../report.md). {drawn} of "
        f"{len(results)} figures drawn.",
    ]
    body = [line for number in sorted(sections) for line in ["", *sections[number]]]
    return "\n".join(head + body) + "\n"


def _one_line(error: Exception) -> str:
    text = str(error).strip().splitlines()
    return f"{type(error).__name__}: {text[0] if text else ''}"
