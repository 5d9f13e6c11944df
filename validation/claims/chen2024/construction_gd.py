"""CZZ-P4.2: the explicit GD layers of Chen, Zhao, Zou (2024) Prop. 4.2/C.2, eq. (4.3), on random
sizes (the design, the scale and the tolerance in `_constructions`).

Stacking t single-head GD layers on the layer of Prop. 4.1, the (t+1)-layer network predicts
``<w_tilde^t, R_hat x_{n+i}>`` at every query, all q queries in parallel; the read-out is
``W_O = -e_{d+1}`` (the paper's literal +e_{d+1} is the wrong prediction). Figure:
`figures.constructions` (its data: `figures.data.constructions`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from icl_verify.figures.data.constructions import GdLayersData
from icl_verify.theory import (
    absolute_evaluation,
    normalised_error_bound,
    preprocessed_gd_predictions,
)
from icl_verify.validation.claim import Check, Claim, FigureRef, Source
from icl_verify.validation.claims.chen2024 import PAPER
from icl_verify.validation.claims.chen2024._constructions import (
    PRECISIONS,
    Configuration,
    ConstructionParams,
    configuration_sizes,
    divide_by_scale,
    draw_configurations,
    rounding_tolerance,
    tolerance_bounds,
)
from icl_verify.validation.estimates import Estimate, Measurement, Prediction
from icl_verify.validation.params import check_order, param

from icl_verify import numerics


@dataclass(frozen=True, kw_only=True)
class GDConstructionParams(ConstructionParams):
    """CZZ-P4.2: as CZZ-P4.1, with t GD layers (uniform in [1, t_max]) and a step size η."""

    t_max: int = param(help="most GD layers t", low=1, role="length")
    eta_scale_min: float = param(
        0.1, help="smallest ρ = η t λ_abs (η's scale, see module)", low=0, low_open=True
    )
    eta_scale_max: float = param(2.0, help="largest ρ = η t λ_abs", low=0, low_open=True)

    def validate(self) -> None:
        super().validate()
        check_order(self, "eta_scale_min", "eta_scale_max")


PRESETS_42 = {
    "smoke": GDConstructionParams(n_configs=4, n_prompts=2, d_max=6, n_max=20, q_max=3, t_max=3),
    "quick": GDConstructionParams(
        n_configs=32, n_prompts=2, d_max=24, n_max=192, q_max=4, t_max=12
    ),
    "paper": GDConstructionParams(
        n_configs=100, n_prompts=2, d_max=32, n_max=256, q_max=8, t_max=20
    ),
}


def _prediction_scale(config: Configuration) -> np.ndarray:
    """f_abs of the predictions after 1..t GD layers: (B, t, q)."""
    return absolute_evaluation(config.X, config.y, config.X_query, config.eta, config.t)[1][:, 1:]


def predict_42(params: GDConstructionParams) -> Prediction:
    """``<w_tilde^l, R_hat x_{n+i}>`` after l = 1..t GD steps (`theory._constructions`) / f_abs."""
    configs = draw_configurations(params)
    scaled_, config, step = [], [], []
    for i, c in enumerate(configs):
        path = preprocessed_gd_predictions(c.X, c.y, c.X_query, c.eta, c.t)[:, 1:]  # (B, t, q)
        scaled_.append(divide_by_scale(path, _prediction_scale(c)).ravel())
        config.append(np.full(path.size, i))
        step.append(np.broadcast_to(np.arange(1, c.t + 1)[None, :, None], path.shape).ravel())
    values = np.concatenate(scaled_)
    d, n = max(c.d for c in configs), max(c.n for c in configs)
    steps = np.arange(1, params.t_max + 1)
    return Prediction(
        values={"predictions": values, "predictions_float32": values},
        figure_data=GdLayersData(
            config=np.concatenate(config).astype(float),
            step=np.concatenate(step).astype(float),
            sizes=configuration_sizes(configs),
            bound_steps=steps.astype(float),
            **{
                f"bound_{p}": np.array([normalised_error_bound(d, n, int(t), p) for t in steps])
                for p in PRECISIONS
            },
        ).to_record(),
    )


def measure_42(params: GDConstructionParams, runtime) -> Measurement:
    """The (t+1)-layer network's query read-outs after every GD layer, float64 and float32."""
    configs = draw_configurations(params)
    values = {}
    for precision, key in zip(PRECISIONS, ("predictions", "predictions_float32"), strict=True):
        outputs = [
            divide_by_scale(
                numerics.gd_layer_readouts(c.X, c.y, c.X_query, c.eta, c.t, precision),
                _prediction_scale(c),
            ).ravel()
            for c in runtime.progress(configs, f"networks ({precision})", len(configs))
        ]
        values[key] = Estimate(np.concatenate(outputs), 0.0, "bound")
    return Measurement(values=values)


def checks_42(params: GDConstructionParams) -> tuple[Check, ...]:
    bounds = tolerance_bounds(draw_configurations(params), params.t_max)
    return (
        Check(
            "predictions",
            rounding_tolerance(bounds["float64"], "float64", " and t = t_max"),
            "read-out −e_{d+1} after every GD layer vs <w̃^l, R̂x_{n+i}>, / f_abs (float64)",
        ),
        Check(
            "predictions_float32",
            rounding_tolerance(bounds["float32"], "float32", " and t = t_max"),
            "the same, network in float32",
        ),
    )


def _plus_readout(params: GDConstructionParams, prediction: Prediction) -> Prediction:
    """Wrong reading: the paper's literal read-out +e_{d+1}: minus the GD prediction."""
    return prediction.with_values(
        **{
            key: -np.asarray(prediction.values[key])
            for key in ("predictions", "predictions_float32")
        }
    )


CLAIM_P42 = Claim(
    id="CZZ-P4.2",
    source=Source(PAPER, "4, App. C.2", "Prop. 4.2/C.2, (4.3)"),
    statement="Stacking t single-head linear-attention layers (W_K = W_Q = diag(I_d, 0), W_V = "
    "−(η/n) at the label row d+1, W_1 = I) on the layer of Prop. 4.1 gives a (t+1)-layer network "
    "whose read-out W_O = −e_{d+1} (the sign the paper leaves implicit; +e_{d+1} returns the "
    "negated prediction) equals <w̃^t, R̂ x_{n+i}>, t steps of GD (4.3) on Algorithm 1's data, "
    "at all q queries in parallel, for any d, n, q, η, t: equal up to floating-point rounding.",
    params=GDConstructionParams,
    presets=PRESETS_42,
    predict=predict_42,
    measure=measure_42,
    checks=checks_42,
    figure=FigureRef("icl_verify.figures.constructions", "figure_gd"),
    wrong=_plus_readout,
    summary=(
        "t more one-head layers predict <w̃ᵗ, R̂ x_{n+i}> at every query, read out by "
        "−e_{d+1}; float64 and float32 against a stated rounding bound"
    ),
    catalogue=(3, 2),
)

CLAIMS = (CLAIM_P42,)
