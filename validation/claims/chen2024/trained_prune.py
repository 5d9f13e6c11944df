"""CZZ-PRUNE of Chen, Zhao, Zou (2024) §3, App. B (Figures 1d, 5-8): a trained encoder pruned to
layer 1 whole and one head per later layer probes like the unpruned one, a 1-head model does not.

At every depth L, each model of `_encoders` with h in ``prune_heads`` (the paper: 4 and 8)
pruned to every head of layer 1 and its own most important head in each later layer,
fine-tuned; ridge probes (lambda ``probe_lam``) from the query token after the embedding and
after each layer to the query label; per layer >= 1 the pruned model's probe risk is closer to
the unpruned model's than the 1-head model's is: |one - unpruned| - |pruned - unpruned| >= 0.
Figures 5-8 (one per depth) give these per h, the sigma-average beside each sigma.

Judged only for models in the paper's regime (`_encoders.depth_gates`, per depth); outside it
the measurement carries the null risk s as uncertainty, so it reads inconclusive, never a
contradiction.
"""

from __future__ import annotations

from dataclasses import dataclass

import icl_verify.figures.data.trained_encoders as fig_data
import numpy as np
from icl_verify.validation.claim import Check, Claim, FigureRef, Source
from icl_verify.validation.claims.chen2024 import PAPER
from icl_verify.validation.claims.chen2024._encoders import (
    EVAL_N,
    MAX_Z,
    REGIME_WHY,
    EncoderParams,
    depth_gates,
    depth_regime_lines,
    gated,
    per_sigma,
    trained_ensembles,
)
from icl_verify.validation.estimates import Estimate, Measurement, Prediction
from icl_verify.validation.paper_figures import PaperFigure
from icl_verify.validation.params import ParameterError, param
from icl_verify.validation.rules import Inequality

from icl_verify import numerics
from icl_verify.statistics import mean_se, paired_difference


@dataclass(frozen=True, kw_only=True)
class PruneParams(EncoderParams):
    """CZZ-PRUNE: importance prompts, fine-tuning, probes."""

    n_importance: int = param(help="prompts per member choosing the kept heads", low=2, role="held")
    prune_steps: int = param(
        help="fine-tuning steps of the pruned model (paper: 60k)", low=1, role="count"
    )
    n_fit: int = param(help="prompts per member fitting each probe", low=2, role="held")
    n_prompts: int = param(help="prompts per member reading each probe", low=2, role="count")
    probe_lam: float = param(1e-3, help="ridge penalty of the probes (on the weights)", low=0)
    prune_heads: tuple[int, ...] = param(
        help="the h > 1 pruned (the paper: 4 and 8)", low=2, role="heads"
    )

    EVALUATED = ("n_prompts",)

    def validate(self) -> None:
        super().validate()
        if not set(self.prune_heads) <= set(self.heads):
            raise ParameterError(
                f"prune_heads must be among heads {list(self.heads)}, got {list(self.prune_heads)}"
            )

    def settings(self) -> list[tuple[int, int]]:
        """(h, L) pruned, h first (a row per h in Figures 5-8)."""
        return [(h, L) for h in self.prune_heads for L in self.layers]


def predict_prune(params: PruneParams) -> Prediction:
    """Per (h, L) and layer ≥ 1: the pruned model no farther from the unpruned than h = 1."""
    return Prediction(
        values={"closer": np.zeros(sum(L for _, L in params.settings()))},
        figure_data=fig_data.RiskScale(float(params.s)).to_record(),
    )


def measure_prune(params: PruneParams, runtime) -> Measurement:
    """Per (h, L): prune the models by their own W, fine-tune (cached), probe the three."""
    ensembles = {L: trained_ensembles(params, runtime, L) for L in params.layers}
    gates = depth_gates(params, runtime, ensembles)
    probe = dict(
        n_fit=params.n_fit, n_read=params.n_prompts, lam=params.probe_lam,
        fit_seed=runtime.seed_for("probe-fit"), read_seed=runtime.seed_for("probe-read"),
        device=runtime.device,
    )  # fmt: skip
    closer, settings = [], []
    for h, L in params.settings():
        trained = ensembles[L]
        importance = numerics.masked_importance(
            trained[h], EVAL_N, count=params.n_importance, seed=runtime.seed_for("importance"),
            device=runtime.device,
        )  # fmt: skip
        kept = numerics.pruned_heads(importance.weights)
        kept = tuple(tuple(tuple(row) for row in member) for member in kept.tolist())
        pruned = runtime.trained(
            numerics.PrunedTraining(params.training(h, layers=L), kept, params.prune_steps)
        )
        models = (pruned, trained[h], trained[1])  # in the order of fig_data.PROBED
        errors = {name: numerics.layer_probe_errors(model, EVAL_N, **probe)
                  for name, model in zip(fig_data.PROBED, models, strict=True)}  # (E, L + 1, B)
        probes = tuple(
            fig_data.Probes(mean=value.mean(axis=(0, 2)), se=mean_se(value.mean(axis=0))[1],
                            per_sigma=per_sigma(value.mean(axis=2), params))  # (L + 1,), (σ, L + 1)
            for value in errors.values()
        )  # fmt: skip
        settings.append(fig_data.PrunedSetting(h, L, np.asarray(kept), probes))
        unpruned = errors["unpruned"].mean(axis=0)  # (L + 1, prompts): mean over the members
        one, one_se = paired_difference(errors["one_head"].mean(axis=0), unpruned)
        near, near_se = paired_difference(errors["pruned"].mean(axis=0), unpruned)
        estimate = Estimate((np.abs(one) - np.abs(near))[1:], (one_se + near_se)[1:])
        closer.append(gated(estimate, gates.at(L), float(params.s)))
    value = Estimate(np.concatenate([np.atleast_1d(e.value) for e in closer]),
                     np.concatenate([np.atleast_1d(e.error) for e in closer]))  # fmt: skip
    data = fig_data.PruneData(gates, tuple(settings))
    return Measurement(values={"closer": value}, figure_data=data.to_record())


def checks_prune(params: PruneParams) -> tuple[Check, ...]:
    why = (
        "Paired: the three models' probes read on the same prompts (member e of each, same σ); "
        "SE of |a| − |b| bounded by SE(a) + SE(b), each a paired SE over "
        f"{params.n_prompts} prompts; one-sided, {MAX_Z:g} SE. " + REGIME_WHY
    )
    return (
        Check("closer", Inequality("at_least", why, max_z=MAX_Z),
              "per (h, L) and layer ≥ 1: |1-head − unpruned| − |pruned − unpruned|"),
    )  # fmt: skip


def prune_far_apart(params: PruneParams, prediction: Prediction) -> Prediction:
    """Wrong: the pruned model is closer than the 1-head model by three null risks (every
    probe risk here is at most about s, so no gap reaches 3s)."""
    return prediction.with_values(closer=np.full(len(prediction.values["closer"]),
                                                  3.0 * params.s))  # fmt: skip


def table_prune(params: PruneParams, prediction: Prediction, measurement: Measurement) -> str:
    data = fig_data.PruneData.from_record(measurement.figure_data, params.settings())
    rows = [depth_regime_lines(params, data.gates), ""]
    for h, L in params.settings():
        rows += [
            f"Figures 1d / 5-8, h = {h}, L = {L}: probe excess risk (ridge λ = "
            f"{params.probe_lam:g}, query token, {params.n_fit} fitting and {params.n_prompts} "
            "reading prompts per model), mean over the models; pruned = layer 1 whole and one "
            f"head per later layer, fine-tuned {params.prune_steps} steps.", "",
            "| representation | pruned | unpruned | 1 head |", "|---|---|---|---|",
        ]  # fmt: skip
        for i in range(L + 1):
            where = "embedding" if i == 0 else f"after layer {i}"
            cells = [f"{p.mean[i]:.3f} ± {p.se[i]:.3f}" for p in data.at(h, L).probes]
            rows.append(f"| {where} | " + " | ".join(cells) + " |")
        rows.append("")
    return "\n".join(rows)


#: The paper's pruning figures and their depths (reference §5).
PRUNING_FIGURES = {5: 3, 6: 4, 7: 5, 8: 6}

PRUNE_PRESETS = PruneParams.presets(
    smoke=dict(n_importance=64, prune_steps=20, n_fit=64, n_prompts=64, prune_heads=(2,)),
    quick=dict(n_importance=512, prune_steps=150, n_fit=512, n_prompts=512,
               prune_heads=(4,)),
    paper=dict(n_importance=8192, prune_steps=60_000, n_fit=8192,
               n_prompts=8192, prune_heads=(4, 8)),
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
    figure=FigureRef("icl_verify.figures.trained_encoders", "figure_prune"),
    table=table_prune,
    wrong=prune_far_apart,
    summary=(
        "prune to layer 1 whole + each later layer's top head (each model's own W), fine-tune; "
        "ridge probes (λ = 1e-3, query token) per layer: the pruned model closer to the "
        "unpruned than the 1-head model is"
    ),
    catalogue=(2, 3),
    paper_figures=tuple(
        PaperFigure(
            number,
            ("CZZ-PRUNE",),
            FigureRef("icl_verify.figures.trained_encoders", f"figure_{number}"),
            f"pruning and probing at L = {depth}: rows h in {{4, 8}}; the σ-average then "
            "each σ; pruned h, h and h = 1",
            f"CZZ-PRUNE's panels at L = {depth} (the paper preset trains it; another preset "
            "draws its first depth)",
        )
        for number, depth in PRUNING_FIGURES.items()
    ),
)

CLAIMS = (CLAIM_PRUNE,)
