"""Figures 16-19 of He et al. (2025), App. A.3: multi-task heads per H (claim HE-5.4-MT).

Each figure shows one trained member (the lowest-validation-loss one with H heads): per head the
KQ11 block diag(omega^h) and the OV label block (K x K, row = task predicted), and below the
task preconditioners Gamma_k = sum_h mu^h_k diag(omega^h) per coordinate group, measured (bars)
beside the optimum of the paper's mode (theory, outlined): eta*_k on S_k and 0 off it for H > K,
the shared preconditioner for 2 <= H <= K. Paper: Fig 16 = H = 1 (mode I), 17 = H = 2 (II),
18 = H = 4 (III), 19 = H = 3 (IV, superposition).
"""

from __future__ import annotations

import numpy as np
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
    data = measurement.figure_data
    if f"KQ11_{H}" not in data:
        figure, axes = new_figure(1, 1, width=5.0, height=1.6)
        axes[0, 0].axis("off")
        axes[0, 0].text(
            0.5, 0.5, f"Figure {number}: no member with H = {H} heads in this run",
            ha="center", va="center",
        )  # fmt: skip
        return figure
    KQ = np.asarray(data[f"KQ11_{H}"], dtype=float)  # (H, d, d)
    labels = np.asarray(data[f"labels_{H}"], dtype=float)  # (H, K, K)
    gamma = np.asarray(data[f"gamma_groups_{H}"], dtype=float)  # (K, G)
    K, G, d = labels.shape[-1], gamma.shape[-1], KQ.shape[-1]
    # circuits per head above, Gamma_k below, each subfigure with its own layout
    figure, (top, bottom) = new_subfigures(2.3 * max(H, 3), 6.0, nrows=2, height_ratios=(2, 1))
    axes = top.subplots(2, max(H, 3), squeeze=False)  # (2, columns): KQ11 row, OV row
    bars = bottom.subplots()
    kq_scale = np.abs(KQ).max() or 1.0
    ov_scale = np.abs(labels).max() or 1.0
    omega_groups = np.asarray(data[f"omega_groups_{H}"], dtype=float)  # (H, G)
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
    member = int(data[f"member_{H}"])
    found = MODE_NAMES.get(int(data[f"mode_{H}"]), "?")
    trained = sorted(set(params.heads))  # the paper's mode of each, in prediction figure_data
    paper = MODE_NAMES[int(prediction.figure_data["paper_modes"][trained.index(H)])]
    zero_sum = ", ".join(f"{z:+.3f}" for z in np.asarray(data[f"zero_sum_{H}"]))
    bars.set_title(
        f"Γ_k = Σ_h μ^h_k diag(ω^h), mean per coordinate group; Σ_h μ^h_k = ({zero_sum})",
        fontsize=7.5,
    )
    figure.suptitle(
        f"HE-5.4-MT (Figure {number}): H = {H}, member {member}; mode found {found}, paper's "
        f"{paper}\nsupports {[list(s) for s in params.supports]}, "
        f"{setting_text(params)} (relative noise); {training_text(params)}",
        fontsize=8.5,
    )
    return figure


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
