"""What a claim's `measure` gets from the runner: device, its own seed, the cache, progress bars.

Each claim draws its randomness from a seed derived from the run seed and the
claim id (`derived_seed`), so running one claim alone or inside the whole registry
gives the same numbers (DESIGN.md, "Randomness"); its named streams come from
`Runtime.seed_for` and `Runtime.rng`.
"""

from __future__ import annotations

import dataclasses
import hashlib
import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from icl_verify.validation.cache import ArtefactCache


def derived_seed(seed: int, name: str) -> int:
    """The one seed derivation of the toolkit: a 63-bit seed of the stream ``name`` of
    ``seed`` (SHA-256 of both), independent across names. A claim's seed is that of its id
    under the run's seed; a claim's named streams are those of their names under the claim's
    seed (`Runtime.seed_for`); a seed fixed by the setting (a ``train_seed`` parameter) gives
    named streams the same way.

    >>> derived_seed(0, "HE-MAN") == derived_seed(0, "HE-MAN") != derived_seed(1, "HE-MAN")
    True
    """
    digest = hashlib.sha256(f"{seed}:{name}".encode()).digest()
    return int.from_bytes(digest[:8], "little") >> 1


@dataclass(frozen=True)
class Runtime:
    """The resources of one claim's measurement.

    Attributes:
        device: torch device string, already resolved ("cpu", "cuda", "cuda:1").
        seed: this claim's seed (see `derived_seed`).
        cache: the run's artefact cache (`<out>/cache`), shared by all runs under `<out>`.
        show_progress: whether nested progress bars are drawn.
        deadline: a `time.time()` by which trainings stop (checkpointed, resumable:
            `numerics.TrainingStopped`); None: no limit (`icl-verify run --budget`).
        draw_on_cpu: the measurement runs inside `numerics.draw_on_cpu` (`validation.runner`
            enters it): on CUDA it draws the CPU's random stream, the CPU run's prompts
            (`tests/validation/test_cuda_claims.py`). Its cache keys then say so; by default
            they are as they were.
    """

    device: str
    seed: int
    cache: ArtefactCache
    show_progress: bool = False
    deadline: float | None = None
    draw_on_cpu: bool = False

    def rng(self, stream: str = "") -> np.random.Generator:
        """A numpy Generator for this claim; distinct `stream` names give independent streams.

        >>> import tempfile
        >>> runtime = Runtime("cpu", 7, ArtefactCache(tempfile.mkdtemp()))
        >>> float(runtime.rng("a").random()) == float(runtime.rng("a").random())
        True
        """
        return np.random.default_rng(derived_seed(self.seed, stream) if stream else self.seed)

    def seed_for(self, stream: str) -> int:
        """A 63-bit seed of this claim's named ``stream`` (`derived_seed` of the claim's seed and
        the name): what a claim hands a numerics function that draws; distinct names give
        independent streams, the same name the same numbers.

        >>> import tempfile
        >>> runtime = Runtime("cpu", 7, ArtefactCache(tempfile.mkdtemp()))
        >>> runtime.seed_for("prompts") == runtime.seed_for("prompts") != runtime.seed_for("x")
        True
        """
        return derived_seed(self.seed, stream)

    def trained(self, spec):
        """The artefact of ``spec`` (a training: `numerics.EnsembleTraining`, `EncoderTraining`,
        `PrunedTraining`, `TwoHeadTraining`, `TrueLossTraining`): loaded from the cache, or
        made (resuming from its checkpoint folder) and stored; its inputs (``spec.inputs()``,
        e.g. the encoders a pruning fine-tunes) first, the same way. The key is the spec's
        fields and the device (float32 results differ across devices), with the code's
        version (`ArtefactCache`); a training stops at ``deadline`` (`TrainingStopped`).

        >>> import tempfile
        >>> from icl_verify.numerics import EnsembleTraining
        >>> runtime = Runtime("cpu", 0, ArtefactCache(tempfile.mkdtemp()))
        >>> spec = EnsembleTraining(d=2, L=8, sigma2=0.1, heads=(1, 2), lr=3e-3, steps=24,
        ...     batch=16, seed=0, log_every=2, checkpoint_every=12, validation_batch=64)
        >>> runtime.trained(spec).omega.shape
        (12, 2, 2)
        >>> runtime.trained(spec).steps[-2:].tolist()  # loaded from the cache
        [22, 24]
        """
        from icl_verify.numerics import ForeignCheckpointError

        inputs = tuple(self.trained(s) for s in getattr(spec, "inputs", tuple)())
        key = self.key({**dataclasses.asdict(spec), "device": self.device})
        folder = self.checkpoint_dir(spec.ARTEFACT, key)

        def make() -> dict:
            try:
                artefact = spec.make(self.device, folder, self.show_progress, self.deadline, inputs)
            except ForeignCheckpointError as error:  # a checkpoint of another entry: not ours
                print(f"icl-verify: warning: cache entry {folder.name}: {error}; training from "
                      "step 0", file=sys.stderr)  # fmt: skip
                for checkpoint in folder.glob("*.pt*"):
                    checkpoint.unlink(missing_ok=True)
                artefact = spec.make(self.device, folder, self.show_progress, self.deadline, inputs)
            return artefact.arrays()

        return spec.load(self.cached(spec.ARTEFACT, key, make))

    def cached(self, name: str, config: Mapping[str, Any], compute: Callable[[], Any]) -> Any:
        """`compute()` once per (name, config); see `ArtefactCache.cached`.

        Put everything the result depends on into `config` (sizes, seed, device when
        results depend on it): the key is the hash of the full configuration (`key`).
        """
        return self.cache.cached(name, self.key(config), compute)

    def checkpoint_dir(self, name: str, config: Mapping[str, Any]) -> Path:
        """A folder for a resumable computation (trainer checkpoints), keyed by its config."""
        return self.cache.directory(name, self.key(config))

    def key(self, config: Mapping[str, Any]) -> Mapping[str, Any]:
        """The cache configuration of `config` under this runtime: `config` itself, or with
        ``draws: "cpu"`` added under `draw_on_cpu` (on CUDA another random stream).

        >>> import tempfile
        >>> cache = ArtefactCache(tempfile.mkdtemp())
        >>> Runtime("cuda", 0, cache).key({"d": 5})
        {'d': 5}
        >>> Runtime("cuda", 0, cache, draw_on_cpu=True).key({"d": 5})
        {'d': 5, 'draws': 'cpu'}
        """
        return {**config, "draws": "cpu"} if self.draw_on_cpu else config

    def progress(self, iterable: Iterable, description: str, total: int | None = None) -> Iterable:
        """`iterable` in a nested tqdm bar (below the runner's bar) when progress is shown."""
        if not self.show_progress:
            return iterable
        from tqdm.auto import tqdm

        return tqdm(iterable, desc=description, total=total, position=1, leave=False)
