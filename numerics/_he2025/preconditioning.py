"""The preconditioner a trained two-head model learns on KMS covariates (He et al. 2025 §5.3).

On ``x ~ N(0, Sigma)`` two-head softmax models learn ``KQ11 = ± omega Gamma`` and OV last
entries ``± mu`` (5.3); to first order in omega their prediction is preconditioned debiased GD

    y_hat = (1/L) sum_i y_i (x_i - xbar)^T Gamma_eff x_q,    Gamma_eff = sum_h mu_h KQ11_h,

(the softmax of ``omega_h s_i`` is ``(1 + omega_h (s_i - sbar))/L + O(omega^2)``; for a ± pair
``Gamma_eff = 2 mu omega Gamma``). Read-outs of a trained ensemble, none assuming the formula
they are compared with (nothing here imports `theory`):

- `learned_preconditioners`: ``Gamma_eff`` from the circuits (any leading shape, e.g. the logged
  history), and `head_opposition`, the cosine between the two heads' KQ11 blocks (-1 when
  ``KQ11^(2) = -c KQ11^(1)``);
- `fitted_preconditioners`: what the model applies, with no expansion assumed: the least-squares
  fit of its predictions on the d^2 features ``F_ab = (1/L) sum_i y_i (x_i - xbar)_a x_{q,b}``
  over Monte Carlo prompts of its training distribution (the matrix analogue of
  `numerics.fitted_steps`);
- `bootstrap_distances`: distances of the members' mean ``Gamma_eff`` to given target matrices
  (the claim passes them in) with bootstrap errors over members;
- `preconditioned_losses`: Monte Carlo risks of trained members and of preconditioned one-step GD
  at given matrices, on the same KMS prompts (paired);
- `simulated_optimal_preconditioner`: the preconditioner of one-step GD that fits the labels
  best on simulated prompts (Lemma E.4's Gamma*, measured);
- `settled_opposition`: the heads' opposition where training settles, with its Adam noise and
  drift;
- `read_paired_preconditioners`: all of the above for the paired members of a trained ensemble
  against given targets (`PairedPreconditioners`).
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import torch
from icl_verify.numerics._core.data import Prompts, embed, kms_covariance, sample_linear_regression
from icl_verify.numerics._core.ensemble import TrainedEnsemble, _EnsembleAtLength, member_kinds
from icl_verify.numerics._core.estimators import preconditioned_gd_prediction
from icl_verify.numerics._core.models import MultiHeadAttention
from icl_verify.numerics._core.montecarlo import (
    RANDOMNESS_BLOCK,
    JointMonteCarloEstimate,
    _chunks,
    _validated,
    monte_carlo_losses,
)

from icl_verify.settings import Setting

__all__ = [
    "BootstrapDistances",
    "FittedPreconditioners",
    "PairedPreconditioners",
    "bootstrap_distances",
    "fitted_preconditioners",
    "head_opposition",
    "learned_preconditioners",
    "model_preconditioners",
    "preconditioned_losses",
    "read_paired_preconditioners",
    "settled_opposition",
    "SimulatedPreconditioner",
    "simulated_optimal_preconditioner",
]


def learned_preconditioners(KQ, OV, d: int) -> np.ndarray:
    """``Gamma_eff = sum_h mu_h KQ11_h`` with ``mu_h = OV_h[-1, -1]`` (5.3)-(5.5), float64.

    KQ, OV: (..., H, D, D) circuits (e.g. `TrainedEnsemble.circuits()` or its logged history;
    inactive heads have OV = 0) -> (..., d, d).

    >>> KQ = np.zeros((2, 3, 3)); KQ[0, :2, :2] = [[0.2, 0.1], [0.1, 0.3]]; KQ[1] = -KQ[0]
    >>> OV = np.zeros((2, 3, 3)); OV[0, 2, 2], OV[1, 2, 2] = 2.0, -2.0
    >>> learned_preconditioners(KQ, OV, d=2)  # 2 mu omega Gamma
    array([[0.8, 0.4],
           [0.4, 1.2]])
    """
    KQ, OV = np.asarray(KQ, dtype=np.float64), np.asarray(OV, dtype=np.float64)
    return np.einsum("...h,...hab->...ab", OV[..., -1, -1], KQ[..., :d, :d])  # (..., d, d)


def head_opposition(KQ, d: int) -> np.ndarray:
    """Cosine between the KQ11 blocks of heads 1 and 2 (Frobenius inner product), shape (...,).

    -1 exactly when ``KQ11^(2) = -c KQ11^(1)`` with c > 0, the pattern (5.3). KQ: (..., H, D, D),
    H >= 2.

    >>> KQ = np.zeros((2, 3, 3)); KQ[0, :2, :2] = [[0.2, 0.1], [0.1, 0.3]]; KQ[1] = -3 * KQ[0]
    >>> round(float(head_opposition(KQ, d=2)), 12)
    -1.0
    """
    block = np.asarray(KQ, dtype=np.float64)[..., :2, :d, :d]
    first, second = block[..., 0, :, :], block[..., 1, :, :]  # (..., d, d) each
    inner = (first * second).sum(axis=(-2, -1))
    return inner / (np.linalg.norm(first, axis=(-2, -1)) * np.linalg.norm(second, axis=(-2, -1)))


@dataclass(frozen=True, eq=False)
class FittedPreconditioners:
    """Least-squares preconditioners of M members (float64).

    Attributes:
        value: (M, d, d) ``Gamma_fit``, the minimiser of ``mean_p (yhat_p - F_p : Gamma)^2``.
        stderr: (M, d, d) the ordinary least-squares standard error of each entry (residual
            variance times ``(F^T F)^{-1}``; the residual is the model's nonlinear part, not
            independent noise, so this is an approximate error).
        n: number of prompts.
    """

    value: np.ndarray
    stderr: np.ndarray
    n: int


def _covariance(d: int, rho: float, device) -> torch.Tensor | None:
    """The KMS covariance of the data model, None when isotropic (rho = 0: no matmul)."""
    return kms_covariance(d, rho, device=device) if rho else None


def fitted_preconditioners(
    ensemble: TrainedEnsemble,
    members: Sequence[int],
    *,
    n_prompts: int,
    seed: int = 0,
    device: str = "cpu",
) -> FittedPreconditioners:
    """Each member's least-squares preconditioner on the d^2 debiased GD features.

    ``Gamma_fit = argmin_G sum_p (yhat_p - sum_ab F_p,ab G_ab)^2`` with
    ``F_p = (1/L) sum_i y_i (x_i - xbar) x_q^T`` (so ``F_p : G`` is preconditioned debiased GD
    at G), over ``n_prompts`` prompts of the ensemble's data model (its KMS covariance included),
    drawn as `monte_carlo_losses` draws them. All members see the same prompts.

    >>> from icl_verify.numerics import EnsembleTraining, train_ensemble
    >>> training = EnsembleTraining(d=2, L=8, sigma2=0.1, heads=(2, 2), lr=3e-3, steps=20,
    ...     batch=16, seed=0, log_every=10, checkpoint_every=0, validation_batch=64, rho=0.5)
    >>> fit = fitted_preconditioners(train_ensemble(training), [0, 1], n_prompts=512)
    >>> fit.value.shape, bool((fit.stderr > 0).all())
    ((2, 2, 2), True)
    """
    members = ensemble.member_indices(members)
    return model_preconditioners(
        ensemble.model(members, device), ensemble.d, ensemble.L, ensemble.sigma2,
        rho=ensemble.rho, n_prompts=n_prompts, seed=seed, device=device,
    )  # fmt: skip


def model_preconditioners(
    model: MultiHeadAttention,
    d: int,
    L: int,
    sigma2: float,
    *,
    rho: float = 0.0,
    n_prompts: int,
    seed: int = 0,
    device: str = "cpu",
) -> FittedPreconditioners:
    """`fitted_preconditioners` of every member of ``model`` (e.g. built with
    `MultiHeadAttention.from_circuits`) on prompts of (d, L, sigma2) with KMS covariates of
    correlation ``rho`` (0: isotropic).

    >>> KQ = torch.zeros(1, 2, 3, 3, dtype=torch.float64); KQ[0, 0, :2, :2] = 0.01 * torch.eye(2)
    >>> KQ[0, 1] = -KQ[0, 0]
    >>> OV = torch.zeros(1, 2, 3, 3, dtype=torch.float64); OV[0, 0, 2, 2], OV[0, 1, 2, 2] = 50, -50
    >>> fit = model_preconditioners(MultiHeadAttention.from_circuits(KQ, OV), 2, 20, 0.1,
    ...                             n_prompts=4096)
    >>> bool(np.abs(fit.value - np.eye(2)).max() < 0.02)  # 2 mu omega I, to O(omega^2)
    True
    """
    n_prompts, chunk, seed, where = _validated(n_prompts, RANDOMNESS_BLOCK, seed, device)
    M = model.config.ensemble
    setting, covariance = Setting(d, L, sigma2), _covariance(d, rho, where)

    def sampler(count: int, generator: torch.Generator) -> Prompts:
        return sample_linear_regression(
            count, setting, generator=generator, device=where, covariance=covariance
        )

    gram = torch.zeros(d * d, d * d, dtype=torch.float64, device=where)  # F^T F
    cross = torch.zeros(M, d * d, dtype=torch.float64, device=where)  # yhat^T F
    square = torch.zeros(M, dtype=torch.float64, device=where)  # yhat^T yhat
    n = 0
    with torch.no_grad():
        for prompts in _chunks(sampler, n_prompts, chunk, seed, where, progress=False):
            Z = embed(prompts).to(model.W_Q.dtype)  # (m, D, L+1)
            predictions = model(Z.expand(M, *Z.shape)).double()  # (M, m)
            features = _gd_features(prompts, debiased=True)  # (m, d^2)
            gram += features.T @ features  # (d^2, d^2)
            cross += predictions @ features  # (M, d^2)
            square += (predictions * predictions).sum(dim=1)
            n += features.shape[0]
    inverse = torch.linalg.inv(gram)  # (d^2, d^2)
    coefficients = cross @ inverse  # (M, d^2)
    residual = square - (coefficients * cross).sum(dim=1)  # (M,) residual sum of squares
    variance = residual.clamp(min=0)[:, None] / (n - d * d) * torch.diagonal(inverse)[None]
    return FittedPreconditioners(
        value=coefficients.reshape(M, d, d).cpu().numpy(),
        stderr=variance.sqrt().reshape(M, d, d).cpu().numpy(),
        n=n,
    )


def _gd_features(prompts: Prompts, debiased: bool) -> torch.Tensor:
    """``F_ab = (1/L) sum_i y_i (x_i - xbar)_a x_{q,b}`` (``debiased``; else ``x_i``), flattened,
    float64, shape (m, d^2): one-step GD with preconditioner G predicts ``F : G``."""
    X, y = prompts.X.double(), prompts.y.double()  # (m, L, d), (m, L)
    if debiased:
        X = X - X.mean(dim=-2, keepdim=True)
    g = torch.einsum("pl,pla->pa", y, X) / X.shape[-2]  # (m, d)
    return (g[:, :, None] * prompts.x_query.double()[:, None, :]).flatten(1)


@dataclass(frozen=True, eq=False)
class SimulatedPreconditioner:
    """The preconditioner of one-step GD that fits the labels best on simulated prompts.

    Attributes:
        value: (d, d) the least-squares fit on all prompts.
        stderr: (d, d) its standard error per entry: the spread of the fits of the independent
            blocks of prompts (`RANDOMNESS_BLOCK` each) over sqrt(blocks), which holds whatever
            the residuals' structure (they are not independent noise here).
        blocks: the number of blocks.
    """

    value: np.ndarray
    stderr: np.ndarray
    blocks: int


def simulated_optimal_preconditioner(
    d: int,
    L: int,
    sigma2: float,
    *,
    rho: float = 0.0,
    n_prompts: int,
    debiased: bool = False,
    seed: int = 0,
    device: str = "cpu",
) -> SimulatedPreconditioner:
    """The risk-minimising preconditioner of one-step GD, measured: the G minimising
    ``mean_p (y_q,p - F_p : G)^2`` over ``n_prompts`` prompts of (d, L, sigma2) with KMS
    covariates (``rho``; 0 isotropic), F the GD features (`_gd_features`). The Monte Carlo
    counterpart of Lemma E.4's Gamma* (debiased: Gamma*_d), with no formula assumed.

    >>> fit = simulated_optimal_preconditioner(2, 40, 0.1, n_prompts=8192)
    >>> fit.value.shape, fit.blocks, bool(np.abs(fit.value - np.eye(2) * 0.9).max() < 0.1)
    ((2, 2), 2, True)
    """
    n_prompts, chunk, seed, where = _validated(n_prompts, RANDOMNESS_BLOCK, seed, device)
    setting, covariance = Setting(d, L, sigma2), _covariance(d, rho, where)

    def sampler(count: int, generator: torch.Generator) -> Prompts:
        return sample_linear_regression(
            count, setting, generator=generator, device=where, covariance=covariance
        )

    grams, crosses = [], []  # per block of RANDOMNESS_BLOCK prompts (chunk = block)
    for prompts in _chunks(sampler, n_prompts, chunk, seed, where, progress=False):
        features = _gd_features(prompts, debiased)  # (m, d^2)
        grams.append(features.T @ features)  # (d^2, d^2)
        crosses.append(features.T @ prompts.y_query.double())  # (d^2,)
    gram, cross = torch.stack(grams), torch.stack(crosses)  # (B, d^2, d^2), (B, d^2)
    pooled = torch.linalg.solve(gram.sum(0), cross.sum(0))  # (d^2,)
    each = torch.linalg.solve(gram, cross[..., None])[..., 0]  # (B, d^2)
    blocks = each.shape[0]
    spread = each.std(dim=0, correction=1) / blocks**0.5 if blocks > 1 else each[0] * np.inf
    return SimulatedPreconditioner(
        value=pooled.reshape(d, d).cpu().numpy(),
        stderr=spread.reshape(d, d).cpu().numpy(),
        blocks=blocks,
    )


@dataclass(frozen=True, eq=False)
class BootstrapDistances:
    """Frobenius distances of the members' mean preconditioner to T targets, with bootstrap.

    Attributes:
        absolute: (T,) ``||mean Gamma - target_t||_F``.
        samples: (B, T) the same distances for B resamples of the members (with replacement).
        scale: (T,) ``||target_t||_F``.
    """

    absolute: np.ndarray
    samples: np.ndarray
    scale: np.ndarray

    @property
    def absolute_se(self) -> np.ndarray:
        """(T,) bootstrap standard error of the absolute distances."""
        return self.samples.std(axis=0, ddof=1)

    @property
    def relative(self) -> np.ndarray:
        """(T,) ``||mean Gamma - target||_F / ||target||_F``."""
        return self.absolute / self.scale

    @property
    def relative_se(self) -> np.ndarray:
        """(T,) bootstrap standard error of the relative distances."""
        return self.absolute_se / self.scale

    def difference(self, first: int, second: int) -> tuple[float, float]:
        """``distance[first] - distance[second]`` (absolute) and its bootstrap SE (paired)."""
        gap = self.samples[:, first] - self.samples[:, second]
        return float(self.absolute[first] - self.absolute[second]), float(gap.std(ddof=1))


def bootstrap_distances(
    gammas, targets, *, n_boot: int = 2000, seed: int = 0
) -> BootstrapDistances:
    """Distances of the mean of ``gammas`` (M, d, d) to each of ``targets`` (T, d, d).

    The error bars resample the M members with replacement ``n_boot`` times and recompute the
    mean and every distance (paired across targets, so differences of distances have their
    own SE, `BootstrapDistances.difference`).

    >>> gammas = np.stack([np.eye(2) * 0.9, np.eye(2) * 1.1])
    >>> result = bootstrap_distances(gammas, np.stack([np.eye(2), 2 * np.eye(2)]), n_boot=200)
    >>> result.absolute.round(4).tolist(), result.relative.round(4).tolist()
    ([0.0, 1.4142], [0.0, 0.5])
    """
    gammas = np.asarray(gammas, dtype=np.float64)
    targets = np.asarray(targets, dtype=np.float64)
    if gammas.ndim != 3 or gammas.shape[0] < 2 or targets.shape[1:] != gammas.shape[1:]:
        raise ValueError(
            f"gammas must be (M >= 2, d, d) and targets (T, d, d) of the same d, got shapes "
            f"{gammas.shape} and {targets.shape}"
        )
    if isinstance(n_boot, bool) or not isinstance(n_boot, numbers.Integral) or n_boot < 2:
        raise ValueError(f"n_boot must be an integer >= 2, got {n_boot!r}")
    rng = np.random.default_rng(seed)
    M = gammas.shape[0]

    def distances(mean: np.ndarray) -> np.ndarray:  # mean (..., d, d) -> (..., T)
        return np.linalg.norm(mean[..., None, :, :] - targets, axis=(-2, -1))

    picks = rng.integers(0, M, size=(n_boot, M))  # (B, M)
    means = gammas[picks].mean(axis=1)  # (B, d, d)
    return BootstrapDistances(
        absolute=distances(gammas.mean(axis=0)),
        samples=distances(means),
        scale=np.linalg.norm(targets, axis=(-2, -1)),
    )


def preconditioned_losses(
    ensemble: TrainedEnsemble,
    members: Mapping[str, int],
    gammas: Mapping[str, np.ndarray],
    *,
    n_prompts: int,
    debiased: bool = True,
    seed: int = 0,
    device: str = "cpu",
) -> JointMonteCarloEstimate:
    """Monte Carlo risks (2.5) of trained members and of preconditioned one-step GD, paired.

    ``members``: name -> member index of ``ensemble`` (run in one forward pass per batch);
    ``gammas``: name -> (d, d) preconditioner of `estimators.preconditioned_gd_prediction`
    (debiased unless ``debiased=False``). All on the same ``n_prompts`` prompts of the
    ensemble's data model, KMS covariance included (`monte_carlo_losses`).

    >>> from icl_verify.numerics import EnsembleTraining, train_ensemble
    >>> training = EnsembleTraining(d=2, L=8, sigma2=0.1, heads=(2,), lr=3e-3, steps=20,
    ...     batch=16, seed=0, log_every=10, checkpoint_every=0, validation_batch=64, rho=0.5)
    >>> losses = preconditioned_losses(train_ensemble(training), {"model": 0},
    ...                                {"I": np.eye(2)}, n_prompts=512)
    >>> losses.names
    ('model', 'I')
    """
    indices = ensemble.member_indices(list(members.values()))
    names = [*members, *gammas]
    if len(set(names)) != len(names):
        raise ValueError(f"members and gammas must have distinct names, got {names}")
    at = _EnsembleAtLength(ensemble.model(indices, device), ensemble.L)
    predictors = {name: at.member(k) for k, name in enumerate(members)}
    for name, gamma in gammas.items():
        matrix = np.asarray(gamma, dtype=np.float64)
        if matrix.shape != (ensemble.d, ensemble.d) or not np.isfinite(matrix).all():
            raise ValueError(
                f"gammas[{name!r}] must be a finite ({ensemble.d}, {ensemble.d}) matrix, "
                f"got shape {matrix.shape}"
            )
        tensor = torch.as_tensor(matrix, dtype=torch.float32, device=device)
        predictors[name] = lambda p, tensor=tensor: preconditioned_gd_prediction(
            p.X, p.y, p.x_query, tensor, debiased=debiased
        )
    setting = Setting(ensemble.d, ensemble.L, ensemble.sigma2)
    covariance = _covariance(ensemble.d, ensemble.rho, device)

    def sampler(count: int, generator: torch.Generator) -> Prompts:
        return sample_linear_regression(
            count, setting, generator=generator, device=device, covariance=covariance
        )

    with torch.no_grad():
        return monte_carlo_losses(predictors, sampler, n_prompts, seed=seed, device=device)


def settled_opposition(KQ_history, d: int) -> tuple[float, float]:
    """Mean over members of ``||K2/|K2| + K1/|K1|||_F`` of the last-quarter-mean KQ11 blocks
    (0 exactly when ``KQ11^(2) = -c KQ11^(1)``, c > 0; the relative size of the part of K2 not
    along -K1: ``sqrt(2 (1 + cos))``, cos = `head_opposition`), and its error.

    The error of a member: the batch-means SE of its last-quarter-mean blocks (5 batches,
    ``sqrt(sum of squared batch deviations / (5 * 4))`` per head, relative to the block's norm,
    added in quadrature over the two heads) plus the drift from the third quarter's value
    (`numerics.settled_mean`'s construction, applied to matrices). A member still approaching
    the pattern (third-quarter value above the last by more than the noise) has the whole value
    as its error, as `numerics.settled_value` does: not judged yet. Logs with NaN are skipped.

    KQ_history: (n, M, H, D, D) logged circuits of M members with H >= 2 heads.

    >>> block = np.zeros((3, 3)); block[:2, :2] = [[0.2, 0.1], [0.1, 0.3]]
    >>> noise = 1 + 0.01 * np.random.default_rng(0).random((40, 1, 2, 1, 1))  # Adam's, per head
    >>> history = np.stack([block, -2 * block])[None, None] * noise  # (n, M, H, D, D)
    >>> value, error = settled_opposition(history, d=2)
    >>> round(value, 12), bool(0 < error < 0.01)  # exactly opposite, some Adam noise
    (0.0, True)
    """
    history = np.asarray(KQ_history)  # in the logs' precision
    history = history[np.isfinite(history).all(axis=(1, 2, 3, 4))]
    quarter = max(1, history.shape[0] // 4)
    last, third = history[-quarter:], history[-2 * quarter : -quarter]

    def residual(blocks):  # (M, H, D, D) -> (M,)
        return np.sqrt(np.maximum(2.0 * (1.0 + head_opposition(blocks, d)), 0))

    value = residual(last.mean(axis=0))
    earlier = residual(third.mean(axis=0))
    batches = np.stack([b.mean(axis=0) for b in np.array_split(last, 5)])  # (5, M, H, D, D)
    spread = batches[..., :2, :d, :d] - last.mean(axis=0)[None, ..., :2, :d, :d]
    se = np.sqrt((spread**2).sum(axis=(0, 3, 4)) / (5 * 4))  # (M, 2)
    size = np.linalg.norm(last.mean(axis=0)[..., :2, :d, :d], axis=(-2, -1))  # (M, 2)
    noise = np.sqrt(((se / size) ** 2).sum(axis=1))  # (M,)
    # still falling toward the pattern by more than its noise: may reach it, not judged yet
    error = np.where(earlier - value > noise, value, np.abs(value - earlier) + noise)
    return float(value.mean()), float(error.mean())


@dataclass(frozen=True, eq=False)
class PairedPreconditioners:
    """The paired members (M >= 2) of a two-head ensemble on KMS covariates, against T targets.

    Attributes:
        members: (M,) the paired members (`numerics.member_kinds`); shown: the one with the
            lowest final validation loss.
        learned: (M, d, d) ``Gamma_eff`` (`learned_preconditioners`); fitted: (M, d, d) what each
            applies (`fitted_preconditioners`).
        first_order_gap: (M,) ``||Gamma_fit - Gamma_eff||_F / ||targets[0]||_F``.
        distances, fitted_distances: `bootstrap_distances` of the learned and of the fitted
            preconditioners to the targets (the same resamples of the members).
        margin, margin_se: how much closer the mean ``Gamma_eff`` is to targets[a] than to
            targets[b], ``(a, b) = margin_targets``, in units of ``||targets[a] - targets[b]||_F``
            (1 at targets[a], -1 at targets[b]), and its bootstrap SE (paired).
        omega_final: (M, 2) the final KQ scales of the two heads.
        member_risks: (M,) Monte Carlo risks; risk, risk_se: their mean and its SE (from the
            members' joint covariance: ``sqrt(mean covariance / n)``).
        dgd_risks, dgd_risks_se: (2,) risks of debiased GD at the members' mean ``Gamma_eff``
            and at targets[0], on the same prompts.
        excess_over_dgd, excess_over_dgd_se: (M,) paired risk(member) - risk(dGD at targets[0]).
        opposition, opposition_error: `settled_opposition` of the members.
    """

    members: np.ndarray
    shown: int
    learned: np.ndarray
    fitted: np.ndarray
    first_order_gap: np.ndarray
    distances: BootstrapDistances
    fitted_distances: BootstrapDistances
    margin: float
    margin_se: float
    omega_final: np.ndarray
    member_risks: np.ndarray
    risk: float
    risk_se: float
    dgd_risks: np.ndarray
    dgd_risks_se: np.ndarray
    excess_over_dgd: np.ndarray
    excess_over_dgd_se: np.ndarray
    opposition: float
    opposition_error: float


def read_paired_preconditioners(
    ensemble: TrainedEnsemble,
    targets,
    *,
    margin_targets: tuple[int, int] = (1, 2),
    n_prompts: int,
    n_boot: int,
    seed: int = 0,
    bootstrap_seed: int = 0,
    device: str = "cpu",
) -> PairedPreconditioners:
    """Read the paired members of a two-head ensemble on KMS covariates against ``targets``.

    ``targets`` (T, d, d): targets[0] is the reference (the first-order gap's scale and the
    risk baseline); the margin compares ``margin_targets``. Monte Carlo
    (`fitted_preconditioners`, `preconditioned_losses`) on ``n_prompts`` prompts seeded by
    ``seed``; both bootstraps resample the members alike, seeded by ``bootstrap_seed``. A
    ValueError when fewer than two members are paired (no bootstrap over fewer).

    >>> from icl_verify.numerics import EnsembleTraining, train_ensemble
    >>> training = EnsembleTraining(d=2, L=20, sigma2=0.1, heads=(2, 2, 2), lr=3e-2, steps=400,
    ...     batch=64, seed=0, log_every=20, checkpoint_every=0, validation_batch=64, rho=0.5)
    >>> targets = np.stack([np.eye(2), 2 * np.eye(2), 3 * np.eye(2)])
    >>> read = read_paired_preconditioners(train_ensemble(training), targets, n_prompts=512,
    ...                                    n_boot=100)
    >>> read.members.tolist(), read.learned.shape, read.distances.relative.shape
    ([0, 2], (2, 2, 2), (3,))
    """
    targets = np.asarray(targets, dtype=np.float64)
    paired = np.flatnonzero(member_kinds(ensemble).paired)
    if paired.size < 2:
        raise ValueError(f"at least two members must be paired, got {paired.size}")
    KQ, OV = ensemble.circuits()
    learned = learned_preconditioners(KQ[paired], OV[paired], ensemble.d)  # (M, d, d)
    fitted = fitted_preconditioners(
        ensemble, paired.tolist(), n_prompts=n_prompts, seed=seed, device=device
    )
    boot = bootstrap_distances(learned, targets, n_boot=n_boot, seed=bootstrap_seed)
    a, b = margin_targets
    gap = np.linalg.norm(targets[a] - targets[b])
    margin, margin_se = (v / gap for v in boot.difference(b, a))
    losses = preconditioned_losses(
        ensemble,
        {f"member{e}": int(e) for e in paired},
        {"dGD at mean Γ_eff": learned.mean(axis=0), "dGD at Γ*_d": targets[0]},
        n_prompts=n_prompts,
        seed=seed,
        device=device,
    )
    names = [f"member{e}" for e in paired]
    index = [losses.names.index(n) for n in names]
    baselines = losses.names[len(names) :]
    excess = [losses.difference(n, "dGD at Γ*_d") for n in names]
    opposition, opposition_error = settled_opposition(ensemble.KQ_history[:, paired], ensemble.d)
    return PairedPreconditioners(
        members=paired,
        shown=int(paired[np.argmin(ensemble.test_loss[-1, paired])]),
        learned=learned,
        fitted=fitted.value,
        first_order_gap=np.linalg.norm(fitted.value - learned, axis=(-2, -1))
        / np.linalg.norm(targets[0]),
        distances=boot,
        fitted_distances=bootstrap_distances(
            fitted.value, targets, n_boot=n_boot, seed=bootstrap_seed
        ),
        margin=margin,
        margin_se=margin_se,
        omega_final=ensemble.omega[-1, paired, :2],
        member_risks=losses.mean[index],
        risk=float(losses.mean[index].mean()),
        risk_se=float(np.sqrt(losses.covariance[np.ix_(index, index)].mean() / losses.n)),
        dgd_risks=np.array([losses[n].mean for n in baselines]),
        dgd_risks_se=np.array([losses[n].stderr for n in baselines]),
        excess_over_dgd=np.array([e.mean for e in excess]),
        excess_over_dgd_se=np.array([e.stderr for e in excess]),
        opposition=opposition,
        opposition_error=opposition_error,
    )
