"""Figures 16-19 of He et al. (2025), App. A.3: multi-task heads per H (claim HE-5.4-MT).

Each figure shows one trained member (the lowest-validation-loss one with H heads): per head the
KQ11 block diag(omega^h) and the OV label block (K x K, row = task predicted), and below the
task preconditioners Gamma_k = sum_h mu^h_k diag(omega^h) per coordinate group, measured (bars)
beside the optimum of the paper's mode (theory, outlined): eta*_k on S_k and 0 off it for H > K,
the shared preconditioner for 2 <= H <= K. Paper: Fig 16 = H = 1 (mode I), 17 = H = 2 (II),
18 = H = 4 (III), 19 = H = 3 (IV, superposition). `table_2`: the claim's table, the paper's
Table 2 beside the toolkit's H = 3 member (the claim hands in the support conditions).
"""

from __future__ import annotations

import numpy as np
from icl_verify.figures.data.multitask import MultiTaskData, MultiTaskTheory
from icl_verify.figures.style import (
    PALETTE,
    THEORY,
    new_figure,
    new_subfigures,
    setting_text,
    training_text,
)

from icl_verify.heads import MODE_NAMES


def _heads_figure(params, prediction, measurement, H: int, number: int):
    members = MultiTaskData.from_record(measurement.figure_data, params.heads).members
    if H not in members:
        figure, axes = new_figure(1, 1, width=5.0, height=1.6)
        axes[0, 0].axis("off")
        axes[0, 0].text(
            0.5, 0.5, f"Figure {number}: no member with H = {H} heads in this run",
            ha="center", va="center",
        )  # fmt: skip
        return figure
    shown = members[H]
    # circuits per head above, Gamma_k below, each subfigure with its own layout
    figure, (top, bottom) = new_subfigures(2.3 * max(H, 3), 6.0, nrows=2, height_ratios=(2, 1))
    axes = top.subplots(2, max(H, 3), squeeze=False)  # (2, columns): KQ11 row, OV row
    bars = bottom.subplots()
    _circuit_panels(top, axes, shown)
    _gamma_panel(bars, params, prediction, shown)
    member, found = shown.member, MODE_NAMES.get(shown.mode, "?")
    trained = sorted(set(params.heads))  # the paper's mode of each, in the prediction
    paper_modes = MultiTaskTheory.from_record(prediction.figure_data).paper_modes
    paper = MODE_NAMES[int(paper_modes[trained.index(H)])]
    figure.suptitle(
        f"HE-5.4-MT (Figure {number}): H = {H}, member {member}; mode found {found}, paper's "
        f"{paper}\nsupports {[list(s) for s in params.supports]}, "
        f"{setting_text(params)} (relative noise); {training_text(params)}",
        fontsize=8.5,
    )
    return figure


def _circuit_panels(top, axes, shown):
    """Each head's KQ11 block (ω per coordinate group below it) above its OV label block
    (its μ_k), on one colour scale per row; spare columns blank."""
    KQ, labels = shown.KQ11, shown.labels  # (H, d, d), (H, K, K)
    H, K, d = KQ.shape[0], labels.shape[-1], KQ.shape[-1]
    kq_scale = np.abs(KQ).max() or 1.0
    ov_scale = np.abs(labels).max() or 1.0
    omega_groups = shown.omega_groups  # (H, G)
    for h in range(axes.shape[1]):
        kq_axis, ov_axis = axes[0, h], axes[1, h]
        for axis in (kq_axis, ov_axis):
            axis.grid(False)
        if h >= H:
            kq_axis.axis("off")
            ov_axis.axis("off")
            continue
        kq_image = kq_axis.imshow(KQ[h], cmap="RdBu_r", vmin=-kq_scale, vmax=kq_scale)
        ov_image = ov_axis.imshow(labels[h], cmap="PuOr_r", vmin=-ov_scale, vmax=ov_scale)
        kq_axis.set_xticks(range(d), [str(j + 1) for j in range(d)], fontsize=6)
        kq_axis.set_yticks(range(d), [str(j + 1) for j in range(d)], fontsize=6)
        ov_axis.set_xticks(range(K), [f"y{k + 1}" for k in range(K)], fontsize=7)
        ov_axis.set_yticks(range(K), [f"ŷ{k + 1}" for k in range(K)], fontsize=7)
        omega = ", ".join(f"{w:+.2f}" for w in omega_groups[h])
        mu = ", ".join(f"{m:+.2f}" for m in np.diag(labels[h]))
        kq_axis.set_title(f"head {h + 1}: KQ11", fontsize=7.5)
        kq_axis.set_xlabel(f"ω on G1, G2, ...:\n{omega}", fontsize=6.5)
        ov_axis.set_title(f"OV label block\nμ = ({mu})", fontsize=7)
    top.colorbar(kq_image, ax=axes[0, :H], shrink=0.85, label="KQ entry")
    top.colorbar(ov_image, ax=axes[1, :H], shrink=0.85, label="OV entry")


def _gamma_panel(bars, params, prediction, shown):
    """Γ_k per coordinate group, measured, beside the optimum of the paper's mode where H is
    judged (H ≥ 2)."""
    labels, gamma = shown.labels, shown.gamma_groups  # (H, K, K), (K, G)
    H, K, G = labels.shape[0], labels.shape[-1], gamma.shape[-1]
    width = 0.8 / K
    positions = np.arange(G)
    judged = sorted({h for h in params.heads if h >= 2})
    optimum = None
    if H in judged:
        i = judged.index(H)
        optimum = np.asarray(prediction.values["gamma"], dtype=float).reshape(len(judged), K, G)[i]
    for k in range(K):
        x = positions + (k - (K - 1) / 2) * width
        color = PALETTE[(2 * k) % len(PALETTE)]
        bars.bar(x, gamma[k], width * 0.9, color=color, alpha=0.8, label=f"Γ_{k + 1} measured")
        if optimum is not None:
            bars.bar(
                x, optimum[k], width * 0.9, fill=False, edgecolor=THEORY, lw=1.2,
                label="optimum of the paper's mode (theory)" if k == 0 else None,
            )  # fmt: skip
    bars.axhline(0.0, color="black", lw=0.6)
    names = [f"G{g + 1}" for g in range(G)]
    if K == 2 and G == 3:  # the paper's groups
        names = [
            f"{n}\n{rule}" for n, rule in zip(names, ("S1\\S2", "S1∩S2", "S2\\S1"), strict=True)
        ]
    bars.set_xticks(positions, names)
    bars.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=7)
    zero_sum = ", ".join(f"{z:+.3f}" for z in shown.zero_sum)
    bars.set_title(
        f"Γ_k = Σ_h μ^h_k diag(ω^h), mean per coordinate group; Σ_h μ^h_k = ({zero_sum})",
        fontsize=7.5,
    )


def figure_16(params, prediction, measurement):
    """Figure 16: the H = 1 member (mode I: one weighted kernel regressor)."""
    return _heads_figure(params, prediction, measurement, 1, 16)


def figure_17(params, prediction, measurement):
    """Figure 17: the H = 2 member (mode II: one ± pair shared by both tasks)."""
    return _heads_figure(params, prediction, measurement, 2, 17)


def figure_18(params, prediction, measurement):
    """Figure 18: the H = 4 member (mode III: a ± pair per task)."""
    return _heads_figure(params, prediction, measurement, 4, 18)


def figure_19(params, prediction, measurement):
    """Figure 19: the H = 3 member (mode IV: superposition)."""
    return _heads_figure(params, prediction, measurement, 3, 19)


def table_2(params, prediction, measurement, sources, head_conditions) -> str:
    """Table 2 of the paper and its arithmetic, beside the toolkit's H = 3 member (same columns).

    The claim's table (HE-5.4-MT), with the support conditions it hands in (figures compute no
    theory): ``sources``, rows ``(name, omega (H, G), mu (H, K), conditions)`` of the paper's
    Table 2 and of the toolkit's H = 3 member by coordinate group; ``head_conditions``, per
    trained H the conditions of its shown member (`theory.support_conditions`).
    """
    data = MultiTaskData.from_record(measurement.figure_data, params.heads)
    rows = [
        "Table 2 (He et al. 2025, H = 3; columns ω on G1, G3, G2, μ_1, μ_2; G1 = S1\\S2, "
        "G2 = S1∩S2, G3 = S2\\S1), the paper's beside the toolkit's H = 3 member (when the run "
        "has one and two tasks with these three groups):",
        "",
        "| source | head | ω G1 | ω G3 | ω G2 | μ_1 | μ_2 |",
        "|---|---|---|---|---|---|---|",
    ]
    order = [0, 2, 1]  # G1, G3, G2 as the paper's columns
    for name, omega, mu, _ in sources:
        for h in range(omega.shape[0]):
            cells = [f"{omega[h, g]:+.4f}" for g in order] + [f"{v:+.4f}" for v in mu[h]]
            rows.append(f"| {name} | {h + 1} | " + " | ".join(cells) + " |")
    rows += [
        "",
        "| source | Σ_h μ_1 | Σ_h μ_2 | Γ_1 on G1, G2 / off (G3) | Γ_2 on G2, G3 / off (G1) |",
        "|---|---|---|---|---|",
    ]
    for name, _, _, c in sources:
        on = [", ".join(f"{v:.3f}" for v in values) for values in c.on_support]
        off = [", ".join(f"{v:.3f}" for v in values) for values in c.off_support]
        rows.append(
            f"| {name} | {c.zero_sum[0]:+.3f} | {c.zero_sum[1]:+.3f} | {on[0]} / {off[0]} | "
            f"{on[1]} / {off[1]} |"
        )
    eta_star = MultiTaskTheory.from_record(prediction.figure_data).eta_star
    eta = ", ".join(f"{v:.3f}" for v in eta_star)
    modes = ", ".join(
        f"{e} (H = {H}): {MODE_NAMES[int(code)]}"
        for e, (H, code) in enumerate(zip(params.heads, data.modes_final, strict=True))
    )
    gaps = ", ".join(
        f"H = {H} (member {data.members[H].member}): {gap:.3f}"
        for H, gap in zip(params.judged_heads, data.first_order_gap, strict=True)
    )
    rows += [
        "",
        "Per H (shown member; per task k, coordinates: step η_k = mean of Γ_k on S_k, leakage "
        "max |Γ_k off S_k| / η_k, spread (max − min of Γ_k on S_k) / η_k):",
        "",
        "| H | member | mode | Σ_h μ^h_k | η_k | leakage | spread |",
        "|---|---|---|---|---|---|---|",
    ]
    for H in sorted(set(params.heads)):
        c = head_conditions[H]
        columns = ((c.zero_sum, "+.3f"), (c.eta, ".3f"), (c.leakage, ".3f"), (c.spread, ".3f"))
        cells = [", ".join(f"{v:{f}}" for v in values) for values, f in columns]
        shown = data.members[H]
        rows.append(f"| {H} | {shown.member} | {MODE_NAMES[shown.mode]} | " + " | ".join(cells)
                    + " |")  # fmt: skip
    rows += [
        "",
        f"Optimal restricted steps η*_k = L/(L + |S_k|(1+r)) = {eta}.",
        "",
        f"Modes at the end (`numerics.multitask_mode`), member: {modes}.",
        "",
        f"First-order truncation (RMS gap kernel vs first-order prediction / RMS prediction): "
        f"{gaps}.",
    ]
    return "\n".join(rows)
