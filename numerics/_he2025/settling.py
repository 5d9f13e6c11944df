"""A trained ensemble's logged series read at the end of training (He et al. 2025 §3, App. A):
a trained model is read where its training ended, and its error bar comes from the logged
history (`numerics.TrainedEnsemble`: omega, mu and the circuits every ``log_every`` steps).

- `logging_noise`: the Adam noise of a logged series about its trend;
- `settled_value`: an end value with the error of a value that may still drift;
- `settled_mean`: the value the last quarter of the logs fluctuates around, with its error;
- `logged_steps`: the logs nearest to geometrically spaced steps (the snapshots drawn).
"""

from __future__ import annotations

import numpy as np

from icl_verify.statistics import batch_means_se

__all__ = ["logged_steps", "logging_noise", "settled_mean", "settled_value"]


def logging_noise(series: np.ndarray) -> float:
    """SD of the fluctuation of a logged series about its trend over the last quarter of logs.

    The residual SD of a straight-line fit to the last quarter: it contains the Adam noise,
    including its slow (correlated over many logs) part, but not the trend. series: (n,), n >= 12.

    >>> rng = np.random.default_rng(0)
    >>> x = np.linspace(0, 1, 4000) + 0.01 * rng.normal(size=4000)
    >>> round(logging_noise(x), 3)
    0.01
    """
    x = np.asarray(series, dtype=float)
    last = x[-max(3, x.size // 4) :]
    t = np.arange(last.size)
    residual = last - np.polyval(np.polyfit(t, last, 1), t)
    return float(residual.std(ddof=2))


def settled_value(series: np.ndarray, toward: float | None = None) -> tuple[float, float]:
    """An end-of-training value and its error: ``(x[-1], error)``, from the logged series.

    ``drift = mean(last quarter) - mean(third quarter)``, ``noise = SD(last quarter)``, q logs
    per quarter. The error is ``|drift| + noise``: a settled value is judged to within its Adam
    noise. A value still drifting (``|drift| > 2 noise sqrt(2/q)``, two naive SEs of the
    difference of the quarter means) toward ``toward`` (the claimed limit, a structural
    constant such as 0 or 1) may still reach it: its error is ``|x[-1] - toward|``, so the claim
    reads inconclusive, never contradicted, until the value settles. NaN logs (lost at a
    resume) are skipped.
    series: (n,), n >= 4.

    >>> settled_value(np.r_[np.linspace(1, 0.5, 50), np.full(50, 0.5)], toward=0.0)
    (0.5, 0.0)
    >>> value, error = settled_value(np.linspace(1, 0.5, 100), toward=0.0)  # still falling
    >>> value, error
    (0.5, 0.5)
    >>> round(settled_value(np.linspace(1, 0.5, 100), toward=2.0)[1], 3)  # falling away
    0.163
    """
    x = np.asarray(series, dtype=float)
    quarter = max(1, x.size // 4)
    third, last = x[-2 * quarter : -quarter], x[-quarter:]
    drift = np.nanmean(last) - np.nanmean(third)
    noise = np.nanstd(last)
    value = float(x[-1])
    moving = abs(drift) > 2 * noise * np.sqrt(2 / quarter)
    approaching = toward is not None and moving and drift * (toward - value) > 0
    return value, float(abs(value - toward) if approaching else abs(drift) + noise)


def settled_mean(series: np.ndarray, batches: int = 5) -> tuple[float, float]:
    """Where a training settles: the mean of the last quarter of the logs, and its error.

    The error is ``|drift| + SE``: the drift of `settled_value` (last-quarter mean minus
    third-quarter mean) plus the batch-means standard error of the last-quarter mean (the
    quarter cut into ``batches`` consecutive batches, so correlated Adam noise is not counted
    as independent). Where `settled_value` judges the final snapshot within its Adam noise, this
    judges the value the noise fluctuates around. NaN logs are skipped. series: (n,), n >= 4.

    >>> rng = np.random.default_rng(0)
    >>> value, error = settled_mean(0.86 + 0.01 * rng.standard_normal(400))
    >>> abs(value - 0.86) < error < 0.01
    True
    """
    x = np.asarray(series, dtype=float)
    quarter = max(1, x.size // 4)
    third, last = x[-2 * quarter : -quarter], x[-quarter:]
    drift = np.nanmean(last) - np.nanmean(third)
    return float(np.nanmean(last)), float(abs(drift) + batch_means_se(last, batches))


def logged_steps(steps: np.ndarray, last: float, count: int) -> np.ndarray:
    """Indices of the logged ``steps`` nearest to ``count`` steps spaced geometrically from the
    first positive logged step to ``last`` (each index once, nearest in log step): the
    snapshots of He et al. Figures 1, 5 and 14.

    Args:
        steps: (n,) logged steps, ascending (`TrainedEnsemble.steps`).
        last: the last step wanted (e.g. the final step, or a tenth of it).
        count: snapshots wanted; fewer come back where two targets share a log.

    >>> logged_steps(np.arange(0, 1001, 10), 1000, 3)
    array([  1,  10, 100])
    """
    positive = steps[steps > 0]
    first = positive.min() if positive.size else 1
    targets = np.geomspace(first, max(last, first), count)
    nearest = np.abs(np.log(np.maximum(steps, 0.5))[:, None] - np.log(targets)).argmin(axis=0)
    return np.unique(nearest)
