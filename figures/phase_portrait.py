"""Figures of the two-head gradient flow (He et al. 2025, Appendix B; Figure 22 in spirit).

`draw_phase_portrait` draws a `dynamics.PhasePortrait` (direction field, both
nullclines, trajectories) in the log-log (omega, mu) plane; `draw_time_series`
draws omega, mu, mu/omega, Ltilde and 2 omega mu of a `dynamics.TwoHeadPhases`
against log t with the Phase I/II/III boundaries and the predicted laws, which the
caller evaluates (`TimeSeriesLaws`): a figure draws numbers, it computes none.
Times are in units of the flow's t (paper convention: Ltilde the plain MSE).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
from icl_verify.figures.style import save_figure, styled
from matplotlib.figure import Figure


@dataclass(frozen=True)
class TimeSeriesLaws:
    """The predicted laws drawn over a two-head flow, evaluated by the caller.

    Attributes:
        t_late: (n,) late times (t >= 10) of the trajectory;
        late_omega: (n,) valley-floor law (8 kappa d^2 t)^{-1/6} at t_late;
        naive_late_omega: (n,) the t^{-1/2} law of (B.18) at t_late;
        valley_excess: (n,) kappa d^2 omega^4 / (6 (1 + kappa)^2) on the valley law;
        mu_star: (T,) mu*(omega(t)) of (4.6) along the whole trajectory (t > 0).
    """

    t_late: np.ndarray
    late_omega: np.ndarray
    naive_late_omega: np.ndarray
    valley_excess: np.ndarray
    mu_star: np.ndarray


def _save(figure, path) -> Path:
    save_figure(figure, path, dpi=130)
    return Path(path)


def _title(setting) -> str:
    sigma2, kappa = f"{setting.sigma2:g}", f"{setting.kappa:.4g}"
    return f"d={setting.d}, L={setting.L}, $\\sigma^2$={sigma2}, $\\kappa$={kappa}"


@styled
def draw_phase_portrait(portrait, path, phases=None) -> Path:
    """Draw a `dynamics.PhasePortrait` to path (PNG); with a `dynamics.TwoHeadPhases`, mark T1
    and the peak on the symmetric flow."""
    s = portrait.setting
    figure = Figure(figsize=(8.2, 6.6))
    axis = figure.subplots()
    # direction field in log coordinates: arrows along (d ln omega, d ln mu), unit length
    w, m = np.meshgrid(portrait.omega, portrait.mu)
    u, v = portrait.d_omega / w, portrait.d_mu / m
    norm = np.hypot(u, v)
    with np.errstate(invalid="ignore", divide="ignore"):
        speed = np.log10(np.hypot(portrait.d_omega, portrait.d_mu))
    arrows = axis.quiver(
        np.log10(w), np.log10(m), u / norm, v / norm, speed, cmap="Greys", alpha=0.7,
        angles="xy", scale=34, width=0.0025,
    )  # fmt: skip
    # clip the colour scale: at large d the speed spans tens of decades near omega ~ 1
    arrows.set_clim(np.nanpercentile(speed, 5), np.nanpercentile(speed, 75))
    figure.colorbar(arrows, ax=axis, extend="both",
                    label=r"$\log_{10}$ speed $|(\dot\omega, \dot\mu)|$ (clipped)")  # fmt: skip
    x = np.log10(portrait.curve_omega)
    axis.plot(x, np.log10(portrait.mu_nullcline_mu), color="tab:blue", lw=2.2,
              label=r"$\dot\mu = 0$:  $\mu = \mu^*(\omega)$ (4.6)")  # fmt: skip
    axis.plot(x, np.log10(portrait.omega_nullcline_mu), color="tab:red", lw=2.2,
              label=r"$\dot\omega = 0$:  $\mu = 1/(2\omega(1+\kappa\cosh d\omega^2))$")  # fmt: skip
    axis.plot(x, np.log10(1.0 / (2 * (1 + s.kappa) * portrait.curve_omega)), color="tab:blue",
              ls=":", lw=1.5, label=r"valley floor $\mu = 1/(2(1+\kappa)\omega)$")  # fmt: skip
    for index, path_ in enumerate(portrait.trajectories):
        omega, mu = path_.omega[:, 0], path_.mu[:, 0]
        keep = (omega > 0) & (mu > 0)
        style = dict(color="black", lw=2.0) if index == 0 else dict(color="tab:green", lw=1.1)
        label = (r"symmetric start (Def. B.1), $\varepsilon=10^{-3}$" if index == 0 else
                 ("other starts (dots mark starts)" if index == 1 else None))  # fmt: skip
        axis.plot(np.log10(omega[keep]), np.log10(mu[keep]), label=label, **style)
        axis.plot(np.log10(omega[0]), np.log10(mu[0]), "o", ms=4, color=style["color"])
    if phases is not None:
        t1_omega = phases.trajectory.events["phase_one_end"].omega[0, 0]
        t1_mu = phases.trajectory.events["phase_one_end"].mu[0, 0]
        axis.plot(np.log10(t1_omega), np.log10(t1_mu), "s", color="tab:orange", ms=8,
                  label=f"end of Phase I, $T_1$={phases.phase_one_end:.3f}")  # fmt: skip
        axis.plot(np.log10(phases.peak_omega), np.log10(phases.peak_mu), "*", color="tab:purple",
                  ms=13, label=f"peak of $\\omega$, end of Phase II (t={phases.peak_time:.3f})",
        )  # fmt: skip
    axis.set_xlim(np.log10(portrait.omega[0]) - 0.05, np.log10(portrait.omega[-1]) + 0.05)
    axis.set_ylim(np.log10(portrait.mu[0]) - 0.05, np.log10(portrait.mu[-1]) + 0.05)
    axis.set_xlabel(r"$\log_{10} \omega$   (KQ scale of head 1; head 2 has $-\omega$)")
    axis.set_ylabel(r"$\log_{10} \mu$   (OV weight of head 1; head 2 has $-\mu$)")
    axis.set_title("Two-head gradient flow (B.4) on $\\tilde L$: phase portrait\n" + _title(s))
    axis.legend(loc="lower left", fontsize=8, framealpha=0.9)
    axis.grid(alpha=0.3)
    figure.tight_layout()
    return _save(figure, path)


@styled
def draw_time_series(phases, laws: TimeSeriesLaws, path) -> Path:
    """Draw omega, mu, mu/omega, Ltilde and 2 omega mu of a `dynamics.TwoHeadPhases` against
    log t with the phase boundaries and the predicted `laws`."""
    s, path_ = phases.setting, phases.trajectory
    keep = path_.t > 0
    t, omega, mu = path_.t[keep], path_.omega[keep, 0], path_.mu[keep, 0]
    loss, product = path_.loss[keep], path_.mu_dot_omega[keep]
    figure = Figure(figsize=(12, 8.5))
    axes = figure.subplots(2, 2, sharex=True)
    panels = axes.ravel()
    panels[0].loglog(t, omega, color="tab:blue", lw=2, label=r"$\omega(t)$")
    panels[0].loglog(t, mu, color="tab:red", lw=2, label=r"$\mu(t)$")
    panels[0].loglog(laws.t_late, laws.late_omega, "k--", lw=1,
                     label=r"$(8\kappa d^2 t)^{-1/6}$ (valley floor)")  # fmt: skip
    panels[0].loglog(laws.t_late, laws.naive_late_omega, color="gray", ls=":", lw=1.5,
                     label=r"naive (B.18): $\propto t^{-1/2}$")  # fmt: skip
    panels[0].loglog(t[t < 4], phases.eps * np.exp(2 * t[t < 4]), color="tab:green", ls="--",
                     lw=1, label=r"Phase I: $\varepsilon e^{2t}$")  # fmt: skip
    panels[0].set_ylim(phases.eps / 2, max(mu.max(), 1.0) * 2)
    panels[0].set_ylabel(r"$\omega$, $\mu$ (head 1)")
    panels[0].set_title(
        f"late slopes: $\\omega$ {phases.late_slope_omega:+.4f}, $\\mu$ {phases.late_slope_mu:+.4f}"
        " (valley law $\\mp 1/6$)", fontsize=10,
    )  # fmt: skip
    panels[1].semilogx(t, mu / omega, color="tab:purple", lw=2, label=r"$\mu/\omega$")
    panels[1].semilogx(t, mu / laws.mu_star, color="tab:olive", lw=1.5,
                       label=r"$\mu/\mu^*(\omega)$")  # fmt: skip
    panels[1].set_yscale("log")
    panels[1].set_ylabel("ratio")
    floor = s.sigma2 + s.kappa / (1 + s.kappa)
    excess = loss - floor
    panels[2].loglog(t[excess > 0], excess[excess > 0], color="black", lw=2,
                     label=r"$\tilde L(t) - [\sigma^2 + \kappa/(1+\kappa)]$")  # fmt: skip
    valley = r"valley $\kappa d^2\omega^4/(6(1+\kappa)^2)$ at the $t^{-1/6}$ law"
    panels[2].loglog(laws.t_late, laws.valley_excess, "k--", lw=1, label=valley)
    panels[2].set_ylabel(r"excess loss $\tilde L$ (4.1) over its limit")
    panels[3].semilogx(t, product, color="tab:brown", lw=2, label=r"$2\omega\mu$")
    panels[3].axhline(1 / (1 + s.kappa), color="gray", ls="--", lw=1,
                      label=f"$1/(1+\\kappa)$ = {1 / (1 + s.kappa):.5f}")  # fmt: skip
    panels[3].set_ylabel(r"$2\omega\mu$ (effective GD step)")
    for axis in panels:
        axis.axvline(phases.phase_one_end, color="tab:orange", lw=1.2)
        axis.axvline(phases.peak_time, color="tab:purple", lw=1.2)
        axis.grid(alpha=0.3, which="both")
        axis.legend(fontsize=8, loc="best")
    for axis in panels[2:]:
        axis.set_xlabel("t  (flow time, paper convention; authors' code time = 2t)")
    top = panels[1]
    for x, text in ((np.sqrt(t[0] * phases.phase_one_end), "I"),
                    (np.sqrt(phases.phase_one_end * phases.peak_time), "II"),
                    (np.sqrt(phases.peak_time * t[-1]), "III")):  # fmt: skip
        top.annotate(f"Phase {text}", (x, 0.97), xycoords=("data", "axes fraction"),
                     ha="center", va="top", fontsize=10, weight="bold")  # fmt: skip
    figure.suptitle(
        f"Two-head flow (B.4) from $\\varepsilon$={phases.eps:g}: {_title(s)}\n"
        f"orange: $T_1$={phases.phase_one_end:.3f} (end of Phase I);  purple: peak of $\\omega$ "
        f"at t={phases.peak_time:.3f}, $\\omega_{{max}}$={phases.peak_omega:.4f} (end of Phase II)",
        fontsize=11,
    )
    figure.tight_layout()
    return _save(figure, path)
