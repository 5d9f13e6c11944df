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
    _loss_panels(figure, axes[0, :2], omega, mu, ltilde, loss, theory)
    _gap_map_panel(figure, axes[0, 2], omega, mu, ltilde, loss, measured)
    _gap_panel(axes[0, 3], params, theory, measured, measurement)
    return figure


def _loss_panels(figure, axes, omega, mu, ltilde, loss, theory):
    """(a) the Monte Carlo true loss and (b) L̃ (4.1) over (ω, μ) on one logarithmic colour
    scale, the manifold μ*(ω) on both."""
    from matplotlib.colors import LogNorm

    low, high = float(min(loss.min(), ltilde.min())), float(max(loss.max(), ltilde.max()))
    levels = np.geomspace(low, high, 15)  # one logarithmic colour scale for (a) and (b)
    for axis, values, title in (
        (axes[0], loss, "(a) true loss, Monte Carlo"),
        (axes[1], ltilde, r"(b) approximate loss $\tilde L$ (4.1)"),
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
    colorbar = figure.colorbar(mesh, ax=axes, label="loss (log scale)", shrink=0.85)
    colorbar.ax.yaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:.2g}"))


def _gap_map_panel(figure, axis, omega, mu, ltilde, loss, measured):
    """(c) the relative gap (MC − L̃)/MC over (ω, μ), its worst point starred."""
    relative = (loss - ltilde) / loss
    bound = float(np.max(np.abs(relative)))
    mesh = axis.pcolormesh(omega, mu, relative.T, cmap="RdBu_r", vmin=-bound, vmax=bound)
    worst = np.unravel_index(np.argmax(np.abs(relative)), relative.shape)
    axis.plot(omega[worst[0]], mu[worst[1]], "k*", ms=8)
    axis.set(
        xlabel=r"$\omega$",
        ylabel=r"$\mu$",
        title=f"(c) (MC − L̃)/MC; ★ worst: MC {loss[worst]:.3g}\nvs L̃ {ltilde[worst]:.3g} "
        f"at ω={omega[worst[0]]:.2g}, μ={mu[worst[1]]:.2g}",
    )
    figure.colorbar(
        mesh,
        ax=axis,
        label=f"relative gap (MC SE ≤ {np.max(measured['loss_se'] / loss):.1%})",
        shrink=0.85,
    )


def _gap_panel(axis, params, theory, measured, measurement):
    """(d) the gap on the manifold against L + D beside its ω → 0 limit 1/(L+D)."""
    D = theory["D"]
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


def figure_approximation_map(params, prediction, measurement):
    """HE-P4.1-MAP: where (4.1) holds. One heat map per d of the relative gap
    (true − L̃)/true over (ω√d, L), colour log10 of its size, cells annotated with its signed
    value and the inside/outside edge of (C1)/(C2) marked; the last panel the gap along the
    proportional line d = L / ratio at fixed ω, against L, beside the ω → 0 gap 1/(L + D).

    Expects measurement.figure_data with loss, gap, L, d (P,) in `map_points` order.
    """
    data = measurement.figure_data
    scales, lengths = list(params.scales), list(params.L_values)
    n_d, n_s, n_L = len(params.d_values), len(scales), len(lengths)
    grid = n_d * n_s * n_L
    relative = (np.asarray(data["gap"]) / np.asarray(data["loss"]))[:grid].reshape(n_d, n_s, n_L)
    figure, axes = new_figure(n_d + 1, width=3.0, height=3.0)
    size = np.log10(np.maximum(np.abs(relative), 1e-4))
    for k, d in enumerate(params.d_values):
        axis = axes[0, k]
        image = axis.imshow(size[k].T, origin="lower", cmap="viridis", vmin=-3, vmax=2.5,
                            aspect="auto")  # fmt: skip
        for i in range(n_s):
            for j in range(n_L):
                value = relative[k, i, j]
                text = f"{value:+.0f}" if abs(value) >= 10 else f"{value:+.2g}"
                axis.text(i, j, text, ha="center", va="center", fontsize=6,
                          color="white" if size[k, i, j] < 0.5 else "black")  # fmt: skip
        edge = sum(s <= params.inside_scale for s in scales) - 0.5
        axis.axvline(edge, color="white", lw=1.5, ls="--")
        axis.set_xticks(range(n_s), [f"{s:g}" for s in scales])
        axis.set_yticks(range(n_L), [str(L) for L in lengths])
        axis.grid(False)
        axis.set(xlabel="ω√d", title=f"d = {d}: (true − L̃)/true")
        if k == 0:
            axis.set_ylabel("prompt length L")
    figure.colorbar(image, ax=axes[0, n_d - 1], label="log10 |relative gap|", shrink=0.8)
    line = slice(grid, None)
    L, d = np.asarray(data["L"])[line], np.asarray(data["d"])[line]
    gap, loss_se = np.abs(np.asarray(data["gap"])[line]), np.asarray(data["loss_se"])[line]
    axis = axes[0, n_d]
    axis.errorbar(L, gap, 2 * loss_se, ls="-", marker="o", ms=3.5, color=MEASURED,
                  label=f"|true − L̃|, ω = {params.proportional_omega:g}, d = L/"
                  f"{params.proportional_ratio:g}")  # fmt: skip
    axis.plot(L, 1 / (L + d * (1 + params.sigma2)), color=THEORY, ls="--",
              label="1/(L + D): the ω → 0 gap")  # fmt: skip
    for x, y, dim in zip(L, gap, d, strict=True):
        axis.annotate(f"d={dim:g}", (x, y), textcoords="offset points", xytext=(3, 4),
                      fontsize=6, color=REFERENCE)  # fmt: skip
    axis.set(xscale="log", yscale="log", xlabel="prompt length L (d = L / ratio)",
             ylabel="|true − L̃|", title="d ∝ L at fixed ω: the gap grows")  # fmt: skip
    set_log_ticks(axis, [float(v) for v in L])
    axis.legend(fontsize=6, loc="lower left")
    return figure
