"""Figure 21 (He et al. 2025, App. C): four-head dynamics under the true loss and under L̃.

Drawn from HE-C-TRUELOSS's stored numbers: SGD on the true loss (member mean ± 2 SE, markers)
against gradient descent on L̃ (4.1) at the same step (lines) on one time axis t = lr k.
"""

from __future__ import annotations

import numpy as np
from icl_verify.figures.data.true_loss import TrueLossData, TrueLossTheory
from icl_verify.figures.style import MEASURED, PALETTE, REFERENCE, THEORY, new_figure, setting_text


def figure_21(params, prediction, measurement):
    """(a) omega_h(t), (b) mu_h(t), (c) losses, (d) ln||theta|| of SGD minus L̃'s flow."""
    theory = TrueLossTheory.from_record(prediction.figure_data)
    data = TrueLossData.from_record(measurement.figure_data)
    t, t_flow = data.t, theory.t
    figure, axes = new_figure(2, 2, width=4.6, height=3.2)
    edge = 1.0 / np.sqrt(params.d)
    panels = ((axes[0, 0], "omega", "ω", data.omega, data.omega_se, theory.gd_omega),
              (axes[0, 1], "mu", "μ", data.mu, data.mu_se, theory.gd_mu))  # fmt: skip
    for axis, name, symbol, mean, se, flow in panels:
        for h in range(mean.shape[1]):
            color = PALETTE[h % len(PALETTE)]
            axis.plot(t_flow, flow[:, h], color=color, lw=1.2)
            band = 2 * se[:, h]
            axis.fill_between(t, mean[:, h] - band, mean[:, h] + band, color=color, alpha=0.25,
                              lw=0)  # fmt: skip
            axis.plot(t, mean[:, h], ls="none", marker=".", ms=2.5, color=color)
        # one colour per head; the legend names the two line styles in a neutral grey
        axis.plot([], [], color="0.35", lw=1.2, label="L̃ flow (GD, same step)")
        axis.plot([], [], color="0.35", ls="none", marker=".", label="true loss (SGD mean ± 2 SE)")
        if name == "omega":
            for sign in (1, -1):
                axis.axhline(
                    sign * edge,
                    color=REFERENCE,
                    ls="--",
                    lw=0.8,
                    label="±d^{-1/2} (regime of (4.1))" if sign == 1 else None,
                )
        axis.set(
            xlabel="t = lr · step",
            ylabel=f"{symbol}_h(t)",
            title=f"({'a' if name == 'omega' else 'b'}) {symbol}_h of the four heads",
        )
        axis.legend(loc="best", fontsize=7)

    loss_axis = axes[1, 0]
    loss_axis.plot(t_flow, theory.gd_loss, color=THEORY, label="L̃ along the L̃ flow")
    records = data.loss_t
    predicted = theory.path_loss  # L̃ at lr(1 − 1/L) + p(2 − p/η*)/L per record
    inside = theory.path_inside.astype(bool)
    loss_axis.plot(records, predicted, color=THEORY, ls=":", lw=0.8)
    loss_axis.plot(records[inside], predicted[inside], "x", color=THEORY, ms=5,
                   label="L̃ (lr(1 − 1/L)) + p(2 − p/η*)/L (checked: d max ω_h² ≤ 1)")  # fmt: skip
    loss_axis.plot(records[~inside], predicted[~inside], "+", color=REFERENCE, ms=6,
                   label="same, outside (not judged)")  # fmt: skip
    loss_axis.errorbar(data.loss_t, data.loss, 2 * data.loss_se, ls="none", marker="o",
                       ms=3, color=MEASURED, label="true loss along SGD (MC, ± 2 SE)")  # fmt: skip
    loss_axis.set(xlabel="t", ylabel="loss", yscale="log", title="(c) losses on one time axis")
    loss_axis.legend(loc="upper right", fontsize=7)

    gap_axis = axes[1, 1]
    plain = 0.5 * np.log((theory.gd_omega**2).sum(1) + (theory.gd_mu**2).sum(1))
    gap = data.log_norm - plain
    gap_axis.fill_between(t, gap - 2 * data.log_norm_se, gap + 2 * data.log_norm_se,
                          color=MEASURED, alpha=0.3, lw=0)  # fmt: skip
    gap_axis.plot(t, gap, color=MEASURED, lw=1, label="SGD (true loss) − L̃ flow (± 2 SE)")
    gap_axis.plot(t_flow, theory.slowed_log_norm - plain, color=THEORY, ls="--",
                  label="L̃ flow slowed by 1 − 1/L (Phase I prediction)")  # fmt: skip
    window = theory.window.astype(int)
    gap_axis.axvspan(t_flow[window[0]], t_flow[window[-1]], color=REFERENCE, alpha=0.15,
                     label="checked Phase I window")  # fmt: skip
    peak = np.abs(theory.gd_omega).max(1)
    outside = np.flatnonzero(peak > edge)
    if outside.size:
        gap_axis.axvspan(t_flow[outside[0]], t_flow[outside[-1]], color=PALETTE[2], alpha=0.12,
                         lw=0, label="flow outside d max ω_h² ≤ 1: the heads part")  # fmt: skip
    gap_axis.axhline(0, color=REFERENCE, lw=0.6)
    gap_axis.set(xlabel="t", ylabel="Δ ln‖(ω, μ)‖", xscale="symlog",
                 title="(d) where they part: gap in ln‖θ‖")  # fmt: skip
    gap_axis.legend(loc="lower left", fontsize=6.5)
    figure.suptitle(
        f"Figure 21: {data.omega.shape[1]} heads, SGD on the true loss vs L̃ (4.1) from one "
        f"start ({setting_text(params)}; SGD lr {params.lr:g}, batch {params.batch}, "
        f"{params.members} runs)",
        fontsize=9,
    )
    return figure
