"""The shared look of icl-verify figures: theory as lines, measurements as markers with error bars.

Every claim figure puts the theory's prediction (a solid line, `THEORY` colour)
beside the simulation's measurement (markers, `MEASURED` colour), with tolerances
drawn as dashed grey lines, so a reader sees at once what was compared.

Figures are `matplotlib.figure.Figure` objects made without `pyplot`: importing the toolkit
leaves the user's backend, their pyplot figures and their rcParams alone (the command line
chooses a non-interactive backend for itself). The project's look applies inside
`figure_style`, which the drawing entry points enter (`validation.Claim.draw`, the paper
figures, `styled` functions); in a notebook a returned Figure shows inline (`_show_inline`).
"""

from __future__ import annotations

import contextlib
import functools
import io
import sys
from pathlib import Path

import matplotlib
import matplotlib.image
import numpy as np
from matplotlib.figure import Figure

THEORY = "#1f4e9c"  # dark blue: closed forms and ODE solutions
MEASURED = "#d1495b"  # red: optimiser, Monte Carlo and training results
REFERENCE = "#7f7f7f"  # grey: limits, tolerances, guides
PALETTE = ("#d1495b", "#edae49", "#00798c", "#66a182")  # further measured series

_RC = {
    "figure.dpi": 110,
    "savefig.dpi": 130,
    "font.size": 9,
    "axes.titlesize": 9.5,
    "axes.labelsize": 9,
    "legend.fontsize": 8,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.alpha": 0.25,
}


def figure_style():
    """The project's look (font sizes, light grid, no top/right spines) for the figures drawn
    inside it; rcParams are restored on leaving (`matplotlib.rc_context`).

    >>> before = dict(matplotlib.rcParams)
    >>> with figure_style():
    ...     matplotlib.rcParams["axes.grid"]
    True
    >>> dict(matplotlib.rcParams) == before
    True
    """
    return matplotlib.rc_context(_RC)


def styled(draw):
    """``draw`` run inside `figure_style` (a drawing function a user calls directly)."""

    @functools.wraps(draw)
    def wrapper(*args, **kwargs):
        with figure_style():
            return draw(*args, **kwargs)

    return wrapper


def _show_inline() -> None:
    """In an IPython kernel, show a returned Figure as a PNG (what the inline backend does for
    pyplot's figures, which only registers it once pyplot makes a figure); elsewhere nothing."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    if shell is None or not hasattr(shell, "display_formatter"):
        return
    from IPython.core.pylabtools import print_figure

    png = shell.display_formatter.formatters["image/png"]
    with contextlib.suppress(KeyError):
        png.lookup_by_type(Figure)
        return  # the user's own matplotlib integration already shows figures
    png.for_type(Figure, lambda figure: print_figure(figure, "png", bbox_inches="tight"))


_show_inline()


def measured(axis, x, value, se, label: str, *, k: float = 2, fmt: str = "o",
             color: str = MEASURED, **line):  # fmt: skip
    """Measurements at ``x`` as markers with bars of ``k`` standard errors (the look of every
    measured series: capped bars, `MEASURED` colour unless given); ``line`` passes on to
    ``errorbar`` (ms, ls, lw, ...)."""
    return axis.errorbar(x, value, yerr=k * np.asarray(se), fmt=fmt, color=color, capsize=2,
                         label=label, **line)  # fmt: skip


def setting_text(params) -> str:
    """The data model of a claim's parameters for a caption: ``d=5, L=40, σ²=0.1``."""
    return f"d={params.d}, L={params.L}, σ²={params.sigma2:g}"


def training_text(params) -> str:
    """A trained claim's optimisation for a caption: ``10000 Adam steps, lr 0.003, batch 256``."""
    return f"{params.steps} Adam steps, lr {params.lr:g}, batch {params.batch}"


def new_figure(ncols: int = 1, nrows: int = 1, width: float = 4.2, height: float = 3.3):
    """A figure with `nrows x ncols` axes in the project style; returns (figure, axes array).

    A `matplotlib.figure.Figure` outside pyplot (nothing to close); drawn inside
    `figure_style` it has the project's look.

    >>> figure, axes = new_figure(2)
    >>> axes.shape
    (1, 2)
    """
    figure = Figure(figsize=(width * ncols, height * nrows), layout="constrained")
    return figure, figure.subplots(nrows, ncols, squeeze=False)


def new_subfigures(width: float, height: float, **layout):
    """A figure of ``width`` x ``height`` inches in the project style, split into subfigures
    (``layout``: the arguments of `matplotlib.figure.Figure.subfigures`, e.g. ``nrows``,
    ``ncols``, ``width_ratios``); returns (figure, subfigures), for panels with their own
    layouts (heat maps beside curves).

    >>> figure, (left, right) = new_subfigures(6.0, 3.0, ncols=2)
    >>> len(figure.subfigs), len(figure.axes)
    (2, 0)
    """
    figure = Figure(figsize=(width, height), layout="constrained")
    return figure, figure.subfigures(**layout)


def save_figure(figure, path: Path | str, dpi: float | None = None) -> None:
    """Render `figure` as PNG to `path` atomically (temporary file, then rename)."""
    from icl_verify._files import write_atomic

    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=dpi)
    write_atomic(Path(path), buffer.getvalue())


def set_log_ticks(axis, ticks, which: str = "x") -> None:
    """Label a log axis at `ticks` only (plain numbers), hiding minor labels that would overlap.

    >>> figure, axes = new_figure()
    >>> axes[0, 0].set_xscale("log")
    >>> set_log_ticks(axes[0, 0], [0.05, 0.1, 0.2])
    >>> [t.get_text() for t in axes[0, 0].get_xticklabels()]
    ['0.05', '0.1', '0.2']
    """
    from matplotlib.ticker import FixedLocator, NullFormatter

    target = axis.xaxis if which == "x" else axis.yaxis
    target.set_major_locator(FixedLocator(ticks))
    target.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda value, _: f"{value:g}"))
    target.set_minor_formatter(NullFormatter())


def log_ticks(low: float, high: float) -> list[float]:
    """The 1-2-5 numbers between low and high (inclusive, with a little slack), for `set_log_ticks`.

    >>> log_ticks(0.05, 0.6)
    [0.05, 0.1, 0.2, 0.5]
    """
    candidates = [m * 10.0**e for e in range(-6, 7) for m in (1, 2, 5)]
    return [float(f"{t:.1g}") for t in candidates if low / 1.3 <= t <= high * 1.01]


def side_by_side(figures, titles, suptitle: str = ""):
    """One figure holding ``figures`` (matplotlib Figures) in a row, each rasterised at 120 dpi
    and titled, for a paper figure whose panels are drawn by several claims' figure functions;
    Returns the new Figure.

    >>> parts = [new_figure()[0], new_figure()[0]]
    >>> combined = side_by_side(parts, ["(b)", "(c)"])
    >>> len(combined.axes)
    2
    """
    images = []
    for figure in figures:
        buffer = io.BytesIO()
        figure.savefig(buffer, format="png", dpi=120)
        buffer.seek(0)
        images.append(matplotlib.image.imread(buffer))
    widths = [image.shape[1] / image.shape[0] for image in images]
    combined = Figure(figsize=(3.2 * sum(widths), 3.6), layout="constrained")
    axes = combined.subplots(1, len(images), squeeze=False, gridspec_kw={"width_ratios": widths})
    for axis, image, title in zip(axes[0], images, titles, strict=True):
        axis.imshow(image)
        axis.set_axis_off()
        axis.set_title(title, fontsize=9)
    if suptitle:
        combined.suptitle(suptitle, fontsize=9)
    return combined
