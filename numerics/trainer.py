"""Online training of an ensemble of attention models on fresh in-context regression prompts.

Two architectures train here, each from its config (``config.build(seeds)``): the one-layer
attention of He et al. (`numerics.models.MultiHeadAttention`, `AttentionConfig`) on linear
regression prompts, and the multi-layer encoder of Chen et al. (`numerics.encoder.Encoder`,
`EncoderConfig`) on sparse-regression prompts (`SparseRegressionTask`: loss at the q query
positions, reference chen2024 §2.1). A task says how its prompts are drawn and how a model
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
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch
from icl_verify.numerics.circuits import omega_mu
from icl_verify.numerics.data import (
    embed,
    sample_linear_regression,
    sample_multitask_regression,
    sample_sparse_regression,
)
from icl_verify.numerics.encoder import Encoder, EncoderConfig, encoder_tokens
from icl_verify.numerics.models import AttentionConfig, MultiHeadAttention
from tqdm.auto import tqdm

from icl_verify._files import write_atomic

__all__ = [
    "LinearRegressionTask",
    "MultiTaskRegressionTask",
    "SparseRegressionTask",
    "TrainConfig",
    "TrainHistory",
    "TrainResult",
    "TrainingDivergedError",
    "train",
    "resolve_device",
]


# ---------------------------------------------------------------------------------------------
# tasks: what a member is trained on


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

    def sample(
        self, batch: int, generator: torch.Generator, device: torch.device, dtype: torch.dtype
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Prompt matrices (batch, d+1, L+1) and query labels (batch,)."""
        prompts = sample_linear_regression(
            batch,
            self.d,
            self.L,
            self.sigma2,
            generator=generator,
            device=device,
            dtype=dtype,
            covariance=self.covariance,
        )
        return embed(prompts), prompts.y_query

    def predict(self, model: MultiHeadAttention, Z: torch.Tensor) -> torch.Tensor:
        return model(Z)


@dataclass(frozen=True)
class MultiTaskRegressionTask:
    """Prompts of `numerics.data.sample_multitask_regression` (§HE-5.4-MT)."""

    d: int = 6  # covariate dimension
    L: int = 48  # context length
    supports: tuple[tuple[int, ...], ...] = ((0, 1, 2, 3), (2, 3, 4, 5))  # released setting
    relative_noise: float = 0.1  # context-label noise variance per support coordinate

    @property
    def n_labels(self) -> int:
        return len(self.supports)

    def sample(
        self, batch: int, generator: torch.Generator, device: torch.device, dtype: torch.dtype
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Prompt matrices (batch, d+K, L+1) and query labels (batch, K)."""
        prompts = sample_multitask_regression(
            batch,
            self.d,
            self.L,
            self.supports,
            generator=generator,
            relative_noise=self.relative_noise,
            device=device,
            dtype=dtype,
        )
        return embed(prompts), prompts.y_query

    def predict(self, model: MultiHeadAttention, Z: torch.Tensor) -> torch.Tensor:
        return model(Z)


@dataclass(frozen=True)
class SparseRegressionTask:
    """Prompts of `numerics.data.sample_sparse_regression` as encoder tokens (reference chen2024
    §2.1: d = 16, s = 4, n = 12 examples, q = 4 queries, w* ~ N(0, I) on its support); the
    loss is the squared error at the q query positions."""

    d: int = 16  # covariate dimension
    n: int = 12  # labelled examples per prompt
    q: int = 4  # queries per prompt (label slot 0)
    s: int = 4  # support size of w*
    sigma: float = 0.1  # label-noise standard deviation

    def sample(
        self, batch: int, generator: torch.Generator, device: torch.device, dtype: torch.dtype
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Tokens (batch, n + q, d + 1) and query labels (batch, q)."""
        prompts = sample_sparse_regression(
            batch, self.d, self.n, self.s, self.sigma, q=self.q, generator=generator,
            device=device, dtype=dtype,
        )  # fmt: skip
        return encoder_tokens(prompts), prompts.y_query

    def predict(self, model: Encoder, Z: torch.Tensor) -> torch.Tensor:
        return model(Z, self.n)


Task = LinearRegressionTask | MultiTaskRegressionTask | SparseRegressionTask
ModelConfig = AttentionConfig | EncoderConfig


# ---------------------------------------------------------------------------------------------
# configuration and results


@dataclass(frozen=True)
class TrainConfig:
    """Optimisation, data and bookkeeping of one training run (defaults: reference §0.5)."""

    optimizer: str = "adam"  # "adam" | "adamw" | "sgd"
    lr: float = 1e-3  # the authors' Adam learning rate
    betas: tuple[float, float] = (0.9, 0.999)  # Adam/AdamW moment decay rates
    weight_decay: float = 0.0  # the authors use none
    batch: int = 256  # prompts per member per step (the released runs)
    steps: int = 10_000  # optimizer steps (the paper: 500k)
    seed: int = 0  # member e: init seed seed + e, its own data stream derived from it
    validation_batch: int = 4096  # fixed validation prompts per member
    validation_seed: int = 12345  # same validation prompts for members with the same task
    device: str = "auto"  # "auto" (CUDA when present) | "cpu" | "cuda"
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

    def __post_init__(self) -> None:
        for name in ("batch", "steps", "validation_batch", "log_every", "workers"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
                raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
        for name, allowed in (
            ("optimizer", ("adam", "adamw", "sgd")),
            ("device", ("auto", "cpu", "cuda")),
            ("dtype", ("float32", "float64")),
            ("data_streams", ("member", "shared")),
        ):
            if getattr(self, name) not in allowed:
                raise ValueError(f"{name} must be one of {allowed}, got {getattr(self, name)!r}")
        if not (math.isfinite(self.lr) and self.lr > 0):
            raise ValueError(f"lr must be a finite number > 0, got {self.lr!r}")
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
    """

    steps: np.ndarray
    train_loss: np.ndarray
    test_loss: np.ndarray
    omega: np.ndarray
    mu: np.ndarray


@dataclass(frozen=True)
class TrainResult:
    """A trained ensemble and its history."""

    model: MultiHeadAttention | Encoder
    history: TrainHistory


class TrainingDivergedError(RuntimeError):
    """The training loss became NaN or infinite."""


def resolve_device(device: str) -> torch.device:
    """``"auto"`` -> CUDA when present, else CPU.

    >>> resolve_device("cpu")
    device(type='cpu')
    """
    if device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if device == "cuda" and not torch.cuda.is_available():
        raise ValueError("device must be 'auto' or 'cpu' on a machine without CUDA, got 'cuda'")
    return torch.device(device)


# ---------------------------------------------------------------------------------------------
# training


def _stream_seed(*words: int) -> int:
    """A 63-bit seed derived from words (numpy SeedSequence), independent across word tuples."""
    return int(np.random.SeedSequence(list(words)).generate_state(1, np.uint64)[0] >> np.uint64(1))


def _optimizer(model: torch.nn.Module, config: TrainConfig) -> torch.optim.Optimizer:
    if config.optimizer == "adam":
        return torch.optim.Adam(
            model.parameters(), lr=config.lr, betas=config.betas, weight_decay=config.weight_decay
        )
    if config.optimizer == "adamw":
        return torch.optim.AdamW(
            model.parameters(), lr=config.lr, betas=config.betas, weight_decay=config.weight_decay
        )
    return torch.optim.SGD(model.parameters(), lr=config.lr, weight_decay=config.weight_decay)


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
    initial weights (a fine-tuning run) enter by a digest of their bytes.
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
    return fingerprint


def _check_tasks(model_config: ModelConfig, tasks: tuple) -> None:
    """ValueError unless every member's task fits its model and all share one prompt shape."""
    for t in tasks:
        if isinstance(model_config, EncoderConfig):
            first = tasks[0]
            fits = isinstance(t, SparseRegressionTask) and t.d == model_config.d
            if not fits or (t.n, t.q) != (first.n, first.q):
                raise ValueError(
                    f"task must be a SparseRegressionTask with d = {model_config.d} and share "
                    f"n = {first.n} and q = {first.q}, got {t!r}"
                )
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


_CHECKPOINT_KEYS = frozenset(
    ("fingerprint", "step", "model", "optimizer", "generators", "records", "train_loss_sum")
)


def _load_checkpoint(path: Path, device: torch.device) -> dict | None:
    """The checkpoint at `path`; None when there is none, or when it cannot be read whole.

    A damaged checkpoint (truncated, garbage, not a checkpoint of this trainer) is reported
    in one line on stderr, and training starts over from step 0 (it overwrites the file at
    its first checkpoint).
    """
    try:
        state = torch.load(path, map_location=device, weights_only=False)
        if not isinstance(state, dict) or not _CHECKPOINT_KEYS <= state.keys():
            raise ValueError("not a checkpoint of this trainer")
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
) -> TrainResult:
    """Train E = ``model_config.ensemble`` members online on fresh prompts; see the module doc.

    ``task`` is one task for every member or a sequence of E tasks (they must share the prompt
    shape: D = d + n_labels and L for one-layer attention, n and q for the encoder; the noise may
    differ). ``callback(step, model)`` runs after every optimizer step (before the checkpoint of
    that step, if any). ``progress`` shows a tqdm bar on line ``progress_position``: 0 for a
    top-level bar, >= 1 for a bar nested under an outer one (cleared when training ends).
    ``initial`` (a ``state_dict`` of ``model_config``'s model) replaces the seeded init: a
    fine-tuning run (e.g. of a pruned encoder, whose head mask is part of its state).

    >>> result = train(AttentionConfig(d=2, heads=2, ensemble=3), LinearRegressionTask(2, 8, 0.1),
    ...                TrainConfig(steps=20, batch=16, log_every=10, validation_batch=64),
    ...                progress=False)
    >>> result.history.test_loss.shape, result.history.omega.shape
    ((2, 3), (2, 3, 2))
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
    device, dtype = resolve_device(config.device), getattr(torch, config.dtype)
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
        if min(config.workers, E) > 1:
            return _train_in_workers(
                model_config, tasks, config, checkpoint_path, resume, progress, progress_position
            )

    seeds = [config.seed + e for e in range(E)]
    model = model_config.build(seeds).to(device=device, dtype=dtype)
    if initial is not None:
        model.load_state_dict(initial)
    optimizer = _optimizer(model, config)
    if config.data_streams == "member":
        generators = [torch.Generator(device).manual_seed(_stream_seed(s, 1)) for s in seeds]
    else:
        generators = [torch.Generator(device).manual_seed(_stream_seed(config.seed, 2, E))]

    def draw(batch: int, gens: list[torch.Generator]) -> tuple[torch.Tensor, torch.Tensor]:
        if len(gens) == 1 and E > 1:  # shared stream: one call for all members
            Z, target = tasks[0].sample(batch * E, gens[0], device, dtype)
            return Z.unflatten(0, (E, batch)), target.unflatten(0, (E, batch))
        pairs = [t.sample(batch, g, device, dtype) for t, g in zip(tasks, gens, strict=True)]
        return torch.stack([p[0] for p in pairs]), torch.stack([p[1] for p in pairs])

    validation_generators = [
        torch.Generator(device).manual_seed(config.validation_seed) for _ in range(E)
    ]
    Z_val, y_val = draw(config.validation_batch, validation_generators)  # (E, Bv, D, T), (E, Bv..)

    def member_losses(Z: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        squared = (tasks[0].predict(model, Z) - target) ** 2  # (E, B), (E, B, K) or (E, B, q)
        return squared.flatten(1).mean(dim=1)  # (E,): each member's mean loss

    loss_fn = torch.compile(member_losses) if config.compile else member_losses

    fingerprint = _fingerprint(model_config, tasks, config, initial)
    records: dict[str, list] = {k: [] for k in ("steps", "train", "test", "omega", "mu")}
    start, train_loss_sum, last_good = 0, torch.zeros(E, dtype=torch.float64, device=device), None
    state = _load_checkpoint(checkpoint_path, device) if resume else None
    if state is not None:
        if state["fingerprint"] != fingerprint:
            raise ValueError(
                f"checkpoint_path {str(checkpoint_path)!r} holds a different run; not resuming"
            )
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        for g, s in zip(generators, state["generators"], strict=True):
            g.set_state(s)
        records, start, last_good = state["records"], state["step"], state["step"]
        train_loss_sum = state["train_loss_sum"].to(device)

    def checkpoint(step: int) -> None:
        _save_atomically(
            {
                "fingerprint": fingerprint,
                "step": step,
                "model": model.state_dict(),
                "optimizer": optimizer.state_dict(),
                "generators": [g.get_state() for g in generators],
                "records": records,
                "train_loss_sum": train_loss_sum.cpu(),
            },
            checkpoint_path,
        )

    first_bad = torch.full((), -1, dtype=torch.int64, device=device)  # first non-finite step

    def check_finite() -> None:
        bad = int(first_bad.item())
        if bad >= 0:
            kept = (
                f"last good checkpoint (step {last_good}) kept at {str(checkpoint_path)!r}"
                if last_good is not None
                else "no checkpoint was written"
            )
            raise TrainingDivergedError(f"training loss became NaN or inf at step {bad}; {kept}")

    bar = tqdm(
        total=config.steps, initial=start, disable=not progress, desc="train",
        position=progress_position, leave=progress_position == 0,
    )  # fmt: skip
    for step in range(start + 1, config.steps + 1):
        Z, target = draw(config.batch, generators)  # (E, B, D, T), (E, B)
        losses = loss_fn(Z, target)  # (E,)
        optimizer.zero_grad(set_to_none=True)
        losses.sum().backward()  # sum of member means: each member gets its solo gradient
        optimizer.step()
        bad_now = ~torch.isfinite(losses.detach()).all() & (first_bad < 0)
        first_bad = torch.where(bad_now, torch.tensor(step, device=device), first_bad)
        train_loss_sum += losses.detach().double()

        if step % config.log_every == 0 or step == config.steps:
            check_finite()
            with torch.no_grad():
                test = member_losses(Z_val, y_val)
                if _logged_heads(model_config) is None:
                    omega = mu = torch.zeros(E, 0)
                else:
                    omega, mu = omega_mu(model.KQ, model.OV, model_config.d)
                    if model_config.n_labels > 1:
                        omega, mu = torch.full_like(omega, math.nan), torch.full_like(mu, math.nan)
            steps_in_record = step - (records["steps"][-1] if records["steps"] else 0)
            records["steps"].append(step)
            records["train"].append((train_loss_sum / steps_in_record).cpu().tolist())
            records["test"].append(test.double().cpu().tolist())
            records["omega"].append(omega.double().cpu().tolist())
            records["mu"].append(mu.double().cpu().tolist())
            train_loss_sum.zero_()
            bar.set_postfix(test_loss=f"{test.mean().item():.4f}")
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
    bar.close()
    check_finite()

    return TrainResult(model=model, history=_history(records, E, _logged_heads(model_config) or 0))


def _history(records: dict[str, list], E: int, H: int) -> TrainHistory:
    """The history of a run's (or a checkpoint's) records: lists of per-record member values."""
    n = len(records["steps"])
    return TrainHistory(
        steps=np.asarray(records["steps"], dtype=np.int64),
        train_loss=np.asarray(records["train"], dtype=np.float64).reshape(n, E),
        test_loss=np.asarray(records["test"], dtype=np.float64).reshape(n, E),
        omega=np.asarray(records["omega"], dtype=np.float64).reshape(n, E, H),
        mu=np.asarray(records["mu"], dtype=np.float64).reshape(n, E, H),
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

    records = {"steps": first["records"]["steps"]}
    records.update({key: member_rows(key) for key in ("train", "test", "omega", "mu")})
    return {
        "fingerprint": fingerprint,
        "step": first["step"],
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
        "fingerprint": fingerprint,
        "step": state["step"],
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
        },
        "train_loss_sum": state["train_loss_sum"][lo:hi].clone(),
    }


_steps_done = None  # in a worker of `_train_in_workers`: the shared steps-done counter per slice


def _share_steps_done(counters) -> None:
    """Worker initialiser: keep the parent's shared counters (one per slice) for `_train_part`."""
    global _steps_done
    _steps_done = counters


def _train_part(
    model_config: ModelConfig,
    tasks: tuple,
    config: TrainConfig,
    path: Path,
    resume: bool,
    index: int,
) -> None:
    """A worker process: train slice `index` on one torch thread, counting its steps in the
    shared counter the parent's progress bar reads; its checkpoint is its result."""
    torch.set_num_threads(1)

    def count(step: int, model: torch.nn.Module) -> None:
        _steps_done[index] = step

    train(model_config, tasks, config, checkpoint_path=path, resume=resume, progress=False,
          callback=count)  # fmt: skip


def _train_in_workers(
    model_config: ModelConfig,
    tasks: tuple,
    config: TrainConfig,
    checkpoint_path: Path | None,
    resume: bool,
    progress: bool,
    progress_position: int,
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
    device = resolve_device(config.device)
    with tempfile.TemporaryDirectory(prefix="icl-verify-train-") as scratch:
        base = checkpoint_path if checkpoint_path is not None else Path(scratch) / "run.pt"
        parts = [base.with_name(f"{base.name}.part{i}of{len(runs)}") for i in range(len(runs))]
        whole = None
        if resume and not any(part.exists() for part in parts):
            whole = _load_checkpoint(checkpoint_path, torch.device("cpu"))
        if whole is not None:
            if whole["fingerprint"] != fingerprint:
                raise ValueError(
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
        with ProcessPoolExecutor(
            len(runs), mp_context=spawn, initializer=_share_steps_done, initargs=(steps_done,)
        ) as pool:
            futures = [
                pool.submit(_train_part, *run, part, resume, i)
                for i, (run, part) in enumerate(zip(runs, parts, strict=True))
            ]
            while True:
                running = wait(futures, timeout=0.5).not_done
                bar.update(min(steps_done) - bar.n)  # the slowest slice's step
                if not running:
                    break
            for future in futures:
                future.result()
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
    return TrainResult(model=model, history=_history(state["records"], E, H or 0))
