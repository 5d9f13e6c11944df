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
from icl_verify.figures.style import (
    MEASURED,
    PALETTE,
    REFERENCE,
    THEORY,
    log_ticks,
    new_figure,
    set_log_ticks,
)

SWEEPS = ("fixed_d", "proportional", "scaled")
TITLES = {
    "fixed_d": "(i) d = {d:g} fixed, ω = {w:.3g}",
    "proportional": "(ii) d = L/8, ω = {w:.3g} fixed",
    "scaled": "(iii) ω = c/√d, d = L/8 (c = {c:.3g})",
}
COLOURS = (*PALETTE, "#6a4c93", "#1982c4", "#8ac926")


def figure_20(params, prediction, measurement):
    """Histograms of L||p||^2 per sweep with the approximation marked, and mean / leading vs L."""
    theory, measured = prediction.figure_data, measurement.figure_data
    figure, axes = new_figure(4, 1, width=3.6, height=3.2)
    for axis, sweep in zip(axes[0, :3], SWEEPS, strict=True):
        L, d, w = (np.asarray(theory[f"{sweep}_{k}"]) for k in ("L", "d", "omega"))
        edges, density = np.asarray(measured[f"{sweep}_edges"]), measured[f"{sweep}_density"]
        rho = np.asarray(theory[f"{sweep}_rho"])
        for k, (n, row) in enumerate(zip(L, density, strict=True)):
            colour = COLOURS[k % len(COLOURS)]
            axis.stairs(row, edges, color=colour, label=f"L={n:g} (d={d[k]:g}, ρ={rho[k]:.2g})")
            axis.axvline(theory[f"{sweep}_approximation"][k], color=colour, ls="--", lw=1)
        if sweep == "fixed_d":
            axis.plot(theory["limit_y"], theory["limit_density"], color=THEORY, lw=1.5,
                      label="L→∞: law of exp(ω²‖x_q‖²)")  # fmt: skip
        axis.set_xscale("log")
        set_log_ticks(axis, log_ticks(edges[0], edges[-1]))
        axis.set_xlabel("L‖p‖²  (dashed: approximation)")
        axis.set_ylabel("density")
        axis.set_title(TITLES[sweep].format(d=d[0], w=w[0], c=w[0] * np.sqrt(d[0])))
        axis.legend(loc="upper right", fontsize=6.5)
    axis = axes[0, 3]
    for k, sweep in enumerate(SWEEPS):
        L = np.asarray(theory[f"{sweep}_L"])
        leading = np.asarray(theory[f"{sweep}_leading"])
        mean, se = np.asarray(measured[f"{sweep}_mean"]), np.asarray(measured[f"{sweep}_se"])
        colour = (MEASURED, PALETTE[1], PALETTE[2])[k]
        axis.errorbar(L, mean / leading, 4 * se / leading, fmt="o", ms=3.5, color=colour,
                      label=f"measured {sweep.replace('_', ' ')}")  # fmt: skip
        corrected = np.asarray(theory[f"{sweep}_corrected"]) / leading
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
