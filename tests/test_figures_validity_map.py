"""Validity maps (`figures.validity_map`) drawn from hand-made sweep results.

What a reader takes from a map is checked on the drawn artists: each cell's colour is its
point's verdict, its text is its score as formatted, a missing point is grey with "—", the
ticks are the swept values in order (equally spaced cells even when log-spaced), the 1-D
error bars are ±2 errors in the verdict's colour, and a wrong shape is a one-line ValueError
naming the argument.
"""

import matplotlib.pyplot as plt
import numpy as np
import pytest
from icl_verify.figures.style import save_figure
from icl_verify.figures.validity_map import (
    MISSING_COLOUR,
    VERDICT_COLOURS,
    score_text,
    validity_map_1d,
    validity_map_2d,
)
from matplotlib.colors import to_rgba
from matplotlib.patches import Rectangle

NAN = float("nan")
X2, Y2 = [5, 10, 20], [40, 640]  # (nx,), (ny,)
VERDICTS_2D = [["agrees", "inconclusive", "disagrees"], ["agrees", None, ""]]  # (ny, nx)
SCORES_2D = [[0.031, 0.84, 12.4], [0.0002, NAN, NAN]]  # (ny, nx)

X1 = [40, 80, 160, 320, 640]  # (n,)
VERDICTS_1D = ["agrees", "agrees", "inconclusive", None, "disagrees"]  # (n,)
SERIES = [
    (
        "risk",
        [0.5, 0.3, 0.2, 0.15, 0.12],
        [0.51, 0.29, 0.23, NAN, 0.3],
        [0.01, 0.01, 0.02, 0, 0.01],
    ),
    ("slope", [-1.0] * 5, [-0.98, -1.01, -0.9, NAN, -0.5], [0.02, 0.02, 0.05, 0, 0.03]),
]


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def _cells(figure):
    """{(row, column): facecolour} of the map's cells, from the rectangles' positions."""
    axis = figure.axes[0]
    cells = [p for p in axis.patches if isinstance(p, Rectangle)]
    return {
        (round(p.get_y() + 0.5), round(p.get_x() + 0.5)): to_rgba(p.get_facecolor()) for p in cells
    }


def test_2d_cells_are_coloured_by_verdict_and_carry_the_scores(tmp_path):
    figure = validity_map_2d("d", X2, "L", Y2, VERDICTS_2D, SCORES_2D, title="HE-P4.1")
    cells = _cells(figure)
    assert len(cells) == 6
    expected = {
        (0, 0): VERDICT_COLOURS["agrees"],
        (0, 1): VERDICT_COLOURS["inconclusive"],
        (0, 2): VERDICT_COLOURS["disagrees"],
        (1, 0): VERDICT_COLOURS["agrees"],
        (1, 1): MISSING_COLOUR,
        (1, 2): MISSING_COLOUR,
    }
    assert cells == {cell: to_rgba(colour) for cell, colour in expected.items()}
    axis = figure.axes[0]
    texts = {(round(t.get_position()[1]), round(t.get_position()[0])): t.get_text()
             for t in axis.texts}  # fmt: skip
    assert texts == {
        (0, 0): "0.031",
        (0, 1): "0.84",
        (0, 2): "12.4",
        (1, 0): "<0.001",
        (1, 1): "—",
        (1, 2): "—",
    }
    assert [t.get_text() for t in axis.get_xticklabels()] == ["5", "10", "20"]
    assert [t.get_text() for t in axis.get_yticklabels()] == ["40", "640"]
    assert list(axis.get_yticks()) == [0, 1]  # 40 and 640 in adjacent rows, not 600 apart
    assert (axis.get_xlabel(), axis.get_ylabel(), axis.get_title()) == ("d", "L", "HE-P4.1")
    legend = [t.get_text() for t in figure.legends[0].get_texts()]
    assert legend == ["agrees", "inconclusive", "disagrees", "no result (—)"]
    save_figure(figure, tmp_path / "map_2d.png")
    assert (tmp_path / "map_2d.png").stat().st_size > 5_000


def test_2d_key_lists_only_the_verdicts_present():
    figure = validity_map_2d("H", [1, 2], "scale", [0.1], [["agrees", "agrees"]], [[0.1, 0.2]])
    assert [t.get_text() for t in figure.legends[0].get_texts()] == ["agrees"]


@pytest.mark.parametrize(
    ("score", "text"),
    [(0.0, "0"), (0.03, "0.03"), (0.9996, "1"), (1.004, "1"), (1.05, "1.05"), (12.4, "12.4"),
     (99.96, "100"), (123.4, "123"), (1234.0, "1.2e3"), (float("inf"), "∞"), (NAN, "—")],
)  # fmt: skip
def test_score_text(score, text):
    assert score_text(score) == text


def test_1d_panels_draw_prediction_and_verdict_coloured_measurements(tmp_path):
    figure = validity_map_1d("L", X1, SERIES, VERDICTS_1D, title="HE-T4.2i over L")
    assert len(figure.axes) == 2
    for axis, (label, predicted, measured, error) in zip(figure.axes, SERIES, strict=True):
        assert axis.get_ylabel() == label and axis.get_xscale() == "log"
        assert [t.get_text() for t in axis.get_xticklabels()] == ["40", "80", "160", "320", "640"]
        line = axis.lines[0]
        np.testing.assert_array_equal(line.get_ydata(), predicted)
        assert to_rgba(line.get_color()) != to_rgba(VERDICT_COLOURS["agrees"])
        drawn = {}  # verdict -> (x, y, bar half-length, colour) of the measured points
        for container in axis.containers:
            marker, _, (bars,) = container.lines
            # (k, 2, 2): bottom and top of each finite point's bar
            segments = np.array(bars.get_segments()).reshape(-1, 2, 2)
            drawn[container.get_label()] = (
                marker.get_xdata(),
                marker.get_ydata(),
                (segments[:, 1, 1] - segments[:, 0, 1]) / 2,
                to_rgba(marker.get_color()),
            )
        assert sorted(drawn) == sorted(["agrees", "inconclusive", "disagrees", "no result"])
        for verdict, colour in (*VERDICT_COLOURS.items(), ("no result", MISSING_COLOUR)):
            chosen = [k for k, v in enumerate(VERDICTS_1D) if (v or "no result") == verdict]
            x, y, half, drawn_colour = drawn[verdict]
            np.testing.assert_array_equal(x, np.array(X1)[chosen])
            np.testing.assert_array_equal(y, np.array(measured)[chosen])
            finite = np.isfinite(np.array(measured)[chosen])
            np.testing.assert_allclose(half, 2 * np.array(error)[chosen][finite])
            assert drawn_colour == to_rgba(colour)
    assert figure.get_suptitle() == "HE-T4.2i over L"
    key = [t.get_text() for t in figure.legends[0].get_texts()]
    assert key == ["predicted", "agrees", "inconclusive", "disagrees", "no result"]
    assert "worst check" in figure.legends[0].get_title().get_text()
    save_figure(figure, tmp_path / "map_1d.png")
    assert (tmp_path / "map_1d.png").stat().st_size > 5_000


def test_1d_verdicts_per_series_colour_each_panel_by_its_own_check():
    own = [["agrees"] * 5, ["agrees", "disagrees", "disagrees", None, "inconclusive"]]
    figure = validity_map_1d("L", X1, SERIES, own)
    for axis, row in zip(figure.axes, own, strict=True):
        colours = {}  # point index -> colour of its marker
        for container in axis.containers:
            marker = container.lines[0]
            for x in marker.get_xdata():
                colours[X1.index(x)] = to_rgba(marker.get_color())
        expected = [MISSING_COLOUR if v is None else VERDICT_COLOURS[v] for v in row]
        assert [colours[k] for k in range(5)] == [to_rgba(c) for c in expected]
    assert "worst check" not in figure.legends[0].get_title().get_text()


def test_1d_linear_axis_within_a_decade():
    figure = validity_map_1d("scale", [0.5, 1, 2], [("p", [1, 2, 3], [1, 2, 3], [0, 0, 0])],
                             ["agrees"] * 3)  # fmt: skip
    axis = figure.axes[0]
    assert axis.get_xscale() == "linear"
    assert [t.get_text() for t in axis.get_xticklabels()] == ["0.5", "1", "2"]


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: validity_map_2d("d", X2, "L", Y2, VERDICTS_2D, [[0.1, 0.2, 0.3]]),
         "scores has shape (1, 3), expected (2, 3)"),
        (lambda: validity_map_2d("d", X2, "L", Y2, [["agrees"] * 2] * 2, SCORES_2D),
         "verdicts has shape (2, 2), expected (2, 3)"),
        (lambda: validity_map_2d("d", X2, "L", Y2, [["agrees", "fine", "agrees"]] * 2, SCORES_2D),
         "verdicts[0, 1] is 'fine'"),
        (lambda: validity_map_2d("d", [], "L", Y2, [[], []], [[], []]), "x_values must be"),
        (lambda: validity_map_1d("L", X1, [("risk", [1.0] * 4, [1.0] * 5, [0.1] * 5)],
                                 VERDICTS_1D), "series[0] predicted has shape (4,), expected (5,)"),
        (lambda: validity_map_1d("L", X1, [("risk", [1.0] * 5, [1.0] * 5)], VERDICTS_1D),
         "series[0] must be (label, predicted, measured, error)"),
        (lambda: validity_map_1d("L", X1, SERIES, VERDICTS_1D[:3]),
         "verdicts has shape (3,), expected (5,)"),
        (lambda: validity_map_1d("L", X1, SERIES, [VERDICTS_1D] * 3),
         "verdicts has shape (3, 5), expected (2, 5)"),
        (lambda: validity_map_1d("L", X1, [], VERDICTS_1D), "series must hold at least one"),
        (lambda: validity_map_1d("act", ["relu", "tanh"], SERIES, VERDICTS_1D),
         "x_values must hold numbers"),
    ],
)  # fmt: skip
def test_shape_errors_are_one_line_and_name_the_argument(call, message):
    with pytest.raises(ValueError) as error:
        call()
    assert message in str(error.value) and "\n" not in str(error.value)
