"""The one training that every trained-model claim reads (He et al. 2025 §3, reference §0.5).

HE-OBS1..4 (and HE-MAN part (ii), read in HE-OBS2) read one trained ensemble,
`numerics.train_ensemble`: E one-layer softmax-attention models trained online with Adam at
d = 5, L = 40, sigma2 = 0.1, member e with ``heads[e]`` heads and init seed ``train_seed + e``.
Their parameters share `TrainedParams`, the training's fields, and each claim's class adds its
own; the presets of the training (`TRAINING_PRESETS`) are the same for the four claims.

Claims that train other members or another attention (He et al. §5: linear attention,
normalised activations) take `TrainingParams`, the same training without ``heads``, and name
their members and attention to `training`.

The training is one cached artefact (``runtime.trained(training(params))``,
`validation.runtime.Runtime.trained`): its key is exactly the training's fields (as
`numerics.EnsembleTraining`) and the device, since float32 results differ across devices. So
the four claims share it, a rerun reuses it, a ``--set`` of a claim's own field
(``--set n_prompts=...``) keeps it, a ``--set`` of a training field (``--set steps=2000``)
trains anew, and a killed run resumes from the trainer's checkpoint. The training seed is part of
the configuration (like a claim's ``design_seed``): ``--seed`` changes only the measurements'
Monte Carlo prompts, not which models are read.

On the CPU the training runs with one torch thread, as every claim does (the executor's policy,
`validation.executors`): a run keeps every core busy with claims of its own, and on a loaded
2-core machine two threads measured >10x slower than one. (On an idle one, the paper preset's
training ran 1.5x faster on two threads than on one: 6.9 against 10.3 ms per step,
`benchmarks/paper_training_cost.py`.)
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from icl_verify.validation.params import ParameterError, Params, SettingParams, param

from icl_verify import numerics

MIN_LOGS = 12  # the noise and drift estimates (numerics._he2025.settling) read quarters of the logs


@dataclass(frozen=True, kw_only=True)
class TrainingParams(SettingParams):
    """How the trained-model claims train: the data model (d, L, σ²), Adam and the logs."""

    lr: float = param(help="Adam learning rate", low=0, low_open=True)
    steps: int = param(help="Adam steps (online: fresh prompts every step)", low=1, role="count")
    batch: int = param(help="prompts per member per Adam step", low=1, role="held")
    train_seed: int = param(
        0,
        help="init seed of member 0 and of the training data (the models read, not --seed)",
        low=0, role="count",
    )
    log_every: int = param(
        help="ω_h, μ_h, circuits and loss logged every this many steps", low=1, role="count"
    )
    checkpoint_every: int = param(
        help="checkpoint (resumable) every this many steps; 0 = only at the end", low=0,
        role="count"
    )
    validation_batch: int = param(help="fixed validation prompts per member", low=1, role="held")

    def validate(self) -> None:
        if self.steps < MIN_LOGS * self.log_every:
            raise ParameterError(
                f"steps must be >= {MIN_LOGS} x log_every (the noise and drift estimates read "
                f"quarters of the logs), got steps={self.steps}, log_every={self.log_every}"
            )


@dataclass(frozen=True, kw_only=True)
class TrainedParams(TrainingParams):
    """The shared softmax ensemble of HE-OBS1..4: `TrainingParams` and each member's heads."""

    heads: tuple[int, ...] = param(
        help="heads of each ensemble member: member e has heads[e] heads and init seed "
        "train_seed + e",
        low=1, role="heads",
    )


# Member e has heads[e] heads and init seed e. Quick: Adam lr 3e-3 reaches the paired regime in
# ~3k steps (lr 1e-2 left omega higher at 3k steps; 1e-3 is the paper's, for 500k steps); logs
# every 25 steps resolve the early rise of |omega| (it peaks within the first few hundred steps).
TRAINING_PRESETS: dict[str, dict[str, Any]] = {
    "smoke": dict(
        heads=(1, 2, 2, 4),
        lr=1e-2,
        steps=300,
        batch=128,
        log_every=10,
        checkpoint_every=100,
        validation_batch=512,
    ),
    "quick": dict(
        heads=(1, 1, 2, 2, 2, 2, 3, 3, 4, 4, 4, 8),
        lr=3e-3,
        steps=10_000,
        batch=256,
        log_every=25,
        checkpoint_every=1000,
        validation_batch=1024,
    ),
    "paper": dict(
        heads=(1, 1, 2, 2, 2, 2, 3, 3, 4, 4, 4, 8, 8),
        lr=1e-3,
        steps=500_000,
        batch=256,
        log_every=1000,
        checkpoint_every=10_000,
        validation_batch=4096,
    ),  # reference §0.5
}


def check_trained_heads(params: TrainedParams, name: str) -> None:
    """ParameterError unless every H listed in the field ``name`` is among the trained heads."""
    missing = sorted(set(getattr(params, name)) - set(params.heads))
    if missing:
        raise ParameterError(
            f"{name} must list numbers of heads that are trained (heads: "
            f"{sorted(set(params.heads))}), got {list(getattr(params, name))}"
        )


def trained_presets(params: type[TrainingParams], **own: dict[str, Any]) -> dict[str, Params]:
    """A trained claim's presets: the shared training of `TRAINING_PRESETS` plus its own fields.

    A class without ``heads`` (its claim sets its own members) takes the rest of the training;
    a claim's own fields may also replace a training field (e.g. fewer steps).

    >>> presets = trained_presets(TrainedParams, smoke={}, quick={}, paper={"d": 10})
    >>> presets["quick"].steps, presets["smoke"].heads, presets["paper"].d
    (10000, (1, 2, 2, 4), 10)
    """
    names = {f.name for f in dataclasses.fields(params)}
    return {
        name: params(**{k: v for k, v in TRAINING_PRESETS[name].items() if k in names} | own[name])
        for name in TRAINING_PRESETS
    }


def training(
    params: TrainingParams,
    heads: tuple[int, ...] | None = None,
    attention: str = "softmax",
    rho: float = 0.0,
    supports: tuple[tuple[int, ...], ...] = (),
    shared_beta: bool = False,
) -> numerics.EnsembleTraining:
    """The training of ``params``: its `TrainingParams` fields (train_seed as seed), the members'
    ``heads`` (default ``params.heads``), the attention ("softmax", "linear" or an activation
    spec of `icl_verify.activations`) and the data: KMS covariates of correlation ``rho``
    (§HE-5.3) or, with ``supports``, multi-task prompts (§HE-5.4-MT; sigma2 is then the
    relative noise; ``shared_beta``: one coefficient vector for all tasks).

    >>> from icl_verify.validation.registry import select_claims
    >>> claims = select_claims(["HE-OBS1", "HE-OBS2", "HE-OBS3", "HE-OBS4"])
    >>> len({training(claim.presets["quick"]) for claim in claims})  # one shared training
    1
    """
    fields = {f.name: getattr(params, f.name) for f in dataclasses.fields(TrainingParams)}
    fields["seed"] = fields.pop("train_seed")
    heads = params.heads if heads is None else tuple(heads)
    return numerics.EnsembleTraining(
        **fields, heads=heads, attention=attention, rho=rho, supports=supports,
        shared_beta=shared_beta,
    )  # fmt: skip


def default_training(params: TrainedParams) -> tuple[numerics.EnsembleTraining]:
    """``Claim.trains`` of a claim reading the shared ensemble of its `TrainedParams` alone.

    >>> from icl_verify.validation.claims.he2025.obs_patterns import CLAIM_OBS1
    >>> default_training(CLAIM_OBS1.presets["smoke"])[0].heads
    (1, 2, 2, 4)
    """
    return (training(params),)
