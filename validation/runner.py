"""Run claims: predict, measure, judge, draw, record; resumable (DESIGN.md, "Command line").

`run_claims` runs the claims on every core (or a Dask cluster: `executors`) and
writes `<out>/<run-id>/results.json` atomically after every finished claim, so a
killed run loses at most the claims in progress; running the same run id again
skips the finished claims (resume) and the artefact cache `<out>/cache` hands
trainers their checkpoints back. `claim_parameters` turns a preset and the
user's overrides (`--set`, `--config`) into each claim's typed parameters.
"""

from __future__ import annotations

import contextlib
import itertools
import re
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from icl_verify.validation.cache import ArtefactCache
from icl_verify.validation.claim import Claim, evaluate
from icl_verify.validation.executors import default_workers, execute, finished_before, in_process
from icl_verify.validation.params import ParameterError, Params, check_fits
from icl_verify.validation.records import RESULTS_FILE, ClaimRecord, RunRecord, load_run, now
from icl_verify.validation.report import redraw_figures, write_report
from icl_verify.validation.runtime import Runtime, derived_seed

RUN_ID_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")
# claim processes side by side on one GPU by default: these small models are launch-bound, and
# 4 processes trained 4.1x one process's model-steps on an H200 (each holds a ~500 MB context)
CUDA_WORKERS = 4
FIGURE_DIR = "figures"


def figure_paths(claim: Claim) -> tuple[str, ...]:
    """The claim's figure paths relative to the run folder (a suffix per figure when several).

    >>> from icl_verify.validation.registry import select_claims
    >>> figure_paths(select_claims(["HE-T4.2ii"])[0])
    ('figures/HE-T4.2ii.png',)
    """
    if len(claim.figures) == 1:
        return (f"{FIGURE_DIR}/{claim.id}.png",)
    return tuple(f"{FIGURE_DIR}/{claim.id}-{figure.function}.png" for figure in claim.figures)


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
    >>> claim_parameters(claims, "smoke", {"H_max": "1"})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    icl_verify.validation.params.ParameterError: HE-MAN: H_max must be an integer in [2, ...], got 1
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
            check_fits(parameters[claim.id])
        except ParameterError as error:
            raise ParameterError(f"{claim.id}: {error}") from None
    return parameters


def reserve_run_folder(out: Path, run_id: str) -> str:
    """``run_id``, made unique under ``out`` by a suffix (``-2``, ``-3``, ...) and reserved by
    making its folder: two runs started in the same second with the default id get two
    folders, never one shared folder.

    >>> import tempfile
    >>> out = Path(tempfile.mkdtemp())
    >>> reserve_run_folder(out, "quick-1"), reserve_run_folder(out, "quick-1")
    ('quick-1', 'quick-1-2')
    """
    out.mkdir(parents=True, exist_ok=True)
    for k in itertools.count(1):
        candidate = run_id if k == 1 else f"{run_id}-{k}"
        try:
            (out / candidate).mkdir()
            return candidate
        except FileExistsError:
            continue
    raise AssertionError("unreachable")


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


def measure_claim(
    claim: Claim, params: Params, runtime: Runtime, preset: str = "quick"
) -> ClaimRecord:
    """Predict, measure and judge one claim; its record (figure data included, figures not
    drawn: `draw_claim_figures` draws them from the record, wherever it was computed).

    `preset` names the preset `params` started from (the record lists what was changed).
    With ``runtime.draw_on_cpu`` the measurement runs inside `numerics.draw_on_cpu`.
    """
    start = time.perf_counter()
    prediction = claim.predict(params)
    with _draws(runtime):
        measurement = claim.measure(params, runtime)
    results = evaluate(claim.checks(params), prediction, measurement)
    return ClaimRecord.build(
        claim,
        params,
        prediction,
        measurement,
        results,
        time.perf_counter() - start,
        figure_paths(claim),
        runtime.device,
        claim.presets[preset],
    )


def _draws(runtime: Runtime):
    """The context of a measurement or training: `numerics.draw_on_cpu` with
    ``runtime.draw_on_cpu``, else none."""
    from icl_verify.numerics import draw_on_cpu

    return draw_on_cpu() if runtime.draw_on_cpu else contextlib.nullcontext()


def schedule(claims: Sequence[Claim], sizes: Mapping[str, Params]) -> list[Claim]:
    """The order in which a run hands `claims` to its workers: first each claim that starts a
    training (`Claim.trainings` names one that no earlier claim reads: the long tasks, begun at
    once), then the claims that train nothing, then those whose trainings an earlier claim
    runs, so that these find them in the cache instead of holding a worker while they wait
    on the training's lock. Each group keeps the order of `claims`; a claim's record does not
    depend on when it runs.

    >>> from icl_verify.validation.registry import select_claims
    >>> claims = select_claims(["HE-OBS1", "HE-OBS2", "HE-P4.1", "HE-5.1-LIN"])
    >>> [c.id for c in schedule(claims, claim_parameters(claims, "smoke"))]
    ['HE-OBS1', 'HE-5.1-LIN', 'HE-P4.1', 'HE-OBS2']
    """
    started: set = set()
    starting, untrained, waiting = [], [], []
    for claim in claims:
        trainings = set(claim.trainings(sizes[claim.id]))
        (starting if trainings - started else waiting if trainings else untrained).append(claim)
        started |= trainings
    return starting + untrained + waiting


def work_order(
    claims: Sequence[Claim], sizes: Mapping[str, Params]
) -> list[tuple[Claim | Any, tuple[int, ...]]]:
    """A run's work on a local pool: each item (a claim, or a training of `Claim.trainings`) with
    the indices of the items it waits for (`executors.execute`'s ``after``), in the order the
    pool takes the ready ones. Before each claim, in `schedule`'s order, come the trainings it
    reads that no earlier claim reads, each an item of its own after its own inputs (a pruning's
    encoders); a claim waits for its trainings, so no claim holds a worker while another trains
    what it reads, and the trainings of one claim (HE-ROBUST's twelve) go side by side.

    >>> from icl_verify.validation.registry import select_claims
    >>> claims = select_claims(["HE-OBS1", "HE-OBS2", "HE-5.1-LIN", "HE-P4.1"])
    >>> [(getattr(item, "id", "training"), after)  # doctest: +NORMALIZE_WHITESPACE
    ...  for item, after in work_order(claims, claim_parameters(claims, "smoke"))]
    [('training', ()), ('HE-OBS1', (0,)), ('training', ()), ('HE-5.1-LIN', (2,)),
     ('HE-P4.1', ()), ('HE-OBS2', (0,))]
    """
    order: list[tuple[Claim | Any, tuple[int, ...]]] = []
    index: dict[Any, int] = {}  # training -> its item

    def add(spec) -> int:
        if spec not in index:
            inputs = tuple(add(s) for s in getattr(spec, "inputs", tuple)())
            index[spec] = len(order)
            order.append((spec, inputs))
        return index[spec]

    for claim in schedule(claims, sizes):
        trainings = claim.trainings(sizes[claim.id])
        order.append((claim, tuple(sorted({add(spec) for spec in trainings}))))
    return order


def draw_claim_figures(record: RunRecord, finished: ClaimRecord, run_dir: Path) -> None:
    """Draw `finished`'s figures into `run_dir` from its stored data, as `icl-verify report`
    redraws them (`report.redraw_figures`)."""
    redraw_figures(replace(record, claims=(finished,), sweep=None), run_dir)


def draw_missing_figures(record: RunRecord, run_dir: Path) -> None:
    """Draw the figures of the records in `run_dir` that lack one (a run interrupted after
    saving a record, before drawing it): a resumed run's figures are all there."""
    for stored in record.claims:
        if not all((run_dir / path).is_file() for path in stored.figures):
            draw_claim_figures(record, stored, run_dir)


def store_as_finished(
    results: Iterator[tuple[int, ClaimRecord | Unfinished | None]],
    record: RunRecord,
    add: Callable[[RunRecord, ClaimRecord], RunRecord],
    run_dir: Path,
    bar,
) -> tuple[RunRecord, dict[str, str]]:
    """Store each record of `execute`'s ``results`` as it finishes: ``add`` it to ``record``,
    save results.json, then draw its figures. The new record and the unfinished claims (id ->
    why). An interrupt (KeyboardInterrupt, `errors.Terminated`) stores the records that had
    finished before it, without their figures (`draw_missing_figures` on resuming), stops the
    workers and is raised again: nothing finished is lost."""
    unfinished: dict[str, str] = {}

    def store(finished: ClaimRecord | Unfinished, draw: bool = True) -> None:
        nonlocal record
        if finished is None:  # a training made ahead of its claims (`TrainingTask`)
            return
        if isinstance(finished, Unfinished):
            unfinished[finished.claim_id] = finished.why
            return
        record = add(record, finished)
        record.save(run_dir)  # first: an interrupt while drawing loses no record
        if draw:
            draw_claim_figures(record, finished, run_dir)
        bar.set_postfix_str(finished.id)
        bar.update()

    try:
        for _, finished in results:
            store(finished)
    except KeyboardInterrupt as interrupt:
        for _, finished in finished_before(results, interrupt):
            store(finished, draw=False)
        raise
    finally:
        bar.close()
    return record, unfinished


POINT_DIR = "points"  # a sweep point's own figures: <run>/points/NNN/figures/*.png


@dataclass(frozen=True)
class ClaimTask:
    """One claim at one setting, as a worker gets it (picklable: the claim by id): a claim of a
    run (`run_claims`) or a point of a sweep (`validation.sweep.run_sweep`)."""

    claim_id: str
    params: Params
    preset: str
    seed: int  # the claim's seed (`derived_seed`)
    device: str
    cache_dir: Path  # the artefact cache as the worker sees its file system
    show_progress: bool = False
    deadline: float | None = None  # `time.time()` by which trainings stop (`Runtime.deadline`)
    point: int | None = None  # a sweep point's index in its grid (its figures under points/NNN)
    swept: Mapping[str, Any] = field(default_factory=dict)  # the point's swept values (JSON)
    draw_on_cpu: bool = False  # random streams on the CPU whatever the device (`Runtime`)


@dataclass(frozen=True)
class TrainingTask:
    """One training of a run (`Claim.trainings`), made into the cache ahead of the claims that
    read it, as a worker of a local pool gets it (`work_order`)."""

    spec: Any  # the training (`validation.runtime.Runtime.trained`)
    device: str
    cache_dir: Path
    deadline: float | None = None
    draw_on_cpu: bool = False


@dataclass(frozen=True)
class Unfinished:
    """A claim of a run that its budget stopped: not started before the deadline, or its
    training stopped there (checkpointed: the same run id continues it)."""

    claim_id: str
    why: str


def run_task(task: ClaimTask | TrainingTask) -> ClaimRecord | Unfinished | None:
    """The record of one claim at one setting (`measure_claim`), computed wherever this is
    called and drawing nothing; a sweep point's figure paths lie under ``points/NNN/`` and its
    swept values are among its overrides. `Unfinished` when the run's deadline came first.
    A `TrainingTask`: its training made into the cache (None; at the deadline it stops
    checkpointed, and the claims that read it find the budget spent)."""
    from icl_verify.numerics import TrainingStopped
    from icl_verify.validation.registry import select_claims

    if isinstance(task, TrainingTask):
        if task.deadline is None or time.time() < task.deadline:
            cache = ArtefactCache(task.cache_dir)
            runtime = Runtime(task.device, 0, cache, False, task.deadline, task.draw_on_cpu)
            with _draws(runtime), contextlib.suppress(TrainingStopped):
                runtime.trained(task.spec)
        return None
    if task.deadline is not None and time.time() >= task.deadline:
        return Unfinished(task.claim_id, "not started: the budget was spent")
    claim = select_claims([task.claim_id])[0]
    runtime = Runtime(
        task.device, task.seed, ArtefactCache(task.cache_dir), task.show_progress, task.deadline,
        task.draw_on_cpu,
    )  # fmt: skip
    try:
        record = measure_claim(claim, task.params, runtime, task.preset)
    except TrainingStopped as stopped:
        return Unfinished(task.claim_id, str(stopped))
    if task.point is None:
        return record
    return replace(
        record,
        figures=tuple(f"{POINT_DIR}/{task.point:03d}/{path}" for path in record.figures),
        overrides={**task.swept, **record.overrides},
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
    workers: int | None = None,
    scheduler: str | None = None,
    cache: Path | None = None,
    budget: float | None = None,
    draw_on_cpu: bool = False,
) -> RunRecord:
    """Run `claims` under `preset` into `<out>/<run_id>/`; finished claims of that run are skipped.

    `parameters` maps claim ids to the parameters to use (`claim_parameters`; default:
    the preset's). A finished claim of a resumed run must have been run with the same
    parameters (`RunMismatchError` otherwise). The claims run through `executors.execute`
    (`workers` local processes, default one per core and `CUDA_WORKERS` on a CUDA device, or
    the Dask `scheduler`), with the artefact cache `cache` (default `<out>/cache`, as each
    worker sees its file system); on a local pool of several workers the trainings the claims
    read are tasks of their own, side by side, and a claim starts once those it reads are made
    (`work_order`);
    this process writes every file: results.json after each finished claim (in finishing
    order), then the claims in the order of `claims`, and report.md. Returns the run's
    record with every claim of `claims` finished, except, with a `budget` (seconds), those that
    its deadline stopped (``record.unfinished``: trainings stop at a step boundary after their
    checkpoint; a claim not started by then is not started): the same run id continues them.
    ``draw_on_cpu``: every claim draws the CPU's random streams whatever the device
    (`numerics.draw_on_cpu`): a CUDA run then measures on the CPU run's prompts.
    """
    deadline = None if budget is None else time.time() + budget
    run_dir = Path(out) / run_id
    sizes = dict(parameters or claim_parameters(claims, preset))  # fail before any work
    record = _resumed_run(run_dir, run_id, preset, seed, device, sizes)
    draw_missing_figures(record, run_dir)
    todo = [claim for claim in schedule(claims, sizes) if claim.id not in record.finished_ids()]
    if workers is None and scheduler is None and device.startswith("cuda"):
        workers = min(CUDA_WORKERS, default_workers())
    # a local pool makes the trainings as tasks of their own, each claim after those it reads
    # (`work_order`); in this process, or on a cluster (whose workers may not share the
    # cache), each claim makes what it reads, in `schedule`'s order
    work = work_order(todo, sizes)
    if scheduler is not None or in_process(len(work), workers):
        work = [(claim, ()) for claim in todo]
    nested = show_progress and in_process(len(work), workers, scheduler)
    cache_dir = Path(cache or Path(out) / "cache")
    tasks = [
        ClaimTask(
            item.id,
            sizes[item.id],
            preset,
            derived_seed(seed, item.id),
            device,
            cache_dir,
            nested,
            deadline,
            draw_on_cpu=draw_on_cpu,
        )
        if isinstance(item, Claim)
        else TrainingTask(item, device, cache_dir, deadline, draw_on_cpu)
        for item, _ in work
    ]
    after = None if scheduler is not None else [waits for _, waits in work]
    results = execute(run_task, tasks, workers=workers, scheduler=scheduler, after=after)
    record.save(run_dir)
    bar = progress_bar(len(claims), len(claims) - len(todo), "claims", "claim", show_progress)
    record, unfinished = store_as_finished(results, record, RunRecord.with_claim, run_dir, bar)
    record = _in_claims_order(record, claims, unfinished)
    record.save(run_dir)
    write_report(record, run_dir)
    return record


def _resumed_run(
    run_dir: Path, run_id: str, preset: str, seed: int, device: str, sizes: dict[str, Params]
) -> RunRecord:
    """The run at `run_dir` (new, or the one to resume), refused when it holds a sweep or a
    claim finished with other parameters than `sizes`."""
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
    return record


def _in_claims_order(
    record: RunRecord, claims: Sequence[Claim], unfinished: Mapping[str, str]
) -> RunRecord:
    """`record` with its claims in the order of `claims` (those not among them first), its
    unfinished claims in that order, and finished now unless some are unfinished."""
    order = {claim.id: i for i, claim in enumerate(claims)}
    in_order = sorted(record.claims, key=lambda c: (c.id in order, order.get(c.id, 0)))
    unfinished = {c.id: unfinished[c.id] for c in claims if c.id in unfinished}  # in order
    return replace(
        record,
        claims=tuple(in_order),
        finished=None if unfinished else now(),
        unfinished=unfinished,
    )


def progress_bar(total: int, done: int, description: str, unit: str, show_progress: bool):
    """A progress bar over finished tasks (claims of a run, points of a sweep)."""
    from tqdm.auto import tqdm

    return tqdm(
        total=total, initial=done, desc=description, unit=unit, position=0,
        disable=not show_progress,
    )  # fmt: skip
