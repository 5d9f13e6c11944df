"""Figures of He et al. (2025) §4.3: exact one-step GD risks (HE-4.3-RISK, eq. (4.11)) and the
Bayes comparison in the proportional limit (HE-T4.2iii, Theorem 4.2(iii))."""

from __future__ import annotations

import numpy as np
from icl_verify.figures.data.risks import ProportionalCurves, RecordedSteps, StepCurves
from icl_verify.figures.style import MEASURED, PALETTE, REFERENCE, THEORY, new_figure


def figure_one_step(params, prediction, measurement):
    """One panel per (d, L): risk vs eta (theory lines, Monte Carlo markers, eta* dotted); then
    the gap E(y_dGD - y_GD)^2 against L at fixed d (log-log, with the L^-2 and L^-1 orders);
    last panel: every risk's z-score (MC - exact)/SE against the +-4 band of the rule."""
    cases = params.cases
    figure, axes = new_figure(len(cases) + 2, width=3.4)
    curves = StepCurves.from_record(prediction.figure_data, len(cases))
    recorded = RecordedSteps.from_record(measurement.figure_data).steps
    per_case = len(recorded) // len(cases)
    fine = curves.eta_fine
    for k, ((d, L), axis) in enumerate(zip(cases, axes[0, :-2], strict=True)):
        part = slice(k * per_case, (k + 1) * per_case)
        steps = recorded[part]
        for name, exact, color, label in (("gd", curves.gd, THEORY, "GD"),
                                          ("dgd", curves.dgd, PALETTE[2], "debiased GD")):
            axis.plot(fine, exact[k], color=color, label=f"{label}: exact risk")
            estimate = measurement.values[f"{name}_risk"]
            axis.errorbar(
                steps,
                estimate.value[part],
                yerr=4 * estimate.error[part],
                fmt="o",
                ms=4,
                mfc="none" if name == "dgd" else MEASURED,
                color=MEASURED,
                capsize=2,
                label=f"{label}: Monte Carlo (±4 SE)",
            )
        for eta in steps[-2:]:
            axis.axvline(eta, color=REFERENCE, ls=":", lw=1)
        axis.set(
            xlabel=r"step $\eta$ (dotted: $\eta^*_{GD}$, $\eta^*_{dGD}$)",
            ylabel="risk",
            title=f"d={d}, L={L}, σ²={params.sigma2}",
        )
        low = min(
            prediction.values["dgd_risk"][part].min(), prediction.values["gd_risk"][part].min()
        )
        axis.set_ylim(low * 0.8, 1.6)
        axis.legend(fontsize=6.5, loc="upper center")
    _gap_panel(axes[0, -2], params, prediction, measurement)
    z_axis = axes[0, -1]
    for offset, (name, marker) in enumerate((("gd", "o"), ("dgd", "s"))):
        estimate = measurement.values[f"{name}_risk"]
        z = (estimate.value - prediction.values[f"{name}_risk"]) / estimate.error
        position = np.arange(z.size) + 0.2 * offset
        z_axis.plot(
            position,
            z,
            marker,
            color=MEASURED,
            mfc="none" if offset else MEASURED,
            ls="none",
            ms=4,
            label="GD" if name == "gd" else "debiased GD",
        )
    for bound in (-4, 4):
        z_axis.axhline(bound, color=REFERENCE, ls="--", lw=1)
    z_axis.axhline(0, color=THEORY, lw=1.5, label="exact risk")
    z_axis.set(
        xlabel="point: case-major, steps as in the panels",
        ylabel="(MC − exact) / SE",
        title="z-scores (dashed: rule |z| ≤ 4)",
        ylim=(-6, 6),
    )
    z_axis.legend(fontsize=6.5)
    return figure


def _gap_panel(axis, params, prediction, measurement) -> None:
    """E(y_dGD - y_GD)^2 against L at d fixed: exact η²(D+2)/L², Monte Carlo (±4 SE), and the
    proportional regime's order L^-1 through the first point, for the eye."""
    lengths = np.asarray(params.gap_L, dtype=float)
    exact, measured = prediction.values["debiasing_gap"], measurement.values["debiasing_gap"]
    order = measurement.values["gap_order"]
    axis.loglog(lengths, exact, color=THEORY, label="exact η²(D+2)/L², order L⁻²")
    axis.loglog(lengths, exact[0] * lengths[0] / lengths, color=REFERENCE, ls="--",
                label="order L⁻¹ (d growing with L)")  # fmt: skip
    slope = f"slope {order.value:.3f} ± {order.error:.3f}"
    axis.errorbar(lengths, measured.value, yerr=4 * measured.error, fmt="o", ms=4,
                  color=MEASURED, capsize=2, label=f"Monte Carlo (±4 SE): {slope}")  # fmt: skip
    title = f"d={params.gap_d}, η={params.gap_eta:g}: the two coincide as d/L → 0"
    axis.set(xlabel="prompt length L", ylabel="E(ŷ_dGD − ŷ_GD)²", title=title)
    axis.legend(fontsize=6.5)


def figure_proportional(params, prediction, measurement):
    """(a) excess risks vs xi; (b) risk ratio and (c) excess-risk ratio with their bounds.

    Lines: the limits (theory); markers: Monte Carlo extrapolated to d -> inf, with 4 SE bars.
    """
    figure, axes = new_figure(3, width=4.0)
    data = ProportionalCurves.from_record(prediction.figure_data)
    fine = data.xi_fine
    panels = (  # (axis, measured quantity); the theory curve and its bound per case below
        (axes[0, 1], "risk_ratio"),
        (axes[0, 2], "excess_ratio"),
    )
    for k, ((xi, sigma2), curves) in enumerate(zip(params.cases, data.cases, strict=True)):
        color = PALETTE[k % len(PALETTE)]
        marker_style = dict(color=color, mec="black", ms=5, capsize=2)
        axes[0, 0].plot(fine, curves.bayes - sigma2, color=color, label=f"σ²={sigma2:g}")
        axes[0, 0].plot(fine, curves.gd - sigma2, color=color, ls="--")
        for name, marker in (("bayes_risk", "o"), ("gd_risk", "s")):
            estimate = measurement.values[name]
            axes[0, 0].errorbar(
                xi,
                estimate.value[k] - sigma2,
                yerr=4 * estimate.error[k],
                fmt=marker,
                **marker_style,
            )
        theory = (curves.ratio, curves.excess_ratio)
        bounds = (curves.ratio_bound, np.full_like(fine, 1 + 1 / sigma2))
        for (axis, quantity), curve, bound in zip(panels, theory, bounds, strict=True):
            axis.plot(fine, curve, color=color, label=f"σ²={sigma2:g}")
            axis.plot(fine, bound, color=color, ls=":", lw=1)
            estimate = measurement.values[quantity]
            axis.errorbar(
                xi, estimate.value[k], yerr=4 * estimate.error[k], fmt="o", **marker_style
            )
    axes[0, 0].plot([], [], color=REFERENCE, label="Bayes (solid), tuned GD (dashed)")
    axes[0, 0].plot([], [], "o", color=REFERENCE, mec="black", label="MC Bayes, d→∞ (±4 SE)")
    axes[0, 0].plot([], [], "s", color=REFERENCE, mec="black", label="MC tuned GD, d→∞")
    axes[0, 0].set(
        xscale="log",
        yscale="log",
        xlabel=r"$\xi = d/L$",
        ylabel=r"excess risk $R - \sigma^2$",
        title="(a) limiting excess risks",
    )
    for (axis, _), title, bound in zip(
        panels,
        ("(b) risk ratio R_GD / R_Bayes", "(c) excess ratio (R_GD−σ²)/(R_Bayes−σ²)"),
        ("bound 1 + κ/(σ²(1+κ)), κ = ξ(1+σ²)", "bound 1 + 1/σ²"),
        strict=True,
    ):
        axis.plot([], [], ":", color=REFERENCE, label=bound)
        axis.plot([], [], "o", color=REFERENCE, mec="black", label="Monte Carlo, d→∞ (±4 SE)")
        axis.set(xscale="log", xlabel=r"$\xi = d/L$", ylabel="ratio", title=title)
    axes[0, 0].set_ylim(2e-4, 1.5)  # room for the legend below the curves
    axes[0, 0].legend(fontsize=6.5, loc="lower right")
    for axis, _ in panels:
        axis.legend(fontsize=6.5)
    return figure
