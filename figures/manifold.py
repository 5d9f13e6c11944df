"""Figure of HE-MAN (He et al. 2025, §4.2, eq. (4.6)): optimiser group sums on mu*(omega)."""

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


def figure_manifold(params, prediction, measurement):
    """Left: each trial's group sums on the mu*(omega) curve; right: deviations vs tolerance."""
    figure, axes = new_figure(2, width=4.4)
    sums_axis, error_axis = axes[0]
    omega = prediction.figure_data["omega"]
    plus, minus = measurement.values["plus_sum"], measurement.values["minus_sum"]
    mu_star = prediction.values["plus_sum"]
    sums_axis.plot(
        prediction.figure_data["omega_fine"],
        prediction.figure_data["mu_star_fine"],
        color=THEORY,
        label=r"$\mu^*(\omega)$ of (4.6)",
    )
    sums_axis.plot(
        omega, plus.value, "o", color=MEASURED, ms=4, label=r"$\Sigma_+$: positive heads"
    )
    sums_axis.plot(
        omega, -minus.value, "x", color=PALETTE[2], ms=6, label=r"$-\Sigma_-$: negative heads"
    )
    sums_axis.set(
        xscale="log",
        yscale="log",
        xlabel=r"KQ scale $\omega$",
        ylabel=r"OV group sum at the minimiser of $\tilde L$",
        title=f"(a) {omega.size} random trials, H ≤ {params.H_max}, "
        f"d={params.d}, L={params.L}, σ²={params.sigma2}",
    )
    sums_axis.legend(loc="upper right")

    floor = 1e-17  # exact zeros drawn at the bottom of the log axis
    has_dummy = measurement.figure_data["heads"] >= 3  # the design gives these a dummy head
    deviations = (  # (x, y, plot style)
        (omega, np.abs(plus.value - mu_star) / mu_star,
         dict(marker="o", color=MEASURED, label=r"$|\Sigma_+ - \mu^*| / \mu^*$")),
        (omega, np.abs(minus.value + mu_star) / mu_star,
         dict(marker="x", color=PALETTE[2], label=r"$|\Sigma_- + \mu^*| / \mu^*$")),
        (omega[has_dummy], measurement.values["dummy_share"].value,
         dict(marker="s", mfc="none", color=THEORY,
              label=r"dummy share $|\Sigma_0|/|\Sigma_\pm|$")),
        (omega, plus.error / mu_star,
         dict(marker="_", ms=12, mew=1.5, color="black", zorder=4,
              label=r"optimiser's bound on $\Sigma_+$ (relative)")),
    )  # fmt: skip
    for x, y, style in deviations:
        error_axis.plot(x, np.maximum(y, floor), ls="none", **{"ms": 5, **style})
    error_axis.axhline(params.rtol, color=REFERENCE, ls="--", lw=1, label="tolerance rtol")
    error_axis.set(
        xscale="log",
        yscale="log",
        xlabel=r"KQ scale $\omega$",
        ylabel="relative deviation (zeros drawn at 1e-17)",
        title="(b) deviations from (4.6) against the tolerance",
    )
    error_axis.set_ylim(floor / 3, 1e2)
    error_axis.legend(loc="upper left", fontsize=7, ncols=2)
    for axis in axes[0]:
        set_log_ticks(axis, log_ticks(params.omega_min, params.omega_max))
    return figure
