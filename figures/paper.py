"""Paper figures of He et al. (2025) that no single claim figure draws as the paper lays them out.

Each function draws stored numbers only (the `figure_data` of the claims' records), as listed in
`validation.paper_figures`: a one-claim figure takes ``(params, prediction, measurement)``, a
several-claim figure a mapping claim id -> (params, prediction, measurement).

- `figure_1` (HE-OBS1, HE-OBS4): the trained two-head member's circuits, the same circuits at
  early logged steps, and omega_h(t), mu_h(t) over those steps (sign matching, zero sum);
- `figure_3` (HE-OBS1): the circuits of the H = 1 and H = 4 members;
- `figure_4` (HE-OBS3): test MSE against L' of the trained H (left) and of the fixed kernel
  predictors and GD baselines (right);
- `figure_5` (HE-OBS4): the two-head member's circuits at logged steps and omega_h(t), mu_h(t);
- `figure_22` (HE-B-PHASE3): the two-head ODE (B.4) in four panels.
"""

from __future__ import annotations

import numpy as np
from icl_verify.figures.circuits import circuit_heatmaps
from icl_verify.figures.data.obs_length import Obs3Data, Obs3Theory
from icl_verify.figures.style import (
    MEASURED,
    PALETTE,
    REFERENCE,
    THEORY,
    new_figure,
    new_subfigures,
    setting_text,
    training_text,
)

from icl_verify.heads import DUMMY, NEGATIVE, head_scales, head_types

#: The reference lines of the authors' Figure 5 (plots.ipynb: omega = 0.13, mu = 3.45, drawn as
#: +-0.13 and +-3.5), their trained two-head values at d = 5, L = 40, sigma2 = 0.1 (§HE-OBS2).
PAPER_GUIDES = {"setting": (5, 40, 0.1), "omega": 0.13, "mu": 3.45}
_HEAD_MARK = {DUMMY: "dummy", NEGATIVE: "−"}


def _a(value) -> np.ndarray:
    return np.asarray(value, dtype=float)


def _shown(data, heads: int) -> int | None:
    """The index among the shown members of the one with ``heads`` heads (None if none)."""
    found = np.flatnonzero(_a(data["shown_heads"]) == heads)
    return int(found[0]) if found.size else None


def _types(KQ, OV, heads: int) -> str:
    """ "+, −, dummy, +": the type of each head from its circuits (`icl_verify.heads`)."""
    omega, mu = head_scales(KQ[:heads], OV[:heads], KQ.shape[-1] - 1)
    types = head_types(omega, mu)
    return ", ".join(_HEAD_MARK.get(t, "+") for t in types)


def figure_1(records):
    """Figure 1: the two-head member's circuits at the end and at early steps; its early
    omega_h(t), mu_h(t) with the sums omega_1 + omega_2, mu_1 + mu_2."""
    params, _, measurement = records["HE-OBS1"]
    data = measurement.figure_data
    member = _shown(data, 2)
    dynamics = records["HE-OBS4"].measurement.figure_data
    history = _shown(dynamics, 2)
    if member is None or history is None:
        raise KeyError("a shown two-head member (show_heads must include 2)")
    early = _a(data["early_steps"])
    KQ = np.concatenate([_a(data["KQ"])[None, member], _a(data["early_KQ"])[:, member]])
    OV = np.concatenate([_a(data["OV"])[None, member], _a(data["early_OV"])[:, member]])
    labels = [f"(a) step {int(data['steps'])}\n(end)"] + [f"(b) step {int(s)}" for s in early]
    rows = len(labels)
    figure, (top, bottom) = new_subfigures(
        6.4, 1.55 * rows + 2.8, nrows=2, height_ratios=(1.55 * rows, 2.8)
    )
    circuit_heatmaps(
        KQ,
        OV,
        [2] * rows,
        labels,
        f"(a) trained two-head member {int(data['shown_members'][member])} (lowest validation "
        f"loss), (b) its circuits early\n{setting_text(params)}; {training_text(params)}",
        container=top,
    )
    steps = _a(dynamics["steps"])
    later = steps > 0  # log time axis
    omega = _a(dynamics["omega"])[later, history, :2]  # (n, 2)
    mu = _a(dynamics["mu"])[later, history, :2]
    axes = bottom.subplots(1, 2)
    for axis, values, name in ((axes[0], omega, "ω"), (axes[1], mu, "μ")):
        for h in range(2):
            axis.plot(steps[later], values[:, h], color=PALETTE[2 * h], label=f"{name}_{h + 1}")
        axis.plot(steps[later], values.sum(axis=1), color="black", ls="--",
                  label=f"{name}_1 + {name}_2")  # fmt: skip
        axis.axhline(0.0, color=REFERENCE, lw=0.6)
        for step in early:
            axis.axvline(step, color=REFERENCE, ls=":", lw=0.8)
        axis.set(xscale="log", xlabel="Adam step (dotted: rows (b))", ylabel=f"{name}_h(t)")
        axis.legend(fontsize=7)
    axes[0].set_title("(c) KQ scales: opposite signs early", fontsize=8)
    axes[1].set_title("(c) OV weights and their sum (paper: sum → 0)", fontsize=8)
    return figure


def figure_3(params, prediction, measurement):
    """Figure 3: the circuits of the H = 1 and H = 4 members (head types in the labels)."""
    data = measurement.figure_data
    chosen = [m for m in (_shown(data, 1), _shown(data, 4)) if m is not None]
    if not chosen:
        raise KeyError("a shown member with 1 or 4 heads (show_heads must include 1 or 4)")
    KQ, OV = _a(data["KQ"])[chosen], _a(data["OV"])[chosen]
    heads = _a(data["shown_heads"])[chosen].astype(int)
    labels = [
        f"H={h} (member {int(data['shown_members'][m])})\n{_types(KQ[k], OV[k], h)}"
        for k, (m, h) in enumerate(zip(chosen, heads, strict=True))
    ]
    return circuit_heatmaps(
        KQ,
        OV,
        heads,
        labels,
        f"Trained circuits for H = 1 and H = 4 (lowest validation loss per H)\n"
        f"{setting_text(params)}; {training_text(params)}",
    )


def _mse(axis, lengths, mean, se, label: str, colour, marker: str) -> None:
    axis.errorbar(lengths, mean, 2 * _a(se), label=label, color=colour, marker=marker, ms=3.5,
                  lw=0.8, capsize=1.5)  # fmt: skip


def figure_4(params, prediction, measurement):
    """Figure 4: test MSE vs L' of the trained members per H (left) and of the fixed ± pair, the
    single-head kernel, GD, dGD and ridge (right); Monte Carlo with 2 SE bars, exact risks as
    lines. The true MSE (the authors' left panel adds 0.1, reference §0.5)."""
    data = Obs3Data.from_record(measurement.figure_data, params.compare_heads, params.heads)
    curves = Obs3Theory.from_record(prediction.figure_data)
    lengths = data.lengths
    figure, axes = new_figure(2, width=4.8, height=4.0)
    left, right = axes[0]
    colours = (*PALETTE, "#6a4c93", "#3d3d3d")
    for k, h in enumerate(sorted(data.heads)):
        _mse(left, lengths, *data.model(h), f"trained H={h}", colours[k % len(colours)],
             "os^Dv"[k % 5])  # fmt: skip
    left.plot(lengths, curves.dgd, color=THEORY, lw=1, label="dGD η* (exact)")
    left.set_title(f"trained models ({training_text(params)})", fontsize=8)
    two = f"2-head TF (ω, μ) = (±{params.pair_omega:g}, ±{params.pair_mu:g})"
    fixed = data.fixed
    _mse(right, lengths, fixed.pair_mean, fixed.pair_se, two, MEASURED, "o")
    _mse(right, lengths, fixed.single_mean, fixed.single_se,
         "1-head kernel (1/√d, μ*(L'))", PALETTE[1], "s")  # fmt: skip
    for exact, name, style in ((curves.gd, "GD", "--"), (curves.dgd, "dGD", "-")):
        right.plot(lengths, exact, style, color=THEORY, lw=1, label=f"{name} η* (exact)")
        right.plot(lengths, data.baseline(name)[0], "x", color=THEORY, ms=4,
                   label=f"{name} η* (Monte Carlo)")  # fmt: skip
    _mse(right, lengths, *data.baseline("Bayes"), "ridge λ = σ²d (Bayes)", PALETTE[2],
         "^")  # fmt: skip
    right.set_title("fixed predictors (η*: optimal at the training L)", fontsize=8)
    for axis in (left, right):
        axis.axvline(params.L, color=REFERENCE, ls=":", lw=1)
        axis.set(xlabel="test prompt length L' (dotted: training L)", ylabel="test MSE")
        axis.legend(fontsize=6.5)
    figure.suptitle(
        f"Test MSE vs L' ({setting_text(params)}; {params.n_prompts} shared prompts, bars 2 SE; "
        "true MSE, no +0.1 offset)",
        fontsize=9,
    )
    return figure


def figure_5(params, prediction, measurement):
    """Figure 5: the two-head member's circuits at logged steps, and its omega_h(t), mu_h(t)
    with the paper's +-0.13 / +-3.45 lines and the manifold guide +-mu*(omega(t))."""
    data, guide = measurement.figure_data, prediction.figure_data
    member = _shown(data, 2)
    if member is None:
        raise KeyError("a shown two-head member (show_heads must include 2)")
    snapshots = _a(data["snapshot_steps"])
    rows = snapshots.size
    figure, (left, right) = new_subfigures(
        10.5, max(1.45 * rows, 5.0), ncols=2, width_ratios=(5.6, 4.9)
    )
    circuit_heatmaps(
        _a(data["snapshot_KQ"])[:, member],
        _a(data["snapshot_OV"])[:, member],
        [2] * rows,
        [f"step {int(s)}" for s in snapshots],
        f"(a) circuits of the two-head member at logged steps\n{setting_text(params)}; "
        f"{training_text(params)}",
        container=left,
    )
    steps = _a(data["steps"])
    later = steps > 0  # log time axis
    omega = _a(data["omega"])[later, member, :2]  # (n, 2)
    mu = _a(data["mu"])[later, member, :2]
    scale = np.abs(omega).mean(axis=1)
    mu_star = np.interp(scale, _a(guide["omega_fine"]), _a(guide["mu_star_fine"]))
    paper = (params.d, params.L, params.sigma2) == PAPER_GUIDES["setting"]
    omega_axis, mu_axis = right.subplots(2, 1, sharex=True)
    for axis, values, name in ((omega_axis, omega, "omega"), (mu_axis, mu, "mu")):
        for h in range(2):
            axis.plot(steps[later], values[:, h], color=PALETTE[2 * h], label=f"head {h + 1}")
        for sign in (1, -1):
            if paper:
                axis.axhline(sign * PAPER_GUIDES[name], color=REFERENCE, ls=":", lw=1,
                             label="paper's ±0.13 / ±3.45" if sign > 0 else None)  # fmt: skip
            if name == "mu":
                axis.plot(steps[later], sign * mu_star, color=THEORY, ls="--", lw=1,
                          label="±μ*(mean |ω_h(t)|) (4.6)" if sign > 0 else None)  # fmt: skip
        for step in snapshots[snapshots > 0]:
            axis.axvline(step, color=REFERENCE, lw=0.5, alpha=0.5)
        axis.legend(fontsize=7)
        axis.set_xscale("log")
    omega_axis.set(ylabel="ω_h(t)", title="(b) KQ scales (grey: the steps of (a))")
    mu_axis.set(ylabel="μ_h(t)", xlabel="Adam step", title="(c) OV weights")
    bound = 1.5 * max(np.abs(mu).max(), PAPER_GUIDES["mu"] if paper else 0.0)
    mu_axis.set_ylim(-bound, bound)  # μ*(ω) diverges as ω -> 0 at the start
    return figure


def figure_22(params, prediction, measurement):
    """Figure 22: the two-head ODE (B.4) from Def. B.1: (a) omega, mu; (b) the early phase;
    (c) the loss and mu/omega; (d) omega mu against omega mu*(omega)."""
    data, theory = measurement.figure_data, prediction.figure_data
    t, omega, mu = _a(data["t"]), _a(data["omega"]), _a(data["mu"])
    t1, peak = float(data["T1"]), float(data["t_peak"])
    figure, axes = new_figure(2, 2, width=4.6, height=3.4)
    (paths, early), (loss, product) = axes
    paths.plot(t, omega, color=THEORY, label="ω (B.4)")
    paths.plot(t, mu, color=THEORY, ls="--", label="μ (B.4)")
    paths.plot(_a(theory["t"]), _a(theory["late_omega"]), color=MEASURED, ls=":", lw=2,
               label=r"late law $(8\kappa d^2 t)^{-1/6}$")  # fmt: skip
    paths.set(xscale="log", yscale="log", xlabel="flow time t",
              title=f"(a) full run, ε={params.eps:g}, {setting_text(params)}")  # fmt: skip
    window = t <= 1.5 * peak
    early.plot(t[window], omega[window], color=THEORY, label="ω")
    early.plot(t[window], mu[window], color=PALETTE[1], ls="--", label="μ")
    early.plot(t[window], params.eps * np.exp(2 * t[window]), color=REFERENCE, ls=":",
               label=r"$\varepsilon e^{2t}$ (B.5)")  # fmt: skip
    early.set(yscale="log", ylim=(params.eps / 2, 2 * max(omega.max(), mu[window].max())),
              xlabel="flow time t", title="(b) early phase: ω ≈ μ until T1")  # fmt: skip
    loss.plot(t, _a(data["loss"]), color=THEORY, label="L̃ (B.4)")
    loss.axhline(theory["loss_floor"], color=REFERENCE, ls=":", label="σ² + κ/(1+κ)")
    ratio = loss.twinx()
    ratio.plot(t, mu / omega, color=PALETTE[3], label="μ/ω (right axis)")
    ratio.set(yscale="log", ylabel="μ/ω")
    ratio.spines["right"].set_visible(True)
    loss.set(xscale="log", xlabel="flow time t", ylabel="L̃", title="(c) loss and μ/ω")
    handles = [h for axis in (loss, ratio) for h in axis.get_legend_handles_labels()[0]]
    loss.legend(handles, [h.get_label() for h in handles], fontsize=7, loc="center left")
    mu_star = np.exp(np.interp(np.log(omega), np.log(_a(theory["omega_fine"])),
                               np.log(_a(theory["mu_star_fine"]))))  # fmt: skip
    product.plot(t, omega * mu, color=THEORY, label="ωμ (B.4)")
    product.plot(t, omega * mu_star, color=MEASURED, ls="--", label="ω μ*(ω) (B.17)")
    product.axhline(prediction.values["product_end"] / 2, color=REFERENCE, ls=":",
                    label="1/(2(1+κ))")  # fmt: skip
    product.set(xscale="log", xlabel="flow time t", title="(d) ωμ and the valley floor ω μ*(ω)")
    for axis in (paths, early, loss, product):
        for time, style in ((t1, ":"), (peak, "--")):
            axis.axvline(time, color=REFERENCE, ls=style, lw=0.8)
        if axis is not loss:
            axis.legend(fontsize=7)
    figure.suptitle("Two-head gradient flow (B.4) from Def. B.1 (dotted: T1, dashed: t_peak)",
                    fontsize=9)  # fmt: skip
    return figure
