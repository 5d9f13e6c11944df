"""CZZ-IMPORTANCE of Chen, Zhao, Zou (2024) §3, App. B (eq. (3.1), Figures 1c, 4): in trained
encoders layer 1 uses every head and each later layer one.

The measurement, rules and gate are `_importance`'s, read for the h > 1 encoders of `_encoders`
(one setting per (h, L), the gate per depth): W (3.1) by masking each head at n = 10, q = 1;
effective heads 1/ΣW² per layer, mean over the models with a bootstrap SE, as the share of heads
used (1/ΣW² − 1)/(h − 1): layer 1 at 1 and every later layer at 0, within 1/2 (halfway to "every
layer uses one head", the wrong prediction the rules reject where they confirm the paper).
Reported beside: App. B's sorted average, every model's unsorted matrix and the share of single
models showing the pattern. Judged only for models in the paper's regime.
"""

from __future__ import annotations

from dataclasses import dataclass

from icl_verify.validation.claim import Claim, FigureRef, Source
from icl_verify.validation.claims.chen2024 import PAPER, _importance
from icl_verify.validation.claims.chen2024._encoders import (
    EncoderParams,
)
from icl_verify.validation.estimates import Prediction
from icl_verify.validation.paper_figures import PaperFigure
from icl_verify.validation.params import param


@dataclass(frozen=True, kw_only=True)
class ImportanceParams(EncoderParams):
    """CZZ-IMPORTANCE: the masking prompts and the bootstrap."""

    n_prompts: int = param(
        help="prompts per member (n = 10, q = 1; the paper: 8192)", low=2, role="count"
    )
    bootstrap: int = param(2000, help="bootstrap resamples of the models", low=10, role="count")

    EVALUATED = ("n_prompts",)

    def trainings(self) -> tuple:
        """The h > 1 models only, a setting per (h, L), h first (rows h, columns L as in
        Figure 4): listed before CZZ-HEADS in the catalogue, it starts their training while
        CZZ-HEADS trains h = 1 on another worker (`runner.schedule`)."""
        return tuple(
            self.training(h, layers=L) for h in self.heads if h > 1 for L in self.layers
        )


def predict_importance(params: ImportanceParams) -> Prediction:
    """Layer 1 uses every head (share 1), each later layer one (share 0), per h > 1."""
    return _importance.predict_importance(params.trainings())


def measure_importance(params: ImportanceParams, runtime):
    """Per h > 1: W (3.1) of every model on the same prompts, effective heads per layer."""
    return _importance.measure_importance(params, runtime, params.trainings())


IMPORTANCE_PRESETS = ImportanceParams.presets(
    smoke=dict(n_prompts=128, bootstrap=100),
    quick=dict(n_prompts=1024),
    paper=dict(n_prompts=8192),  # reference §2.3
)

CLAIM_IMPORTANCE = Claim(
    id="CZZ-IMPORTANCE",
    source=Source(PAPER, "3, App. B", "(3.1); Figures 1c, 4"),
    statement="In trained encoders, masking heads shows layer 1 using all its heads (effective "
    "number 1/ΣW² near h) and every later layer dominated by one head (near 1).",
    params=ImportanceParams,
    presets=IMPORTANCE_PRESETS,
    predict=predict_importance,
    measure=measure_importance,
    checks=_importance.checks_importance,
    figure=FigureRef("icl_verify.figures.trained_encoders", "figure_importance"),
    table=_importance.table_importance,
    wrong=_importance.one_head_everywhere,
    summary=(
        "W (3.1) by masking each head at n = 10; effective heads 1/ΣW² per layer, mean over "
        "models with a bootstrap SE: share of heads used 1 ± ½ in layer 1, 0 ± ½ later; App. B's "
        "sorted average, every model's matrix, the share of single models with the pattern"
    ),
    catalogue=(2, 1),
    paper_figures=(
        PaperFigure(
            4,
            ("CZZ-IMPORTANCE",),
            FigureRef("icl_verify.figures.trained_encoders", "figure_importance"),
            "W_avg heat maps (rows sorted, averaged over σ): rows h in {4, 8}, columns L in "
            "{3, 4, 5, 6}",
            "CZZ-IMPORTANCE's figure: a panel per (h, L) of the preset, rows h, columns L",
        ),
    ),
)

CLAIMS = (CLAIM_IMPORTANCE,)
