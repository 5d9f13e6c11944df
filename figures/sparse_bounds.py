"""Figures of Chen, Zhao, Zou (2024) §4.3, §5 and Apps. D, F: the upper bounds of Theorems 5.1
and 5.2 (CZZ-T5.1, CZZ-T5.2; Theorem 5.1 over s, CZZ-T5.1-S), their comparison (CZZ-4.3), Lemmas
D.1-D.3 (CZZ-D1, CZZ-D2, CZZ-D3), the steps of Theorem 5.1's proof: the closed form and its
cross term (CZZ-D-CROSS) and Lemmas D.4-D.7 (CZZ-D4-7); the steps of Theorem 5.3's upper bound in
App. F.1 (CZZ-F-STEPS, CZZ-F-CROSS) and Lemma F.1 (CZZ-F1), from the stored numbers only."""

from __future__ import annotations

import numpy as np
from icl_verify.figures.data.sparse_bounds import (
    SOURCES,
    ProofTerms,
    WinsData,
    WinsTheory,
)
from icl_verify.figures.style import (
    MEASURED,
    PALETTE,
    REFERENCE,
    THEORY,
    measured,
    new_figure,
    set_log_ticks,
)


def _caption(params) -> str:
    return f"d={params.d}, s={params.s}, σ={params.sigma:g}, Σⱼⱼ in [1/{params.kappa:g}, 1]"


def _risk_and_ratio(axes, params, prediction, measurement, what: str):
    """(a) tuned risk vs n with C * bound; (b) risk / bound with its fitted trend."""
    data = measurement.figure_data
    n = np.asarray(data["n"])
    risk = measurement.values["risk"]
    bound = np.asarray(prediction.values["risk"])
    constant = float(data["constant_C"])
    left, right = axes
    measured(left, n, risk.value, risk.error, f"tuned {what} (±2 SE)", ms=4)
    left.plot(
        n, constant * bound, color=THEORY, label=f"C · bound, C = max(risk/bound) = {constant:.3g}"
    )
    fit = np.exp(data["risk_intercept"]) * n ** data["risk_slope"]
    left.plot(
        n,
        fit,
        color=REFERENCE,
        ls="--",
        lw=1,
        label=f"fit: slope {data['risk_slope']:.2f} ± {data['risk_slope_se']:.2f}",
    )
    left.set(xscale="log", yscale="log", xlabel="n (in-context examples)", ylabel="excess risk")
    left.set_title(f"tuned {what} vs the bound ({_caption(params)})", fontsize=8)
    left.legend(fontsize=6.5)
    ratio = np.asarray(data["ratio"])
    ratio_se = np.asarray(risk.error) / bound
    measured(right, n, ratio, ratio_se, "risk / bound (±2 SE)", ms=4)
    log_n = np.log(n)
    slope, intercept = np.polyfit(log_n, np.log(ratio), 1)
    right.plot(
        n,
        np.exp(intercept + slope * log_n),
        color=REFERENCE,
        ls="--",
        lw=1,
        label=f"trend: slope {slope:.2f} (rule: ≤ {params.margin:g})",
    )
    right.set(xscale="log", yscale="log", xlabel="n", ylabel="risk / bound")
    right.set_title("no upward trend = one constant C serves every n", fontsize=8)
    right.legend(fontsize=6.5)
    for axis in axes:
        set_log_ticks(axis, n)
    for axis, (t, eta) in ((right, (data["chosen_t"], data["chosen_eta"])),):
        for x, y, steps, step, edge in zip(n, ratio, t, eta, data["t_at_edge"], strict=True):
            mark = "*" if edge else ""
            axis.annotate(
                f"t={steps:.0f}{mark}\nη={step:g}",
                (x, y),
                fontsize=5.5,
                textcoords="offset points",
                xytext=(4, 4),
                color=REFERENCE,
            )


def figure_theorem_5_1(params, prediction, measurement):
    """Tuned pre-gd vs Theorem 5.1's bound, and the ratio (CZZ-T5.1)."""
    figure, axes = new_figure(2, width=4.2, height=3.4)
    _risk_and_ratio(axes[0], params, prediction, measurement, "pre-gd")
    return figure


def figure_cross_term(params, prediction, measurement):
    """The closed form's mean parts at the tuned (eta, t), and the cross term's share with R_hat
    from the same labels and from an independent sample (CZZ-D-CROSS)."""
    figure, axes = new_figure(2, width=4.0, height=3.4)
    data = measurement.figure_data
    n = np.asarray(data["n"])
    parts, shares = axes[0]
    for key, color, label in (
        ("mean_excess", MEASURED, "excess (iterated pre-gd)"),
        ("mean_bias", THEORY, "bias (closed form)"),
        ("mean_variance", PALETTE[2], "variance (closed form)"),
    ):
        parts.plot(n, data[key], "o-", ms=3, color=color, label=label)
    cross = np.asarray(data["mean_cross"])
    parts.plot(
        n, np.abs(cross), "s--", ms=3, color=PALETTE[1], label="|cross| (filled: > 0)", mfc="none"
    )
    parts.plot(n[cross > 0], cross[cross > 0], "s", ms=3, color=PALETTE[1])
    parts.set(xscale="log", yscale="log", xlabel="n", ylabel="mean over evaluation prompts")
    parts.set_title(f"parts at the tuned (η, t), R̂ from the same labels ({_caption(params)})",
                    fontsize=7)  # fmt: skip
    parts.legend(fontsize=6.5)
    set_log_ticks(parts, n)
    for key, offset, color, label in (
        ("cross_share", 0.97, PALETTE[1], "R̂ from the same labels (Algorithm 1)"),
        ("split_cross_share", 1.03, MEASURED, "R̂ from an independent sample"),
    ):
        share = measurement.values[key]
        measured(shares, n * offset, share.value, share.error, label, k=4, color=color, ms=4)
    shares.axhline(0.0, color=THEORY, lw=1, label="(D.2)-(D.3): 0 in expectation")
    shares.set(xscale="log", xlabel="n", ylabel="E[cross] / E[excess] (±4 SE)")
    shares.set_title("the cross term's share: nonzero only with R̂ from the same labels", fontsize=7)
    shares.legend(fontsize=6.5)
    set_log_ticks(shares, n)
    return figure


def figure_sparsity(params, prediction, measurement):
    """Theorem 5.1 over s at one n (CZZ-T5.1-S): tuned pre-gd against C · bound (C = the
    largest risk/bound), each with its fitted s-exponent."""
    data = measurement.figure_data
    s = np.asarray(data["s"])
    bound = np.asarray(prediction.values["risk"])
    figure, axes = new_figure(1, width=5.2, height=3.6)
    axis = axes[0, 0]
    risk = measurement.values["risk"]
    measured(axis, s, risk.value, risk.error,
             f"tuned pre-gd (±2 SE): s-exponent {data['risk_exponent']:.2f} ± "
             f"{data['risk_exponent_se']:.2f}", ms=4)  # fmt: skip
    constant = float(data["constant_C"])
    axis.plot(s, constant * bound, color=THEORY,
              label=f"C · (log t/β)√A, C = {constant:.2g}: s-exponent "
                    f"{float(prediction.figure_data['bound_exponent']):.2f}")  # fmt: skip
    for x, y, steps, step, edge in zip(s, risk.value, data["chosen_t"], data["chosen_eta"],
                                       data["t_at_edge"], strict=True):  # fmt: skip
        axis.annotate(f"t={steps:.0f}{'*' if edge else ''}, η={step:g}", (x, y), fontsize=5.5,
                      textcoords="offset points", xytext=(4, -8), color=REFERENCE)  # fmt: skip
    axis.set(xscale="log", yscale="log", xlabel="s (support size; ‖w*‖ = 1)",
             ylabel="excess risk")  # fmt: skip
    axis.set_title(f"Theorem 5.1 over s at n = {params.n}: d={params.d}, σ={params.sigma:g}, "
                   f"Σⱼⱼ in [1/{params.kappa:g}, 1]", fontsize=8)  # fmt: skip
    axis.legend(fontsize=6.5)
    set_log_ticks(axis, s)
    return figure


def _app_f_title(params) -> str:
    return (f"App. F.1 (Theorem 5.3's setting): d={params.d}, s={params.s}, σ={params.sigma:g}, "
            "Σ = I, w* = ±1/√s")  # fmt: skip


def figure_app_f_steps(params, prediction, measurement):
    """App. F.1's steps at its own step (CZZ-F-STEPS): the bias against both of its bounds, the
    variance against C · bound."""
    data = measurement.figure_data
    n = np.asarray(data["n"])
    values, predicted = measurement.values, prediction.values
    figure, axes = new_figure(2, width=4.0, height=3.4)
    bias_axis, variance_axis = axes[0]
    bias = values["bias"]
    measured(bias_axis, n, bias.value, bias.error, "bias (mean, ±2 SE)", ms=4)
    bias_axis.plot(n, predicted["bias"], color=THEORY, label="s(1 − ηβ²/2)^{2t}")
    bias_axis.plot(n, predicted["bias_vs_noise"], color=REFERENCE, ls="--", label="σ²/n")
    bias_axis.set(xscale="log", yscale="log", xlabel="n", ylabel="bias")
    steps = ", ".join(f"{t:.0f}" for t in prediction.figure_data["t"])
    bias_axis.set_title(f"η = {prediction.figure_data['eta']:g} (= {params.step_beta2:g} s), "
                        f"t = {steps}", fontsize=7.5)  # fmt: skip
    variance = values["variance"]
    bound = np.asarray(predicted["variance"])
    constant = float(np.max(np.asarray(variance.value) / bound))
    measured(variance_axis, n, variance.value, variance.error, "variance (mean, ±2 SE)", ms=4)
    variance_axis.plot(n, constant * bound, color=THEORY,
                       label=f"C · ηt log t (…), C = {constant:.2g}")  # fmt: skip
    variance_axis.set(xscale="log", yscale="log", xlabel="n", ylabel="variance")
    for axis in axes[0]:
        axis.legend(fontsize=6.5)
        set_log_ticks(axis, n)
    figure.suptitle(_app_f_title(params), fontsize=8)
    return figure


def figure_app_f_cross(params, prediction, measurement):
    """The cross term at App. F.1's step (CZZ-F-CROSS): its mean beside the excess, and its
    share of the excess."""
    data = measurement.figure_data
    n = np.asarray(data["n"])
    figure, axes = new_figure(2, width=4.0, height=3.4)
    parts, share_axis = axes[0]
    parts.plot(n, data["mean_excess"], "o-", ms=3, color=MEASURED, label="excess")
    cross = np.asarray(data["mean_cross"])
    parts.plot(n, np.abs(cross), "s--", ms=3, color=PALETTE[1], label="|cross| (filled: > 0)",
               mfc="none")  # fmt: skip
    parts.plot(n[cross > 0], cross[cross > 0], "s", ms=3, color=PALETTE[1])
    parts.set(xscale="log", yscale="log", xlabel="n", ylabel="mean over prompts")
    share = measurement.values["cross_share"]
    measured(share_axis, n, share.value, share.error, "E[cross] / E[excess]", k=4, ms=4)
    share_axis.axhline(0.0, color=THEORY, lw=1, label="bias + variance: 0")
    share_axis.set(xscale="log", xlabel="n", ylabel="share (±4 SE)")
    for axis in axes[0]:
        axis.legend(fontsize=6.5)
        set_log_ticks(axis, n)
    figure.suptitle(_app_f_title(params), fontsize=8)
    return figure


def figure_lemma_f1(params, prediction, measurement):
    """Lemma F.1 (CZZ-F1): the delta-quantile of ||X^T eps / n||^2 over sigma^2 d / n against d
    (a line per n) and against n (a line per d), the mean over it beside, and the quantile's
    fitted exponents in d and in n."""
    data = measurement.figure_data
    n, d = np.asarray(data["n"]), np.asarray(data["d"])
    bound = np.asarray(prediction.values["quantile_by_d"])
    quantile = measurement.values["quantile_by_d"]
    ratio, ratio_se = np.asarray(quantile.value) / bound, np.asarray(quantile.error) / bound
    mean = np.asarray(data["mean"]) / bound
    figure, axes = new_figure(2, width=4.2, height=3.4)
    for axis, x, lines, name in ((axes[0, 0], d, n, "d"), (axes[0, 1], n, d, "n")):
        other = "n" if name == "d" else "d"
        for k, value in enumerate(np.unique(lines)):
            mine = lines == value
            color = PALETTE[k % len(PALETTE)]
            measured(axis, x[mine], ratio[mine], ratio_se[mine], f"{other} = {value:g}",
                     fmt="o-", color=color, ms=3)  # fmt: skip
            axis.plot(x[mine], mean[mine], "x:", ms=3, lw=0.8, color=color)
        axis.axhline(1.0, color=THEORY, lw=1, label="mean = σ²d/n (× marks: measured mean)")
        slope, se = data[f"exponent_{name}"], data[f"exponent_{name}_se"]
        axis.set(xscale="log", yscale="log", xlabel=name,
                 ylabel=f"{params.delta:g}-quantile / (σ²d/n) (±2 SE)")  # fmt: skip
        axis.set_title(
            f"quantile's exponent in {name}: {slope:.3f} ± {se:.3f} "
            f"(lemma: {'+1' if name == 'd' else '−1'}, up to c)",
            fontsize=7.5,
        )
        axis.legend(fontsize=6)
        set_log_ticks(axis, np.unique(x))
    figure.suptitle(f"Lemma F.1: ‖Xᵀε/n‖² ≳ σ²d/n w.p. ≥ 1 − δ (σ={params.sigma:g}, "
                    f"{params.tasks} draws per point)", fontsize=8)  # fmt: skip
    return figure


def figure_theorem_5_2(params, prediction, measurement):
    """Tuned plain GD vs Theorem 5.2's bound, and the ratio."""
    figure, axes = new_figure(2, width=4.2, height=3.4)
    _risk_and_ratio(axes[0], params, prediction, measurement, "GD")
    return figure


def figure_lemma_d1(params, prediction, measurement):
    """||R_hat - R||_2 vs Lemma D.1's bound; the normalised ||R_hat - R|| sqrt(n / (s log d))."""
    figure, axes = new_figure(2, width=4.0, height=3.3)
    data = measurement.figure_data
    n = np.asarray(data["n"])
    error = measurement.values["sup_error"]
    left, right = axes[0]
    measured(left, n, error.value, error.error, "mean ‖R̂ − R‖₂ (±2 SE)", ms=4)
    left.plot(
        n,
        prediction.values["sup_error"],
        color=THEORY,
        label=f"K√(s log(d/δ)/n), K = {prediction.figure_data['K']:g}",
    )
    left.set(xscale="log", yscale="log", xlabel="n", ylabel="‖R̂ − R‖₂")
    left.set_title(f"Lemma D.1 ({_caption(params)})", fontsize=8)
    left.legend(fontsize=7)
    set_log_ticks(left, n)
    measured(right, n, data["normalised"], data["normalised_se"], "‖R̂ − R‖₂ √(n / (s log d))", ms=4)
    right.set(xscale="log", xlabel="n", ylabel="normalised norm", ylim=(0, None))
    right.set_title("bounded over n (the lemma: ≲ K)", fontsize=8)
    right.legend(fontsize=7)
    set_log_ticks(right, n)
    return figure


def figure_lemma_d3(params, prediction, measurement):
    """(a) mean ||Sigma_hat - Sigma||_2 vs Lemma D.3's bound; (b) their ratio, across n = r."""
    figure, axes = new_figure(2, width=4.0, height=3.3)
    n = np.asarray(measurement.figure_data["n"])
    error = measurement.values["covariance_error"]
    bound = np.asarray(prediction.values["covariance_error"])
    rank = prediction.figure_data["rank"]
    left, right = axes[0]
    measured(left, n, error.value, error.error, "mean ‖Σ̂ − Σ‖₂ (±2 SE)", ms=4)
    left.plot(n, bound, color=THEORY, label="‖Σ‖ max(√(r/n), r/n, √(log(1/δ)/n), log(1/δ)/n)")
    right.axvline(rank, color=REFERENCE, ls="--", lw=1, label=f"n = r = {rank:.1f}")
    left.axvline(rank, color=REFERENCE, ls="--", lw=1)
    left.set(xscale="log", yscale="log", xlabel="n", ylabel="‖Σ̂ − Σ‖₂")
    left.set_title(f"Lemma D.3 (d={params.d}, Σⱼⱼ = j^−{params.decay:g})", fontsize=8)
    left.legend(fontsize=7)
    set_log_ticks(left, n[::2])  # every other n: eleven labels would run into each other
    measured(right, n, error.value / bound, error.error / bound, "mean error / bound", ms=4)
    right.set(xscale="log", xlabel="n", ylabel="ratio", ylim=(0, None))
    right.set_title("bounded over n, on both sides of n = r (the lemma: ≲ c)", fontsize=8)
    right.legend(fontsize=7)
    set_log_ticks(right, n[::2])
    return figure


def figure_lemma_d2(params, prediction, measurement):
    """(a) Fraction of prompts losing a support coordinate vs c = n beta^2 / (s log(d/delta));
    (b) the mean number of coordinates lost vs n, with the fitted rate and the predicted range."""
    figure, axes = new_figure(2, width=4.6, height=3.4)
    axis = axes[0, 0]
    data = measurement.figure_data
    c = np.asarray(data["c"])
    failure = measurement.values["failure"]
    measured(
        axis,
        c,
        failure.value,
        failure.error,
        "P(some |r̂ᵢ| < |rᵢ|/2 on S) (±2 SE, AC)",
        fmt="o-",
        ms=4,
    )
    c_star = prediction.figure_data["c_star"]
    axis.step(  # the rule's allowed level as a function of c: 1 below c*, delta from c* on
        [min(c), c_star, max(c)],
        [1.0, params.delta, params.delta],
        where="post",
        color=THEORY,
        label="allowed: δ from c* on (derived), 1 below",
    )
    axis.axvline(c_star, color=THEORY, ls=":", lw=1)
    axis.axhline(params.delta, color=REFERENCE, ls="--", lw=1, label=f"δ = {params.delta:g}")
    reached = data["c_reached"]
    axis.set(
        xscale="log",
        xlabel="c = n β² / (s log(d/δ))",
        ylabel="failure fraction",
        ylim=(-0.02, 1.02),
    )
    axis.set_title(
        f"(a) Lemma D.2 ({_caption(params)}); c* = {c_star:.2f}, data reach δ at c = {reached:g}",
        fontsize=7.5,
    )
    axis.legend(fontsize=7)
    set_log_ticks(axis, c)

    axis = axes[0, 1]  # (b) E[#lost] vs n on a log scale: an exponential law is a line
    n, lost, lost_se = (np.asarray(data[key]) for key in ("n", "lost", "lost_se"))
    fitted = np.asarray(data["fitted"]).astype(bool)
    shown = lost > 0
    measured(axis, n[shown], lost[shown], lost_se[shown], "E[#lost] (±2 SE)", fmt="o", ms=4)
    rate = measurement.values["loss_rate"]
    if fitted.sum() >= 2:  # each line through the first fitted point, at its rate
        start, level = n[fitted][0], lost[fitted][0]
        span = np.linspace(start, n[shown][-1], 50)
        theory = prediction.figure_data
        for value, label, style in (
            (rate.value, f"fitted: {rate.value:.4f} ± {rate.error:.4f}", dict(color=MEASURED)),
            (prediction.values["loss_rate"], "slowest secant", dict(color=THEORY, ls="--")),
            (prediction.values["loss_rate_sharp"], "fastest secant", dict(color=THEORY, ls=":")),
            (theory["rate_exponent"], "Cramér exponent (n → ∞)", dict(color=THEORY, ls="-.")),
            (theory["rate_bound"], "β²/(8V) (wrong: the bound as the law)",
             dict(color=REFERENCE, ls="--")),
        ):  # fmt: skip
            axis.plot(span, level * np.exp(-value * (span - start)), lw=1, label=label, **style)
    axis.set(yscale="log", xlabel="n", ylabel="coordinates of S lost per prompt")
    axis.set_title("(b) E[#lost] (the union bound's sum) vs n", fontsize=7.5)
    axis.legend(fontsize=6.5)
    return figure


def figure_preprocessing_wins(params, prediction, measurement):
    """CZZ-4.3: (a) the paired ratio of tuned risks GD / pre-gd vs n, beside the bounds' ratio
    5.2 / 5.1 (constants 1); (b) §7.10: the largest s/(n²β²) over the drawn tasks against the
    two readings of §4.3's bound and the condition's 1/n."""
    figure, axes = new_figure(2, width=4.4, height=3.5)
    left, right = axes[0]
    data = WinsData.from_record(measurement.figure_data)
    theory = WinsTheory.from_record(prediction.figure_data)
    n = data.n
    ratio = measurement.values["gd_over_pregd"]
    measured(
        left, n, ratio.value, ratio.error, "tuned GD risk / tuned pre-gd risk, paired (±2 SE)", ms=4
    )
    left.plot(
        n,
        theory.bounds_ratio,
        "s--",
        ms=3,
        color=THEORY,
        label="bound 5.2 / bound 5.1 (constants 1, logs kept)",
    )
    left.axhline(1.0, color=REFERENCE, ls=":", lw=1, label="1: above, pre-gd wins")
    left.axhline(
        params.d / params.s, color=PALETTE[2], ls="--", lw=1, label=f"d/s = {params.d / params.s:g}"
    )
    left.set(xscale="log", yscale="log", xlabel="n (in-context examples)", ylabel="ratio")
    left.set_title(
        f"when preprocessing wins ({_caption(params)})\n"
        f"Tr(RΣR)/β² = {theory.trace_condition:.3g} vs Tr(Σ) = {theory.trace_sigma:.3g}",
        fontsize=7.5,
    )
    left.legend(fontsize=6.5)
    set_log_ticks(left, n)
    right.plot(n, data.margin_term_max, "o", ms=5, color=MEASURED, label="max over draws")
    right.plot(n, data.margin_term_median, "o", ms=3, mfc="none", color=MEASURED, label="median")
    right.plot(n, theory.margin_over_n2, color=THEORY, label="κ²s²/n² (the algebra's)")
    right.plot(n, theory.margin_over_n, color=PALETTE[1], ls="--", label="κ²s²/n (printed, §7.10)")
    right.plot(n, theory.margin_condition, color=REFERENCE, ls=":", label="1/n (the condition)")
    right.set(xscale="log", yscale="log", xlabel="n", ylabel="s / (n² β²)")
    worst = data.margin_ratio_max
    right.set_title(
        "§7.10: s/(n²β²) over the drawn tasks (β = min_S |r_i|; an identity, not judged)\n"
        f"max / (κ²s²/n²) per n: {', '.join(f'{v:.3g}' for v in worst)}",
        fontsize=7.5,
    )
    right.legend(fontsize=6.5)
    set_log_ticks(right, n)
    return figure


def figure_proof_lemmas(params, prediction, measurement):
    """CZZ-D4-7: each lemma's quantity against n, R_hat from the same labels and from an
    independent sample (mean ± 2 SE), D.4 and D.7 beside their bounds scaled to the first point
    (dashed), and the cross term's share E[cross]/E[excess] for both R_hat."""
    data = ProofTerms.from_record(measurement.figure_data)
    n = data.n
    figure, axes = new_figure(5, width=3.0, height=3.0)
    titles = {  # per TERMS
        "d4": "D.4: ‖R̂Σ̂R̂ − RΣR‖₂",
        "d5": "D.5: bias · ηtβ² (bounded)",
        "d6": "D.6: var / (ηt log t ‖R̂Xᵀε/n‖²)",
        "d7": "D.7: ‖R̂Xᵀε/n‖² (dashed: exact, indep. R̂)",
        "cross": "E[cross] / E[excess]",
    }
    for axis, (key, title) in zip(axes[0], titles.items(), strict=True):
        for k, source in enumerate(SOURCES):
            mean, se = data.at(key, source)
            axis.errorbar(n, mean, 2 * se, marker="os"[k], ms=3.5, capsize=1.5,
                          color=PALETTE[k], label=f"R̂ from the {source} labels"
                          if source == "same" else "R̂ from an independent sample")  # fmt: skip
            if key == "d4":
                bound = np.asarray(prediction.values[f"{key}_{source}"])
                axis.plot(n, bound * mean[0] / bound[0], color=PALETTE[k], ls="--", lw=1)
        if key == "d7":  # the exact expectation with an independent R_hat, unscaled
            axis.plot(n, prediction.values["d7_same"], color=THEORY, ls="--", lw=1)
        if key == "cross":
            axis.axhline(0.0, color=REFERENCE, lw=1)
            axis.set_xscale("log")
        else:
            axis.set(xscale="log", yscale="log")
        set_log_ticks(axis, [float(v) for v in n[::2]])
        axis.set(xlabel="sample size n", title=title)
    axes[0, 0].legend(fontsize=6, loc="lower left")
    figure.suptitle(f"Theorem 5.1's proof on CZZ-T5.1's prompts ({_caption(params)}); "
                    "dashed: D.4's bound scaled to the first point, D.7's exact value",
                    fontsize=8)  # fmt: skip
    return figure
