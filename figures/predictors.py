"""Figures of the predictor claims of He et al. (2025) §4.3: eqs. (4.9), (4.12), (4.10)-(4.11).

Drawn only from a claim's stored prediction and measurement, so `icl-verify report` can
redraw them:

- `figure_manifold_predictions` (HE-4.9): each trial's relative gap between the H-head and
  the two-head predictions, against the float64 rounding tolerance;
- `figure_single_head` (HE-4.12): the single-head profile min_mu loss(omega) and its argmin mu,
  Ltilde (line) against the Monte Carlo true loss (markers), with both optima;
- `figure_debiased_gd_gap` (HE-T4.2i): the RMS distance of the ± pair to debiased GD against
  omega and against L, with the large-d formula.
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
    setting_text,
)


def figure_manifold_predictions(params, prediction, measurement):
    """Each trial's relative gap (markers, by number of heads) against the rounding tolerance.

    Expects prediction.figure_data["tolerance"] and measurement.figure_data omega, heads (T,).
    """
    figure, axes = new_figure(1, width=5.0)
    axis = axes[0, 0]
    floor = 1e-18  # exact zeros drawn at the bottom
    gap = np.maximum(measurement.values["prediction_gap"].value, floor)
    scatter = axis.scatter(
        measurement.figure_data["omega"],
        gap,
        c=measurement.figure_data["heads"],
        cmap="viridis",
        s=18,
        label="H-head vs two-head, per trial",
    )
    figure.colorbar(scatter, ax=axis, label="number of heads H")
    axis.axhline(
        prediction.figure_data["tolerance"], color=REFERENCE, ls="--", label="tolerance (rounding)"
    )
    axis.axhline(0.0 + floor, color=THEORY, lw=2, label="theory: identical (drawn at 1e-18)")
    axis.set(
        xscale="log",
        yscale="log",
        xlabel=r"KQ scale $\omega$",
        ylabel="max relative prediction gap over prompts",
        title=f"(4.9): {gap.size} random points of $S_\\omega$, H ≤ {params.H_max}, "
        f"{params.n_prompts} prompts",
    )
    axis.set_ylim(floor / 3, 1e-10)
    set_log_ticks(axis, log_ticks(params.omega_min, params.omega_max))
    axis.legend(loc="upper left", fontsize=7)
    return figure


def figure_single_head(params, prediction, measurement):
    """(a) the profile min_mu loss(omega): L̃ line vs Monte Carlo markers; (b) the optimal mu.

    Expects prediction.figure_data omega_fine, loss_fine, mu_fine and measurement.figure_data
    omega, loss, loss_se, mu, mu_se.
    """
    figure, axes = new_figure(2, width=4.4)
    theory, measured = prediction.figure_data, measurement.figure_data
    for axis, key, ylabel, title in (
        (axes[0, 0], "loss", r"$\min_\mu$ loss", "(a) single-head profile loss"),
        (axes[0, 1], "mu", r"$\arg\min_\mu$ loss", r"(b) optimal $\mu(\omega)$"),
    ):
        axis.plot(
            theory["omega_fine"], theory[f"{key}_fine"], color=THEORY, label=r"$\tilde L$ (4.1)"
        )
        axis.errorbar(
            measured["omega"],
            measured[key],
            yerr=measured[f"{key}_se"],
            fmt="o",
            ms=3.5,
            color=MEASURED,
            capsize=2,
            label="true loss, Monte Carlo",
        )
        opt = f"{key}_opt"
        axis.plot(
            prediction.values["omega_opt"],
            prediction.values[opt],
            "*",
            ms=12,
            color=THEORY,
            label=f"theory optimum ω*={prediction.values['omega_opt']:.3f}",
        )
        axis.errorbar(
            measurement.values["omega_opt"].value,
            measurement.values[opt].value,
            xerr=measurement.values["omega_opt"].error,
            yerr=measurement.values[opt].error,
            fmt="*",
            ms=12,
            color=MEASURED,
            label=f"measured optimum ω={measurement.values['omega_opt'].value:.3f}",
        )
        axis.set(
            xlabel=r"KQ scale $\omega$ (one head)",
            ylabel=ylabel,
            title=f"{title}, d={params.d}, L={params.L}, σ²={params.sigma2}",
        )
        axis.legend(fontsize=7)
    return figure


def figure_debiased_gd_gap(params, prediction, measurement):
    """(a) RMS gap vs omega with the large-d formula; (b) RMS gap vs L at fixed omega.

    Expects prediction.figure_data omega_fine, rms_large_d (over omega_fine), rms_large_d_grid
    (at the measured omegas), L_fine, length_rms_large_d, large_d_constant, and
    measurement.figure_data omega, rms, rms_se, L, length_rms, length_rms_se.
    """
    figure, axes = new_figure(2, width=4.4)
    theory, measured = prediction.figure_data, measurement.figure_data
    left, right = axes[0]
    left.plot(
        theory["omega_fine"],
        theory["rms_large_d"],
        color=THEORY,
        label=r"large-$d$ RMS $\eta\omega^2 d^{3/2}\sqrt{(1+\sigma^2)/6L}$",
    )
    slope = measurement.values["omega_slope"]
    left.errorbar(
        measured["omega"],
        measured["rms"],
        yerr=measured["rms_se"],
        fmt="o",
        ms=4,
        color=MEASURED,
        capsize=2,
        label=f"Monte Carlo; slope {slope.value:.3f} ± {slope.error:.1g}",
    )
    # RMS / (eta omega^2 d^1.5 L^-1/2) measured at the smallest omega, and its large-d limit
    limit = theory["large_d_constant"]
    constant = measured["rms"][0] / theory["rms_large_d_grid"][0] * limit
    left.plot(
        [],
        [],
        " ",
        label=f"RMS / (η ω² d^1.5 L^-1/2) = {constant:.2f} at ω={measured['omega'][0]:g}",
    )
    left.plot([], [], " ", label=f"(large-d limit √((1+σ²)/6) = {limit:.3f})")
    left.set(
        xscale="log",
        yscale="log",
        xlabel=r"$\omega$ (fixed $\eta = 2\omega\mu$ = " f"{params.eta:g})",
        ylabel=r"RMS $|\hat y_{TF} - \hat y_{dGD}|$",
        title=f"(a) order ω² (d={params.d}, L={params.L})",
    )
    set_log_ticks(left, log_ticks(params.omega_min, params.omega_max))
    left.legend(fontsize=7)
    lengths = np.asarray(measured["L"])
    slope = measurement.values["length_slope"]
    right.plot(
        theory["L_fine"],
        theory["length_rms_large_d"],
        color=THEORY,
        label="large-d formula (∝ L^-1/2)",
    )
    right.errorbar(
        lengths,
        measured["length_rms"],
        yerr=measured["length_rms_se"],
        fmt="s",
        ms=4,
        color=PALETTE[2],
        capsize=2,
        label=f"Monte Carlo; slope {slope.value:.3f} ± {slope.error:.1g}",
    )
    right.set(
        xscale="log",
        yscale="log",
        xlabel="prompt length L",
        ylabel=r"RMS $|\hat y_{TF} - \hat y_{dGD}|$",
        title=f"(b) order L^-1/2 at ω={params.fixed_omega:g}",
    )
    set_log_ticks(right, [int(L) for L in lengths])
    right.legend(fontsize=7)
    return figure


def figure_trained_single_head(params, prediction, measurement):
    """HE-4.12-TRAINED: (a) |omega| of the one-head members through training against 1/sqrt(d)
    and the rule's band; (b) their test MSE and their kernel regressor's on shared prompts."""
    figure, axes = new_figure(2, width=4.6)
    paths, errors = axes[0]
    data = measurement.figure_data
    steps, history = np.asarray(data["steps"], float), np.asarray(data["omega_history"], float)
    target = float(np.asarray(prediction.values["omega"], float)[0])
    near = float(prediction.figure_data["near"])
    for index, series in enumerate(history):
        paths.plot(steps, series, color=PALETTE[index % len(PALETTE)], lw=1,
                   label=f"one-head member {index + 1}")  # fmt: skip
    paths.axhline(target, color=THEORY, lw=1.5, label="1/√d: minimiser of L̃ (4.12)")
    paths.axhspan(target * (1 - near), target * (1 + near), color=THEORY, alpha=0.12,
                  label=f"'near': ±{near:.1%}")  # fmt: skip
    paths.set(xlabel="Adam step", ylabel="|ω|", ylim=(0, None),
              title=f"(a) trained single heads, {setting_text(params)}")  # fmt: skip
    paths.legend(fontsize=7, loc="lower right")
    members = np.arange(1, history.shape[0] + 1)
    gap = np.asarray(measurement.values["kernel_gap"].value, float)
    errors.bar(members - 0.18, np.asarray(data["model_mse"], float), 0.36, color=MEASURED,
               label="trained model")  # fmt: skip
    errors.bar(members + 0.18, np.asarray(data["kernel_mse"], float), 0.36, color=THEORY,
               label="kernel regressor at its (ω, μ)")  # fmt: skip
    for m, g, mse in zip(members, gap, np.asarray(data["model_mse"], float), strict=True):
        errors.annotate(f"gap {g:.1%}", (m, mse), textcoords="offset points", xytext=(0, 4),
                        ha="center", fontsize=7)  # fmt: skip
    errors.set(xticks=members, xlabel="one-head member", ylabel="test MSE (shared prompts)",
               title="(b) the model and its Nadaraya-Watson reading")  # fmt: skip
    errors.set_ylim(0, 1.3 * float(np.max(np.asarray(data["model_mse"], float))))
    errors.legend(fontsize=7, loc="upper center", ncol=2)
    return figure
