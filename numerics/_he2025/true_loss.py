"""Gradient descent on the TRUE loss of the kernel-sum model (3.2) of He et al. (2025), App. C.

Appendix C (Figure 21) sets four-head training under the true loss beside gradient flow on the
approximate loss Ltilde (4.1). The model trained here is `numerics.KernelSumModel`: the
predictor (3.2) in its own coordinates (omega, mu), which is exactly what Ltilde approximates
(Prop. 4.1), so the two dynamics share their parameters and their clock.

- `conditional_risk`: the exact risk of the kernel-sum predictor given the covariates,
  ``E[(y_hat - y_q)^2 | X, x_q] = ||X^T w - x_q||^2 / d + sigma2 ||w||^2 + sigma2`` with the
  label weights ``w_i = sum_h mu_h softmax_i(omega_h x_i^T x_q)`` (the predictor is linear in
  the labels; derivation in `numerics.LinearInLabels`). Its mean over sampled
  covariates is the population MSE (2.5) (plain MSE, no 1/2), and its gradient an unbiased
  stochastic gradient of it, with the label noise and beta integrated out exactly;
- `train_true_loss`: plain SGD (no momentum) on that loss, E members from one start, each on its
  own fresh prompts every step, float64. Step k sits at t = lr k of the gradient flow of the true
  loss (same clock as `dynamics.gradient_flow`, which descends Ltilde as a plain MSE); the
  members' spread is the SGD noise (about sqrt(lr / batch));
- `true_losses`: the population loss of every logged (member, step), by Monte Carlo of
  `conditional_risk` on shared prompts, with standard errors;
- `true_loss_summary`: the member means of a `TrueLossHistory` with their standard errors, and
  the true loss of the member mean at chosen records (SGD spread and Monte Carlo error).

Nothing here imports `theory` or `dynamics`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import ClassVar

import numpy as np
import torch
from icl_verify.numerics._core.data import sample_linear_regression, seeded_generator
from icl_verify.numerics._core.estimators import kernel_sum_weights
from icl_verify.numerics._core.models import KernelSumModel
from icl_verify.numerics._core.montecarlo import label_weights_risk

from icl_verify.settings import Setting
from icl_verify.statistics import mean_of_estimates, mean_se

__all__ = [
    "TrueLossHistory",
    "TrueLossSummary",
    "TrueLossTraining",
    "conditional_risk",
    "train_true_loss",
    "true_loss_summary",
    "true_losses",
]

LOSS_BLOCK = 2048  # prompts per block of `true_losses` (one generator stream)


def conditional_risk(
    omega: torch.Tensor, mu: torch.Tensor, X: torch.Tensor, x_query: torch.Tensor, sigma2: float
) -> torch.Tensor:
    """``E[(y_hat - y_q)^2 | X, x_q]`` of the kernel-sum predictor (3.2) per prompt (§0.2 data).

    ``w_i = sum_h mu_h softmax_i(omega_h x_i^T x_q)``; the risk is ``||X^T w - x_q||^2 / d +
    sigma2 ||w||^2 + sigma2`` (beta ~ N(0, I_d/d), label noise sigma2 on context and query).
    Shapes: omega, mu (..., H) broadcasting against the prompt batch (...), X (..., L, d),
    x_query (..., d) -> (...,). Differentiable in omega and mu.

    >>> from icl_verify.settings import Setting
    >>> g = torch.Generator().manual_seed(0)
    >>> p = sample_linear_regression(3, Setting(5, 40, 0.1), generator=g, dtype=torch.float64)
    >>> zero = conditional_risk(torch.zeros(1, 2), torch.zeros(1, 2), p.X, p.x_query, 0.1)
    >>> bool((zero - (p.x_query**2).sum(-1) / 5 - 0.1).abs().max() < 1e-15)  # y_hat = 0
    True
    """
    weights = kernel_sum_weights(omega, mu, X, x_query)  # (..., L): w = d y_hat / d y
    return label_weights_risk(weights, X, x_query, sigma2)


@dataclass(frozen=True, kw_only=True)
class TrueLossTraining:
    """What is trained, and how; its fields are the whole configuration (with the device, a
    complete cache key via `dataclasses.asdict`)."""

    d: int  # covariate dimension
    L: int  # prompt length
    sigma2: float  # label-noise variance
    omega0: tuple[float, ...]  # the start's KQ scales, one per head
    mu0: tuple[float, ...]  # the start's OV weights
    lr: float  # SGD step: step k sits at flow time t = lr k
    steps: int  # SGD steps
    members: int  # E runs from the same start, each on its own prompts
    batch: int  # fresh prompts per member per step
    log_every: int  # (omega, mu) recorded every this many steps (and at step 0)
    seed: int  # seed of the prompt stream

    # its cache name, and the version of the code making it: bump it when a change can alter
    # what `make` returns (`validation.cache.producers`; tests/validation/test_cache_versions.py)
    ARTEFACT: ClassVar[str] = "true-loss-train"
    ARTEFACT_VERSION: ClassVar[int] = 1

    def make(self, device="cpu", checkpoint_dir=None, progress=False, deadline=None, inputs=()):
        """`train_true_loss` of this training (short: no checkpoints, no deadline)."""
        return train_true_loss(self, device)

    def load(self, arrays: Mapping[str, np.ndarray]) -> TrueLossHistory:
        return TrueLossHistory.from_arrays(arrays)


@dataclass(frozen=True)
class TrueLossHistory:
    """E SGD runs on the true loss at R records (the start included), float64.

    Attributes:
        t: (R,) flow time t = lr * step.
        omega, mu: (R, E, H) the members' KQ scales and OV weights.
    """

    t: np.ndarray
    omega: np.ndarray
    mu: np.ndarray

    def arrays(self) -> dict[str, np.ndarray]:
        """The attributes by name (for storage); `from_arrays` inverts it."""
        return {field.name: getattr(self, field.name) for field in fields(self)}

    @classmethod
    def from_arrays(cls, arrays: Mapping[str, np.ndarray]) -> TrueLossHistory:
        return cls(**{field.name: np.asarray(arrays[field.name]) for field in fields(cls)})

    @property
    def log_norm(self) -> np.ndarray:
        """(R, E) ln ||theta|| of each member, ``(1/2) ln(sum_h omega_h^2 + sum_h mu_h^2)``.

        >>> history = TrueLossHistory(t=np.zeros(1), omega=np.full((1, 1, 2), 0.3),
        ...     mu=np.full((1, 1, 2), 0.4))
        >>> round(float(np.exp(history.log_norm[0, 0])), 12)  # sqrt(2 (0.09 + 0.16))
        0.707106781187
        """
        return 0.5 * np.log((self.omega**2).sum(-1) + (self.mu**2).sum(-1))


def train_true_loss(training: TrueLossTraining, device: str = "cpu") -> TrueLossHistory:
    """Plain SGD on the true loss of the kernel-sum model from (omega0, mu0); see the module.

    Each step draws fresh covariates for every member ((E, batch) prompts) and descends
    ``sum_e mean_b conditional_risk``, so member e takes exactly its own SGD step.

    >>> training = TrueLossTraining(d=5, L=40, sigma2=0.1, omega0=(0.02, -0.03),
    ...     mu0=(0.03, -0.02), lr=0.01, steps=20, members=2, batch=64, log_every=10, seed=0)
    >>> history = train_true_loss(training)
    >>> history.t.tolist(), history.omega.shape, history.mu[0, 1].tolist()
    ([0.0, 0.1, 0.2], (3, 2, 2), [0.03, -0.02])
    """
    E = training.members
    start = [
        torch.tensor([values] * E, dtype=torch.float64)
        for values in (training.omega0, training.mu0)
    ]
    model = KernelSumModel(*start).to(device)  # omega, mu: (E, H)
    optimizer = torch.optim.SGD(model.parameters(), lr=training.lr, momentum=0.0)
    generator = seeded_generator(training.seed, device)
    records = [(model.omega.detach().cpu().numpy().copy(), model.mu.detach().cpu().numpy().copy())]
    setting = Setting(training.d, training.L, training.sigma2)
    for step in range(1, training.steps + 1):
        prompts = sample_linear_regression(
            (E, training.batch), setting, generator=generator, device=device, dtype=torch.float64
        )
        risk = conditional_risk(
            model.omega[:, None, :],
            model.mu[:, None, :],
            prompts.X,
            prompts.x_query,
            training.sigma2,
        )  # (E, batch) fmt: skip
        optimizer.zero_grad()
        risk.mean(dim=1).sum().backward()
        optimizer.step()
        if step % training.log_every == 0:
            records.append(
                (model.omega.detach().cpu().numpy().copy(), model.mu.detach().cpu().numpy().copy())
            )
    steps = np.arange(len(records)) * training.log_every
    return TrueLossHistory(
        t=steps * training.lr,
        omega=np.stack([omega for omega, _ in records]),
        mu=np.stack([mu for _, mu in records]),
    )


def true_losses(
    omega, mu, setting: Setting, n_prompts: int, *, seed: int, device: str = "cpu"
) -> tuple[np.ndarray, np.ndarray]:
    """Population loss (2.5) of the kernel-sum predictor at each parameter point, float64 MC.

    Every point is evaluated on the same ``n_prompts`` prompts of ``setting`` (blocks of
    `LOSS_BLOCK` from one generator seeded by ``seed``), averaging `conditional_risk`. Args:
    omega, mu (..., H). Returns (mean, standard error), each of shape (...).

    >>> from icl_verify.settings import Setting
    >>> mean, se = true_losses([[0.0], [0.1]], [[0.0], [1.0]], Setting(5, 40, 0.1), 4096, seed=0)
    >>> round(float(mean[0]), 1), bool(mean[1] < mean[0] - 10 * se[1])  # mu = 0: 1 + sigma2
    (1.1, True)
    """
    omega = torch.as_tensor(np.asarray(omega, dtype=float), device=device)
    mu = torch.as_tensor(np.asarray(mu, dtype=float), device=device)
    shape = omega.shape[:-1]
    omega, mu = omega.reshape(-1, 1, omega.shape[-1]), mu.reshape(-1, 1, mu.shape[-1])  # (P, 1, H)
    generator = seeded_generator(seed, device)
    total = torch.zeros(omega.shape[0], dtype=torch.float64, device=device)
    square = torch.zeros_like(total)
    for start in range(0, n_prompts, LOSS_BLOCK):
        size = min(LOSS_BLOCK, n_prompts - start)
        prompts = sample_linear_regression(
            size, setting, generator=generator, device=device, dtype=torch.float64
        )
        with torch.no_grad():
            risk = conditional_risk(omega, mu, prompts.X, prompts.x_query, setting.sigma2)
        total += risk.sum(dim=1)
        square += (risk**2).sum(dim=1)
    mean = total / n_prompts
    variance = (square / n_prompts - mean**2).clamp(min=0.0) * n_prompts / (n_prompts - 1)
    stderr = (variance / n_prompts).sqrt()
    return mean.cpu().numpy().reshape(shape), stderr.cpu().numpy().reshape(shape)


@dataclass(frozen=True)
class TrueLossSummary:
    """The member means of E SGD runs on the true loss, each with its standard error.

    Attributes:
        omega, omega_se, mu, mu_se: (R, H) mean over members of the heads' KQ scales and OV
            weights, and its SE ``s / sqrt(E)`` (`statistics.mean_se`).
        log_norm, log_norm_se: (R,) mean over members of ln ||theta|| and its SE.
        loss, loss_se: (n,) the true loss (2.5) of the members at the chosen records, by Monte
            Carlo (`true_losses`), averaged over members; its SE adds in quadrature the
            members' spread ``s / sqrt(E)`` (`statistics.mean_se`) and their Monte Carlo SEs
            combined as those of independent estimates, ``sqrt(sum_e se_e^2) / E``
            (`statistics.mean_of_estimates`): the prompts are shared across members, so their
            error is not in the spread.
    """

    omega: np.ndarray
    omega_se: np.ndarray
    mu: np.ndarray
    mu_se: np.ndarray
    log_norm: np.ndarray
    log_norm_se: np.ndarray
    loss: np.ndarray
    loss_se: np.ndarray


def true_loss_summary(
    history: TrueLossHistory, records, setting: Setting, n_prompts: int, *, seed: int,
    device: str = "cpu",
) -> TrueLossSummary:  # fmt: skip
    """Member means with standard errors of ``history``, and the true loss at ``records``.

    Args: history (R records, E members, H heads); records: (n,) indices of the records whose
    true loss is estimated, on ``n_prompts`` prompts of ``setting`` from ``seed``
    (`true_losses`).

    >>> training = TrueLossTraining(d=5, L=40, sigma2=0.1, omega0=(0.02, -0.03),
    ...     mu0=(0.03, -0.02), lr=0.01, steps=20, members=3, batch=64, log_every=10, seed=0)
    >>> from icl_verify.settings import Setting
    >>> summary = true_loss_summary(train_true_loss(training), [0, 2], Setting(5, 40, 0.1), 2048,
    ...                             seed=1)
    >>> summary.omega.shape, float(summary.log_norm_se[0]), summary.loss.shape  # one start: SE 0
    ((3, 2), 0.0, (2,))
    >>> bool(summary.loss_se[0] > 0)  # at the start only the Monte Carlo error
    True
    """
    records = np.asarray(records)
    omega, omega_se = mean_se(history.omega, axis=1)
    mu, mu_se = mean_se(history.mu, axis=1)
    log_norm, log_norm_se = mean_se(history.log_norm, axis=1)
    omega_at, mu_at = history.omega[records], history.mu[records]  # (n, E, H)
    loss, monte_carlo_se = true_losses(
        omega_at, mu_at, setting, n_prompts, seed=seed, device=device
    )  # (n, E) each
    mean, spread_se = mean_se(loss, axis=1)
    _, shared_se = mean_of_estimates(loss, monte_carlo_se, axis=1)  # the prompts' error
    loss_se = np.sqrt(spread_se**2 + shared_se**2)
    return TrueLossSummary(omega, omega_se, mu, mu_se, log_norm, log_norm_se, mean, loss_se)
