"""What a setting may ask of the machine: the stated caps of every size, and its memory.

Every number a user can set has an upper limit (`validation.params` applies them to every
field that states no tighter one), so that a typo (``--set d=1e30``, ``steps=1e30``) is refused
in one line before any work and a huge number never reaches numpy or torch as an overflow:

- `MAX_COUNT`: counts (prompts, steps, members, seeds, grid points): 1e9; a run of 1e9 Adam
  steps at the GPU's 140 us per step would take 39 hours;
- `MAX_DIMENSION`: covariate, token and hidden dimensions: 1e4;
- `MAX_PROMPT_LENGTH`: in-context examples per prompt, training or test: 1e5;
- `MAX_VALUE`: any other real number (variances, scales, flow times): 1e12.

Within them, what a setting allocates is estimated from the shapes it implies
(`validation.params.Params.footprint`) and held against the memory this machine has available
(`available_memory`), also before any work.
"""

from __future__ import annotations

import os

__all__ = [
    "MAX_COUNT",
    "MAX_DIMENSION",
    "MAX_PROMPT_LENGTH",
    "MAX_VALUE",
    "MONTE_CARLO_BLOCK",
    "available_memory",
    "gib",
]

MAX_COUNT = 10**9
MAX_DIMENSION = 10_000
MAX_PROMPT_LENGTH = 100_000
MAX_VALUE = 1e12
#: Prompts per independently seeded block of a Monte Carlo (`numerics._core.montecarlo`): the most
#: prompts a Monte Carlo holds at once.
MONTE_CARLO_BLOCK = 4096


def available_memory() -> int:
    """Bytes of memory available to a new allocation on this machine: ``MemAvailable`` of
    /proc/meminfo on Linux, else the free physical pages; 8 GiB when neither is known.

    >>> available_memory() > 0
    True
    """
    try:
        with open("/proc/meminfo") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_AVPHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 8 * 2**30


def gib(size: float) -> str:
    """Bytes as GiB in words.

    >>> gib(3 * 2**30)
    '3 GiB'
    """
    return f"{size / 2**30:.3g} GiB"
