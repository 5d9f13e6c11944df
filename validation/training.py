"""Parameters of the claims that read trained models (both papers' trained families).

`TrainedParams` is the one base of every trained claim: the optimiser's recipe the trainings
share, the trainings a claim reads from the artefact cache (`TrainedParams.trainings`, which a
run schedules by) and its presets as data (`TrainedParams.presets`: the family's shared presets
under the claim's own fields). He et al.'s ensembles build on it in
`validation.claims.he2025._ensembles`, Chen et al.'s encoders and decoders in
`validation.claims.chen2024._encoders`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from icl_verify.validation.params import Params, param


@dataclass(frozen=True, kw_only=True)
class TrainedParams(Params):
    """Parameters of a claim whose measurement reads trained models from the artefact cache:
    the optimiser's recipe every training of both papers shares. A family builds on it with its
    data model and architecture (He et al.'s ensembles, `claims.he2025._ensembles`; Chen et
    al.'s encoders and decoders, `claims.chen2024._encoders`), declares its presets' shared
    part as data (`SHARED_PRESETS`, read by `presets`) and says which trainings a claim reads
    (`trainings`, the keys of the cache; `Claim.trainings`).

    The training seed is part of the configuration (like a claim's ``design_seed``): ``--seed``
    changes only the measurements' Monte Carlo prompts, not which models are read.
    """

    lr: float = param(help="Adam learning rate (constant)", low=0, low_open=True)
    steps: int = param(help="Adam steps (online: fresh prompts every step)", low=1, role="count")
    train_seed: int = param(
        0,
        help="init seed of member 0 and of the training data (the models read, not --seed)",
        low=0, role="count",
    )
    checkpoint_every: int = param(
        help="checkpoint (resumable) every this many steps; 0 = only at the end", low=0,
        role="count"
    )

    TRAINS_MODELS = True
    #: The family's presets, shared by its claims: preset name -> field values (a field the
    #: class lacks is skipped: a family's shared members, say, which a claim replaces).
    SHARED_PRESETS: ClassVar[Mapping[str, Mapping[str, Any]]] = {}

    def trainings(self) -> tuple:
        """Every training the claim's measurement reads from the artefact cache (hashable
        keys, e.g. `numerics.EnsembleTraining`), which other claims may read too: a run
        trains each once, ahead of the claims that read it (`runner.schedule`)."""
        raise NotImplementedError(f"{type(self).__name__} must say which trainings it reads")

    @classmethod
    def presets(cls, **own: Mapping[str, Any]) -> dict[str, Params]:
        """The claim's presets: for each preset name, its family's `SHARED_PRESETS` (the
        fields this class has), then the claim's own fields ``own[name]`` (which may replace
        a shared one, e.g. fewer steps).

        >>> from icl_verify.validation.claims.he2025._ensembles import SharedEnsembleParams
        >>> presets = SharedEnsembleParams.presets(smoke={}, quick={}, paper={"d": 10})
        >>> presets["quick"].steps, presets["smoke"].heads, presets["paper"].d
        (10000, (1, 2, 2, 4), 10)
        """
        names = {f.name for f in dataclasses.fields(cls)}
        return {
            name: cls(**{k: v for k, v in shared.items() if k in names} | dict(own[name]))
            for name, shared in cls.SHARED_PRESETS.items()
        }
