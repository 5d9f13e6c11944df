"""CZZ-PRUNE of Chen, Zhao, Zou (2024) §3, App. B (Figures 1d, 5-8): a trained encoder pruned to
layer 1 whole and one head per later layer probes like the unpruned one, a 1-head model does not.

Each h_max model of `_encoders` pruned to every head of layer 1 and its own most important head
in each later layer, fine-tuned; ridge probes (lambda ``probe_lam``) from the query token after
the embedding and after each layer to the query label; per layer >= 1 the pruned model's probe
risk is closer to the unpruned model's than the 1-head model's is:
|one - unpruned| - |pruned - unpruned| >= 0.

Judged only for models in the paper's regime (`_encoders.regime`); outside it the measurement
carries the null risk s as uncertainty, so it reads inconclusive, never a contradiction.
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
    all_trainings,
    encoder_presets,
    gated,
    per_sigma,
    regime,
    regime_data,
    regime_line,
    trained_ensembles,
    training,
)
from icl_verify.validation.paper_figures import PaperFigure
from icl_verify.validation.params import param

from icl_verify import numerics
from icl_verify.statistics import mean_se, paired_difference


@dataclass(frozen=True, kw_only=True)
class PruneParams(EncoderParams):
    """CZZ-PRUNE: importance prompts, fine-tuning, probes."""

    n_importance: int = param(help="prompts per member choosing the kept heads", low=2)
    prune_steps: int = param(help="fine-tuning steps of the pruned model (paper: 60k)", low=1)
    n_fit: int = param(help="prompts per member fitting each probe", low=2)
    n_prompts: int = param(help="prompts per member reading each probe", low=2)
    probe_lam: float = param(1e-3, help="ridge penalty of the probes (on the weights)", low=0)


def predict_prune(params: PruneParams) -> Prediction:
    return Prediction(
        values={"closer": np.zeros(params.layers)},
        figure_data={"null_risk": float(params.s)},
    )


def measure_prune(params: PruneParams, runtime) -> Measurement:
    """Prune the h_max models by their own W, fine-tune (cached), probe the three models."""
    h = max(params.heads)
    trained = trained_ensembles(params, runtime, [h, 1])
    gate = regime(params, runtime, trained[h])
    importance = numerics.masked_importance(
        trained[h], EVAL_N, count=params.n_importance, seed=runtime.seed_for("importance"),
        device=runtime.device,
    )  # fmt: skip
    kept = numerics.pruned_heads(importance.weights)
    kept = tuple(tuple(tuple(row) for row in member) for member in kept.tolist())
    pruned = runtime.trained(numerics.PrunedTraining(training(params, h), kept, params.prune_steps))
    probe = dict(
        n_fit=params.n_fit, n_read=params.n_prompts, lam=params.probe_lam,
        fit_seed=runtime.seed_for("probe-fit"), read_seed=runtime.seed_for("probe-read"),
        device=runtime.device,
    )  # fmt: skip
    errors = {
        name: numerics.layer_probe_errors(model, EVAL_N, **probe)
        for name, model in (("pruned", pruned), ("unpruned", trained[h]), ("one_head", trained[1]))
    }  # each (E, layers + 1, prompts)
    data = regime_data(gate) | {"kept": kept}
    for name, value in errors.items():
        data[f"{name}_mean"] = value.mean(axis=(0, 2))  # (layers + 1,)
        data[f"{name}_se"] = mean_se(value.mean(axis=0))[1]
        data[f"{name}_per_sigma"] = per_sigma(value.mean(axis=2), params)  # (sigmas, layers+1)
    unpruned = errors["unpruned"].mean(axis=0)  # (layers + 1, prompts): mean over the members
    one, one_se = paired_difference(errors["one_head"].mean(axis=0), unpruned)
    near, near_se = paired_difference(errors["pruned"].mean(axis=0), unpruned)
    closer = Estimate((np.abs(one) - np.abs(near))[1:], (one_se + near_se)[1:])
    return Measurement(values={"closer": gated(closer, gate, float(params.s))}, figure_data=data)


def checks_prune(params: PruneParams) -> tuple[Check, ...]:
    why = (
        "Paired: the three models' probes read on the same prompts (member e of each, same σ); "
        "SE of |a| − |b| bounded by SE(a) + SE(b), each a paired SE over "
        f"{params.n_prompts} prompts; one-sided, {MAX_Z:g} SE. " + REGIME_WHY
    )
    return (
        Check("closer", Inequality("at_least", why, max_z=MAX_Z),
              "per layer ≥ 1: |1-head − unpruned| − |pruned − unpruned|"),
    )  # fmt: skip


def prune_far_apart(params: PruneParams, prediction: Prediction) -> Prediction:
    """Wrong: the pruned model is closer than the 1-head model by three null risks (every
    probe risk here is at most about s, so no gap reaches 3s)."""
    return prediction.with_values(closer=np.full(params.layers, 3.0 * params.s))


def table_prune(params: PruneParams, prediction: Prediction, measurement: Measurement) -> str:
    data = measurement.figure_data
    h = max(params.heads)
    rows = [
        regime_line(params, data), "",
        f"Figure 1d / 5-8: probe excess risk (ridge λ = {params.probe_lam:g}, query token, "
        f"{params.n_fit} fitting and {params.n_prompts} reading prompts per model), mean over "
        f"the models; pruned = h = {h} with layer 1 whole and one head per later layer, "
        f"fine-tuned {params.prune_steps} steps.", "",
        "| representation | pruned | unpruned | 1 head |", "|---|---|---|---|",
    ]  # fmt: skip
    for i in range(params.layers + 1):
        where = "embedding" if i == 0 else f"after layer {i}"
        cells = [f"{data[f'{m}_mean'][i]:.3f} ± {data[f'{m}_se'][i]:.3f}"
                 for m in ("pruned", "unpruned", "one_head")]  # fmt: skip
        rows.append(f"| {where} | " + " | ".join(cells) + " |")
    return "\n".join(rows)


PRUNE_PRESETS = encoder_presets(
    PruneParams,
    smoke=dict(n_importance=64, prune_steps=20, n_fit=64, n_prompts=64),
    quick=dict(n_importance=1024, prune_steps=1000, n_fit=1024, n_prompts=1024),
    paper=dict(n_importance=8192, prune_steps=60_000, n_fit=8192,
               n_prompts=8192),
)  # fmt: skip

CLAIM_PRUNE = Claim(
    id="CZZ-PRUNE",
    source=Source(PAPER, "3, App. B; Figures 1d, 5-8"),
    statement="Pruned to every head of layer 1 and one head per later layer and fine-tuned, a "
    "trained encoder's layer-by-layer probe risks stay close to the unpruned model's, while a "
    "1-head model's lie apart (the difference made in layer 1).",
    params=PruneParams,
    presets=PRUNE_PRESETS,
    predict=predict_prune,
    measure=measure_prune,
    checks=checks_prune,
    figure="trained_encoders:figure_prune",
    table=table_prune,
    wrong=prune_far_apart,
    trains=all_trainings,
    summary=(
        "prune to layer 1 whole + each later layer's top head (each model's own W), fine-tune; "
        "ridge probes (λ = 1e-3, query token) per layer: the pruned model closer to the "
        "unpruned than the 1-head model is"
    ),
    catalogue=(2, 3),
    paper_figures=(
        PaperFigure(
            6,
            ("CZZ-PRUNE",),
            "trained_encoders:figure_prune",
            "pruning and probing at L = 4: rows h in {4, 8}; the sigma-average then each sigma; "
            "pruned h, h and h = 1",
            "CZZ-PRUNE's figure at the preset's depth (paper: L = 4, this figure's; quick: L = 3, "
            "smoke: 2)",
        ),
    ),
)

CLAIMS = (CLAIM_PRUNE,)
