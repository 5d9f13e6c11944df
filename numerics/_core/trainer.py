"""Online training of an ensemble of attention models on fresh in-context regression prompts.

Three architectures train here, each from its config (``config.build(seeds)``): the one-layer
attention of He et al. (`numerics.MultiHeadAttention`, `AttentionConfig`) on linear
regression prompts, and the multi-layer encoder of Chen et al. (`numerics.Encoder`,
`EncoderConfig`) and their App. G decoder (`numerics.Decoder`, `DecoderConfig`) on
sparse-regression prompts (`SparseRegressionTask`: loss at the q query positions, reference
chen2024 §2.1, §2.7). A task says how its prompts are drawn and how a model
predicts from them (`task.predict(model, Z)`).

As in He et al. (2025) §0.5 (the authors' notebook): every step draws a fresh batch of prompts,
the loss is the plain mean squared error of the query prediction against the (noisy) query label
(``torch.nn.MSELoss``, no 1/2), and the optimizer is Adam (lr 1e-3, batch 256 in the paper).

The E members of a `numerics.MultiHeadAttention` ensemble train in one optimizer step.
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

`train` is the entry point; its parts live in `numerics._core._training`, each read top to bottom:
the tasks and the configuration and results named here, the loop of one process
(``_training/loop.py``), the CUDA-graph step path (``graph.py``), checkpoints
(``checkpoints.py``), the deadline (``deadline.py``) and the worker processes (``workers.py``).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path

import torch
from icl_verify.numerics._core._training import loop, workers
from icl_verify.numerics._core._training.config import (
    ForeignCheckpointError,
    ModelConfig,
    TrainConfig,
    TrainHistory,
    TrainingDivergedError,
    TrainingStopped,
    TrainResult,
    torch_device,
)
from icl_verify.numerics._core._training.tasks import TOKEN_LAYOUTS as TOKEN_LAYOUTS  # the layouts
from icl_verify.numerics._core._training.tasks import (
    LinearRegressionTask,
    MultiTaskRegressionTask,
    SparseRegressionTask,
    Task,
    check_tasks,
)

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
    runs as plain launches for a few warm-up steps, is then captured once as a CUDA graph and
    replayed (``config.cuda_graph``; ``_training/graph.py``); the host waits for the device only
    at the logged and checkpointed steps. Inside `numerics.draw_on_cpu` the generators live
    on the CPU, the prompts are copied to the device, and the steps run as plain launches.

    >>> from icl_verify.numerics import EncoderConfig
    >>> from icl_verify.numerics import AttentionConfig
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
    check_tasks(model_config, tasks)
    if config.data_streams == "shared" and len(set(map(repr, tasks))) != 1:
        raise ValueError("data_streams must be 'member' when members have different tasks")
    device = torch_device(config.device)
    checkpoint_path = Path(checkpoint_path) if checkpoint_path is not None else None
    if resume and checkpoint_path is None:
        raise ValueError("checkpoint_path must be given when resume=True")
    if config.workers > 1:
        workers.check_arguments(config, callback, initial)
        if min(config.workers, E) > 1:
            return workers.train_in_workers(
                model_config, tasks, config, checkpoint_path, resume, progress, progress_position,
                deadline,
            )  # fmt: skip
    return loop.train_here(
        model_config, tasks, config, device, checkpoint_path=checkpoint_path, resume=resume,
        callback=callback, progress=progress, progress_position=progress_position,
        initial=initial, deadline_time=deadline,
    )  # fmt: skip
