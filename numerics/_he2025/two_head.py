"""Two-head softmax attention trained from the symmetric start of He et al. (2025), Def. B.1.

E one-layer two-head models (`numerics.MultiHeadAttention`, init ``"symmetric"``:
omega_1 = -omega_2 = mu_1 = -mu_2 = eps) are trained online on the prompts of §0.2 by
`numerics.train`, each member on its own data stream, with plain SGD or Adam. The
result is the history of head 1's effective (omega, mu) against t = lr * step, the clock at
which plain gradient descent with step lr follows a gradient flow (Appendix B, claim
HE-B-PHASE1), as float64 numpy arrays (`TwoHeadHistory.arrays` / `from_arrays` store it).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import ClassVar

import numpy as np
from icl_verify.numerics._core.models import AttentionConfig
from icl_verify.numerics._core.trainer import LinearRegressionTask, TrainConfig, train

__all__ = ["TwoHeadHistory", "TwoHeadTraining", "train_two_head"]


@dataclass(frozen=True, kw_only=True)
class TwoHeadTraining:
    """What is trained, and how. Its fields are the whole configuration of a training
    (`dataclasses.asdict`, with the device, is a complete cache key)."""

    d: int  # covariate dimension
    L: int  # prompt length (in-context examples per prompt)
    sigma2: float  # label-noise variance
    optimizer: str  # "sgd" (plain, follows the flow at t = lr k) or "adam"
    eps: float  # scale of the symmetric start, Def. B.1
    lr: float  # learning rate
    steps: int  # optimizer steps
    members: int  # E independent models (each its own data stream and seed + e)
    batch: int  # fresh prompts per member per step
    log_every: int  # (omega, mu) and validation loss logged every this many steps
    seed: int  # seed of member 0
    validation_batch: int = 1024  # fixed validation prompts per member

    # its cache name, and the version of the code making it: bump it when a change can alter
    # what `make` returns (`validation.cache.producers`; tests/validation/test_cache_versions.py)
    ARTEFACT: ClassVar[str] = "two-head-train"
    ARTEFACT_VERSION: ClassVar[int] = 1

    def make(self, device="cpu", checkpoint_dir=None, progress=False, deadline=None, inputs=()):
        """`train_two_head` of this training (the artefact protocol of `validation.Runtime`)."""
        return train_two_head(self, device, checkpoint_dir, deadline)

    def load(self, arrays: Mapping[str, np.ndarray]) -> TwoHeadHistory:
        return TwoHeadHistory.from_arrays(arrays)


@dataclass(frozen=True)
class TwoHeadHistory:
    """Head 1 of E trained two-head models at R records (the start included), float64.

    Attributes:
        t: (R,) t = lr * step, from 0.
        omega, mu: (R, E) effective KQ scale and OV weight of head 1 (head 2 mirrors it).
        loss: (R, E) loss on each member's validation prompts (NaN at t = 0).
    """

    t: np.ndarray
    omega: np.ndarray
    mu: np.ndarray
    loss: np.ndarray

    def arrays(self) -> dict[str, np.ndarray]:
        """The attributes by name (for storage); `from_arrays` inverts it."""
        return {field.name: getattr(self, field.name) for field in fields(self)}

    @classmethod
    def from_arrays(cls, arrays: Mapping[str, np.ndarray]) -> TwoHeadHistory:
        return cls(**{field.name: np.asarray(arrays[field.name]) for field in fields(cls)})

    def nearest(self, times) -> np.ndarray:
        """Indices of the records nearest to the flow times `times`, shape (n,)."""
        return np.array([int(np.argmin(np.abs(self.t - t))) for t in np.atleast_1d(times)])

    def log_mean(self, name: str, times) -> tuple[np.ndarray, np.ndarray]:
        """ln of the ensemble mean of `name` ("omega" or "mu") at the records nearest to
        `times`, with its delta-method standard error SE(mean) / mean; each shape (n,).

        >>> history = TwoHeadHistory(t=np.array([0.0, 1.0]), omega=np.array([[1.0, 1.0],
        ...     [2.0, 4.0]]), mu=np.ones((2, 2)), loss=np.ones((2, 2)))
        >>> value, se = history.log_mean("omega", [0.9])
        >>> round(float(np.exp(value[0])), 6), round(float(se[0]), 6)  # mean 3, SE 1
        (3.0, 0.333333)
        """
        values = getattr(self, name)[self.nearest(times)]  # (n, E)
        mean = values.mean(axis=1)
        se = values.std(axis=1, ddof=1) / math.sqrt(values.shape[1])
        return np.log(mean), se / mean


def train_two_head(
    training: TwoHeadTraining,
    device: str = "cpu",
    checkpoint_dir: str | Path | None = None,
    deadline: float | None = None,
) -> TwoHeadHistory:
    """Train the E models of ``training`` from Def. B.1; head 1's (omega, mu) history.

    With ``checkpoint_dir`` the trainer checkpoints there (``train.pt``, every 10 records)
    and a later call with the same folder resumes from it.

    >>> training = TwoHeadTraining(d=2, L=8, sigma2=0.1, optimizer="sgd", eps=0.02, lr=0.02,
    ...     steps=20, members=2, batch=16, log_every=10, seed=0, validation_batch=64)
    >>> history = train_two_head(training)
    >>> history.t.tolist(), history.omega.shape, float(history.mu[0, 0])
    ([0.0, 0.2, 0.4], (3, 2), 0.02)
    """
    config = TrainConfig(
        optimizer=training.optimizer,
        lr=training.lr,
        batch=training.batch,
        steps=training.steps,
        seed=training.seed,
        validation_batch=training.validation_batch,
        log_every=training.log_every,
        checkpoint_every=training.log_every * 10,
        device=device,
    )
    model = AttentionConfig(
        d=training.d, heads=2, ensemble=training.members, init="symmetric", init_scale=training.eps
    )
    folder = Path(checkpoint_dir) if checkpoint_dir is not None else None
    result = train(
        model,
        LinearRegressionTask(training.d, training.L, training.sigma2),
        config,
        checkpoint_path=folder / "train.pt" if folder else None,
        resume=folder is not None,
        progress=False,
        deadline=deadline,
    )
    history, start = result.history, np.full((1, training.members), training.eps)
    return TwoHeadHistory(
        t=np.concatenate([[0.0], history.steps * training.lr]),
        omega=np.concatenate([start, history.omega[:, :, 0]]),
        mu=np.concatenate([start, history.mu[:, :, 0]]),
        loss=np.concatenate([np.full((1, training.members), np.nan), history.test_loss]),
    )
