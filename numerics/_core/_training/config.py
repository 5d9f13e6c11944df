"""What a training run is given (`TrainConfig`) and what it gives back (`TrainResult`, its
`TrainHistory`, grown from the run's records), and the errors that end a run early."""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, field

import numpy as np
import torch
from icl_verify.numerics._core.decoder import Decoder, DecoderConfig
from icl_verify.numerics._core.encoder import Encoder, EncoderConfig
from icl_verify.numerics._core.models import AttentionConfig, MultiHeadAttention

from icl_verify.devices import DEVICE_PATTERN, resolve_device

ModelConfig = AttentionConfig | EncoderConfig | DecoderConfig


@dataclass(frozen=True)
class TrainConfig:
    """Optimisation, data and bookkeeping of one training run (defaults: reference §0.5)."""

    optimizer: str = "adam"  # "adam" | "adamw" | "sgd"
    lr: float = 1e-3  # the authors' Adam learning rate
    betas: tuple[float, float] = (0.9, 0.999)  # Adam/AdamW moment decay rates
    weight_decay: float = 0.0  # the authors use none
    momentum: float = 0.0  # SGD's heavy-ball momentum (Adam/AdamW: must stay 0)
    batch: int = 256  # prompts per member per step (the released runs)
    steps: int = 10_000  # optimizer steps (the paper: 500k)
    seed: int = 0  # member e: init seed seed + e, its own data stream derived from it
    validation_batch: int = 4096  # fixed validation prompts per member
    validation_seed: int = 12345  # same validation prompts for members with the same task
    device: str = "auto"  # "auto" (CUDA when present) | "cpu" | "cuda" | "cuda:N"
    dtype: str = "float32"  # "float32" | "float64"
    log_every: int = 100  # history every this many steps (and at the last step)
    checkpoint_every: int = 0  # checkpoint every this many steps; 0 = only at the end
    data_streams: str = "member"  # "member": one generator per member (solo-equivalent);
    #                                "shared": one generator draws all members' data (faster)
    compile: bool = False  # torch.compile the loss (CUDA mostly)
    # Processes training contiguous slices of the members side by side (spawned, one torch thread
    # each; needs data_streams="member" and no callback); the result equals workers=1's member
    # for member, so it is not part of a checkpoint's fingerprint (repr=False). Default 1: the
    # presets' ensembles draw shared streams and record circuits through a callback, and the
    # claims themselves already run one per core.
    workers: int = field(default=1, repr=False)
    # On CUDA: capture the whole step (sampling, forward, backward, Adam) once as a CUDA graph
    # and replay it; False runs the same step as plain launches (the fallback). Both give the
    # same numbers, so it is not part of a checkpoint's fingerprint (repr=False).
    cuda_graph: bool = field(default=True, repr=False)

    def __post_init__(self) -> None:
        for name in ("batch", "steps", "validation_batch", "log_every", "workers"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
                raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
        if not isinstance(self.device, str) or not DEVICE_PATTERN.fullmatch(self.device):
            raise ValueError(f"device must be auto, cpu, cuda or cuda:N, got {self.device!r}")
        for name, allowed in (
            ("optimizer", ("adam", "adamw", "sgd")),
            ("dtype", ("float32", "float64")),
            ("data_streams", ("member", "shared")),
        ):
            if getattr(self, name) not in allowed:
                raise ValueError(f"{name} must be one of {allowed}, got {getattr(self, name)!r}")
        if not (math.isfinite(self.lr) and self.lr > 0):
            raise ValueError(f"lr must be a finite number > 0, got {self.lr!r}")
        if not (math.isfinite(self.momentum) and 0 <= self.momentum < 1):
            raise ValueError(f"momentum must be a number in [0, 1), got {self.momentum!r}")
        if self.momentum and self.optimizer != "sgd":
            raise ValueError(f"momentum is SGD's; {self.optimizer} takes betas, got momentum "
                             f"{self.momentum!r}")  # fmt: skip
        if not (math.isfinite(self.weight_decay) and self.weight_decay >= 0):
            raise ValueError(
                f"weight_decay must be a finite number >= 0, got {self.weight_decay!r}"
            )
        if len(self.betas) != 2 or not all(0 <= b < 1 for b in self.betas):
            raise ValueError(f"betas must be two numbers in [0, 1), got {self.betas!r}")
        if self.checkpoint_every < 0:
            raise ValueError(
                f"checkpoint_every must be an integer >= 0, got {self.checkpoint_every!r}"
            )


def torch_device(device: str) -> torch.device:
    """The torch device of a device name (`icl_verify.devices.resolve_device`).

    >>> torch_device("cpu")
    device(type='cpu')
    """
    return torch.device(resolve_device(device))


def logged_heads(model_config: ModelConfig) -> int | None:
    """The head axis of omega/mu and of padded member slices: H for one-layer attention; None
    for the encoder (no omega/mu: those read a one-layer model; every member has all heads).

    >>> logged_heads(AttentionConfig(d=3, heads=(1, 3), ensemble=2)), logged_heads(EncoderConfig())
    (3, None)
    """
    return model_config.max_heads if isinstance(model_config, AttentionConfig) else None


# ---------------------------------------------------------------------------------------------
# what a run gives back: its history, grown from its records


@dataclass(frozen=True)
class TrainHistory:
    """Logged every ``log_every`` steps: ``n`` records, E members, H heads (numpy, float64).

    Attributes:
        steps: (n,) step numbers (1-based; step k = after k optimizer updates).
        train_loss: (n, E) mean training loss over the steps since the previous record.
        test_loss: (n, E) loss on the member's fixed validation prompts.
        omega, mu: (n, E, H) effective head scales (`numerics.omega_mu`; single-label
            tasks; NaN for multi-task models, whose heads have K output weights).
        KQ, OV: (n, E, H, D, D) the circuits of one-layer attention (float32); (n, E, 0, 0, 0)
            for the encoder.
        seconds: wall-clock seconds spent training, summed over every resumed part of the run.
    """

    steps: np.ndarray
    train_loss: np.ndarray
    test_loss: np.ndarray
    omega: np.ndarray
    mu: np.ndarray
    KQ: np.ndarray
    OV: np.ndarray
    seconds: float


# A run's records, the history as it grows (and as a checkpoint holds it): per key, one entry
# per log, each the E members' values as lists ("steps": the step; "train", "test": (E,);
# "omega", "mu": (E, H)) or float32 arrays ("KQ", "OV": (E, H, D, D)).
RECORD_KEYS = ("steps", "train", "test", "omega", "mu", "KQ", "OV")


def history(records: dict[str, list], E: int, H: int, seconds: float) -> TrainHistory:
    """The history of a run's (or a checkpoint's) records: lists of per-record member values.

    >>> empty = history({key: [] for key in RECORD_KEYS}, E=2, H=3, seconds=0.0)
    >>> empty.test_loss.shape, empty.omega.shape, empty.KQ.shape
    ((0, 2), (0, 2, 3), (0, 2, 0, 0, 0))
    """
    n = len(records["steps"])
    circuits = {
        key: np.stack(records[key]) if n else np.zeros((0, E, 0, 0, 0), dtype=np.float32)
        for key in ("KQ", "OV")
    }
    return TrainHistory(
        steps=np.asarray(records["steps"], dtype=np.int64),  # (n,)
        train_loss=np.asarray(records["train"], dtype=np.float64).reshape(n, E),
        test_loss=np.asarray(records["test"], dtype=np.float64).reshape(n, E),
        omega=np.asarray(records["omega"], dtype=np.float64).reshape(n, E, H),
        mu=np.asarray(records["mu"], dtype=np.float64).reshape(n, E, H),
        KQ=circuits["KQ"],  # (n, E, H, D, D) float32
        OV=circuits["OV"],
        seconds=float(seconds),
    )


@dataclass(frozen=True)
class TrainResult:
    """A trained ensemble and its history; ``cuda_graph``: whether its steps after the warm-up
    ran as a replayed CUDA graph (False on the CPU, with ``cuda_graph=False``, or when the
    capture failed and the plain launches went on)."""

    model: MultiHeadAttention | Encoder | Decoder
    history: TrainHistory
    cuda_graph: bool = False


# ---------------------------------------------------------------------------------------------
# the errors that end a run early


class TrainingDivergedError(RuntimeError):
    """The training loss became NaN or infinite."""


class ForeignCheckpointError(ValueError):
    """The checkpoint to resume from is another run's (its fingerprint differs): not resumed,
    and not overwritten."""


class TrainingStopped(RuntimeError):
    """Training reached its deadline; the checkpoint of the last step taken was written, and a
    run with ``resume=True`` continues from it."""

    def __init__(self, message: str, step: int) -> None:
        super().__init__(message)
        self.step = step
