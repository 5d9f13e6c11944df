"""Figure 2c of Chen, Zhao, Zou (2024) (CZZ-PREGD): GD on raw vs preprocessed covariates.

One panel per noise level sigma: excess risk against GD steps of gd and pre-gd at their tuned
learning rates (in the legend), with ±2 SE bands over the held-out prompts and each curve's
lowest point marked (on a log scale where a curve ends below s/20, as for n > d); a last
panel: the paired gaps risk(gd) − risk(pre-gd) per sigma at the final step (the checked
quantity, bars ±3 SE as the rule) and early-stopped.
"""

from __future__ import annotations

import numpy as np
from icl_verify.figures.data.pre_gd import PreGdData, RiskScale
from icl_verify.figures.style import MEASURED, PALETTE, REFERENCE, THEORY, new_figure

#: gd's and pre-gd's label and colour (`PreGdData.paths` order).
_METHODS = (("gd (raw x)", PALETTE[2]), ("pre-gd (R̂x)", PALETTE[0]))


def figure_2c(params, prediction, measurement):
    """Risk paths per sigma (Figure 2c) and the paired gaps with the claim's threshold 0."""
    data = PreGdData.from_record(measurement.figure_data)
    sigmas = np.asarray(params.sigma, dtype=float)
    columns = min(len(sigmas) + 1, 3)
    rows = -(-(len(sigmas) + 1) // columns)
    figure, grid = new_figure(columns, rows, width=3.3, height=2.8)
    axes = grid.flatten()
    steps = data.steps
    null_risk = RiskScale.from_record(prediction.figure_data).null_risk
    for i, (sigma, axis) in enumerate(zip(sigmas, axes, strict=False)):
        for path, (label, color) in zip(data.paths(), _METHODS, strict=True):
            mean, se = path.mean[i], path.se[i]
            axis.plot(steps, mean, color=color, label=f"{label}, η={path.rate[i]:g}")
            axis.fill_between(steps, mean - 2 * se, mean + 2 * se, color=color, alpha=0.25, lw=0)
            lowest = int(np.argmin(mean))
            axis.plot(steps[lowest], mean[lowest], "v", color=color, ms=5)
        axis.axhline(
            null_risk, color=REFERENCE, ls=":", lw=1, label=f"w = 0 (risk s = {null_risk:g})"
        )
        lowest_final = min(float(path.mean[i][-1]) for path in data.paths())
        log = lowest_final < null_risk / 20  # n > d: near OLS, invisible on the paper's scale
        axis.set(
            xlabel="GD steps",
            ylabel="excess risk" if i % columns == 0 else None,
            title=f"σ = {sigma:g}" + (" (log scale)" if log else ""),
            yscale="log" if log else "linear",
            ylim=(max(lowest_final / 3, 1e-4 * null_risk), 2 * null_risk)
            if log
            else (0, 1.1 * null_risk),
        )
        axis.legend(fontsize=6.5, loc="upper right")
    gap_axis = axes[len(sigmas)]
    for unused in axes[len(sigmas) + 1 :]:
        unused.remove()
    position = np.arange(len(sigmas))
    gap = measurement.values["gap"]
    gap_axis.errorbar(
        position - 0.1, gap.value, yerr=3 * np.asarray(gap.error), fmt="o", color=THEORY,
        capsize=3, label=f"gd − pre-gd, last step ({params.steps}), ±3 SE",
    )  # fmt: skip
    gap_axis.errorbar(
        position + 0.1, data.best_gap, yerr=3 * data.best_gap_se, fmt="s",
        mfc="none", color=THEORY, capsize=3, label="gd − pre-gd, early-stopped (η, t tuned), ±3 SE",
    )  # fmt: skip
    for offset, (name, marker, label) in enumerate(
        (("ridge_gap", "^", "tuned ridge − pre-gd"), ("ols_gap", "D", "OLS − pre-gd")), start=2
    ):
        if name in measurement.values:  # records made before §6's least-squares checks lack it
            other = measurement.values[name]
            gap_axis.errorbar(
                position + 0.1 * offset, other.value, yerr=3 * np.asarray(other.error),
                fmt=marker, ms=4, color=MEASURED, capsize=3, label=f"{label}, ±3 SE",
            )  # fmt: skip
    gap_axis.axhline(0, color=REFERENCE, ls="--", lw=1, label="claim: gap ≥ 0")
    gap_axis.set_xticks(position, [f"{s:g}" for s in sigmas])
    gap_axis.set(
        xlabel="noise std σ",
        ylabel="risk(other) − risk(pre-gd)",
        title=f"paired gaps, {params.n_prompts} prompts",
    )
    low, high = gap_axis.get_ylim()
    gap_axis.set_ylim(low - 0.7 * (high - low), high)  # room for the legend below the points
    gap_axis.legend(fontsize=6, loc="lower center")
    figure.suptitle(
        f"d={params.d}, s={params.s}, n={params.n}; rates tuned on {params.n_tune} other prompts "
        "(bands ±2 SE; ▼: lowest point of each curve)",
        fontsize=9,
    )
    return figure
