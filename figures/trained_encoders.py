"""Figures 1b-d, 2b, 3-8 of Chen, Zhao, Zou (2024): trained encoders on sparse regression
(CZZ-HEADS, CZZ-IMPORTANCE, CZZ-PRUNE, CZZ-PPROBE), drawn from the stored numbers.

Each figure's title says whether the models reached the paper's regime (beat tuned ridge at
n = 10); outside it the checks are inconclusive by design and the figure says so. What each
figure draws is typed in `figures.data.trained_encoders`, read from the claim's record.
"""

from __future__ import annotations

import textwrap

import numpy as np
from icl_verify.figures.data.trained_encoders import (
    BASELINES,
    ImportanceData,
    Judged,
    ProbePaths,
    PruneData,
    RiskCurves,
    RiskScale,
    Settings,
)
from icl_verify.figures.style import (
    PALETTE,
    REFERENCE,
    measured,
    new_figure,
    side_by_side,
    training_text,
)

#: How `BASELINES` are drawn: label, colour, line style.
_BASELINE_STYLE = {"ols": ("OLS", "#555555", ":"), "ridge": ("ridge (tuned)", "#999999", "--"),
                   "lasso": ("Lasso (tuned)", "#000000", "-.")}  # fmt: skip


def _colors(heads) -> dict[int, str]:
    return {h: PALETTE[i % len(PALETTE)] for i, h in enumerate(heads)}


def _model_text(params) -> str:
    return (
        f"d={params.d}, s={params.s}, d_hid={params.d_hid}, {_depth_text(params)}, "
        f"{training_text(params)}, {params.replicates} model(s) per σ"
    )


def _depth_text(params) -> str:
    depths = np.atleast_1d(params.layers)
    return f"L = {depths[0]} layers" if depths.size == 1 else \
        f"L in {{{', '.join(str(L) for L in depths)}}} layers"  # fmt: skip


def _title(figure, text: str, width: float) -> None:
    """The figure's title, wrapped to its width in inches (~15 characters per inch at 8 pt)."""
    figure.suptitle(textwrap.fill(text, int(15 * width)), fontsize=8)


def _regime_text(reached: bool) -> str:
    if reached:
        return "models in the paper's regime (they beat tuned ridge at n = 10)"
    return "models NOT in the paper's regime (worse than tuned ridge at n = 10): inconclusive"


def figure_heads(params, prediction, measurement):
    """Figures 1b/3: excess risk against n, rows sigma, columns depth L: each h beside OLS,
    ridge and Lasso."""
    curves = RiskCurves.from_record(measurement.figure_data, params.layers, params.heads)
    judged = Judged.from_record(measurement.figure_data, params.layers)
    n = curves.n
    sigmas, depths = params.sigmas, params.layers
    # one row of sigmas at one depth; else the paper's grid: a row per sigma, a column per L
    ncols, nrows = (len(sigmas), 1) if len(depths) == 1 else (len(depths), len(sigmas))
    figure, axes = new_figure(ncols, nrows, width=3.6, height=3.0)
    panels = [(k, L) for k in range(len(sigmas)) for L in depths]  # row-major, as axes.flat
    colors = _colors(params.heads)
    top = 1.3 * RiskScale.from_record(prediction.figure_data).null_risk
    for index, ((k, L), axis) in enumerate(zip(panels, axes.flatten(), strict=True)):
        for h in params.heads:
            mean, se = curves.model(L, h)
            measured(axis, n, mean[k], se[k], f"h = {h}", color=colors[h], ls="-", ms=3)
        for name in BASELINES:
            label, color, style = _BASELINE_STYLE[name]
            mean = curves.baseline(name)[0][k]
            off = n[mean > top]  # min-norm OLS near n = d: infinite expected risk
            if off.size:
                label += f" (off the scale at n = {', '.join(f'{v:g}' for v in off)})"
            axis.plot(n, np.where(mean > top, np.nan, mean), style, color=color, label=label)
        axis.axvspan(n.min(), params.few_shot, color=REFERENCE, alpha=0.08, lw=0,
                     label=f"few shots (n ≤ {params.few_shot})")  # fmt: skip
        reached = "" if judged.at(L) else " (NOT in the regime)"
        axis.set(xlabel="in-context examples n", title=f"σ = {sigmas[k]:g}, L = {L}{reached}",
                 ylabel="excess risk" if index % ncols == 0 else None, ylim=(0, top))
        axis.title.set_fontsize(8)
        if index == 0:
            axis.legend(fontsize=6.5)
    _title(figure, f"ICL excess risk, ±2 SE: {_regime_text(judged.every)}. {_model_text(params)}",
           3.6 * ncols)  # fmt: skip
    return figure


def figure_importance(params, prediction, measurement):
    """Figures 1c, 4, 9, 11: per setting (h, depth, design) App. B's sorted average of W (3.1),
    each layer labelled with its mean effective heads 1/ΣW² ± SE (the claim judges the share
    (1/ΣW² − 1)/(h − 1), `validation.claims.chen2024._importance`; the band's edge is (1 + h)/2),
    up to four settings per row."""
    settings = Settings.from_record(prediction.figure_data)
    data = ImportanceData.from_record(measurement.figure_data, len(settings))
    labels = settings.labels()
    S = len(labels)
    ncols = min(S, 4)
    figure, axes = new_figure(ncols, -(-S // ncols), width=4.2, height=3.0)
    layer_1, later = measurement.values["layer_1"], measurement.values["later_layers"]
    offset = 0
    for i, (axis, label) in enumerate(zip(axes.flat, labels, strict=False)):
        h, L = int(settings.heads[i]), int(settings.layers[i])
        share = np.concatenate([[layer_1.value[i]], later.value[offset : offset + L - 1]])
        share_se = np.concatenate([[layer_1.error[i]], later.error[offset : offset + L - 1]])
        mean, se = 1 + share * (h - 1), share_se * (h - 1)  # back to effective heads 1/ΣW²
        offset += L - 1
        reached, average = data.gates[i].reached, data.maps[i].sorted
        image = axis.imshow(average, cmap="viridis", vmin=0, vmax=1, aspect="auto")
        for (r, c), value in np.ndenumerate(average):
            axis.text(c, r, f"{value:.2f}", ha="center", va="center", fontsize=6.5,
                      color="white" if value < 0.5 else "black")  # fmt: skip
        ticks = [f"layer {k + 1}: {m:.2f}" + (f" ± {e:.2f}" if reached else "")
                 for k, (m, e) in enumerate(zip(mean, se, strict=True))]  # fmt: skip
        axis.set(xticks=range(h), xticklabels=[f"#{j + 1}" for j in range(h)],
                 yticks=range(L), yticklabels=ticks, xlabel="head, ranked within its layer",
                 title=f"{label}: {data.maps[i].pattern_share:.0%} of models show the "
                       f"pattern\n{'in' if reached else 'NOT in'} the paper's regime; "
                       f"threshold (1 + h)/2 = {(1 + h) / 2:g}")  # fmt: skip
        axis.title.set_fontsize(7.5)
        axis.grid(False)
        figure.colorbar(image, ax=axis, fraction=0.05)
    for axis in axes.flat[S:]:
        axis.set_visible(False)
    _title(figure, "Head importance W (3.1) at n = 10, rows sorted and averaged over models; y "
           "labels: mean effective heads 1/ΣW² per layer (± SE in the regime); "
           f"{_regime_text(data.reached)}; {_model_text(params)}", 4.2 * ncols)  # fmt: skip
    return figure


def figure_prune(params, prediction, measurement, depths=None, note=""):
    """Figures 1d/5-8: probe excess risk per representation for the pruned, unpruned and
    1-head models, a row per pruned (h, L) (of ``depths``, default every depth), the mean
    over all models (±2 SE) then each sigma's models; ``note`` ends the title."""
    data = PruneData.from_record(measurement.figure_data, params.settings())
    judged = data.gates.judged
    settings = [(h, L) for h, L in params.settings() if depths is None or L in depths]
    columns = ["all σ"] + ([f"σ = {sigma:g}" for sigma in params.sigmas]
                           if len(params.sigmas) > 1 else [])  # fmt: skip
    figure, axes = new_figure(len(columns), len(settings), width=3.3 if len(columns) > 1 else 6,
                              height=3.0)  # fmt: skip
    top = 1.2 * RiskScale.from_record(prediction.figure_data).null_risk
    for row, (h, L) in enumerate(settings):
        x = np.arange(L + 1)
        labels = (f"pruned h = {h}, fine-tuned {params.prune_steps} steps", f"h = {h}", "h = 1")
        probes = data.at(h, L).probes  # pruned, unpruned, one head (`PROBED`)
        for col, axis in enumerate(axes[row]):
            for probe, label, color in zip(probes, labels, PALETTE, strict=False):
                if col == 0:
                    measured(axis, x, probe.mean, probe.se, label, color=color, ls="-")
                else:
                    axis.plot(x, probe.per_sigma[col - 1], "o-", color=color, ms=3, label=label)
            reached = "" if judged.at(L) else ", NOT in the regime"
            axis.set(xticks=x, xticklabels=["input"] + [f"layer {i}" for i in x[1:]],
                     ylabel="probe excess risk" if col == 0 else None, ylim=(0, top),
                     title=f"h = {h}, L = {L}: {columns[col]}{reached}")  # fmt: skip
            axis.title.set_fontsize(8)
            axis.tick_params(axis="x", labelsize=7, rotation=30)
        axes[row][0].legend(fontsize=6.5)
    figure.suptitle(f"Pruning and probing (ridge probes λ = {params.probe_lam:g}), ±2 SE\n"
                    f"{_regime_text(judged.every)}\n{_model_text(params)}"
                    + (f"\n{note}" if note else ""),
                    fontsize=8)  # fmt: skip
    return figure


def _figure_at_depth(depth: int):
    """Figure 5, 6, 7 or 8: `figure_prune` at L = ``depth``, or at the preset's first depth
    when it does not train that one (the title says so)."""

    def draw(params, prediction, measurement):
        drawn = depth if depth in params.layers else params.layers[0]
        note = "" if drawn == depth else (
            f"The paper's figure is at L = {depth}; this preset trains L in "
            f"{list(params.layers)}, so L = {drawn} is drawn."
        )  # fmt: skip
        return figure_prune(params, prediction, measurement, depths=(drawn,), note=note)

    draw.__name__ = draw.__qualname__ = f"figure_at_L{depth}"
    return draw


#: Chen et al.'s pruning figures and their depths (reference chen2024 §5).
PRUNING_DEPTHS = {5: 3, 6: 4, 7: 5, 8: 6}
figure_5, figure_6, figure_7, figure_8 = (_figure_at_depth(L) for L in PRUNING_DEPTHS.values())


def figure_pprobe(params, prediction, measurement):
    """Figure 2b: P-probing excess risk along GD per sigma, one curve per h."""
    data = ProbePaths.from_record(measurement.figure_data, params.heads)
    steps = data.steps
    colors = _colors(params.heads)
    figure, axes = new_figure(len(params.sigmas), 1, width=max(3.4, 6.5 / len(params.sigmas)),
                              height=3.1)  # fmt: skip
    for k, (sigma, axis) in enumerate(zip(params.sigmas, np.asarray(axes).flatten(),
                                          strict=True)):  # fmt: skip
        for h, means, ses in zip(params.heads, data.mean, data.se, strict=True):
            mean, se = means[k], ses[k]
            axis.plot(steps, mean, color=colors[h], label=f"h = {h}")
            axis.fill_between(steps, mean - 2 * se, mean + 2 * se, color=colors[h], alpha=0.25,
                              lw=0)  # fmt: skip
        axis.set(xlabel="GD steps", ylabel="excess risk, last query" if k == 0 else None,
                 title=f"σ = {sigma:g}",
                 ylim=(0, 1.3 * RiskScale.from_record(prediction.figure_data).null_risk))
        axis.legend(fontsize=7)
    figure.suptitle(f"P-probing (n = {params.n_probe}, q = {params.q_probe}, layer-1 states), "
                    f"±2 SE\n{_regime_text(data.gate.reached)}\n{_model_text(params)}",
                    fontsize=8)  # fmt: skip
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

