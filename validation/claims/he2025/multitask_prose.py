"""HE-5.4-MT-PROSE: HE-5.4-MT (`multitask`, He et al. 2025 §5.4, App. A.3) under the prose's data
model (Def. 5.1: one beta restricted to each support S_k) instead of the authors' code's (an
independent beta^(k) per task): the same statement, predictions, rules and figures
(reference §8 item 6). What the two models give is in `multitask`'s docstring.
"""

from __future__ import annotations

import dataclasses

from icl_verify.validation.claim import Reconstructed
from icl_verify.validation.claims.he2025.multitask import (
    CLAIM_MT,
    PATTERN,
    PRESETS,
)

#: HE-5.4-MT's presets under the prose's data model.
PRESETS_PROSE = {name: dataclasses.replace(preset, shared_beta=True)
                 for name, preset in PRESETS.items()}  # fmt: skip

#: HE-5.4-MT under the prose's data model (Def. 5.1: one beta restricted to each S_k), the same
#: statement, predictions and rules. The two models differ in what the statement assumes: with
#: a shared beta, task k' labels carry information on task k's shared coefficients, so the
#: per-task optimum need not be support-restricted dGD on task k's labels alone, nor the label
#: block diagonal (5.8).
CLAIM_MT_PROSE = dataclasses.replace(
    CLAIM_MT,
    id="HE-5.4-MT-PROSE",
    source=dataclasses.replace(
        CLAIM_MT.source,
        reconstructed=(
            PATTERN,
            Reconstructed(
                "Def. 5.1's data model as the prose reads it, one β shared by the tasks",
                "HE-5.4-MT",
                "RECON",
            ),
        ),
    ),
    statement=CLAIM_MT.statement + " Read under the prose's data model: one coefficient vector "
    "shared by the tasks (restricted to each S_k), not the code's one per task.",
    presets=PRESETS_PROSE,
    summary="HE-5.4-MT under the prose's data model (one β shared by the tasks): the block "
    "pattern (5.8), modes, Γ_k and per-task risk",
    catalogue=(6, 12),
    paper_figures=(),
)

CLAIMS = (CLAIM_MT_PROSE,)
