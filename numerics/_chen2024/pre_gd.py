"""GD on raw vs preprocessed covariates, Chen, Zhao, Zou (2024) §6 and Figure 2c.

Both methods run GD from 0 on ``(1/2n) ||X w - y||^2`` of one prompt: ``gd`` on the raw x,
``pre-gd`` on Algorithm 1's ``x_tilde = R_hat x`` (reference chen2024 §2.6, §3.1-3.2). Their
exact excess risks along the path come from `sparse_regression.gd_excess_risks` (no test
sampling). Each curve's learning rate is chosen from a grid by the paper's rule, the lowest
average excess risk (reference §2.5), here at the final recorded step; it is chosen on one set
of prompts and every reported number is read on an independent set, so the paired gap
``risk(gd) - risk(pre-gd)`` carries no selection bias. A rate is divergent for a prompt when
``eta >= 2 / lambda_max`` of its (preprocessed) Gram matrix ``X^T X / n`` (GD's iterates then
grow without bound); a rate divergent for any prompt of either set is never chosen.

`compare_pre_gd` also tunes the learning rate and the stopping step jointly (early stopping,
the same split), since run to convergence with n > d both methods reach OLS (reference §4.5),
and reads the two least-squares baselines of §6 on the same prompts: ridge at its λ tuned the
same way, and OLS (minimum norm when n < d), each paired with pre-gd's final risk.
`pre_gd_comparison` draws the two sets of prompts of one noise level from a seed and compares.

Nothing here imports `theory`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch
from icl_verify.numerics._core.data import SparsePrompts, sample_sparse_regression
from icl_verify.numerics._core.estimators import feature_label_correlations
from icl_verify.numerics._core.sparse_regression import (
    gd_excess_risks,
    largest_gram_eigenvalue,
    least_squares_excess_risks,
    oracle_tuned,
)

from icl_verify.settings import SparseSetting

__all__ = [
    "LeastSquaresBaseline",
    "PreGdComparison",
    "TunedPath",
    "compare_pre_gd",
    "pre_gd_comparison",
    "stable_learning_rates",
]


@dataclass(frozen=True, eq=False)
class TunedPath:
    """One method's excess-risk path at its tuned learning rate, read on the held-out prompts.

    Attributes:
        rate: the learning rate chosen by the lowest mean final-step risk on the tuning prompts.
        mean, se: (T,) mean excess risk at each recorded step and its standard error.
        final_means: (K,) mean final-step risk of every grid rate on the tuning prompts (inf
            for a divergent rate).
        stable: (K,) whether each grid rate is below 2 / lambda_max for every prompt.
        min_step: the recorded step where `mean` is lowest (the curve's own minimum).
        best_rate, best_step: the (rate, step) of lowest mean risk on the tuning prompts
            (early stopping), and `best_mean`, `best_se` its risk on the held-out prompts.
    """

    rate: float
    mean: np.ndarray
    se: np.ndarray
    final_means: np.ndarray
    stable: np.ndarray
    min_step: int
    best_rate: float
    best_step: int
    best_mean: float
    best_se: float


@dataclass(frozen=True, eq=False)
class LeastSquaresBaseline:
    """A least-squares estimator on the held-out prompts beside pre-gd (§6).

    Attributes:
        lam: its λ (ridge ``(Σ̂ + λI)^{-1} Xᵀy/n``, chosen by the lowest mean risk on the
            tuning prompts; 0: OLS, minimum norm when n < d).
        mean, se: its mean excess risk on the held-out prompts and the SE.
        gap, gap_se: the mean paired difference risk(baseline) - risk(pre-gd) at pre-gd's
            final step, and its SE.
    """

    lam: float
    mean: float
    se: float
    gap: float
    gap_se: float


@dataclass(frozen=True, eq=False)
class PreGdComparison:
    """gd against pre-gd on the same prompts (Chen et al. 2024 Figure 2c, one noise level).

    Attributes:
        steps: (T,) the recorded GD step counts.
        rates: (K,) the learning-rate grid.
        gd, pre_gd: the two methods' `TunedPath`.
        final_gap, final_gap_se: mean over held-out prompts of the paired difference
            risk(gd) - risk(pre-gd) at the last step (each at its tuned rate), and its SE.
        best_gap, best_gap_se: the same at each method's early-stopped (rate, step).
        ridge, ols: the least-squares baselines against pre-gd's final risk
            (`LeastSquaresBaseline`).
    """

    steps: np.ndarray
    rates: np.ndarray
    gd: TunedPath
    pre_gd: TunedPath
    final_gap: float
    final_gap_se: float
    best_gap: float
    best_gap_se: float
    ridge: LeastSquaresBaseline
    ols: LeastSquaresBaseline


def stable_learning_rates(X: torch.Tensor, y: torch.Tensor, rates, *, preprocessed: bool):
    """Which rates keep GD on ``(1/2n) ||X w - y||^2`` bounded for every prompt:
    ``eta < 2 / lambda_max(X^T X / n)``, with X replaced by Algorithm 1's ``R_hat X`` when
    ``preprocessed`` (reference chen2024 §3.1). Shapes: X (..., n, d), y (..., n),
    rates (K,) -> (K,) bool.

    >>> X = torch.eye(2, dtype=torch.float64) * 2.0  # X^T X / n = 2 I: stable iff eta < 1
    >>> stable_learning_rates(X, torch.ones(2, dtype=torch.float64), [1.0, 0.1],
    ...                       preprocessed=False).tolist()
    [False, True]
    """
    if preprocessed:
        X = X * feature_label_correlations(X, y)[..., None, :]  # (..., n, d): rows R_hat x_i
    largest = largest_gram_eigenvalue(X).max()  # the stiffest prompt
    rates = torch.as_tensor(rates, dtype=X.dtype, device=X.device)
    return rates * largest < 2.0  # (K,)


def _mean_se(risks: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Mean over the last (prompt) axis and its standard error."""
    return risks.mean(dim=-1), risks.std(dim=-1) / math.sqrt(risks.shape[-1])


def _tuned_path(tune, held_out, rates, steps, preprocessed):
    """One method: risks on both sets, its final-step and early-stopped choices; returns the
    `TunedPath` and the held-out per-prompt risks at the two choices, (N',) each."""
    X, y, w_star = (
        torch.cat([getattr(tune, a), getattr(held_out, a)]) for a in ("X", "y", "w_star")
    )
    risks = gd_excess_risks(X, y, w_star, rates[:, None], steps, preprocessed=preprocessed)
    tune_risks, held_risks = risks.transpose(1, 2).split(
        [tune.X.shape[0], held_out.X.shape[0]], dim=-1
    )  # (K, T, N) and (K, T, N'): one GD run over both sets, every rate at once
    stable = stable_learning_rates(X, y, rates, preprocessed=preprocessed)  # on both sets
    if not bool(stable.any()):
        method = "pre-gd" if preprocessed else "gd"
        raise ValueError(f"rates must hold a rate below 2 / lambda_max for {method}, got none")
    tune_risks = torch.where(stable[:, None, None], tune_risks, torch.inf)  # never chosen
    final = oracle_tuned(tune_risks[:, -1], held_out=held_risks[:, -1])  # over rates
    best = oracle_tuned(tune_risks, held_out=held_risks)  # over (rate, step)
    mean, se = _mean_se(held_risks[final.index[0]])  # (T,) each
    path = TunedPath(
        rate=float(rates[final.index[0]]),
        mean=mean.cpu().numpy(),
        se=se.cpu().numpy(),
        final_means=final.grid_means.cpu().numpy(),
        stable=stable.cpu().numpy(),
        min_step=int(steps[int(mean.argmin())]),
        best_rate=float(rates[best.index[0]]),
        best_step=int(steps[best.index[1]]),
        best_mean=best.mean,
        best_se=best.se,
    )
    return path, final.risks, best.risks


def _baseline(
    tune: SparsePrompts, held_out: SparsePrompts, lambdas, pre_gd_risks
) -> LeastSquaresBaseline:
    """Least squares at the λ of ``lambdas`` with the lowest mean risk on ``tune``, read on
    ``held_out`` and paired with pre-gd's per-prompt risks there, (N',)."""
    lambdas = [float(lam) for lam in lambdas]
    tuned = oracle_tuned(
        least_squares_excess_risks(tune.X, tune.y, tune.w_star, lambdas),  # (K, N)
        held_out=least_squares_excess_risks(held_out.X, held_out.y, held_out.w_star, lambdas),
    )
    mean, se = _mean_se(tuned.risks)
    gap, gap_se = _mean_se(tuned.risks - pre_gd_risks)
    lam = lambdas[tuned.index[0]]
    return LeastSquaresBaseline(lam, float(mean), float(se), float(gap), float(gap_se))


def compare_pre_gd(
    tune: SparsePrompts, held_out: SparsePrompts, rates, steps, lambdas
) -> PreGdComparison:
    """gd and pre-gd excess-risk paths at their tuned learning rates, and their paired gap
    (Chen et al. 2024 §6, Figure 2c; reference chen2024 §2.5-2.6).

    ``tune`` chooses each method's rate from ``rates`` (lowest mean risk at the last entry of
    ``steps``, stable rates only, see `stable_learning_rates`) and its early-stopped
    (rate, step); ``held_out`` (independent prompts of the same model) is where every mean,
    SE and the paired gaps are read. Ridge's λ is chosen from ``lambdas`` the same way, OLS is
    λ = 0. Shapes: prompts with batch shape (N,) and (N',); rates (K,); steps non-decreasing
    integers (T,); lambdas (K',).

    >>> from icl_verify.numerics import sample_sparse_regression
    >>> from icl_verify.settings import SparseSetting
    >>> g, setting = torch.Generator().manual_seed(0), SparseSetting(d=16, s=4, sigma=0.1)
    >>> tune, held = (sample_sparse_regression(64, setting, 10, generator=g, dtype=torch.float64)
    ...               for _ in range(2))
    >>> result = compare_pre_gd(tune, held, [1.0, 0.1, 0.01], [0, 100, 1000], [1.0, 0.1, 0.01])
    >>> result.gd.rate, result.pre_gd.rate, result.final_gap > 3 * result.final_gap_se
    (0.1, 0.01, True)
    >>> result.ridge.gap > 0, result.ols.lam  # pre-gd ends below tuned ridge; OLS is λ = 0
    (True, 0.0)
    """
    steps = [int(t) for t in steps]
    rates = torch.as_tensor(rates, dtype=tune.X.dtype, device=tune.X.device)  # (K,)
    gd, gd_final, gd_best = _tuned_path(tune, held_out, rates, steps, False)
    pre, pre_final, pre_best = _tuned_path(tune, held_out, rates, steps, True)
    final_gap, final_gap_se = _mean_se(gd_final - pre_final)  # paired over held-out prompts
    best_gap, best_gap_se = _mean_se(gd_best - pre_best)
    return PreGdComparison(
        steps=np.array(steps),
        rates=rates.cpu().numpy(),
        gd=gd,
        pre_gd=pre,
        final_gap=float(final_gap),
        final_gap_se=float(final_gap_se),
        best_gap=float(best_gap),
        best_gap_se=float(best_gap_se),
        ridge=_baseline(tune, held_out, lambdas, pre_final),
        ols=_baseline(tune, held_out, [0.0], pre_final),
    )


def pre_gd_comparison(
    setting: SparseSetting,
    n: int,
    *,
    n_tune: int,
    n_prompts: int,
    rates,
    steps,
    lambdas,
    seed: int,
    device=None,
) -> PreGdComparison:
    """`compare_pre_gd` on fresh prompts: `n_tune` tuning and then `n_prompts` held-out prompts
    of `sample_sparse_regression` with n examples (float64; for ``setting = SparseSetting(d, s,
    sigma)``, w* ``N(0, 1)`` on a random support of size s, x ~ N(0, I_d), noise standard
    deviation sigma: the setting of Figure 2c, reference chen2024
    §2.1), both drawn from one generator seeded with ``seed`` on ``device`` (CPU when None).

    >>> from icl_verify.settings import SparseSetting
    >>> result = pre_gd_comparison(SparseSetting(d=16, s=4, sigma=0.1), 10, n_tune=64,
    ...                            n_prompts=64, rates=[1.0, 0.1, 0.01], steps=[0, 100, 1000],
    ...                            lambdas=[1.0, 0.1], seed=0)
    >>> result.gd.mean.shape, result.final_gap > 0
    ((3,), True)
    """
    generator = torch.Generator(device=device or "cpu").manual_seed(int(seed))
    tune, held_out = (
        sample_sparse_regression(
            size, setting, n, generator=generator, device=device, dtype=torch.float64
        )
        for size in (n_tune, n_prompts)
    )
    return compare_pre_gd(tune, held_out, rates, steps, lambdas)
