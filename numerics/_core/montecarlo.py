"""Monte Carlo estimates of population losses E(y_hat - y_q)^2, streamed, in float64, reproducible.

He et al. (2025) define the population loss (2.5) as the plain mean squared error of the query
prediction, with a noisy query label (reference `he2025.md` §0.2-0.3, §HE-2.5). This module
estimates it for any predictor (a callable ``Prompts -> predictions (n,)``):

- `monte_carlo_loss` / `monte_carlo_losses`: the mean of ``(y_hat - y_q)^2`` over sampled prompts,
  with its standard error; several predictors are evaluated on the SAME prompts, so the SE of
  their difference is the paired one (`JointMonteCarloEstimate.difference`);
- `LinearInLabels`: a variance-reduced estimator for predictors linear in the context labels,
  averaging the exact conditional risk given (X, x_q) (derivation in its docstring);
- `kernel_sum_loss_grid`: the true loss of the kernel-sum predictor (3.2) over a grid of
  (omega, mu) points, all mu values from one pass per omega (the loss is quadratic in mu).

Prompts are drawn in fixed blocks of `RANDOMNESS_BLOCK` prompts, block b from its own
generator seeded by ``(seed, b)``; ``chunk`` only bounds how many prompts are evaluated at
once (at most one block).
So the same seed on the same device gives the same prompts whatever the chunk size, and
different seeds give independent estimates. Sums are accumulated in float64 with Chan's
pairwise update of means and co-moments. Nothing here imports `theory`.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, fields, replace

import numpy as np
import torch
from icl_verify.numerics._core.data import Prompts, sample_linear_regression, seeded_generator
from icl_verify.numerics._core.estimators import kernel_head_averages
from tqdm.auto import tqdm

from icl_verify.limits import MONTE_CARLO_BLOCK
from icl_verify.settings import Setting

__all__ = [
    "RANDOMNESS_BLOCK",
    "JointMonteCarloEstimate",
    "LinearInLabels",
    "LossLandscape",
    "MonteCarloEstimate",
    "kernel_sum_loss_grid",
    "monte_carlo_loss",
    "monte_carlo_losses",
]

RANDOMNESS_BLOCK = MONTE_CARLO_BLOCK  # prompts per independently seeded block: the unit of chance

Predictor = Callable[[Prompts], torch.Tensor]  # prompts with batch (n,) -> predictions (n,)
Sampler = Callable[[int, torch.Generator], Prompts]  # (n, generator) -> prompts with batch (n,)


# ---------------------------------------------------------------------------------------------
# result types


@dataclass(frozen=True)
class MonteCarloEstimate:
    """A Monte Carlo mean with its standard error ``sqrt(sample variance / n)``."""

    mean: float
    stderr: float
    n: int

    def z_score(self, reference: float) -> float:
        """``(mean - reference) / stderr``: how many SEs the estimate lies from ``reference``.

        >>> MonteCarloEstimate(mean=0.25, stderr=0.01, n=1000).z_score(0.24)
        1.0000000000000009
        """
        return (self.mean - reference) / self.stderr


@dataclass(frozen=True, eq=False)
class JointMonteCarloEstimate:
    """Losses of several predictors on the same prompts.

    Attributes:
        names: the predictors' names, in order.
        mean: (K,) float64 mean losses.
        covariance: (K, K) float64 sample covariance of the per-prompt losses.
        n: number of prompts.
    """

    names: tuple[str, ...]
    mean: np.ndarray
    covariance: np.ndarray
    n: int

    def __getitem__(self, name: str) -> MonteCarloEstimate:
        k = self._index(name)
        return MonteCarloEstimate(
            float(self.mean[k]), math.sqrt(max(self.covariance[k, k], 0.0) / self.n), self.n
        )

    def difference(self, first: str, second: str) -> MonteCarloEstimate:
        """Paired estimate of ``loss(first) - loss(second)`` with the SE of the difference."""
        i, j = self._index(first), self._index(second)
        c = self.covariance
        variance = max(c[i, i] + c[j, j] - 2.0 * c[i, j], 0.0)
        return MonteCarloEstimate(
            float(self.mean[i] - self.mean[j]), math.sqrt(variance / self.n), self.n
        )

    def ratio(self, first: str, second: str) -> MonteCarloEstimate:
        """Paired estimate of ``loss(first) / loss(second)``, r = A / B of the two means, with
        the delta-method SE ``|r| sqrt((c_aa/A² + c_bb/B² − 2 c_ab/(A B)) / n)`` (the covariance
        of the pair counted; `icl_verify.statistics.ratio_of_means` from the covariance).

        >>> losses = JointMonteCarloEstimate(
        ...     ("a", "b"), np.array([2.0, 1.0]), np.array([[4.0, 2.0], [2.0, 1.0]]), n=100)
        >>> losses.ratio("a", "b")  # a = 2 b on every prompt: the ratio is exact
        MonteCarloEstimate(mean=2.0, stderr=0.0, n=100)
        """
        i, j = self._index(first), self._index(second)
        a, b, c = self.mean[i], self.mean[j], self.covariance
        relative = c[i, i] / a**2 + c[j, j] / b**2 - 2.0 * c[i, j] / (a * b)
        ratio = float(a / b)
        return MonteCarloEstimate(
            ratio, abs(ratio) * math.sqrt(max(relative, 0.0) / self.n), self.n
        )

    def _index(self, name: str) -> int:
        if name not in self.names:
            raise ValueError(f"name must be one of {self.names}, got {name!r}")
        return self.names.index(name)


@dataclass(frozen=True, eq=False)
class LossLandscape:
    """True loss E(y_hat - y_q)^2 of the kernel-sum predictor (3.2) on a grid, on shared prompts.

    Attributes:
        omega: (G, H) KQ scales, one row per grid point.
        mu: (M, H) OV weights, one row per grid point.
        mean: (G, M) float64 loss at (omega[g], mu[m]).
        stderr: (G, M) its standard error.
        n: number of prompts.
    """

    omega: np.ndarray
    mu: np.ndarray
    mean: np.ndarray
    stderr: np.ndarray
    n: int


@dataclass(frozen=True)
class LinearInLabels:
    """Marks a predictor as linear in the context labels: ``y_hat = w(X, x_q)^T y``.

    Its loss is then estimated by the exact conditional risk given (X, x_q), averaged over
    sampled (X, x_q) — unbiased, with much lower variance than ``(y_hat - y_q)^2``.
    Derivation (data model §0.2: ``y = X beta + eps``, ``y_q = x_q^T beta + eps_q``; beta, eps,
    eps_q independent, ``beta ~ N(0, Sigma_beta = I_d / d)``, noise variance sigma2):
    ``w^T y - y_q = (X^T w - x_q)^T beta + w^T eps - eps_q``, three independent mean-zero terms, so

        E[(w^T y - y_q)^2 | X, x_q] = ||X^T w - x_q||^2_{Sigma_beta} + sigma2 ||w||^2 + sigma2
                                    = ||X^T w - x_q||^2 / d + sigma2 ||w||^2 + sigma2,

    and the tower rule makes its average over (X, x_q) an unbiased estimate of the loss. The
    weights are read off by autograd, ``w = d y_hat / d y``, and the linearity is checked on every
    chunk (``y_hat`` must equal ``w^T y``), so wrapping a non-linear predictor raises ValueError.
    Needs a `Setting` as the source (it uses d and sigma2); the covariance of x may be anything.

    Attributes:
        predictor: a callable ``Prompts -> predictions``, linear in ``prompts.y``.
    """

    predictor: Predictor


# ---------------------------------------------------------------------------------------------
# streaming


def _check_int(name: str, value: object, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def _block_generator(seed: int, block: int, device: torch.device) -> torch.Generator:
    """Generator of block ``block``: seeded from (seed, block) by numpy's SeedSequence hashing."""
    state = np.random.SeedSequence([seed, block]).generate_state(1, dtype=np.uint64)[0]
    return seeded_generator(int(state), device)


def _chunks(
    sampler: Sampler, n_prompts: int, chunk: int, seed: int, device: torch.device, progress: bool
) -> Iterator[Prompts]:
    """Prompts block by block (block b from its own generator), each split into pieces <= chunk."""
    n_blocks = math.ceil(n_prompts / RANDOMNESS_BLOCK)
    bar = tqdm(total=n_prompts, unit="prompt", disable=not progress, leave=False)
    for block in range(n_blocks):
        size = min(RANDOMNESS_BLOCK, n_prompts - block * RANDOMNESS_BLOCK)
        prompts = sampler(size, _block_generator(seed, block, device))
        for start in range(0, size, chunk):
            yield Prompts(
                *(getattr(prompts, f.name)[start : start + chunk] for f in fields(Prompts))
            )
            bar.update(min(chunk, size - start))
    bar.close()


class _Moments:
    """Running float64 mean (K,) and co-moment sum (K, K) of per-prompt values (Chan et al.)."""

    def __init__(self, k: int, device: torch.device):
        self.n = 0
        self.mean = torch.zeros(k, dtype=torch.float64, device=device)
        self.comoment = torch.zeros(k, k, dtype=torch.float64, device=device)

    def add(self, values: torch.Tensor) -> None:
        """values: (K, m) float64."""
        m = values.shape[1]
        batch_mean = values.mean(dim=1)
        centred = values - batch_mean[:, None]
        delta = batch_mean - self.mean
        total = self.n + m
        self.comoment += centred @ centred.T + torch.outer(delta, delta) * (self.n * m / total)
        self.mean += delta * (m / total)
        self.n = total


def _source(
    source, device: torch.device, dtype: torch.dtype, covariance
) -> tuple[Sampler, Setting | None]:
    """(sampler, setting or None) from a `Setting` or a sampler callable."""
    if isinstance(source, Setting):

        def sampler(n: int, generator: torch.Generator) -> Prompts:
            return sample_linear_regression(
                n, source, generator=generator, device=device, dtype=dtype, covariance=covariance
            )

        return sampler, source
    if callable(source):
        if covariance is not None:
            raise ValueError("covariance must be None when source is a sampler (it samples x)")
        return source, None
    raise ValueError(
        f"source must be a Setting or a sampler (n, generator) -> Prompts, "
        f"got {type(source).__name__}"
    )


def _linear_conditional_risk(
    predictor: Predictor, prompts: Prompts, setting: Setting
) -> torch.Tensor:
    """E[(w^T y - y_q)^2 | X, x_q] per prompt (see `LinearInLabels`), float64 (n,)."""
    y = prompts.y.detach().requires_grad_(True)
    with torch.enable_grad():
        prediction = predictor(replace(prompts, y=y))  # (n,)
        if prediction.requires_grad:
            (weights,) = torch.autograd.grad(prediction.sum(), y, allow_unused=True)
        else:
            weights = None
    weights = torch.zeros_like(y) if weights is None else weights  # (n, L)
    prediction = prediction.detach()
    tolerance = 10.0 * math.sqrt(torch.finfo(prompts.y.dtype).eps)
    gap = (prediction - (weights * prompts.y).sum(dim=-1)).abs()
    if bool((gap > tolerance * (1.0 + prediction.abs())).any()):
        raise ValueError(
            "predictor must be linear in the labels to be wrapped in LinearInLabels, but "
            f"y_hat differs from (dy_hat/dy)^T y by up to {float(gap.max()):.3g}"
        )
    return label_weights_risk(
        weights.double(), prompts.X.double(), prompts.x_query.double(), float(setting.sigma2)
    )


def label_weights_risk(
    weights: torch.Tensor, X: torch.Tensor, x_query: torch.Tensor, sigma2: float
) -> torch.Tensor:
    """``E[(w^T y - y_q)^2 | X, x_q]`` of a predictor ``w^T y`` on the data of §0.2 (see
    `LinearInLabels` for the derivation): ``||X^T w - x_q||^2 / d + sigma2 ||w||^2 + sigma2``.

    Shapes: weights (..., L), X (..., L, d), x_query (..., d) -> (...,); differentiable.

    >>> X, xq = torch.eye(2), torch.tensor([1.0, 0.0])
    >>> label_weights_risk(torch.tensor([1.0, 0.0]), X, xq, 0.1)  # w^T y = y_1: noise only
    tensor(0.2000)
    """
    residual = (X.mT @ weights[..., None])[..., 0] - x_query  # (..., d)
    d = X.shape[-1]
    return (residual**2).sum(dim=-1) / d + sigma2 * (weights**2).sum(dim=-1) + sigma2


def _per_prompt_losses(predictor, prompts: Prompts, setting: Setting | None) -> torch.Tensor:
    """Per-prompt loss values, float64 (n,)."""
    if isinstance(predictor, LinearInLabels):
        if setting is None:
            raise ValueError(
                "source must be a Setting (d, L, sigma2) for a LinearInLabels predictor, "
                "got a sampler"
            )
        return _linear_conditional_risk(predictor.predictor, prompts, setting)
    error = predictor(prompts) - prompts.y_query  # (n,)
    return error.double() ** 2


def _validated(n_prompts, chunk, seed, device) -> tuple[int, int, int, torch.device]:
    n_prompts = _check_int("n_prompts", n_prompts, 2)
    chunk = _check_int("chunk", chunk, 1)
    seed = _check_int("seed", seed, 0)
    device = torch.device("cpu" if device is None else device)
    return n_prompts, chunk, seed, device


def monte_carlo_losses(
    predictors: Mapping[str, Predictor | LinearInLabels],
    source,
    n_prompts: int,
    *,
    chunk: int = RANDOMNESS_BLOCK,
    seed: int = 0,
    device=None,
    dtype: torch.dtype = torch.float32,
    covariance: torch.Tensor | None = None,
    progress: bool = False,
) -> JointMonteCarloEstimate:
    """Population losses E(y_hat - y_q)^2 (2.5) of several predictors on the same sampled prompts.

    Args:
        predictors: name -> callable ``Prompts -> predictions`` (batch (n,) -> (n,)), or a
            `LinearInLabels` wrapper for the variance-reduced conditional estimator.
        source: a `Setting` (``d``, ``L``, ``sigma2``: prompts of §0.2 from
            `numerics.sample_linear_regression`, with ``covariance`` for x if given), or a
            sampler ``(n, generator) -> Prompts``.
        n_prompts: number of prompts (>= 2).
        chunk: prompts evaluated at once (memory bound; at most `RANDOMNESS_BLOCK` are, whatever
            chunk says); it does not change which prompts are drawn.
        seed: >= 0; block b of `RANDOMNESS_BLOCK` prompts uses a generator seeded by (seed, b).
        device, dtype: where and in which precision prompts are sampled and predictors run;
            accumulation is always float64.
        progress: show a progress bar.

    Returns the means and the covariance of the per-prompt losses; ``result[name]`` is one
    predictor's `MonteCarloEstimate`, ``result.difference(a, b)`` the paired difference.

    >>> from icl_verify.settings import Setting
    >>> from icl_verify.numerics import gd_prediction
    >>> setting = Setting(d=5, L=40, sigma2=0.1)
    >>> gd = lambda p: gd_prediction(p.X, p.y, p.x_query, 0.8)
    >>> dgd = lambda p: gd_prediction(p.X, p.y, p.x_query, 0.8, debiased=True)
    >>> r = monte_carlo_losses({"gd": gd, "dgd": dgd}, setting, 20_000, seed=1)
    >>> abs(r["gd"].mean - 0.2440) < 4 * r["gd"].stderr  # exact: 1.1 - 1.6 + 0.64 * 46.5/40
    True
    >>> r.difference("dgd", "gd").stderr < r["gd"].stderr / 5  # pairing removes most noise
    True
    """
    if not isinstance(predictors, Mapping) or len(predictors) == 0:
        raise ValueError(
            f"predictors must be a non-empty mapping name -> predictor, got {predictors!r}"
        )
    n_prompts, chunk, seed, device = _validated(n_prompts, chunk, seed, device)
    sampler, setting = _source(source, device, dtype, covariance)
    names = tuple(predictors)
    moments = _Moments(len(names), device)
    with torch.no_grad():
        for prompts in _chunks(sampler, n_prompts, chunk, seed, device, progress):
            values = [_per_prompt_losses(predictors[k], prompts, setting) for k in names]
            moments.add(torch.stack(values))  # (K, m)
    covariance_matrix = moments.comoment.cpu().numpy() / (moments.n - 1)
    return JointMonteCarloEstimate(names, moments.mean.cpu().numpy(), covariance_matrix, moments.n)


def monte_carlo_loss(
    predictor: Predictor | LinearInLabels,
    source,
    n_prompts: int,
    *,
    chunk: int = RANDOMNESS_BLOCK,
    seed: int = 0,
    device=None,
    dtype: torch.dtype = torch.float32,
    covariance: torch.Tensor | None = None,
    progress: bool = False,
) -> MonteCarloEstimate:
    """Population loss E(y_hat - y_q)^2 (2.5) of one predictor; arguments as `monte_carlo_losses`.

    >>> from icl_verify.settings import Setting
    >>> from icl_verify.numerics import gd_prediction
    >>> setting = Setting(d=5, L=40, sigma2=0.1)
    >>> gd = lambda p: gd_prediction(p.X, p.y, p.x_query, 0.8)
    >>> plain = monte_carlo_loss(gd, setting, 20_000, seed=2)
    >>> reduced = monte_carlo_loss(LinearInLabels(gd), setting, 20_000, seed=2)
    >>> reduced.stderr < plain.stderr / 3, abs(reduced.mean - 0.2440) < 4 * reduced.stderr
    (True, True)
    """
    joint = monte_carlo_losses(
        {"loss": predictor},
        source,
        n_prompts,
        chunk=chunk,
        seed=seed,
        device=device,
        dtype=dtype,
        covariance=covariance,
        progress=progress,
    )
    return joint["loss"]


def kernel_sum_loss_grid(
    omega,
    mu,
    source,
    n_prompts: int,
    *,
    chunk: int = 2048,
    seed: int = 0,
    device=None,
    dtype: torch.dtype = torch.float32,
    covariance: torch.Tensor | None = None,
    progress: bool = False,
) -> LossLandscape:
    """True loss of the kernel-sum predictor (3.2) at every (omega[g], mu[m]), on the same prompts.

    For fixed omega the prediction ``mu^T a`` is linear in mu, with per-head kernel averages
    ``a_h = sum_i y_i softmax_i(omega_h x_i^T x_q)`` (`kernel_head_averages`). With
    ``z = (a, y_q)`` and ``v = (mu, -1)`` the per-prompt loss is ``f = (v^T z)^2``, so

        E f   = v^T E[z z^T] v,      E f^2 = E[(v^T z)^4] = <E[z⊗z⊗z⊗z], v⊗v⊗v⊗v>,

    and one pass per omega accumulating the second and fourth moments of z (float64) gives the
    mean and the standard error ``sqrt((E f^2 - (E f)^2) / (n - 1))`` for every mu at once.
    Cost: one softmax per (omega, prompt); memory about ``G * chunk * H * L`` numbers.
    Results equal `monte_carlo_loss` of `kernel_sum_prediction` with the same seed, up to
    rounding. Arguments as `monte_carlo_losses`.

    Args:
        omega: (G, H) KQ scales (e.g. rows (w, -w) for the two-head ± family, or (G, 1)).
        mu: (M, H) OV weights (e.g. rows (m, -m)).

    >>> from icl_verify.settings import Setting
    >>> w = torch.linspace(0.05, 0.3, 3)
    >>> grid = kernel_sum_loss_grid(torch.stack([w, -w], 1), [[3.0, -3.0], [4.0, -4.0]],
    ...                             Setting(d=5, L=40, sigma2=0.1), 4096)
    >>> grid.mean.shape, bool((grid.stderr > 0).all())
    ((3, 2), True)
    """
    n_prompts, chunk, seed, device = _validated(n_prompts, chunk, seed, device)
    omega = torch.as_tensor(omega, dtype=dtype, device=device)
    mu = torch.as_tensor(mu, dtype=torch.float64, device=device)
    if omega.ndim != 2 or mu.ndim != 2 or omega.shape[1] != mu.shape[1]:
        raise ValueError(
            "omega and mu must be (G, H) and (M, H) with the same number of heads H, got "
            f"{tuple(omega.shape)} and {tuple(mu.shape)}"
        )
    sampler, _ = _source(source, device, dtype, covariance)
    G, H = omega.shape
    K = H + 1
    second = torch.zeros(G, K, K, dtype=torch.float64, device=device)  # sum z z^T
    fourth = torch.zeros(G, K * K, K * K, dtype=torch.float64, device=device)  # sum (zz)(zz)^T
    n = 0
    with torch.no_grad():
        for prompts in _chunks(sampler, n_prompts, chunk, seed, device, progress):
            averages = kernel_head_averages(
                omega[:, None, :], prompts.X, prompts.y, prompts.x_query
            )  # (G, m, H)
            labels = prompts.y_query.expand(G, -1)[..., None]  # (G, m, 1)
            z = torch.cat([averages, labels], dim=-1).double()  # (G, m, K)
            outer = (z[..., :, None] * z[..., None, :]).reshape(G, -1, K * K)  # (G, m, K^2)
            second += outer.sum(dim=1).reshape(G, K, K)
            fourth += outer.mT @ outer
            n += z.shape[1]
    v = torch.cat([mu, -torch.ones(mu.shape[0], 1, dtype=torch.float64, device=device)], 1)
    vv = (v[:, :, None] * v[:, None, :]).reshape(v.shape[0], K * K)  # (M, K^2)
    mean = torch.einsum("mi,gij,mj->gm", v, second / n, v)  # (G, M)
    mean_square = torch.einsum("mp,gpq,mq->gm", vv, fourth / n, vv)
    variance = (mean_square - mean**2).clamp(min=0.0) * (n / (n - 1))
    return LossLandscape(
        omega=omega.double().cpu().numpy(),
        mu=mu.cpu().numpy(),
        mean=mean.cpu().numpy(),
        stderr=(variance / n).sqrt().cpu().numpy(),
        n=n,
    )
