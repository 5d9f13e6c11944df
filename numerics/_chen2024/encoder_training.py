"""The trained encoders of Chen, Zhao, Zou (2024) §3 and App. B that CZZ-HEADS, -IMPORTANCE,
-PRUNE and -PPROBE read.

One `EncoderTraining` is one number of heads h: an ensemble of encoders (`numerics._core.encoder`)
trained in one optimizer step by `numerics.train`, one member per (replicate, noise
level): the paper trains one model per sigma in {0, 0.1, 0.2, 0.4, 0.8} (reference §2.1);
``replicates`` > 1 adds independent init seeds and data streams per sigma, so how often a single
model shows a pattern can be counted. Member ``r * len(sigmas) + k`` has noise ``sigmas[k]``
and init seed ``seed + r * len(sigmas) + k``. Prompts: d, s, n examples and q queries per
prompt, x ~ N(0, I), w* ~ N(0, I) on a random support of size s; the loss is the squared error
at the q query positions; Adam with a constant rate (the paper: lr 1e-4, batch 64, 320k steps).

`fine_tune_pruned` keeps every head of layer 1 and, in each later layer, the head of largest
importance of each member's own W (3.1) (reference §2.4 and §7.5: the sorted average loses
head identity, so each model's own W picks its head), then trains on with the same recipe.

`TrainedEncoders.arrays` / `TrainedEncoders.from_arrays` turn a result into plain numpy arrays
and back, so a caller can store it.

App. G (reference §2.7) trains through the same class: ``architecture="decoder"`` trains the
GPT-2-style decoder (`numerics._core.decoder`) on interleaved prompts, its loss (G.1) at the q
positions after the first n = k - 1 examples; ``zeta`` > 0 draws x ~ N(0, I + zeta 11^T).

Precision (`numerics._core.encoder`): ``training.with_precision(p)`` trains the model's matrix
products in TF32 or bf16 (a `MixedPrecisionTraining`, whose field ``precision`` is in its cache
key); an `EncoderTraining` trains in float32 and has no such field, so its key
(`dataclasses.asdict`) is what it was before the option existed. The trained models are evaluated in
float32 (`TrainedEncoders.model`): the option speeds up training, the measurements read its weights.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

import numpy as np
import torch
from icl_verify.numerics._core.data import SparsePrompts
from icl_verify.numerics._core.decoder import Decoder, DecoderConfig
from icl_verify.numerics._core.encoder import (
    Encoder,
    EncoderConfig,
    check_precision,
    with_precision,
)
from icl_verify.numerics._core.trainer import (
    TOKEN_LAYOUTS,
    SparseRegressionTask,
    TrainConfig,
    train,
)

from icl_verify.covariance import equicorrelated_covariance

# The flat exports (numerics/__init__.pyi); `MixedPrecisionTraining` is made by with_precision.
__all__ = [
    "EncoderTraining",
    "PrunedTraining",
    "TrainedEncoders",
    "fine_tune_pruned",
    "pruned_heads",
    "train_encoders",
]


@dataclass(frozen=True, kw_only=True)
class EncoderTraining:
    """What is trained and how (its fields are a complete cache key, with the device).

    The paper (reference §2.1): d = 16, s = 4, n = 12, q = 4, d_hid = 256, h in {1, 2, 4, 8},
    layers in {3, ..., 6}, sigmas (0, 0.1, 0.2, 0.4, 0.8), lr 1e-4, batch 64, 320k steps.

    >>> t = EncoderTraining(d_hid=16, heads=2, layers=2, sigmas=(0.0, 0.1), replicates=2,
    ...                     lr=1e-3, steps=10, batch=8)
    >>> t.member_sigmas
    (0.0, 0.1, 0.0, 0.1)
    """

    d: int = 16  # covariate dimension
    s: int = 4  # support size of w*
    n: int = 12  # labelled examples per training prompt
    q: int = 4  # queries per training prompt
    d_hid: int  # hidden width
    heads: int  # h
    layers: int  # encoder blocks
    mask_queries: bool = False  # the mask M of (2.2) (the paper does not say; reference §7.7)
    architecture: str = "encoder"  # "encoder" (§3) or "decoder" (App. G)
    zeta: float = 0.0  # x ~ N(0, I + zeta 11^T) (App. G); 0: isotropic
    sigmas: tuple[float, ...]  # noise standard deviations, one member each per replicate
    replicates: int = 1  # independent models per sigma
    lr: float  # Adam learning rate
    steps: int  # Adam steps
    batch: int  # fresh prompts per member per step
    seed: int = 0  # init seed of member 0; member e: seed + e (its data stream derived from it)
    log_every: int = 100  # validation loss logged every this many steps
    checkpoint_every: int = 0  # checkpoint every this many steps (0: only at the end)
    validation_batch: int = 256  # fixed validation prompts per member

    # its cache name, and the version of the code making it: bump it when a change can alter
    # what `make` returns (`validation.cache.producers`; tests/validation/test_cache_versions.py)
    ARTEFACT: ClassVar[str] = "trained-encoders"
    ARTEFACT_VERSION: ClassVar[int] = 1
    precision: ClassVar[str] = "float32"  # no field: `MixedPrecisionTraining`'s (tf32, bf16)

    def with_precision(self, precision: str) -> EncoderTraining:
        """This training with the model's matrix products in ``precision``: float32 an
        `EncoderTraining`, tf32 or bf16 a `MixedPrecisionTraining` (its own cache key).

        >>> t = EncoderTraining(d_hid=16, heads=2, layers=2, sigmas=(0.0,), lr=1e-3, steps=10,
        ...                     batch=8)
        >>> t.with_precision("bf16").model_config().precision
        'bf16'
        >>> t.with_precision("bf16").with_precision("float32") == t
        True
        """
        return with_precision(self, precision, EncoderTraining, MixedPrecisionTraining)

    def make(self, device="cpu", checkpoint_dir=None, progress=False, deadline=None, inputs=()):
        """`train_encoders` of this training (the artefact protocol of `validation.Runtime`)."""
        return train_encoders(self, device, checkpoint_dir, progress, deadline=deadline)

    def load(self, arrays: Mapping[str, np.ndarray]) -> TrainedEncoders:
        """The trained encoders stored as ``arrays`` (`TrainedEncoders.arrays`)."""
        return TrainedEncoders.from_arrays(self, arrays)

    @property
    def member_sigmas(self) -> tuple[float, ...]:
        return tuple(float(s) for s in self.sigmas) * self.replicates

    def model_config(self) -> EncoderConfig | DecoderConfig:
        E = len(self.member_sigmas)
        if self.architecture == "decoder":  # positions: the training prompt's 2 (n + q) tokens
            config = DecoderConfig(d=self.d, d_hid=self.d_hid, heads=self.heads,
                                   layers=self.layers, positions=2 * (self.n + self.q),
                                   ensemble=E)  # fmt: skip
        else:
            config = EncoderConfig(
                d=self.d, d_hid=self.d_hid, heads=self.heads, layers=self.layers,
                mask_queries=self.mask_queries, ensemble=E,
            )  # fmt: skip
        return config.with_precision(self.precision)

    def tasks(self) -> tuple[SparseRegressionTask, ...]:
        return tuple(
            SparseRegressionTask(self.d, self.n, self.q, self.s, sigma, self.zeta,
                                 self.architecture)  # fmt: skip
            for sigma in self.member_sigmas
        )

    def tokens(self, prompts: SparsePrompts) -> torch.Tensor:
        """``prompts`` laid out for this training's model
        (`numerics._core.trainer.TOKEN_LAYOUTS`)."""
        return TOKEN_LAYOUTS[self.architecture](prompts)

    def covariance(self) -> torch.Tensor | None:
        """The covariates' covariance I + zeta 11^T (float64), None when isotropic."""
        if not self.zeta:
            return None
        return torch.as_tensor(equicorrelated_covariance(self.d, self.zeta))

    def train_config(self, device: str, steps: int | None = None) -> TrainConfig:
        return TrainConfig(
            lr=self.lr, batch=self.batch, steps=self.steps if steps is None else steps,
            seed=self.seed, validation_batch=self.validation_batch, device=device,
            log_every=self.log_every, checkpoint_every=self.checkpoint_every,
        )  # fmt: skip


@dataclass(frozen=True, kw_only=True)
class MixedPrecisionTraining(EncoderTraining):
    """An `EncoderTraining` whose model computes its matrix products in TF32 or bf16 (float32
    weights, Adam state and loss; `numerics._core.encoder`). Made by ``training.with_precision(p)``.

    >>> t = EncoderTraining(d_hid=16, heads=2, layers=2, sigmas=(0.0,), lr=1e-3, steps=10,
    ...                     batch=8).with_precision("tf32")
    >>> type(t).__name__, t.precision
    ('MixedPrecisionTraining', 'tf32')
    """

    precision: str = field(kw_only=True)  # "tf32" | "bf16" (float32: the plain EncoderTraining)

    def __post_init__(self) -> None:
        check_precision(self.precision)


@dataclass(frozen=True)
class TrainedEncoders:
    """An `EncoderTraining`'s trained ensemble: its final state and its validation history.

    Attributes:
        training: what was trained.
        state: name -> numpy array, the encoder's ``state_dict`` (float32 as trained, the
            pruning mask ``kept`` included).
        steps: (n_logs,) logged steps; test_loss: (n_logs, E) loss on each member's fixed
            validation prompts (mean over its q queries).
        train_seconds: wall-clock seconds the training took (all its resumed parts; NaN when
            it was stored before this was recorded).
    """

    training: EncoderTraining
    state: Mapping[str, np.ndarray]
    steps: np.ndarray
    test_loss: np.ndarray
    train_seconds: float = math.nan

    def model(self, device: str = "cpu", dtype: torch.dtype = torch.float32) -> Encoder | Decoder:
        """The trained ensemble as an `Encoder` (or `Decoder`), member e at index e, computing
        in float32 whatever the training's precision."""
        config = self.training.model_config().with_precision("float32")
        model = config.build([self.training.seed + e for e in range(config.ensemble)])
        model.load_state_dict({k: torch.from_numpy(np.asarray(v)) for k, v in self.state.items()})
        return model.to(device=device, dtype=dtype)

    def arrays(self) -> dict[str, np.ndarray]:
        return {
            **{f"state.{k}": np.asarray(v) for k, v in self.state.items()},
            "steps": self.steps,
            "test_loss": self.test_loss,
            "train_seconds": np.asarray(self.train_seconds),
        }

    @classmethod
    def from_arrays(cls, training: EncoderTraining, arrays: Mapping[str, np.ndarray]):
        state = {k[len("state.") :]: v for k, v in arrays.items() if k.startswith("state.")}
        seconds = float(arrays.get("train_seconds", math.nan))
        return cls(training, state, np.asarray(arrays["steps"]), np.asarray(arrays["test_loss"]),
                   seconds)  # fmt: skip


def _train(
    training: EncoderTraining,
    config: TrainConfig,
    checkpoint_dir,
    progress: bool,
    initial=None,
    deadline: float | None = None,
) -> TrainedEncoders:
    """`numerics.train` on ``training``'s members with ``config``, resumable from
    ``checkpoint_dir/checkpoint.pt`` when a folder is given."""
    folder = Path(checkpoint_dir) if checkpoint_dir is not None else None
    result = train(
        training.model_config(), training.tasks(), config, initial=initial,
        checkpoint_path=folder / "checkpoint.pt" if folder else None, resume=folder is not None,
        progress=progress, progress_position=1, deadline=deadline,
    )  # fmt: skip
    state = {k: v.detach().cpu().numpy() for k, v in result.model.state_dict().items()}
    history = result.history
    return TrainedEncoders(training, state, history.steps, history.test_loss, history.seconds)


def train_encoders(
    training: EncoderTraining,
    device: str = "cpu",
    checkpoint_dir: str | Path | None = None,
    progress: bool = False,
    workers: int = 1,
    deadline: float | None = None,
) -> TrainedEncoders:
    """Train the encoders of ``training`` (or resume them from ``checkpoint_dir``, whose
    ``checkpoint.pt`` the trainer writes every ``checkpoint_every`` steps); ``workers``
    processes train slices of the members side by side (the same result). ``deadline``: see
    `numerics.train`.

    >>> t = EncoderTraining(d=4, s=2, n=6, q=2, d_hid=8, heads=2, layers=2, sigmas=(0.1,),
    ...                     lr=1e-3, steps=20, batch=8, log_every=10, validation_batch=16)
    >>> trained = train_encoders(t)
    >>> trained.test_loss.shape, trained.state["kept"].shape
    ((2, 1), (1, 2, 2))
    """
    config = dataclasses.replace(training.train_config(device), workers=workers)
    return _train(training, config, checkpoint_dir, progress, deadline=deadline)


@dataclass(frozen=True)
class PrunedTraining:
    """The fine-tuning of `fine_tune_pruned`: ``training``'s encoders pruned to the heads
    ``kept`` ((E, layers, h) of 0 and 1, as nested tuples), then ``steps`` more Adam steps.
    Its input is the trained encoders of ``training``."""

    training: EncoderTraining
    kept: tuple
    steps: int

    # its cache name, and the version of the code making it: bump it when a change can alter
    # what `make` returns (`validation.cache.producers`; tests/validation/test_cache_versions.py)
    ARTEFACT: ClassVar[str] = "pruned-encoders"
    ARTEFACT_VERSION: ClassVar[int] = 1

    def inputs(self) -> tuple[EncoderTraining]:
        return (self.training,)

    def make(self, device="cpu", checkpoint_dir=None, progress=False, deadline=None, inputs=()):
        """`fine_tune_pruned` of the trained encoders ``inputs[0]`` of ``training``."""
        (trained,) = inputs
        return fine_tune_pruned(trained, np.asarray(self.kept), self.steps, device,
                                checkpoint_dir, progress, deadline)  # fmt: skip

    def load(self, arrays: Mapping[str, np.ndarray]) -> TrainedEncoders:
        return TrainedEncoders.from_arrays(self.training, arrays)


def pruned_heads(weights: np.ndarray) -> np.ndarray:
    """The pruning mask (E, layers, h) of reference §2.4: layer 1 keeps every head; each later
    layer keeps the one head of largest normalised importance W (3.1) in its member's own row
    (``weights`` (E, layers, h), `numerics.head_importance`).

    >>> W = np.array([[[0.5, 0.5], [0.2, 0.8], [0.9, 0.1]]])
    >>> pruned_heads(W)[0].tolist()
    [[1.0, 1.0], [0.0, 1.0], [1.0, 0.0]]
    """
    kept = np.zeros(weights.shape)
    kept[:, 0] = 1.0
    best = np.nan_to_num(weights[:, 1:], nan=-np.inf).argmax(axis=-1)  # (E, layers - 1)
    np.put_along_axis(kept[:, 1:], best[..., None], 1.0, axis=-1)
    return kept


def fine_tune_pruned(
    trained: TrainedEncoders,
    kept: np.ndarray,
    steps: int,
    device: str = "cpu",
    checkpoint_dir: str | Path | None = None,
    progress: bool = False,
    deadline: float | None = None,
) -> TrainedEncoders:
    """Prune ``trained`` to the heads ``kept`` (E, layers, h) (`pruned_heads`) and train on for
    ``steps`` Adam steps with its recipe (a fresh optimizer; the paper: 60k steps, §2.4).

    The data streams continue from new seeds (``seed`` + 1,000,003), so fine-tuning never
    replays the prompts of the training.

    >>> t = EncoderTraining(d=4, s=2, n=6, q=2, d_hid=8, heads=2, layers=2, sigmas=(0.1,),
    ...                     lr=1e-3, steps=20, batch=8, log_every=10, validation_batch=16)
    >>> tuned = fine_tune_pruned(train_encoders(t), np.array([[[1, 1], [0, 1]]]), steps=10)
    >>> tuned.state["kept"].tolist()
    [[[1.0, 1.0], [0.0, 1.0]]]
    """
    training = trained.training
    kept = np.asarray(kept, dtype=np.float32)
    if kept.shape != trained.state["kept"].shape or not np.isin(kept, (0.0, 1.0)).all():
        raise ValueError(
            f"kept must be 0/1 of shape {trained.state['kept'].shape}, got shape {kept.shape}"
        )
    initial = {k: torch.from_numpy(np.asarray(v)) for k, v in trained.state.items()}
    initial["kept"] = torch.from_numpy(kept)
    config = training.train_config(device, steps=steps)
    config = dataclasses.replace(config, seed=config.seed + 1_000_003)
    return _train(training, config, checkpoint_dir, progress, initial, deadline)
