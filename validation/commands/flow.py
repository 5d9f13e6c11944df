"""`icl-verify flow`: integrate the two-head flow (B.4) and draw it (He et al. 2025, App. B).

    icl-verify flow two-head --d 5 --L 40 --sigma2 0.1 --out portrait.png
    icl-verify flow two-head --d 5 --L 40 --sigma2 0.1 --series --out series.png

Draws the phase portrait (direction field, nullclines, trajectories) or, with
--series, omega, mu, mu/omega, the loss and 2 omega mu against log t with the
Phase I/II/III boundaries; prints each measured phase feature with its meaning
(`dynamics.TwoHeadPhases.FEATURES`). It judges nothing: the verdicts are the claims'
(`icl-verify run HE-B-PHASE1 HE-B-PHASE2 HE-B-PHASE3`), whose rules need more than one
flow (the trained models of PHASE1, the further (d, L) rows of PHASE2) and whose
tolerances belong to their settings. Exit status 0 when the figure was written, 2 on
bad input.
"""

from __future__ import annotations

import argparse
import math
import os
import tempfile
from pathlib import Path

from icl_verify.validation.errors import CommandLineError

from icl_verify.limits import MAX_PROMPT_LENGTH, MAX_VALUE

SYSTEMS = ("two-head",)


def register(subparsers) -> None:
    """Add the `flow` subcommand to the `icl-verify` parser."""
    parser = subparsers.add_parser(
        "flow",
        help="integrate a gradient-flow ODE on Ltilde and draw its phase portrait",
        description="Integrate the reduced two-head flow (B.4) of He et al. (2025) from the "
        "symmetric start and draw its phase portrait or time series (PNG).",
    )
    parser.add_argument("system", choices=SYSTEMS, help="the ODE: two-head = (B.4)")
    parser.add_argument(
        "--d", default="5", help=f"covariate dimension, 1 <= d <= {MAX_FLOW_DIMENSION} (5)"
    )
    parser.add_argument(
        "--L", default="40", help=f"prompt length, 1 <= L <= {MAX_PROMPT_LENGTH} (40)"
    )
    parser.add_argument(
        "--sigma2", default="0.1", help=f"noise variance, 0 <= sigma2 <= {MAX_VALUE:g} (0.1)"
    )
    parser.add_argument("--eps", default="1e-3", help="symmetric start, 0 < eps <= 0.1 (1e-3)")
    parser.add_argument("--t-end", default="1e7", help="end time, 1e4 <= t-end <= 1e9 (1e7)")
    parser.add_argument("--out", required=True, help="PNG file to write")
    parser.add_argument(
        "--series", action="store_true", help="draw the time series instead of the portrait"
    )
    parser.set_defaults(func=run)


#: The largest d whose flow and portrait are drawn in seconds: measured 2 s from d = 5 to 400 at
#: L = 40; at d = 500 and 700 the command had not finished after 100 s.
MAX_FLOW_DIMENSION = 400


def _integer(name: str, text: str, high: int) -> int:
    """--name as an integer in [1, high] (the stated caps of `icl_verify.limits`)."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if not 1 <= value <= high:
        raise CommandLineError(f"--{name} must be an integer in [1, {high}], got {text!r}")
    return value


def _number(name: str, text: str, low: float, high: float, low_open: bool = False) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    below = value <= low if low_open else value < low
    if not math.isfinite(value) or below or value > high:
        interval = f"{'(' if low_open else '['}{low:g}, {high:g}{')' if math.isinf(high) else ']'}"
        raise CommandLineError(f"--{name} must be a number in {interval}, got {text!r}")
    return value


def run(args: argparse.Namespace) -> int:
    """Integrate, print the phase features, draw the figure; 0 when it was written."""
    from icl_verify.dynamics import phase_portrait, two_head_phases
    from icl_verify.figures.phase_portrait import draw_phase_portrait, draw_time_series
    from icl_verify.theory import Setting

    setting = Setting(
        d=_integer("d", args.d, MAX_FLOW_DIMENSION), L=_integer("L", args.L, MAX_PROMPT_LENGTH),
        # 1e12 the stated cap of reals: the flow takes 3 s there; at 1e300 it never ends
        sigma2=_number("sigma2", args.sigma2, 0.0, MAX_VALUE),
    )  # fmt: skip
    eps = _number("eps", args.eps, 0.0, 0.1, low_open=True)
    t_end = _number("t-end", args.t_end, 1e4, 1e9)
    out = Path(args.out)
    if out.suffix.lower() != ".png":
        raise CommandLineError(f"--out must name a .png file, got {args.out!r}")
    if not out.parent.is_dir():
        raise CommandLineError(f"--out: directory {str(out.parent)!r} does not exist")
    try:  # the file can be written there (permissions alone do not tell: /proc admits root)
        handle, probe = tempfile.mkstemp(prefix=".icl-verify-probe-", dir=out.parent)
        os.close(handle)
        os.unlink(probe)
    except OSError as error:
        raise CommandLineError(
            f"--out {out}: cannot write in {str(out.parent)!r} ({error.strerror})"
        ) from None
    phases = two_head_phases(setting, eps=eps, t_end=t_end)
    width = max(len(key) for key in phases.FEATURES)
    print(f"{'feature':<{width}}  {'value':>12}  meaning")
    for key, value in phases.features().items():
        print(f"{key:<{width}}  {value:>12.6g}  {phases.FEATURES[key]}")
    print("verdicts: icl-verify run HE-B-PHASE1 HE-B-PHASE2 HE-B-PHASE3")
    if args.series:
        draw_time_series(phases, time_series_laws(phases), out)
    else:
        draw_phase_portrait(phase_portrait(setting), out, phases)
    print(f"wrote {out}")
    return 0


def time_series_laws(phases):
    """The predicted laws over a two-head flow (theory and dynamics), for `draw_time_series`."""
    from icl_verify.dynamics import late_omega, naive_late_omega
    from icl_verify.figures.phase_portrait import TimeSeriesLaws
    from icl_verify.theory import manifold_mu

    s, trajectory = phases.setting, phases.trajectory
    t = trajectory.t[trajectory.t > 0]
    t_late = t[t >= 10.0]
    late = late_omega(s, t_late)
    return TimeSeriesLaws(
        t_late=t_late,
        late_omega=late,
        naive_late_omega=naive_late_omega(s, t_late),
        valley_excess=s.kappa * s.d**2 * late**4 / (6 * (1 + s.kappa) ** 2),
        mu_star=manifold_mu(trajectory.omega[trajectory.t > 0, 0], s),
    )
