"""Test MSE against the test prompt length L' (He et al. 2025 §3, Observation 3, Figure 4).

A model trained at one prompt length L is evaluated at test lengths L' on nested prompts: one
draw at the largest L', truncated to every L', so every predictor sees the same prompts at every
length and differences are paired. The trained members and the GD and Bayes baselines are
`numerics.mse_by_test_length`; here:

- `length_curve`: one predictor's Monte Carlo mean and SE at every L', read off such a joint
  estimate (predictors named ``"<name>@<L'>"``);
- `fixed_kernel_mse_by_test_length`: the test MSE (2.5) at every L' of two fixed kernel
  predictors of Figure 4 (right): a ± pair (3.2) at fixed (omega, mu), and one head (4.12)
  whose (omega, mu) is given per L'.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch
from icl_verify.numerics._core.data import Prompts, sample_linear_regression
from icl_verify.numerics._core.estimators import kernel_regression_prediction, kernel_sum_prediction
from icl_verify.numerics._core.montecarlo import JointMonteCarloEstimate, monte_carlo_losses

from icl_verify.settings import Setting

__all__ = ["FixedKernelCurves", "fixed_kernel_mse_by_test_length", "length_curve"]


def length_curve(
    losses: JointMonteCarloEstimate, name: str, lengths: Sequence[int]
) -> tuple[np.ndarray, np.ndarray]:
    """The Monte Carlo mean loss of predictor ``name`` at each test length and its SE.

    Reads the estimates ``losses[f"{name}@{n}"]`` for n in ``lengths`` (the names of
    `numerics.mse_by_test_length`); returns two arrays of shape (len(lengths),).

    >>> losses = JointMonteCarloEstimate(
    ...     ("dGD@10", "dGD@40"), np.array([0.6, 0.24]), np.diag([0.04, 0.01]), n=100)
    >>> mean, se = length_curve(losses, "dGD", [10, 40])
    >>> mean.tolist(), se.round(6).tolist()  # SE sqrt(var / n)
    ([0.6, 0.24], [0.02, 0.01])
    """
    estimates = [losses[f"{name}@{n}"] for n in lengths]
    return np.array([e.mean for e in estimates]), np.array([e.stderr for e in estimates])


@dataclass(frozen=True)
class FixedKernelCurves:
    """Test MSE of the two fixed kernel predictors at each test length (arrays (len(lengths),)).

    Attributes:
        pair_mean, pair_se: the ± pair (omega, mu), (-omega, -mu) of (3.2).
        single_mean, single_se: the single head (4.12) at its (omega, mu) of each length.
    """

    pair_mean: np.ndarray
    pair_se: np.ndarray
    single_mean: np.ndarray
    single_se: np.ndarray


def fixed_kernel_mse_by_test_length(
    pair: tuple[float, float],
    single_omega: Sequence[float],
    single_mu: Sequence[float],
    lengths: Sequence[int],
    *,
    d: int,
    sigma2: float,
    n_prompts: int,
    seed: int,
    device: str = "cpu",
) -> FixedKernelCurves:
    """Monte Carlo test MSE (2.5) at every test length L' of two fixed kernel predictors.

    - the ± pair ``(omega, mu), (-omega, -mu)`` = ``pair`` of the kernel-sum predictor (3.2):
      ``mu sum_i y_i [softmax_i(omega s) - softmax_i(-omega s)]``, ``s_i = x_i^T x_q``;
    - one head (4.12) at ``(single_omega[k], single_mu[k])`` at the k-th length (e.g. the
      single-head optimum of (4.12) at that L').

    Prompts x ~ N(0, I_d), y = beta^T x + noise of variance ``sigma2``: one draw of
    ``n_prompts`` at the largest L' (`monte_carlo_losses` seeded by ``seed``), truncated to
    every L', as `numerics.mse_by_test_length` draws them: with the same seed, d,
    sigma2, longest L' and device the two see the same prompts.

    >>> curves = fixed_kernel_mse_by_test_length(
    ...     (0.13, 3.45), [0.45, 0.45], [1.0, 1.0], [10, 40], d=5, sigma2=0.1, n_prompts=4096,
    ...     seed=0)
    >>> bool(curves.pair_mean[1] < curves.pair_mean[0])  # more examples, a better estimate
    True
    >>> curves.single_se.shape
    (2,)
    """
    lengths = [int(n) for n in lengths]
    omega, mu = float(pair[0]), float(pair[1])
    pair_omega, pair_mu = [omega, -omega], [mu, -mu]
    predictors = {}
    for n, head_omega, head_mu in zip(lengths, single_omega, single_mu, strict=True):
        predictors[f"pair@{n}"] = lambda p, n=n: kernel_sum_prediction(
            pair_omega, pair_mu, p.X[:, :n], p.y[:, :n], p.x_query
        )
        predictors[f"single@{n}"] = lambda p, n=n, w=head_omega, m=head_mu: (
            kernel_regression_prediction(w, m, p.X[:, :n], p.y[:, :n], p.x_query)
        )
    longest = Setting(d, max(lengths), sigma2)

    def sampler(count: int, generator: torch.Generator) -> Prompts:
        return sample_linear_regression(count, longest, generator=generator, device=device)

    losses = monte_carlo_losses(predictors, sampler, n_prompts, seed=seed, device=device)
    pair_mean, pair_se = length_curve(losses, "pair", lengths)
    single_mean, single_se = length_curve(losses, "single", lengths)
    return FixedKernelCurves(pair_mean, pair_se, single_mean, single_se)
