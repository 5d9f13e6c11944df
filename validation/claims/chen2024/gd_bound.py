"""CZZ-T5.2: Theorem 5.2 of Chen, Zhao, Zou (2024) §5, App. E (plain GD), reference `chen2024.md`
§4.2, §4.5; the setting, its parameters and the bound on the n grid in `_tuned_gd`.

The oracle-tuned excess risk of plain GD (`numerics.tuned_gd`) against ``log t sqrt(sigma^2
Tr(Sigma) log(d/delta)/n)`` (`theory.theorem_5_2_bound`). Figure:
`figures.sparse_bounds`.
"""

from __future__ import annotations

from icl_verify.validation.claim import Check, Claim, FigureRef, Source
from icl_verify.validation.claims.chen2024 import PAPER
from icl_verify.validation.claims.chen2024._tuned_gd import (
    PRESETS,
    UpperBoundParams,
    bound_5_2,
    bound_prediction,
    faster_bound,
    risk_estimate,
    trend_rule,
    tuned_draws,
    tuning_data,
)
from icl_verify.validation.estimates import Measurement, Prediction


def predict_5_2(params: UpperBoundParams) -> Prediction:
    """Theorem 5.2's bound."""
    return bound_prediction(bound_5_2(params))


def measure_5_2(params: UpperBoundParams, runtime) -> Measurement:
    """Tuned plain-GD risks per n."""
    tuned = [draw.gd for draw in tuned_draws(params, runtime, "gd", ("gd",))]
    return Measurement(
        values={"risk": risk_estimate(tuned)},
        figure_data=tuning_data(params, tuned, bound_5_2(params)),
    )


def checks_5_2(params: UpperBoundParams) -> tuple[Check, ...]:
    return (
        Check(
            "risk", trend_rule(params, "Theorem 5.2"), "tuned GD risk vs log t √(σ²TrΣ log(d/δ)/n)"
        ),
    )


CLAIM_T52 = Claim(
    id="CZZ-T5.2",
    source=Source(PAPER, "5, Thm 5.2, App. E"),
    statement="Plain GD with η ≲ 1/‖Σ‖ and η t ≍ (σ²Tr(Σ)log(d/δ)/n)^{−1/2} has excess "
    "risk ≲ log t √(σ²Tr(Σ)log(d/δ)/n).",
    params=UpperBoundParams,
    presets=PRESETS,
    predict=predict_5_2,
    measure=measure_5_2,
    checks=checks_5_2,
    figure=FigureRef("icl_verify.figures.sparse_bounds", "figure_theorem_5_2"),
    wrong=faster_bound,
    summary="tuned GD ≤ C log t √(σ² Tr Σ log(d/δ)/n)",
    catalogue=(4, 4),
)

CLAIMS = (CLAIM_T52,)
