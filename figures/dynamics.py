"""Figures of the gradient-flow claims: Stage I/II from random starts (He et al. 2025 §4.1-4.2,
Figure 7, the text's "Figure (8)") and the two-head flow of Appendix B ("Figure 22" in spirit),
with trained models.

Each function takes a claim's (params, prediction, measurement) and returns a matplotlib
Figure drawn only from their stored numbers (`icl-verify report` redraws it): theory and ODE
solutions as lines, trained models / fractions of runs as markers with error bars.
"""

from __future__ import annotations

import numpy as np
from icl_verify.figures.data.stages import (
    BoundPoints,
    BoundTheory,
    RandomStarts,
    StageOneTheory,
    StageTwoTheory,
)
from icl_verify.figures.style import MEASURED, PALETTE, REFERENCE, THEORY, new_figure, setting_text


def _a(value) -> np.ndarray:
    return np.asarray(value, dtype=float)


def figure_stage_one(params, prediction, measurement):
    """(a) mu^T omega(t) of every run per H against 1/(1+kappa), the judged window shaded;
    (b) 1/(1+kappa) minus the median over runs in the window against the band 2 deficit(t);
    (c) fractions per H."""
    figure, axes = new_figure(3, width=4.2)
    paths, approach, rates = axes[0]
    data = RandomStarts.from_record(measurement.figure_data, params.heads)
    theory = StageOneTheory.from_record(prediction.figure_data)
    t = data.t
    limit, start = theory.limit, theory.stage_one_start  # 1/(1+kappa), end of Stage I
    window_t, band = theory.window_t, theory.band
    median = _a(measurement.values["p_approach"].value)  # (|H|, W)
    median_se = _a(measurement.values["p_approach"].error)
    for index, heads in enumerate(params.heads):
        p = data.runs[heads].p  # (S, T)
        color = PALETTE[index % len(PALETTE)]
        for run, curve in enumerate(p):
            paths.plot(t[1:], curve[1:], color=color, lw=0.7, alpha=0.6,
                       label=f"H={heads} ({p.shape[0]} starts)" if run == 0 else None)  # fmt: skip
        deficit = limit - median[index]
        spread = np.minimum(2 * median_se[index], 0.9 * np.abs(deficit))  # a log axis: > 0
        coarse = bool(np.any(2 * median_se[index] > np.abs(deficit)))
        label = f"H={heads}" + (" (2 SE > deficit)" if coarse else "")
        approach.plot(window_t, np.abs(deficit), color=color, lw=1.2,
                      ls="--" if coarse else "-", label=label)  # fmt: skip
        approach.fill_between(window_t, np.abs(deficit) - spread, np.abs(deficit) + spread,
                              color=color, alpha=0.25, lw=0)  # fmt: skip
    paths.axhline(limit, color=THEORY, lw=1.5, ls="--", label="(4.3): 1/(1+κ)")
    paths.axvspan(start, t[-1], color=REFERENCE, alpha=0.12, lw=0,
                  label=f"judged: t ≥ {start:.3g} (end of Stage I)")  # fmt: skip
    paths.set(xscale="log", xlabel="flow time t", ylabel=r"$\mu^\top\omega$",
              title=f"(a) gradient flow on L̃ from N(0, {params.scale}²), "
              f"{setting_text(params)}")  # fmt: skip
    paths.legend(loc="lower right", fontsize=6)  # below the plateaus, right of the rise
    approach.plot(window_t, band, color=THEORY, lw=1.5, ls="--",
                  label="allowed: 2 × valley-floor deficit(t)")  # fmt: skip
    approach.plot(window_t, band / 2, color=THEORY, lw=0.8, ls=":",
                  label="valley-floor deficit (two heads)")  # fmt: skip
    approach.set(xscale="log", yscale="log", xlabel="flow time t",
                 ylabel=r"$1/(1+\kappa) - $ median $\mu^\top\omega$",
                 title="(b) the approach over the judged window (± 2 SE)")  # fmt: skip
    approach.legend(fontsize=6, loc="lower left")
    heads = _a(params.heads)
    for shift, name, marker, label in (
        (-0.08, "sign_matched", "o", f"sign-matched at every t ≥ {start:.3g} (± SE)"),
        (0.08, "zero_sum", "s", "zero-sum at t_end (± SE)"),
    ):
        rate = measurement.values[name]
        rates.errorbar(heads + shift, _a(rate.value), yerr=_a(rate.error), fmt=marker,
                       color=MEASURED if name == "sign_matched" else PALETTE[2], capsize=3,
                       mfc="none" if name == "zero_sum" else None, label=label)  # fmt: skip
    rates.axhline(1.0, color=THEORY, lw=1.5, label="prediction: every run")
    rates.set(xlabel="heads H", ylabel="fraction of runs", ylim=(-0.05, 1.1), xticks=heads,
              title="(c) Stage I patterns per H")  # fmt: skip
    rates.legend(loc="lower right", fontsize=7)
    return figure


def figure_stage_two(params, prediction, measurement):
    """(a) Ltilde excess over S_omega per run; (b) fractions per H; (c) when the patterns appear."""
    figure, axes = new_figure(3, width=4.2)
    gaps, rates, times = axes[0]
    data = RandomStarts.from_record(measurement.figure_data, params.heads)
    for index, heads in enumerate(params.heads):
        gap = np.maximum(data.runs[heads].loss_gap, 1e-12)
        jitter = np.linspace(-0.15, 0.15, gap.size)
        gaps.plot(heads + jitter, gap, "o", ms=4, color=PALETTE[index % len(PALETTE)])
    gaps.axhline(
        params.loss_gap_tolerance, color=REFERENCE, ls="--", label="threshold: on S_ω below"
    )
    theory = StageTwoTheory.from_record(prediction.figure_data)
    trap = theory.trap_loss  # all heads at omega = 1/sqrt(d)
    floor = theory.manifold_floor  # infimum of Ltilde on S_omega
    gaps.axhline(
        trap - floor,
        color=THEORY,
        ls=":",
        label=f"same-sign single-head optimum ({trap:.3f} vs {floor:.3f})",
    )
    gaps.set(
        yscale="log",
        xlabel="heads H (runs jittered)",
        xticks=_a(params.heads),
        ylabel=r"$\tilde L(t_{end}) - \tilde L_{S_\omega}(\bar\omega)$ (clipped at $10^{-12}$)",
        title=f"(a) end states of the runs, t_end = {params.t_end:g}",
    )
    gaps.legend(loc="center right", fontsize=7)
    heads = _a(params.heads)
    for offset, key, marker, label in (
        (-0.08, "homogeneous", "o", "homogeneous |ω_h|"),
        (0.08, "on_manifold", "s", "on S_ω"),
    ):
        estimate = measurement.values[key]
        rates.errorbar(
            heads + offset,
            _a(estimate.value),
            yerr=_a(estimate.error),
            fmt=marker,
            capsize=3,
            label=f"{label} (± Agresti-Coull SE)",
            color=MEASURED if key == "homogeneous" else PALETTE[2],
        )
    rates.axhline(1.0, color=THEORY, lw=1.5, label="claim: every run")
    rates.set(
        xlabel="heads H",
        ylabel="fraction of runs",
        ylim=(-0.05, 1.1),
        xticks=heads,
        title="(b) Stage II: homogeneous KQ and end on S_ω",
    )
    rates.legend(loc="lower right", fontsize=7)
    for offset, key, marker, label in (
        (-0.1, "stage_one", "o", "Stage I: sign-matched and zero-sum"),
        (0.1, "homogeneous", "s", "Stage II: KQ dispersion ≤ tol"),
    ):
        for index, count in enumerate(params.heads):
            runs = data.runs[count]
            when = runs.stage_one if key == "stage_one" else runs.homogeneous
            when = when[np.isfinite(when)]  # runs where the pattern never appears are left out
            times.plot(
                count + offset + np.linspace(-0.05, 0.05, when.size),
                when,
                marker,
                ms=3,
                mfc="none",
                color=MEASURED if key == "stage_one" else PALETTE[2],
                label=label if index == 0 else None,
            )
    times.set(
        yscale="log",
        xlabel="heads H",
        xticks=heads,
        ylabel="first time it holds to t_end",
        title=f"(c) when the patterns appear (tol {params.tolerance:g})",
    )
    times.legend(loc="upper left", fontsize=7)
    return figure


def figure_init(params, prediction, measurement):
    """(a) asymmetry of the full flow; (b) full vs reduced; (c) perturbed starts' end states."""
    figure, axes = new_figure(3, width=3.9)
    asym, paths, ends = axes[0]
    data = measurement.figure_data
    t = _a(data["t"])[1:]
    asym.plot(
        t, np.maximum(np.abs(_a(data["omega_sum"])[1:]), 1e-20), color=MEASURED, label="|ω₁+ω₂|"
    )
    asym.plot(
        t,
        np.maximum(np.abs(_a(data["mu_sum"])[1:]), 1e-20),
        color=PALETTE[2],
        ls="--",
        label="|μ₁+μ₂|",
    )
    asym.axhline(10 * params.rtol, color=REFERENCE, ls="--", label="tolerance")
    asym.set(
        xscale="log",
        yscale="log",
        xlabel="flow time t",
        ylabel="asymmetry (0 plotted at 1e-20)",
        title="(a) full 4-D flow from Def. B.1",
    )
    asym.legend(fontsize=7)
    paths.plot(t, _a(data["reduced_omega"])[1:], color=THEORY, label="ω, reduced (B.4)")
    paths.plot(t, _a(data["reduced_mu"])[1:], color=THEORY, ls="--", label="μ, reduced (B.4)")
    paths.plot(
        t[::12], _a(data["omega"])[1:][::12], "o", ms=3, color=MEASURED, label="ω₁, full 4-D flow"
    )
    paths.plot(
        t[::12],
        _a(data["mu"])[1:][::12],
        "s",
        ms=3,
        mfc="none",
        color=MEASURED,
        label="μ₁, full 4-D flow",
    )
    paths.set(
        xscale="log",
        yscale="log",
        xlabel="flow time t",
        ylabel="head 1",
        title=f"(b) reduced vs full, {setting_text(params)}",
    )
    paths.legend(fontsize=7)
    start, end = _a(data["asym_start"]), _a(data["asym_end"])
    ends.plot(end[:, 0], end[:, 2], "o", color=MEASURED, label="head 1 at t_end")
    ends.plot(end[:, 1], end[:, 3], "s", color=PALETTE[2], label="head 2 at t_end")
    ends.axhline(0, color=REFERENCE, lw=0.8)
    ends.axvline(0, color=REFERENCE, lw=0.8)
    ends.set(
        xlabel="ω_h",
        ylabel="μ_h",
        title=f"(c) {start.shape[0]} starts perturbed ≤ {params.asymmetry:.0%} "
        f"(markers overlap), t = {params.asym_t_end:g}",
    )
    ends.legend(fontsize=7)
    return figure


def figure_phase1(params, prediction, measurement):
    """(a) ODE Phase I; (b) SGD vs the flows at t = lr k; (c) Adam vs steps; (d) orbits."""
    figure, axes = new_figure(2, 2, width=4.6, height=3.4)
    (early, sgd_axis), (adam_axis, orbit) = axes
    _phase_one_panel(early, params, prediction, measurement)
    _sgd_panel(sgd_axis, params, measurement.figure_data, prediction.figure_data)
    _adam_panel(adam_axis, params, measurement.figure_data, prediction.figure_data)
    _orbit_panel(orbit, params, measurement.figure_data, prediction.figure_data)
    return figure


def _phase_one_panel(early, params, prediction, measurement):
    """(a) head 1's ω, μ in Phase I of (B.4) against ε e^{2t}, T1 measured and predicted;
    inset: μ/ω − 1 against u = d ω² (B.7)."""
    data, fig_pred = measurement.figure_data, prediction.figure_data
    t = _a(data["ode_t"])
    eps = params.eps
    early.plot(t[1:], _a(data["ode_omega"])[1:], color=THEORY, label="ω, ODE (B.4)")
    early.plot(t[1:], _a(data["ode_mu"])[1:], color=THEORY, ls="--", label="μ, ODE (B.4)")
    grid = t[(t > 0) & (t <= 1.3 * measurement.values["T1"].value)]
    early.plot(
        grid, eps * np.exp(2 * grid), color=REFERENCE, ls=":", label=r"$\varepsilon e^{2t}$ (B.5)"
    )
    early.axvline(measurement.values["T1"].value, color=MEASURED, lw=1, label="T1 measured")
    early.axvline(prediction.values["T1"], color=THEORY, lw=1, ls="-.", label="T1 predicted")
    early.set(
        yscale="log",
        xlabel="flow time t",
        ylabel="head 1",
        title=f"(a) Phase I of (B.4), ε={eps:g}, {setting_text(params)}",
    )
    early.legend(fontsize=7, loc="upper left")
    if "ratio_u" in fig_pred:  # (B.7): mu/omega - 1 against u = d omega^2, inset
        inset = early.inset_axes([0.62, 0.1, 0.35, 0.32])
        u = _a(fig_pred["ratio_u"])
        inset.plot(u, _a(prediction.values["ratio_excess"]), color=THEORY, lw=1.2)
        inset.plot(u, _a(measurement.values["ratio_excess"].value), "o", ms=2, color=MEASURED)
        inset.set(xscale="log", yscale="log")
        inset.set_title("μ/ω − 1 vs u = dω²: κu³/(12d) (B.7)", fontsize=6)
        inset.tick_params(labelsize=5.5)
        inset.minorticks_off()


def _sgd_panel(sgd_axis, params, data, fig_pred):
    """(b) the SGD-trained model (mean ± SE over runs) against the flows at t = lr k."""
    flow_t = _a(fig_pred["flow_t"])
    sgd_t, sgd_omega, sgd_mu = _a(data["sgd_t"]), _a(data["sgd_omega"]), _a(data["sgd_mu"])
    members = sgd_omega.shape[1]
    for values, name, marker in ((sgd_omega, "ω", "o"), (sgd_mu, "μ", "s")):
        mean = values.mean(axis=1)
        se = values.std(axis=1, ddof=1) / np.sqrt(members)
        sgd_axis.errorbar(
            sgd_t,
            mean,
            yerr=se,
            fmt=marker,
            ms=3,
            mfc="none",
            color=MEASURED,
            label=f"{name}, SGD lr={params.sgd_lr:g} (mean ± SE, {members} runs)",
        )
    sgd_axis.plot(
        flow_t, _a(fig_pred["flow_omega"]), color=THEORY, label="weight-space flow of L̃ (checked)"
    )
    sgd_axis.plot(flow_t, _a(fig_pred["flow_mu"]), color=THEORY, ls="--")
    sgd_axis.plot(
        flow_t,
        _a(fig_pred["b4_omega"]),
        color=PALETTE[1],
        label="(B.4) in (ω, μ), not the model's flow",
    )
    sgd_axis.plot(flow_t, _a(fig_pred["b4_mu"]), color=PALETTE[1], ls="--")
    sgd_axis.set(
        yscale="log",
        xlabel="t = lr · step",
        ylabel="ω (solid), μ (dashed)",
        title=f"(b) SGD-trained model from Def. B.1, ε={params.train_eps:g}",
    )
    sgd_axis.legend(fontsize=6.5, loc="lower right")


def _adam_panel(adam_axis, params, data, fig_pred):
    """(c) the Adam-trained model against the weight-space flow, over Adam steps."""
    flow_t = _a(fig_pred["flow_t"])
    adam_steps = _a(data["adam_steps"])
    adam_omega, adam_mu = _a(data["adam_omega"]), _a(data["adam_mu"])
    adam_axis.plot(
        adam_steps,
        adam_omega.mean(axis=1),
        "o",
        ms=3,
        color=PALETTE[2],
        label=f"ω, Adam lr={params.adam_lr:g}",
    )
    adam_axis.plot(
        adam_steps, adam_mu.mean(axis=1), "s", ms=3, mfc="none", color=PALETTE[2], label="μ, Adam"
    )
    shown = flow_t <= adam_steps[-1] * params.adam_lr
    adam_axis.plot(
        flow_t[shown] / params.adam_lr,
        _a(fig_pred["flow_omega"])[shown],
        color=THEORY,
        label="weight-space flow at t = lr·step",
    )
    adam_axis.plot(
        flow_t[shown] / params.adam_lr, _a(fig_pred["flow_mu"])[shown], color=THEORY, ls="--"
    )
    adam_axis.set(
        yscale="log",
        xlabel="Adam step k",
        ylabel="ω (solid), μ (dashed)",
        title="(c) Adam: normalised (sign-like) steps, its clock is not lr·k",
    )
    adam_axis.legend(fontsize=7)


def _orbit_panel(orbit, params, data, fig_pred):
    """(d) the orbits of the flows, SGD and Adam in the (ω, μ) plane."""
    sgd_omega, sgd_mu = _a(data["sgd_omega"]), _a(data["sgd_mu"])
    adam_omega, adam_mu = _a(data["adam_omega"]), _a(data["adam_mu"])
    orbit.plot(
        _a(fig_pred["flow_omega"]),
        _a(fig_pred["flow_mu"]),
        color=THEORY,
        label="weight-space flow of L̃",
    )
    orbit.plot(
        _a(data["ode_omega"]),
        _a(data["ode_mu"]),
        color=PALETTE[1],
        label=f"(B.4) from ε={params.eps:g}",
    )
    orbit.plot(
        sgd_omega.mean(axis=1),
        sgd_mu.mean(axis=1),
        "o",
        ms=3,
        mfc="none",
        color=MEASURED,
        label="SGD",
    )
    orbit.plot(
        adam_omega.mean(axis=1),
        adam_mu.mean(axis=1),
        "s",
        ms=3,
        mfc="none",
        color=PALETTE[2],
        label="Adam",
    )
    orbit.set(xlabel="ω (head 1)", ylabel="μ (head 1)", title="(d) orbits in the (ω, μ) plane")
    orbit.legend(fontsize=7)


def figure_phase2(params, prediction, measurement):
    """(a) omega, mu around the peak at d=5; (b) omega_max vs its bounds over d; (c) the
    Phase II rate law against the flow's d ln omega/dt; (d) t_peak's remainder beyond
    ½ ln(omega_max/eps) over the eps grid (B.15: it stays O(1))."""
    figure, axes = new_figure(4, width=4.2)
    paths, bounds, rates, clock = axes[0]
    data = measurement.figure_data
    t = _a(data["t"])[1:]
    paths.plot(t, _a(data["omega"])[1:], color=THEORY, label="ω (B.4)")
    paths.plot(t, _a(data["mu"])[1:], color=THEORY, ls="--", label="μ (B.4)")
    root, lambert = _a(prediction.figure_data["root"]), _a(prediction.figure_data["lambert"])
    paths.axhline(root[0], color=REFERENCE, ls="--", label=f"equal-ratio root {root[0]:.4f}")
    paths.axhline(lambert[0], color=REFERENCE, ls=":", label=f"Lambert bound {lambert[0]:.4f}")
    paths.plot(
        _a(data["peak_time"])[0],
        _a(data["peak_omega"])[0],
        "o",
        color=MEASURED,
        label="peak (event dω/dt = 0)",
    )
    paths.set(
        xscale="log",
        yscale="log",
        xlabel="flow time t",
        ylabel="head 1",
        title=f"(a) the ω peak, ε={params.eps:g}, {setting_text(params)}",
    )
    paths.legend(fontsize=7)
    _peak_bounds_panel(bounds, prediction, measurement, lambert, root)
    if "phase_two_omega" in prediction.figure_data:
        omega = _a(prediction.figure_data["phase_two_omega"])
        rates.plot(omega, _a(prediction.values["phase_two_rate"]), color=THEORY,
                   label="(B.11)-(B.13) at μ/ω = 1")  # fmt: skip
        rates.plot(omega, _a(measurement.values["phase_two_rate"].value), "o", ms=3,
                   color=MEASURED, label="d ln ω/dt on the flow (B.4)")  # fmt: skip
        rates.set(xlabel="ω (head 1)", ylabel="d ln ω / dt",
                  title="(c) Phase II: end of Phase I to 85% of the root")  # fmt: skip
        rates.legend(fontsize=7)
    if "peak_offsets" in data:
        eps = _a(data["eps_grid"])
        clock.plot(0.5 * np.log(1.0 / eps), _a(data["peak_offsets"]), "o-", color=MEASURED,
                   label=f"on the flow (B.4): spread {np.ptp(_a(data['peak_offsets'])):.1e}")
        for e, offset in zip(eps, _a(data["peak_offsets"]), strict=True):
            clock.annotate(f"ε={e:g}", (0.5 * np.log(1.0 / e), offset), fontsize=7,
                           textcoords="offset points", xytext=(0, 6), ha="center")  # fmt: skip
        offsets = _a(data["peak_offsets"])
        slope = measurement.values["t_peak_clock"]
        # a window of ±0.1 flow-time units: a remainder that grew with ln(1/eps) would leave it
        clock.set(ylim=(offsets.mean() - 0.1, offsets.mean() + 0.1), xlabel="½ ln(1/ε)",
                  ylabel="t_peak − ½ ln(ω_max/ε)",
                  title=f"(d) (B.15)'s O(1): t_peak slope {slope.value:.6f}")  # fmt: skip
        clock.legend(fontsize=7)
    return figure


def _peak_bounds_panel(axis, prediction, measurement, lambert, root) -> None:
    """(b) of `figure_phase2`: √d ω_max against its bounds over d (each point labelled with
    ω_max / Lambert bound) and, where the record has it, the d grid of the scaling fit."""
    data = measurement.figure_data
    d = _a(prediction.figure_data["d"])
    axis.plot(
        d, lambert * np.sqrt(d), color=THEORY, label=r"Lambert bound $\sqrt{W(L/(1+\sigma^2))}$"
    )
    axis.plot(d, root * np.sqrt(d), color=THEORY, ls="--", label="equal-ratio root × √d")
    axis.plot(
        d, _a(data["peak_omega"]) * np.sqrt(d), "o", color=MEASURED, label="ω_max × √d (ODE)"
    )
    for x, w, b in zip(d, _a(data["peak_omega"]), lambert, strict=True):
        axis.annotate(
            f"{w / b:.3f}",
            (x, w * np.sqrt(x)),
            textcoords="offset points",
            xytext=(4, -12),
            fontsize=7,
            color=MEASURED,
        )
    if "scaling_d" in data:
        grid = _a(data["scaling_d"])
        slope = measurement.values["peak_scaling"].value
        axis.plot(grid, _a(prediction.figure_data["scaling_lambert"]) * np.sqrt(grid),
                  color=THEORY, ls=":", label="Lambert bound on the d grid")  # fmt: skip
        axis.plot(grid, _a(data["scaling_peak"]) * np.sqrt(grid), "s", mfc="none", ms=4,
                  color=MEASURED, label=f"d grid: ω_max ∝ d^{slope:.3f} (fit)")  # fmt: skip
    axis.margins(y=0.12)
    axis.set(
        xscale="log",
        xlabel="d (L = 8d)",
        ylabel="√d · ω",
        title="(b) ω_max vs bounds (labels: ω_max / Lambert bound)",
    )
    axis.legend(fontsize=7)


def figure_phase3(params, prediction, measurement):
    """Figure 22 in spirit: omega, mu, mu/omega, loss, 2 omega mu vs log t with phase marks."""
    figure, axes = new_figure(3, width=3.9)
    paths, product, loss = axes[0]
    data = measurement.figure_data
    t, omega, mu = _a(data["t"]), _a(data["omega"]), _a(data["mu"])
    fine = _a(prediction.figure_data["t"])
    paths.plot(t, omega, color=THEORY, label="ω (B.4)")
    paths.plot(t, mu, color=THEORY, ls="--", label="μ (B.4)")
    paths.plot(t, mu / omega, color=PALETTE[3], lw=1, label="μ/ω")
    paths.plot(
        fine,
        _a(prediction.figure_data["late_omega"]),
        color=MEASURED,
        ls=":",
        lw=2,
        label=r"$(8\kappa d^2 t)^{-1/6}$ (checked)",
    )
    paths.plot(
        fine,
        _a(prediction.figure_data["naive_omega"]),
        color=PALETTE[1],
        ls="-.",
        label=r"naive (B.18) $\propto t^{-1/2}$: contradicted",
    )
    for axis in axes[0]:
        for name, style in (("T1", ":"), ("t_peak", "--")):
            axis.axvline(float(data[name]), color=REFERENCE, ls=style, lw=0.8)
    paths.set(
        xscale="log",
        yscale="log",
        xlabel="flow time t (dotted T1, dashed t_peak)",
        ylabel="head 1",
        title=f"(a) ε={params.eps:g}, {setting_text(params)}",
    )
    paths.legend(fontsize=6.5, loc="lower left")
    product.plot(t, _a(data["product"]), color=THEORY, label="2ωμ (B.4)")
    product.axhline(prediction.values["product_end"], color=MEASURED, ls=":", label="1/(1+κ)")
    product.set(xscale="log", xlabel="flow time t", ylabel="2ωμ", title="(b) effective GD step")
    product.legend(fontsize=7)
    loss_values = _a(data["loss"])
    loss.plot(t, loss_values, color=THEORY, label="L̃ along the flow")
    floor = prediction.figure_data["loss_floor"]  # sigma2 + kappa/(1+kappa)
    loss.axhline(floor, color=MEASURED, ls=":", label="σ² + κ/(1+κ)")
    loss.set(xscale="log", yscale="log", xlabel="flow time t", ylabel="L̃", title="(c) loss")
    loss.legend(fontsize=7)
    return figure


def figure_stage_two_bound(params, prediction, measurement):
    """(a) L̃ − bound (4.5) at random sign-matched points and on S_ω; (b) at the flows' ends."""
    figure, axes = new_figure(2, width=4.6)
    points, ends = axes[0]
    data = BoundPoints.from_record(measurement.figure_data, params.heads)
    floor = 1e-17  # exact zeros and rounding-level gaps drawn at this floor
    points.plot(data.random_loss, np.maximum(data.random_gap, floor), "o", ms=3,
                color=MEASURED, alpha=0.6, label="random sign-matched points")  # fmt: skip
    points.plot(data.manifold_loss, np.maximum(np.abs(data.manifold_gap), floor),
                "s", ms=3, mfc="none", color=PALETTE[2],
                label="points on S_ω (|gap|; exact: 0)")  # fmt: skip
    allowance = measurement.values["on_manifold"].error
    points.axhline(float(np.max(_a(allowance))), color=REFERENCE, ls="--",
                   label="float64 rounding allowance")  # fmt: skip
    points.set(
        xscale="log", yscale="log", xlabel=r"$\tilde L$ (4.1)",
        ylabel=r"$\tilde L$ − bound (4.5)" + f" (floor {floor:g})",
        title=f"(a) designed points, {setting_text(params)}",
    )  # fmt: skip
    points.legend(loc="upper left", fontsize=7)
    tolerance = BoundTheory.from_record(prediction.figure_data).tolerance
    for index, heads in enumerate(params.heads):
        gap = np.maximum(data.end_gap[heads], floor)
        on = data.ends_on[heads]
        jitter = np.linspace(-0.15, 0.15, gap.size)
        x = heads + jitter
        ends.plot(x[on], gap[on], "o", ms=4, color=PALETTE[index % len(PALETTE)],
                  label="ends on S_ω" if index == 0 else None)  # fmt: skip
        ends.plot(x[~on], gap[~on], "x", ms=5, color=PALETTE[index % len(PALETTE)],
                  label="off S_ω (same-sign trap)" if index == 0 else None)  # fmt: skip
    ends.axhline(tolerance, color=REFERENCE, ls="--", label=f"HE-S2's threshold {tolerance:g}")
    ends.set(
        yscale="log", xlabel="heads H (runs jittered)", xticks=_a(params.heads),
        ylabel=r"$\tilde L(t_{end})$ − bound", title=f"(b) flow ends, t_end = {params.t_end:g}",
    )  # fmt: skip
    ends.legend(loc="upper right", fontsize=7)  # above the H = 8 runs
    return figure
