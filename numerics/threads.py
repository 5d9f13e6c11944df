"""Run torch on one CPU thread (context manager / decorator), restoring the previous count.

The Monte Carlo claims evaluate many small tensors (a few thousand prompts of length <= 640,
d <= 40); on the 2-core CPU, under load, two torch threads were measured 2-3x SLOWER than
one for them (HE-T4.2i quick: 68 s with the default threads, 22 s with one).

Torch is imported when the body runs, not when this module is imported, so a claim module
may decorate with ``numerics.on_one_thread`` at import time without loading torch.
"""

from __future__ import annotations

import functools
from contextlib import contextmanager


@contextmanager
def single_thread():
    """Run the body with ``torch.set_num_threads(1)``; restore the thread count afterwards.

    >>> import torch
    >>> before = torch.get_num_threads()
    >>> with single_thread():
    ...     torch.get_num_threads()
    1
    >>> torch.get_num_threads() == before
    True
    """
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


def on_one_thread(function):
    """Decorator: call `function` inside `single_thread` (e.g. a claim's ``measure``).

    >>> import torch
    >>> on_one_thread(torch.get_num_threads)()
    1
    """

    @functools.wraps(function)
    def wrapped(*args, **kwargs):
        with single_thread():
            return function(*args, **kwargs)

    return wrapped
