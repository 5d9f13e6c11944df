"""Theorem 5.3 of Chen, Zhao, Zou (2024), the isotropic case: pre-gd's upper bound against the
lower bounds of OLS, ridge and GD, the Lasso rate, and exact OLS risks (numpy float64).

Setting (reference chen2024 §4.4): ``Sigma = I``, a uniform random support of size s, ``w*_i``
uniform on ``{-1/sqrt(s), +1/sqrt(s)}`` there (``||w*|| = 1``), label noise of standard deviation
sigma. Every expression is an excess risk ``(v - w*)^T (v - w*)`` (reference §1.1, §6: no 1/2).

- `theorem_5_3_upper_bound`: ``sigma^2 log^2(n s / sigma^2) log^2(d / delta) (s/n + d s^2/n^2)``
  (the theorem), or with ``d s / n^2`` (the discussion's reading, reference §7 item 11);
- `theorem_5_3_lower_bound`: ``sigma^2 d / n`` when n >= d, ``1 - n/d + sigma^2 n / d`` when n < d
  (the headline forms, i.e. lambda = O(1) and eta t >~ 1);
- `ols_excess_risk`: the exact expected excess risk of OLS on a Gaussian design,
  ``sigma^2 d / (n - d - 1)`` for n > d + 1 and, minimum-norm, ``||w*||^2 (1 - n/d)
  + sigma^2 n / (d - n - 1)`` for d > n + 1 (standard; Hastie, Montanari, Rosset, Tibshirani
  2022, finite-sample isotropic case; not from the paper);
- `lasso_rate`: ``sigma^2 s log(d / s) / n``, the classical rate behind the paper's "Lasso attains
  O~(s/n)" (stated there without citation; the explicit log is the standard minimax one);
- `theorem_5_3_step_budget`: the absolute ``eta t`` that F.1's bias step asks for, in either reading
  of the paper's condition on t (reference §7 item 11);
- `app_f1_step_count`, `app_f1_bias_bound`, `app_f1_variance_bound`: the bias and variance
  bounds of App. F.1 (the section proving the upper bound; not Lemma F.1) at a step ``eta``
  and the step count its bias step asks for;
- `lemma_f1_noise_bound`: Lemma F.1's ``sigma^2 d / n``, the high-probability lower bound on
  ``||X^T eps / n||^2`` behind the lower bounds;
- the s-exponents of the bound and of that budget over a grid of sparsities
  (`theorem_5_3_sparsity_exponent`, `theorem_5_3_step_exponent`), and the log-log slopes the
  bound's log factors add in n and in d (`theorem_5_3_n_log_slope`, `theorem_5_3_d_log_slope`).
"""

from __future__ import annotations

import numpy as np

from icl_verify.statistics import loglog_slope

__all__ = [
    "READINGS",
    "STEP_READINGS",
    "app_f1_bias_bound",
    "app_f1_step_count",
    "app_f1_variance_bound",
    "lasso_rate",
    "lemma_f1_noise_bound",
    "ols_excess_risk",
    "theorem_5_3_d_log_slope",
    "theorem_5_3_lower_bound",
    "theorem_5_3_n_log_slope",
    "theorem_5_3_sparsity_exponent",
    "theorem_5_3_step_budget",
    "theorem_5_3_step_exponent",
    "theorem_5_3_upper_bound",
]

READINGS = ("theorem", "discussion")  # d s^2/n^2 (Theorem 5.3) or d s/n^2 (its discussion)
STEP_READINGS = ("beta", "appendix")  # t >~ log/(eta beta^2), beta^2 = 1/s; or F.1's log/(eta s)


def _positive(name: str, value) -> np.ndarray:
    array = np.asarray(value, dtype=np.float64)
    if np.any(~(array > 0)) or np.any(~np.isfinite(array)):
        raise ValueError(f"{name} must be finite and > 0, got {value!r}")
    return array


def theorem_5_3_upper_bound(n, d, s, sigma, *, delta: float = 0.1, reading: str = "theorem"):
    """Theorem 5.3's upper bound on pre-gd's excess risk, without its constant (reference §4.4).

    ``sigma^2 log^2(n s / sigma^2) log^2(d / delta) (s/n + d s^2/n^2)``; ``reading="discussion"``
    puts ``d s / n^2`` for ``d s^2 / n^2`` (the paper's discussion quotes O~(d s/n^2), reference
    §7 item 11). sigma is the noise standard deviation (> 0: the bound's log needs it).
    Arrays broadcast.

    >>> round(float(theorem_5_3_upper_bound(256, 64, 4, 1.0)), 3)  # ln²1024 ln²640 (1/64 + 1/64)
    62.685
    >>> r = theorem_5_3_upper_bound(100, 400, [2, 8], 0.5, reading="discussion")
    >>> [round(float(v), 4) for v in r / theorem_5_3_upper_bound(100, 400, [2, 8], 0.5)]
    [0.5556, 0.1515]
    """
    if reading not in READINGS:
        raise ValueError(f"reading must be one of {', '.join(READINGS)}, got {reading!r}")
    n, d, s, sigma = (_positive(k, v) for k, v in (("n", n), ("d", d), ("s", s), ("sigma", sigma)))
    _positive("delta", delta)
    quadratic = d * s**2 / n**2 if reading == "theorem" else d * s / n**2
    logs = np.log(n * s / sigma**2) ** 2 * np.log(d / delta) ** 2
    return sigma**2 * logs * (s / n + quadratic)


def theorem_5_3_lower_bound(n, d, sigma):
    """Theorem 5.3's lower bound for OLS, ridge and GD, in expectation over w* (reference §4.4).

    ``sigma^2 d / n`` where n >= d and ``1 - n/d + sigma^2 n / d`` where n < d (the theorem's
    two regimes n >~ d and d >~ n, headline forms: lambda = O(1), eta t >~ 1), without the
    constant. Arrays broadcast.

    >>> theorem_5_3_lower_bound([256, 50], [64, 400], [1.0, 0.5]).tolist()
    [0.25, 0.90625]
    """
    n, d = _positive("n", n), _positive("d", d)
    sigma = np.asarray(sigma, dtype=np.float64)
    if np.any(~(sigma >= 0)):
        raise ValueError(f"sigma must be >= 0, got {sigma!r}")
    return np.where(n >= d, sigma**2 * d / n, 1.0 - n / d + sigma**2 * n / d)


def ols_excess_risk(n, d, sigma, signal_norm2: float = 1.0):
    """Exact expected excess risk of OLS on x ~ N(0, I_d), given ``||w*||^2`` (a standard result,
    not the paper's: Hastie, Montanari, Rosset, Tibshirani 2022, finite-sample isotropic case).

    ``sigma^2 d / (n - d - 1)`` for n > d + 1 (``E tr((X^T X)^{-1}) = d / (n - d - 1)``);
    for d > n + 1 the minimum-norm interpolant, ``||w*||^2 (1 - n/d) + sigma^2 n / (d - n - 1)``
    (bias: the part of w* outside the rows' span; variance: ``sigma^2 E tr((X X^T)^{-1})``);
    inf for |n - d| <= 1 (the interpolation peak: the expectation diverges). Arrays broadcast.

    >>> ols_excess_risk([256, 50, 64], [64, 400, 64], [1.0, 0.5, 1.0]).round(6).tolist()
    [0.335079, 0.910817, inf]
    """
    n, d = _positive("n", n), _positive("d", d)
    sigma = np.asarray(sigma, dtype=np.float64)
    if np.any(~(sigma >= 0)):
        raise ValueError(f"sigma must be >= 0, got {sigma!r}")
    with np.errstate(divide="ignore", invalid="ignore"):
        over = sigma**2 * d / (n - d - 1)
        under = signal_norm2 * (1.0 - n / d) + sigma**2 * n / (d - n - 1)
    return np.where(n > d + 1, over, np.where(d > n + 1, under, np.inf))


def lasso_rate(n, d, s, sigma):
    """The Lasso's excess-risk rate ``sigma^2 s log(d / s) / n`` without its constant: the paper's
    "Lasso attains O~(s/n)" when d <~ n (reference §4.4), with the standard minimax log made
    explicit (at fixed d and s it is a constant, so its n-slope is exactly -1). Arrays broadcast.

    >>> round(float(lasso_rate(1024, 64, 4, 1.0)), 6)  # 4 ln 16 / 1024
    0.01083
    """
    n, d, s = _positive("n", n), _positive("d", d), _positive("s", s)
    return np.asarray(sigma, dtype=np.float64) ** 2 * s * np.log(d / s) / n


def theorem_5_3_step_budget(n, s, sigma, *, reading: str = "beta"):
    """The absolute ``eta t`` (step size times step count) that the bias step of Theorem 5.3's
    proof (App. F.1) asks for, without its constant (reference §4.4, §7 item 11).

    F.1 bounds the bias by ``s (1 - eta beta^2 / 2)^{2t} <= sigma^2 / n``, which holds once
    ``t >~ log(n s / sigma^2) / (eta beta^2)``; with ``beta^2 = 1/s`` that is
    ``eta t >~ s log(n s / sigma^2)`` (``reading="beta"``, the substitution). F.1 prints
    ``t >~ log(n s / sigma^2) / (eta s)``, i.e. ``eta t >~ log(n s / sigma^2) / s``
    (``reading="appendix"``). The two differ by s^2: exponent +1 against -1 in s.
    Arrays broadcast.

    >>> theorem_5_3_step_budget(1024, [2, 8], 1.0).round(3).tolist()  # s ln(1024 s)
    [15.249, 72.087]
    >>> theorem_5_3_step_budget(1024, [2, 8], 1.0, reading="appendix").round(4).tolist()
    [3.8123, 1.1264]
    """
    if reading not in STEP_READINGS:
        raise ValueError(f"reading must be one of {', '.join(STEP_READINGS)}, got {reading!r}")
    n, s, sigma = (_positive(k, v) for k, v in (("n", n), ("s", s), ("sigma", sigma)))
    log = np.log(n * s / sigma**2)
    return s * log if reading == "beta" else log / s


def app_f1_step_count(n, s, sigma, eta, *, reading: str = "beta"):
    """The step count t of App. F.1's bias step at the absolute step ``eta``: the smallest
    integer with ``eta t >=`` `theorem_5_3_step_budget` (constant 1), at least 1.

    >>> app_f1_step_count(1024, 4, 1.0, 2.0).tolist()  # 4 ln(4096) / 2 = 16.6
    17
    """
    budget = theorem_5_3_step_budget(n, s, sigma, reading=reading)
    return np.maximum(np.ceil(budget / _positive("eta", eta)), 1).astype(int)


def app_f1_bias_bound(s, eta, t):
    """App. F.1's bias bound ``s (1 - eta beta^2 / 2)^{2t}`` with ``beta^2 = 1/s`` (the
    ``±1/sqrt(s)`` prior's margin, Sigma = I); meaningful for ``eta beta^2 <= 2``.

    >>> float(app_f1_bias_bound(4, 2.0, 3))  # 4 (3/4)^6
    0.7119140625
    """
    s, eta = _positive("s", s), _positive("eta", eta)
    return s * (1.0 - eta / (2.0 * s)) ** (2 * np.asarray(t))


def app_f1_variance_bound(n, d, s, sigma, eta, t, *, delta: float = 0.1):
    """App. F.1's variance bound, without its constant:
    ``eta t log t (sigma^2 log(d/delta) / n + sigma^2 ||w*||_1^2 d log^2(d/delta) / n^2)``,
    ``||w*||_1^2 = s`` under the ``±1/sqrt(s)`` prior; ``log t`` read as ``max(log t, 1)``.

    >>> L = np.log(10 / 0.1)
    >>> bool(np.isclose(app_f1_variance_bound(100, 10, 2, 1.0, 1.0, 1), L / 100
    ...                                        + 2 * 10 * L**2 / 100**2))
    True
    """
    n, t = _positive("n", n), _positive("t", t)
    log_d = np.log(d / delta)
    rate = sigma**2 * log_d / n + sigma**2 * s * d * log_d**2 / n**2
    return eta * t * np.maximum(np.log(t), 1.0) * rate


def lemma_f1_noise_bound(n, d, sigma):
    """Lemma F.1's lower bound ``sigma^2 d / n`` on ``||X^T eps / n||^2`` (up to its constant;
    with probability >= 1 - delta): X (n, d) with N(0, I_d) rows, eps ~ N(0, sigma^2 I_n).
    ``E ||X^T eps / n||^2 = sigma^2 d / n`` exactly (each of the d coordinates has variance
    sigma^2 / n), so the bound is the quantity's own order. n, d: arrays broadcast together.

    >>> lemma_f1_noise_bound(np.array([100.0, 400.0]), 8, 0.5).tolist()
    [0.02, 0.005]
    """
    n, d = _positive("n", n), _positive("d", d)
    return np.asarray(sigma, dtype=np.float64) ** 2 * d / n


def theorem_5_3_sparsity_exponent(n, d, s, sigma, *, delta: float = 0.1, reading: str = "theorem"):
    """The s-exponent of `theorem_5_3_upper_bound` over the sparsities s at fixed n, d, sigma:
    the least-squares slope of log(bound) on log s (`icl_verify.statistics.loglog_slope`): 2
    where ``d s^2/n^2`` dominates (theorem) or 1 (discussion), plus what ``log^2(n s/sigma^2)``
    adds (reference §7 item 11). s: >= 3 values.

    >>> [round(theorem_5_3_sparsity_exponent(100, 400, [2, 4, 8], 0.5, reading=r), 3)
    ...  for r in READINGS]
    [2.209, 1.272]
    """
    s = np.asarray(s, dtype=float)
    bound = theorem_5_3_upper_bound(n, d, s, sigma, delta=delta, reading=reading)
    return loglog_slope(s, bound).slope


def theorem_5_3_step_exponent(n, s, sigma, *, reading: str = "beta") -> float:
    """The s-exponent of `theorem_5_3_step_budget` over the sparsities s at fixed n and sigma: the
    least-squares slope of log(eta t) on log s, +1 (beta) or -1 (appendix) plus what
    ``log(n s / sigma^2)`` adds (reference §7 item 11). s: >= 3 values.

    >>> [round(theorem_5_3_step_exponent(2048, [2, 4, 8], 1.0, reading=r), 3)
    ...  for r in STEP_READINGS]
    [1.111, -0.889]
    """
    s = np.asarray(s, dtype=float)
    return loglog_slope(s, theorem_5_3_step_budget(n, s, sigma, reading=reading)).slope


def theorem_5_3_n_log_slope(n, s, sigma):
    """The slope in log n that the bound's ``log^2(n s / sigma^2)`` adds at n, against a rate
    free of it (pre-gd's bound over the Lasso's ``s/n``): ``d/dlog n of 2 log log(n s/sigma^2)
    = 2 / log(n s / sigma^2)``, largest at the smallest n.

    >>> round(float(theorem_5_3_n_log_slope(256, 4, 1.0)), 4)  # 2 / ln 1024
    0.2885
    """
    return 2.0 / np.log(n * s / sigma**2)


def theorem_5_3_d_log_slope(d_min, d_max, delta: float) -> float:
    """The slope in log d that the bound's ``log^2(d / delta)`` takes from a ratio against d
    between d_min and d_max: ``2 (log log(d_max/delta) - log log(d_min/delta)) /
    log(d_max/d_min)``.

    >>> round(theorem_5_3_d_log_slope(8, 64, 0.1), 4)
    0.3735
    """
    lo, hi = (np.log(np.log(d / delta)) for d in (d_min, d_max))
    return float(2 * (hi - lo) / np.log(d_max / d_min))
