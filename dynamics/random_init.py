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
H = 2 and 3 of 20 for H = 3 (none for H >= 4). `final_distance` and `final_loss_gap`
show it.

Dummy heads are those of `icl_verify.heads.head_types` (via `Trajectory.head_types`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields

import numpy as np
from icl_verify.dynamics.saveat import SaveAt
from icl_verify.dynamics.solve import gradient_flow
from icl_verify.dynamics.solver import ODESolver
from icl_verify.dynamics.trajectory import DUMMY
from icl_verify.theory import Setting, manifold_loss


@dataclass(frozen=True)
class RandomInitStages:
    """Stage times and end state of H-head flows from N(0, scale^2) starts, one entry per seed.

    Attributes:
        setting, num_heads, scale, t_end, tolerance: what was run.
        seeds: the seeds, shape (S,) (or (S, k) for seeds that are k-tuples).
        t: the saved times, shape (T,), log-spaced from 0 to t_end.
        mu_dot_omega: p(t) = mu^T omega along each flow, shape (S, T).
        sign_matching_time, zero_sum_time, homogeneous_time: when each property
            appears (see the module docstring), shape (S,); inf if not by t_end.
        final_omega, final_mu: the heads at t_end, shape (S, H).
        final_sign_matched: every non-dummy head sign-matched at t_end, shape (S,).
        final_zero_sum_ratio, final_dispersion: `Trajectory.zero_sum_ratio` and
            `Trajectory.kq_dispersion` at t_end, shape (S,).
        final_loss_gap: Ltilde(t_end) minus Ltilde on S_omega (4.7) at the mean |omega_h|
            of the non-dummy heads, `theory.manifold_loss`, shape (S,): ~0 on S_omega.
        final_distance: `Trajectory.manifold_distance` at t_end, shape (S,).
        dummy_heads: number of dummy heads at t_end, shape (S,).
    """

    setting: Setting
    num_heads: int
    scale: float
    t_end: float
    tolerance: float
    seeds: np.ndarray
    t: np.ndarray
    mu_dot_omega: np.ndarray
    sign_matching_time: np.ndarray
    zero_sum_time: np.ndarray
    homogeneous_time: np.ndarray
    final_omega: np.ndarray
    final_mu: np.ndarray
    final_sign_matched: np.ndarray
    final_zero_sum_ratio: np.ndarray
    final_dispersion: np.ndarray
    final_loss_gap: np.ndarray
    final_distance: np.ndarray
    dummy_heads: np.ndarray

    @property
    def stage_one_time(self) -> np.ndarray:
        """Stage I done: both sign matching and zero-sum OV have appeared, shape (S,)."""
        return np.maximum(self.sign_matching_time, self.zero_sum_time)

    @property
    def dummy_fraction(self) -> float:
        """Fraction of all heads over all seeds that end dummy."""
        return float(self.dummy_heads.sum() / (self.num_heads * self.seeds.shape[0]))

    def arrays(self) -> dict[str, np.ndarray]:
        """Every attribute as a numpy array (the setting as d, L, sigma2), for storage.

        `from_arrays` inverts it exactly.
        """
        out = {"d": np.array(self.setting.d), "L": np.array(self.setting.L),
               "sigma2": np.array(self.setting.sigma2)}  # fmt: skip
        for field in fields(self)[1:]:
            out[field.name] = np.asarray(getattr(self, field.name))
        return out

    @classmethod
    def from_arrays(cls, arrays: Mapping[str, np.ndarray]) -> RandomInitStages:
        """The stages stored by `arrays`."""
        setting = Setting(int(arrays["d"]), int(arrays["L"]), float(arrays["sigma2"]))
        scalars = {"num_heads": int, "scale": float, "t_end": float, "tolerance": float}
        values = {
            field.name: scalars[field.name](arrays[field.name])
            if field.name in scalars
            else np.asarray(arrays[field.name])
            for field in fields(cls)[1:]
        }
        return cls(setting=setting, **values)


def _appearance_time(t: np.ndarray, holds: np.ndarray) -> float:
    """First t[k] with holds[k:] all True; inf when holds[-1] is False."""
    if not holds[-1]:
        return math.inf
    failing = np.flatnonzero(~holds)
    return float(t[0] if failing.size == 0 else t[failing[-1] + 1])


def stage_one_end(setting: Setting, num_heads: int, scale: float, tolerance: float) -> float:
    """When Stage I is over from N(0, scale^2) starts (§HE-S1): its two rates added.

    Growth: while p = mu^T omega < 1/(1+kappa) the sign-matching terms move each head's
    (mu_h + omega_h)/2 at rate 2, so p grows like (H scale^2 / 2) e^{4t} and reaches
    1/(1+kappa) after ln(2 / ((1+kappa) H scale^2)) / 4. Zero-sum: once the bracket
    1 - (1+kappa) p vanishes, the zero-sum term relaxes sum_h mu_h at rate 2cH,
    c = (1+sigma2)/L, so a ratio of order 1 falls below ``tolerance`` after
    ln(1/tolerance) / (2cH).

    >>> round(stage_one_end(Setting(d=5, L=40, sigma2=0.1), 2, 0.01, 0.01), 1)
    44.1
    """
    growth = math.log(2.0 / ((1.0 + setting.kappa) * num_heads * scale**2)) / 4.0
    c = (1.0 + setting.sigma2) / setting.L
    return growth + math.log(1.0 / tolerance) / (2.0 * c * num_heads)


#: The cache name of `random_init_stages`'s arrays and the version of the code making them (bump
#: it when a change can alter them; `validation.cache.producers`).
ARTEFACT, ARTEFACT_VERSION = "random-init-stages", 1


def random_init_stages(
    setting: Setting,
    num_heads: int,
    seeds: Sequence[int | Sequence[int]] = tuple(range(20)),
    scale: float = 1e-2,
    t_end: float = 1e4,
    tolerance: float = 1e-2,
    solver: ODESolver | None = None,
    n_times: int = 300,
) -> RandomInitStages:
    """Run gradient flow on Ltilde (4.1) from omega, mu ~ N(0, scale^2 I_H) for each seed.

    Args:
        setting: the problem (d, L, sigma2).
        num_heads: H >= 2.
        seeds: one flow per seed; its start is numpy.random.default_rng(seed).normal(0,
            scale, (2, H)) (omega, then mu). A seed is an int or a tuple of ints (the entropy
            of a SeedSequence, e.g. (design_seed, H, s)).
        scale: standard deviation of the initial omega_h and mu_h, > 0.
        t_end: integration time.
        tolerance: threshold for zero-sum ratio and KQ dispersion.
        solver: default LSODA with rtol 1e-8, atol 1e-10 (times are read on a grid).
        n_times: saved times, log-spaced from 0 to t_end (`SaveAt.log_spaced`), >= 2.

    >>> from icl_verify.theory import Setting
    >>> result = random_init_stages(Setting(d=5, L=40, sigma2=0.1), 3, seeds=(0,), t_end=1e3)
    >>> bool(result.stage_one_time[0] < result.homogeneous_time[0] < 1e3), result.dummy_fraction
    (True, 0.0)
    >>> bool(result.final_loss_gap[0] < 1e-3), result.mu_dot_omega.shape  # on S_omega
    (True, (1, 300))
    """
    if not (isinstance(num_heads, int) and num_heads >= 2):
        raise ValueError(f"num_heads must be an integer >= 2, got {num_heads!r}")
    if not (math.isfinite(scale) and scale > 0):
        raise ValueError(f"scale must be a finite number > 0, got {scale!r}")
    if len(seeds) == 0:
        raise ValueError("seeds must hold at least one seed, got none")
    solver = solver if solver is not None else ODESolver(rtol=1e-8, atol=1e-10)
    saveat = SaveAt.log_spaced((0.0, t_end), n=n_times)
    rows = []
    for seed in seeds:
        omega0, mu0 = np.random.default_rng(seed).normal(0.0, scale, (2, num_heads))
        path = gradient_flow(omega0, mu0, setting, (0.0, t_end), solver, saveat)
        types = path.head_types()  # (T, H)
        active = types[-1] != DUMMY
        sign, zero_sum, dispersion = path.sign_matched(), path.zero_sum_ratio, path.kq_dispersion()
        loss_gap = path.loss[-1] - manifold_loss(np.abs(path.omega[-1][active]).mean(), setting)
        rows.append({
            "mu_dot_omega": path.mu_dot_omega,
            "sign_matching_time": _appearance_time(path.t, sign),
            "zero_sum_time": _appearance_time(path.t, zero_sum <= tolerance),
            "homogeneous_time": _appearance_time(path.t, dispersion <= tolerance),
            "final_omega": path.omega[-1], "final_mu": path.mu[-1],
            "final_sign_matched": sign[-1], "final_zero_sum_ratio": zero_sum[-1],
            "final_dispersion": dispersion[-1], "final_loss_gap": float(loss_gap),
            "final_distance": path.manifold_distance()[-1],
            "dummy_heads": int(np.sum(~active)),
        })  # fmt: skip
    columns = {key: np.array([row[key] for row in rows]) for key in rows[0]}
    return RandomInitStages(
        setting=setting, num_heads=num_heads, scale=float(scale), t_end=float(t_end),
        tolerance=float(tolerance), seeds=np.asarray(seeds), t=saveat.ts.copy(), **columns,
    )  # fmt: skip
