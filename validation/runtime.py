"""What a claim's `measure` gets from the runner: device, its own seed, the cache, progress bars.

Each claim draws its randomness from a seed derived from the run seed and the
claim id (`claim_seed`), so running one claim alone or inside the whole registry
gives the same numbers (DESIGN.md, "Randomness").
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from icl_verify.validation.cache import ArtefactCache


def claim_seed(run_seed: int, claim_id: str) -> int:
    """A 63-bit seed for one claim from the run seed and the claim id (stable across runs).

    >>> claim_seed(0, "HE-MAN") == claim_seed(0, "HE-MAN") != claim_seed(1, "HE-MAN")
    True
    """
    digest = hashlib.sha256(f"{run_seed}:{claim_id}".encode()).digest()
    return int.from_bytes(digest[:8], "little") >> 1


@dataclass(frozen=True)
class Runtime:
    """The resources of one claim's measurement.

    Attributes:
        device: torch device string, already resolved ("cpu", "cuda", "cuda:1").
        seed: this claim's seed (see `claim_seed`).
        cache: the run's artefact cache (`<out>/cache`), shared by all runs under `<out>`.
        show_progress: whether nested progress bars are drawn.
        deadline: a `time.time()` by which trainings stop (checkpointed, resumable:
            `numerics.TrainingStopped`); None: no limit (`icl-verify run --budget`).
    """

    device: str
    seed: int
    cache: ArtefactCache
    show_progress: bool = False
    deadline: float | None = None

    def rng(self, stream: str = "") -> np.random.Generator:
        """A numpy Generator for this claim; distinct `stream` names give independent streams.

        >>> import tempfile
        >>> runtime = Runtime("cpu", 7, ArtefactCache(tempfile.mkdtemp()))
        >>> float(runtime.rng("a").random()) == float(runtime.rng("a").random())
        True
        """
        return np.random.default_rng(claim_seed(self.seed, stream) if stream else self.seed)

    def cached(self, name: str, config: Mapping[str, Any], compute: Callable[[], Any]) -> Any:
        """`compute()` once per (name, config); see `ArtefactCache.cached`.

        Put everything the result depends on into `config` (sizes, seed, device when
        results depend on it): the key is the hash of the full configuration.
        """
        return self.cache.cached(name, config, compute)

    def checkpoint_dir(self, name: str, config: Mapping[str, Any]) -> Path:
        """A folder for a resumable computation (trainer checkpoints), keyed by its config."""
        return self.cache.directory(name, config)

    def progress(self, iterable: Iterable, description: str, total: int | None = None) -> Iterable:
        """`iterable` in a nested tqdm bar (below the runner's bar) when progress is shown."""
        if not self.show_progress:
            return iterable
        from tqdm.auto import tqdm

        return tqdm(iterable, desc=description, total=total, position=1, leave=False)
