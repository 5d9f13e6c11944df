"""Figure of Chen, Zhao, Zou (2024) Theorem 5.3 (CZZ-T5.3): tuned excess risks of OLS, ridge, GD,
pre-gd and Lasso against n in both regimes, the baseline/pre-gd ratio against d/s, the §7.11
reading (pre-gd against s beside the theorem's d s^2/n^2 and the discussion's d s/n^2), and
§7.11's condition on t (pre-gd's tuned absolute eta t against s and n beside both readings)."""

from __future__ import annotations

import numpy as np
from icl_verify.figures.style import (
    MEASURED,
    PALETTE,
    REFERENCE,
    THEORY,
    log_ticks,
    measured,
    new_figure,
    set_log_ticks,
)

SERIES = (  # name, label, colour, marker
    ("ols", "OLS", REFERENCE, "o"),
    ("ridge", "ridge (tuned)", PALETTE[1], "s"),
    ("gd", "GD (tuned)", PALETTE[3], "^"),
    ("pregd", "pre-gd (tuned)", MEASURED, "D"),
    ("lasso", "Lasso (tuned)", PALETTE[2], "v"),
)


def _upper_constant(measured, bound) -> float:
    """The smallest C with measured <= C bound on the grid (what the figure scales the bound by)."""
    return float(np.max(np.asarray(measured) / np.asarray(bound)))


def _lower_constant(measured, bound) -> float:
    return float(np.min(np.asarray(measured) / np.asarray(bound)))


def _regime(axis, regime, n, params, prediction, measurement, title):
    data = measurement.figure_data
    for name, label, colour, marker in SERIES:
        if f"{name}_{regime}" in data:
            measured(
                axis,
                n,
                data[f"{name}_{regime}"],
                data[f"{name}_{regime}_se"],
                label,
                fmt=marker,
                color=colour,
                ms=4,
                ls="-",
                lw=0.6,
            )
    suffix = "" if regime == "narrow" else "_wide"
    exact = prediction.values[f"ols_exact{suffix}"]
    axis.plot(n, exact, color=REFERENCE, lw=1.2, ls=":", label="OLS exact")
    upper = prediction.values[f"pregd_upper{suffix}"]
    c_up = _upper_constant(measurement.values[f"pregd_upper{suffix}"].value, upper)
    axis.plot(n, c_up * upper, color=THEORY, ls="--", label=f"{c_up:.2g} × upper bound")
    lower = prediction.values[f"baseline_lower{suffix}"]
    c_low = _lower_constant(measurement.values[f"baseline_lower{suffix}"].value, lower)
    axis.plot(n, c_low * lower, color=THEORY, ls="-.", label=f"{c_low:.2g} × lower bound")
    axis.set(
        xscale="log",
        yscale="log",
        xlabel="n (in-context examples)",
        ylabel="excess risk ‖v − w*‖²",
        title=title,
    )
    set_log_ticks(axis, log_ticks(n.min(), n.max()))
    axis.legend(fontsize=6.5)


def _through(measured, curve) -> np.ndarray:
    """`curve` scaled by the one constant that centres it on `measured` (geometric mean)."""
    measured, curve = np.asarray(measured), np.asarray(curve)
    return curve * float(np.exp(np.mean(np.log(measured / curve))))


def _step_panels(by_s, by_n, params, prediction, measurement):
    """Pre-gd's tuned absolute eta t against s (both s grids) beside F.1's two readings, and
    against n beside log(n s/σ²) (the same n-shape in both readings)."""
    data, theory = measurement.figure_data, prediction.figure_data
    s = np.array(params.s_reading, dtype=float)
    for panel, colour, marker, text in (
        ("step", MEASURED, "D", f"d={params.d}, n={params.n_step}, σ={params.sigma:g}"),
        (
            "reading",
            PALETTE[2],
            "o",
            f"d={params.d_wide}, n={params.n_wide[-1]}, σ={params.sigma_wide:g}",
        ),
    ):
        measured(
            by_s,
            s,
            data[f"pregd_eta_t_{panel}"],
            data[f"pregd_eta_t_{panel}_se"],
            f"tuned η·t, {text}",
            fmt=marker,
            color=colour,
            ls="-",
            lw=0.6,
        )
    eta_t = data["pregd_eta_t_step"]
    for name, style, text in (
        ("beta", "--", "s log(ns/σ²): β²=1/s"),
        ("appendix", ":", "log(ns/σ²)/s: F.1 as printed"),
    ):
        by_s.plot(
            s,
            _through(eta_t, theory[f"step_budget_{name}"]),
            color=THEORY,
            ls=style,
            label=f"∝ {text}",
        )
    by_s.set(
        xscale="log",
        yscale="log",
        xlabel="sparsity s",
        ylabel="η·t (absolute step × steps)",
        title=f"§7.11 condition on t: η·t ∝ s^{data['step_slope']:.2f}±{data['step_slope_se']:.2f}"
        f" (d={params.d}),\ns^{data['step_slope_reading']:.2f}±{data['step_slope_reading_se']:.2f}"
        f" (d={params.d_wide}); F.1: s^{theory['step_slope_beta']:+.2f} or "
        f"s^{theory['step_slope_appendix']:+.2f}",
    )
    by_s.title.set_fontsize(8)
    set_log_ticks(by_s, list(s))
    low, high = by_s.get_ylim()
    set_log_ticks(by_s, log_ticks(low, high), which="y")
    by_s.legend(fontsize=6)

    n = np.array(params.n_grid, dtype=float)
    measured(
        by_n,
        n,
        data["pregd_eta_t_narrow"],
        data["pregd_eta_t_narrow_se"],
        "tuned η·t (±2 SE)",
        fmt="D",
        ls="-",
        lw=0.6,
    )
    curve = _through(data["pregd_eta_t_narrow"], theory["step_budget_narrow"])
    by_n.plot(n, curve, color=THEORY, ls="--", label="∝ log(ns/σ²) (either reading)")
    steps = np.asarray(params.steps, dtype=float)
    g = float(np.max(steps[1:] / steps[:-1]))
    by_n.set(
        xscale="log",
        yscale="log",
        xlabel="n (in-context examples)",
        ylabel="η·t (absolute step × steps)",
        title=f"η·t vs n: d={params.d}, s={params.s}, σ={params.sigma:g}\n(t on a grid: "
        f"resolution ×{g:g})",
    )
    by_n.title.set_fontsize(8)
    set_log_ticks(by_n, log_ticks(n.min(), n.max()))
    low, high = by_n.get_ylim()
    set_log_ticks(by_n, log_ticks(low, high), which="y")
    by_n.legend(fontsize=6.5)


def figure_isotropic(params, prediction, measurement):
    """Six panels: n >~ d, d >~ n (risks ± 2 SE, bounds scaled by their extreme constants),
    the ratio best baseline / pre-gd at n = 4ds against d/s, pre-gd against s beside both
    readings of the bound, with the fitted s-exponents (stored by the claim), and pre-gd's
    tuned absolute eta t against s and n beside both readings of F.1's condition on t."""
    figure, axes = new_figure(3, 2, width=3.8, height=3.4)
    (narrow, wide, ratio), (reading, step_s, step_n) = axes
    _regime(
        narrow,
        "narrow",
        np.array(params.n_grid),
        params,
        prediction,
        measurement,
        f"n ≳ d: d={params.d}, s={params.s}, σ={params.sigma:g}",
    )
    _regime(
        wide,
        "wide",
        np.array(params.n_wide),
        params,
        prediction,
        measurement,
        f"d ≳ n: d={params.d_wide}, s={params.s}, σ={params.sigma_wide:g}",
    )

    data = measurement.figure_data
    x = np.array(params.ratio_d, dtype=float) / params.s
    measured(
        ratio, x, data["ratio"], data["ratio_se"], "best of ridge/GD ÷ pre-gd (±2 SE)", fmt="D"
    )
    ratio.plot(x, x, color=THEORY, label="d/s")
    slope = measurement.values["ratio_slope"]
    ratio.set(
        xscale="log",
        yscale="log",
        xlabel="d/s",
        ylabel="risk ratio",
        title=f"n = 4ds: fitted slope {slope.value:.2f} ± {slope.error:.2f}\n(theory 1, less "
        "the bound's log²(d/δ))",
    )
    set_log_ticks(ratio, log_ticks(x.min(), x.max()))
    set_log_ticks(ratio, log_ticks(np.min(data["ratio"]) / 1.5, x.max() * 1.5), which="y")
    ratio.legend(fontsize=6.5)

    s = np.array(params.s_reading, dtype=float)
    pregd = data["pregd_reading"]
    measured(reading, s, pregd, data["pregd_reading_se"], "pre-gd (±2 SE)", fmt="D")
    for name, style, text in (
        ("theorem", "--", "ds²/n² (theorem)"),
        ("discussion", ":", "ds/n² (discussion)"),
    ):
        bound = prediction.figure_data[f"reading_{name}"]
        c = _upper_constant(pregd, bound)
        reading.plot(s, c * bound, color=THEORY, ls=style, label=f"{c:.2g} × bound with {text}")
    reading.set(
        xscale="log",
        yscale="log",
        xlabel="sparsity s",
        ylabel="excess risk",
        title=f"§7.11: pre-gd ∝ s^{data['reading_slope']:.2f}±{data['reading_slope_se']:.2f}"
        f" (d={params.d_wide}, n={params.n_wide[-1]})\nbound ∝ s^"
        f"{prediction.figure_data['reading_slope_theorem']:.2f} (theorem), s^"
        f"{prediction.figure_data['reading_slope_discussion']:.2f} (discussion)",
    )
    reading.title.set_fontsize(8)  # two long lines of exponents
    set_log_ticks(reading, list(s))
    set_log_ticks(reading, log_ticks(np.min(pregd) / 2, np.max(pregd) * 3), which="y")
    reading.legend(fontsize=6.5)
    _step_panels(step_s, step_n, params, prediction, measurement)
    return figure
