"""Run torch on one CPU thread (a context manager), restoring the previous count.

The Monte Carlo claims evaluate many small tensors (a few thousand prompts of length <= 640,
d <= 40); on the 2-core CPU, under load, two torch threads were measured 2-3x SLOWER than
one for them (HE-T4.2i quick: 68 s with the default threads, 22 s with one).

Every claim runs inside it (`validation.executors`, the one place of this policy); torch is
imported when the body runs, not when this module is imported.
"""

from __future__ import annotations

from contextlib import contextmanager

__all__ = ["single_thread"]


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
