"""Figure of HE-T4.2ii (He et al. 2025, Theorem 4.2(ii), eq. (4.13)): the brute-force minimum of
Ltilde over the homogeneous space against the closed-form profile and its limit."""

from __future__ import annotations

import numpy as np
from icl_verify.figures.style import (
    MEASURED,
    REFERENCE,
    THEORY,
    log_ticks,
    new_figure,
    set_log_ticks,
)


def figure_optimality(params, prediction, measurement):
    """Profile (linear), its excess over the limit (log-log) and relative residuals vs tolerance."""
    figure, axes = new_figure(3, width=3.7)
    profile_axis, excess_axis, residual_axis = axes[0]
    grid, fine = prediction.figure_data["omega"], prediction.figure_data["omega_fine"]
    measured = measurement.values["profile"]
    limit = prediction.values["infimum"]
    closed_form = dict(
        color=THEORY, label=r"closed form $1+\sigma^2-1/(1+c\,\sinh(d\omega^2)/\omega^2)$"
    )
    brute = dict(color=MEASURED, ms=4, label=r"brute-force min over $\bar\Theta(\omega)$")

    profile_axis.plot(fine, prediction.figure_data["profile_fine"], **closed_form)
    profile_axis.axhline(
        limit, color=REFERENCE, ls="--", lw=1, label=r"limit $\sigma^2+\kappa/(1+\kappa)$"
    )
    profile_axis.plot(grid, measured.value, "o", **brute)
    profile_axis.set(
        xscale="log",
        xlabel=r"KQ scale $\omega$",
        ylabel=r"$\min_{\bar\Theta(\omega)} \tilde L$",
        title=f"(a) profile, d={params.d}, L={params.L}, σ²={params.sigma2}, H={params.H}",
    )
    profile_axis.legend(loc="upper left", fontsize=7)

    excess_axis.plot(fine, prediction.figure_data["profile_fine"] - limit, **closed_form)
    excess_axis.plot(grid, measured.value - limit, "o", **brute)
    fitted = params.order_points  # the step's decrements fitted for the ω⁴ order of (4.8)
    eta = measurement.figure_data["eta"][fitted]
    excess_axis.plot(
        grid[fitted][:-1], eta[:-1] - eta[1:], "s", mfc="none", color=MEASURED, ms=5,
        label=rf"step decrements $\eta(\omega_i)-\eta(\omega_{{i+1}})$, slope "
        rf"{measurement.values['eta_order'].value:.4f} (4 predicted)",
    )  # fmt: skip
    excess_axis.set(
        xscale="log",
        yscale="log",
        xlabel=r"KQ scale $\omega$",
        ylabel="excess over the limit; step decrements",
        title=r"(b) increasing, $\to 0$ like $\kappa d^2\omega^4/(6(1+\kappa)^2)$",
    )
    excess_axis.legend(loc="upper left", fontsize=7)

    _residual_panel(residual_axis, params, prediction, measurement)
    for axis in axes[0]:
        set_log_ticks(axis, log_ticks(grid[0], grid[-1]))
    return figure


def _residual_panel(axis, params, prediction, measurement) -> None:
    """(c): the measured minimum's relative residual, its error bound and the dummy share
    against the tolerance, on a log axis (exact zeros drawn at its bottom)."""
    grid, measured = prediction.figure_data["omega"], measurement.values["profile"]
    floor = 1e-17  # exact zeros drawn at the bottom of the log axis
    relative = np.abs(measured.value - prediction.values["profile"]) / prediction.values["profile"]
    axis.plot(
        grid,
        np.maximum(relative, floor),
        "o",
        color=MEASURED,
        ms=4,
        label="|measured − closed form| / closed form",
    )
    axis.plot(
        grid,
        np.maximum(measured.error / prediction.values["profile"], floor),
        "_",
        color="black",
        ms=12,
        mew=1.5,
        zorder=4,
        label="error bound of the measured minimum",
    )
    axis.plot(
        grid,
        np.maximum(measurement.values["dummy_share"].value, floor),
        "s",
        mfc="none",
        color=THEORY,
        ms=5,
        label=r"dummy share $|\mu_0|/|\mu_\pm|$",
    )
    axis.axhline(params.rtol, color=REFERENCE, ls="--", lw=1, label="tolerance rtol")
    axis.set(
        xscale="log",
        yscale="log",
        xlabel=r"KQ scale $\omega$",
        ylabel="relative size (zeros drawn at 1e-17)",
        title="(c) residuals against the tolerance",
    )
    axis.set_ylim(floor / 3, 1e-1)
    axis.legend(loc="upper right", fontsize=7)
