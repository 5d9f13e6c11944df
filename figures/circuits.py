"""KQ and OV heat maps per head of trained attention models (He et al. 2025, Figures 1 and 3).

One row per model, one column pair per head: the effective score matrix
``KQ_h = W_K^h^T W_Q^h / sqrt(D)`` as a (D, D) heat map and the last row of
``OV_h = W_O^h W_V^h`` (the only part of OV the read-out uses, reference §HE-2.4) drawn as a
column. Colours are symmetric about zero (red positive, blue negative), one colour scale for
all KQ maps and one for all OV columns, so that opposite heads read as opposite colours and the
diagonal / last-entry patterns of §HE-OBS1 stand out.
"""

from __future__ import annotations

import numpy as np
from icl_verify.figures.style import new_figure

from icl_verify.heads import head_scales


def circuit_heatmaps(KQ, OV, heads, labels, title: str = "", container=None):
    """Heat maps of KQ_h and the OV last row per head; returns the Figure (or `container`).

    Args:
        KQ, OV: (M, H, D, D) circuits of M models (heads beyond ``heads[m]`` are not drawn).
        heads: (M,) active heads per model.
        labels: (M,) a row label per model (e.g. "H = 2, seed 3").
        title: figure title.
        container: a matplotlib Figure or SubFigure to draw into (a new Figure if None), so
            that a claim figure can place the heat maps beside other panels.

    >>> KQ = np.zeros((1, 2, 3, 3)); KQ[0, 0, :2, :2] = 0.1 * np.eye(2); KQ[0, 1] = -KQ[0, 0]
    >>> OV = np.zeros((1, 2, 3, 3)); OV[0, 0, 2, 2] = 3.0; OV[0, 1, 2, 2] = -3.0
    >>> figure = circuit_heatmaps(KQ, OV, [2], ["H = 2"])
    >>> len(figure.axes)  # 2 heads x (KQ, OV) + 2 colour bars
    6
    """
    KQ, OV = np.asarray(KQ, dtype=float), np.asarray(OV, dtype=float)
    heads = [int(h) for h in heads]
    if KQ.ndim != 4 or KQ.shape != OV.shape or len(heads) != KQ.shape[0] != len(labels):
        raise ValueError(
            f"KQ and OV must be (M, H, D, D) with M = len(heads) = len(labels), got {KQ.shape}, "
            f"{OV.shape}, {len(heads)}, {len(labels)}"
        )
    rows, columns, D = len(heads), max(heads), KQ.shape[-1]
    kq_scale = max(np.abs(KQ[m, :h]).max() for m, h in enumerate(heads)) or 1.0
    ov_scale = max(np.abs(OV[m, :h, -1]).max() for m, h in enumerate(heads)) or 1.0
    if container is None:
        figure, axes = new_figure(2 * columns, rows, width=1.25, height=1.55)
        figure.get_layout_engine().set(w_pad=0.01, wspace=0.0)
    else:
        figure, axes = container, container.subplots(rows, 2 * columns, squeeze=False)
    ticks = list(range(D))
    names = [f"x{i + 1}" for i in range(D - 1)] + ["y"]
    kq_image = ov_image = None
    for m, h_count in enumerate(heads):
        for h in range(columns):
            kq_axis, ov_axis = axes[m, 2 * h], axes[m, 2 * h + 1]
            for axis in (kq_axis, ov_axis):
                axis.grid(False)
            if h >= h_count:
                kq_axis.axis("off")
                ov_axis.axis("off")
                continue
            kq_image = kq_axis.imshow(KQ[m, h], cmap="RdBu_r", vmin=-kq_scale, vmax=kq_scale)
            ov_image = ov_axis.imshow(
                OV[m, h, -1][:, None], cmap="PuOr_r", vmin=-ov_scale, vmax=ov_scale, aspect=0.6
            )
            kq_axis.set_xticks(ticks, names, fontsize=5.5)
            kq_axis.set_yticks(ticks, names if h == 0 else [""] * D, fontsize=5.5)
            ov_axis.set_xticks([])
            ov_axis.set_yticks(ticks, [""] * D)
            omega, _ = head_scales(KQ[m, h], OV[m, h], D - 1)
            kq_axis.set_title(f"KQ head {h + 1}\nω={omega:+.3f}", fontsize=7)
            ov_axis.set_title(f"OV row\nμ={OV[m, h, -1, -1]:+.2f}", fontsize=7)
        axes[m, 0].set_ylabel(labels[m], fontsize=8)
    figure.colorbar(kq_image, ax=axes, shrink=0.8, label="KQ entry")
    figure.colorbar(ov_image, ax=axes, shrink=0.8, label="OV last-row entry")
    if title:
        figure.suptitle(title, fontsize=9)
    return figure
