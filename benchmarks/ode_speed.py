"""Speed of the gradient-flow ODEs of `dynamics` (He et al. 2025, Appendix B and Section 4).

Measures, on this CPU (median of repeats, wall clock):
  1. the reduced two-head ODE (B.4) from eps = 1e-3 to t = 1e8 at rtol 1e-10 (target < 1 s);
  2. an H = 8 flow on Ltilde from small random init to t = 1e4, where Stage I/II are done
     and the distance to S_omega is below 1e-2 (target < 5 s);
  3. the stiff ODE solver against forward-Euler gradient descent (the usual way these
     curves are produced) at matched final accuracy on the two-head system, t in [0, T]:
     GD at lr = 0.01 (the reference's step) fixes an error; the ODE is run at the loosest
     rtol that matches it; and for a 1e-8 target the GD cost is extrapolated from its
     measured O(lr) error constant and per-step time (marked as extrapolated).

Run: .venv/bin/python benchmarks/ode_speed.py
"""

from __future__ import annotations

import statistics
import time

import numpy as np
from icl_verify.dynamics import (
    GradientDescent,
    ODESolver,
    SaveAt,
    gradient_flow,
    two_head_flow,
)
from icl_verify.theory import Setting

SETTING = Setting(d=5, L=40, sigma2=0.1)


def timed(function, repeats: int = 5):
    """(median seconds, last result) of function() over repeats."""
    seconds, result = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        result = function()
        seconds.append(time.perf_counter() - start)
    return statistics.median(seconds), result


def two_head_to_1e8() -> None:
    seconds, path = timed(
        lambda: two_head_flow(1e-3, SETTING, (0.0, 1e8), ODESolver(rtol=1e-10, atol=1e-12))
    )
    state = f"omega(1e8) = {path.omega[-1, 0]:.5f}, 2 omega mu = {path.mu_dot_omega[-1]:.6f}"
    print(f"1. two-head ODE (B.4) to t=1e8, LSODA rtol 1e-10: {seconds:.3f} s ({state})")


def eight_heads_random() -> None:
    rng = np.random.default_rng(0)
    omega0, mu0 = rng.normal(0.0, 1e-2, (2, 8))
    for rtol in (1e-10, 1e-8):
        solver = ODESolver(rtol=rtol, atol=rtol * 1e-2)
        seconds, path = timed(
            lambda s=solver: gradient_flow(omega0, mu0, SETTING, (0.0, 1e4), s), 3
        )
        print(f"2. H=8 flow from N(0, 1e-4) init to t=1e4, LSODA rtol {rtol:g}: {seconds:.3f} s "
              f"(distance to S_omega {path.manifold_distance()[-1]:.2e}, "
              f"KQ dispersion {path.kq_dispersion()[-1]:.1e}, "
              f"zero-sum ratio {path.zero_sum_ratio[-1]:.1e})")  # fmt: skip


def ode_against_gradient_descent(t_end: float = 1e3) -> None:
    grid = SaveAt([0.0, t_end])
    exact = two_head_flow(1e-3, SETTING, (0.0, t_end), ODESolver(rtol=1e-13, atol=1e-15), grid)

    def error(path) -> float:
        return float(
            np.hypot(path.omega[-1, 0] - exact.omega[-1, 0], path.mu[-1, 0] - exact.mu[-1, 0])
        )

    lr = 0.01
    gd_seconds, gd = timed(
        lambda: two_head_flow(1e-3, SETTING, (0.0, t_end), GradientDescent(lr), grid), 1
    )
    gd_error = error(gd)
    steps = round(t_end / lr)
    print(f"3. two-head system on [0, {t_end:g}]: GD lr {lr} ({steps} steps) error {gd_error:.2e} "
          f"in {gd_seconds:.2f} s ({gd_seconds / steps * 1e6:.1f} us/step)")  # fmt: skip
    for rtol in np.logspace(-3, -13, 21):
        solver = ODESolver(rtol=float(rtol), atol=float(rtol) * 1e-2)
        path = two_head_flow(1e-3, SETTING, (0.0, t_end), solver, grid)
        if error(path) <= gd_error:
            ode_seconds, _ = timed(
                lambda s=solver: two_head_flow(1e-3, SETTING, (0.0, t_end), s, grid)
            )
            ratio = gd_seconds / ode_seconds
            print(f"   matched accuracy: ODE rtol {rtol:.0e} error {error(path):.2e} in "
                  f"{ode_seconds * 1e3:.1f} ms -> GD / ODE time = {ratio:.0f}x")  # fmt: skip
            break
    target = 1e-8
    solver = ODESolver(rtol=1e-11, atol=1e-13)
    ode_seconds, path = timed(lambda: two_head_flow(1e-3, SETTING, (0.0, t_end), solver, grid))
    gd_steps = steps * gd_error / target  # error = C lr  =>  lr = target / C
    gd_extrapolated = gd_seconds / steps * gd_steps
    print(f"   target {target:g}: ODE rtol 1e-11 error {error(path):.2e} "
          f"in {ode_seconds * 1e3:.1f} ms; "
          f"GD would need ~{gd_steps:.1e} steps, ~{gd_extrapolated:.0f} s (extrapolated) "
          f"-> ratio ~{gd_extrapolated / ode_seconds:.0e}x")  # fmt: skip


if __name__ == "__main__":
    two_head_to_1e8()
    eight_heads_random()
    ode_against_gradient_descent()
