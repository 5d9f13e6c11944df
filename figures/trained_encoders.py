"""Figures 1b-d, 2b, 3-8 of Chen, Zhao, Zou (2024): trained encoders on sparse regression
(CZZ-HEADS, CZZ-IMPORTANCE, CZZ-PRUNE, CZZ-PPROBE), drawn from the stored numbers.

Each figure's title says whether the models reached the paper's regime (beat tuned ridge at
n = 10); outside it the checks are inconclusive by design and the figure says so.
"""

from __future__ import annotations

import numpy as np
from icl_verify.figures.style import (
    PALETTE,
    REFERENCE,
    measured,
    new_figure,
    side_by_side,
    training_text,
)

_BASELINES = (("ols", "OLS", "#555555", ":"), ("ridge", "ridge (tuned)", "#999999", "--"),
              ("lasso", "Lasso (tuned)", "#000000", "-."))  # fmt: skip


def _colors(heads) -> dict[int, str]:
    return {h: PALETTE[i % len(PALETTE)] for i, h in enumerate(heads)}


def _model_text(params) -> str:
    return (
        f"d={params.d}, s={params.s}, d_hid={params.d_hid}, {params.layers} layers, "
        f"{training_text(params)}, {params.replicates} model(s) per σ"
    )


def _regime_text(data) -> str:
    if data["regime_reached"]:
        return "models in the paper's regime (they beat tuned ridge at n = 10)"
    return "models NOT in the paper's regime (worse than tuned ridge at n = 10): inconclusive"


def figure_heads(params, prediction, measurement):
    """Figures 1b/3: excess risk against n per sigma, each h beside OLS, ridge and Lasso."""
    data = measurement.figure_data
    n = np.asarray(data["n"])
    sigmas = params.sigmas
    figure, axes = new_figure(len(sigmas), 1, width=max(3.6, 6.5 / len(sigmas)), height=3.2)
    colors = _colors(params.heads)
    for k, (sigma, axis) in enumerate(zip(sigmas, axes.flatten(), strict=True)):
        for h in params.heads:
            measured(axis, n, data[f"h{h}_mean"][k], data[f"h{h}_se"][k], f"h = {h}",
                     color=colors[h], ls="-", ms=3)  # fmt: skip
        top = 1.3 * prediction.figure_data["null_risk"]
        for name, label, color, style in _BASELINES:
            mean = np.asarray(data[f"{name}_mean"][k], dtype=float)
            off = n[mean > top]  # min-norm OLS near n = d: infinite expected risk
            if off.size:
                label += f" (off the scale at n = {', '.join(f'{v:g}' for v in off)})"
            axis.plot(n, np.where(mean > top, np.nan, mean), style, color=color, label=label)
        axis.axvspan(n.min(), params.few_shot, color=REFERENCE, alpha=0.08, lw=0,
                     label=f"few shots (n ≤ {params.few_shot})")  # fmt: skip
        axis.set(xlabel="in-context examples n", title=f"σ = {sigma:g}",
                 ylabel="excess risk" if k == 0 else None, ylim=(0, top))  # fmt: skip
        axis.legend(fontsize=6.5)
    figure.suptitle(f"ICL excess risk, ±2 SE: {_regime_text(data)}\n"
                    f"{_model_text(params)}", fontsize=8)  # fmt: skip
    return figure


def figure_importance(params, prediction, measurement):
    """Figures 1c/4: per h > 1, App. B's sorted average of W and the effective heads per layer
    of every model beside their mean and the thresholds (1 + h)/2."""
    data = measurement.figure_data
    multi = [h for h in params.heads if h > 1]
    figure, axes = new_figure(2, len(multi), width=3.8, height=3.0)
    axes = np.atleast_2d(axes)
    layers = np.arange(1, params.layers + 1)
    for row, h in enumerate(multi):
        heat, eff_axis = axes[row]
        average = np.asarray(data[f"h{h}_sorted"])
        image = heat.imshow(average, cmap="viridis", vmin=0, vmax=1, aspect="auto")
        for (i, j), value in np.ndenumerate(average):
            heat.text(j, i, f"{value:.2f}", ha="center", va="center", fontsize=7,
                      color="white" if value < 0.5 else "black")  # fmt: skip
        heat.set(xticks=range(h), xticklabels=[f"#{j + 1}" for j in range(h)],
                 yticks=range(params.layers), yticklabels=[f"layer {i}" for i in layers],
                 xlabel="head, ranked within its layer",
                 title=f"h = {h}: W sorted per row, mean over models")  # fmt: skip
        figure.colorbar(image, ax=heat, fraction=0.05)
        effective = np.asarray(data[f"h{h}_effective"])
        for model in effective:
            eff_axis.plot(layers, model, "-", color=REFERENCE, lw=0.7, alpha=0.6)
        index = multi.index(h)
        values = [measurement.values["layer_1"], measurement.values["later_layers"]]
        mean = np.concatenate([[values[0].value[index]], np.asarray(values[1].value[index])])
        se = np.concatenate([[values[0].error[index]], np.asarray(values[1].error[index])])
        finite = np.isfinite(se) & (se < h)
        measured(eff_axis, layers[finite], mean[finite], se[finite],
                 "mean over models, ±3 SE (bootstrap)", k=3)  # fmt: skip
        eff_axis.axhline((1 + h) / 2, color=REFERENCE, ls="--", lw=1,
                         label="threshold (1 + h)/2")  # fmt: skip
        eff_axis.set(xlabel="layer", ylabel="effective heads 1/ΣW²", xticks=layers,
                     ylim=(0.5, h + 0.5),
                     title=f"grey: single models ({data[f'h{h}_pattern_share']:.0%} show the "
                     "pattern)")  # fmt: skip
        eff_axis.legend(fontsize=6.5)
    figure.suptitle(f"Head importance (3.1) at n = 10: {_regime_text(data)}\n"
                    f"{_model_text(params)}", fontsize=8)  # fmt: skip
    return figure


def figure_prune(params, prediction, measurement):
    """Figures 1d/5-8: probe excess risk per representation for the pruned, unpruned and
    1-head models (mean over models, ±2 SE)."""
    data = measurement.figure_data
    figure, axis = new_figure(1, 1, width=6.8, height=3.6)
    axis = np.asarray(axis).flatten()[0]
    x = np.arange(params.layers + 1)
    h = max(params.heads)
    for (name, label), color in zip(
        (("pruned", f"pruned h = {h}, fine-tuned {params.prune_steps} steps"),
         ("unpruned", f"h = {h}"), ("one_head", "h = 1")), PALETTE, strict=False,
    ):  # fmt: skip
        measured(axis, x, data[f"{name}_mean"], data[f"{name}_se"], label, color=color, ls="-")
    axis.set(xticks=x, xticklabels=["input"] + [f"layer {i}" for i in x[1:]],
             ylabel=f"probe excess risk (ridge λ = {params.probe_lam:g})",
             ylim=(0, 1.2 * prediction.figure_data["null_risk"]))  # fmt: skip
    axis.legend(fontsize=7)
    figure.suptitle(f"Pruning and probing, ±2 SE\n{_regime_text(data)}\n{_model_text(params)}",
                    fontsize=8)  # fmt: skip
    return figure


def figure_pprobe(params, prediction, measurement):
    """Figure 2b: P-probing excess risk along GD per sigma, one curve per h."""
    data = measurement.figure_data
    steps = np.asarray(data["steps"])
    colors = _colors(params.heads)
    figure, axes = new_figure(len(params.sigmas), 1, width=max(3.4, 6.5 / len(params.sigmas)),
                              height=3.1)  # fmt: skip
    for k, (sigma, axis) in enumerate(zip(params.sigmas, np.asarray(axes).flatten(),
                                          strict=True)):  # fmt: skip
        for h in params.heads:
            mean, se = np.asarray(data[f"h{h}_mean"][k]), np.asarray(data[f"h{h}_se"][k])
            axis.plot(steps, mean, color=colors[h], label=f"h = {h}")
            axis.fill_between(steps, mean - 2 * se, mean + 2 * se, color=colors[h], alpha=0.25,
                              lw=0)  # fmt: skip
        axis.set(xlabel="GD steps", ylabel="excess risk, last query" if k == 0 else None,
                 title=f"σ = {sigma:g}",
                 ylim=(0, 1.3 * prediction.figure_data["null_risk"]))  # fmt: skip
        axis.legend(fontsize=7)
    figure.suptitle(f"P-probing (n = {params.n_probe}, q = {params.q_probe}, layer-1 states), "
                    f"±2 SE\n{_regime_text(data)}\n{_model_text(params)}", fontsize=8)  # fmt: skip
    return figure


def figure_1(records):
    """Chen et al. Figure 1 (b, c, d; (a) is a schematic): the ICL curves (CZZ-HEADS), the
    head-importance map (CZZ-IMPORTANCE) and the probes of the pruned model (CZZ-PRUNE), each
    claim's own figure side by side (`style.side_by_side`)."""
    parts = (("CZZ-HEADS", figure_heads, "(b) excess risk vs n, per h"),
             ("CZZ-IMPORTANCE", figure_importance, "(c) head importance"),
             ("CZZ-PRUNE", figure_prune, "(d) probes: pruned, full, one head"))  # fmt: skip
    return side_by_side([draw(*records[claim]) for claim, draw, _ in parts],
                        [title for *_, title in parts],
                        "Figure 1 (b)-(d); (a) is a schematic")  # fmt: skip


def figure_2(records):
    """Chen et al. Figure 2 (b, c; (a) is a schematic): P-probing (CZZ-PPROBE) and gd against
    pre-gd (CZZ-PREGD), side by side."""
    from icl_verify.figures.pre_gd import figure_2c

    return side_by_side(
        [figure_pprobe(*records["CZZ-PPROBE"]), figure_2c(*records["CZZ-PREGD"])],
        ["(b) P-probing: last-query risk vs GD steps", "(c) gd vs pre-gd"],
        "Figure 2 (b), (c); (a) is a schematic",
    )

