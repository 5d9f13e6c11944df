"""CZZ-T5.1: Theorem 5.1 of Chen, Zhao, Zou (2024) §5, App. D (preprocess-then-GD), reference
`chen2024.md` §4.1, §4.5; the setting, its parameters and the bound on the n grid in
`_tuned_gd`.

The theorem's conclusion only: the oracle-tuned excess risk of pre-gd (`numerics.tuned_gd`)
against Theorem 5.1's full bound ``(log t / beta) sqrt(A)``
(`theory.theorem_5_1_bound`). Steps of its proof are claims of their own, with
verdicts of their own: the closed form (D.1)-(D.3) and its cross term (CZZ-D-CROSS,
`pre_gd_cross`), Lemmas D.4-D.7 and excess <= 2 (bias + variance) (CZZ-D4-7, `proof_lemmas`),
Lemmas D.1, D.2 (CZZ-D1, CZZ-D2, `lemmas`). Figure: `figures.sparse_bounds`.
"""

from __future__ import annotations

from icl_verify.validation.claim import Check, Claim, FigureRef, Source
from icl_verify.validation.claims.chen2024 import PAPER
from icl_verify.validation.claims.chen2024._tuned_gd import (
    PRESETS,
    UpperBoundParams,
    bound_5_1,
    bound_prediction,
    faster_bound,
    risk_estimate,
    trend_rule,
    tuned_draws,
    tuning_data,
)
from icl_verify.validation.estimates import Measurement, Prediction


def predict_5_1(params: UpperBoundParams) -> Prediction:
    """Theorem 5.1's bound."""
    return bound_prediction(bound_5_1(params))


def measure_5_1(params: UpperBoundParams, runtime) -> Measurement:
    """Tuned pre-gd risks per n."""
    tuned = [draw.pre_gd for draw in tuned_draws(params, runtime, "pre-gd", ("pre_gd",))]
    return Measurement(
        values={"risk": risk_estimate(tuned)},
        figure_data=tuning_data(params, tuned, bound_5_1(params)),
    )


def checks_5_1(params: UpperBoundParams) -> tuple[Check, ...]:
    return (Check("risk", trend_rule(params, "Theorem 5.1"), "tuned pre-gd risk vs (log t/β)√A"),)


CLAIM_T51 = Claim(
    id="CZZ-T5.1",
    source=Source(PAPER, "5, Thm 5.1, App. D"),
    statement="GD on Algorithm 1's preprocessed covariates, with η ≲ 1/‖RΣR‖ and "
    "η t ≍ A^{−1/2}/β, has excess risk ≲ (log t/β)√A, A = σ²Tr(RΣR)log(d/δ)/n + "
    "σ²s Tr(Σ)log²(d/δ)/n².",
    params=UpperBoundParams,
    presets=PRESETS,
    predict=predict_5_1,
    measure=measure_5_1,
    checks=checks_5_1,
    figure=FigureRef("icl_verify.figures.sparse_bounds", "figure_theorem_5_1"),
    wrong=faster_bound,
    summary="tuned pre-gd ≤ C (log t/β)√A",
    catalogue=(4, 3),
)

CLAIMS = (CLAIM_T51,)
