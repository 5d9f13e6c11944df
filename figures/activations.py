"""Figures of the normalised-activation claim HE-5.2-ACT (He et al. 2025 §5.2, Figures 9-11).

Attention weights ``phi(v)_i = f(v_i) / sum_j f(v_j)``; a two-head model (omega, mu),
(-omega, -mu) is debiased GD with step ``2 a_f omega mu`` to first order, ``a_f = f'(0)/f(0)``
(reference §HE-5.2-ACT). Each function draws the claim's stored prediction and measurement
(`figure_data` of both), one activation per row or panel, in the order of
``params.activations``:

- `figure_9`: the trained two-head circuits of one member per activation (`figures.circuits`);
- `figure_10`: omega_h(t) and mu_h(t) of every member, the shown one highlighted;
- `figure_11`: test MSE against L' beside debiased GD at the model's own fitted step;
- `figure_kernel_step`: the step a fixed (omega, 1/(2 omega)) pair applies against the exact
  kernel mean and the first-order a_f, and the trained models' fitted steps against 1/(1+kappa).
- `table_1`: the paper's Table 1 beside the measured one (the claim's table; the claim hands
  in the kernel-mean steps and the paper's numbers).

An activation none of whose seeds reached opposite heads has no fitted step and no MSE curve;
its panels say so.
"""

from __future__ import annotations

import math

import matplotlib
import numpy as np
from icl_verify.figures.circuits import circuit_heatmaps
from icl_verify.figures.data.activations import ActivationData, ActivationTheory
from icl_verify.figures.style import (
    MEASURED,
    PALETTE,
    REFERENCE,
    THEORY,
    new_figure,
    setting_text,
    training_text,
)
from matplotlib.lines import Line2D

_PER_ROW = 4  # activations per row of the panel grids (Figures 10 and 11)


def activation_colours(count: int) -> list:
    """One distinct colour per activation (matplotlib's tab10, cycled past ten).

    >>> len(activation_colours(8)), activation_colours(11)[10] == activation_colours(1)[0]
    (8, True)
    """
    cycle = matplotlib.colormaps["tab10"].colors
    return [cycle[a % len(cycle)] for a in range(count)]


def _setting(params) -> str:
    return f"{setting_text(params)}, H=2; {training_text(params)}"


def _paired(params, data: ActivationData, a: int) -> str:
    return f"{data.runs[a].paired_count}/{params.seeds} seeds paired"


def _panel_grid(params, width: float, height: float, ratios=(1.0, 1.0)):
    """Two stacked axes per activation, `_PER_ROW` activations per row; (figure, pairs)."""
    count = len(params.activations)
    columns, rows = min(_PER_ROW, count), math.ceil(count / _PER_ROW)
    figure, axes = new_figure(columns, 2 * rows, width=width, height=height)
    axes[0, 0].get_gridspec().set_height_ratios(list(ratios) * rows)
    pairs = [
        (axes[2 * (a // columns), a % columns], axes[2 * (a // columns) + 1, a % columns])
        for a in range(count)
    ]
    for a in range(count, rows * columns):  # empty cells of the last row
        axes[2 * (a // columns), a % columns].axis("off")
        axes[2 * (a // columns) + 1, a % columns].axis("off")
    return figure, pairs


def figure_9(params, prediction, measurement):
    """Figure 9: KQ and OV circuits of the shown member (lowest-loss paired one) per activation."""
    count = len(params.activations)
    data = ActivationData.from_record(measurement.figure_data, count)
    KQ = np.stack([runs.KQ for runs in data.runs])  # (A, 2, D, D)
    OV = np.stack([runs.OV for runs in data.runs])  # (A, 2, D, D)
    a_f = ActivationTheory.from_record(prediction.figure_data).a_f
    labels = [
        f"{spec}, a_f={a_f[a]:g}\n{_paired(params, data, a)}\n"
        f"shown: member {data.runs[a].shown}"
        for a, spec in enumerate(params.activations)
    ]
    title = (
        f"HE-5.2-ACT (Figure 9): trained two-head circuits\n{setting_text(params)}; "
        f"{training_text(params)}"
        "\nshown: the lowest-loss paired member (if any)"
    )
    return circuit_heatmaps(KQ, OV, [2] * count, labels, title)


def figure_10(params, prediction, measurement):
    """Figure 10: omega_h(t) (upper) and mu_h(t) (lower) per activation, every seed."""
    data = ActivationData.from_record(measurement.figure_data, len(params.activations))
    a_f = ActivationTheory.from_record(prediction.figure_data).a_f
    steps = data.log_steps  # (n,)
    later = steps > 0  # log time axis
    figure, pairs = _panel_grid(params, width=2.7, height=1.75)
    heads = (PALETTE[0], PALETTE[2])
    bold, faint = dict(lw=1.3, alpha=1.0, zorder=3), dict(lw=0.7, alpha=0.3, zorder=2)
    for a, (spec, (omega_axis, mu_axis)) in enumerate(zip(params.activations, pairs, strict=True)):
        runs = data.runs[a]
        shown = runs.shown
        for axis, history in ((omega_axis, runs.omega_history), (mu_axis, runs.mu_history)):
            # history: (n, seeds, 2)
            axis.axhline(0.0, color=REFERENCE, lw=0.6)
            for seed in range(history.shape[1]):
                for h in range(2):
                    axis.plot(
                        steps[later],
                        history[later, seed, h],
                        color=heads[h],
                        **(bold if seed == shown else faint),
                    )
            axis.set_xscale("log")
        end_omega = np.abs(runs.omega_history[-1, shown]).mean()
        end_mu = np.abs(runs.mu_history[-1, shown]).mean()
        omega_axis.set_title(
            f"{spec}, a_f={a_f[a]:g}: {_paired(params, data, a)}\n"
            f"member {shown} at the end: |ω|={end_omega:.3f}, |μ|={end_mu:.2f}",
            fontsize=7,
        )
        omega_axis.tick_params(labelbottom=False)
        mu_axis.set_xlabel("Adam step t")
        omega_axis.set_ylabel("ω_h(t)")
        mu_axis.set_ylabel("μ_h(t)")
    handles = [Line2D([], [], color=heads[h], **style) for style in (bold, faint) for h in range(2)]
    labels = [f"head {h + 1}, {who}" for who in ("shown member", "other seeds") for h in range(2)]
    figure.legend(handles, labels, loc="outside lower center", ncols=4, fontsize=7.5)
    figure.suptitle(
        f"HE-5.2-ACT (Figure 10): KQ scale ω_h(t) and OV weight μ_h(t) of both heads; "
        f"{params.seeds} seeds per activation\n{_setting(params)}",
        fontsize=9.5,
    )
    return figure


def figure_11(params, prediction, measurement):
    """Figure 11: test MSE against L' per activation beside debiased GD at the optimal step
    (judged) and at the seeds' fitted step (drawn), and the ratio to the former."""
    data = ActivationData.from_record(measurement.figure_data, len(params.activations))
    theory = ActivationTheory.from_record(prediction.figure_data)
    lengths = data.lengths  # (n,)
    figure, pairs = _panel_grid(params, width=2.7, height=1.6, ratios=(1.0, 0.55))
    drawn = [a for a, paired in enumerate(data.curves) if paired is not None]
    dgd = data.dgd  # (n,) at the optimal step, the same for all
    curves = [dgd] + [c for a in drawn for c in (data.curves[a].mse, data.curves[a].dgd_fit)]
    low, high = (min(c.min() for c in curves), max(c.max() for c in curves)) if curves else (0, 1)
    margin = 0.06 * (high - low)
    band = params.dgd_rtol + float(np.max(theory.step_shift))  # the rule
    tracks = measurement.values["tracks_dgd"]  # MSE / dGD at L', with its paired SE
    ratio = np.asarray(tracks.value, dtype=float)  # (A n,) activation-major
    ratio_se = np.broadcast_to(np.asarray(tracks.error, dtype=float), ratio.shape)
    ratio, ratio_se = ratio.reshape(-1, lengths.size), ratio_se.reshape(-1, lengths.size)
    finite = np.where(np.isfinite(ratio_se), ratio_se, 0.0)  # one paired seed: no bar drawn
    reach = max([2.2 * band] + [1.1 * np.max(np.abs(ratio[a] - 1) + finite[a]) for a in drawn])
    ylim = (low - margin, high + margin)
    for a, (spec, (curve_axis, ratio_axis)) in enumerate(
        zip(params.activations, pairs, strict=True)
    ):
        curve_axis.set_title(f"{spec}: {_paired(params, data, a)}", fontsize=7.5)
        curve_axis.axvline(params.L, color=REFERENCE, ls=":", lw=1)
        if a not in drawn:
            _no_pair_panel(curve_axis, params, lengths, ylim)
            ratio_axis.axis("off")
            continue
        _curve_panel(curve_axis, params, data, theory, a, ylim)
        _ratio_panel(ratio_axis, params, lengths, ratio[a], ratio_se[a], band, reach)
    if drawn:
        first = pairs[drawn[0]]
        handles, labels = first[0].get_legend_handles_labels()
        extra = first[1].get_legend_handles_labels()
        figure.legend(
            handles + extra[0], labels + extra[1], loc="outside lower center", ncols=3, fontsize=7.5
        )
    figure.suptitle(
        f"HE-5.2-ACT (Figure 11): test MSE vs L' beside debiased GD at η* (judged) and at the "
        f"fitted step (drawn); "
        f"{params.n_prompts} shared prompts per L'\n{_setting(params)}; dotted: training L",
        fontsize=9.5,
    )
    return figure


def _no_pair_panel(curve_axis, params, lengths, ylim):
    """An activation without a paired member: a note where its curves would be."""
    curve_axis.text(
        0.5,
        0.5,
        f"no paired member among {params.seeds} seeds:\nno fitted "
        "step, no curve to compare",
        transform=curve_axis.transAxes,
        ha="center",
        va="center",
        fontsize=7.5,
        color=MEASURED,
        bbox=dict(facecolor="white", edgecolor="none"),
    )
    curve_axis.set(xlim=(lengths.min(), lengths.max()), ylim=ylim)


def _curve_panel(curve_axis, params, data, theory, a, ylim):
    """Activation `a`'s test MSE against L' beside debiased GD at η* (judged) and at the
    seeds' fitted step (drawn)."""
    mse, se = data.curves[a].mse, data.curves[a].mse_se
    curve_axis.plot(
        data.lengths,
        data.dgd,  # at the optimal step, the same for all
        "--",
        color=THEORY,
        lw=1.2,
        label=f"debiased GD at η* = 1/(1+κ) = {theory.eta_star:.3f} "
        "(MC, same prompts; judged)",
    )
    curve_axis.plot(
        data.lengths,
        data.curves[a].dgd_fit,
        "-.",
        color=PALETTE[2],
        lw=1.0,
        label="debiased GD at the seeds' mean fitted step η̂ (MC; drawn, not judged)",
    )
    curve_axis.errorbar(
        data.lengths,
        mse,
        se,
        ls="none",
        marker="o",
        ms=3,
        color=MEASURED,
        capsize=1.5,
        elinewidth=0.8,
        label="trained two-head models, mean of the paired seeds (± SE over seeds)",
    )
    curve_axis.text(
        0.97,
        0.93,
        f"η̂ = {data.eta_fit[a]:.3f}",
        transform=curve_axis.transAxes,
        ha="right",
        va="top",
        fontsize=7.5,
    )
    curve_axis.set(ylim=ylim, ylabel="test MSE")
    curve_axis.tick_params(labelbottom=False)


def _ratio_panel(ratio_axis, params, lengths, ratio, ratio_se, band, reach):
    """One activation's MSE over debiased GD at η* against L' (± SE over seeds), in the
    rule's band."""
    ratio_axis.axhspan(
        1 - band,
        1 + band,
        color=REFERENCE,
        alpha=0.18,
        lw=0,
        label=f"1 ± (dgd_rtol + step allowance) = 1 ± {band:.3g}",
    )
    ratio_axis.axhline(1.0, color=THEORY, lw=1)
    ratio_axis.axvline(params.L, color=REFERENCE, ls=":", lw=1)
    ratio_axis.errorbar(
        lengths,
        ratio,
        ratio_se,
        ls="none",
        marker="o",
        ms=2.5,
        color=MEASURED,
        capsize=1.2,
        elinewidth=0.7,
    )
    ratio_axis.set(
        ylim=(1 - reach, 1 + reach),
        ylabel="MSE / dGD(η*)\n(± SE over seeds)",
        xlabel="test prompt length L'",
    )


def figure_kernel_step(params, prediction, measurement):
    """(a) step of a fixed (omega, 1/(2 omega)) pair / a_f vs omega; (b) trained fitted steps."""
    data = ActivationData.from_record(measurement.figure_data, len(params.activations))
    theory = ActivationTheory.from_record(prediction.figure_data)
    figure, axes = new_figure(2, width=4.9, height=4.3)
    step_axis, fit_axis = axes[0]
    _kernel_step_panel(step_axis, figure, params, data, theory)
    _fitted_step_panel(fit_axis, figure, params, data, theory)
    figure.suptitle(
        f"HE-5.2-ACT: the step a normalised activation's ± pair applies (σ²={params.sigma2:g})",
        fontsize=9.5,
    )
    return figure


def _kernel_step_panel(step_axis, figure, params, data, theory):
    """(a) the step a fixed ± pair (ω, 1/(2ω)) applies, over a_f, against ω: the exact kernel
    mean beside the step fitted on prompts; its legend below the figure's left."""
    specs = list(params.activations)
    a_f = theory.a_f  # (A,)
    omegas = theory.kernel_omegas  # (n_omega,)
    scale = np.where(a_f == 0, np.nan, a_f)[:, None]  # steps / a_f; a_f = 0 is not drawn
    kernel = theory.kernel_step / scale  # (A, n_omega)
    measured = data.kernel_measured / scale  # (A, n_omega)
    measured_se = data.kernel_measured_se / np.abs(scale)
    colours = activation_colours(len(specs))
    width = np.ptp(omegas) if omegas.size > 1 else omegas[0]
    offsets = (np.arange(len(specs)) - (len(specs) - 1) / 2) * 0.015 * width  # side by side
    step_axis.axhline(
        1.0,
        color="black",
        lw=1,
        ls=":",
        zorder=4,
        label="first order: step = a_f at every ω",
    )
    for a, spec in enumerate(specs):
        if a_f[a] == 0:  # no first-order step to divide by (e.g. f = 1 + x^2)
            step_axis.plot([], [], " ", label=f"{spec}: a_f = 0, not drawn (step is O(ω²))")
            continue
        step_axis.plot(omegas + offsets[a], kernel[a], "_", color=colours[a], ms=10, mew=2)
        step_axis.plot(omegas + offsets[a], kernel[a], "-", color=colours[a], lw=0.7, alpha=0.5)
        step_axis.errorbar(
            omegas + offsets[a],
            measured[a],
            measured_se[a],
            ls="none",
            marker="o",
            ms=3.5,
            color=colours[a],
            capsize=2,
            label=f"{spec} (a_f={a_f[a]:g})",
        )
    step_axis.plot(
        [],
        [],
        "_",
        ms=13,
        mew=2,
        color=REFERENCE,
        label="bars: exact kernel mean (theory)",
    )
    step_axis.plot(
        [],
        [],
        "o",
        color=REFERENCE,
        label=f"points: fitted at L={params.kernel_length // 2}, {params.kernel_length}, "
        f"extrapolated to L → ∞ (± 1 SE, {params.kernel_prompts} prompts each)",
    )
    step_axis.set(
        xlabel="KQ scale ω of the pair (μ = 1/(2ω))",
        ylabel="applied step / a_f",
        title=f"(a) fixed pair (ω, 1/(2ω)), (−ω, −1/(2ω)), d={params.d}",
    )
    step_axis.set_xticks(omegas)
    handles, labels = step_axis.get_legend_handles_labels()
    figure.legend(handles, labels, loc="outside lower left", ncols=2, fontsize=7)


def _fitted_step_panel(fit_axis, figure, params, data, theory):
    """(b) the trained two-head models' fitted steps per activation beside the optimal
    1/(1+κ) and Table 1's 2 a_f ω μ; its legend below the figure's right."""
    specs = list(params.activations)
    a_f = theory.a_f  # (A,)
    eta = data.eta_fit  # (A,), NaN without a paired member
    error = data.eta_fit_error
    table = data.table  # (A, 3): omega, mu, member
    first_order = 2 * a_f * table[:, 0] * table[:, 1]  # eta_eff = 2 a_f omega mu (Table 1)
    eta_star = theory.eta_star
    positions = np.arange(len(specs))
    fit_axis.axhline(
        eta_star,
        color=THEORY,
        lw=1.3,
        label=f"optimal 1/(1+κ) = L/(L+d(1+σ²)) = {eta_star:.4f} (exact)",
    )
    fit_axis.errorbar(
        positions,
        eta,
        error,
        ls="none",
        marker="o",
        ms=4.5,
        color=MEASURED,
        capsize=3,
        label="fitted step, mean of the paired seeds (± SE over seeds)",
    )
    fit_axis.plot(
        positions,
        first_order,
        "D",
        ms=4.5,
        mfc="none",
        color=PALETTE[2],
        label="2 a_f ω μ at its learned ω, μ (Table 1's η_eff)",
    )
    for a in np.flatnonzero(~np.isfinite(eta)):
        fit_axis.text(
            a,
            0.04,
            "no paired\nseed",
            ha="center",
            va="bottom",
            fontsize=6.5,
            color=MEASURED,
            transform=fit_axis.get_xaxis_transform(),
        )
    fit_axis.set_xticks(positions, specs, rotation=35, ha="right")
    fit_axis.set_xlim(-0.6, len(specs) - 0.4)
    # the points set the scale; an error bar far longer than the spread is cut and labelled
    values = np.concatenate([eta, first_order, [eta_star]])
    values = values[np.isfinite(values)]
    finite = error[np.isfinite(error)]
    pad = max(0.15 * np.ptp(values), 2.0 * np.median(finite) if finite.size else 0.0, 0.01)
    low, high = values.min() - pad, values.max() + pad
    fit_axis.set_ylim(low, high)
    for a in np.flatnonzero((eta - error < low) | (eta + error > high)):
        judged = np.isfinite(error[a])  # infinite: learned omega above omega_max, not judged
        fit_axis.annotate(
            f"± {error[a]:.2g}" if judged else f"ω > {params.omega_max:g}",
            (a, eta[a]),
            xytext=(5, 4) if judged else (0, -13),
            textcoords="offset points",
            ha="left" if judged else "center",
            fontsize=6.5,
            color=MEASURED,
        )
    fit_axis.set(
        ylabel="step η",
        title=f"(b) trained two-head models at L={params.L}\n"
        f'("ω > {params.omega_max:g}": beyond the allowance\'s range, not judged)',
    )
    handles, labels = fit_axis.get_legend_handles_labels()
    figure.legend(handles, labels, loc="outside lower right", fontsize=7)


def table_1(specs, prediction, measurement, kernel, paper) -> str:
    """Table 1 of the paper beside the measured one (the table of HE-5.2-ACT).

    Per activation spec: the learned omega, mu (`ActivationData.table`), 2 a_f omega
    mu, the fitted step and ``kernel``, the kernel-mean step at the learned (omega, mu) (None
    where no seed paired), beside ``paper``, the paper's (omega, mu, eta_eff) (nan where it has
    none); the claim hands in both (figures compute no theory).
    """
    data = ActivationData.from_record(measurement.figure_data, len(specs))
    theory = ActivationTheory.from_record(prediction.figure_data)
    table, eta_fit, a_f = data.table, data.eta_fit, theory.a_f
    rows = [
        "Table 1 (He et al. 2025), measured beside the paper's (paper: reference §HE-5.2-ACT; "
        "η_eff = 2 a_f ω μ; fitted: the step of the model's predictions on debiased GD; kernel "
        "mean: `theory.kernel_mean_step` at the learned ω, μ):",
        "",
        "| activation | a_f | ω | μ | η_eff = 2 a_f ω μ | fitted step | kernel mean | "
        "paper ω | paper μ | paper η_eff |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for a, spec in enumerate(specs):
        omega, mu, _ = table[a]
        if np.isfinite(omega):
            cells = [f"{omega:.4f}", f"{mu:.4f}", f"{2 * a_f[a] * omega * mu:.4f}",
                     f"{eta_fit[a]:.4f}", f"{kernel[a]:.4f}"]  # fmt: skip
        else:
            cells = ["no paired seed"] + ["—"] * 4
        rows.append(
            "| "
            + " | ".join([spec, f"{a_f[a]:g}", *cells, *(f"{p:.4f}" for p in paper[a])]).replace(
                "nan", "—"
            )
            + " |"
        )
    rows += ["", f"Optimal debiased step 1/(1+κ) = {theory.eta_star:.4f}."]
    return "\n".join(rows)
