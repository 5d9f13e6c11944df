"""Figure 20 of He et al. (2025), App. C: histograms of L ||softmax(omega X^T x_q)||^2.

Three panels, one per sweep of claim HE-C-SOFTMAXNORM ((i) d fixed, (ii) d = L/8 at fixed
omega, (iii) omega = c/sqrt(d), d = L/8): the measured histograms of L ||p||^2 for several L
(log-binned), the theory's approximation per L as a dashed vertical line of the same colour,
and in (i) the density of the L -> infinity limit e^{omega^2 ||x_q||^2}. A fourth panel shows
the mean over the leading approximation, measured (markers, 4 SE bars) against the 1/L-corrected
theory (lines): it stays at 1 in (i) and (iii) and falls away in (ii). Draws stored numbers only.
"""

from __future__ import annotations

import numpy as np
from icl_verify.figures.data.softmax_norm import SWEEPS, SoftmaxNormMeasured, SoftmaxNormTheory
from icl_verify.figures.style import (
    MEASURED,
    PALETTE,
    REFERENCE,
    THEORY,
    log_ticks,
    new_figure,
    set_log_ticks,
)

TITLES = {
    "fixed_d": "(i) d = {d:g} fixed, ω = {w:.3g}",
    "proportional": "(ii) d = L/8, ω = {w:.3g} fixed",
    "scaled": "(iii) ω = c/√d, d = L/8 (c = {c:.3g})",
}
COLOURS = (*PALETTE, "#6a4c93", "#1982c4", "#8ac926")


def figure_20(params, prediction, measurement):
    """Histograms of L||p||^2 per sweep with the approximation marked, and mean / leading vs L."""
    theory = SoftmaxNormTheory.from_record(prediction.figure_data)
    measured = SoftmaxNormMeasured.from_record(measurement.figure_data).sweeps
    figure, axes = new_figure(4, 1, width=3.6, height=3.2)
    for axis, sweep, points, sample in zip(axes[0, :3], SWEEPS, theory.sweeps, measured,
                                           strict=True):  # fmt: skip
        L, d, w, rho, edges = points.L, points.d, points.omega, points.rho, sample.edges
        for k, (n, row) in enumerate(zip(L, sample.density, strict=True)):
            colour = COLOURS[k % len(COLOURS)]
            axis.stairs(row, edges, color=colour, label=f"L={n:g} (d={d[k]:g}, ρ={rho[k]:.2g})")
            axis.axvline(points.approximation[k], color=colour, ls="--", lw=1)
        if sweep == "fixed_d":
            axis.plot(theory.limit_y, theory.limit_density, color=THEORY, lw=1.5,
                      label="L→∞: law of exp(ω²‖x_q‖²)")  # fmt: skip
        axis.set_xscale("log")
        set_log_ticks(axis, log_ticks(edges[0], edges[-1]))
        axis.set_xlabel("L‖p‖²  (dashed: approximation)")
        axis.set_ylabel("density")
        axis.set_title(TITLES[sweep].format(d=d[0], w=w[0], c=w[0] * np.sqrt(d[0])))
        axis.legend(loc="upper right", fontsize=6.5)
    axis = axes[0, 3]
    for k, (sweep, points, sample) in enumerate(zip(SWEEPS, theory.sweeps, measured,
                                                    strict=True)):  # fmt: skip
        L, leading, mean, se = points.L, points.leading, sample.mean, sample.se
        colour = (MEASURED, PALETTE[1], PALETTE[2])[k]
        axis.errorbar(L, mean / leading, 4 * se / leading, fmt="o", ms=3.5, color=colour,
                      label=f"measured {sweep.replace('_', ' ')}")  # fmt: skip
        corrected = points.corrected / leading
        shown = corrected > 0
        axis.plot(
            L[shown],
            corrected[shown],
            color=colour,
            lw=1,
            label="M + C₁/L (theory)" if k == 0 else None,
        )
    axis.axhline(1.0, color=REFERENCE, ls=":", lw=1, label="leading M = (1−2ω²)^(−d/2)")
    axis.set_xscale("log")
    axis.set_xlabel("L")
    axis.set_ylabel("mean L‖p‖² / leading M")
    axis.set_title("mean against the approximation (4 SE)")
    axis.legend(fontsize=6.5, loc="lower left")
    figure.suptitle(
        "Figure 20: L‖softmax(ω Xᵀx_q)‖² against exp(ω²‖x_q‖²) "
        f"({params.samples} samples per L; ρ = (exp(4ω²d) − 1)/L)",
        fontsize=9,
    )
    return figure


def figure_stein(params, prediction, measurement):
    """HE-C-STEIN: (a) each Monte Carlo moment's z-score against Stein's closed form, by omega,
    with the family-wise bound of the rule; (b) the moments themselves, closed forms as dashes."""
    figure, axes = new_figure(2, width=4.6)
    scores, values = axes[0]
    omega = np.asarray(prediction.figure_data["omega"], dtype=float)
    names = {"weight": "E[exp(ωs)]", "label": "E[y exp(ωs)]", "square": "E[y² exp(ωs)]"}
    ticks = [t for t in (0.02, 0.05, 0.1, 0.2, 0.5, 1.0)
             if omega.min() / 1.2 <= t <= omega.max() * 1.2]  # fmt: skip
    for index, (key, name) in enumerate(names.items()):
        predicted = np.asarray(prediction.values[key], dtype=float)
        estimate = measurement.values[key]
        value, error = np.asarray(estimate.value, dtype=float), np.asarray(estimate.error)
        colour = PALETTE[index % len(PALETTE)]
        shift = omega * (1 + 0.03 * (index - 1))  # side by side on the log axis
        scores.plot(shift, (value - predicted) / error, "o", ms=4, color=colour, label=name)
        values.plot(omega, predicted, "_", ms=10, mew=1.5, color=colour)  # closed form
        values.plot(omega, value, "o", ms=3, color=colour, label=f"{name}: Monte Carlo")
    bound = float(prediction.figure_data["max_z"])  # the rule's |z| bound
    for sign in (1, -1):
        scores.axhline(sign * bound, color=REFERENCE, ls="--",
                       label=f"|z| bound {bound:.2f} (family-wise 1%)" if sign > 0 else None)
    scores.axhline(0.0, color=THEORY, lw=1.5, label="Stein's lemma")
    scores.set(xscale="log", xlabel="ω", ylabel="(Monte Carlo − closed form) / SE",
               title=f"(a) {params.n_configs} random (ω, x_q, β), d={params.d}, "
               f"{params.n_examples} examples each")  # fmt: skip
    values.set(xscale="log", xlabel="ω", ylabel="moment (dashes: closed form)",
               title="(b) the moments (each configuration its own x_q, β)")  # fmt: skip
    for axis in (scores, values):
        axis.set_xticks(ticks, [f"{t:g}" for t in ticks])
        axis.minorticks_off()
    scores.set_ylim(-1.8 * bound, 1.15 * bound)  # room below the band for the legend
    scores.legend(loc="lower center", ncol=2, fontsize=6.5)
    values.legend(loc="upper left", fontsize=7)
    return figure
