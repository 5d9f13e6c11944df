"""Figures of CZZ-P4.1 and CZZ-P4.2 (Chen, Zhao, Zou 2024, Props. 4.1/4.2): the constructed
network against Algorithm 1 and GD, and its rounding errors against the stated bound."""

from __future__ import annotations

import numpy as np
from icl_verify.figures.data.constructions import GdLayersData
from icl_verify.figures.style import MEASURED, PALETTE, REFERENCE, THEORY, new_figure
from matplotlib.ticker import MaxNLocator

FLOOR = 1e-19  # exact agreement (error 0) is drawn at the bottom of the log axis
STYLES = {  # compared quantity suffix -> (label, colour, marker)
    "": ("float64 network", MEASURED, "o"),
    "_float32": ("float32 network", PALETTE[2], "s"),
}


def _errors(prediction, measurement, key: str) -> np.ndarray:
    return np.abs(measurement.values[key].value - np.asarray(prediction.values[key], dtype=float))


def _diagonal(axis, prediction, measurement, key: str, quantity: str) -> None:
    """Network vs algorithm, both divided by f_abs, on the diagonal."""
    predicted = np.asarray(prediction.values[key], dtype=float)
    for suffix, (label, colour, marker) in STYLES.items():
        axis.plot(
            predicted,
            measurement.values[key + suffix].value,
            marker,
            ms=2.5,
            mfc="none",
            color=colour,
            alpha=0.6,
            label=label,
        )
    limits = [min(-1.0, predicted.min()), max(1.0, predicted.max())]
    axis.plot(limits, limits, color=THEORY, lw=1, label="equality")
    axis.set(
        xlabel=f"{quantity} / f_abs (numpy float64)",
        ylabel="constructed network / f_abs",
        aspect="equal",
    )
    axis.legend(loc="upper left")


def figure_preprocessing(params, prediction, measurement):
    """(a) layer 1's output against Algorithm 1 (4.2); (b) worst normalised error per
    configuration against its rounding bound, float64 and float32."""
    figure, axes = new_figure(2, width=4.4, height=3.6)
    scatter, errors = axes[0]
    _diagonal(scatter, prediction, measurement, "layer1", "Algorithm 1 (x̃; y)")
    data = prediction.figure_data
    config = data["config"].astype(int)
    scatter.set_title(
        f"(a) layer 1, rows 1..d+1, at ≤ 4 examples + all queries\n"
        f"{data['n'].size} configs × {params.n_prompts} prompt(s)"
    )
    n = data["n"]
    for suffix, (label, colour, marker) in STYLES.items():
        worst = np.zeros(n.size)
        np.maximum.at(worst, config, _errors(prediction, measurement, "layer1" + suffix))
        errors.plot(n, np.maximum(worst, FLOOR), marker, color=colour, ms=4, label=label)
        bound = data["bound" + (suffix or "_float64")]
        errors.plot(n, bound, "_", color=colour, ms=9, mew=1.2, label="its bound (d, n)")
        errors.axhline(bound.max(), color=colour, ls="--", lw=1, label="tolerance (largest)")
    errors.set(
        xscale="log",
        yscale="log",
        xlabel="in-context examples n of the configuration",
        ylabel="max |network − Alg. 1| / f_abs",
        title=f"(b) worst error per config (d ≤ {params.d_max}, q ≤ {params.q_max})",
    )
    errors.legend(loc="center right", fontsize=7, ncols=2)
    return figure


def figure_gd(params, prediction, measurement):
    """(a) the (t+1)-layer network's query read-outs against GD on Algorithm 1's data;
    (b) the worst normalised error after each GD layer against the bound, float64 and float32."""
    figure, axes = new_figure(2, width=4.4, height=3.6)
    scatter, errors = axes[0]
    _diagonal(scatter, prediction, measurement, "predictions", "<w̃^l, R̂x_q> (GD, l ≤ t)")
    data = GdLayersData.from_record(prediction.figure_data)
    step = data.step.astype(int)
    scatter.plot(
        np.asarray(prediction.values["predictions"], dtype=float),
        -measurement.values["predictions"].value,
        "x",
        ms=2.5,
        color=REFERENCE,
        alpha=0.4,
        label="read-out +e_(d+1) (paper, literal)",
    )
    scatter.legend(loc="upper center", fontsize=7)
    scatter.set_title(
        f"(a) read-out −e_(d+1) after each layer: {data.sizes.n.size} configs × "
        f"{params.n_prompts} prompt(s)"
    )
    steps = data.bound_steps
    for suffix, (label, colour, marker) in STYLES.items():
        error = _errors(prediction, measurement, "predictions" + suffix)
        worst = np.zeros(steps.size + 1)
        np.maximum.at(worst, step, error)
        errors.plot(step, np.maximum(error, FLOOR), ".", color=colour, ms=2, alpha=0.25)
        errors.plot(
            steps, np.maximum(worst[1:], FLOOR), marker + "-", color=colour, ms=4, label=label
        )
        errors.plot(
            steps,
            data.bound(suffix.removeprefix("_") or "float64"),
            "--",
            color=colour,
            lw=1,
            label=f"bound (tolerance: l = {steps[-1]:.0f})",
        )
    errors.axhline(FLOOR, color=REFERENCE, lw=0.5)
    errors.xaxis.set_major_locator(MaxNLocator(integer=True))
    errors.set(
        yscale="log",
        xlabel="GD layers l (read-out after layer l + 1)",
        ylabel=f"|network − GD| / f_abs; bound at d={data.sizes.d.max():.0f}, "
        f"n={data.sizes.n.max():.0f}",
        title=f"(b) error per step: worst (line), each (dots); 0 at {FLOOR:g}",
    )
    errors.legend(loc="center right", fontsize=7)
    return figure
