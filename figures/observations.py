"""Figures of the trained-model claims HE-OBS1..4 (He et al. 2025 §3, Figures 1, 3, 4, 5, 13).

Each function draws one claim's stored prediction and measurement (`figure_data` of both):

- `figure_obs1`: the circuits of one trained member per H (`figures.circuits`);
- `figure_obs2`: the fraction of runs reaching opposite heads per H, and the paired members'
  OV group sums on the manifold mu*(omega) (4.6); `table_obs2` the same numbers as tables,
  beside the paper's Table 1;
- `figure_obs3`: test MSE against the test length L' (`figures.length_generalisation`);
- `figure_obs4`: omega_h(t) and mu_h(t) of one member per H with the manifold guides.
"""

from __future__ import annotations

import numpy as np
from icl_verify.figures.circuits import circuit_heatmaps
from icl_verify.figures.data.obs_length import Obs3Data, Obs3Theory
from icl_verify.figures.length_generalisation import (
    COLOURS,
    MARKERS,
    length_generalisation_figure,
)
from icl_verify.figures.style import MEASURED, PALETTE, REFERENCE, THEORY, new_figure
from matplotlib.ticker import NullFormatter

from icl_verify.heads import DUMMY, head_types


def figure_obs1(params, prediction, measurement):
    """KQ and OV circuits of the member with the lowest validation loss per shown H."""
    data = measurement.figure_data
    heads = data["shown_heads"].astype(int)
    labels = [f"H={h} (member {int(m)})" for h, m in zip(heads, data["shown_members"], strict=True)]
    trapped = int(np.sum(data["excluded_trapped"]))
    title = (
        f"Trained circuits after {int(data['steps'])} Adam steps (lowest validation loss per H); "
        f"{trapped} trapped member(s) not read, see HE-OBS2"
    )
    return circuit_heatmaps(data["KQ"], data["OV"], heads, labels, title)


def figure_obs2(params, prediction, measurement):
    """(a) paired fraction per H with binomial SE; (b) group sums on the mu*(omega) curve."""
    data = measurement.figure_data
    figure, axes = new_figure(2, width=4.4)
    fraction_axis, manifold_axis = axes[0]
    heads = data["multi_heads"]
    fraction = data["paired_counts"] / data["counts"]
    positions = np.arange(heads.size)
    fraction_axis.errorbar(
        positions,
        fraction,
        data["binomial_se"],
        ls="none",
        marker="o",
        color=MEASURED,
        capsize=3,
        label="measured (± binomial SE)",
    )
    fraction_axis.axhline(1.0, color=THEORY, label="claim: every run")
    for x, (p, n) in enumerate(zip(data["paired_counts"], data["counts"], strict=True)):
        fraction_axis.annotate(
            f"{int(p)}/{int(n)}",
            (x, fraction[x]),
            textcoords="offset points",
            xytext=(6, -10),
            fontsize=7,
        )
    fraction_axis.set_xticks(positions, [f"H={int(h)}" for h in heads])
    fraction_axis.set(
        ylim=(-0.05, 1.15),
        ylabel="fraction of runs with opposite heads",
        title=f"(a) runs with a ± pair after {int(data['steps'])} steps",
    )
    fraction_axis.legend(loc="lower left")

    omega_fine = prediction.figure_data["omega_fine"]
    mu_star_fine = prediction.figure_data["mu_star_fine"]
    manifold_axis.plot(omega_fine, mu_star_fine, color=THEORY, label=r"$\mu^*(\omega)$ (4.6)")
    for k, H in enumerate(np.unique(data["paired_heads"])):
        at = data["paired_heads"] == H
        color = PALETTE[k % len(PALETTE)]
        manifold_axis.errorbar(
            data["omega"][at],
            data["sum_plus"][at],
            data["sum_plus_error"][at],
            ls="none",
            marker="o",
            color=color,
            ms=4,
            label=rf"H={int(H)}: $\Sigma_+\mu$",
        )
        manifold_axis.errorbar(
            data["omega"][at],
            -data["sum_minus"][at],
            data["sum_minus_error"][at],
            ls="none",
            marker="x",
            color=color,
            ms=5,
            label=rf"H={int(H)}: $-\Sigma_-\mu$",
        )
    if data["omega"].size:
        low, high = data["omega"].min(), data["omega"].max()
        manifold_axis.set_xlim(0.7 * low, 1.4 * high)
        manifold_axis.set_ylim(
            0.6 * np.interp(1.4 * high, omega_fine, mu_star_fine),
            1.5 * np.interp(0.7 * low, omega_fine, mu_star_fine),
        )
    manifold_axis.set(
        xlabel=r"common KQ scale $\omega$ = mean $|\omega_h|$ (non-dummy)",
        ylabel="OV group sum",
        title="(b) HE-MAN (ii): paired members' group sums",
    )
    manifold_axis.legend(fontsize=6.5, ncols=2, loc="upper right")
    return figure


def table_obs2(measurement, mu_star, paper, eta_star) -> str:
    """The tables of HE-OBS2: runs per H with opposite and with same-sign heads, and every
    paired member's common KQ scale and OV group sums beside mu*(omega) (4.6) and the paper's
    Table 1 softmax column.

    ``mu_star``: mu*(omega) at each paired member's omega, then at the paper's; ``paper``:
    Table 1's softmax (omega, mu, 2 omega mu); ``eta_star``: 1/(1+kappa). The claim hands them
    in (figures compute no theory).
    """
    data = measurement.figure_data
    rows = [
        f"Runs per H after {int(data['steps']):,} steps: *opposite heads* pair a positive with a "
        "negative head (the pattern (4.7)); *same-sign* runs are trapped, all non-dummy heads "
        "of one sign acting as one head.",
        "",
        "| H | runs | opposite heads | same-sign | fraction with opposite heads (± SE) |",
        "|---|---|---|---|---|",
    ]
    for H, n, paired, se in zip(data["multi_heads"], data["counts"], data["paired_counts"],
                                data["binomial_se"], strict=True):  # fmt: skip
        rows.append(f"| {int(H)} | {int(n)} | {int(paired)} | {int(n - paired)} | "
                    f"{paired / n:.2f} ± {se:.2f} |")  # fmt: skip
    rows += [
        "",
        "Paired members: common KQ scale ω (mean |ω_h| over non-dummy heads) and OV group sums "
        "Σ₊μ, −Σ₋μ (± the end value's drift and Adam noise), beside μ*(ω) of (4.6) at the same "
        "ω; for H = 2 the group sums are the heads' μ, the quantity of the paper's Table 1.",
        "",
        "| paired member | H | dummy heads | ω | Σ₊μ | −Σ₋μ | μ*(ω) (4.6) | 2ωΣ₊μ | −2ωΣ₋μ |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for k, H in enumerate(data["paired_heads"]):
        omega, plus, minus = data["omega"][k], data["sum_plus"][k], -data["sum_minus"][k]
        rows.append(
            f"| {k + 1} | {int(H)} | {int(data['dummy_heads'][k])} | "
            f"{omega:.4f} ± {data['omega_error'][k]:.4f} | "
            f"{plus:.3f} ± {data['sum_plus_error'][k]:.3f} | "
            f"{minus:.3f} ± {data['sum_minus_error'][k]:.3f} | {mu_star[k]:.3f} | "
            f"{2 * omega * plus:.4f} | {2 * omega * minus:.4f} |"
        )
    omega, mu, eta = paper
    rows += [
        f"| paper, Table 1 (softmax) | 2 | | {omega:.4f} | {mu:.4f} | {mu:.4f} | "
        f"{mu_star[-1]:.3f} | {eta:.4f} | {eta:.4f} |",
        "",
        f"Optimal debiased step 1/(1+κ) = {eta_star:.4f} (the limit of 2ωμ*(ω) as ω → 0).",
    ]
    return "\n".join(rows)


def figure_obs3(params, prediction, measurement):
    """Test MSE of the trained members and the baselines against L', beside the exact risks."""
    data = Obs3Data.from_record(measurement.figure_data, params.compare_heads, params.heads)
    curves = Obs3Theory.from_record(prediction.figure_data)
    theory = {
        "dGD η*": curves.dgd,
        "GD η*": curves.gd,
        "1 head, L̃ at its optimum": curves.single,
    }
    measured = {}
    for h in params.compare_heads:
        measured[f"trained H={h}"] = tuple(data.model(h))
    two = [h for h in params.compare_heads if h >= 2][0]
    eta_two = data.eta_eff[list(params.compare_heads).index(two)]
    measured[f"dGD at η_eff={eta_two:.3f} of H={two} (MC)"] = tuple(data.dgd_at_eta_eff(two))
    measured["dGD η* (MC)"] = tuple(data.baseline("dGD"))
    measured["Bayes: ridge λ=σ²d (MC)"] = tuple(data.baseline("Bayes"))
    figure = length_generalisation_figure(
        data.lengths,
        theory,
        measured,
        params.L,
        "dGD η*",
        title=f"Test MSE vs L' (trained at L={params.L}; {params.n_prompts} shared prompts)",
        extra_panels=1,
    )
    _bayes_panel(figure.axes[2], params, curves, data)
    return figure


def _bayes_panel(axis, params, curves: Obs3Theory, data: Obs3Data) -> None:
    """Figure 4, third panel: MSE / Bayes risk per H >= 2 (paired Monte Carlo) against L',
    with Theorem 4.2(iii)'s sharp bound at xi = d/L' and the fitted slopes per H."""
    lengths = data.lengths
    multi = [h for h in params.compare_heads if h >= 2]
    for k, h in enumerate(multi):
        shown = list(params.compare_heads).index(h)  # the colour and marker of the left panels
        axis.errorbar(lengths, data.bayes_ratio_mean[k], 2 * data.bayes_ratio_se[k],
                      ls="none", marker=MARKERS[shown % len(MARKERS)], ms=3.5, capsize=1.5,
                      elinewidth=0.8, color=COLOURS[shown % len(COLOURS)],
                      label=f"trained H={h}")  # fmt: skip
    axis.plot(lengths, curves.bayes_sharp, color=THEORY, lw=1.2,
              label="Thm 4.2(iii) sharp bound, ξ = d/L' (GD tuned at L')")  # fmt: skip
    axis.axvline(params.L, color=REFERENCE, ls=":", lw=1)
    slopes = "\n".join(
        f"H={h}: {value:+.3f} ± {se:.3f}"
        for h, (value, se) in zip(params.compare_heads, data.slopes, strict=True)
    )
    box = dict(fc="white", ec=REFERENCE, lw=0.5)
    axis.text(0.97, 0.74, f"slope of log(MSE − σ²) vs log L'\n{slopes}",
              transform=axis.transAxes, ha="right", va="top", fontsize=7, bbox=box)  # fmt: skip
    uniform = curves.bayes_uniform
    axis.set(xlabel="test prompt length L'", ylabel="MSE / Bayes risk (paired MC)",
             title=f"to Bayes (uniform factor 1 + 1/σ² = {uniform:.3g}, off scale)")  # fmt: skip
    axis.legend(loc="upper right", fontsize=7)


def _formation_panels(early_axis, spread_axis, data, spread) -> None:
    """Observation 4's "early" and "same across seeds": per paired member the step its pattern
    formed against the step its mean |omega_h| peaked (on or below the diagonal: early), and per
    H the spread across seeds over the valley's drift-plus-noise allowance (at most 1)."""
    formed, peak, member_heads = data["formed_at"], data["peak_at"], data["paired_heads"]
    for k, H in enumerate(np.unique(member_heads).astype(int)):
        at = member_heads == H
        early_axis.scatter(peak[at], formed[at], s=18, color=PALETTE[k % len(PALETTE)],
                           label=f"H = {H}", zorder=3)  # fmt: skip
    low, high = 0.5 * min(formed.min(), peak.min()), 2 * max(formed.max(), peak.max())
    early_axis.plot([low, high], [low, high], color=THEORY, ls="--", lw=1,
                    label="formed = peak (above: late)")  # fmt: skip
    early_axis.set(xscale="log", yscale="log", xlabel="step of the peak of mean |ω_h|",
                   ylabel="step the pattern formed",
                   title="early: formed by the |ω| peak")  # fmt: skip
    for axis in (early_axis.xaxis, early_axis.yaxis):  # less than a decade: no minor labels
        axis.set_minor_formatter(NullFormatter())  # (they overlapped: 2x10^3 3x10^3 ...)
    first = data["steps"][data["steps"] > 0].min()
    early_axis.axhline(first, color=REFERENCE, ls=":", lw=1)
    early_axis.text(high, first, "first log: formed by then", ha="right", va="bottom",
                    fontsize=6, color=REFERENCE)  # fmt: skip
    early_axis.legend(fontsize=6, loc="upper left")
    spread_heads = data["spread_heads"].astype(int)
    if spread_heads.size == 0:
        spread_axis.text(0.5, 0.5, "no H with two paired members", ha="center",
                         transform=spread_axis.transAxes)  # fmt: skip
        spread_axis.set(title="same across seeds", xticks=[], yticks=[])
        return
    ratio = np.asarray(spread, dtype=float).reshape(-1, 3)  # (H, quantity)
    x = np.arange(len(spread_heads))
    names = ("mean |ω_h|", "Σ₊μ", "−Σ₋μ")
    for q, name in enumerate(names):
        spread_axis.bar(x + (q - 1) * 0.27, ratio[:, q], 0.27, color=PALETTE[q], label=name)
    spread_axis.axhline(1.0, color=THEORY, ls="--", lw=1, label="allowance (drift + noise)")
    spread_axis.set_xticks(x, [f"H = {H}" for H in spread_heads])
    spread_axis.set(ylabel="spread across seeds / allowance", title="same across seeds",
                    ylim=(0, max(1.6, 1.1 * ratio.max(initial=0))))  # fmt: skip
    spread_axis.legend(fontsize=6, loc="upper left")


def figure_obs4(params, prediction, measurement):
    """omega_h(t), mu_h(t) of one member per H with the +-omega(T) and +-mu*(omega) guides."""
    data, guide = measurement.figure_data, prediction.figure_data
    heads = data["shown_heads"].astype(int)
    figure, axes = new_figure(len(heads) + 1, 2, width=3.2, height=2.6)
    _formation_panels(axes[0, -1], axes[1, -1], data, measurement.values["seed_spread"].value)
    steps = data["steps"]
    for k, H in enumerate(heads):
        omega, mu = data["omega"][:, k, :H], data["mu"][:, k, :H]
        omega_axis, mu_axis = axes[0, k], axes[1, k]
        for h in range(H):
            color = PALETTE[h % len(PALETTE)] if h < len(PALETTE) else MEASURED
            omega_axis.plot(steps, omega[:, h], color=color, lw=1, label=f"head {h + 1}")
            mu_axis.plot(steps, mu[:, h], color=color, lw=1)
        if H == 1:
            levels = (guide["single_omega"], guide["single_mu"])
            label = r"one-head optimum of $\tilde L$: $\omega=1/\sqrt{d}$, $\mu$"
            for axis, level in zip((omega_axis, mu_axis), levels, strict=True):
                axis.axhline(
                    np.sign(omega[-1, 0]) * level, color=THEORY, ls="--", lw=1, label=label
                )
        else:
            live = head_types(omega[-1], mu[-1]) != DUMMY
            scale = np.abs(omega[:, live]).mean(axis=1)  # (n,)
            mu_star = np.interp(scale, guide["omega_fine"], guide["mu_star_fine"])
            for sign in (1, -1):
                omega_axis.axhline(
                    sign * scale[-1],
                    color=REFERENCE,
                    ls=":",
                    lw=1,
                    label=r"$\pm\omega(T)$" if sign > 0 else None,
                )
                mu_axis.plot(
                    steps,
                    sign * mu_star,
                    color=THEORY,
                    ls="--",
                    lw=1,
                    label=r"$\pm\mu^*(\bar\omega(t))$: group-sum guide" if sign > 0 else None,
                )
            positive = live & (omega[-1] > 0)
            negative = live & (omega[-1] < 0)
            mu_axis.plot(
                steps,
                mu[:, positive].sum(axis=1),
                color="black",
                lw=1.3,
                label=r"$\Sigma_+\mu$, $\Sigma_-\mu$",
            )
            mu_axis.plot(steps, mu[:, negative].sum(axis=1), color="black", lw=1.3)
        omega_axis.set(xscale="log", title=f"H = {H}", ylabel=r"$\omega_h(t)$")
        mu_axis.set(xscale="log", xlabel="Adam step", ylabel=r"$\mu_h(t)$")
        omega_axis.legend(fontsize=6, loc="best")
        mu_axis.legend(fontsize=6, loc="best")
        if H > 1:
            bound = 2.5 * np.abs(mu[-1, live]).sum()
            mu_axis.set_ylim(-bound, bound)
    return figure


def figure_robustness(params, prediction, measurement):
    """HE-ROBUST's validity map: one cell per grid point (rows: optimisers; columns: batch size
    and learning rate), coloured by the largest relative distance of a paired member's group
    sums 2ω|Σ±μ| from 1/(1+κ), annotated with the paired count (the rest trapped), the mean
    2ωΣ₊μ, and the largest inhomogeneity and zero-sum ratio."""
    data = measurement.figure_data
    target = float(prediction.values["manifold_eta"])
    grid = params.grid()
    optimizers = list(dict.fromkeys(name for name, _, _ in grid))
    columns = len(grid) // len(optimizers)
    point = np.asarray(data["point"]).astype(int)
    eta = np.stack([data["eta_plus_value"], data["eta_minus_value"]])  # (2, paired members)
    distance = np.full((len(optimizers), columns), np.nan)
    figure, axes = new_figure(1, width=1.9 * columns + 2.0, height=1.1 * len(optimizers) + 1.4)
    axis = axes[0, 0]
    for k in range(len(grid)):
        row, column = divmod(k, columns)
        mine = point == k
        paired, members = int(data["paired"][k]), int(data["members"][k])
        text = f"lr {grid[k][2]:.3g}\npaired {paired}/{members}"
        if mine.any():
            distance[row, column] = np.abs(eta[:, mine] / target - 1).max()
            text += (f"\n2ωΣ₊μ {np.mean(data['eta_plus_value'][mine]):.3f}"
                     f"\nhomog ≤ {np.max(data['homogeneity_value'][mine]):.3f}"
                     f"\nzero-sum ≤ {np.max(data['zero_sum_value'][mine]):.3f}"
                     f"\n|ω| ≤ {np.max(data['omega_value'][mine]):.2f}")  # fmt: skip
        dark = np.nan_to_num(distance[row, column]) > 0.06
        axis.text(column, row, text, ha="center", va="center", fontsize=6.5,
                  color="white" if dark else "black")  # fmt: skip
    image = axis.imshow(distance, cmap="Blues", vmin=0, vmax=0.1, aspect="auto")
    axis.grid(False)
    factors = [f"{f:g}" for f in params.lr_factors]
    labels = [f"batch {batch}\nlr × {factors[k % len(factors)]}"
              for k, (_, batch, _) in enumerate(grid[:columns])]  # fmt: skip
    axis.set_xticks(range(columns), labels, fontsize=7)
    axis.set_yticks(range(len(optimizers)), optimizers)
    axis.set_title(f"Observation 2's pattern per setting\ntarget 2ωΣ₊μ = 1/(1+κ) = {target:.3f}; "
                   f"{params.members} two-head members, {params.steps} steps",
                   fontsize=8)  # fmt: skip
    figure.colorbar(image, ax=axis, label="max |2ω|Σ±μ| (1+κ) − 1|", shrink=0.8)
    return figure
