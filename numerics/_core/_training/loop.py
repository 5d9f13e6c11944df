"""One process's training, read as nanoGPT's ``train.py``: the E members' model, optimizer and
data streams; a resumed checkpoint, if any; then, step by step, the optimizer step (`graph`),
the log, the callback, the checkpoint and the deadline; last, the trained model and its history.

Every step draws a fresh batch of prompts per member, and the loss is the SUM over members of
each member's mean squared error, so each member's gradient is exactly its solo gradient. The
step runs on the device without host synchronisation: its step count, its first non-finite
step and its training-loss sums are device tensors the host reads only at the logged and
checkpointed steps.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import torch
from icl_verify.numerics._core._training import checkpoints, deadline
from icl_verify.numerics._core._training.config import (
    RECORD_KEYS,
    ModelConfig,
    TrainConfig,
    TrainingDivergedError,
    TrainResult,
    history,
    logged_heads,
)
from icl_verify.numerics._core._training.graph import Steps, device_options
from icl_verify.numerics._core._training.tasks import Task
from icl_verify.numerics._core.circuits import omega_mu
from icl_verify.numerics._core.data import seeded_generator
from tqdm.auto import tqdm

# ``draw(batch, generators)``: every member's prompts (E, batch, ...) and labels (E, batch, ...)
Draw = Callable[[int, list[torch.Generator]], tuple[torch.Tensor, torch.Tensor]]


def stream_seed(*words: int) -> int:
    """A 63-bit seed derived from words (numpy SeedSequence), independent across word tuples.

    >>> stream_seed(0, 1) == stream_seed(0, 1) != stream_seed(1, 1)
    True
    """
    return int(np.random.SeedSequence(list(words)).generate_state(1, np.uint64)[0] >> np.uint64(1))


def optimizer(model: torch.nn.Module, config: TrainConfig, device: torch.device):
    """The optimizer of ``config`` (on CUDA, Adam and AdamW fused: `graph.device_options`).

    >>> model = torch.nn.Linear(2, 1)
    >>> type(optimizer(model, TrainConfig(optimizer="sgd"), torch.device("cpu"))).__name__
    'SGD'
    """
    if config.optimizer == "sgd":
        return torch.optim.SGD(
            model.parameters(), lr=config.lr, momentum=config.momentum,
            weight_decay=config.weight_decay,
        )  # fmt: skip
    adam = torch.optim.Adam if config.optimizer == "adam" else torch.optim.AdamW
    return adam(
        model.parameters(), lr=config.lr, betas=config.betas, weight_decay=config.weight_decay,
        **device_options(device),
    )  # fmt: skip


def _data(
    tasks: tuple[Task, ...], config: TrainConfig, seeds: list[int], device: torch.device, dtype
) -> tuple[Draw, list[torch.Generator]]:
    """How the members' batches are drawn, and the training generators they are drawn from:
    one per member, seeded from its init seed (a solo run's stream), or one shared."""
    E = len(tasks)
    samplers = [t.sampler(device, dtype) for t in tasks]
    if config.data_streams == "member":
        generators = [seeded_generator(stream_seed(s, 1), device) for s in seeds]
    else:
        generators = [seeded_generator(stream_seed(config.seed, 2, E), device)]

    def draw(batch: int, gens: list[torch.Generator]) -> tuple[torch.Tensor, torch.Tensor]:
        if len(gens) == 1 and E > 1:  # shared stream: one call for all members
            Z, target = samplers[0](batch * E, gens[0])  # (E batch, ...)
            return Z.unflatten(0, (E, batch)), target.unflatten(0, (E, batch))
        pairs = [sample(batch, g) for sample, g in zip(samplers, gens, strict=True)]
        return torch.stack([p[0] for p in pairs]), torch.stack([p[1] for p in pairs])

    return draw, generators


def _member_losses(model: torch.nn.Module, task: Task) -> Callable:
    """``losses(Z, target)``: each member's mean squared error (E,) on its batch."""

    def member_losses(Z: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        squared = (task.predict(model, Z) - target) ** 2  # (E, B), (E, B, K) or (E, B, q)
        return squared.flatten(1).mean(dim=1)  # (E,): each member's mean loss

    return member_losses


class _Run:
    """One process's training between steps: the members' model, optimizer and generators,
    their validation prompts, the records so far, and the device tensors the step updates."""

    def __init__(self, model_config: ModelConfig, tasks: tuple[Task, ...], config: TrainConfig,
                 device: torch.device, checkpoint_path: Path | None, resume: bool,
                 initial: dict | None) -> None:  # fmt: skip
        E, dtype = model_config.ensemble, getattr(torch, config.dtype)
        self.model_config, self.config, self.checkpoint_path = model_config, config, checkpoint_path
        seeds = [config.seed + e for e in range(E)]
        self.model = model_config.build(seeds).to(device=device, dtype=dtype)
        if initial is not None:
            self.model.load_state_dict(initial)
        self.optimizer = optimizer(self.model, config, device)
        self.draw, self.generators = _data(tasks, config, seeds, device, dtype)
        validation_generators = [seeded_generator(config.validation_seed, device) for _ in range(E)]
        self.Z_val, self.y_val = self.draw(config.validation_batch, validation_generators)
        #                        (E, Bv, D, T) or (E, Bv, tokens, D); (E, Bv), (E, Bv, K|q)
        self.member_losses = _member_losses(self.model, tasks[0])
        self.loss_fn = torch.compile(self.member_losses) if config.compile else self.member_losses

        self.fingerprint = checkpoints.fingerprint(model_config, tasks, config, initial)
        self.records: dict[str, list] = {k: [] for k in RECORD_KEYS}
        self.start, self.last_good, self.seconds_before = 0, None, 0.0
        self.train_loss_sum = torch.zeros(E, dtype=torch.float64, device=device)  # (E,) since log
        state = checkpoints.load_run(checkpoint_path, device, self.fingerprint) if resume else None
        if state is not None:
            checkpoints.restore(state, self.model, self.optimizer, self.generators, config, device)
            self.records, self.seconds_before = state["records"], state["seconds"]
            self.start = self.last_good = state["step"]
            self.train_loss_sum.copy_(state["train_loss_sum"])
        self.steps_taken = torch.full((), self.start, dtype=torch.int64, device=device)  # () steps
        self.first_bad = torch.full((), -1, dtype=torch.int64, device=device)  # () -1: none yet
        self.clock = time.perf_counter()

    def one_step(self) -> None:
        """One optimizer step on fresh prompts: kernel launches only, no host synchronisation
        (the same function runs plain and is captured as the CUDA graph)."""
        self.optimizer.zero_grad(set_to_none=True)
        Z, target = self.draw(self.config.batch, self.generators)  # (E, B, D, T), (E, B)
        losses = self.loss_fn(Z, target)  # (E,)
        losses.sum().backward()  # sum of member means: each member gets its solo gradient
        self.optimizer.step()
        losses = losses.detach()
        self.steps_taken.add_(1)
        bad = ~torch.isfinite(losses).all() & (self.first_bad < 0)
        self.first_bad.copy_(torch.where(bad, self.steps_taken, self.first_bad))
        self.train_loss_sum.add_(losses.double())

    def seconds(self) -> float:
        """Training time of the whole run so far."""
        return self.seconds_before + time.perf_counter() - self.clock

    def check_finite(self) -> None:
        """TrainingDivergedError, naming the step, when a step's loss was not finite."""
        bad = int(self.first_bad.item())
        if bad >= 0:
            kept = (
                f"last good checkpoint (step {self.last_good}) kept at "
                f"{str(self.checkpoint_path)!r}"
                if self.last_good is not None
                else "no checkpoint was written"
            )
            raise TrainingDivergedError(f"training loss became NaN or inf at step {bad}; {kept}")

    def checkpoint(self, step: int) -> None:
        """Write the checkpoint of step ``step`` (`checkpoints.Checkpoint`), atomically."""
        checkpoints.save(
            checkpoints.Checkpoint(
                format=checkpoints.FORMAT,
                fingerprint=self.fingerprint,
                step=step,
                seconds=self.seconds(),
                model=self.model.state_dict(),
                optimizer=self.optimizer.state_dict(),
                generators=[g.get_state() for g in self.generators],
                records=self.records,
                train_loss_sum=self.train_loss_sum.cpu(),
            ),
            self.checkpoint_path,
        )

    def log(self, step: int, bar: tqdm) -> None:
        """Append a record: mean training loss since the last, validation loss, the heads."""
        self.check_finite()
        E, model = self.model_config.ensemble, self.model
        with torch.no_grad():
            test = self.member_losses(self.Z_val, self.y_val)  # (E,)
            if logged_heads(self.model_config) is None:
                omega = mu = torch.zeros(E, 0)
                KQ = OV = torch.zeros(E, 0, 0, 0)
            else:
                KQ, OV = model.KQ, model.OV  # (E, H, D, D)
                omega, mu = omega_mu(KQ, OV, self.model_config.d)  # (E, H)
                if self.model_config.n_labels > 1:
                    omega, mu = torch.full_like(omega, math.nan), torch.full_like(mu, math.nan)
        records = self.records
        steps_in_record = step - (records["steps"][-1] if records["steps"] else 0)
        records["steps"].append(step)
        records["train"].append((self.train_loss_sum / steps_in_record).cpu().tolist())
        records["test"].append(test.double().cpu().tolist())
        records["omega"].append(omega.double().cpu().tolist())
        records["mu"].append(mu.double().cpu().tolist())
        records["KQ"].append(KQ.float().cpu().numpy())
        records["OV"].append(OV.float().cpu().numpy())
        self.train_loss_sum.zero_()
        bar.set_postfix(test_loss=f"{test.mean().item():.4f}")


def train_here(
    model_config: ModelConfig,
    tasks: tuple[Task, ...],
    config: TrainConfig,
    device: torch.device,
    *,
    checkpoint_path: Path | None,
    resume: bool,
    callback: Callable[[int, torch.nn.Module], None] | None,
    progress: bool,
    progress_position: int,
    initial: dict | None,
    deadline_time: float | None,
) -> TrainResult:
    """`numerics.train` in this process, its arguments checked there.

    >>> from icl_verify.numerics import AttentionConfig
    >>> from icl_verify.numerics._core._training.tasks import LinearRegressionTask
    >>> result = train_here(
    ...     AttentionConfig(d=2, ensemble=2), (LinearRegressionTask(2, 8),) * 2,
    ...     TrainConfig(steps=4, batch=8, log_every=2, validation_batch=16), torch.device("cpu"),
    ...     checkpoint_path=None, resume=False, callback=None, progress=False,
    ...     progress_position=0, initial=None, deadline_time=None)
    >>> result.history.steps.tolist(), result.history.test_loss.shape
    ([2, 4], (2, 2))
    """
    run = _Run(model_config, tasks, config, device, checkpoint_path, resume, initial)
    steps = Steps(run.one_step, run.generators, device, config.cuda_graph, run.start, config.steps)
    bar = tqdm(
        total=config.steps, initial=run.start, disable=not progress, desc="train",
        position=progress_position, leave=progress_position == 0,
    )  # fmt: skip
    with steps.on_stream():
        for step in range(run.start + 1, config.steps + 1):
            steps.take(step)
            if step % config.log_every == 0 or step == config.steps:
                run.log(step, bar)
            if callback is not None:  # before the checkpoint: what it saves is never older
                callback(step, run.model)
            if checkpoint_path is not None and (
                step == config.steps
                or (config.checkpoint_every and step % config.checkpoint_every == 0)
            ):
                run.check_finite()
                run.checkpoint(step)
                run.last_good = step
            bar.update(1)
            if deadline.reached(deadline_time, step, config.steps):
                run.check_finite()
                if checkpoint_path is not None and run.last_good != step:
                    run.checkpoint(step)
                bar.close()
                raise deadline.stopped(step, config.steps, checkpoint_path)
    steps.join()
    bar.close()
    run.check_finite()
    H = logged_heads(model_config) or 0
    result_history = history(run.records, model_config.ensemble, H, run.seconds())
    return TrainResult(model=run.model, history=result_history, cuda_graph=steps.graph is not None)
