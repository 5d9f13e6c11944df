"""CZZ-G-CORRELATED of Chen, Zhao, Zou (2024) App. G (Figure 11): with correlated covariates,
x ~ N(0, I + zeta 11^T), trained encoders still use every head in layer 1 and one head in each
later layer.

The models: the encoders of `_encoders` trained with the same recipe on covariates of
covariance I + zeta 11^T (`icl_verify.covariance.equicorrelated_covariance`; zeta in
{0, 0.1, 0.2, 0.4}, (h, L) in {4, 8} x {3, 4} at the paper's size; zeta = 0 is the main claims'
setting, read from the same cache). The measurement, rules and gate are CZZ-IMPORTANCE's
(`_importance`), one setting per (zeta, h, L): W (3.1) by masking at n = 10 on prompts of the
same design, effective heads per layer, share of heads used 1 ± 1/2 in layer 1 and 0 ± 1/2 later;
the gate compares the h_max models with tuned ridge on the same correlated prompts (the
excess risks in the Sigma-norm).

This Sigma is not diagonal, so it lies outside the theory's assumption (Chen et al. §5: Sigma
diagonal, which makes r = Sigma w* vanish off the support); the claim is the paper's empirical
generality claim only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from icl_verify.validation.claim import Claim, FigureRef, Source
from icl_verify.validation.claims.chen2024 import PAPER, _importance
from icl_verify.validation.claims.chen2024.trained_importance import ImportanceParams
from icl_verify.validation.estimates import Measurement, Prediction
from icl_verify.validation.paper_figures import PaperFigure
from icl_verify.validation.params import param


@dataclass(frozen=True, kw_only=True)
class CorrelatedParams(ImportanceParams):
    """CZZ-G-CORRELATED: the designs and the (h, L) read at each."""

    zetas: tuple[float, ...] = param(
        help="ζ of Σ = I + ζ 11ᵀ, one design each (the paper: 0, 0.1, 0.2, 0.4)", low=0
    )
    heads: tuple[int, ...] = param(
        help="numbers of heads h > 1 read, at every depth", low=1, role="heads"
    )

    READS_ONE_HEAD: ClassVar[bool] = False

    def trainings(self) -> tuple:
        """A setting per (h, L, ζ): rows (h, L), columns ζ, as Figure 11."""
        return tuple(
            self.training(h, layers=L, zeta=zeta)
            for L in self.layers for h in self.heads for zeta in self.zetas
        )  # fmt: skip


def predict_correlated(params: CorrelatedParams) -> Prediction:
    """As CZZ-IMPORTANCE at every design: share of heads used 1 in layer 1, 0 later."""
    return _importance.predict_importance(params.trainings())


def measure_correlated(params: CorrelatedParams, runtime) -> Measurement:
    """`_importance.measure_importance` per (h, L, ζ), a gate per (L, ζ)."""
    return _importance.measure_importance(params, runtime, params.trainings())


CORRELATED_PRESETS = CorrelatedParams.presets(
    smoke=dict(zetas=(0.0, 0.4), heads=(2,), n_prompts=128, bootstrap=100),
    quick=dict(zetas=(0.0, 0.4), heads=(4,), n_prompts=1024),  # zeta = 0: CZZ-IMPORTANCE's
    paper=dict(zetas=(0.0, 0.1, 0.2, 0.4), heads=(4, 8), layers=(3, 4), n_prompts=8192),
)

CLAIM_CORRELATED = Claim(
    id="CZZ-G-CORRELATED",
    source=Source(PAPER, "App. G; Figure 11"),
    statement="With correlated covariates x ~ N(0, I + ζ11ᵀ), ζ up to 0.4 (outside the "
    "theory's diagonal Σ), trained encoders keep the head pattern: every head in layer 1, one "
    "head in each later layer.",
    params=CorrelatedParams,
    presets=CORRELATED_PRESETS,
    predict=predict_correlated,
    measure=measure_correlated,
    checks=_importance.checks_importance,
    figure=FigureRef("icl_verify.figures.trained_encoders", "figure_importance"),
    table=_importance.table_importance,
    wrong=_importance.one_head_everywhere,
    summary=(
        "encoders trained on x ~ N(0, I + ζ11ᵀ); W (3.1) by masking at n = 10 per (ζ, h, L): "
        "share of heads used 1 ± ½ in layer 1, 0 ± ½ later, gated per design on "
        "beating tuned ridge"
    ),
    catalogue=(2, 7),
    paper_figures=(
        PaperFigure(
            11,
            ("CZZ-G-CORRELATED",),
            FigureRef("icl_verify.figures.trained_encoders", "figure_importance"),
            "head heat maps, correlated design: columns ζ in {0, .1, .2, .4}, rows (h, L) in "
            "{(4, 3), (8, 3), (4, 4), (8, 4)}, averaged over σ",
            "CZZ-G-CORRELATED's figure: a panel per (ζ, h, L) of the preset",
        ),
    ),
)

CLAIMS = (CLAIM_CORRELATED,)
