"""CZZ-IMPORTANCE of Chen, Zhao, Zou (2024) §3, App. B (eq. (3.1), Figures 1c, 4): in trained
encoders layer 1 uses every head and each later layer one.

W (3.1) per (layer, head) by masking each head at n = 10, q = 1 (the trained models of
`_encoders`); the effective number of heads 1 / sum_j W_ij^2 per layer, averaged over the models
(bootstrap SE over models); layer 1 >= (1 + h) / 2 and every later layer <= (1 + h) / 2 (the
midpoint between "one head" and "all heads"). Reported beside: App. B's sorted average, every
model's unsorted matrix and the share of single models showing the pattern.

Judged only for models in the paper's regime (`_encoders.regime`); outside it the measurements
carry the whole range h of effective heads as uncertainty, so they read inconclusive, never a
contradiction; a value outside the possible range is still rejected.
(Effective heads lie in (0, h]: masking a head can lower the risk, so W may have negative
entries and 1/ΣW² may fall below 1; it is <= h by Cauchy-Schwarz, the row summing to 1.)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from icl_verify.validation.claim import (
    Check,
    Claim,
    Estimate,
    Inequality,
    Measurement,
    Prediction,
    Source,
)
from icl_verify.validation.claims.chen2024._encoders import (
    EVAL_N,
    MAX_Z,
    PAPER,
    REGIME_WHY,
    EncoderParams,
    encoder_presets,
    gated,
    regime,
    regime_data,
    regime_line,
    trained_ensembles,
    training,
)
from icl_verify.validation.paper_figures import PaperFigure
from icl_verify.validation.params import param

from icl_verify import numerics
from icl_verify.statistics import bootstrap_se


def _multi_head_trainings(params: EncoderParams) -> tuple:
    """``Claim.trains`` of CZZ-IMPORTANCE, which reads the h > 1 models only: listed before
    CZZ-HEADS in the catalogue, it starts their training while CZZ-HEADS trains h = 1 on
    another worker (`runner.schedule`)."""
    return tuple(training(params, h) for h in params.heads if h > 1)


@dataclass(frozen=True, kw_only=True)
class ImportanceParams(EncoderParams):
    """CZZ-IMPORTANCE: the masking prompts and the bootstrap."""

    n_prompts: int = param(help="prompts per member (n = 10, q = 1; the paper: 8192)", low=2)
    bootstrap: int = param(2000, help="bootstrap resamples of the models", low=10)


def predict_importance(params: ImportanceParams) -> Prediction:
    """Layer 1 uses every head, each later layer one: thresholds (1 + h) / 2 per h > 1."""
    multi = [h for h in params.heads if h > 1]
    middle = np.array([(1 + h) / 2 for h in multi])
    return Prediction(
        values={
            "layer_1": middle,
            "later_layers": np.repeat(middle[:, None], params.layers - 1, axis=1),
        },
        figure_data={"heads": np.array(multi, dtype=float)},
    )


def measure_importance(params: ImportanceParams, runtime) -> Measurement:
    """Per h > 1: W (3.1) of every model on the same prompts, effective heads per layer."""
    multi = [h for h in params.heads if h > 1]
    trained = trained_ensembles(params, runtime, multi)
    gate = regime(params, runtime, trained[max(params.heads)])
    layer_1, later, data = [], [], regime_data(gate)
    for h in multi:
        importance = numerics.masked_importance(
            trained[h], EVAL_N, count=params.n_prompts, seed=runtime.seed_for("masking"),
            device=runtime.device,
        )  # fmt: skip
        effective = numerics.effective_heads(importance.weights)  # (E, layers)
        mean = np.nanmean(effective, axis=0)
        se = bootstrap_se(effective, params.bootstrap, runtime.rng(f"bootstrap-{h}"))
        pattern = (effective[:, 0] >= (1 + h) / 2) & np.all(effective[:, 1:] <= (1 + h) / 2, 1)
        layer_1.append((mean[0], se[0]))
        later.append((mean[1:], se[1:]))
        data.update({
            f"h{h}_weights": importance.weights, f"h{h}_delta": importance.delta,
            f"h{h}_delta_se": importance.delta_se, f"h{h}_effective": effective,
            f"h{h}_sorted": numerics.sorted_average(importance.weights),
            f"h{h}_pattern_share": float(pattern.mean()), f"h{h}_intact": importance.intact,
        })  # fmt: skip
    scale = float(max(params.heads))  # 1/sum W^2 lies in (0, h] (W may have negative entries)
    values = {
        "layer_1": gated(Estimate(*map(list, zip(*layer_1, strict=True))), gate, scale),
        "later_layers": gated(Estimate(*map(list, zip(*later, strict=True))), gate, scale),
    }
    return Measurement(values=values, figure_data=data)


def checks_importance(params: ImportanceParams) -> tuple[Check, ...]:
    why = (
        f"Effective heads 1/ΣW² averaged over the {len(params.member_sigmas)} models of each h, "
        f"SE by bootstrap over the models ({params.bootstrap} resamples); the threshold "
        "(1 + h)/2 is the midpoint between one head and all h; one-sided at "
        f"{MAX_Z:g} SE. " + REGIME_WHY
    )
    return (
        Check("layer_1", Inequality("at_least", why, max_z=MAX_Z), "layer 1: effective heads"),
        Check("later_layers", Inequality("at_most", why, max_z=MAX_Z),
              "layers ≥ 2: effective heads"),
    )  # fmt: skip


def importance_flat_everywhere(params: ImportanceParams, prediction: Prediction) -> Prediction:
    """Wrong: layer 1 has 2h + 1 effective heads (impossible: 1/ΣW² <= h when the row sums
    to 1, by Cauchy-Schwarz)."""
    return prediction.with_values(layer_1=2.0 * prediction.figure_data["heads"] + 1.0)


def table_importance(
    params: ImportanceParams, prediction: Prediction, measurement: Measurement
) -> str:
    data = measurement.figure_data
    rows = [regime_line(params, data), ""]
    for h in [h for h in params.heads if h > 1]:
        eff = np.asarray(data[f"h{h}_effective"])
        rows += [
            f"h = {h}: effective heads per layer (model rows: σ, replicate); single models "
            f"showing the pattern: {data[f'h{h}_pattern_share']:.0%}.", "",
            "| model | σ | " + " | ".join(f"layer {i + 1}" for i in range(params.layers))
            + " | W (unsorted rows) |",
            "|" + "---|" * (params.layers + 3),
        ]  # fmt: skip
        for e, sigma in enumerate(params.member_sigmas):
            W = np.asarray(data[f"h{h}_weights"])[e]
            matrix = "; ".join(" ".join(f"{v:+.2f}" for v in row) for row in W)
            rows.append(f"| {e} | {sigma:g} | " + " | ".join(f"{v:.2f}" for v in eff[e])
                        + f" | {matrix} |")  # fmt: skip
        rows.append("")
    return "\n".join(rows)


IMPORTANCE_PRESETS = encoder_presets(
    ImportanceParams,
    smoke=dict(n_prompts=128, bootstrap=100),
    quick=dict(n_prompts=2048),
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
    checks=checks_importance,
    figure="trained_encoders:figure_importance",
    table=table_importance,
    wrong=importance_flat_everywhere,
    trains=_multi_head_trainings,
    summary=(
        "W (3.1) by masking each head at n = 10; effective heads 1/ΣW² per layer, mean over "
        "models with a bootstrap SE: layer 1 ≥ (1+h)/2, later layers ≤ (1+h)/2; App. B's "
        "sorted average, every model's matrix, the share of single models with the pattern"
    ),
    catalogue=(2, 1),
    paper_figures=(
        PaperFigure(
            4,
            ("CZZ-IMPORTANCE",),
            "trained_encoders:figure_importance",
            "W_avg heat maps (rows sorted, averaged over sigma): rows h in {4, 8}, columns L in "
            "{3, 4, 5, 6}",
            "CZZ-IMPORTANCE's figure: one depth (the preset's L)",
        ),
    ),
)

CLAIMS = (CLAIM_IMPORTANCE,)
