"""The effective GD step of trained models, measured by least squares (He et al. 2025 §4.2, §5.2).

To first order in omega a two-head model is debiased one-step GD (4.11) with step
``eta_eff = 2 a_f omega mu`` (4.10, reference §HE-5.2-ACT, Table 1). `fitted_steps` measures a
trained model's step without assuming that (or any) formula: the least-squares slope of its
predictions on debiased GD with step 1,

    eta_hat = sum_p yhat_p g_p / sum_p g_p^2,       g_p = (1/L) sum_i y_i (x_i - xbar)^T x_q,

over Monte Carlo prompts p of the training's data model. It estimates ``E[yhat g] / E[g^2]``:
a model ``yhat = eta g + r`` whose remainder r is uncorrelated with g gives exactly eta.
`extrapolated_pattern_steps` takes the fitted step of fixed pair models to L -> infinity (where
the kernel mean holds); `relative_mse` reads a model's test MSE as a ratio to a baseline's (e.g.
debiased GD at the model's fitted step). Nothing here imports `theory`.
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch
from icl_verify.numerics._core.data import Prompts, embed, sample_linear_regression
from icl_verify.numerics._core.ensemble import TrainedEnsemble
from icl_verify.numerics._core.estimators import gd_prediction
from icl_verify.numerics._core.models import MultiHeadAttention
from icl_verify.numerics._core.montecarlo import (
    RANDOMNESS_BLOCK,
    JointMonteCarloEstimate,
    _chunks,
    _Moments,
    _validated,
)

from icl_verify import MAX_PROMPT_LENGTH
from icl_verify.settings import Setting

__all__ = [
    "FittedSteps",
    "extrapolated_pattern_steps",
    "fitted_pattern_steps",
    "fitted_steps",
    "relative_mse",
]


@dataclass(frozen=True, eq=False)
class FittedSteps:
    """Least-squares steps of M members on debiased one-step GD (float64).

    Attributes:
        value: (M,) ``eta_hat = mean(yhat g) / mean(g^2)``.
        stderr: (M,) its standard error (delta method for a ratio of means).
        n: number of prompts.
    """

    value: np.ndarray
    stderr: np.ndarray
    n: int


def fitted_steps(
    ensemble: TrainedEnsemble,
    members: Sequence[int],
    *,
    n_prompts: int,
    seed: int = 0,
    device: str = "cpu",
    length: int | None = None,
) -> FittedSteps:
    """Each member's least-squares step on debiased one-step GD (4.11) with step 1.

    ``eta_hat = sum_p yhat_p g_p / sum_p g_p^2`` with ``g_p`` =
    ``gd_prediction(X, y, x_q, 1.0, debiased=True)``, over ``n_prompts`` prompts of the
    ensemble's d, sigma2 and L (or ``length`` context examples), drawn as `monte_carlo_losses`
    draws them (blocks seeded by (seed, b)); all members see the same prompts, evaluated in one
    forward pass per chunk. With ``a = mean(yhat g)``, ``b = mean(g^2)`` and their sample
    covariance C, the standard error is the delta method for the ratio of means a / b:
    ``SE^2 = (C_aa - 2 eta_hat C_ab + eta_hat^2 C_bb) / (n b^2)``.

    >>> from icl_verify.numerics import EnsembleTraining, train_ensemble
    >>> training = EnsembleTraining(d=2, L=8, sigma2=0.1, heads=(1, 2), lr=3e-3, steps=20,
    ...     batch=16, seed=0, log_every=10, checkpoint_every=0, validation_batch=64)
    >>> steps = fitted_steps(train_ensemble(training), [0, 1], n_prompts=512)
    >>> steps.value.shape, bool((steps.stderr > 0).all())
    ((2,), True)
    """
    members = ensemble.member_indices(members)
    L = ensemble.L if length is None else length
    model = ensemble.model(members, device)
    return _model_steps(
        model, ensemble.d, L, ensemble.sigma2, n_prompts=n_prompts, seed=seed, device=device
    )


def fitted_pattern_steps(
    omega,
    mu,
    *,
    attention: str | tuple[str, ...],
    d: int,
    L: int,
    sigma2: float,
    n_prompts: int,
    seed: int = 0,
    device: str = "cpu",
) -> FittedSteps:
    """The fitted step (see `fitted_steps`) of two-head models on the trained pattern.

    Member m has heads (omega[m], mu[m]) and (-omega[m], -mu[m]): KQ11 = ±omega_m I, OV last
    row (0, ..., 0, ±mu_m), every other circuit entry 0, with ``attention`` (one for all, or one
    per member), in float64. The pair of (4.9)/(5.2) at fixed parameters, no training.

    >>> steps = fitted_pattern_steps([0.05, 0.05], [10.0, 10.0], attention=("softmax", "tanh"),
    ...                              d=2, L=50, sigma2=0.1, n_prompts=4096)
    >>> [round(float(v), 1) for v in steps.value]  # 2 omega mu a_f = 1 for both, to O(omega^2)
    [1.0, 1.0]
    """
    omega = torch.as_tensor(omega, dtype=torch.float64).reshape(-1)  # (M,)
    mu = torch.as_tensor(mu, dtype=torch.float64).reshape(-1)  # (M,)
    if omega.shape != mu.shape or omega.numel() == 0 or not torch.isfinite(omega).all():
        raise ValueError(
            f"omega and mu must be finite 1-D arrays of the same length >= 1, got shapes "
            f"{tuple(omega.shape)} and {tuple(mu.shape)}"
        )
    M, D = omega.numel(), d + 1
    signs = torch.tensor([1.0, -1.0], dtype=torch.float64)  # (2,): the two heads
    KQ = torch.zeros(M, 2, D, D, dtype=torch.float64)  # (M, 2, D, D)
    KQ[..., :d, :d] = (signs[None, :] * omega[:, None])[..., None, None] * torch.eye(d)
    OV = torch.zeros(M, 2, D, D, dtype=torch.float64)  # (M, 2, D, D)
    OV[..., -1, -1] = signs[None, :] * mu[:, None]
    model = MultiHeadAttention.from_circuits(KQ, OV, attention=attention).to(device)
    return _model_steps(model, d, L, sigma2, n_prompts=n_prompts, seed=seed, device=device)


def extrapolated_pattern_steps(
    omega,
    mu,
    *,
    attention: str | tuple[str, ...],
    d: int,
    lengths: tuple[int, int],
    sigma2: float,
    n_prompts: int,
    seeds: tuple[int, int],
    device: str = "cpu",
) -> FittedSteps:
    """`fitted_pattern_steps` at two prompt lengths, extrapolated to L -> infinity.

    The fitted step at prompt length L is a ratio of sums over L tokens, whose mean differs from
    its L -> infinity limit by c/L + O(1/L^2) (delta method for a ratio). From ``lengths`` =
    (L1, L2), L1 < L2, Richardson's ``(L2 eta2 - L1 eta1) / (L2 - L1)`` removes the c/L term,
    leaving O(1/L^2). The two lengths use independent prompts (``seeds``, one per length), so
    the SEs add in quadrature with the same weights. ``n`` of the result: prompts per length.

    >>> steps = extrapolated_pattern_steps([0.05], [10.0], attention="softmax", d=2,
    ...     lengths=(50, 100), sigma2=0.1, n_prompts=4096, seeds=(0, 1))
    >>> round(float(steps.value[0]), 1), bool(steps.stderr[0] > 0)  # 2 omega mu, to O(omega^2)
    (1.0, True)
    """
    fits = [
        fitted_pattern_steps(
            omega,
            mu,
            attention=attention,
            d=d,
            L=length,
            sigma2=sigma2,
            n_prompts=n_prompts,
            seed=seed,
            device=device,
        )
        for length, seed in zip(lengths, seeds, strict=True)
    ]
    weights = np.array(lengths, dtype=float) * [-1.0, 1.0] / (lengths[1] - lengths[0])
    value = weights[0] * fits[0].value + weights[1] * fits[1].value
    stderr = np.hypot(weights[0] * fits[0].stderr, weights[1] * fits[1].stderr)
    return FittedSteps(value=value, stderr=stderr, n=fits[1].n)


def relative_mse(
    losses: JointMonteCarloEstimate, model: str, baseline: str, lengths: Sequence[int]
) -> tuple[np.ndarray, np.ndarray]:
    """``MSE(model) / MSE(baseline)`` at each test length of `mse_by_test_length` and its SE.

    The ratio is ``1 + (paired difference) / mean(baseline)``, its SE the paired difference's
    SE over the baseline's mean (the baseline's own error is second order): arrays of shape
    (len(lengths),), reading the names ``"<model>@<L'>"`` and ``"<baseline>@<L'>"``.

    >>> losses = JointMonteCarloEstimate(("m@10", "b@10"), np.array([1.1, 1.0]),
    ...                                  np.array([[1.0, 0.9], [0.9, 1.0]]), n=20)
    >>> ratio, se = relative_mse(losses, "m", "b", [10])
    >>> round(float(ratio[0]), 6), round(float(se[0]), 6)  # sqrt(0.2 / 20) / 1.0
    (1.1, 0.1)
    """
    ratio, stderr = [], []
    for n in lengths:
        gap = losses.difference(f"{model}@{n}", f"{baseline}@{n}")
        reference = losses[f"{baseline}@{n}"].mean
        ratio.append(1.0 + gap.mean / reference)
        stderr.append(gap.stderr / reference)
    return np.array(ratio), np.array(stderr)


def _model_steps(
    model: MultiHeadAttention, d: int, L, sigma2: float, *, n_prompts: int, seed: int, device: str
) -> FittedSteps:
    """Every member's fitted step on prompts of (d, L, sigma2); see `fitted_steps`."""
    if (
        isinstance(L, bool)
        or not isinstance(L, numbers.Integral)
        or not 1 <= L <= MAX_PROMPT_LENGTH
    ):
        raise ValueError(f"length must be an integer in 1..{MAX_PROMPT_LENGTH}, got {L!r}")
    n_prompts, chunk, seed, where = _validated(n_prompts, RANDOMNESS_BLOCK, seed, device)
    M = model.config.ensemble
    setting = Setting(d, int(L), sigma2)

    def sampler(count: int, generator: torch.Generator) -> Prompts:
        return sample_linear_regression(count, setting, generator=generator, device=where)

    moments = _Moments(M + 1, where)
    with torch.no_grad():
        for prompts in _chunks(sampler, n_prompts, chunk, seed, where, progress=False):
            Z = embed(prompts).to(model.W_Q.dtype)  # (n, D, L+1)
            predictions = model(Z.expand(M, *Z.shape)).double()  # (M, n)
            g = gd_prediction(prompts.X, prompts.y, prompts.x_query, 1.0, debiased=True)  # (n,)
            g = g.double()
            moments.add(torch.cat([predictions * g, (g * g)[None]]))  # (M + 1, n)
    n = moments.n
    mean = moments.mean.cpu().numpy()  # (M + 1,)
    covariance = moments.comoment.cpu().numpy() / (n - 1)  # (M + 1, M + 1)
    a, b = mean[:M], mean[M]
    value = a / b
    variance = np.diag(covariance)[:M] - 2 * value * covariance[:M, M] + value**2 * covariance[M, M]
    return FittedSteps(value=value, stderr=np.sqrt(np.maximum(variance, 0.0) / (n * b**2)), n=n)
