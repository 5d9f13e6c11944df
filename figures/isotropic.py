"""Figure of Chen, Zhao, Zou (2024) Theorem 5.3 (CZZ-T5.3): tuned excess risks of OLS, ridge, GD,
pre-gd and Lasso against n in both regimes, the baseline/pre-gd ratio against d/s, the §7.11
reading (pre-gd against s beside the theorem's d s^2/n^2 and the discussion's d s/n^2), and
§7.11's condition on t (pre-gd's tuned absolute eta t against s and n beside both readings);
and the claim's markdown tables of the same numbers (`table_isotropic`)."""

from __future__ import annotations

import numpy as np
from icl_verify.figures.data.isotropic import (
    READINGS,
    STEP_READINGS,
    TUNED,
    IsotropicData,
    IsotropicTheory,
)
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

SERIES = (  # name (`figures.data.isotropic.ESTIMATORS`), label, colour, marker
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


def _regime(axis, risks, suffix, n, prediction, measurement, title):
    """One n grid's risks (``suffix`` "" for n >~ d, "_wide" for d >~ n) beside the bounds."""
    for name, label, colour, marker in SERIES:
        mean, se = risks.at(name)
        measured(axis, n, mean, se, label, fmt=marker, color=colour, ms=4, ls="-", lw=0.6)
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


def _step_by_s(by_s, params, data: IsotropicData, theory: IsotropicTheory):
    """Pre-gd's tuned absolute η t against s (both s grids) beside F.1's two readings."""
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
        tuned = data.tuned(panel)
        measured(
            by_s,
            s,
            tuned.eta_t,
            tuned.eta_t_se,
            f"tuned η·t, {text}",
            fmt=marker,
            color=colour,
            ls="-",
            lw=0.6,
        )
    eta_t, slopes = data.tuned("step").eta_t, data.slopes
    for name, style, text in (
        ("beta", "--", "s log(ns/σ²): β²=1/s"),
        ("appendix", ":", "log(ns/σ²)/s: F.1 as printed"),
    ):
        by_s.plot(
            s,
            _through(eta_t, theory.step_budget(name)),
            color=THEORY,
            ls=style,
            label=f"∝ {text}",
        )
    by_s.set(
        xscale="log",
        yscale="log",
        xlabel="sparsity s",
        ylabel="η·t (absolute step × steps)",
        title=f"§7.11 condition on t: η·t ∝ s^{slopes.step_slope:.2f}±{slopes.step_slope_se:.2f}"
        f" (d={params.d}),\ns^{slopes.step_slope_reading:.2f}±{slopes.step_slope_reading_se:.2f}"
        f" (d={params.d_wide}); F.1: s^{theory.step_slope_beta:+.2f} or "
        f"s^{theory.step_slope_appendix:+.2f}",
    )
    by_s.title.set_fontsize(8)
    set_log_ticks(by_s, list(s))
    low, high = by_s.get_ylim()
    set_log_ticks(by_s, log_ticks(low, high), which="y")
    by_s.legend(fontsize=6)


def _step_by_n(by_n, params, data: IsotropicData, theory: IsotropicTheory):
    """Pre-gd's tuned absolute η t against n beside log(n s/σ²) (the same n-shape in both
    readings)."""
    n, tuned = np.array(params.n_grid, dtype=float), data.tuned("narrow")
    measured(by_n, n, tuned.eta_t, tuned.eta_t_se, "tuned η·t (±2 SE)", fmt="D", ls="-", lw=0.6)
    curve = _through(tuned.eta_t, theory.step_budget_narrow)
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
    data = IsotropicData.from_record(measurement.figure_data)
    theory = IsotropicTheory.from_record(prediction.figure_data)
    figure, axes = new_figure(3, 2, width=3.8, height=3.4)
    (narrow, wide, ratio), (reading, step_s, step_n) = axes
    _regime(narrow, data.narrow, "", np.array(params.n_grid), prediction, measurement,
            f"n ≳ d: d={params.d}, s={params.s}, σ={params.sigma:g}")  # fmt: skip
    _regime(wide, data.wide, "_wide", np.array(params.n_wide), prediction, measurement,
            f"d ≳ n: d={params.d_wide}, s={params.s}, σ={params.sigma_wide:g}")  # fmt: skip

    slopes = data.slopes
    x = np.array(params.ratio_d, dtype=float) / params.s
    measured(ratio, x, slopes.ratio, slopes.ratio_se, "best of ridge/GD ÷ pre-gd (±2 SE)", fmt="D")
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
    set_log_ticks(ratio, log_ticks(np.min(slopes.ratio) / 1.5, x.max() * 1.5), which="y")
    ratio.legend(fontsize=6.5)

    s = np.array(params.s_reading, dtype=float)
    pregd = slopes.pregd_reading
    measured(reading, s, pregd, slopes.pregd_reading_se, "pre-gd (±2 SE)", fmt="D")
    for name, style, text in (
        ("theorem", "--", "ds²/n² (theorem)"),
        ("discussion", ":", "ds/n² (discussion)"),
    ):
        bound = theory.bound(name)
        c = _upper_constant(pregd, bound)
        reading.plot(s, c * bound, color=THEORY, ls=style, label=f"{c:.2g} × bound with {text}")
    reading.set(
        xscale="log",
        yscale="log",
        xlabel="sparsity s",
        ylabel="excess risk",
        title=f"§7.11: pre-gd ∝ s^{slopes.reading_slope:.2f}±{slopes.reading_slope_se:.2f}"
        f" (d={params.d_wide}, n={params.n_wide[-1]})\nbound ∝ s^"
        f"{theory.reading_slope_theorem:.2f} (theorem), s^"
        f"{theory.reading_slope_discussion:.2f} (discussion)",
    )
    reading.title.set_fontsize(8)  # two long lines of exponents
    set_log_ticks(reading, list(s))
    set_log_ticks(reading, log_ticks(np.min(pregd) / 2, np.max(pregd) * 3), which="y")
    reading.legend(fontsize=6.5)
    _step_by_s(step_s, params, data, theory)
    _step_by_n(step_n, params, data, theory)
    return figure


# -- the record's markdown tables (stored numbers only) -----------------------------------------

def step_rows(params) -> list[tuple[str, int, int, int, int, float]]:
    """The rows of the eta t table, ``(panel, k, d, n, s, sigma)``: pre-gd's tuned point k of
    the n >~ d panel (over n, "narrow"), of the eta t panel (over s at n_step, "step") and of the
    §7 reading's panel (over s at d_wide, "reading")."""
    m = len(params.s_reading)
    panels = (
        ("narrow", params.d, params.n_grid, [params.s] * len(params.n_grid), params.sigma),
        ("step", params.d, [params.n_step] * m, params.s_reading, params.sigma),
        ("reading", params.d_wide, [params.n_wide[-1]] * m, params.s_reading, params.sigma_wide),
    )
    return [
        (panel, k, d, n, s, sigma)
        for panel, d, ns, ss, sigma in panels
        for k, (n, s) in enumerate(zip(ns, ss, strict=True))
    ]


def table_isotropic(params, prediction, measurement, step_budgets) -> str:
    """Mean excess risks per n in both regimes (evaluation prompts), with exact OLS; pre-gd over
    s beside both readings of the bound; the eta t table of `step_rows`, ``step_budgets`` being
    F.1's eta t in each of `STEP_READINGS` per row (`theory._sparse_isotropic`, from the claim)."""
    data = IsotropicData.from_record(measurement.figure_data)
    theory = IsotropicTheory.from_record(prediction.figure_data)
    lines = [
        "| regime | n | OLS (exact) | ridge | GD | pre-gd | Lasso |",
        "|---|---|---|---|---|---|---|",
    ]
    for risks, d, grid, exact in (
        (data.narrow, params.d, params.n_grid, "ols_exact"),
        (data.wide, params.d_wide, params.n_wide, "ols_exact_wide"),
    ):
        for k, n in enumerate(grid):
            cells = [f"{risks.at(e)[0][k]:.4g}" for e in TUNED]
            ols = f"{risks.at('ols')[0][k]:.4g} ({prediction.values[exact][k]:.4g})"
            lines.append(f"| d={d} | {n} | {ols} | " + " | ".join(cells) + " |")
    lines += [
        "",
        f"§7.11 at d={params.d_wide}, n={params.n_wide[-1]}: pre-gd over s, and the "
        "smallest constant C making each reading's bound an upper bound at every s",
        "",
        "| s | pre-gd | C (theorem, ds²/n²) | C (discussion, ds/n²) |",
        "|---|---|---|---|",
    ]
    pregd = data.slopes.pregd_reading
    for k, s in enumerate(params.s_reading):
        ratios = [pregd[k] / theory.bound(r)[k] for r in READINGS]
        lines.append(f"| {s} | {pregd[k]:.4g} | {ratios[0]:.3g} | {ratios[1]:.3g} |")
    return "\n".join(lines + _step_table(params, theory, data, step_budgets))


def _step_table(params, theory: IsotropicTheory, data: IsotropicData, step_budgets) -> list[str]:
    """§7.11's condition on t: pre-gd's tuned point and absolute eta t per n and per s, and
    eta t over each reading's s log(ns/σ²) or log(ns/σ²)/s (a constant if that reading holds)."""
    g = max(b / a for a, b in zip(params.steps, params.steps[1:], strict=False))
    lines = [
        "",
        "§7.11, condition on t: pre-gd's tuned step η/λ_max and count t, s·λ_max of the "
        "preprocessed Gram (1 when it is I/s on the support), the absolute η·t (mean over "
        f"prompts ± SE), and η·t over each reading's budget. η·t is read on the steps grid: "
        f"resolution a factor {g:g} (each value within ×{np.sqrt(g):.2g} of the best η·t).",
        "",
        "| setting | s | η/λ_max | t | s·λ_max | η·t | η·t / (s log(ns/σ²)) | "
        "η·t / (log(ns/σ²)/s) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for (panel, k, d, n, s, sigma), budgets in zip(step_rows(params), step_budgets, strict=True):
        tuned = data.tuned(panel)
        eta, t = (int(i) for i in tuned.index[k])
        value, se = tuned.eta_t[k], tuned.eta_t_se[k]
        lines.append(
            f"| d={d}, n={n}, σ={sigma:g} | {s} | {params.etas[eta]:g} | "
            f"{params.steps[t]} | {tuned.s_curvature[k]:.3g} | "
            f"{value:.3g} ± {se:.2g} | {value / budgets[0]:.3g} | {value / budgets[1]:.3g} |"
        )
    slopes = data.slopes
    lines += [
        "",
        f"s-exponent of η·t: {slopes.step_slope:.2f} ± {slopes.step_slope_se:.2g} at "
        f"d={params.d}, n={params.n_step} (checked), {slopes.step_slope_reading:.2f} ± "
        f"{slopes.step_slope_reading_se:.2g} at d={params.d_wide}, n={params.n_wide[-1]} "
        "(reported); the budgets' exponents over s_reading are "
        + ", ".join(f"{theory.step_slope(r):+.2f} ({r})" for r in STEP_READINGS)
        + ".",
    ]
    return lines
