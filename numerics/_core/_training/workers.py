"""Side-by-side training: ``TrainConfig.workers`` = W > 1 trains contiguous slices of the
members in W spawned processes (one torch thread each), each slice a run of its own with the
full run's seeds and data streams (`sub_run`), and merges their checkpoints into the one
checkpoint of workers=1 (`checkpoints.merged`): the same weights and history, bit for bit on
the CPU when every slice has the same largest H (to float rounding otherwise: a shorter head
axis rounds the sum over heads differently).

Each slice checkpoints to ``<checkpoint>.part<i>of<W>`` (in a scratch folder without a
checkpoint path); at the end the parts merge into one checkpoint of the whole ensemble and are
removed. Resuming reads the parts of a killed run, or, when there are none, cuts the whole
checkpoint into slices (`checkpoints.cut`), so a run of any workers count resumes.
"""

from __future__ import annotations

import dataclasses
import multiprocessing
import os
import pickle
import tempfile
from concurrent.futures import ProcessPoolExecutor, wait
from pathlib import Path

import torch
from icl_verify.numerics._core._training import checkpoints
from icl_verify.numerics._core._training.config import (
    ModelConfig,
    TrainConfig,
    TrainResult,
    history,
    logged_heads,
    torch_device,
)
from icl_verify.numerics._core._training.loop import train_here
from icl_verify.numerics._core.data import drawing_on_cpu
from tqdm.auto import tqdm

from icl_verify.processes import stop_workers, worker_setup


def check_arguments(config: TrainConfig, callback, initial) -> None:
    """ValueError (one line) unless a run with ``config.workers`` > 1 can be split: member
    streams, no callback, no initial weights, not inside `numerics.draw_on_cpu`.

    >>> check_arguments(TrainConfig(workers=2, data_streams="shared"), None, None)
    Traceback (most recent call last):
    ...
    ValueError: data_streams must be 'member' when workers > 1 (a shared stream cannot be split ...
    """
    if config.data_streams != "member":
        raise ValueError("data_streams must be 'member' when workers > 1 (a shared stream "
                         "cannot be split between processes)")  # fmt: skip
    if callback is not None:
        raise ValueError("callback must be None when workers > 1 (members train apart)")
    if initial is not None:
        raise ValueError("initial must be None when workers > 1 (fine-tune in one process)")
    if drawing_on_cpu():
        raise ValueError("workers must be 1 inside draw_on_cpu (a spawned process would not "
                         "inherit it)")  # fmt: skip


def slices(E: int, W: int) -> list[tuple[int, int]]:
    """W contiguous member ranges [lo, hi) covering 0..E-1, sizes differing by at most one.

    >>> slices(5, 2)
    [(0, 2), (2, 5)]
    """
    bounds = [E * i // W for i in range(W + 1)]
    return list(zip(bounds, bounds[1:], strict=False))


def sub_run(
    model_config: ModelConfig, tasks: tuple, config: TrainConfig, lo: int, hi: int
) -> tuple[ModelConfig, tuple, TrainConfig]:
    """Members lo..hi-1 as a run of their own: their architecture (``config.members``), tasks
    and seeds.

    Member e's init seed is ``seed + e`` and its data stream derives from that seed, so the
    slice run with seed ``seed + lo`` draws exactly the full run's data for these members.

    >>> from icl_verify.numerics import AttentionConfig
    >>> model, tasks, config = sub_run(AttentionConfig(d=2, ensemble=3), (1, 2, 3),
    ...                                TrainConfig(seed=10, workers=2), 1, 3)
    >>> model.ensemble, tasks, config.seed, config.workers
    (2, (2, 3), 11, 1)
    """
    sub_config = dataclasses.replace(config, seed=config.seed + lo, workers=1)
    return model_config.members(lo, hi), tasks[lo:hi], sub_config


# ---------------------------------------------------------------------------------------------
# a worker process: one slice


_steps_done = None  # in a worker of `train_in_workers`: the shared steps-done counter per slice


def _share_steps_done(counters, parent: int) -> None:
    """Worker initialiser: keep the parent's shared counters (one per slice) for `_train_part`;
    leave Ctrl-C to the parent and end with it (`icl_verify.processes.worker_setup`)."""
    global _steps_done
    _steps_done = counters
    worker_setup(parent)


def _train_part(
    model_config: ModelConfig,
    tasks: tuple,
    config: TrainConfig,
    path: Path,
    resume: bool,
    index: int,
    deadline: float | None,
) -> None:
    """A worker process: train slice `index` on one torch thread, counting its steps in the
    shared counter the parent's progress bar reads; its checkpoint is its result."""
    torch.set_num_threads(1)

    def count(step: int, model: torch.nn.Module) -> None:
        _steps_done[index] = step

    train_here(model_config, tasks, config, torch_device(config.device), checkpoint_path=path,
               resume=resume, callback=count, progress=False, progress_position=0, initial=None,
               deadline_time=deadline)  # fmt: skip


# ---------------------------------------------------------------------------------------------
# the parent: slices out, processes side by side, checkpoints merged back


def train_in_workers(
    model_config: ModelConfig,
    tasks: tuple,
    config: TrainConfig,
    checkpoint_path: Path | None,
    resume: bool,
    progress: bool,
    progress_position: int,
    deadline: float | None,
) -> TrainResult:
    """`numerics.train` with the members in ``config.workers`` contiguous slices, one
    spawned process each (its arguments checked there and by `check_arguments`)."""
    E, H = model_config.ensemble, logged_heads(model_config)
    try:
        pickle.dumps((model_config, tasks))
    except Exception:  # a lambda or local function cannot reach another process
        raise ValueError(
            "workers must be 1 for an attention that cannot be pickled (a lambda or local "
            f"function), got {getattr(model_config, 'attention', None)!r}"
        ) from None
    W = min(config.workers, E)
    runs = [sub_run(model_config, tasks, config, lo, hi) for lo, hi in slices(E, W)]
    fingerprint = checkpoints.fingerprint(model_config, tasks, config)
    device = torch_device(config.device)
    with tempfile.TemporaryDirectory(prefix="icl-verify-train-") as scratch:
        base = checkpoint_path if checkpoint_path is not None else Path(scratch) / "run.pt"
        parts = [base.with_name(f"{base.name}.part{i}of{len(runs)}") for i in range(len(runs))]
        if resume and not any(part.exists() for part in parts):
            _cut_into_parts(checkpoint_path, fingerprint, E, runs, parts)
        _train_parts(runs, parts, resume, deadline, config.steps, progress, progress_position)
        loaded = [torch.load(part, map_location=device, weights_only=False) for part in parts]
        state = checkpoints.merged(loaded, fingerprint, H)
        if checkpoint_path is not None:
            checkpoints.save(state, checkpoint_path)
            for part in parts:
                part.unlink()
    model = model_config.build([config.seed + e for e in range(E)])
    model = model.to(device=device, dtype=getattr(torch, config.dtype))
    model.load_state_dict(state["model"])
    return TrainResult(model=model, history=history(state["records"], E, H or 0, state["seconds"]))


def _cut_into_parts(
    checkpoint_path: Path, fingerprint: str, E: int, runs: list[tuple], parts: list[Path]
) -> None:
    """The parts of a whole run's checkpoint (when there is one, and it is this run's)."""
    whole = checkpoints.load_run(checkpoint_path, torch.device("cpu"), fingerprint)
    if whole is None:
        return
    for (lo, hi), run, part in zip(slices(E, len(runs)), runs, parts, strict=True):
        piece = checkpoints.cut(whole, lo, hi, logged_heads(run[0]), checkpoints.fingerprint(*run))
        checkpoints.save(piece, part)


def _train_parts(
    runs: list[tuple],
    parts: list[Path],
    resume: bool,
    deadline: float | None,
    steps: int,
    progress: bool,
    progress_position: int,
) -> None:
    """Train every slice in its own spawned process, the bar following the slowest slice; an
    interrupt or a failed slice stops the others (their checkpoints stay)."""
    bar = tqdm(
        total=steps, disable=not progress, desc=f"train ({len(runs)} processes)",
        position=progress_position, leave=progress_position == 0,
    )  # fmt: skip
    spawn = multiprocessing.get_context("spawn")
    steps_done = spawn.Array("q", len(runs), lock=False)  # written by slice i's worker only
    pool = ProcessPoolExecutor(
        len(runs), mp_context=spawn, initializer=_share_steps_done,
        initargs=(steps_done, os.getpid()),
    )  # fmt: skip
    try:
        futures = [
            pool.submit(_train_part, *run, part, resume, i, deadline)
            for i, (run, part) in enumerate(zip(runs, parts, strict=True))
        ]
        while True:
            running = wait(futures, timeout=0.5).not_done
            bar.update(min(steps_done) - bar.n)  # the slowest slice's step
            if not running:
                break
        for future in futures:
            future.result()
    except BaseException:  # an interrupt or a failed slice: the others' checkpoints stay
        stop_workers(pool)
        raise
    pool.shutdown(wait=True)
    bar.update(steps - bar.n)  # parts resumed at their last step counted none
    bar.close()
