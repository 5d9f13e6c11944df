"""Figures of HE-A-HEADS (He et al. 2025, App. A.1, Figures 13 and 14).

- `figure_13`: omega_h(t) and mu_h(t) of one trained member per H (lowest validation loss), with
  the reference H's settled scale and the group-sum guides mu*(omega), and a panel of the per-H
  means compared (relative to the reference H) with their error bars and the allowed band;
- `figure_14`: the four-head member with a dummy head: its KQ (and OV last row) at selected
  logged steps (`figures.circuits.circuit_heatmaps`) beside omega_h(t), mu_h(t) and
  ||KQ_h||_F(t), the dummy heads dashed.
"""

from __future__ import annotations

import numpy as np
from icl_verify.figures.circuits import circuit_heatmaps
from icl_verify.figures.style import (
    MEASURED,
    PALETTE,
    REFERENCE,
    THEORY,
    new_figure,
    new_subfigures,
)

from icl_verify.heads import DUMMY, head_types

_MARKERS = ("o", "s", "^", "D")


def _colour(h: int) -> str:
    return PALETTE[h % len(PALETTE)]


def _style(h: int, dummy: bool) -> dict:
    """Line style of head h: one colour per head, the marker cycle beyond the palette (so that
    eight heads stay apart), dashed when the head is a dummy at the end."""
    return dict(
        color=_colour(h),
        lw=0.9,
        ls="--" if dummy else "-",
        marker=_MARKERS[(h // len(PALETTE)) % len(_MARKERS)] if h >= len(PALETTE) else None,
        markevery=0.12,
        ms=3,
    )


def figure_13(params, prediction, measurement):
    """omega_h(t), mu_h(t) per H with the reference limits, and the per-H comparison."""
    data, guide = measurement.figure_data, prediction.figure_data
    heads = data["shown_heads"].astype(int)
    compared = data["compared"].astype(int)
    figure, axes = new_figure(len(heads) + 1, 2, width=3.0, height=2.6)
    steps = data["steps"]
    reference_omega = data["omega_mean"][0]
    reference_sum = np.interp(reference_omega, guide["omega_fine"], guide["mu_star_fine"])
    reference = (compared[0], reference_omega, reference_sum)
    for k, H in enumerate(heads):
        omega, mu = data["omega"][:, k, :H], data["mu"][:, k, :H]  # (n, H) each
        _trajectory_panels(axes[0, k], axes[1, k], steps, omega, mu, reference)
    omega_axis, sums_axis = axes[0, -1], axes[1, -1]
    for axis, name, title in (
        (omega_axis, "omega", r"$\bar\omega = \Sigma|\omega_h\mu_h| / \Sigma|\mu_h|$"),
        (sums_axis, "sums", r"mean$(\Sigma_+\mu, |\Sigma_-\mu|)$"),
    ):
        _comparison_panel(axis, name, title, params, data, compared)
    omega_axis.set_title("per-H means (last log quarter)")
    sums_axis.set_xlabel("H, paired / trained members")
    figure.suptitle(
        f"HE-A-HEADS (Figure 13): lowest-loss member per H after {int(steps[-1])} Adam steps; "
        f"error bars: drift + batch-means SE + 2 seed SEs",
        fontsize=9,
    )
    return figure


def _trajectory_panels(omega_axis, mu_axis, steps, omega, mu, reference):
    """One H's column: ω_h(t) and μ_h(t) (`omega`, `mu`: (n, H)) of its shown member, the
    dummy heads marked, the group sums Σ₊μ, Σ₋μ, against ±ω̄ and ±μ*(ω̄) of the reference H
    (`reference`: that H, its ω̄, μ*(ω̄))."""
    H = omega.shape[1]
    reference_h, reference_omega, reference_sum = reference
    dummy = head_types(omega[-1], mu[-1]) == DUMMY
    for h in range(H):
        label = f"head {h + 1}" + (" (dummy)" if dummy[h] else "")
        omega_axis.plot(steps, omega[:, h], label=label, **_style(h, dummy[h]))
        mu_axis.plot(steps, mu[:, h], **_style(h, dummy[h]))
    positive, negative = ~dummy & (omega[-1] > 0), ~dummy & (omega[-1] < 0)
    mu_axis.plot(steps, mu[:, positive].sum(axis=1), color="black", lw=1.3, label="Σ₊μ, Σ₋μ")
    mu_axis.plot(steps, mu[:, negative].sum(axis=1), color="black", lw=1.3)
    for sign in (1, -1):
        first = sign > 0
        omega_axis.axhline(
            sign * reference_omega,
            color=REFERENCE,
            ls=":",
            lw=1.2,
            label=f"±ω̄ of H={reference_h} (last quarter)" if first else None,
        )
        mu_axis.axhline(
            sign * reference_sum,
            color=THEORY,
            ls="--",
            lw=1,
            label=f"±μ*(ω̄ of H={reference_h}) (4.6)" if first else None,
        )
    omega_axis.set(xscale="log", title=f"H = {H}", ylabel=r"$\omega_h(t)$", ylim=(-0.7, 0.7))
    bound = 1.6 * reference_sum
    mu_axis.set(xscale="log", xlabel="Adam step", ylabel=r"$\mu_h(t)$", ylim=(-bound, bound))
    omega_axis.legend(fontsize=5.5, loc="upper left", ncols=2 if H > 4 else 1)
    mu_axis.legend(fontsize=5.5, loc="upper left")


def _comparison_panel(axis, name, title, params, data, compared):
    """The per-H mean of ω̄ (`name` "omega") or of the group sums ("sums") relative to the
    first H, with its bound, against equality within ± equal_rtol."""
    relative = data[f"{name}_mean"] / data[f"{name}_mean"][0] - 1.0
    error = (data[f"{name}_error"] + np.abs(relative + 1.0) * data[f"{name}_error"][0]) / data[
        f"{name}_mean"
    ][0]
    error[0] = data[f"{name}_error"][0] / data[f"{name}_mean"][0]  # the reference's own
    axis.errorbar(
        compared, relative, error, ls="none", marker="o", color=MEASURED, capsize=3,
        label="mean of paired members (± bound)",
    )  # fmt: skip
    axis.axhline(0.0, color=THEORY, label="claim: equal across H")
    for sign in (1, -1):
        axis.axhline(
            sign * params.equal_rtol,
            color=REFERENCE,
            ls="--",
            lw=1,
            label=f"allowed ±{params.equal_rtol:g}" if sign > 0 else None,
        )
    axis.set_xticks(
        compared,
        [
            f"{H}\n{int(p)}/{int(n)}"
            for H, p, n in zip(compared, data["paired_counts"], data["counts"], strict=True)
        ],
        fontsize=7,
    )
    axis.set(ylabel=f"{title}\nrelative to H={compared[0]}")
    axis.legend(fontsize=5.5, loc="lower center")


def figure_14(params, prediction, measurement):
    """KQ heat maps at selected steps of the member with a dummy head, and its trajectories."""
    data = measurement.figure_data
    KQ, OV = data["snapshot_KQ"], data["snapshot_OV"]  # (S, H, D, D)
    snapshots, H = KQ.shape[0], KQ.shape[1]
    omega, mu, norms = data["member_omega_t"], data["member_mu_t"], data["member_kq_norm_t"]
    dummy = head_types(omega[-1], mu[-1]) == DUMMY
    figure, (left, right) = new_subfigures(
        2.6 * H + 4.0, 1.7 * snapshots + 0.6, ncols=2, width_ratios=(2.6 * H, 4.0)
    )
    labels = [f"step {int(s)}" for s in data["snapshot_steps"]]
    circuit_heatmaps(KQ, OV, [H] * snapshots, labels, container=left)
    member = int(data["figure_member"])
    which = (
        f"dummy head(s) {', '.join(str(h + 1) for h in np.flatnonzero(dummy))}"
        if dummy.any()
        else "no dummy head formed"
    )
    left.suptitle(f"H = {H}, member {member}: circuits at logged steps ({which})", fontsize=9)

    axes = right.subplots(3, 1, sharex=True)
    steps = data["steps"]
    for h in range(H):
        style = _style(h, dummy[h])
        label = f"head {h + 1}" + (" (dummy)" if dummy[h] else "")
        axes[0].plot(steps, omega[:, h], label=label, **style)
        axes[1].plot(steps, mu[:, h], **style)
        axes[2].plot(steps, norms[:, h] / norms[:, h].max(), **style)
    for axis in axes:
        for s in data["snapshot_steps"]:
            axis.axvline(s, color=REFERENCE, lw=0.6, ls=":")
    axes[2].axhline(0.05, color=THEORY, lw=1, ls="--", label="5% of the peak (claim: → 0)")
    axes[0].set(xscale="log", ylabel=r"$\omega_h(t)$")
    axes[1].set(ylabel=r"$\mu_h(t)$")
    axes[2].set(xlabel="Adam step (dotted: the snapshots)", ylabel=r"$\|KQ_h\|_F$ / its max")
    axes[0].legend(fontsize=6, loc="upper left")
    axes[2].legend(fontsize=6, loc="upper right")
    right.suptitle("trajectories of the same member", fontsize=9)
    return figure
