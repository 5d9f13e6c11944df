"""The settings CZZ-T5.3 (`isotropic`) measures: per panel of its figure the cached tuned risks of
`numerics.isotropic_setting` on each setting (a row: per estimator its per-prompt excess risks
and tuned grid point, pre-gd's eta t and s lambda_max), and the summaries over a panel's rows
that the claim's values and figure data are made of.
"""

from __future__ import annotations

import icl_verify.figures.data.isotropic as fig_data
import numpy as np

from icl_verify import numerics, statistics


def ratio_n(params, d: int) -> int:
    """The n of the ratio panel at dimension d: n = 4 d s."""
    return 4 * d * params.s


def setting(params, runtime, stream, d, n, s, sigma, prompts, lasso=False) -> dict:
    """One setting's tuned risks (`numerics.isotropic_setting`), cached by everything they
    depend on."""
    config = {
        "d": d,
        "n": n,
        "s": s,
        "sigma": sigma,
        "prompts": prompts,
        "seed": runtime.seed_for(stream),
        "etas": params.etas,
        "steps": params.steps,
        "lambdas": params.lambdas,
        "alphas": params.alphas if lasso else None,
        "device": runtime.device,
    }
    return runtime.cached("isotropic-setting", config, lambda: numerics.isotropic_setting(**config))


def mean_se(rows, name) -> tuple[np.ndarray, np.ndarray]:
    """Per setting, the mean of ``name`` over its prompts and the standard error."""
    means, ses = np.array([statistics.mean_se(r[name]) for r in rows]).T
    return means, ses


def best_baseline(rows):
    """Per setting, the lower of tuned ridge and tuned GD (OLS is ridge at λ = 0)."""
    means = {k: mean_se(rows, k) for k in ("ridge", "gd")}
    pick = means["ridge"][0] <= means["gd"][0]
    return tuple(np.where(pick, means["ridge"][i], means["gd"][i]) for i in (0, 1)), [
        "ridge" if p else "gd" for p in pick
    ]


def paired_ratio(rows, names, over) -> tuple[np.ndarray, np.ndarray]:
    """Per setting, mean(names[k]) / mean(over) on the same prompts with its delta-method SE."""
    ratios, ses = np.array(
        [statistics.ratio_of_means(r[a], r[over]) for r, a in zip(rows, names, strict=True)]
    ).T
    return ratios, ses


def panels(params, runtime) -> dict[str, list[dict[str, np.ndarray]]]:
    """The settings' rows of every panel: both n grids, pre-gd over s (the §7 reading, at
    d_wide; the η t exponent, at d and n_step) and the ratio over d (rows shared where the
    setting is the same)."""
    p, r = params, runtime
    narrow = [
        setting(p, r, f"narrow{n}", p.d, n, p.s, p.sigma, p.prompts, lasso=True)
        for n in runtime.progress(p.n_grid, "n ≳ d")
    ]
    wide = [
        setting(p, r, f"wide{n}", p.d_wide, n, p.s, p.sigma_wide, p.prompts_wide, lasso=True)
        for n in runtime.progress(p.n_wide, "d ≳ n")
    ]
    reading = [
        wide[-1]
        if s == p.s
        else setting(p, r, f"reading{s}", p.d_wide, p.n_wide[-1], s, p.sigma_wide, p.prompts_wide)
        for s in runtime.progress(p.s_reading, "sparsity")
    ]
    step = [
        narrow[p.n_grid.index(p.n_step)]
        if s == p.s and p.n_step in p.n_grid
        else setting(p, r, f"step{s}", p.d, p.n_step, s, p.sigma, p.prompts)
        for s in runtime.progress(p.s_reading, "η t vs s")
    ]
    ratio = [
        setting(p, r, f"ratio{d}", d, ratio_n(p, d), p.s, p.sigma, p.prompts)
        for d in runtime.progress(p.ratio_d, "ratio d")
    ]
    return {"narrow": narrow, "wide": wide, "reading": reading, "step": step, "ratio": ratio}


def is_ridge(names) -> np.ndarray:
    """Per setting, 1 where the best baseline was ridge, 0 where GD."""
    return np.array([n == "ridge" for n in names], dtype=float)


def risks(rows) -> fig_data.Risks:
    """One n grid's figure data: every estimator's mean ± SE and tuned grid point per n."""
    means, ses = zip(*(mean_se(rows, e) for e in fig_data.ESTIMATORS), strict=True)
    index = tuple(np.array([r[f"{e}_index"] for r in rows]) for e in fig_data.TUNED)
    return fig_data.Risks(np.array(means), np.array(ses), index)


def tuning(rows) -> fig_data.PregdTuning:
    """One panel's pre-gd tuning: its η t and s λ_max (mean ± SE) and tuned (η, t) per row."""
    return fig_data.PregdTuning(
        *mean_se(rows, "pregd_eta_t"), *mean_se(rows, "pregd_s_curvature"),
        np.array([r["pregd_index"] for r in rows]),
    )  # fmt: skip
