"""Head importance of trained ensembles, the measurement of CZZ-IMPORTANCE (Figures 1c, 4),
CZZ-G-DECODER (Figure 9) and CZZ-G-CORRELATED (Figure 11): one declaration, read for a list of
trainings (`numerics.EncoderTraining`, one "setting" each: its h, depth, design, architecture).

Per setting, W (3.1) by masking each head at n = 10, q = 1 and the effective heads 1/ΣW² per
layer, mean over the setting's models with a bootstrap SE (`numerics.importance_summary`),
judged as the share of the heads a layer uses, (effective − 1)/(h − 1): 1 when it uses all h, 0
when one. The paper's pattern: layer 1 at share 1 and every later layer at 0, each within 1/2,
halfway to the competing readings ("every layer uses one head", "every layer uses all"), so the
rules reject a competitor exactly where they confirm the paper (`Inequality` "within"); at
effective heads the band's inner edge is the midpoint (1 + h)/2.

Each setting is judged only in the paper's regime: the h_max ensemble of its group (the same
training with the largest h of the list) beats tuned ridge at n = 10 (`_encoders.regime`);
outside it its numbers carry the whole range h_max of effective heads as uncertainty, so they
read inconclusive, never a contradiction. (Effective heads lie in (0, h]: masking a head can
lower the risk, so W may have negative entries and 1/ΣW² may fall below 1; it is <= h by
Cauchy-Schwarz, the row summing to 1.)
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import icl_verify.figures.data.trained_encoders as fig_data
import numpy as np
from icl_verify.validation.claim import Check
from icl_verify.validation.claims.chen2024._encoders import (
    EVAL_N,
    MAX_Z,
    REGIME_WHY,
    gated,
    regime,
    regime_line,
)
from icl_verify.validation.estimates import Estimate, Measurement, Prediction
from icl_verify.validation.rules import Inequality

from icl_verify import numerics


def _gate_training(training, trainings) -> numerics.EncoderTraining:
    """The h_max training of ``training``'s group (same fields but h)."""
    return dataclasses.replace(training, heads=max(t.heads for t in trainings))


def predict_importance(trainings: Sequence) -> Prediction:
    """The shares of heads used: 1 for layer 1 per setting (all h), 0 per later layer (one
    head), flattened over the settings in order."""
    return Prediction(
        values={
            "layer_1": np.ones(len(trainings)),
            "later_layers": np.zeros(sum(t.layers - 1 for t in trainings)),
        },
        figure_data=fig_data.Settings.of(trainings).to_record(),
    )


def measure_importance(params, runtime, trainings: Sequence) -> Measurement:
    """Per setting: W (3.1) of every model on the same prompts, the effective heads per layer,
    gated by its group's regime; the figure data a `fig_data.ImportanceData`."""
    gates: dict = {}
    for t in trainings:  # one gate per group, its h_max ensemble against tuned ridge
        key = _gate_training(t, trainings)
        if key not in gates:
            gates[key] = regime(params, runtime, runtime.trained(key))
    first, later, maps, setting_gates = [], [], [], []
    for i, t in enumerate(trainings):
        summary = numerics.importance_summary(
            runtime.trained(t), EVAL_N, count=params.n_prompts, seed=runtime.seed_for("masking"),
            bootstrap=params.bootstrap, rng=runtime.rng(f"bootstrap-{i}"), device=runtime.device,
        )  # fmt: skip
        gate = gates[_gate_training(t, trainings)]
        setting_gates.append(gate)
        share = (summary.mean - 1) / (t.heads - 1)  # (L,) of the heads used: 0 one, 1 all h
        se = summary.se / (t.heads - 1)
        span = t.heads / (t.heads - 1)  # 1/ΣW² lies in (0, h]: the share's whole range
        first.append(gated(Estimate(share[0], se[0]), gate, span))
        later.append(gated(Estimate(share[1:], se[1:]), gate, span))
        importance = summary.importance
        maps.append(fig_data.HeadMap(importance.weights, importance.delta, importance.delta_se,
                            importance.intact, summary.effective, summary.sorted,
                            summary.pattern_share))  # fmt: skip
    data = fig_data.ImportanceData(tuple(maps), tuple(setting_gates))
    values = {
        "layer_1": Estimate([e.value for e in first], [e.error for e in first]),
        "later_layers": Estimate(
            np.concatenate([np.atleast_1d(e.value) for e in later]),
            np.concatenate([np.atleast_1d(e.error) for e in later]),
        ),
    }
    return Measurement(values=values, figure_data=data.to_record())


def checks_importance(params) -> tuple[Check, ...]:
    why = (
        "Effective heads 1/ΣW² averaged over the models of each setting, SE by bootstrap over "
        f"the models ({params.bootstrap} resamples), read as the share of heads used, "
        "(effective − 1)/(h − 1). The band 1/2 lies halfway to the competing reading (every "
        "layer uses one head, share 0; or all, share 1): at effective heads its inner edge is "
        f"the midpoint (1 + h)/2 between one head and all h; {MAX_Z:g} SE. " + REGIME_WHY
    )
    return (
        Check("layer_1", Inequality("within", why, margin=0.5, max_z=MAX_Z),
              "layer 1: share of heads used, (1/ΣW² − 1)/(h − 1)"),
        Check("later_layers", Inequality("within", why, margin=0.5, max_z=MAX_Z),
              "layers ≥ 2: share of heads used, (1/ΣW² − 1)/(h − 1)"),
    )  # fmt: skip


def one_head_everywhere(params, prediction: Prediction) -> Prediction:
    """Wrong: every layer uses one head, layer 1 too (share 0 where the paper has 1), the
    reading that heads beyond one do not matter: 1 off at layer 1, twice the band 1/2."""
    return prediction.with_values(layer_1=np.zeros_like(prediction.values["layer_1"]))


def table_importance(params, prediction: Prediction, measurement: Measurement) -> str:
    """Per setting: the regime gate, the effective heads of every model and its unsorted W."""
    settings = fig_data.Settings.from_record(prediction.figure_data)
    data = fig_data.ImportanceData.from_record(measurement.figure_data, len(settings))
    rows = []
    for i, label in enumerate(settings.labels()):
        L, head_map = int(settings.layers[i]), data.maps[i]
        h_max = int(max(settings.heads))
        rows += [
            f"**{label}**: " + regime_line(h_max, data.gates[i]) + " Single models showing the "
            f"pattern: {head_map.pattern_share:.0%}.", "",
            "| model | σ | " + " | ".join(f"layer {k + 1}" for k in range(L))
            + " | W (unsorted rows) |",
            "|" + "---|" * (L + 3),
        ]  # fmt: skip
        for e, sigma in enumerate(params.member_sigmas):
            matrix = "; ".join(" ".join(f"{v:+.2f}" for v in row) for row in head_map.weights[e])
            effective = " | ".join(f"{v:.2f}" for v in head_map.effective[e])
            rows.append(f"| {e} | {sigma:g} | {effective} | {matrix} |")
        rows.append("")
    if not data.reached:
        rows.append("Outside the paper's regime at this size; the paper preset (d_hid = 256, "
                    "320k Adam steps: a GPU's size) decides.")  # fmt: skip
    return "\n".join(rows)
