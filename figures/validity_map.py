"""Validity maps of a sweep: where over a grid of settings a claim's prediction holds.

A sweep (`icl-verify sweep ID --grid ...`) runs one claim at every point of a grid of
parameters. Its map shows each point's verdict in one colour key (`VERDICT_COLOURS`, the
Okabe-Ito colour-blind-safe green / orange / vermillion):

- `validity_map_2d`: two swept parameters; a grid of cells coloured by verdict, each carrying
  the worst check's score  discrepancy / (allowed + uncertainty)  (> 1: contradicted);
- `validity_map_1d`: one swept parameter; per quantity, the prediction as a line and the
  measurement as points with ±2 error bars, each point coloured by its verdict.

Both draw the numbers handed to them (from `results.json`) and return the Figure; saving is
the caller's (`figures.style.save_figure`).
"""

from __future__ import annotations

import math
from numbers import Real

import numpy as np
from icl_verify.figures.style import THEORY, new_figure, set_log_ticks, styled
from matplotlib.patches import Patch, Rectangle

VERDICT_COLOURS = {
    "agrees": "#009e73",  # bluish green
    "inconclusive": "#e69f00",  # orange
    "disagrees": "#d55e00",  # vermillion
}
MISSING_COLOUR = "#e0e0e0"  # light grey: a point with no result (not run, or failed to run)
SCORE_TEXT = (
    "number: the worst check's score, > 1 contradicts the claim\n"
    "|measured − predicted| / (allowed + uncertainty)"
)


def score_text(score: float) -> str:
    """A cell's score as a reader compares it with 1: three significant digits below 100,
    whole numbers to 999, then mantissa and exponent; "—" for none (NaN), "∞" for infinite.

    >>> [score_text(s) for s in (0.0, 0.0004, 0.03, 0.9951, 1.0, 12.4, 317.2, 25_400.0)]
    ['0', '<0.001', '0.03', '0.995', '1', '12.4', '317', '2.5e4']
    >>> score_text(float("nan")), score_text(float("inf"))
    ('—', '∞')
    """
    if math.isnan(score):
        return "—"
    if math.isinf(score):
        return "∞"
    if 0 < score < 1e-3:
        return "<0.001"
    if score < 100:
        return f"{score:.3g}"
    if score < 999.5:
        return f"{score:.0f}"
    mantissa, exponent = f"{score:.1e}".split("e")
    return f"{mantissa}e{int(exponent)}"


def _value_text(value) -> str:
    """A swept value as a tick label: numbers with :g (40, 0.001, 1e+04), others as written."""
    return f"{value:g}" if isinstance(value, Real) else str(value)


def _verdict_array(name: str, verdicts, shape: tuple[int, ...]) -> np.ndarray:
    """`verdicts` as an object array of `shape`, None for a missing point ("" or None)."""
    array = np.empty(shape, dtype=object)
    given = np.asarray(verdicts, dtype=object)
    if given.shape != shape:
        raise ValueError(f"{name} has shape {given.shape}, expected {shape}")
    for index, verdict in np.ndenumerate(given):
        if verdict not in VERDICT_COLOURS and verdict not in (None, ""):
            raise ValueError(
                f"{name}{list(index)} is {verdict!r}, expected one of "
                f"{', '.join(VERDICT_COLOURS)} or None/'' for a missing point"
            )
        array[index] = verdict or None
    return array


def _float_array(name: str, values, shape: tuple[int, ...]) -> np.ndarray:
    """`values` as a float array of `shape` (None becomes NaN), or a one-line ValueError."""
    try:
        array = np.asarray(values, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must hold numbers, got {values!r}") from None
    if array.shape != shape:
        raise ValueError(f"{name} has shape {array.shape}, expected {shape}")
    return array


def _swept_values(name: str, values) -> list:
    """The swept values as a non-empty list (one axis of the grid)."""
    values = list(np.asarray(values, dtype=object).ravel()) if np.ndim(values) == 1 else None
    if not values:
        raise ValueError(f"{name} must be a non-empty 1-D sequence of the swept values")
    return values


def _verdict_key(present) -> list:
    """Legend handles for the verdicts in `present` (in the order agrees, inconclusive,
    disagrees, missing)."""
    handles = [Patch(color=VERDICT_COLOURS[v], label=v) for v in VERDICT_COLOURS if v in present]
    if None in present:
        handles.append(Patch(color=MISSING_COLOUR, label="no result (—)"))
    return handles


@styled
def validity_map_2d(
    x_name: str, x_values, y_name: str, y_values, verdicts, scores, title: str = ""
):
    """A sweep over two parameters as a grid of cells: cell (i, j) is the point
    y = y_values[i], x = x_values[j], coloured by its verdict and labelled with its worst
    check's score discrepancy / (allowed + uncertainty) (> 1: contradicted; `score_text`).

    Cells are equally spaced whatever the values (a log-spaced L sits in even columns), ticked
    at the swept values. Shapes: x_values (nx,), y_values (ny,), verdicts (ny, nx) of
    "agrees" / "inconclusive" / "disagrees" or None/"" for a missing point (drawn grey, "—"),
    scores (ny, nx) floats. Returns the Figure; a shape mismatch is a one-line ValueError.

    >>> nan = float("nan")
    >>> verdicts = [["agrees", "inconclusive", "disagrees"], ["agrees", None, "agrees"]]
    >>> figure = validity_map_2d("d", [5, 10, 20], "L", [40, 80], verdicts,
    ...                          [[0.03, 0.8, 12.4], [0.2, nan, 0.5]])
    >>> [t.get_text() for t in figure.axes[0].texts]
    ['0.03', '0.8', '12.4', '0.2', '—', '0.5']
    >>> [t.get_text() for t in figure.axes[0].get_xticklabels()]
    ['5', '10', '20']
    """
    x_values, y_values = _swept_values("x_values", x_values), _swept_values("y_values", y_values)
    shape = (len(y_values), len(x_values))
    verdicts = _verdict_array("verdicts", verdicts, shape)
    scores = _float_array("scores", scores, shape)

    width, height = max(4.2, 0.8 * shape[1] + 1.8), max(2.6, 0.5 * shape[0] + 1.9)
    figure, axes = new_figure(width=width, height=height)
    axis = axes[0, 0]
    for (i, j), verdict in np.ndenumerate(verdicts):
        colour = MISSING_COLOUR if verdict is None else VERDICT_COLOURS[verdict]
        axis.add_patch(Rectangle((j - 0.5, i - 0.5), 1, 1, facecolor=colour, edgecolor="white",
                                 linewidth=1.5))  # fmt: skip
        text = "—" if verdict is None else score_text(scores[i, j])
        axis.text(j, i, text, ha="center", va="center", fontsize=8.5, color="black")
    axis.set(xlim=(-0.5, shape[1] - 0.5), ylim=(-0.5, shape[0] - 0.5), xlabel=x_name,
             ylabel=y_name, title=title)  # fmt: skip
    axis.set_xticks(range(shape[1]), [_value_text(v) for v in x_values])
    axis.set_yticks(range(shape[0]), [_value_text(v) for v in y_values])
    axis.tick_params(length=0)
    axis.grid(False)
    for spine in axis.spines.values():
        spine.set_visible(False)
    figure.legend(handles=_verdict_key(set(verdicts.ravel())), loc="outside lower center",
                  ncols=2 if width < 5 else 4, frameon=False, title=SCORE_TEXT,
                  title_fontsize=7)  # fmt: skip
    return figure


@styled
def validity_map_1d(x_name: str, x_values, series, verdicts, title: str = ""):
    """A sweep over one parameter: for each (label, predicted (n,), measured (n,), error (n,))
    of `series`, one panel (stacked) with the prediction as a line and the measurement as
    points with ±2 error bars, point k coloured by its verdict: verdicts (n,) gives each point's
    verdict (the worst of its checks) to every panel, verdicts (len(series), n) each panel's
    own (its check's); None/"" marks a missing point (grey). The x axis is logarithmic when the
    values are positive and span more than a decade, and is ticked at the swept values (up to
    12 of them on a linear axis). Returns the Figure; a shape mismatch is a one-line ValueError
    naming the argument.

    >>> figure = validity_map_1d("L", [40, 80, 160, 320, 640],
    ...     [("risk", [0.5, 0.3, 0.2, 0.15, 0.12], [0.51, 0.3, 0.22, 0.15, 0.2], [0.01] * 5)],
    ...     ["agrees", "agrees", "inconclusive", "agrees", "disagrees"])
    >>> axis = figure.axes[0]
    >>> axis.get_xscale(), [t.get_text() for t in axis.get_xticklabels()]
    ('log', ['40', '80', '160', '320', '640'])
    >>> [text.get_text() for text in figure.legends[0].get_texts()]
    ['predicted', 'agrees', 'inconclusive', 'disagrees']
    """
    x = _float_array("x_values", _swept_values("x_values", x_values), (np.size(x_values),))
    n = x.size
    series = list(series)
    if not series:
        raise ValueError("series must hold at least one (label, predicted, measured, error)")
    rows = []
    for k, entry in enumerate(series):
        if len(entry) != 4:
            raise ValueError(f"series[{k}] must be (label, predicted, measured, error)")
        label, predicted, measured, error = entry
        rows.append((label, _float_array(f"series[{k}] predicted", predicted, (n,)),
                     _float_array(f"series[{k}] measured", measured, (n,)),
                     _float_array(f"series[{k}] error", error, (n,))))  # fmt: skip
    per_series = np.ndim(np.asarray(verdicts, dtype=object)) == 2
    verdicts = _verdict_array("verdicts", verdicts, (len(rows), n) if per_series else (n,))
    verdicts = verdicts if per_series else np.broadcast_to(verdicts, (len(rows), n))

    figure, axes = new_figure(1, len(rows), width=4.6, height=2.4)
    logarithmic = bool(np.all(x > 0) and x.max() > 10 * x.min())
    key = {}  # label -> handle, in the order first drawn
    for axis, (label, predicted, measured, error), row in zip(axes[:, 0], rows, verdicts,
                                                               strict=True):  # fmt: skip
        axis.plot(x, predicted, color=THEORY, lw=1.3, marker=".", ms=4, label="predicted")
        for verdict in (*VERDICT_COLOURS, None):
            chosen = np.array([v == verdict for v in row])
            if chosen.any():
                colour = MISSING_COLOUR if verdict is None else VERDICT_COLOURS[verdict]
                name = "no result" if verdict is None else verdict
                axis.errorbar(x[chosen], measured[chosen], 2 * error[chosen], ls="none",
                              marker="o", ms=4.5, capsize=2.5, color=colour, mec="black",
                              mew=0.4, label=name)  # fmt: skip
        for handle, name in zip(*axis.get_legend_handles_labels(), strict=True):
            key.setdefault(name, handle)
        axis.set(ylabel=label, xlabel=x_name)
        if logarithmic:
            axis.set_xscale("log")
            set_log_ticks(axis, x)
        elif n <= 12:
            axis.set_xticks(x, [_value_text(v) for v in x])
    if title:
        figure.suptitle(title, fontsize=9.5)
    whose = "its check's" if per_series else "the point's (worst check)"
    caption = f"line: predicted; points: measured ± 2 errors,\ncoloured by {whose} verdict"
    figure.legend(key.values(), key.keys(), loc="outside lower center", ncols=3, frameon=False,
                  title=caption, title_fontsize=7)  # fmt: skip
    return figure
