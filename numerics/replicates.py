"""The spread across training replicates: a trained measurement's error bar with its seeds in it.

Members that share a configuration (the same heads, attention and data, init seeds differing)
are seeds, and a verdict is a property of the claim and its size, not of the draw (DESIGN.md,
"Seeds"). A value measured on each of R such members varies across them by more than the Monte
Carlo error of its test prompts: training's init and data stream leave each member elsewhere
in the valley. `replicate_mean` reads the R values as one measurement: their mean, with a
standard error from their spread beside the Monte Carlo one.

- `replicate_mean`: the mean over R replicates (axis 0) and its error bar
  ``t sqrt(s^2 / R + m^2)`` (`ReplicateMean`): s the replicates' standard deviation
  (ddof = 1), m the Monte Carlo SE of their mean, and t a small-sample factor: with R - 1
  degrees of freedom in s, z normal SEs would cover too little, so the bar is scaled until
  ``z`` times it covers what z exact SEs cover (Student's t at the Welch–Satterthwaite degrees
  of freedom of the sum). One replicate: no spread to read, an infinite bar.

Nothing here imports `theory`; numpy and scipy only.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["ReplicateMean", "replicate_mean"]


@dataclass(frozen=True, eq=False)
class ReplicateMean:
    """The mean of a value measured on R replicates and its error bar (arrays of one shape).

    Attributes:
        value: the mean over the replicates.
        stderr: the error bar, ``t_factor * sqrt(seeds^2 + monte_carlo^2)``; inf for R = 1.
        seeds: the SE of the mean from the replicates' spread, ``s / sqrt(R)`` (ddof = 1).
        monte_carlo: the Monte Carlo SE of the mean (see `replicate_mean`'s ``shared_draws``).
        dof: Welch–Satterthwaite degrees of freedom of ``stderr``, ``(R - 1) (1 + m^2/S^2)^2``
            with S = seeds and m = monte_carlo (inf: the Monte Carlo part alone, exact).
        t_factor: Student's t over the normal quantile at the coverage of ``z`` SEs (>= 1).
        count: R.
    """

    value: np.ndarray
    stderr: np.ndarray
    seeds: np.ndarray
    monte_carlo: np.ndarray
    dof: np.ndarray
    t_factor: np.ndarray
    count: int


def replicate_mean(
    values, stderrs=None, *, shared_draws: bool = True, z: float = 1.0
) -> ReplicateMean:
    """The mean of ``values`` over its replicates (axis 0) with the seeds' spread in its SE.

    ``values`` (R, ...): one measurement per replicate; ``stderrs`` (R, ...) their Monte Carlo
    SEs (None: values without Monte Carlo error). The Monte Carlo SE of the mean is
    ``mean_r SE_r`` when the replicates were measured on the same prompts (``shared_draws``,
    their errors correlated: by Minkowski's inequality the SD of a mean is at most the mean of
    the SDs, whatever the correlation), else ``sqrt(sum_r SE_r^2) / R`` (independent draws).
    The spread s (ddof = 1) holds the seeds' variation and the unshared part of the Monte Carlo
    error, which the second term then counts again: the bar errs on the wide side, by at most
    the Monte Carlo SE.

    The bar is ``t_factor sqrt(s^2/R + m^2)`` with ``t_factor = t_q(dof) / z``, t_q Student's
    quantile at the two-sided coverage of ``z`` normal SEs (``q = Phi(z)``) and ``dof`` the
    Welch–Satterthwaite degrees of freedom: a rule that allows z times the bar (a `Tolerance`
    adds 1 bar, a `ZScore` max_z bars) then covers what z exact SEs cover. With R = 3 and no
    Monte Carlo error, z = 1: t_0.841(2) = 1.321.

    >>> r = replicate_mean([1.0, 2.0, 3.0])
    >>> float(r.value), float(r.seeds), round(float(r.t_factor), 3), round(float(r.stderr), 3)
    (2.0, 0.5773502691896258, 1.321, 0.763)
    >>> r = replicate_mean([[1.0], [1.0]], [[0.1], [0.3]])  # no spread: the Monte Carlo SE alone
    >>> r.stderr.tolist(), r.dof.tolist()
    ([0.2], [inf])
    >>> float(replicate_mean([5.0]).stderr)  # one replicate: its spread is unknown
    inf
    """
    from scipy.stats import norm, t

    values = np.asarray(values, dtype=float)
    if values.ndim == 0 or values.shape[0] == 0:
        raise ValueError(f"values must hold R >= 1 replicates along axis 0, got {values.shape}")
    if not z > 0:
        raise ValueError(f"z must be > 0, got {z}")
    R = values.shape[0]
    if stderrs is None:
        monte_carlo = np.zeros(values.shape[1:])
    else:
        stderrs = np.broadcast_to(np.asarray(stderrs, dtype=float), values.shape)
        monte_carlo = (
            stderrs.mean(axis=0) if shared_draws else np.sqrt(np.sum(stderrs**2, axis=0)) / R
        )
    if R == 1:
        seeds = np.full(values.shape[1:], np.inf)
        dof = np.zeros(values.shape[1:])
        factor = np.full(values.shape[1:], np.inf)
        stderr = seeds.copy()
    else:
        seeds = values.std(axis=0, ddof=1) / np.sqrt(R)
        with np.errstate(divide="ignore", invalid="ignore"):
            dof = np.where(seeds > 0, (R - 1) * (1.0 + (monte_carlo / seeds) ** 2) ** 2, np.inf)
        factor = np.where(np.isfinite(dof), t.isf(norm.sf(z), np.minimum(dof, 1e12)) / z, 1.0)
        stderr = factor * np.hypot(seeds, monte_carlo)
    return ReplicateMean(
        value=values.mean(axis=0),
        stderr=stderr,
        seeds=seeds,
        monte_carlo=monte_carlo,
        dof=dof,
        t_factor=factor,
        count=R,
    )
