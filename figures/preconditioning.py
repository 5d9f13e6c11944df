"""Figures 12 and 15 of He et al. (2025) §5.3: the preconditioner learned on KMS covariates.

Drawn from the stored numbers of claim HE-5.3-KMS only (`Prediction.figure_data`: the targets
Gamma*_d, Gamma*, Sigma^{-1} and Sigma; `Measurement.figure_data`: the shown member's circuits,
the paired members' mean Gamma_eff, the distances with their bootstrap SEs).

- `figure_12`: KQ11 of both heads of the shown member (± omega Gamma), the distances of the
  learned and of the fitted preconditioner to the three targets, and the mean Gamma_eff beside
  Gamma*_d, Gamma* and Sigma^{-1} on one colour scale.
- `figure_15`: the inverse of the learned preconditioner beside Sigma, (Gamma*_d)^{-1} = Sigma +
  the noise term ((tr Sigma + d sigma2)/L) I, and (Gamma*)^{-1}, on one colour scale.
- `table_kms`: the claim's table, the distances to the three targets and the risks.
"""

from __future__ import annotations

import numpy as np
from icl_verify.figures.style import (
    MEASURED,
    PALETTE,
    REFERENCE,
    THEORY,
    new_figure,
    setting_text,
    training_text,
)

TARGET_NAMES = ("Γ*_d (debiased)", "Γ* (vanilla)", "Σ⁻¹")


def _heatmap(axis, matrix, scale: float, title: str, digits: int = 2):
    """One (d, d) matrix on a symmetric diverging scale, every entry written in its cell."""
    matrix = np.asarray(matrix, dtype=float)
    image = axis.imshow(matrix, cmap="RdBu_r", vmin=-scale, vmax=scale)
    d = matrix.shape[0]
    for (i, j), value in np.ndenumerate(matrix):
        colour = "white" if abs(value) > 0.6 * scale else "black"
        text = f"{value:.{digits}f}"
        axis.text(j, i, text, ha="center", va="center", fontsize=6 - (digits > 2), color=colour)
    axis.set_xticks(range(d), [f"{k + 1}" for k in range(d)])
    axis.set_yticks(range(d), [f"{k + 1}" for k in range(d)])
    axis.grid(False)
    axis.set_title(title)
    return image


def _not_measured(figure, axes, measurement) -> bool:
    if "learned_mean" in measurement.figure_data:
        return False
    for axis in axes.flat:
        axis.set_axis_off()
    axes.flat[0].text(0, 0.5, "fewer than two paired members: nothing to draw", fontsize=10)
    return True


def _caption(params, measurement) -> str:
    data = measurement.figure_data
    return (
        f"KMS ρ={params.rho:g}, {setting_text(params)}; {training_text(params)}; "
        f"{int(data['paired_count'])} paired members ({int(data['trapped_count'])} trapped, "
        f"excluded)"
    )


def figure_12(params, prediction, measurement):
    """Figure 12: KQ11 of both heads (± ω Γ); Γ_eff beside Γ*_d, Γ* and Σ⁻¹ (one colour scale)."""
    figure, axes = new_figure(4, 2, width=2.7, height=2.6)
    if _not_measured(figure, axes, measurement):
        return figure
    data = measurement.figure_data
    d = params.d
    KQ, OV = np.asarray(data["KQ_shown"]), np.asarray(data["OV_shown"])  # (H, D, D)
    blocks = KQ[:2, :d, :d]
    scale = float(np.abs(blocks).max())
    for h in range(2):
        # the OV half of (5.3): last row (0, ..., 0, mu); its off-pattern RMS relative to |mu|
        off = np.sqrt(np.mean(OV[h, -1, :d] ** 2)) / abs(OV[h, -1, -1])
        image = _heatmap(
            axes[0, h], blocks[h], scale,
            f"KQ11 head {h + 1}, member {int(data['shown'])}\n"
            f"μ = {OV[h, -1, -1]:.2f}; OV row rest {off:.1%}",
        )  # fmt: skip
    figure.colorbar(image, ax=axes[0, :2], shrink=0.8)

    bars = axes[0, 2]
    position = np.arange(3)
    for k, (key, label) in enumerate((("distances", "Γ_eff (weights)"),
                                      ("fitted_distances", "Γ_fit (applied)"))):  # fmt: skip
        bars.bar(position + (k - 0.5) * 0.38, np.asarray(data[key]), width=0.38,
                 yerr=np.asarray(data[f"{key}_se"]), color=PALETTE[2 * k], label=label,
                 capsize=2)  # fmt: skip
    allowance = float(prediction.figure_data["distance_allowance"])
    bars.axhline(allowance, color=REFERENCE, linestyle="--", linewidth=1,
                 label=f"allowance to Γ*_d ({allowance:.3f})")  # fmt: skip
    top = max(np.max(np.asarray(data[k]) + np.asarray(data[f"{k}_se"]))
              for k in ("distances", "fitted_distances"))  # fmt: skip
    bars.set_ylim(0, 1.6 * top)  # room for the legend above the bars
    bars.set_xticks(position, ["Γ*_d", "Γ*", "Σ⁻¹"])
    bars.set_ylabel("‖Γ − T‖_F / ‖T‖_F")
    bars.set_title("distance of the mean Γ to T\n(± bootstrap SE over members)")
    bars.legend(loc="upper left")

    targets = np.asarray(prediction.figure_data["targets"])  # (3, d, d)
    learned = np.asarray(data["learned_mean"])
    gap = learned - targets[0]
    _heatmap(axes[0, 3], gap, float(np.abs(gap).max()) or 1.0,
             f"mean Γ_eff − Γ*_d\n(own scale, ±{np.abs(gap).max():.3f})", digits=3)  # fmt: skip

    scale = float(max(np.abs(learned).max(), np.abs(targets).max()))
    panels = [(learned, "mean Γ_eff = Σ_h μ_h KQ11_h")] + [
        (targets[t], name) for t, name in enumerate(TARGET_NAMES)
    ]
    for axis, (matrix, title) in zip(axes[1], panels, strict=True):
        image = _heatmap(axis, matrix, scale, title)
    figure.colorbar(image, ax=axes[1, :], shrink=0.8)
    figure.suptitle(f"Figure 12 — learned preconditioner on KMS covariates\n"
                    f"{_caption(params, measurement)}")  # fmt: skip
    return figure


def figure_15(params, prediction, measurement):
    """Figure 15: (Γ_eff)⁻¹ beside Σ, Σ + the noise term (= (Γ*_d)⁻¹) and (Γ*)⁻¹."""
    figure, axes = new_figure(4, 1, width=2.7, height=2.8)
    if _not_measured(figure, axes, measurement):
        return figure
    targets = np.asarray(prediction.figure_data["targets"])
    sigma = np.asarray(prediction.figure_data["covariance"])
    learned_inverse = np.linalg.inv(np.asarray(measurement.figure_data["learned_mean"]))
    noise = float(np.trace(sigma) + params.d * params.sigma2) / params.L
    panels = [
        (learned_inverse, "(mean Γ_eff)⁻¹"),
        (sigma, f"Σ (KMS ρ = {params.rho:g})"),
        (np.linalg.inv(targets[0]), f"(Γ*_d)⁻¹ = Σ + {noise:.3f} I"),
        (np.linalg.inv(targets[1]), f"(Γ*)⁻¹ = (1+1/L) Σ + {noise:.3f} I"),
    ]
    scale = float(max(np.abs(m).max() for m, _ in panels))
    for axis, (matrix, title) in zip(axes[0], panels, strict=True):
        image = _heatmap(axis, matrix, scale, title)
    figure.colorbar(image, ax=axes[0, :], shrink=0.8)
    figure.suptitle(
        f"Figure 15 — inverse of the learned preconditioner (noise term (tr Σ + dσ²)/L = "
        f"{noise:.3f})\n{_caption(params, measurement)}"
    )
    return figure


def table_kms(params, prediction, measurement) -> str:
    """The table of HE-5.3-KMS: the three relative distances of the learned (and of the fitted)
    preconditioner, the exact risks at the targets and the Monte Carlo risks."""
    data = measurement.figure_data
    if "distances" not in data:
        return "Fewer than two paired members: no preconditioner measured."
    risks = np.asarray(prediction.figure_data["target_risks"])
    rows = [
        f"Relative Frobenius distances ‖Γ − T‖_F / ‖T‖_F of the mean over "
        f"{int(data['paired_count'])} paired members ({int(data['trapped_count'])} trapped, "
        f"excluded); ± one bootstrap SE over members. Γ_eff = Σ_h μ_h KQ11_h (weights); Γ_fit = "
        f"least squares of the model's predictions on the d² dGD features (what it applies).",
        "",
        "| target T | ‖Γ_eff − T‖/‖T‖ | ‖Γ_fit − T‖/‖T‖ | dGD/GD risk at T (exact) |",
        "|---|---|---|---|",
    ]
    for t, name in enumerate(TARGET_NAMES):
        rows.append(
            f"| {name} | {data['distances'][t]:.4f} ± {data['distances_se'][t]:.4f} | "
            f"{data['fitted_distances'][t]:.4f} ± {data['fitted_distances_se'][t]:.4f} | "
            f"{risks[t]:.5f} |"
        )
    rows += [
        "",
        f"Trained risk (MC) {measurement.values['risk'].value:.5f}; dGD at mean Γ_eff (MC) "
        f"{data['dgd_risks'][0]:.5f} ± {data['dgd_risks_se'][0]:.5f}; dGD at Γ*_d (MC) "
        f"{data['dgd_risks'][1]:.5f} ± {data['dgd_risks_se'][1]:.5f}; trained − dGD at Γ*_d "
        f"(paired, per member): "
        + ", ".join(
            f"{v:+.4f} ± {e:.4f}"
            for v, e in zip(data["excess_over_dgd"], data["excess_over_dgd_se"], strict=True)
        )
        + ".",
    ]
    return "\n".join(rows)


def figure_kms_preconditioner(params, prediction, measurement):
    """HE-A2-KMS: (a) ||Γ* − Σ⁻¹||_F against L, Lemma E.4 and simulated, with a d/L guide;
    (b) Γ* − Σ⁻¹ at the largest L, measured, to see that it is small and nearly tridiagonal."""
    figure, axes = new_figure(2, width=4.6)
    rate, matrix = axes[0]
    L = np.asarray(params.L_values, dtype=float)
    predicted = np.asarray(prediction.figure_data["distance"], dtype=float)
    measured = np.asarray(measurement.figure_data["distance"], dtype=float)
    error = np.asarray(measurement.figure_data["distance_se"], dtype=float)
    rate.plot(L, predicted, "-", color=THEORY, lw=1.5, label="Lemma E.4: ||Γ*(L) − Σ⁻¹||_F")
    rate.errorbar(L, measured, yerr=error, fmt="o", color=MEASURED, capsize=3,
                  label="least-squares fit of simulated labels (± SE)")  # fmt: skip
    rate.plot(L, predicted[-1] * L[-1] / L, ":", color=REFERENCE, label="∝ 1/L")
    slope = measurement.values["order"]
    rate.set(
        xscale="log", yscale="log", xlabel="prompt length L", ylabel="||Γ − Σ⁻¹||_F",
        title=f"(a) KMS ρ={params.rho:g}, d={params.d}, σ²={params.sigma2:g}: fitted slope "
        f"{float(np.asarray(slope.value)):.3f} ± {float(np.asarray(slope.error)):.3f}",
    )  # fmt: skip
    rate.set_xticks(L, [f"{int(v)}" for v in L])
    rate.minorticks_off()
    rate.legend(loc="lower left", fontsize=7)
    fitted = np.asarray(measurement.values["optimal"].value, dtype=float)[-1]
    inverse = np.asarray(prediction.values["inverse"], dtype=float)
    gap = fitted - inverse
    title = f"(b) Γ_fit − Σ⁻¹ at L = {int(L[-1])}: small, mostly tridiagonal"
    image = _heatmap(matrix, gap, max(float(np.abs(gap).max()), 1e-12), title, digits=3)
    figure.colorbar(image, ax=matrix, shrink=0.8)
    return figure
