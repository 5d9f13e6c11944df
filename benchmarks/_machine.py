"""What a benchmark ran on, for the ``meta`` of its JSON: versions, machine, cores."""

from __future__ import annotations

import os
import platform


def machine() -> dict:
    """Python and torch versions, the architecture, the cores (all, and usable by this process).

    >>> sorted(machine())
    ['affinity', 'cpu_count', 'machine', 'python', 'torch']
    """
    import torch

    return {
        "torch": torch.__version__,
        "python": platform.python_version(),
        "machine": platform.machine(),
        "cpu_count": os.cpu_count(),
        "affinity": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
    }
