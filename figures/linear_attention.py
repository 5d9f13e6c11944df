"""Figures of the linear-attention claims HE-5.1-* (He et al. 2025 §5.1, Figure 8).

Each function draws one claim's stored prediction and measurement (`figure_data` of both):

- `figure_lin`: the trained one-head linear-attention members (5.1): their circuits, the step
  gamma = omega mu they apply over training against eta_GD* = L/(L+d(1+sigma2)+1), and their test
  MSE at L against the optimal GD risk (reference §HE-5.1-LIN, §HE-4.3-RISK);
- `figure_pair`: a softmax pair (eps KQ, OV/(2 eps)), (-eps KQ, -OV/(2 eps)) against one
  linear head (5.2): the O(eps^2) residual once the centring term is subtracted, and the O(1)
  raw gap without it (§HE-5.1-SM2LIN);
- `figure_length`: test MSE against the test length L' of linear attention (frozen-step GD)
  and of softmax attention (Figure 8, §HE-5.1-LENGTH).
"""

from __future__ import annotations

import numpy as np
from icl_verify.figures.circuits import circuit_heatmaps
from icl_verify.figures.data.linear_attention_length import LengthData, LengthTheory
from icl_verify.figures.style import (
    MEASURED,
    PALETTE,
    REFERENCE,
    THEORY,
    log_ticks,
    new_figure,
    new_subfigures,
    set_log_ticks,
    setting_text,
    training_text,
)
from matplotlib.ticker import MaxNLocator


def figure_lin(params, prediction, measurement):
    """(a) circuits per member; (b) learned step gamma(t) against eta_GD*; (c) test MSE at L."""
    data, theory = measurement.figure_data, prediction.figure_data
    KQ, OV = np.asarray(data["KQ"], dtype=float), np.asarray(data["OV"], dtype=float)  # (E, D, D)
    members = KQ.shape[0]
    eta, atol = float(theory["eta_gd"]), float(params.step_atol)
    figure, (left, right) = new_subfigures(
        11.5, max(5.0, 1.45 * members + 1.0), ncols=2, width_ratios=(4.0, 7.5)
    )
    circuit_heatmaps(
        KQ[:, None],
        OV[:, None],
        [1] * members,
        [f"member {e}" for e in range(members)],
        "(a) learned circuits",
        container=left,
    )
    panels = right.subplot_mosaic(
        [["step", "risk"], ["zoom", "risk"]], width_ratios=(1.6, 1.0), height_ratios=(1.6, 1.0)
    )
    step_axis, zoom, risk_axis = panels["step"], panels["zoom"], panels["risk"]
    _step_panels(step_axis, zoom, right, params, data, measurement, eta, atol)
    _risk_panel(risk_axis, params, theory, measurement)
    figure.suptitle(
        f"HE-5.1-LIN: one-head linear attention trained at {setting_text(params)}; "
        f"{training_text(params)}",
        fontsize=9.5,
    )
    return figure


def _step_panels(step_axis, zoom, right, params, data, measurement, eta, atol):
    """(b) each member's learned step γ(t) = ω(t) μ(t) against η_GD* ± step_atol; (b′) the
    last quarter of the logs with the compared means; the legend below `right`."""
    members = len(data["KQ"])
    steps = np.asarray(data["log_steps"], dtype=float)  # (n,)
    history = np.asarray(data["step_history"], dtype=float)  # (n, E)
    shown = steps > 0  # log time axis
    late = slice(-max(1, steps.size // 4), None)  # the settled window: the last quarter of logs
    settled = measurement.values["step"]  # (E,) last-quarter mean, |drift| + batch-means SE
    settled_value = np.atleast_1d(np.asarray(settled.value, dtype=float))
    settled_error = np.broadcast_to(np.asarray(settled.error, dtype=float), settled_value.shape)
    window = steps[-1] - steps[late][0]
    for axis in (step_axis, zoom):
        axis.axhspan(
            eta - atol, eta + atol, color=THEORY, alpha=0.15, lw=0, label=f"± step_atol = {atol:g}"
        )
        axis.axhline(
            eta, color=THEORY, lw=1.3, label=f"η_GD*(L) = L/(L+d(1+σ²)+1) = {eta:.4f} (exact)"
        )
    for e in range(members):
        colour = PALETTE[e % len(PALETTE)]
        step_axis.plot(
            steps[shown],
            history[shown, e],
            color=colour,
            lw=1.1,
            label=f"member {e}: γ = ω μ (measured)",
        )
        zoom.plot(steps[late], history[late, e], color=colour, lw=1.0, alpha=0.7)
        zoom.errorbar(
            steps[-1] + (e + 1) * 0.05 * window,
            settled_value[e],
            settled_error[e],
            marker="o",
            ms=4,
            color=colour,
            capsize=2.5,
        )
    bars = np.abs(settled_value - eta) + settled_error
    spread = max(3 * atol, 1.15 * max(np.abs(history[late] - eta).max(), bars.max()))
    zoom.set_ylim(eta - spread, eta + spread)
    zoom.set_xlim(steps[late][0], steps[-1] + (members + 1) * 0.05 * window)
    zoom.xaxis.set_major_locator(MaxNLocator(4))  # step numbers of six digits: few ticks
    zoom.set(
        xlabel="Adam step t",
        ylabel="γ(t)",
        title="(b′) the last quarter of the logs\n"
        "points: its mean ± (|drift| + batch-means SE), compared",
    )
    step_axis.set(
        xscale="log",
        xlabel="Adam step t",
        ylabel="learned step γ(t) = ω(t) μ(t)",
        title="(b) step applied over training",
    )
    handles, labels = step_axis.get_legend_handles_labels()
    right.legend(handles, labels, loc="outside lower center", ncols=3, fontsize=7)


def _risk_panel(risk_axis, params, theory, measurement):
    """(c) each member's test MSE at L against R_GD(η*)."""
    risk = measurement.values["risk"]
    value = np.atleast_1d(np.asarray(risk.value, dtype=float))
    error = np.broadcast_to(np.asarray(risk.error, dtype=float), value.shape)
    positions = np.arange(value.size)
    risk_axis.axhline(
        float(theory["risk_gd"]),
        color=THEORY,
        lw=1.3,
        label=f"R_GD(η*) = {float(theory['risk_gd']):.4f} (exact)",
    )
    risk_axis.errorbar(
        positions,
        value,
        error,
        ls="none",
        marker="o",
        color=MEASURED,
        capsize=3,
        label="measured (± 1 SE)",
    )
    risk_axis.set_xticks(positions, [str(e) for e in positions])  # 4 paper members: no overlap
    risk_axis.set_xlim(-0.6, value.size - 0.4)
    risk_axis.margins(y=0.3)
    risk_axis.set(
        xlabel="member",
        ylabel="test MSE at L (includes σ²)",
        title=f"(c) test MSE at L = {params.L}\n({params.n_prompts} Monte Carlo prompts)",
    )
    risk_axis.legend(loc="upper right", fontsize=7)


def figure_pair(params, prediction, measurement):
    """max|pair − linear − its ε → 0 limit| and max|pair − linear| against eps, log-log."""
    data = measurement.figure_data
    eps = np.asarray(data["eps"], dtype=float)  # (n,)
    slopes = np.asarray(measurement.values["slope"].value, dtype=float)  # (centred, uncentred)
    slope_errors = np.broadcast_to(np.asarray(measurement.values["slope"].error), slopes.shape)
    centring = float(np.asarray(prediction.figure_data["centring_norm"], dtype=float)[1])
    figure, axes = new_figure(width=5.6, height=4.6)
    axis = axes[0, 0]
    axis.axhline(
        centring,
        color=THEORY,
        lw=1.3,
        label=f"centring term max |OV z̄ z̄ᵀ KQ z_q| "
        f"= {centring:.3g} on the uncentred prompts (exact)",
    )
    axis.plot(
        eps,
        np.asarray(data["gap_uncentred"], dtype=float),
        "s",
        mfc="none",
        ms=6,
        color=PALETTE[1],
        label="uncentred prompts: max |pair − linear| (measured)",
    )
    for key, slope, slope_error, marker, colour, name in (
        ("residual_uncentred", slopes[1], slope_errors[1], "o", MEASURED, "uncentred"),
        ("residual_centred", slopes[0], slope_errors[0], "^", PALETTE[2], "centred"),
    ):
        axis.plot(
            eps,
            np.asarray(data[key], dtype=float),
            marker=marker,
            color=colour,
            ms=4,
            lw=1,
            label=f"{name} prompts: max |pair − linear − limit| (measured; fitted "
            f"slope {slope:.4f} ± {slope_error:.1g})",
        )
    residuals = np.concatenate([data["residual_centred"], data["residual_uncentred"]])
    anchor = 3.0 * np.max(residuals) / eps.max() ** 2  # a guide above the points, not on them
    axis.plot(eps, anchor * eps**2, "--", color=REFERENCE, lw=1, label="slope-2 guide ∝ ε²")
    axis.set(
        xscale="log",
        yscale="log",
        xlabel="ε (KQ scale of the pair)",
        ylabel="largest |difference| over prompts and outputs",
    )
    set_log_ticks(axis, log_ticks(eps.min(), eps.max()))
    axis.set_title(
        f"HE-5.1-SM2LIN: softmax pair (±ε KQ, ±OV/(2ε)) vs linear head (KQ, OV)\n"
        f"D={params.D}, L={params.L}, {params.n_prompts} prompts per set, float64"
    )
    handles, labels = axis.get_legend_handles_labels()
    figure.legend(handles, labels, loc="outside lower center", ncols=1, fontsize=7)
    return figure


def figure_length(params, prediction, measurement):
    """Figure 8: test MSE against L', (a) every curve on a log scale, (b) L' >= L, linear scale."""
    data = LengthData.from_record(measurement.figure_data)
    theory = LengthTheory.from_record(prediction.figure_data)
    figure, axes = new_figure(2, width=4.8, height=4.2)
    full, zoom = axes[0]
    lengths, linear_mean = data.models.lengths, data.models.linear_mean  # (n,) each
    for axis in (full, zoom):
        _reference_curves(axis, lengths, data, theory)
        _measured_curves(axis, lengths, linear_mean, params, data)
        _length_marks(axis, lengths, linear_mean, params, data, theory)
    _full_scale(full, linear_mean, params, data, theory)
    _zoom_scale(zoom, lengths, params, data, theory)
    handles, labels = full.get_legend_handles_labels()
    figure.legend(handles, labels, loc="outside lower center", ncols=2, fontsize=7)
    figure.suptitle(
        f"HE-5.1-LENGTH (Figure 8): trained at {setting_text(params)} ({training_text(params)}); "
        f"{params.n_prompts} shared test prompts per L'",
        fontsize=9.5,
    )
    return figure


def _length_series(data: LengthData) -> tuple:
    """The softmax models and the Bayes predictor, measured at every L': (key, label,
    marker, colour) each."""
    ones, twos = data.models.one_head_members.size, data.models.two_head_members.size
    return (  # key, label, marker, colour
        ("H1", f"softmax, H = 1, mean of {ones} seeds (measured ± SE over seeds)", "s", PALETTE[1]),
        (
            "H2",
            f"softmax, H = 2, mean of {twos} paired seeds (measured ± SE over seeds)",
            "^",
            PALETTE[2],
        ),
        ("Bayes", "Bayes: ridge λ = σ²d (MC ± 1 SE)", "D", "#3d3d3d"),
    )


def _reference_curves(axis, lengths, data, theory):
    """Frozen-step GD (linear attention's theory), debiased GD at η* and at H = 2's fitted
    step, against L'."""
    eta_fit = float(np.mean(data.models.fitted_steps))  # the H = 2 seeds' mean
    axis.plot(
        lengths,
        theory.frozen,
        color=THEORY,
        lw=1.3,
        label="linear attention: frozen-step GD R_lin(L') (exact)",
    )
    axis.plot(
        lengths, theory.dgd, "--", color=THEORY, lw=1.1, label="debiased GD at η* (exact)"
    )
    axis.plot(
        lengths,
        data.curve("dGDfit")[0],
        "-.",
        color=PALETTE[2],
        lw=1.1,
        label=f"debiased GD at H = 2's mean fitted step {eta_fit:.3f} (MC, not judged)",
    )


def _measured_curves(axis, lengths, linear_mean, params, data):
    """Linear attention's members and their mean, the softmax models and Bayes, against L'."""
    for k, member in enumerate(data.models.linear_members):
        axis.plot(
            lengths,
            member,
            color=MEASURED,
            lw=0.6,
            alpha=0.45,
            label="linear attention, each member (measured)" if k == 0 else None,
        )
    axis.errorbar(
        lengths,
        linear_mean,
        data.models.linear_se,
        ls="none",
        marker="o",
        ms=3.5,
        color=MEASURED,
        capsize=1.5,
        elinewidth=0.8,
        label=f"linear attention, mean of {params.linear_members} members (± SE over seeds)",
    )
    for key, label, marker, colour in _length_series(data):
        axis.errorbar(
            lengths,
            *data.curve(key),
            ls="none",
            marker=marker,
            ms=3.5,
            color=colour,
            capsize=1.5,
            elinewidth=0.8,
            label=label,
        )


def _length_marks(axis, lengths, linear_mean, params, data, theory):
    """The training L, the exact argmin of R_lin and the measured one on the grid."""
    argmin, measured_argmin = theory.argmin, data.models.measured_argmin
    axis.axvline(params.L, color=REFERENCE, ls=":", lw=1)
    axis.axvline(
        argmin,
        color=THEORY,
        lw=0.8,
        alpha=0.8,
        label=f"argmin R_lin = L + (d(1+σ²)+1)/2 = {argmin:.2f} (exact)",
    )
    at = int(np.argmin(np.abs(lengths - measured_argmin)))
    axis.plot(
        measured_argmin,
        linear_mean[at],
        "*",
        ms=13,
        mfc="none",
        mec="black",
        mew=0.8,
        label=f"measured argmin on the grid: L' = {measured_argmin:g}",
    )
    axis.set_xlabel("test prompt length L'")


def _full_scale(full, linear_mean, params, data, theory):
    """(a) every model on a log scale."""
    every = np.concatenate(
        [theory.frozen, linear_mean] + [data.curve(key)[0] for key, *_ in _length_series(data)]
    )
    full.set_yscale("log")
    set_log_ticks(full, log_ticks(every.min(), every.max()), which="y")
    full.set(ylabel="test MSE (true; includes the noise σ²)", title="(a) every model, log scale")
    full.text(
        params.L,
        every.max(),
        f"training L = {params.L} ",
        ha="right",
        va="top",
        fontsize=7,
        color=REFERENCE,
    )


def _zoom_scale(zoom, lengths, params, data, theory):
    """(b) L' >= L on a linear scale, fitted to the softmax models and their GD references."""
    longer = lengths >= params.L
    softmax = np.concatenate(
        [data.curve(key)[0][longer] for key in ("H1", "H2", "Bayes", "dGDfit")]
        + [theory.dgd[longer]]
    )  # the softmax models and their GD references at L' >= L
    span = softmax.max() - softmax.min()
    zoom.set_xlim(params.L - 0.04 * (lengths.max() - params.L), lengths.max() * 1.02)
    zoom.set_ylim(softmax.min() - 0.1 * span, softmax.max() + 0.35 * span)
    zoom.set(ylabel="test MSE", title="(b) zoom on L' ≥ L, linear scale: the softmax models")
