"""Monte Carlo measurements of the kernel-sum predictor (3.2) of He et al. (2025), §4.1 and §4.3.

What the claims HE-P4.1, HE-4.9, HE-4.12 and HE-T4.2i measure, in float64 on the true data
model (never through the approximate loss (4.1) they are compared with):

- `pair_loss_landscape`: the true loss of the two-head ± family (omega, -omega), (mu, -mu)
  over a grid (the paper's Fig. 6);
- `loss_difference_to_debiased_gd`: loss(± pair) - loss(debiased GD (4.11)), paired on the
  same prompts with the exact conditional risk of predictors linear in the labels
  (`loss_differences_to_debiased_gd`: the same at many points, the map of HE-P4.1-MAP);
- `relative_prediction_gaps`: how far H heads on the solution manifold predict from the
  two-head model, in units of the summed magnitudes (float64 rounding is the floor);
- `single_head_minimum`: the minimum over (omega, mu) of the true single-head loss, replicated
  for its standard error;
- `square_gaps_to_debiased_gd`: E(y_TF - y_dGD)^2 of the ± pair at fixed eta = 2 omega mu over
  omega and L, on nested prompts (`SquareGaps`: RMS, its log-log slope and that slope's SE).

Nothing here imports `theory`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import torch
from icl_verify.numerics._core.data import Prompts, sample_linear_regression
from icl_verify.numerics._core.estimators import (
    gd_prediction,
    kernel_head_averages,
    kernel_sum_prediction,
)
from icl_verify.numerics._core.montecarlo import (
    LinearInLabels,
    LossLandscape,
    MonteCarloEstimate,
    kernel_sum_loss_grid,
    monte_carlo_losses,
)
from tqdm.auto import tqdm

from icl_verify.settings import Setting
from icl_verify.statistics import loglog_slope, mean_se

__all__ = [
    "ProfileMinimum",
    "SingleHeadMinimum",
    "SquareGaps",
    "fitted_minimum",
    "PairDifferences",
    "loss_difference_to_debiased_gd",
    "loss_differences_to_debiased_gd",
    "pair_loss_landscape",
    "relative_prediction_gap",
    "relative_prediction_gaps",
    "single_head_minimum",
    "single_head_profile",
    "square_gaps_to_debiased_gd",
]

SQUARE_GAP_BLOCK = 1024  # prompts per block of `square_gaps_to_debiased_gd` (one generator)


def _generator(seed: int, device) -> torch.Generator:
    return torch.Generator(device=device).manual_seed(int(seed) % 2**63)


def _pairs(values) -> np.ndarray:
    """Rows (v, -v) of the two-head ± family, shape (n, 2)."""
    values = np.asarray(values, dtype=float)
    return np.stack([values, -values], axis=1)


# ---------------------------------------------------------------------------------------------
# HE-P4.1: the true loss of the ± pair, and its paired difference to debiased GD


def pair_loss_landscape(
    omega, mu, setting: Setting, n_prompts: int, *, seed: int, device=None
) -> LossLandscape:
    """True loss of heads (omega, -omega), OV weights (mu, -mu) at every (omega[g], mu[m]), float64.

    `kernel_sum_loss_grid` on the rows (w, -w) and (m, -m): all mu from one pass per omega, on
    the same prompts. Args: omega (G,), mu (M,); returns mean and stderr of shape (G, M).

    >>> from icl_verify.settings import Setting
    >>> grid = pair_loss_landscape([0.1, 0.2], [0.0, 2.0, 4.0], Setting(d=5, L=40,
    ...                            sigma2=0.1), 4096, seed=0)
    >>> zero = grid.mean[:, 0] - 1.1  # mu = 0 predicts 0: the loss is E y_q^2 = 1 + sigma2
    >>> grid.mean.shape, bool((abs(zero) < 4 * grid.stderr[:, 0]).all())
    ((2, 3), True)
    """
    return kernel_sum_loss_grid(
        _pairs(omega), _pairs(mu), setting, n_prompts, seed=seed, device=device,
        dtype=torch.float64,
    )  # fmt: skip


def loss_difference_to_debiased_gd(
    omega: float, mu: float, eta: float, setting: Setting, n_prompts: int, *, seed: int,
    device=None,
) -> MonteCarloEstimate:  # fmt: skip
    """loss(± pair (omega, mu)) - loss(debiased GD (4.11) with step eta), paired, float64.

    Both predictors are linear in the labels, so each prompt contributes its exact conditional
    risk (`LinearInLabels`), and the two are evaluated on the same prompts: the SE is that of
    the paired difference, far below either loss's. With eta = 2 omega mu the difference
    vanishes as omega -> 0 (§HE-T4.2i).

    >>> from icl_verify.settings import Setting
    >>> gap = loss_difference_to_debiased_gd(1e-3, 440.0, 0.88, Setting(d=5, L=40,
    ...                                      sigma2=0.1), 4096, seed=0)
    >>> bool(abs(gap.mean) < 1e-5 and gap.stderr < 1e-6)
    True
    """
    attention, dgd = _pair_and_debiased_gd(omega, mu, eta)
    joint = monte_carlo_losses(
        {"attention": attention, "dgd": dgd}, setting, n_prompts, seed=seed, device=device,
        dtype=torch.float64,
    )  # fmt: skip
    return joint.difference("attention", "dgd")


def _pair_and_debiased_gd(omega: float, mu: float, eta: float) -> tuple[LinearInLabels, ...]:
    """The ± pair (omega, -omega), (mu, -mu) and debiased GD (4.11) at step eta, as predictors."""
    heads = torch.tensor([omega, -omega], dtype=torch.float64)
    weights = torch.tensor([mu, -mu], dtype=torch.float64)
    return (
        LinearInLabels(
            lambda p: kernel_sum_prediction(heads.to(p.X), weights.to(p.X), p.X, p.y, p.x_query)
        ),
        LinearInLabels(lambda p: gd_prediction(p.X, p.y, p.x_query, eta, debiased=True)),
    )


class PairDifferences(NamedTuple):
    """Per point (P,): loss(± pair) - loss(debiased GD), paired, and its SE (float64)."""

    mean: np.ndarray
    stderr: np.ndarray


def loss_differences_to_debiased_gd(
    omega, mu, eta, settings: Sequence[Setting], n_prompts: int, *, seed: int,
    device=None, progress: bool = False,
) -> PairDifferences:  # fmt: skip
    """`loss_difference_to_debiased_gd` at P points (omega[k], mu[k], eta[k], settings[k]),
    each on ``n_prompts`` prompts drawn from ``seed``: points of one (d, L, sigma^2) share their
    prompts, drawn once for all of them (so a map over omega is paired along omega, and costs
    one draw per setting).

    >>> from icl_verify.settings import Setting
    >>> s = Setting(d=5, L=40, sigma2=0.1)
    >>> gaps = loss_differences_to_debiased_gd([1e-3, 1e-3], [440.0, 440.0], [0.88, 0.88],
    ...                                        [s, s], 1024, seed=0)
    >>> bool(np.all(np.abs(gaps.mean) < 1e-5)), gaps.mean[0] == gaps.mean[1]
    (True, np.True_)
    """
    omega, mu, eta = (np.asarray(v, dtype=float).ravel() for v in (omega, mu, eta))
    if not omega.size == mu.size == eta.size == len(settings):
        raise ValueError(
            f"omega, mu, eta and settings must have one entry per point, got {omega.size}, "
            f"{mu.size}, {eta.size}, {len(settings)}"
        )
    groups: dict[tuple, list[int]] = {}  # (d, L, sigma2) -> its points: one draw of prompts
    for k, s in enumerate(settings):
        groups.setdefault((int(s.d), int(s.L), float(s.sigma2)), []).append(k)
    mean, stderr = np.empty(omega.size), np.empty(omega.size)
    for points in tqdm(groups.values(), desc="(d, L)", leave=False, disable=not progress):
        predictors = {}
        for k in points:
            predictors[f"attention-{k}"], predictors[f"dgd-{k}"] = _pair_and_debiased_gd(
                omega[k], mu[k], eta[k]
            )
        joint = monte_carlo_losses(
            predictors, settings[points[0]], n_prompts, seed=seed, device=device,
            dtype=torch.float64,
        )  # fmt: skip
        for k in points:
            gap = joint.difference(f"attention-{k}", f"dgd-{k}")
            mean[k], stderr[k] = gap.mean, gap.stderr
    return PairDifferences(mean, stderr)


# ---------------------------------------------------------------------------------------------
# HE-4.9: H heads on the solution manifold against the two-head model


def relative_prediction_gap(omega_heads, mu_heads, omega: float, mu: float, prompts) -> float:
    """max over prompts of |y_H - y_2| / (sum_h |mu_h a_h| + |mu| (|a_+| + |a_-|)), float64.

    y_H is the H-head kernel-sum prediction (3.2), y_2 that of (omega, mu), (-omega, -mu);
    the denominator is the scale of the summed terms, so float64 rounding of the sums is
    about (H + 2) eps in these units.

    >>> from icl_verify.settings import Setting
    >>> g = torch.Generator().manual_seed(0)
    >>> p = sample_linear_regression(64, Setting(5, 40, 0.1), generator=g, dtype=torch.float64)
    >>> relative_prediction_gap([0.1, 0.1, -0.1], [1.0, 3.0, -4.0], 0.1, 4.0, p) < 1e-15
    True
    """
    many, many_scale = _prediction_and_scale(omega_heads, mu_heads, prompts)
    two, two_scale = _prediction_and_scale([omega, -omega], [mu, -mu], prompts)
    return float(((many - two).abs() / (many_scale + two_scale)).max())


def _prediction_and_scale(omega_heads, mu_heads, prompts) -> tuple[torch.Tensor, torch.Tensor]:
    """The kernel-sum prediction (3.2) sum_h mu_h a_h and sum_h |mu_h a_h|, each (n,)."""
    omega_heads = torch.as_tensor(omega_heads, dtype=torch.float64)
    mu_heads = torch.as_tensor(mu_heads, dtype=torch.float64)
    averages = kernel_head_averages(omega_heads, prompts.X, prompts.y, prompts.x_query)  # (n, H)
    return (mu_heads * averages).sum(-1), (mu_heads * averages).abs().sum(-1)


def relative_prediction_gaps(
    omega_heads: Sequence, mu_heads: Sequence, omega, mu, setting: Setting, n_prompts: int,
    *, seed: int,
) -> np.ndarray:  # fmt: skip
    """`relative_prediction_gap` per trial t on the same n_prompts float64 CPU prompts, shape (T,).

    Trial t compares heads (omega_heads[t], mu_heads[t]) with the pair (omega[t], mu[t]).

    >>> from icl_verify.settings import Setting
    >>> gaps = relative_prediction_gaps([[0.1, -0.1, 0.0]], [[4.0, -4.0, 0.0]], [0.1], [4.0],
    ...                                 Setting(d=5, L=40, sigma2=0.1), 64, seed=0)
    >>> gaps.shape, bool(gaps[0] < 1e-15)
    ((1,), True)
    """
    prompts = sample_linear_regression(
        n_prompts, setting, generator=_generator(seed, "cpu"), dtype=torch.float64,
    )  # fmt: skip
    return np.array(
        [
            relative_prediction_gap(w, m, pair_omega, pair_mu, prompts)
            for w, m, pair_omega, pair_mu in zip(omega_heads, mu_heads, omega, mu, strict=True)
        ]
    )


# ---------------------------------------------------------------------------------------------
# HE-4.12: the minimum of the true single-head loss


def single_head_profile(
    omega, setting: Setting, n_prompts: int, *, seed: int, device=None
) -> tuple[np.ndarray, np.ndarray]:
    """Monte Carlo minimum over mu of the true single-head loss (4.12) at each omega, float64.

    For fixed omega the loss is a quadratic l0 + b mu + a mu^2 in mu (`kernel_sum_loss_grid`),
    read off exactly from its values at mu = 0, 1, 2 on the same prompts. Returns (mu
    minimising it, the minimum), each of the shape (G,) of `omega`.

    >>> from icl_verify.settings import Setting
    >>> mu, loss = single_head_profile([0.45], Setting(d=5, L=40, sigma2=0.1), 4096,
    ...                                seed=0)
    >>> bool(1.3 < mu[0] < 1.7 and 0.38 < loss[0] < 0.43)
    True
    """
    omega = np.asarray(omega, dtype=float)
    grid = kernel_sum_loss_grid(
        omega[:, None], [[0.0], [1.0], [2.0]], setting, n_prompts, seed=seed, device=device,
        dtype=torch.float64,
    )  # fmt: skip
    at0, at1, at2 = grid.mean.T
    curvature = (at2 - 2 * at1 + at0) / 2
    slope = at1 - at0 - curvature
    return -slope / (2 * curvature), at0 - slope**2 / (4 * curvature)


class ProfileMinimum(NamedTuple):
    """The minimum of a fitted profile: where (omega), how low (loss), and mu there."""

    omega: float
    loss: float
    mu: float


def fitted_minimum(omega, profile, mu, degree: int) -> ProfileMinimum:
    """The minimum of a degree-`degree` polynomial fit to `profile` (G,) over `omega` (G,).

    `mu` (G,) is fitted by a polynomial of the same degree and read at the argmin; the argmin
    is searched on 4001 points spanning the grid.

    >>> w = np.linspace(0.3, 0.7, 9)
    >>> [round(v, 6) for v in fitted_minimum(w, 0.4 + (w - 0.52) ** 2, 2 * w, 4)]
    [0.52, 0.4, 1.04]
    """
    fine = np.linspace(omega[0], omega[-1], 4001)
    loss = np.polynomial.Polynomial.fit(omega, profile, degree)(fine)
    best = int(np.argmin(loss))
    return ProfileMinimum(
        float(fine[best]),
        float(loss[best]),
        float(np.polynomial.Polynomial.fit(omega, mu, degree)(fine[best])),
    )


@dataclass(frozen=True, eq=False)
class SingleHeadMinimum:
    """The minimum of the true single-head loss, from R independent replicates of the profile.

    Attributes:
        omega, loss, mu: the fitted minimum (argmin omega, min loss, mu there), each the mean
            over replicates with the SE of that mean (n = R).
        profile_loss, profile_loss_se: (G,) min over mu of the loss per omega, mean over
            replicates and its SE.
        profile_mu, profile_mu_se: (G,) the minimising mu, likewise.
    """

    omega: MonteCarloEstimate
    loss: MonteCarloEstimate
    mu: MonteCarloEstimate
    profile_loss: np.ndarray
    profile_loss_se: np.ndarray
    profile_mu: np.ndarray
    profile_mu_se: np.ndarray


def single_head_minimum(
    omega, setting: Setting, n_prompts: int, *, seeds: Iterable[int], degree: int,
    device=None,
) -> SingleHeadMinimum:  # fmt: skip
    """One `single_head_profile` per seed, each fitted (`fitted_minimum`); means and their SEs.

    The replicates are independent, so the spread of the fitted minima gives the SE of their
    mean, including the error of the fit. At least two seeds.

    >>> from icl_verify.settings import Setting
    >>> best = single_head_minimum(np.linspace(0.3, 0.75, 8), Setting(d=5, L=40,
    ...                            sigma2=0.1), 4096, seeds=[0, 1, 2], degree=4)
    >>> bool(0.45 < best.omega.mean < 0.6 and best.omega.n == 3)
    True
    """
    omega = np.asarray(omega, dtype=float)
    profiles = [
        single_head_profile(omega, setting, n_prompts, seed=seed, device=device) for seed in seeds
    ]
    mu, loss = (np.array(column) for column in zip(*profiles, strict=True))  # (R, G)
    minima = np.array(
        [fitted_minimum(omega, values, m, degree) for m, values in zip(mu, loss, strict=True)]
    )  # (R, 3): omega, loss, mu
    count = len(minima)
    mean, se = mean_se(minima, axis=0)
    (profile_loss, profile_loss_se), (profile_mu, profile_mu_se) = (
        mean_se(values, axis=0) for values in (loss, mu)
    )
    return SingleHeadMinimum(
        *(MonteCarloEstimate(float(mean[k]), float(se[k]), count) for k in range(3)),
        profile_loss=profile_loss,
        profile_loss_se=profile_loss_se,
        profile_mu=profile_mu,
        profile_mu_se=profile_mu_se,
    )


# ---------------------------------------------------------------------------------------------
# HE-T4.2i: the ± pair against debiased GD at fixed eta = 2 omega mu


@dataclass(frozen=True, eq=False)
class SquareGaps:
    """Monte Carlo mean squares E(y_TF - y_dGD)^2 at K points, on shared prompts.

    Attributes:
        mean: (K,) mean over prompts of the per-prompt conditional mean squares.
        covariance: (K, K) covariance of those means (sample covariance / n).
        n: number of prompts.
    """

    mean: np.ndarray
    covariance: np.ndarray
    n: int

    @property
    def rms(self) -> np.ndarray:
        """sqrt(mean), (K,)."""
        return np.sqrt(self.mean)

    @property
    def rms_stderr(self) -> np.ndarray:
        """The SE of each RMS (delta method: SE(mean) / (2 RMS)), (K,)."""
        return np.sqrt(np.diag(self.covariance)) / (2 * self.rms)

    def log_slope_stderr(self, x) -> float:
        """Monte Carlo SE of the least-squares slope of log RMS against log x (delta method).

        The slope is sum_k w_k log RMS_k with w = (log x - mean) / sum (log x - mean)^2, so its
        gradient in the means is w / (2 mean); the covariance of the shared-prompt means does
        the rest.

        >>> gaps = SquareGaps(np.array([1.0, 4.0]), np.diag([1e-4, 1e-4]), 100)
        >>> round(gaps.log_slope_stderr([1.0, 2.0]), 6)  # sqrt(0.5^2 + 0.125^2) 1e-2 / log 2
        0.007435
        """
        log_x = np.log(np.asarray(x, dtype=float))
        weights = (log_x - log_x.mean()) / ((log_x - log_x.mean()) ** 2).sum()
        gradient = 0.5 * weights / self.mean  # d slope / d mean
        return math.sqrt(max(float(gradient @ self.covariance @ gradient), 0.0))

    def rms_loglog_slope(self, x) -> tuple[float, float]:
        """The least-squares slope of log RMS against log x, and its SE (the larger of two).

        The slope is `icl_verify.statistics.loglog_slope` of (x, `rms`); its SE is the larger of
        that fit's (from the residuals: how far the points lie from a power law) and the Monte
        Carlo one (`log_slope_stderr`: how far the shared-prompt means may move). x: (K,).

        >>> gaps = SquareGaps(np.array([1.0, 16.0, 256.0]), np.diag([1e-4, 1e-4, 1e-4]), 100)
        >>> slope, se = gaps.rms_loglog_slope([1.0, 2.0, 4.0])  # RMS = x^2 exactly
        >>> round(slope, 12), bool(se == gaps.log_slope_stderr([1.0, 2.0, 4.0]) > 0)
        (2.0, True)
        """
        fit = loglog_slope(x, self.rms)
        return fit.slope, max(fit.slope_se, self.log_slope_stderr(x))


def square_gaps_to_debiased_gd(
    omegas, lengths: Sequence[int], eta: float, d: int, sigma2: float, n_prompts: int, *,
    seed: int, device=None,
) -> SquareGaps:  # fmt: skip
    """E(y_TF - y_dGD(eta))^2 of the ± pair (omega, eta/(2 omega)) at every omega and length.

    The difference is linear in the labels, Delta = w^T y with w = dDelta/dy (autograd through
    the predictors), so each prompt contributes its exact conditional mean square over beta
    and the noise, ||X^T w||^2 / d + sigma2 ||w||^2 (as `LinearInLabels`, without a query
    label). Prompts (float64), in blocks of `SQUARE_GAP_BLOCK` from one generator, are drawn at
    the largest length and truncated to each length (nested prompts, common random numbers).
    Points are omega-major: index i * len(lengths) + j is (omegas[i], lengths[j]).

    >>> gaps = square_gaps_to_debiased_gd([0.01, 0.02, 0.04], [40], 0.88, 5, 0.1, 512, seed=0)
    >>> [round(float(s), 1) for s in np.diff(np.log2(gaps.rms))]  # RMS ~ omega^2
    [2.0, 2.0]
    """
    omega = torch.as_tensor(np.asarray(omegas, float), dtype=torch.float64, device=device)
    heads = omega[:, None] * torch.tensor([1.0, -1.0], dtype=torch.float64, device=device)
    weights = eta / (2 * heads)  # (G, 2)
    chunks = []
    generator = _generator(seed, "cpu" if device is None else device)
    longest = Setting(d, max(lengths), sigma2)
    for start in range(0, n_prompts, SQUARE_GAP_BLOCK):
        size = min(SQUARE_GAP_BLOCK, n_prompts - start)
        full = sample_linear_regression(
            size, longest, generator=generator, device=device, dtype=torch.float64
        )
        rows = []
        for L in lengths:
            rows += _conditional_square_gaps(heads, weights, eta, full, L, d, sigma2)
        chunks.append(torch.stack(rows))  # (len(lengths) * G, n), length-major
    samples = torch.cat(chunks, dim=1).cpu().numpy()
    order = np.arange(samples.shape[0]).reshape(len(lengths), len(omega)).T.ravel()
    samples = samples[order]  # omega-major
    n = samples.shape[1]
    return SquareGaps(samples.mean(1), np.cov(samples) / n, n)


def _conditional_square_gaps(heads, weights, eta, full: Prompts, L: int, d: int, sigma2: float):
    """Per omega, E[(y_TF - y_dGD)^2 | X, x_q] on the first L examples: G tensors of shape (n,)."""
    X, x_query = full.X[:, :L], full.x_query
    y = full.y[:, :L].clone().requires_grad_(True)
    rows = []
    with torch.enable_grad():
        tf = kernel_sum_prediction(heads[:, None, :], weights[:, None, :], X, y, x_query)
        gap = tf - gd_prediction(X, y, x_query, eta, debiased=True)  # (G, n)
        for row in gap:
            (w,) = torch.autograd.grad(row.sum(), y, retain_graph=True)  # (n, L)
            explained = (X.mT @ w[..., None])[..., 0]  # (n, d)
            rows.append((explained**2).sum(-1) / d + sigma2 * (w**2).sum(-1))
    return rows
