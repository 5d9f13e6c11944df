"""Flows from small random initialisation for H heads: when Stage I and Stage II structure appears.

He et al. (2025), Section 4.1-4.2 (reference/he2025.md §HE-S1, §HE-S2, §HE-MAN):
from small random (omega, mu), gradient flow on Ltilde first makes every head
sign-matched and the OV weights zero-sum (Stage I), then equalises |omega_h|
across active heads (Stage II, homogeneous KQ scaling), and ends near the
solution manifold S_omega, possibly with dummy heads.

A property "appears" at the first saved time after which it holds at every later
saved time up to t_end (inf if it does not hold at t_end):

- sign matching: `Trajectory.sign_matched` (all non-dummy heads, mu_h omega_h > 0);
- zero-sum OV: `Trajectory.zero_sum_ratio` <= tolerance;
- homogeneous KQ: `Trajectory.kq_dispersion` <= tolerance.

Not every start reaches S_omega: when all heads end with the same sign of omega
the flow settles at the single-head optimum (omega_h = 1/sqrt(d) for all h, loss
1 + sigma2 - 1/(1 + e kappa)), a degenerate local minimum of Ltilde; from iid
N(0, 1e-4) starts at d=5, L=40, sigma2=0.1 this happened in 10 of 20 seeds for
H = 2 and 3 of 20 for H = 3 (none for H >= 4). `final_distance` shows it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from icl_verify.dynamics.saveat import SaveAt
from icl_verify.dynamics.solve import gradient_flow
from icl_verify.dynamics.solver import ODESolver
from icl_verify.dynamics.trajectory import DUMMY, DUMMY_THRESHOLD
from icl_verify.theory import Setting


@dataclass(frozen=True)
class RandomInitStages:
    """Stage times and end state of H-head flows from N(0, scale^2) starts, one entry per seed.

    Attributes:
        setting, num_heads, scale, t_end, tolerance: what was run.
        seeds: the seeds, shape (S,).
        sign_matching_time, zero_sum_time, homogeneous_time: when each property
            appears (see the module docstring), shape (S,); inf if not by t_end.
        final_distance: `Trajectory.manifold_distance` at t_end, shape (S,).
        dummy_heads: number of dummy heads at t_end, shape (S,).
    """

    setting: Setting
    num_heads: int
    scale: float
    t_end: float
    tolerance: float
    seeds: np.ndarray
    sign_matching_time: np.ndarray
    zero_sum_time: np.ndarray
    homogeneous_time: np.ndarray
    final_distance: np.ndarray
    dummy_heads: np.ndarray

    @property
    def stage_one_time(self) -> np.ndarray:
        """Stage I done: both sign matching and zero-sum OV have appeared, shape (S,)."""
        return np.maximum(self.sign_matching_time, self.zero_sum_time)

    @property
    def dummy_fraction(self) -> float:
        """Fraction of all heads over all seeds that end dummy."""
        return float(self.dummy_heads.sum() / (self.num_heads * self.seeds.size))


def _appearance_time(t: np.ndarray, holds: np.ndarray) -> float:
    """First t[k] with holds[k:] all True; inf when holds[-1] is False."""
    if not holds[-1]:
        return math.inf
    failing = np.flatnonzero(~holds)
    return float(t[0] if failing.size == 0 else t[failing[-1] + 1])


def random_init_stages(
    setting: Setting,
    num_heads: int,
    seeds: Sequence[int] = tuple(range(20)),
    scale: float = 1e-2,
    t_end: float = 1e4,
    tolerance: float = 1e-2,
    solver: ODESolver | None = None,
) -> RandomInitStages:
    """Run gradient flow on Ltilde (4.1) from omega, mu ~ N(0, scale^2 I_H) for each seed.

    Args:
        setting: the problem (d, L, sigma2).
        num_heads: H >= 2.
        seeds: one flow per seed (numpy.random.default_rng(seed)).
        scale: standard deviation of the initial omega_h and mu_h, > 0.
        t_end: integration time (log-spaced output, 300 times).
        tolerance: threshold for zero-sum ratio and KQ dispersion.
        solver: default LSODA with rtol 1e-8, atol 1e-10 (times are read on a grid).

    >>> from icl_verify.theory import Setting
    >>> result = random_init_stages(Setting(d=5, L=40, sigma2=0.1), 3, seeds=(0,), t_end=1e3)
    >>> bool(result.stage_one_time[0] < result.homogeneous_time[0] < 1e3), result.dummy_fraction
    (True, 0.0)
    """
    if not (isinstance(num_heads, int) and num_heads >= 2):
        raise ValueError(f"num_heads must be an integer >= 2, got {num_heads!r}")
    if not (math.isfinite(scale) and scale > 0):
        raise ValueError(f"scale must be a finite number > 0, got {scale!r}")
    if len(seeds) == 0:
        raise ValueError("seeds must hold at least one seed, got none")
    solver = solver if solver is not None else ODESolver(rtol=1e-8, atol=1e-10)
    saveat = SaveAt.log_spaced((0.0, t_end), n=300)
    rows = []
    for seed in seeds:
        rng = np.random.default_rng(seed)
        omega0, mu0 = rng.normal(0.0, scale, (2, num_heads))
        path = gradient_flow(omega0, mu0, setting, (0.0, t_end), solver, saveat)
        rows.append(
            (
                _appearance_time(path.t, path.sign_matched()),
                _appearance_time(path.t, path.zero_sum_ratio <= tolerance),
                _appearance_time(path.t, path.kq_dispersion() <= tolerance),
                path.manifold_distance()[-1],
                int(np.sum(path.head_types(DUMMY_THRESHOLD)[-1] == DUMMY)),
            )
        )
    sign, zero_sum, homogeneous, distance, dummies = (
        np.array(column) for column in zip(*rows, strict=True)
    )
    return RandomInitStages(
        setting=setting, num_heads=num_heads, scale=float(scale), t_end=float(t_end),
        tolerance=float(tolerance), seeds=np.asarray(seeds), sign_matching_time=sign,
        zero_sum_time=zero_sum, homogeneous_time=homogeneous, final_distance=distance,
        dummy_heads=dummies,
    )  # fmt: skip
