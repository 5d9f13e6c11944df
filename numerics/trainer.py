"""Online training of an ensemble of attention models on fresh in-context regression prompts.

Three architectures train here, each from its config (``config.build(seeds)``): the one-layer
attention of He et al. (`numerics.models.MultiHeadAttention`, `AttentionConfig`) on linear
regression prompts, and the multi-layer encoder of Chen et al. (`numerics.encoder.Encoder`,
`EncoderConfig`) and their App. G decoder (`numerics.decoder.Decoder`, `DecoderConfig`) on
sparse-regression prompts (`SparseRegressionTask`: loss at the q query positions, reference
chen2024 §2.1, §2.7). A task says how its prompts are drawn and how a model
predicts from them (`task.predict(model, Z)`).

As in He et al. (2025) §0.5 (the authors' notebook): every step draws a fresh batch of prompts,
the loss is the plain mean squared error of the query prediction against the (noisy) query label
(``torch.nn.MSELoss``, no 1/2), and the optimizer is Adam (lr 1e-3, batch 256 in the paper).

The E members of a `numerics.models.MultiHeadAttention` ensemble train in one optimizer step.
Each member draws its own data from its own generator, and the loss is the SUM over members of
each member's mean loss, so each member's gradient is exactly its solo gradient; with the
element-wise optimizers here (Adam, AdamW, SGD) member e then follows the same trajectory as a
solo run with seed ``seed + e``.

Checkpoints (model, optimizer, generators, history) are written atomically (temporary file then
``os.replace``); ``resume=True`` continues from one and reaches the same weights, bit for bit on
the CPU, as an uninterrupted run. A non-finite loss stops training with `TrainingDivergedError`
naming the step; the last good checkpoint is kept.

``TrainConfig.workers`` = W > 1 trains contiguous slices of the members in W spawned processes
(one torch thread each), each slice a run of its own with the full run's seeds and data streams,
and merges their checkpoints into the one checkpoint of workers=1: the same weights and history,
bit for bit on the CPU when every slice has the same largest H (to float rounding otherwise: a
shorter head axis rounds the sum over heads differently). On a 2-core CPU at E = 64, H = 4,
d = 5, L = 40, batch 256, two workers trained 1.93 times as many model-steps/s as one (2,732
against 1,418; ``benchmarks/train_throughput.py --steps 1000 --repeats 3``), after a start-up
of seconds per run.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import io
import math
import multiprocessing
import numbers
import os
import pickle
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch
from icl_verify.numerics.circuits import omega_mu
from icl_verify.numerics.data import (
    drawing_on_cpu,
    embed,
    linear_regression_sampler,
    multitask_regression_sampler,
    seeded_generator,
    sparse_regression_sampler,
)
from icl_verify.numerics.decoder import Decoder, DecoderConfig, decoder_tokens
from icl_verify.numerics.encoder import Encoder, EncoderConfig, encoder_tokens
from icl_verify.numerics.models import AttentionConfig, MultiHeadAttention
from tqdm.auto import tqdm

from icl_verify._files import write_atomic
from icl_verify.covariance import check_zeta, equicorrelated_covariance
from icl_verify.devices import DEVICE_PATTERN, resolve_device
from icl_verify.processes import stop_workers, worker_setup

__all__ = [
    "LinearRegressionTask",
    "MultiTaskRegressionTask",
    "SparseRegressionTask",
    "TrainConfig",
    "TrainHistory",
    "TrainResult",
    "ForeignCheckpointError",
    "TrainingDivergedError",
    "TrainingStopped",
    "train",
]


# ---------------------------------------------------------------------------------------------
# tasks: what a member is trained on; ``task.sampler(device, dtype)`` draws its prompts

Sampler = Callable[[int, torch.Generator], tuple[torch.Tensor, torch.Tensor]]


def _embedded(prompts) -> tuple[torch.Tensor, torch.Tensor]:
    """The prompt matrices (2.1) of a batch of prompts and their query labels."""
    return embed(prompts), prompts.y_query


@dataclass(frozen=True)
class LinearRegressionTask:
    """Prompts of `numerics.data.sample_linear_regression`: d, L, sigma2 (and optional Sigma)."""

    d: int = 5  # covariate dimension
    L: int = 40  # context length
    sigma2: float = 0.1  # label-noise variance
    covariance: torch.Tensor | None = field(default=None, compare=False)  # Sigma; None = I_d

    @property
    def n_labels(self) -> int:
        return 1

    def sampler(self, device: torch.device, dtype: torch.dtype) -> Sampler:
        """``draw(batch, generator)``: prompt matrices (batch, d+1, L+1) and query labels
        (batch,), with no host synchronisation (`numerics.data.linear_regression_sampler`)."""
        draw = linear_regression_sampler(
            self.d, self.L, self.sigma2, device=device, dtype=dtype, covariance=self.covariance
        )
        return lambda batch, generator: _embedded(draw(batch, generator))

    def predict(self, model: MultiHeadAttention, Z: torch.Tensor) -> torch.Tensor:
        return model(Z)


@dataclass(frozen=True)
class MultiTaskRegressionTask:
    """Prompts of `numerics.data.sample_multitask_regression` (§HE-5.4-MT)."""

    d: int = 6  # covariate dimension
    L: int = 48  # context length
    supports: tuple[tuple[int, ...], ...] = ((0, 1, 2, 3), (2, 3, 4, 5))  # released setting
    relative_noise: float = 0.1  # context-label noise variance per support coordinate
    shared_beta: bool = False  # one coefficient vector for all tasks (the prose) or one per task

    @property
    def n_labels(self) -> int:
        return len(self.supports)

    def sampler(self, device: torch.device, dtype: torch.dtype) -> Sampler:
        """``draw(batch, generator)``: prompt matrices (batch, d+K, L+1) and query labels
        (batch, K), with no host synchronisation."""
        draw = multitask_regression_sampler(
            self.d, self.L, self.supports, relative_noise=self.relative_noise,
            shared_beta=self.shared_beta, device=device, dtype=dtype,
        )  # fmt: skip
        return lambda batch, generator: _embedded(draw(batch, generator))

    def predict(self, model: MultiHeadAttention, Z: torch.Tensor) -> torch.Tensor:
        return model(Z)


@dataclass(frozen=True)
class SparseRegressionTask:
    """Prompts of `numerics.data.sample_sparse_regression` as encoder tokens (reference chen2024
    §2.1: d = 16, s = 4, n = 12 examples, q = 4 queries, w* ~ N(0, I) on its support); the
    loss is the squared error at the q query positions.

    App. G (reference §2.7): ``zeta`` > 0 draws x ~ N(0, I + zeta 11^T)
    (`icl_verify.covariance.equicorrelated_covariance`); ``tokens="decoder"`` lays the prompt
    out for the decoder (`numerics.decoder.decoder_tokens`), whose loss at the q = n_G - k + 1
    positions after the first n = k - 1 examples is (G.1) divided by q (a constant factor:
    Adam's steps do not change with it, up to its epsilon).
    """

    d: int = 16  # covariate dimension
    n: int = 12  # labelled examples per prompt
    q: int = 4  # queries per prompt (label slot 0)
    s: int = 4  # support size of w*
    sigma: float = 0.1  # label-noise standard deviation
    zeta: float = 0.0  # x ~ N(0, I + zeta 11^T) (App. G); 0: isotropic
    tokens: str = "encoder"  # "encoder" (2.3) or "decoder" (interleaved, App. G)

    def __post_init__(self) -> None:
        check_zeta(self.zeta)
        if self.tokens not in TOKEN_LAYOUTS:
            raise ValueError(f"tokens must be one of {sorted(TOKEN_LAYOUTS)}, got {self.tokens!r}")

    def sampler(self, device: torch.device, dtype: torch.dtype) -> Sampler:
        """``draw(batch, generator)``: tokens (batch, n + q, d + 1) (encoder) or
        (batch, 2 (n + q), d) (decoder) and query labels (batch, q), with no host
        synchronisation."""
        covariance = None  # zeta = 0 leaves the isotropic draws exactly as they were
        if self.zeta:
            covariance = torch.as_tensor(equicorrelated_covariance(self.d, self.zeta))
        draw = sparse_regression_sampler(
            self.d, self.n, self.s, self.sigma, q=self.q, device=device, dtype=dtype,
            covariance=covariance,
        )  # fmt: skip
        layout = TOKEN_LAYOUTS[self.tokens]

        def laid_out(batch: int, generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
            prompts = draw(batch, generator)
            return layout(prompts), prompts.y_query

        return laid_out

    def predict(self, model: Encoder | Decoder, Z: torch.Tensor) -> torch.Tensor:
        return model(Z, self.n)


TOKEN_LAYOUTS = {"encoder": encoder_tokens, "decoder": decoder_tokens}
Task = LinearRegressionTask | MultiTaskRegressionTask | SparseRegressionTask
ModelConfig = AttentionConfig | EncoderConfig | DecoderConfig


# ---------------------------------------------------------------------------------------------
# configuration and results


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


@dataclass(frozen=True)
class TrainHistory:
    """Logged every ``log_every`` steps: ``n`` records, E members, H heads (numpy, float64).

    Attributes:
        steps: (n,) step numbers (1-based; step k = after k optimizer updates).
        train_loss: (n, E) mean training loss over the steps since the previous record.
        test_loss: (n, E) loss on the member's fixed validation prompts.
        omega, mu: (n, E, H) effective head scales (`numerics.circuits.omega_mu`; single-label
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


@dataclass(frozen=True)
class TrainResult:
    """A trained ensemble and its history; ``cuda_graph``: whether its steps after the warm-up
    ran as a replayed CUDA graph (False on the CPU, with ``cuda_graph=False``, or when the
    capture failed and the plain launches went on)."""

    model: MultiHeadAttention | Encoder | Decoder
    history: TrainHistory
    cuda_graph: bool = False


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


def _torch_device(device: str) -> torch.device:
    """The torch device of a device name (`icl_verify.devices.resolve_device`)."""
    return torch.device(resolve_device(device))


# ---------------------------------------------------------------------------------------------
# training


def _stream_seed(*words: int) -> int:
    """A 63-bit seed derived from words (numpy SeedSequence), independent across word tuples."""
    return int(np.random.SeedSequence(list(words)).generate_state(1, np.uint64)[0] >> np.uint64(1))


def _optimizer(
    model: torch.nn.Module, config: TrainConfig, device: torch.device
) -> torch.optim.Optimizer:
    """The optimizer of ``config``. On CUDA, Adam and AdamW are the fused kernels, whose step
    count lives on the device (graph-capturable, one launch per step instead of a dozen); the
    plain and the graph path use the same one, so they compute the same numbers."""
    if config.optimizer == "sgd":
        return torch.optim.SGD(
            model.parameters(), lr=config.lr, momentum=config.momentum,
            weight_decay=config.weight_decay,
        )  # fmt: skip
    adam = torch.optim.Adam if config.optimizer == "adam" else torch.optim.AdamW
    return adam(
        model.parameters(), lr=config.lr, betas=config.betas, weight_decay=config.weight_decay,
        **_device_options(device),
    )  # fmt: skip


def _device_options(device: torch.device) -> dict:
    """Adam's options for the device: fused and capturable on CUDA (a checkpoint's param groups
    carry their own, so they are set again after loading one)."""
    return {"fused": True, "capturable": True} if device.type == "cuda" else {}


def _callable_name(f: Callable) -> str:
    """A callable attention f as the same text in every process: its qualified name and, for a
    Python function, a digest of its code, constants and closure (a lambda's repr holds its
    address, which differs between processes)."""
    name = f"{getattr(f, '__module__', None)}.{getattr(f, '__qualname__', type(f).__qualname__)}"
    code = getattr(f, "__code__", None)
    if code is None:
        return name
    cells = tuple(repr(cell.cell_contents) for cell in f.__closure__ or ())
    content = repr((code.co_code, code.co_consts, code.co_names, cells)).encode()
    return f"{name}#{hashlib.sha256(content).hexdigest()[:16]}"


def _fingerprint(
    model_config: ModelConfig, tasks, config: TrainConfig, initial: dict | None = None
) -> str:
    """What must match for a checkpoint to be resumed (everything but the length of the run).

    The model part is the config's dataclass repr, with a callable attention by `_callable_name`;
    initial weights (a fine-tuning run) enter by a digest of their bytes; a run inside
    `numerics.data.draw_on_cpu` (another random stream on CUDA) says so at the end.
    """
    fields = dataclasses.fields(model_config)
    values = {f.name: getattr(model_config, f.name) for f in fields if f.repr}
    if callable(values.get("attention")):
        values["attention"] = _callable_name(values["attention"])
    described = ", ".join(f"{name}={value!r}" for name, value in values.items())
    model_part = f"{type(model_config).__qualname__}({described})"  # as repr(model_config)
    train_part = dataclasses.replace(config, steps=1, checkpoint_every=0)  # workers: repr=False
    fingerprint = f"({model_part}, {tasks!r}, {train_part!r})"  # as repr of the tuple
    if initial is not None:
        digest = hashlib.sha256()
        for name in sorted(initial):
            digest.update(name.encode() + initial[name].detach().cpu().numpy().tobytes())
        fingerprint += f" from {digest.hexdigest()[:16]}"
    if drawing_on_cpu():  # another random stream on CUDA; nothing added by default
        fingerprint += " drawn on the CPU"
    return fingerprint


def _check_tasks(model_config: ModelConfig, tasks: tuple) -> None:
    """ValueError unless every member's task fits its model and all share one prompt shape."""
    for t in tasks:
        if isinstance(model_config, EncoderConfig | DecoderConfig):
            first = tasks[0]
            layout = "encoder" if isinstance(model_config, EncoderConfig) else "decoder"
            fits = (
                isinstance(t, SparseRegressionTask)
                and t.d == model_config.d
                and t.tokens == layout
                and (layout == "encoder" or 2 * (t.n + t.q) <= model_config.positions)
            )
            if not fits or (t.n, t.q) != (first.n, first.q):
                raise ValueError(
                    f"task must be a SparseRegressionTask with d = {model_config.d} and "
                    f"{layout} tokens"
                    + ("" if layout == "encoder" else
                       f" (at most {model_config.positions} of them)")
                    + f" and share n = {first.n} and q = {first.q}, got {t!r}"
                )  # fmt: skip
        elif isinstance(t, SparseRegressionTask) or (
            t.d + t.n_labels != model_config.d_embed or t.L != tasks[0].L
        ):
            raise ValueError(
                f"task must match the model (D = {model_config.d_embed}) and share L "
                f"= {tasks[0].L}, got {t!r}"
            )


def _logged_heads(model_config: ModelConfig) -> int | None:
    """The head axis of omega/mu and of padded member slices: H for one-layer attention; None
    for the encoder (no omega/mu: those read a one-layer model; every member has all heads)."""
    return model_config.max_heads if isinstance(model_config, AttentionConfig) else None


# What a checkpoint holds; FORMAT changes when its layout does (2: circuits and seconds in it).
_CHECKPOINT_KEYS = frozenset(
    ("format", "fingerprint", "step", "seconds", "model", "optimizer", "generators", "records",
     "train_loss_sum")
)  # fmt: skip
CHECKPOINT_FORMAT = 2
RECORD_KEYS = ("steps", "train", "test", "omega", "mu", "KQ", "OV")
GRAPH_WARMUP_STEPS = 3  # plain steps before the capture (allocator, Adam state, cuBLAS handles)


def _load_checkpoint(path: Path, device: torch.device) -> dict | None:
    """The checkpoint at `path`; None when there is none, or when it cannot be read whole.

    A damaged checkpoint (truncated, garbage, not a checkpoint of this trainer, or one of an
    older layout) is reported in one line on stderr, and training starts over from step 0 (it
    overwrites the file at its first checkpoint).
    """
    try:
        state = torch.load(path, map_location=device, weights_only=False)
        if not isinstance(state, dict) or not _CHECKPOINT_KEYS <= state.keys():
            raise ValueError("not a checkpoint of this trainer")
        if state["format"] != CHECKPOINT_FORMAT:
            raise ValueError(f"checkpoint format {state['format']}, this trainer reads "
                             f"{CHECKPOINT_FORMAT}")  # fmt: skip
    except FileNotFoundError:
        return None
    except Exception as error:  # any failure to load it: the file is damaged
        reason = " ".join(f"{type(error).__name__}: {error}".split())[:200]
        print(
            f"icl-verify: warning: checkpoint {str(path)!r} is damaged ({reason}); "
            "training from step 0",
            file=sys.stderr,
        )
        return None
    return state


def _save_atomically(state: dict, path: Path) -> None:
    buffer = io.BytesIO()
    torch.save(state, buffer)
    write_atomic(path, buffer.getvalue())


def _captured(step: Callable[[], None], generators: list[torch.Generator], stream):
    """``step`` captured as a CUDA graph on ``stream`` (its random draws from ``generators``,
    registered so that every replay advances them as a plain step would); None, with a one-line
    warning, when it cannot be captured: the caller then goes on with plain launches.

    Capturing runs no kernel, so a failed capture changes no weight, moment or generator.
    """
    graph = torch.cuda.CUDAGraph()
    try:
        for generator in generators:
            graph.register_generator_state(generator)
        with torch.cuda.graph(graph, stream=stream):
            step()
    except Exception as error:  # any failure: the plain path computes the same numbers
        reason = " ".join(f"{type(error).__name__}: {error}".split())[:200]
        print(
            f"icl-verify: warning: the training step could not be captured as a CUDA graph "
            f"({reason}); training on with plain launches",
            file=sys.stderr,
        )
        return None
    return graph


def train(
    model_config: ModelConfig,
    task: Task | Sequence[Task],
    config: TrainConfig,
    *,
    checkpoint_path: str | os.PathLike | None = None,
    resume: bool = False,
    callback: Callable[[int, torch.nn.Module], None] | None = None,
    progress: bool = True,
    progress_position: int = 0,
    initial: dict[str, torch.Tensor] | None = None,
    deadline: float | None = None,
) -> TrainResult:
    """Train E = ``model_config.ensemble`` members online on fresh prompts; see the module doc.

    ``task`` is one task for every member or a sequence of E tasks (they must share the prompt
    shape: D = d + n_labels and L for one-layer attention, n and q for the encoder; the noise may
    differ). ``callback(step, model)`` runs after every optimizer step (before the checkpoint of
    that step, if any). ``progress`` shows a tqdm bar on line ``progress_position``: 0 for a
    top-level bar, >= 1 for a bar nested under an outer one (cleared when training ends).
    ``initial`` (a ``state_dict`` of ``model_config``'s model) replaces the seeded init: a
    fine-tuning run (e.g. of a pruned encoder, whose head mask is part of its state).
    ``deadline`` (a `time.time()` value): at the first step boundary past it, the checkpoint of
    that step is written and `TrainingStopped` raised; ``resume=True`` continues from there.

    On CUDA the step (sampling, forward, backward, fused Adam, the bookkeeping on the device)
    runs as plain launches for `GRAPH_WARMUP_STEPS` steps, is then captured once as a CUDA graph
    and replayed (``config.cuda_graph``); the host waits for the device only at the logged and
    checkpointed steps. Inside `numerics.data.draw_on_cpu` the generators live on the CPU, the
    prompts are copied to the device, and the steps run as plain launches.

    >>> result = train(AttentionConfig(d=2, heads=2, ensemble=3), LinearRegressionTask(2, 8, 0.1),
    ...                TrainConfig(steps=20, batch=16, log_every=10, validation_batch=64),
    ...                progress=False)
    >>> result.history.test_loss.shape, result.history.omega.shape, result.history.KQ.shape
    ((2, 3), (2, 3, 2), (2, 3, 2, 3, 3))
    >>> result = train(EncoderConfig(d=4, d_hid=8, heads=2, layers=2, ensemble=2),
    ...                SparseRegressionTask(d=4, n=6, q=2, s=2, sigma=0.1),
    ...                TrainConfig(steps=20, batch=16, log_every=10, validation_batch=64),
    ...                progress=False)
    >>> result.history.test_loss.shape, type(result.model).__name__
    ((2, 2), 'Encoder')
    """
    E = model_config.ensemble
    tasks = tuple(task) if isinstance(task, Sequence) else (task,) * E
    if len(tasks) != E:
        raise ValueError(f"task must be one task or a sequence of {E} tasks, got {len(tasks)}")
    _check_tasks(model_config, tasks)
    if config.data_streams == "shared" and len(set(map(repr, tasks))) != 1:
        raise ValueError("data_streams must be 'member' when members have different tasks")
    device, dtype = _torch_device(config.device), getattr(torch, config.dtype)
    checkpoint_path = Path(checkpoint_path) if checkpoint_path is not None else None
    if resume and checkpoint_path is None:
        raise ValueError("checkpoint_path must be given when resume=True")
    if config.workers > 1:
        if config.data_streams != "member":
            raise ValueError("data_streams must be 'member' when workers > 1 (a shared stream "
                             "cannot be split between processes)")  # fmt: skip
        if callback is not None:
            raise ValueError("callback must be None when workers > 1 (members train apart)")
        if initial is not None:
            raise ValueError("initial must be None when workers > 1 (fine-tune in one process)")
        if drawing_on_cpu():
            raise ValueError("workers must be 1 inside draw_on_cpu (a spawned process would not "
                             "inherit it)")  # fmt: skip
        if min(config.workers, E) > 1:
            return _train_in_workers(
                model_config, tasks, config, checkpoint_path, resume, progress, progress_position,
                deadline,
            )  # fmt: skip

    seeds = [config.seed + e for e in range(E)]
    model = model_config.build(seeds).to(device=device, dtype=dtype)
    if initial is not None:
        model.load_state_dict(initial)
    optimizer = _optimizer(model, config, device)
    samplers = [t.sampler(device, dtype) for t in tasks]
    if config.data_streams == "member":
        generators = [seeded_generator(_stream_seed(s, 1), device) for s in seeds]
    else:
        generators = [seeded_generator(_stream_seed(config.seed, 2, E), device)]

    def draw(batch: int, gens: list[torch.Generator]) -> tuple[torch.Tensor, torch.Tensor]:
        if len(gens) == 1 and E > 1:  # shared stream: one call for all members
            Z, target = samplers[0](batch * E, gens[0])
            return Z.unflatten(0, (E, batch)), target.unflatten(0, (E, batch))
        pairs = [sample(batch, g) for sample, g in zip(samplers, gens, strict=True)]
        return torch.stack([p[0] for p in pairs]), torch.stack([p[1] for p in pairs])

    validation_generators = [seeded_generator(config.validation_seed, device) for _ in range(E)]
    Z_val, y_val = draw(config.validation_batch, validation_generators)  # (E, Bv, D, T), (E, Bv..)

    def member_losses(Z: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        squared = (tasks[0].predict(model, Z) - target) ** 2  # (E, B), (E, B, K) or (E, B, q)
        return squared.flatten(1).mean(dim=1)  # (E,): each member's mean loss

    loss_fn = torch.compile(member_losses) if config.compile else member_losses

    fingerprint = _fingerprint(model_config, tasks, config, initial)
    records: dict[str, list] = {k: [] for k in RECORD_KEYS}
    start, last_good, seconds_before = 0, None, 0.0
    train_loss_sum = torch.zeros(E, dtype=torch.float64, device=device)  # (E,) since last record
    state = _load_checkpoint(checkpoint_path, device) if resume else None
    if state is not None:
        if state["fingerprint"] != fingerprint:
            raise ForeignCheckpointError(
                f"checkpoint_path {str(checkpoint_path)!r} holds a different run; not resuming"
            )
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        if config.optimizer != "sgd":
            for group in optimizer.param_groups:
                group.update(_device_options(device))
        for g, s in zip(generators, state["generators"], strict=True):
            g.set_state(s.cpu())  # a generator's state is a CPU byte tensor, whatever its device
        records, start, last_good = state["records"], state["step"], state["step"]
        seconds_before = state["seconds"]
        train_loss_sum.copy_(state["train_loss_sum"])
    steps_taken = torch.full((), start, dtype=torch.int64, device=device)  # on the device
    first_bad = torch.full((), -1, dtype=torch.int64, device=device)  # first non-finite step

    def one_step() -> None:
        """One optimizer step on fresh prompts: kernel launches only, no host synchronisation
        (the same function runs plain and is captured as the CUDA graph)."""
        optimizer.zero_grad(set_to_none=True)
        Z, target = draw(config.batch, generators)  # (E, B, D, T), (E, B)
        losses = loss_fn(Z, target)  # (E,)
        losses.sum().backward()  # sum of member means: each member gets its solo gradient
        optimizer.step()
        losses = losses.detach()
        steps_taken.add_(1)
        bad = ~torch.isfinite(losses).all() & (first_bad < 0)
        first_bad.copy_(torch.where(bad, steps_taken, first_bad))
        train_loss_sum.add_(losses.double())

    clock = time.perf_counter()

    def seconds() -> float:  # training time of the whole run so far
        return seconds_before + time.perf_counter() - clock

    def checkpoint(step: int) -> None:
        _save_atomically(
            {
                "format": CHECKPOINT_FORMAT,
                "fingerprint": fingerprint,
                "step": step,
                "seconds": seconds(),
                "model": model.state_dict(),
                "optimizer": optimizer.state_dict(),
                "generators": [g.get_state() for g in generators],
                "records": records,
                "train_loss_sum": train_loss_sum.cpu(),
            },
            checkpoint_path,
        )

    def check_finite() -> None:
        bad = int(first_bad.item())
        if bad >= 0:
            kept = (
                f"last good checkpoint (step {last_good}) kept at {str(checkpoint_path)!r}"
                if last_good is not None
                else "no checkpoint was written"
            )
            raise TrainingDivergedError(f"training loss became NaN or inf at step {bad}; {kept}")

    def log(step: int) -> None:
        check_finite()
        with torch.no_grad():
            test = member_losses(Z_val, y_val)
            if _logged_heads(model_config) is None:
                omega = mu = torch.zeros(E, 0)
                KQ = OV = torch.zeros(E, 0, 0, 0)
            else:
                KQ, OV = model.KQ, model.OV  # (E, H, D, D)
                omega, mu = omega_mu(KQ, OV, model_config.d)
                if model_config.n_labels > 1:
                    omega, mu = torch.full_like(omega, math.nan), torch.full_like(mu, math.nan)
        steps_in_record = step - (records["steps"][-1] if records["steps"] else 0)
        records["steps"].append(step)
        records["train"].append((train_loss_sum / steps_in_record).cpu().tolist())
        records["test"].append(test.double().cpu().tolist())
        records["omega"].append(omega.double().cpu().tolist())
        records["mu"].append(mu.double().cpu().tolist())
        records["KQ"].append(KQ.float().cpu().numpy())
        records["OV"].append(OV.float().cpu().numpy())
        train_loss_sum.zero_()
        bar.set_postfix(test_loss=f"{test.mean().item():.4f}")

    capture_after = None
    stream = None
    if device.type == "cuda":
        stream = torch.cuda.Stream(device)  # the whole loop runs here (capture needs a side stream)
        stream.wait_stream(torch.cuda.current_stream(device))
        if config.cuda_graph and not drawing_on_cpu():  # a graph cannot replay a host draw
            capture_after = start + GRAPH_WARMUP_STEPS
    graph = None
    bar = tqdm(
        total=config.steps, initial=start, disable=not progress, desc="train",
        position=progress_position, leave=progress_position == 0,
    )  # fmt: skip
    with torch.cuda.stream(stream) if stream is not None else contextlib.nullcontext():
        for step in range(start + 1, config.steps + 1):
            if graph is None:
                one_step()
            else:
                graph.replay()
            if step == capture_after and step < config.steps:
                graph = _captured(one_step, generators, stream)
            if step % config.log_every == 0 or step == config.steps:
                log(step)
            if callback is not None:  # before the checkpoint: what it saves is never older
                callback(step, model)
            if checkpoint_path is not None and (
                step == config.steps
                or (config.checkpoint_every and step % config.checkpoint_every == 0)
            ):
                check_finite()
                checkpoint(step)
                last_good = step
            bar.update(1)
            if deadline is not None and step < config.steps and time.time() >= deadline:
                check_finite()
                if checkpoint_path is not None and last_good != step:
                    checkpoint(step)
                bar.close()
                kept = (
                    f"checkpoint at {str(checkpoint_path)!r}; resume to continue"
                    if checkpoint_path is not None
                    else "no checkpoint path, so the steps are lost"
                )
                raise TrainingStopped(
                    f"training stopped at its deadline after step {step} of {config.steps}; {kept}",
                    step,
                )
    if stream is not None:
        torch.cuda.current_stream(device).wait_stream(stream)
    bar.close()
    check_finite()
    H = _logged_heads(model_config) or 0
    history = _history(records, E, H, seconds())
    return TrainResult(model=model, history=history, cuda_graph=graph is not None)


def _history(records: dict[str, list], E: int, H: int, seconds: float) -> TrainHistory:
    """The history of a run's (or a checkpoint's) records: lists of per-record member values."""
    n = len(records["steps"])
    circuits = {
        key: np.stack(records[key]) if n else np.zeros((0, E, 0, 0, 0), dtype=np.float32)
        for key in ("KQ", "OV")
    }
    return TrainHistory(
        steps=np.asarray(records["steps"], dtype=np.int64),
        train_loss=np.asarray(records["train"], dtype=np.float64).reshape(n, E),
        test_loss=np.asarray(records["test"], dtype=np.float64).reshape(n, E),
        omega=np.asarray(records["omega"], dtype=np.float64).reshape(n, E, H),
        mu=np.asarray(records["mu"], dtype=np.float64).reshape(n, E, H),
        KQ=circuits["KQ"],
        OV=circuits["OV"],
        seconds=float(seconds),
    )


# ---------------------------------------------------------------------------------------------
# training in worker processes: contiguous slices of the members, merged back


def _slices(E: int, W: int) -> list[tuple[int, int]]:
    """W contiguous member ranges [lo, hi) covering 0..E-1, sizes differing by at most one.

    >>> _slices(5, 2)
    [(0, 2), (2, 5)]
    """
    bounds = [E * i // W for i in range(W + 1)]
    return list(zip(bounds, bounds[1:], strict=False))


def _sub_run(
    model_config: ModelConfig, tasks: tuple, config: TrainConfig, lo: int, hi: int
) -> tuple[ModelConfig, tuple, TrainConfig]:
    """Members lo..hi-1 as a run of their own: their architecture (``config.members``), tasks
    and seeds.

    Member e's init seed is ``seed + e`` and its data stream derives from that seed, so the
    slice run with seed ``seed + lo`` draws exactly the full run's data for these members.
    """
    sub_config = dataclasses.replace(config, seed=config.seed + lo, workers=1)
    return model_config.members(lo, hi), tasks[lo:hi], sub_config


def _pad_heads(value: torch.Tensor, H: int | None) -> torch.Tensor:
    """A member-stacked (E, H_slice, ...) tensor padded with zeros to H heads (inactive heads
    are zero, with zero Adam moments: they never get a gradient); as it is when H is None."""
    if H is None:
        return value
    pad = torch.zeros((value.shape[0], H - value.shape[1], *value.shape[2:]), dtype=value.dtype)
    return torch.cat([value, pad.to(value.device)], dim=1)


def _merge_states(parts: list[dict], fingerprint: str, H: int | None) -> dict:
    """One checkpoint of the whole ensemble from its slices' checkpoints (members in order)."""
    steps = {part["step"] for part in parts}
    if len(steps) != 1:
        raise ValueError(f"checkpoint parts are at different steps {sorted(steps)}")

    def cat(values: list) -> torch.Tensor:  # per-member tensors; a scalar (Adam's step) is shared
        if values[0].dim() == 0:
            return values[0]
        if values[0].dim() == 1:
            return torch.cat(values)
        return torch.cat([_pad_heads(v, H) for v in values])

    first = parts[0]
    optimizer_state = {
        index: {key: cat([p["optimizer"]["state"][index][key] for p in parts]) for key in entry}
        for index, entry in first["optimizer"]["state"].items()
    }

    def member_rows(key: str) -> list[list]:  # per record: members in order (omega, mu padded)
        pad = (
            (lambda m: [*m, *[0.0] * ((H or 0) - len(m))])
            if key in ("omega", "mu")
            else (lambda m: m)
        )
        return [
            [pad(member) for record in per_part for member in record]
            for per_part in zip(*(p["records"][key] for p in parts), strict=True)
        ]

    def member_circuits(key: str) -> list[np.ndarray]:  # per record: (E, H, D, D), padded
        return [
            torch.cat([_pad_heads(torch.from_numpy(c), H) for c in per_part]).numpy()
            for per_part in zip(*(p["records"][key] for p in parts), strict=True)
        ]

    records = {"steps": first["records"]["steps"]}
    records.update({key: member_rows(key) for key in ("train", "test", "omega", "mu")})
    records.update({key: member_circuits(key) for key in ("KQ", "OV")})
    return {
        "format": CHECKPOINT_FORMAT,
        "fingerprint": fingerprint,
        "step": first["step"],
        "seconds": max(part["seconds"] for part in parts),  # the slices train side by side
        "model": {k: cat([p["model"][k] for p in parts]) for k in first["model"]},
        "optimizer": {"state": optimizer_state, "param_groups": first["optimizer"]["param_groups"]},
        "generators": [g for p in parts for g in p["generators"]],
        "records": records,
        "train_loss_sum": torch.cat([p["train_loss_sum"] for p in parts]),
    }


def _split_state(state: dict, lo: int, hi: int, H: int | None, fingerprint: str) -> dict:
    """The checkpoint of members lo..hi-1 (with H heads; all when None) cut from a whole
    ensemble's."""

    def cut(value: torch.Tensor) -> torch.Tensor:
        if value.dim() == 0:
            return value
        return value[lo:hi].clone() if value.dim() == 1 else value[lo:hi, :H].clone()

    records = state["records"]
    return {
        "format": CHECKPOINT_FORMAT,
        "fingerprint": fingerprint,
        "step": state["step"],
        "seconds": state["seconds"],
        "model": {k: cut(v) for k, v in state["model"].items()},
        "optimizer": {
            "state": {
                index: {key: cut(value) for key, value in entry.items()}
                for index, entry in state["optimizer"]["state"].items()
            },
            "param_groups": state["optimizer"]["param_groups"],
        },
        "generators": state["generators"][lo:hi],
        "records": {
            "steps": records["steps"],
            **{key: [r[lo:hi] for r in records[key]] for key in ("train", "test")},
            **{key: [[m[:H] for m in r[lo:hi]] for r in records[key]] for key in ("omega", "mu")},
            **{key: [r[lo:hi, :H].copy() for r in records[key]] for key in ("KQ", "OV")},
        },
        "train_loss_sum": state["train_loss_sum"][lo:hi].clone(),
    }


_steps_done = None  # in a worker of `_train_in_workers`: the shared steps-done counter per slice


def _share_steps_done(counters, parent: int) -> None:
    """Worker initialiser: keep the parent's shared counters (one per slice) for `_train_part`;
    leave Ctrl-C to the parent and end with it (`icl_verify.processes.worker_setup`)."""
    global _steps_done
    _steps_done = counters
    worker_setup(parent)


def _train_part(
    model_config: ModelConfig,
    tasks: tuple,
    config: TrainConfig,
    path: Path,
    resume: bool,
    index: int,
    deadline: float | None,
) -> None:
    """A worker process: train slice `index` on one torch thread, counting its steps in the
    shared counter the parent's progress bar reads; its checkpoint is its result."""
    torch.set_num_threads(1)

    def count(step: int, model: torch.nn.Module) -> None:
        _steps_done[index] = step

    train(model_config, tasks, config, checkpoint_path=path, resume=resume, progress=False,
          callback=count, deadline=deadline)  # fmt: skip


def _train_in_workers(
    model_config: ModelConfig,
    tasks: tuple,
    config: TrainConfig,
    checkpoint_path: Path | None,
    resume: bool,
    progress: bool,
    progress_position: int,
    deadline: float | None,
) -> TrainResult:
    """`train` with the members in ``config.workers`` contiguous slices, one spawned process each.

    Each slice checkpoints to ``<checkpoint>.part<i>of<W>`` (in a scratch folder without a
    checkpoint_path); at the end the parts merge into one checkpoint of the whole ensemble, the
    same as workers=1 writes, and are removed. Resuming reads the parts of a killed run, or, when
    there are none, cuts the whole checkpoint into slices (a run of any workers count resumes).
    """
    E, H = model_config.ensemble, _logged_heads(model_config)
    try:
        pickle.dumps((model_config, tasks))
    except Exception:  # a lambda or local function cannot reach another process
        raise ValueError(
            "workers must be 1 for an attention that cannot be pickled (a lambda or local "
            f"function), got {getattr(model_config, 'attention', None)!r}"
        ) from None
    runs = [
        _sub_run(model_config, tasks, config, lo, hi)
        for lo, hi in _slices(E, min(config.workers, E))
    ]
    fingerprint = _fingerprint(model_config, tasks, config)
    device = _torch_device(config.device)
    with tempfile.TemporaryDirectory(prefix="icl-verify-train-") as scratch:
        base = checkpoint_path if checkpoint_path is not None else Path(scratch) / "run.pt"
        parts = [base.with_name(f"{base.name}.part{i}of{len(runs)}") for i in range(len(runs))]
        whole = None
        if resume and not any(part.exists() for part in parts):
            whole = _load_checkpoint(checkpoint_path, torch.device("cpu"))
        if whole is not None:
            if whole["fingerprint"] != fingerprint:
                raise ForeignCheckpointError(
                    f"checkpoint_path {str(checkpoint_path)!r} holds a different run; not resuming"
                )
            for (lo, hi), run, part in zip(_slices(E, len(runs)), runs, parts, strict=True):
                piece = _split_state(whole, lo, hi, _logged_heads(run[0]), _fingerprint(*run))
                _save_atomically(piece, part)
        bar = tqdm(
            total=config.steps, disable=not progress, desc=f"train ({len(runs)} processes)",
            position=progress_position, leave=progress_position == 0,
        )  # fmt: skip
        spawn = multiprocessing.get_context("spawn")
        steps_done = spawn.Array("q", len(runs), lock=False)  # written by slice i's worker only
        pool = ProcessPoolExecutor(
            len(runs), mp_context=spawn, initializer=_share_steps_done,
            initargs=(steps_done, os.getpid()),
        )  # fmt: skip
        try:
            futures = [
                pool.submit(_train_part, *run, part, resume, i, deadline)
                for i, (run, part) in enumerate(zip(runs, parts, strict=True))
            ]
            while True:
                running = wait(futures, timeout=0.5).not_done
                bar.update(min(steps_done) - bar.n)  # the slowest slice's step
                if not running:
                    break
            for future in futures:
                future.result()
        except BaseException:  # an interrupt or a failed slice: the others' checkpoints stay
            stop_workers(pool)
            raise
        pool.shutdown(wait=True)
        bar.update(config.steps - bar.n)  # parts resumed at their last step counted none
        bar.close()
        loaded = [torch.load(part, map_location=device, weights_only=False) for part in parts]
        state = _merge_states(loaded, fingerprint, H)
        if checkpoint_path is not None:
            _save_atomically(state, checkpoint_path)
            for part in parts:
                part.unlink()
    model = model_config.build([config.seed + e for e in range(E)])
    model = model.to(device=device, dtype=getattr(torch, config.dtype))
    model.load_state_dict(state["model"])
    return TrainResult(model=model, history=_history(state["records"], E, H or 0, state["seconds"]))
