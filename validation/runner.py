"""Run claims: predict, measure, judge, draw, record; resumable (DESIGN.md, "Command line").

`run_claims` writes `<out>/<run-id>/results.json` atomically after every claim,
so a killed run loses at most the claim in progress; running the same run id
again skips the finished claims (resume) and the artefact cache `<out>/cache`
hands trainers their checkpoints back. `claim_parameters` turns a preset and the
user's overrides (`--set`, `--config`) into each claim's typed parameters.
"""

from __future__ import annotations

import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from icl_verify.validation.cache import ArtefactCache
from icl_verify.validation.claim import Claim, evaluate
from icl_verify.validation.params import ParameterError, Params
from icl_verify.validation.records import RESULTS_FILE, ClaimRecord, RunRecord, load_run, now
from icl_verify.validation.report import write_report
from icl_verify.validation.runtime import Runtime, claim_seed

RUN_ID_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")
FIGURE_DIR = "figures"


def figure_paths(claim: Claim) -> tuple[str, ...]:
    """The claim's figure paths relative to the run folder (a suffix per figure when several).

    >>> from icl_verify.validation.registry import select_claims
    >>> figure_paths(select_claims(["HE-T4.2ii"])[0])
    ('figures/HE-T4.2ii.png',)
    """
    names = claim.figures
    if len(names) == 1:
        return (f"{FIGURE_DIR}/{claim.id}.png",)
    return tuple(f"{FIGURE_DIR}/{claim.id}-{name.split(':')[1]}.png" for name in names)


class RunMismatchError(ValueError):
    """An existing run id was resumed with another preset, seed or parameters."""


def claim_parameters(
    claims: Sequence[Claim],
    preset: str,
    sets: Mapping[str, Any] = {},
    tables: Mapping[str, Mapping[str, Any]] = {},
) -> dict[str, Params]:
    """Each claim's parameters: the preset, then its table of `tables`, then `sets`.

    `sets` (from `--set k=v`) applies to every claim that has the key; a key that none
    of `claims` has is an error. `tables` (from `--config FILE.toml`) maps claim ids to
    their own overrides. Raises `ParameterError`, one line naming the claim and key.

    >>> from icl_verify.validation.registry import select_claims
    >>> claims = select_claims(["HE-MAN"])
    >>> claim_parameters(claims, "smoke", {"d": "10"})["HE-MAN"].d
    10
    >>> claim_parameters(claims, "smoke", {"H_max": "1"})
    Traceback (most recent call last):
    ...
    icl_verify.validation.params.ParameterError: HE-MAN: H_max must be an integer >= 2, got 1
    """
    for key in sets:
        if not any(key in claim.params.__dataclass_fields__ for claim in claims):
            known = sorted({name for claim in claims for name in claim.params.__dataclass_fields__})
            raise ParameterError(
                f"--set {key}: no claim run has a parameter {key!r} (they have: {', '.join(known)};"
                " see `icl-verify show ID`)"
            )
    parameters = {}
    for claim in claims:
        own = {k: v for k, v in sets.items() if k in claim.params.__dataclass_fields__}
        try:
            parameters[claim.id] = claim.parameters(preset, {**tables.get(claim.id, {}), **own})
        except ParameterError as error:
            raise ParameterError(f"{claim.id}: {error}") from None
    return parameters


def open_run(run_dir: Path, preset: str, seed: int, device: str) -> RunRecord:
    """The run's record: the stored one when resuming (same preset and seed), else a fresh one.

    The device may differ (it changes speed, not the experiment); each claim records its own.
    """
    if not (run_dir / RESULTS_FILE).exists():
        return RunRecord.start(run_dir.name, preset, seed, device)
    stored = load_run(run_dir)
    if (stored.preset, stored.seed) != (preset, seed):
        raise RunMismatchError(
            f"run-id {run_dir.name!r} exists with preset {stored.preset!r} and seed {stored.seed}; "
            f"resume it with those or choose another --run-id (got {preset!r}, {seed})"
        )
    return stored


def run_claim(
    claim: Claim, params: Params, runtime: Runtime, run_dir: Path, preset: str = "quick"
) -> ClaimRecord:
    """Predict, measure and judge one claim, draw its figure into `run_dir`; its record.

    `preset` names the preset `params` started from (the record lists what was changed).
    """
    start = time.perf_counter()
    prediction = claim.predict(params)
    measurement = claim.measure(params, runtime)
    results = evaluate(claim.checks(params), prediction, measurement)
    seconds = time.perf_counter() - start
    from icl_verify.figures.style import save_figure  # matplotlib only when drawing

    paths = figure_paths(claim)
    for figure, path in zip(claim.draw(params, prediction, measurement), paths, strict=True):
        save_figure(figure, run_dir / path)
    return ClaimRecord.build(
        claim,
        params,
        prediction,
        measurement,
        results,
        seconds,
        paths,
        runtime.device,
        claim.presets[preset],
    )


def run_claims(
    claims: Sequence[Claim],
    *,
    preset: str,
    out: Path,
    run_id: str,
    seed: int,
    device: str,
    parameters: Mapping[str, Params] | None = None,
    show_progress: bool = False,
) -> RunRecord:
    """Run `claims` under `preset` into `<out>/<run_id>/`; finished claims of that run are skipped.

    `parameters` maps claim ids to the parameters to use (`claim_parameters`; default:
    the preset's). A finished claim of a resumed run must have been run with the same
    parameters (`RunMismatchError` otherwise). Returns the run's record with every
    claim of `claims` finished; writes results.json after each claim and report.md at
    the end.
    """
    run_dir = Path(out) / run_id
    sizes = dict(parameters or claim_parameters(claims, preset))  # fail before any work
    record = open_run(run_dir, preset, seed, device)
    if record.sweep is not None:  # its points are one claim at other parameters, not a run
        raise RunMismatchError(
            f"run-id {run_id!r} holds a sweep of {record.sweep.claim}; resume it with "
            "`icl-verify sweep` or choose another --run-id"
        )
    for stored in record.claims:
        if stored.id in sizes and stored.params != sizes[stored.id].as_json():
            raise RunMismatchError(
                f"run-id {run_id!r} finished {stored.id} with other parameters; resume it with "
                "the same --set/--config or choose another --run-id"
            )
    cache = ArtefactCache(Path(out) / "cache")
    record.save(run_dir)
    bar = _claim_bar(claims, show_progress)
    for claim in bar:
        if claim.id in record.finished_ids():
            continue
        if show_progress:
            bar.set_postfix_str(claim.id)
        runtime = Runtime(device, claim_seed(seed, claim.id), cache, show_progress)
        record = record.with_claim(run_claim(claim, sizes[claim.id], runtime, run_dir, preset))
        record.save(run_dir)
    record = replace(record, finished=now())
    record.save(run_dir)
    write_report(record, run_dir)
    return record


def _claim_bar(claims: Sequence[Claim], show_progress: bool):
    from tqdm.auto import tqdm

    return tqdm(claims, desc="claims", unit="claim", position=0, disable=not show_progress)
