"""The trained encoders that CZZ-HEADS, -IMPORTANCE, -PRUNE and -PPROBE read (Chen et al. App. B).

One training per number of heads h (`numerics.EncoderTraining`): an ensemble with one member
per (replicate, sigma); the paper trains one model per sigma in {0, 0.1, 0.2, 0.4, 0.8}
(reference chen2024 §2.1). Member e of every h's ensemble has the same noise level, so the
claims evaluate member e of each h on the same prompts (paired).

The four claims share `EncoderParams` and the presets of the training (`TRAINING_PRESETS`),
so they read the same cached trainings (``runtime.trained(training(params, h))``, keyed by the
training and the device, resumable from the trainer's checkpoint).

Presets (times on one core of this 2-core CPU, `benchmarks/encoder_size_study.py`):

- smoke: d_hid 8, 2 layers, h in {1, 2}, 60 steps: seconds, the code path only;
- quick: the study's smallest setting that reaches the paper's regime in a few minutes;
- paper: d_hid 256, 4 layers, h in {1, 2, 4, 8}, lr 1e-4, batch 64, 320k steps (a GPU: the
  paper's ~2 h per model on an RTX 4090; 229 ms per member-step on one CPU core).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import numpy as np
from icl_verify.validation.params import ParameterError, Params, param

from icl_verify import numerics

PAPER_SIGMAS = (0.0, 0.1, 0.2, 0.4, 0.8)  # noise standard deviations, one model each
EVAL_N = 10  # the paper's evaluation prompts for head assessment and probing: n = 10, q = 1


@dataclass(frozen=True, kw_only=True)
class EncoderParams(Params):
    """The trained encoders: data model, architecture, members and Adam (reference §2.1)."""

    d: int = param(16, help="covariate dimension d", low=1)
    s: int = param(4, help="sparsity s: non-zero coordinates of w* (N(0, 1) each)", low=1)
    n_train: int = param(12, help="labelled examples per training prompt", low=1)
    q_train: int = param(4, help="queries per training prompt (the loss is on them)", low=1)
    d_hid: int = param(help="hidden width (each head has d_hid / h dimensions)", low=1)
    layers: int = param(help="encoder blocks", low=1)
    heads: tuple[int, ...] = param(
        help="numbers of heads h trained, one ensemble each (1 must be among them)", low=1
    )
    sigmas: tuple[float, ...] = param(
        help="label-noise standard deviations, one model each per replicate", low=0
    )
    replicates: int = param(help="independent models (init seeds, data) per sigma", low=1)
    lr: float = param(help="Adam learning rate (constant)", low=0, low_open=True)
    steps: int = param(help="Adam steps on fresh prompts", low=1)
    batch: int = param(64, help="prompts per member per step", low=1)
    train_seed: int = param(0, help="init seed of member 0 (the models read, not --seed)", low=0)
    checkpoint_every: int = param(help="checkpoint every this many steps; 0 = at the end", low=0)
    n_regime: int = param(
        help="prompts per member tuning ridge, and as many judging the regime gate of the claims",
        low=2,
    )

    def validate(self) -> None:
        if self.s > self.d:
            raise ParameterError(f"s must be an integer in [1, d={self.d}], got {self.s}")
        for h in self.heads:
            if self.d_hid % h:
                raise ParameterError(f"heads must divide d_hid = {self.d_hid}, got {h}")
        if 1 not in self.heads or len(set(self.heads)) < 2:
            raise ParameterError(
                f"heads must list 1 and at least one h > 1, got {list(self.heads)}"
            )
        if tuple(sorted(set(self.heads))) != tuple(self.heads):
            raise ParameterError(f"heads must be increasing, got {list(self.heads)}")

    @property
    def member_sigmas(self) -> tuple[float, ...]:
        return tuple(float(s) for s in self.sigmas) * self.replicates


TRAINING_PRESETS: dict[str, dict[str, Any]] = {
    "smoke": dict(
        d_hid=8, layers=2, heads=(1, 2), sigmas=(0.1,), replicates=2, lr=1e-3, steps=60,
        batch=16, checkpoint_every=30, n_regime=32,
    ),
    "quick": dict(
        d_hid=32, layers=3, heads=(1, 4), sigmas=(0.1,), replicates=3, lr=1e-3, steps=8000,
        checkpoint_every=1000, n_regime=256,
    ),
    "paper": dict(
        d_hid=256, layers=4, heads=(1, 2, 4, 8), sigmas=PAPER_SIGMAS, replicates=1, lr=1e-4,
        steps=320_000, checkpoint_every=10_000, n_regime=1024,
    ),
}  # fmt: skip


def encoder_presets(params: type[EncoderParams], **own: dict[str, Any]) -> dict[str, Params]:
    """A claim's presets: the shared training of `TRAINING_PRESETS` plus its own fields."""
    return {name: params(**TRAINING_PRESETS[name], **own[name]) for name in TRAINING_PRESETS}


def training(params: EncoderParams, heads: int) -> numerics.EncoderTraining:
    """The training of the h = ``heads`` ensemble of ``params``.

    >>> from icl_verify.validation.claims.chen2024.trained import CLAIMS
    >>> len({t for c in CLAIMS for t in c.trains(c.presets["quick"])})  # shared by the claims
    2
    """
    fields = {f.name: getattr(params, f.name) for f in dataclasses.fields(EncoderParams)}
    return numerics.EncoderTraining(
        d=fields["d"], s=fields["s"], n=fields["n_train"], q=fields["q_train"],
        d_hid=fields["d_hid"], heads=heads, layers=fields["layers"],
        sigmas=tuple(fields["sigmas"]), replicates=fields["replicates"], lr=fields["lr"],
        steps=fields["steps"], batch=fields["batch"], seed=fields["train_seed"],
        log_every=max(fields["steps"] // 40, 1), checkpoint_every=fields["checkpoint_every"],
    )  # fmt: skip


def all_trainings(params: EncoderParams) -> tuple[numerics.EncoderTraining, ...]:
    """``Claim.trains`` of a claim reading every h: one training per h."""
    return tuple(training(params, h) for h in params.heads)


def evaluation_prompts(
    params: EncoderParams, runtime, count: int, n: int, q: int, stream: int, seed=None
):
    """``count`` prompts per member (member e with its noise level), the same for every h: the
    prompts, their tokens (E, count, n + q, d + 1) and the noiseless query labels (E, count, q),
    from ``seed`` (default: the claim's run seed) and ``stream`` (independent streams for
    independent uses)."""
    import torch

    seed = runtime.seed if seed is None else seed
    generator = torch.Generator().manual_seed((seed * 1009 + stream) % 2**62)
    prompts, tokens, clean = numerics.member_prompts(
        params.member_sigmas, count, d=params.d, n=n, s=params.s, q=q, generator=generator
    )
    return prompts, tokens.to(runtime.device), clean.to(runtime.device)


def per_sigma(values: np.ndarray, params: EncoderParams) -> np.ndarray:
    """Member values (E, ...) averaged over replicates: (len(sigmas), ...); member
    ``r * len(sigmas) + k`` has noise ``sigmas[k]``."""
    values = np.asarray(values, dtype=float)
    return values.reshape(params.replicates, len(params.sigmas), *values.shape[1:]).mean(axis=0)
