"""The trained ensemble that every trained-model claim reads (He et al. 2025 §3, reference §0.5).

One online training of E one-layer softmax-attention models (`numerics.models.MultiHeadAttention`
via `numerics.trainer.train`): d = 5, L = 40, sigma2 = 0.1, PyTorch's default ``nn.Linear`` init,
Adam, fresh prompts every step. Member e has ``heads[e]`` heads (all members padded to the
largest H) and init seed ``seed + e``; the history logs omega_h and mu_h of every member every
``log_every`` steps. The members share one data stream (``data_streams="shared"``: one generator
draws every member's independent prompts, about 1.5x faster on the CPU than one per member).

The training is one cached artefact: its key is the hash of the full training configuration
(plus the device, since float32 results differ across devices), so HE-OBS1..4 and HE-MAN (ii)
share it, a rerun reuses it, and a killed run resumes from the trainer's checkpoint (written
every ``checkpoint_every`` steps into `Runtime.checkpoint_dir`; the circuit history is saved
beside it at the same steps, and a logged step whose circuits were lost in a kill right after a
checkpoint holds NaN). The training seed is part of
the configuration (like a claim's ``design_seed``): ``--seed`` changes only the measurements'
Monte Carlo prompts, not which models are read.

On the CPU the training runs with one torch thread: for these tiny models (D = 6, L = 40) extra
threads only add synchronisation, and on a loaded 2-core machine two threads measured >10x
slower than one.
"""

from __future__ import annotations

import contextlib
import io
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from icl_verify.numerics.circuits import CircuitSummary, summarize_circuits
from icl_verify.numerics.models import AttentionConfig, MultiHeadAttention
from icl_verify.numerics.trainer import LinearRegressionTask, TrainConfig, resolve_device, train
from icl_verify.validation.claims._single_thread import single_thread

from icl_verify._files import write_atomic

WEIGHT_NAMES = ("W_Q", "W_K", "W_V", "W_O")

#: Keys of a claim's ``training`` parameters (all required; see `validation.preset_sizes`).
TRAINING_KEYS = (
    "d", "L", "sigma2", "heads", "lr", "steps", "batch", "seed", "log_every",
    "checkpoint_every", "validation_batch",
)  # fmt: skip


@dataclass(frozen=True)
class TrainedEnsemble:
    """E trained models and their histories (float64 numpy; n logged steps, H = max heads).

    Attributes:
        d, L, sigma2: the training data model (§0.2).
        heads: (E,) active heads per member; member e's heads are the first ``heads[e]``.
        weights: name -> (E, H, D, D) final W_Q, W_K, W_V, W_O.
        steps: (n,) logged steps; test_loss: (n, E) validation loss;
        omega, mu: (n, E, H) effective head scales (`numerics.circuits.omega_mu`).
        KQ_history, OV_history: (n, E, H, D, D) circuits at the logged steps (float32 stored).
    """

    d: int
    L: int
    sigma2: float
    heads: np.ndarray
    weights: Mapping[str, np.ndarray]
    steps: np.ndarray
    test_loss: np.ndarray
    omega: np.ndarray
    mu: np.ndarray
    KQ_history: np.ndarray
    OV_history: np.ndarray

    def model(self, members=None, device: str = "cpu") -> MultiHeadAttention:
        """The trained members (all, or the listed indices) as one float32 ensemble model."""
        members = list(range(self.heads.size)) if members is None else list(members)
        heads = tuple(int(self.heads[e]) for e in members)
        config = AttentionConfig(d=self.d, heads=heads, ensemble=len(members))
        model = MultiHeadAttention(config, seeds=[0] * len(members))
        with torch.no_grad():
            for name in WEIGHT_NAMES:
                stored = torch.as_tensor(self.weights[name][members][:, : max(heads)])
                getattr(model, name).copy_(stored.to(torch.float32))
        return model.to(device)

    def circuits(self) -> tuple[np.ndarray, np.ndarray]:
        """Final KQ and OV circuits, each (E, H, D, D) float64 (inactive heads' OV is 0)."""
        model = self.model()
        model.double()
        with torch.no_grad():
            return model.KQ.numpy(), model.OV.numpy()

    def summaries(self, log: int = -1) -> tuple[CircuitSummary, ...]:
        """`numerics.circuits.summarize_circuits` of every member at logged step ``log``."""
        if log == -1:
            KQ, OV = self.circuits()
        else:
            KQ, OV = self.KQ_history[log], self.OV_history[log]
        return summarize_circuits(
            torch.as_tensor(KQ), torch.as_tensor(OV), self.d, tuple(map(int, self.heads))
        )


def training_config(params: Mapping[str, Any]) -> dict[str, Any]:
    """The claim's ``training`` parameters, checked (every key of `TRAINING_KEYS`, heads >= 1).

    >>> cfg = training_config({"training": {"d": 5, "L": 40, "sigma2": 0.1, "heads": [1, 2],
    ...     "lr": 3e-3, "steps": 10, "batch": 8, "seed": 0, "log_every": 5,
    ...     "checkpoint_every": 5, "validation_batch": 16}})
    >>> cfg["heads"]
    [1, 2]
    """
    training = dict(params["training"])
    missing = [key for key in TRAINING_KEYS if key not in training]
    if missing:
        raise ValueError(f"training parameters must include {', '.join(missing)}")
    if not training["heads"] or min(training["heads"]) < 1:
        raise ValueError(f"training heads must be a non-empty list of integers >= 1, got "
                         f"{training['heads']!r}")
    return training


class _CircuitRecorder:
    """Keeps KQ and OV (float32) at the logged steps; saved beside the trainer's checkpoints."""

    def __init__(self, path: Path, log_every: int, checkpoint_every: int, last: int) -> None:
        self.path, self.log_every, self.checkpoint_every, self.last = (
            path, log_every, checkpoint_every, last,
        )  # fmt: skip
        self.steps: list[int] = []
        self.KQ: list[np.ndarray] = []
        self.OV: list[np.ndarray] = []
        if path.exists():  # resuming: the history up to the last checkpoint
            with np.load(path) as stored:
                self.steps = stored["steps"].tolist()
                self.KQ, self.OV = list(stored["KQ"]), list(stored["OV"])

    def __call__(self, step: int, model: MultiHeadAttention) -> None:
        if step % self.log_every == 0 or step == self.last:
            with torch.no_grad():
                self.steps.append(step)
                self.KQ.append(model.KQ.detach().float().cpu().numpy())
                self.OV.append(model.OV.detach().float().cpu().numpy())
        if self.checkpoint_every and step % self.checkpoint_every == 0:
            buffer = io.BytesIO()
            np.savez(buffer, **self.arrays(self.steps))
            write_atomic(self.path, buffer.getvalue())

    def arrays(self, steps) -> dict[str, np.ndarray]:
        """The history at ``steps`` (NaN where a step was not recorded)."""
        where = {s: k for k, s in enumerate(self.steps)}
        shape = self.KQ[0].shape
        blank = np.full(shape, np.nan, dtype=np.float32)
        return {
            "steps": np.asarray(steps, dtype=np.int64),
            "KQ": np.stack([self.KQ[where[s]] if s in where else blank for s in steps]),
            "OV": np.stack([self.OV[where[s]] if s in where else blank for s in steps]),
        }


def _train(
    training: Mapping[str, Any], device: str, checkpoint_path, show_progress: bool = False
) -> dict[str, np.ndarray]:
    heads = tuple(int(h) for h in training["heads"])
    model_config = AttentionConfig(d=training["d"], heads=heads, ensemble=len(heads))
    config = TrainConfig(
        lr=training["lr"],
        batch=training["batch"],
        steps=training["steps"],
        seed=training["seed"],
        validation_batch=training["validation_batch"],
        device=device,
        log_every=training["log_every"],
        checkpoint_every=training["checkpoint_every"],
        data_streams="shared",
    )
    task = LinearRegressionTask(training["d"], training["L"], training["sigma2"])
    on_cpu = resolve_device(device).type == "cpu"
    recorder = _CircuitRecorder(
        Path(checkpoint_path).with_name("circuits.npz"), config.log_every,
        config.checkpoint_every, config.steps,
    )  # fmt: skip
    with single_thread() if on_cpu else contextlib.nullcontext():  # see the module docstring
        result = train(
            model_config, task, config, checkpoint_path=checkpoint_path, resume=True,
            callback=recorder, progress=show_progress, progress_position=1,
        )  # fmt: skip
    history = result.history
    arrays = {
        name: getattr(result.model, name).detach().double().cpu().numpy() for name in WEIGHT_NAMES
    }
    arrays.update(
        heads=np.asarray(heads, dtype=np.int64),
        steps=history.steps,
        test_loss=history.test_loss,
        omega=history.omega,
        mu=history.mu,
    )
    circuits = recorder.arrays(history.steps)
    arrays.update(KQ_history=circuits["KQ"], OV_history=circuits["OV"])
    return arrays


def trained_ensemble(params: Mapping[str, Any], runtime) -> TrainedEnsemble:
    """Train (or load, or resume) the ensemble described by ``params["training"]``.

    The cache key is the full training configuration and the device; the checkpoint lives in
    ``runtime.checkpoint_dir`` under the same key.

    >>> import tempfile
    >>> from icl_verify.validation.cache import ArtefactCache
    >>> from icl_verify.validation.runtime import Runtime
    >>> runtime = Runtime("cpu", 0, ArtefactCache(tempfile.mkdtemp()))
    >>> params = {"training": {"d": 2, "L": 8, "sigma2": 0.1, "heads": [1, 2], "lr": 3e-3,
    ...     "steps": 20, "batch": 16, "seed": 0, "log_every": 10, "checkpoint_every": 10,
    ...     "validation_batch": 64}}
    >>> ensemble = trained_ensemble(params, runtime)
    >>> ensemble.omega.shape, ensemble.heads.tolist()
    ((2, 2, 2), [1, 2])
    >>> trained_ensemble(params, runtime).steps.tolist()  # loaded from the cache
    [10, 20]
    """
    training = training_config(params)
    key = {**training, "device": runtime.device}
    checkpoint = runtime.checkpoint_dir("trained-ensemble", key) / "checkpoint.pt"
    arrays = runtime.cached(
        "trained-ensemble",
        key,
        lambda: _train(training, runtime.device, checkpoint, runtime.show_progress),
    )
    return TrainedEnsemble(
        d=training["d"],
        L=training["L"],
        sigma2=float(training["sigma2"]),
        heads=np.asarray(arrays["heads"]),
        weights={name: np.asarray(arrays[name]) for name in WEIGHT_NAMES},
        steps=np.asarray(arrays["steps"]),
        test_loss=np.asarray(arrays["test_loss"]),
        omega=np.asarray(arrays["omega"]),
        mu=np.asarray(arrays["mu"]),
        KQ_history=np.asarray(arrays["KQ_history"]),
        OV_history=np.asarray(arrays["OV_history"]),
    )
