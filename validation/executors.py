"""Where independent tasks run: in this process, a local process pool, or a Dask cluster.

`execute(fn, tasks, workers=..., scheduler=...)` is the one seam through which
`icl-verify sweep` runs its grid points and `icl-verify run` its claims. It yields
``(index, fn(tasks[index]))`` as each task finishes (completion order), from one of
three back ends:

- in this process, in order, when one worker is asked for (or there is one task);
- a local process pool (the default: one worker per core of this machine,
  `default_workers`), started with the spawn method; a worker process that dies (killed,
  out of memory) breaks the pool, which is started again for the tasks not yet
  returned, up to ``RETRIES`` times (as Dask reruns a dead worker's task); a task that
  raises stops the tasks not started, but those running finish and are handed back before
  the exception is raised (an hour of another claim is not lost to a one-second bug);
- a Dask cluster (``scheduler="tcp://HOST:PORT"``): each task is submitted with
  ``retries=2`` and ``pure=False``, so a worker that dies mid-task costs only that
  task, which the scheduler runs again elsewhere.

A task may wait for others (``after``, local back ends): the pool starts it only once its
prerequisites are handed back, so a claim that reads a training waits for the task that makes
it without holding a worker (`validation.runner.work_order`), and the trainings of a run go side
by side on the other workers (on one GPU too: these small models are launch-bound).

Every task runs on one torch thread in every back end (`numerics.single_thread`), so a
task's numbers do not depend on where it ran: one worker or many give the same records,
seed for seed. Tasks and results travel by pickle: `fn` must be a module-level function
and a task plain data (the callers' task dataclasses carry the claim by id). Nothing
here writes files; the caller stores each result as it arrives.

>>> sorted(execute(abs, [-2, 3], workers=1))
[(0, 2), (1, 3)]
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from collections.abc import Callable, Collection, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from multiprocessing import get_context
from pathlib import Path
from typing import TypeVar

from icl_verify.processes import stop_workers, worker_setup

T = TypeVar("T")
R = TypeVar("R")

CONNECT_TIMEOUT = 10.0  # seconds to reach a Dask scheduler before giving up
RETRIES = 2  # reruns of a task whose worker died (Dask: or failed); local: pool restarts


class ExecutorError(Exception):
    """The tasks could not be run where they were sent (a one-line message; tasks that
    finished were handed back before it was raised)."""


class SchedulerError(ExecutorError):
    """No Dask scheduler answered at the address within the timeout."""


class WorkersDiedError(ExecutorError):
    """Local worker processes kept dying: the pool broke ``RETRIES + 1`` times."""


def default_workers() -> int:
    """The number of cores this process may use (its CPU affinity where the system has one).

    >>> default_workers() >= 1
    True
    """
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return os.cpu_count() or 1


def in_process(count: int, workers: int | None = None, scheduler: str | None = None) -> bool:
    """Whether `execute` would run `count` tasks here, in order (then nested progress bars
    can be drawn; a pool's or a cluster's workers draw none).

    >>> in_process(5, workers=1), in_process(1, workers=4), in_process(5, scheduler="tcp://h:1")
    (True, True, False)
    """
    return scheduler is None and min(workers or default_workers(), count) <= 1


def execute(
    fn: Callable[[T], R],
    tasks: Sequence[T],
    *,
    workers: int | None = None,
    scheduler: str | None = None,
    timeout: float | None = None,
    after: Sequence[Collection[int]] | None = None,
) -> Iterator[tuple[int, R]]:
    """``(i, fn(tasks[i]))`` for every task, as each finishes.

    `workers`: processes of the local pool (default `default_workers()`; 1 runs the
    tasks here, in order). `scheduler`: a Dask scheduler's address, used instead of
    the pool; `SchedulerError` when none answers within `timeout` seconds (default
    `CONNECT_TIMEOUT`). `after`: for each task, the indices of the tasks that must be handed
    back before it starts, each an earlier task (local back ends only: ValueError with a
    scheduler). An exception of a task is raised here; closing the iterator early (an
    interrupt, a failed task) cancels the tasks not started.

    >>> sorted(execute(abs, [-2, 3, -4], workers=2, after=[(), (0,), (0, 1)]))
    [(0, 2), (1, 3), (2, 4)]
    """
    if scheduler is not None:
        if after is not None:
            raise ValueError("after must be None with a scheduler (local workers only)")
        return _on_dask(fn, tasks, scheduler, CONNECT_TIMEOUT if timeout is None else timeout)
    workers = min(workers or default_workers(), len(tasks))
    if workers <= 1:  # in order: every prerequisite is an earlier task
        return ((i, _on_one_thread(fn, task)) for i, task in enumerate(tasks))
    return _on_pool(fn, tasks, workers, [()] * len(tasks) if after is None else after)


def finished_before(results: Iterator[tuple[int, R]], interrupt: BaseException):
    """The results of ``execute`` that had finished when ``interrupt`` (KeyboardInterrupt,
    `validation.errors.Terminated`) reached the caller but were not handed back yet: told of the
    interrupt, a pool or a cluster hands them over and stops its workers. The caller stores
    them, then raises the interrupt again.

    >>> list(finished_before(execute(abs, [-2, 3], workers=1), KeyboardInterrupt()))
    []
    """
    try:
        item = results.throw(interrupt)
    except (KeyboardInterrupt, StopIteration):
        return
    while True:
        yield item
        try:
            item = next(results)
        except (KeyboardInterrupt, StopIteration):
            return


class _NotStarted(Exception):
    """A pool's task that found the pool stopping (`_on_pool`) and did not start."""


def _on_one_thread(fn: Callable[[T], R], task: T, stop: Path | None = None) -> R:
    """`fn(task)` with torch on one thread (the same in this process and in any worker);
    not started when the file ``stop`` exists."""
    from icl_verify.numerics import single_thread

    if stop is not None and stop.exists():
        raise _NotStarted()
    with single_thread():
        return fn(task)


def _on_pool(
    fn: Callable[[T], R], tasks: Sequence[T], workers: int, after: Sequence[Collection[int]]
) -> Iterator[tuple[int, R]]:
    todo = dict(enumerate(tasks))  # index -> task, until its result is handed back
    for _ in range(RETRIES + 1):
        pool = ProcessPoolExecutor(
            min(workers, len(todo)), mp_context=get_context("spawn"),
            initializer=worker_setup, initargs=(os.getpid(),),
        )  # fmt: skip
        # a task that raises stops the pool: none starts after it (they find the file `stop`),
        # those running finish and are handed back, then the exception is raised
        stop = Path(tempfile.mkdtemp(prefix="icl-verify-pool-")) / "stop"
        futures: dict[Future, int] = {}
        failed: Exception | None = None  # the first task that raised
        try:
            done: dict[int, R] = {}  # results not handed back yet
            pending = _submit_ready(pool, fn, todo, after, futures, stop, workers, done)
            while pending:
                finished, pending = wait(pending, return_when=FIRST_COMPLETED)
                for future in finished:
                    try:
                        done[futures[future]] = future.result()
                    except (BrokenProcessPool, _NotStarted):  # a worker died / the pool stops
                        continue
                    except Exception as error:
                        if failed is None:
                            failed = error
                            stop.touch()
                            print(f"icl-verify: a task raised {type(error).__name__}: {error}; "
                                  "the tasks running finish and are kept first (Ctrl-C stops "
                                  "them), then it is raised", file=sys.stderr)  # fmt: skip
                if failed is None:  # the free workers take new tasks before results go back
                    room = workers - len(pending)
                    pending |= _submit_ready(pool, fn, todo, after, futures, stop, room, done)
                while done:
                    index, result = done.popitem()
                    del todo[index]
                    yield index, result
        except KeyboardInterrupt:  # and Terminated: hand over what finished, stop the workers
            stop_workers(pool)
            for future, index in futures.items():
                if index in todo and future.done() and not future.cancelled():
                    if future.exception() is None:
                        del todo[index]
                        yield index, future.result()
            raise
        except BaseException:
            stop_workers(pool)
            raise
        finally:
            shutil.rmtree(stop.parent, ignore_errors=True)
        pool.shutdown(wait=True)
        if failed is not None:
            raise failed
        if not todo:
            return
    raise WorkersDiedError(
        f"a worker process died {RETRIES + 1} times ({len(todo)} of {len(tasks)} tasks "
        "unfinished; out of memory?); what finished is stored: rerun with the same --run-id "
        "to resume"
    )


def _submit_ready(
    pool: ProcessPoolExecutor,
    fn: Callable[[T], R],
    todo: dict[int, T],
    after: Sequence[Collection[int]],
    futures: dict[Future, int],
    stop: Path,
    room: int,
    done: Collection[int],
) -> set[Future]:
    """Submit to ``pool`` up to ``room`` tasks of ``todo``, the first by index of those not
    submitted yet whose prerequisites are all finished (handed back, out of ``todo``, or in
    ``done``), entered in ``futures``; the new futures. None to a broken pool (the next pool
    takes them). At most a worker's worth at a time: a task that becomes ready later still
    starts before those after it in the list, which a queue filled ahead of time would run
    first."""
    submitted = set(futures.values())
    new = set()
    for i, task in todo.items():
        if len(new) == room:
            break
        if i not in submitted and all(j not in todo or j in done for j in after[i]):
            try:
                future = pool.submit(_on_one_thread, fn, task, stop)
            except BrokenProcessPool:
                break
            futures[future] = i
            new.add(future)
    return new


def connect(scheduler: str, timeout: float = CONNECT_TIMEOUT):
    """A `distributed.Client` of the scheduler at `scheduler`; SchedulerError (one line, naming
    the address and the timeout) when none answers in `timeout` seconds."""
    from distributed import Client

    try:
        return Client(scheduler, timeout=timeout, set_as_default=False)
    except (OSError, TimeoutError, ValueError) as error:
        reason = " ".join(str(error).split())[:160] or type(error).__name__
        raise SchedulerError(
            f"--scheduler {scheduler}: no Dask scheduler answered within {timeout:g} s ({reason})"
        ) from None


def _on_dask(
    fn: Callable[[T], R], tasks: Sequence[T], scheduler: str, timeout: float
) -> Iterator[tuple[int, R]]:
    from distributed import as_completed as finished

    client = connect(scheduler, timeout)  # before the first task: fail fast, nothing written

    def results() -> Iterator[tuple[int, R]]:
        futures = {
            client.submit(_on_one_thread, fn, task, retries=RETRIES, pure=False): i
            for i, task in enumerate(tasks)
        }
        handed = set()
        try:
            for future in finished(list(futures), loop=client.loop):
                handed.add(future)
                yield futures[future], future.result()
        except KeyboardInterrupt:  # and Terminated: hand over what finished, cancel the rest
            for future, index in futures.items():
                if future not in handed and future.status == "finished":
                    yield index, future.result()
            raise
        finally:
            client.cancel(list(futures))
            client.close()

    return results()
