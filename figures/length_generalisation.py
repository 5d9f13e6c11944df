"""Test MSE against the test prompt length L' (He et al. 2025, Figure 4 and §HE-OBS3).

Left panel: the exact risks of the GD predictors (lines, theory) and the Monte Carlo test MSE of
trained softmax models and of the baselines (markers with error bars, all on the same prompts),
against L'; a dotted vertical line marks the training length. Right panel: each trained model's
MSE relative to the debiased-GD theory curve, where the small gaps of §HE-T4.2i are visible.
The true MSE is drawn (the authors' left panel of Figure 4 adds 0.1, reference §0.5).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
from icl_verify.figures.style import PALETTE, REFERENCE, THEORY, new_figure

MARKERS = ("o", "s", "^", "D", "v", "P", "X")  # one per measured series, with COLOURS
COLOURS = (*PALETTE, "#6a4c93", "#3d3d3d", "#8c564b")


def length_generalisation_figure(
    lengths,
    theory: Mapping[str, np.ndarray],
    measured: Mapping[str, tuple[np.ndarray, np.ndarray]],
    train_length: int,
    reference: str,
    title: str = "",
    extra_panels: int = 0,
):
    """Theory curves and measured MSE (mean, SE) against L'; returns the matplotlib Figure.

    Args:
        lengths: (n,) test lengths L'.
        theory: label -> (n,) exact risk curve (drawn as lines).
        measured: label -> ((n,) mean, (n,) standard error) from Monte Carlo (markers, 2 SE bars).
        train_length: the training L (dotted vertical line).
        reference: the key of ``theory`` the right panel divides by.
        title: title of the left panel.
        extra_panels: empty axes added to the right (``figure.axes[2:]``) for the caller.

    >>> L = np.array([10.0, 40.0, 100.0])
    >>> figure = length_generalisation_figure(
    ...     L, {"dGD": 0.1 + 5 / L}, {"TF": (0.1 + 5.1 / L, np.full(3, 0.01))}, 40, "dGD")
    >>> len(figure.axes)
    2
    """
    lengths = np.asarray(lengths, dtype=float)
    if reference not in theory:
        raise ValueError(f"reference must be one of {tuple(theory)}, got {reference!r}")
    figure, axes = new_figure(2 + extra_panels, width=4.6, height=4.0)
    curve_axis, ratio_axis = axes[0][:2]
    line_styles = ("-", "--", "-.", ":")
    for k, (label, curve) in enumerate(theory.items()):
        curve_axis.plot(lengths, curve, line_styles[k % 4], color=THEORY, lw=1.2,
                        label=f"{label} (theory)")  # fmt: skip
    base = np.asarray(theory[reference], dtype=float)
    for k, (label, (mean, error)) in enumerate(measured.items()):
        style = dict(ls="none", marker=MARKERS[k % len(MARKERS)], ms=3.5,
                     color=COLOURS[k % len(COLOURS)], capsize=1.5, elinewidth=0.8)  # fmt: skip
        mean, error = np.asarray(mean, dtype=float), np.asarray(error, dtype=float)
        curve_axis.errorbar(lengths, mean, 2 * error, label=label, **style)
        ratio_axis.errorbar(lengths, mean / base, 2 * error / base, label=label, **style)
    for axis in (curve_axis, ratio_axis):
        axis.axvline(train_length, color=REFERENCE, ls=":", lw=1)
        axis.set_xlabel("test prompt length L'")
    curve_axis.set_yscale("log")
    curve_axis.set(ylabel="test MSE (true; includes the noise σ²)", title=title)
    curve_axis.text(train_length, curve_axis.get_ylim()[1], " training L", va="top", fontsize=7,
                    color=REFERENCE)  # fmt: skip
    handles, names = curve_axis.get_legend_handles_labels()
    figure.legend(handles, names, loc="outside lower center", ncols=4, fontsize=7)
    ratio_axis.axhline(1.0, color=THEORY, lw=1.2)
    ratio_axis.set(ylabel=f"MSE / {reference} (theory)",
                   title=f"relative to {reference} (theory); bars: 2 SE")  # fmt: skip
    return figure
