"""The statistics every layer uses: means with standard errors, paired differences, proportions,
the bootstrap, log-log slope fits and Richardson extrapolation (numpy, float64; no torch).

One definition of each, so that a claim's error bar means the same thing wherever it is
computed:

- `mean_se`: the sample mean and its standard error ``s / sqrt(n)`` (``ddof = 1``);
- `mean_of_estimates`: the mean of n estimates, their SEs combined as independent ones;
- `group_means`: the plain mean of the last axis over each group of its indices (the
  coordinate groups of a multi-task setting);
- `paired_difference`: `mean_se` of ``a - b`` over the pairing axis: two predictors on the
  same prompts, so what they share cancels;
- `ratio_of_means`: ``mean(a) / mean(b)`` of paired values with its delta-method standard
  error (two estimators' risks on the same prompts);
- `proportion`: a fraction of independent trials with its Agresti-Coull standard error, honest
  at 0 and at n successes (Agresti & Coull 1998);
- `replicate_spread`: per value, the standard deviation of the values that share its
  configuration (trained replicates: the variation across training seeds);
- `replicate_mean`: the mean of a value measured on R replicates, with an SE from their spread
  beside the Monte Carlo one and a small-sample t factor (`ReplicateMean`);
- `quantile_se`: a sample quantile with its distribution-free standard error (order
  statistics one binomial SD of the count either side);
- `bootstrap_se`: the bootstrap standard error of a mean over rows (resampling them);
- `batch_means_se`: the standard error of the mean of a correlated series (a training log),
  from the means of consecutive batches;
- `loglog_slope`: the least-squares slope of log|y| on log x, with its SE from the residuals,
  and `propagated_loglog_slope`, with its SE propagated from each point's own SE;
- `richardson`: the eps -> 0 limit of ``v0 + v2 eps^2 + O(eps^4)`` and a bound on its error;
- `family_z_bound`: the |z| (or |t|) bound that ``count`` independent estimates together
  exceed with a given probability (Bonferroni).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

__all__ = [
    "family_z_bound",
    "LogLogFit",
    "batch_means_se",
    "bootstrap_se",
    "group_means",
    "loglog_slope",
    "mean_of_estimates",
    "mean_se",
    "paired_difference",
    "propagated_loglog_slope",
    "proportion",
    "quantile_se",
    "ratio_of_means",
    "ReplicateMean",
    "replicate_mean",
    "replicate_spread",
    "richardson",
]


def mean_se(values, axis: int = -1) -> tuple[np.ndarray, np.ndarray]:
    """The mean of ``values`` along ``axis`` and its standard error ``s / sqrt(n)`` (ddof = 1).

    >>> mean, se = mean_se([1.0, 2.0, 3.0, 4.0])
    >>> float(mean), round(float(se), 6)
    (2.5, 0.645497)
    """
    values = np.asarray(values, dtype=float)
    n = values.shape[axis]
    return values.mean(axis=axis), values.std(axis=axis, ddof=1) / np.sqrt(n)


def mean_of_estimates(values, stderrs, axis: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """The mean of n estimates along ``axis`` and its standard error ``sqrt(sum SE_i^2) / n``,
    the SEs combined as those of independent estimates (e.g. several trained members' Monte
    Carlo means averaged into one curve).

    >>> mean, se = mean_of_estimates([1.0, 2.0, 4.0], [0.3, 0.4, 1.2])
    >>> round(float(mean), 6), round(float(se), 6)  # sqrt(0.09 + 0.16 + 1.44) / 3
    (2.333333, 0.433333)
    """
    values, stderrs = np.asarray(values, dtype=float), np.asarray(stderrs, dtype=float)
    n = values.shape[axis]
    return np.mean(values, axis=axis), np.sqrt(np.sum(stderrs**2, axis=axis)) / n


def group_means(values, groups) -> np.ndarray:
    """(..., d) -> (..., G): the mean of ``values`` over each group of last-axis indices (tuples
    of indices, e.g. `theory.support_groups`).

    >>> group_means(np.array([1.0, 3.0, 5.0, 6.0]), ((0, 1), (2, 3)))
    array([2. , 5.5])
    """
    values = np.asarray(values)
    return np.stack([values[..., list(g)].mean(axis=-1) for g in groups], axis=-1)


def paired_difference(a, b, axis: int = -1) -> tuple[np.ndarray, np.ndarray]:
    """`mean_se` of ``a - b`` along ``axis``: the two evaluated on the same draws (paired).

    >>> mean, se = paired_difference([1.0, 2.0, 3.0], [0.5, 1.5, 2.0])
    >>> round(float(mean), 6), round(float(se), 6)
    (0.666667, 0.166667)
    """
    return mean_se(np.asarray(a, dtype=float) - np.asarray(b, dtype=float), axis=axis)


def ratio_of_means(a, b) -> tuple[float, float]:
    """``r = mean(a) / mean(b)`` for paired values (``a_i``, ``b_i`` on the same draw) and its
    delta-method standard error ``|r| sd(a_i/A - b_i/B) / sqrt(N)`` (``ddof = 1``; A, B the
    means), the covariance of the pair counted; inf for one pair.

    >>> ratio_of_means([2.0, 4.0, 6.0], [1.0, 2.0, 3.0])
    (2.0, 0.0)
    >>> ratio, se = ratio_of_means([2.0, 3.0, 7.0], [1.0, 2.0, 3.0])
    >>> round(ratio, 6), round(se, 6)  # 2 sd(a/4 - b/2) / sqrt(3), sd(0, -0.25, 0.25) = 0.25
    (2.0, 0.288675)
    """
    a, b = np.asarray(a, dtype=float).ravel(), np.asarray(b, dtype=float).ravel()
    A, B = a.mean(), b.mean()
    n = a.size
    spread = (a / A - b / B).std(ddof=1) if n > 1 else math.inf
    ratio = float(A / B)
    return ratio, abs(ratio) * float(spread) / math.sqrt(n)


def proportion(successes) -> tuple[float, float]:
    """The fraction k/n of True among n trials and its Agresti-Coull standard error
    ``sqrt(p~ (1 - p~) / (n + 4))``, ``p~ = (k + 2) / (n + 4)``: honest at k = 0 and k = n,
    where the Wald SE ``sqrt(p (1 - p) / n)`` is 0.

    >>> fraction, se = proportion([True] * 40)
    >>> fraction, round(se, 4)  # 40/40, yet the SE is not 0
    (1.0, 0.0314)
    """
    successes = np.asarray(successes, dtype=bool)
    n, k = successes.size, float(np.sum(successes))
    if n == 0:
        raise ValueError("successes must hold at least one trial, got none")
    tilde = (k + 2.0) / (n + 4.0)
    return k / n, math.sqrt(tilde * (1.0 - tilde) / (n + 4.0))


def replicate_spread(values, configurations) -> np.ndarray:
    """Per value, the standard deviation (ddof = 1) of the values that share its configuration:
    the variation across replicates (e.g. trained models that differ only by their seeds), which
    an error bar must hold for a verdict not to depend on the seed.

    A configuration met once has no spread of its own: it gets the pooled within-configuration
    SD ``sqrt(sum (n_c - 1) s_c^2 / sum (n_c - 1))`` (a common variance assumed), and inf when no
    configuration has two values (nothing says how far another seed would land).

    Args:
        values: (n,) one reading per replicate (or per head of a replicate).
        configurations: (n,) a label per value; equal labels are replicates of each other.

    >>> replicate_spread([1.0, 3.0, 5.0, 10.0], [2, 2, 2, 4]).tolist()  # SD(1, 3, 5) = 2, pooled
    [2.0, 2.0, 2.0, 2.0]
    >>> replicate_spread([1.0, 2.0], [1, 2]).tolist()  # no replicates at all
    [inf, inf]
    """
    values = np.asarray(values, dtype=float)
    configurations = np.asarray(configurations)
    if values.shape != configurations.shape or values.ndim != 1:
        raise ValueError(
            f"values and configurations must be 1-D of one length, got {values.shape}, "
            f"{configurations.shape}"
        )
    spread = np.empty_like(values)
    squares, dof = 0.0, 0
    alone = np.zeros(values.shape, dtype=bool)
    for label in np.unique(configurations):
        mine = configurations == label
        if mine.sum() < 2:
            alone |= mine
            continue
        spread[mine] = values[mine].std(ddof=1)
        squares += float(((values[mine] - values[mine].mean()) ** 2).sum())
        dof += int(mine.sum()) - 1
    spread[alone] = math.sqrt(squares / dof) if dof else math.inf
    return spread


def quantile_se(values, q: float) -> tuple[float, float]:
    """The q-quantile of a sample (``np.quantile``, linear interpolation) and its standard error,
    distribution-free: the count of values below the quantile is binomial(N, q), one SD
    ``sqrt(N q (1 - q))``, so the order statistics at ranks ``N q -+ sqrt(N q (1 - q))`` bracket
    the quantile by about one SE each side, and the SE is half their distance.

    >>> x = np.random.default_rng(0).standard_normal(20000)
    >>> value, se = quantile_se(x, 0.05)  # -1.645; sqrt(q(1-q)/N) / phi(1.645) = 0.0150
    >>> bool(abs(value + 1.645) < 0.05), bool(0.01 < se < 0.02)
    (True, True)
    """
    x = np.sort(np.asarray(values, dtype=float).ravel())
    if x.size < 2 or not 0 < q < 1:
        raise ValueError(f"need >= 2 values and 0 < q < 1, got {x.size} values and q = {q!r}")
    half = math.sqrt(x.size * q * (1.0 - q))
    low = x[max(0, math.floor(x.size * q - half))]
    high = x[min(x.size - 1, math.ceil(x.size * q + half))]
    return float(np.quantile(x, q)), float(high - low) / 2.0


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


def bootstrap_se(rows, resamples: int, rng: np.random.Generator) -> np.ndarray:
    """The bootstrap standard error of the mean over the rows (axis 0) of ``rows``: the standard
    deviation (ddof = 1) of the means of ``resamples`` resamples of the rows with replacement.

    >>> rows = np.arange(10.0)[:, None]
    >>> se = bootstrap_se(rows, 2000, np.random.default_rng(0))
    >>> bool(abs(se[0] - rows.std(ddof=0) / np.sqrt(10)) < 0.1)  # the plug-in SE, 0.908
    True
    """
    rows = np.asarray(rows, dtype=float)
    M = rows.shape[0]
    picks = rng.integers(0, M, size=(resamples, M))
    return rows[picks].mean(axis=1).std(axis=0, ddof=1)


def batch_means_se(series, batches: int = 5) -> float:
    """The standard error of the mean of a correlated series (NaN entries skipped): the series
    is cut into ``batches`` consecutive batches and the SE is that of the batch means
    (``std(ddof=1) / sqrt(batches)``), so correlated noise within a batch is not counted as
    independent; one batch: the plain standard deviation.

    >>> round(batch_means_se(np.arange(10.0), batches=5), 4)
    1.4142
    """
    series = np.asarray(series, dtype=float)
    if batches <= 1:
        return float(np.nanstd(series))
    means = np.array([np.nanmean(chunk) for chunk in np.array_split(series, batches)])
    return float(np.std(means, ddof=1) / np.sqrt(batches))


@dataclass(frozen=True)
class LogLogFit:
    """A least-squares line ``log|y| = intercept + slope log x`` and the slope's standard error."""

    slope: float
    slope_se: float
    intercept: float


def loglog_slope(x, y) -> LogLogFit:
    """Ordinary least squares of log|y| on log x; the slope's SE from the residuals.

    Args:
        x: positive abscissae, shape (n,), n >= 3.
        y: nonzero ordinates, shape (n,).

    >>> fit = loglog_slope([1.0, 2.0, 4.0, 8.0], [3.0, 12.0, 48.0, 192.0])
    >>> round(fit.slope, 12), round(fit.slope_se, 12)
    (2.0, 0.0)
    """
    log_x, log_y = np.log(np.asarray(x, dtype=float)), np.log(np.abs(np.asarray(y, dtype=float)))
    if log_x.ndim != 1 or log_x.shape != log_y.shape or log_x.size < 3:
        raise ValueError(
            f"x and y must be 1-D of the same length >= 3, got {log_x.shape}, {log_y.shape}"
        )
    design = np.stack([np.ones_like(log_x), log_x], axis=1)
    coef, *_ = np.linalg.lstsq(design, log_y, rcond=None)
    residual = log_y - design @ coef
    dof = log_x.size - 2
    variance = residual @ residual / dof * np.linalg.inv(design.T @ design)[1, 1]
    return LogLogFit(float(coef[1]), math.sqrt(max(variance, 0.0)), float(coef[0]))


def propagated_loglog_slope(x, y, se) -> tuple[float, float]:
    """The least-squares slope of log|y| on log x and its SE propagated from each point's SE.

    For a few points that each carry a known standard error (independent draws per point):
    the slope is sum_i w_i log y_i with w_i = (log x_i - mean) / sum_j (log x_j - mean)^2, so
    its SE is sqrt(sum_i (w_i se_i / y_i)^2). `loglog_slope` instead estimates the SE from the
    residuals, which on 3-6 points have 1-4 degrees of freedom and ignore the points' own SEs.
    (NaN, 0) when a value is 0, inf or NaN.

    >>> slope, se = propagated_loglog_slope([1, 10, 100], [1, 0.1, 0.01], [0.1, 0.01, 1e-3])
    >>> round(slope, 12), round(se, 4)  # 10% SE per point: sqrt(2) 0.1 / ln(100)
    (-1.0, 0.0307)
    """
    log_x = np.log(np.asarray(x, dtype=float))
    value = np.asarray(y, dtype=float)
    weights = (log_x - log_x.mean()) / np.sum((log_x - log_x.mean()) ** 2)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        slope = float(np.sum(weights * np.log(np.abs(value))))
        error = float(np.sqrt(np.sum((weights * np.asarray(se, dtype=float) / value) ** 2)))
    if not (math.isfinite(slope) and math.isfinite(error)):
        return math.nan, 0.0
    return slope, error


def richardson(values, eps) -> tuple[np.ndarray, np.ndarray]:
    """The eps -> 0 limit of ``values(eps) = v0 + v2 eps^2 + O(eps^4)`` and a bound on its error.

    Richardson's extrapolation from the two smallest eps (``eps`` decreasing along axis 0 of
    ``values``); the bound is its distance to the extrapolation from the next pair, whose
    O(eps^4) error is the larger of the two.

    >>> eps = np.array([0.4, 0.2, 0.1])
    >>> limit, bound = richardson(1.0 + 3.0 * eps**2 + eps**4, eps)
    >>> round(float(limit), 6), round(float(bound), 6)  # true error 4e-4, within the bound
    (0.9996, 0.006)
    """
    values, eps = np.asarray(values, dtype=float), np.asarray(eps, dtype=float)

    def extrapolate(k: int) -> np.ndarray:
        small, large = eps[k] ** 2, eps[k - 1] ** 2
        return (large * values[k] - small * values[k - 1]) / (large - small)

    limit = extrapolate(eps.size - 1)
    return limit, np.abs(limit - extrapolate(eps.size - 2))


def family_z_bound(rate: float, count: int, dof: int | None = None) -> float:
    """The bound on |z| that any of ``count`` estimates exceeds with probability at most
    ``rate`` when each is exact (Bonferroni): the normal quantile at 1 - rate / (2 count), or
    Student's t with ``dof`` degrees of freedom when the standard errors are themselves
    estimated from dof + 1 independent blocks.

    >>> round(family_z_bound(0.01, 72), 2), round(family_z_bound(0.01, 125, dof=39), 2)
    (3.81, 4.41)
    """
    from scipy.stats import norm, t

    tail = rate / (2 * count)
    return float(norm.isf(tail) if dof is None else t.isf(tail, dof))

