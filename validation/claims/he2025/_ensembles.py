"""He et al.'s trained ensembles (§3, reference §0.5): the training every trained claim of the
paper reads, and the one that HE-OBS1..4 share.

HE-OBS1..4 (and HE-MAN part (ii), read in HE-OBS2) read one trained ensemble,
`numerics.train_ensemble`: E one-layer softmax-attention models trained online with Adam at
d = 5, L = 40, σ² = 0.1, member e with ``heads[e]`` heads and init seed ``train_seed + e``.
Their parameters share `SharedEnsembleParams`, and each claim's class adds its own fields; the
presets of the training (`ENSEMBLE_PRESETS`, the family's `TrainedParams.SHARED_PRESETS`) are
the same for the four claims.

Claims that train other members or another attention (He et al. §5: linear attention,
normalised activations, KMS covariates, multi-task prompts) take `EnsembleParams`, the same
training without ``heads``, and name their members, attention and data to
`EnsembleParams.training`; HE-ROBUST, which sweeps the batch and the optimiser, takes
`OnlineTrainingParams`.

A training is one cached artefact (``runtime.trained(params.training())``,
`validation.runtime.Runtime.trained`): its key is exactly the training's fields (as
`numerics.EnsembleTraining`) and the device, since float32 results differ across devices. So
the four claims share it, a rerun reuses it, a ``--set`` of a claim's own field
(``--set n_prompts=...``) keeps it, a ``--set`` of a training field (``--set steps=2000``)
trains anew, and a killed run resumes from the trainer's checkpoint.

On the CPU the training runs with one torch thread, as every claim does (the executor's policy,
`validation.executors`): a run keeps every core busy with claims of its own, and on a loaded
2-core machine two threads measured >10x slower than one. (On an idle one, the paper preset's
training ran 1.5x faster on two threads than on one: 6.9 against 10.3 ms per step,
`benchmarks/paper_training_cost.py`.)
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, ClassVar

from icl_verify.validation.params import ParameterError, SettingParams, param
from icl_verify.validation.training import TrainedParams

from icl_verify import numerics

MIN_LOGS = 12  # the noise and drift estimates (numerics._he2025.settling) read quarters of the logs

# Member e has heads[e] heads and init seed e. Quick: Adam lr 3e-3 reaches the paired regime
# early (lr 1e-2 left ω higher; 1e-3 is the paper's, for 500k steps); logs every 25 steps
# resolve the early rise of |ω| (it peaks within the first few hundred steps).
ENSEMBLE_PRESETS: dict[str, dict[str, Any]] = {
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


@dataclass(frozen=True, kw_only=True)
class OnlineTrainingParams(TrainedParams, SettingParams):
    """He et al.'s online training (§3): the data model (d, L, σ²), the optimiser's recipe and
    the logs the read-outs use (ω_h, μ_h, circuits and the loss)."""

    log_every: int = param(
        help="ω_h, μ_h, circuits and loss logged every this many steps", low=1, role="count"
    )
    validation_batch: int = param(help="fixed validation prompts per member", low=1, role="held")

    SHARED_PRESETS: ClassVar = ENSEMBLE_PRESETS

    def validate(self) -> None:
        super().validate()
        if self.steps < MIN_LOGS * self.log_every:
            raise ParameterError(
                f"steps must be >= {MIN_LOGS} x log_every (the noise and drift estimates read "
                f"quarters of the logs), got steps={self.steps}, log_every={self.log_every}"
            )

    def training(self, heads: tuple[int, ...], **options) -> numerics.EnsembleTraining:
        """The training of members with ``heads`` (member e: ``heads[e]`` heads, init seed
        ``train_seed + e``) under these parameters; ``options`` set the other fields of
        `numerics.EnsembleTraining`, or replace one (a grid's learning rate): the batch, the
        attention ("softmax", "linear" or an activation spec of `icl_verify.activations`), the
        data (KMS covariates of correlation ``rho``, §HE-5.3; multi-task ``supports`` and
        ``shared_beta``, §HE-5.4-MT, where σ² is the relative noise) and the optimiser
        (HE-ROBUST)."""
        recipe = {f.name: getattr(self, f.name) for f in dataclasses.fields(OnlineTrainingParams)}
        recipe["seed"] = recipe.pop("train_seed")
        return numerics.EnsembleTraining(**(recipe | {"heads": tuple(heads)} | options))


@dataclass(frozen=True, kw_only=True)
class EnsembleParams(OnlineTrainingParams):
    """How the trained-model claims train: `OnlineTrainingParams` at one batch size."""

    batch: int = param(help="prompts per member per Adam step", low=1, role="held")

    def training(self, heads: tuple[int, ...], **options) -> numerics.EnsembleTraining:
        return super().training(heads, batch=self.batch, **options)


@dataclass(frozen=True, kw_only=True)
class SharedEnsembleParams(EnsembleParams):
    """The shared softmax ensemble of HE-OBS1..4: `EnsembleParams` and each member's heads.

    >>> from icl_verify.validation.registry import select_claims
    >>> claims = select_claims(["HE-OBS1", "HE-OBS2", "HE-OBS3", "HE-OBS4"])
    >>> len({claim.presets["quick"].training() for claim in claims})  # one shared training
    1
    """

    heads: tuple[int, ...] = param(
        help="heads of each ensemble member: member e has heads[e] heads and init seed "
        "train_seed + e",
        low=1, role="heads",
    )

    def training(self, heads: tuple[int, ...] | None = None, **options):
        """The training of the members ``heads`` (default: this ensemble's)."""
        return super().training(self.heads if heads is None else heads, **options)

    def trainings(self) -> tuple[numerics.EnsembleTraining]:
        return (self.training(),)


def check_trained_heads(params: SharedEnsembleParams, name: str) -> None:
    """ParameterError unless every H listed in the field ``name`` is among the trained heads."""
    missing = sorted(set(getattr(params, name)) - set(params.heads))
    if missing:
        raise ParameterError(
            f"{name} must list numbers of heads that are trained (heads: "
            f"{sorted(set(params.heads))}), got {list(getattr(params, name))}"
        )
