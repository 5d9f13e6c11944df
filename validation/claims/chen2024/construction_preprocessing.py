"""CZZ-P4.1: the explicit preprocessing layer of Chen, Zhao, Zou (2024) Prop. 4.1/C.1, Eq. (4.2),
on random sizes (the design, the scale and the tolerance in `_constructions`).

One linear-attention layer with d heads of dim 3 (d_hid = 3d) outputs Algorithm 1's data: rows
1..d hold ``x_tilde = r_hat * x`` for the examples and the queries, row d+1 the labels with 0 at
the queries (compared at the first two and last two examples and every query,
`compared_columns`). Figure: `figures.constructions`.
"""

from __future__ import annotations

import numpy as np
from icl_verify.theory import absolute_evaluation, normalised_error_bound, preprocessed_prompt
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

from icl_verify import numerics

PRESETS_41 = {
    "smoke": ConstructionParams(n_configs=4, n_prompts=2, d_max=6, n_max=20, q_max=3),
    "quick": ConstructionParams(n_configs=32, n_prompts=1, d_max=24, n_max=192, q_max=4),
    "paper": ConstructionParams(n_configs=100, n_prompts=1, d_max=32, n_max=256, q_max=8),
}


def compared_columns(config: Configuration) -> np.ndarray:
    """The tokens CZZ-P4.1 compares: the first two and last two examples and every query.

    The layer applies one map to every example column (only the mask tells examples from
    queries), so these stand for all n; storing all n + q columns made results.json 200 MB at
    the paper preset.

    >>> config = draw_configurations(PRESETS_41["smoke"])[0]
    >>> columns = compared_columns(config)
    >>> bool(np.all(columns[-config.q :] == np.arange(config.n, config.n + config.q)))
    True
    """
    n = config.n
    examples = sorted({0, 1, n - 2, n - 1} & set(range(n)))
    return np.array(examples + list(range(n, n + config.q)))


def _layer_one(matrix: np.ndarray, config: Configuration) -> np.ndarray:
    """The compared part of a (B, d+1, m) layer-1 output, divided by f_abs, flattened."""
    f_abs = absolute_evaluation(config.X, config.y, config.X_query, config.eta, 0)[0]
    columns = compared_columns(config)
    return divide_by_scale(matrix[..., columns], f_abs[..., columns]).ravel()


def predict_41(params: ConstructionParams) -> Prediction:
    """Algorithm 1's prompt matrix (4.2) (`theory.preprocessed_prompt`) / f_abs,
    at the `compared_columns`."""
    configs = draw_configurations(params)
    scaled_ = [_layer_one(preprocessed_prompt(c.X, c.y, c.X_query), c) for c in configs]
    values = np.concatenate(scaled_)
    config = np.concatenate([np.full(v.size, i) for i, v in enumerate(scaled_)])
    bounds = {
        p: np.array([normalised_error_bound(c.d, c.n, 0, p) for c in configs]) for p in PRECISIONS
    }
    return Prediction(
        values={"layer1": values, "layer1_float32": values},
        figure_data={
            "config": config.astype(float),
            **configuration_sizes(configs).to_record(),
            "bound_float64": bounds["float64"],
            "bound_float32": bounds["float32"],
        },
    )


def measure_41(params: ConstructionParams, runtime) -> Measurement:
    """Layer 1 of the constructed network, float64 and float32, / f_abs (same f_abs as predict)."""
    configs = draw_configurations(params)
    values = {}
    for precision, key in zip(PRECISIONS, ("layer1", "layer1_float32"), strict=True):
        outputs = [
            _layer_one(numerics.preprocessing_layer_output(c.X, c.y, c.X_query, precision), c)
            for c in runtime.progress(configs, f"layer 1 ({precision})", len(configs))
        ]
        values[key] = Estimate(np.concatenate(outputs), 0.0, "bound")
    return Measurement(values=values)


def checks_41(params: ConstructionParams) -> tuple[Check, ...]:
    bounds = tolerance_bounds(draw_configurations(params), 0)
    return (
        Check(
            "layer1",
            rounding_tolerance(bounds["float64"], "float64", ""),
            "layer 1 rows 1..d+1 vs (x̃; y, 0) of Alg. 1, / f_abs (float64)",
        ),
        Check(
            "layer1_float32",
            rounding_tolerance(bounds["float32"], "float32", ""),
            "the same, network in float32",
        ),
    )


def _raw_queries(params: ConstructionParams, prediction: Prediction) -> Prediction:
    """Wrong reading: Algorithm 1 rescales the examples only, the queries keep their raw x."""
    configs = draw_configurations(params)
    wrong = []
    for c in configs:
        matrix = preprocessed_prompt(c.X, c.y, c.X_query)  # (B, d+1, m)
        matrix[:, : c.d, c.n :] = np.swapaxes(c.X_query, -1, -2)
        wrong.append(_layer_one(matrix, c))
    values = np.concatenate(wrong)
    return prediction.with_values(layer1=values, layer1_float32=values)


CLAIM_P41 = Claim(
    id="CZZ-P4.1",
    source=Source(PAPER, "4, App. C.1", "Prop. 4.1/C.1, (4.2)"),
    statement="One linear-attention layer (2.2) with d heads of dimension 3 (d_hid = 3d; W_E read "
    "as the 3d × (d+1) embedding (x_i; y; 0) per block) implements Algorithm 1: its output has "
    "x̃ = r̂ ⊙ x in rows 1..d for the examples and the queries and the labels, 0 at the queries, "
    "in row d+1 (Eq. 4.2), for any d, n, q: equal up to floating-point rounding.",
    params=ConstructionParams,
    presets=PRESETS_41,
    predict=predict_41,
    measure=measure_41,
    checks=checks_41,
    figure=FigureRef("icl_verify.figures.constructions", "figure_preprocessing"),
    wrong=_raw_queries,
    summary=(
        "one layer with d heads of the paper's form (2.2) outputs Algorithm 1's preprocessed "
        "data, examples and queries, on 32 random (d, n, q)"
    ),
    catalogue=(3, 1),
)

CLAIMS = (CLAIM_P41,)
