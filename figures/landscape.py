"""Loss-landscape figure of He et al. (2025) Fig. 6: true loss (Monte Carlo) beside Ltilde (4.1).

Drawn only from a claim's stored prediction and measurement (claim HE-P4.1), so
`icl-verify report` can redraw it: (a) the Monte Carlo true loss of the two-head ± family
over (omega, mu), (b) Ltilde on the same grid, both with the manifold mu*(omega) and on one
colour scale, (c) their difference, (d) the gap on the manifold against L + D (markers with
error bars) and its omega -> 0 limit 1/(L + D) (line).
"""

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
from matplotlib.ticker import FuncFormatter


def figure_landscape(params, prediction, measurement):
    """The four panels described in the module docstring; returns the matplotlib Figure.

    Expects prediction.figure_data with omega (G,), mu (M,), ltilde (G, M), manifold_mu (G,),
    L_fine, gap_limit_fine, D = d (1 + sigma2), and measurement.figure_data with loss, loss_se
    (G, M), L, gap, gap_se.
    """
    theory, measured = prediction.figure_data, measurement.figure_data
    omega, mu = np.asarray(theory["omega"]), np.asarray(theory["mu"])
    ltilde, loss = np.asarray(theory["ltilde"]), np.asarray(measured["loss"])
    figure, axes = new_figure(4, width=3.6, height=3.4)
    from matplotlib.colors import LogNorm

    low, high = float(min(loss.min(), ltilde.min())), float(max(loss.max(), ltilde.max()))
    levels = np.geomspace(low, high, 15)  # one logarithmic colour scale for (a) and (b)
    for axis, values, title in (
        (axes[0, 0], loss, "(a) true loss, Monte Carlo"),
        (axes[0, 1], ltilde, r"(b) approximate loss $\tilde L$ (4.1)"),
    ):
        mesh = axis.contourf(
            omega, mu, values.T, levels=levels, cmap="viridis", norm=LogNorm(low, high)
        )
        axis.plot(
            omega, theory["manifold_mu"], color="white", lw=1.2, label=r"manifold $\mu^*(\omega)$"
        )
        axis.set(
            xlabel=r"$\omega$ (heads $\pm\omega$)", ylabel=r"$\mu$ (heads $\pm\mu$)", title=title
        )
        axis.set_ylim(mu.min(), mu.max())
        axis.legend(loc="upper right", fontsize=7)
    colorbar = figure.colorbar(mesh, ax=axes[0, :2], label="loss (log scale)", shrink=0.85)
    colorbar.ax.yaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:.2g}"))

    relative = (loss - ltilde) / loss
    bound = float(np.max(np.abs(relative)))
    mesh = axes[0, 2].pcolormesh(omega, mu, relative.T, cmap="RdBu_r", vmin=-bound, vmax=bound)
    worst = np.unravel_index(np.argmax(np.abs(relative)), relative.shape)
    axes[0, 2].plot(omega[worst[0]], mu[worst[1]], "k*", ms=8)
    axes[0, 2].set(
        xlabel=r"$\omega$",
        ylabel=r"$\mu$",
        title=f"(c) (MC − L̃)/MC; ★ worst: MC {loss[worst]:.3g}\nvs L̃ {ltilde[worst]:.3g} "
        f"at ω={omega[worst[0]]:.2g}, μ={mu[worst[1]]:.2g}",
    )
    figure.colorbar(
        mesh,
        ax=axes[0, 2],
        label=f"relative gap (MC SE ≤ {np.max(measured['loss_se'] / loss):.1%})",
        shrink=0.85,
    )

    D = theory["D"]
    axis = axes[0, 3]
    axis.plot(
        np.asarray(theory["L_fine"]) + D,
        theory["gap_limit_fine"],
        color=THEORY,
        label=r"$\omega\to0$ limit $1/(L+D)$",
    )
    axis.errorbar(
        np.asarray(measured["L"]) + D,
        measured["gap"],
        yerr=measured["gap_se"],
        fmt="o",
        color=MEASURED,
        ms=4,
        capsize=2,
        label=f"MC − L̃ at ω={params.gap_omega:g}",
    )
    slope = measurement.values["gap_slope"]
    axis.plot([], [], " ", label=f"fitted slope {slope.value:.3f} ± {slope.error:.3f}")
    axis.set(
        xscale="log",
        yscale="log",
        xlabel=r"$L + D$",
        ylabel="gap on the manifold",
        title=f"(d) gap vs L (d={params.d}, σ²={params.sigma2})",
    )
    axis.grid(True, which="both", color=REFERENCE, alpha=0.2)
    set_log_ticks(axis, log_ticks(min(measured["L"]) + D, max(measured["L"]) + D))
    axis.legend(loc="lower left", fontsize=7)
    return figure
