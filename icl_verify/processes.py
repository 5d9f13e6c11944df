"""Worker processes that never outlive their parent nor catch its Ctrl-C (every pool here).

`worker_setup` is the initialiser of every worker process the toolkit starts (the claims'
pool, the trainer's slices): SIGINT is the parent's to handle (a Ctrl-C reaches the whole
process group: one line from the parent, not a traceback per worker), and the worker ends when
its parent does, even when the parent was killed (-9). `stop_workers` ends a pool's workers at
once, for an interrupt that must not wait for their tasks.
"""

from __future__ import annotations

import os
from concurrent.futures import ProcessPoolExecutor

__all__ = ["stop_workers", "worker_setup"]


def worker_setup(parent: int) -> None:
    """Initialiser of a worker process of the parent ``parent`` (its pid): SIGINT ignored, no
    semaphore left behind when it is stopped, and the end of the worker when its parent ends:
    at once where the kernel offers it (Linux's parent-death signal), else within half a
    second (a thread watching the parent's pid).

    Example (in a pool's every worker)::

        ProcessPoolExecutor(2, initializer=worker_setup, initargs=(os.getpid(),))
    """
    import ctypes
    import signal
    import threading
    import time

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # A worker draws no progress bar: tqdm's lock between processes (a named semaphore, which
    # a stopped worker would leave to the resource tracker's warning) is one of this process.
    from tqdm import tqdm

    tqdm.set_lock(threading.RLock())
    try:
        ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(1)

    threading.Thread(target=watch, daemon=True).start()


def stop_workers(pool: ProcessPoolExecutor) -> None:
    """End a pool's worker processes now (an interrupt must not wait for their tasks) and shut
    it down."""
    for process in list(getattr(pool, "_processes", {}).values()):  # CPython's own table
        process.terminate()
    pool.shutdown(wait=True, cancel_futures=True)  # ended workers are joined at once
