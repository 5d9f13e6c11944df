"""Multi-task heads read off trained models, their mode, and per-task test errors (He et al. 2025
§5.4, Appendix A.3; reference §HE-5.4-MT).

A model trained on K-task prompts (`numerics.data.sample_multitask_regression`, token length
D = d + K) is read through its circuits: per head h, ``omega^h`` = diag(KQ11_h) (d,) and the OV
label block ``OV_h[d:, d:]`` (K, K), whose diagonal ``mu^h`` (K,) weighs task k's labels in task
k's prediction and whose off-diagonal entries leak labels between tasks.

Modes (`multitask_mode`; the paper's I-IV, stated as a rule). Head h *serves* task k when its
share ``|mu^h_k| mean_{j in S_k} |omega^h_j|`` (its part of the task's GD-like term) is at least
`icl_verify.heads.DUMMY_THRESHOLD` of the largest head's share for that task (the dummy rule of
`icl_verify.heads`, per task); its sign for task k is ``sign(mu^h_k)``. Then:

- I: some task has no serving heads of both signs (no ± pair: one kernel regressor, ybar kept);
- IV (superposition): some head serves two tasks with opposite signs;
- III: every serving head serves exactly one task (pairs per task);
- II: every serving head serves every task with one sign (one shared ± pair);
- 0: none of these (unclassified).

Nothing here imports `theory`: the kernel predictor is evaluated as the model computes it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import torch
from icl_verify.numerics.data import (
    MultiTaskPrompts,
    Prompts,
    embed,
    sample_multitask_regression,
)
from icl_verify.numerics.ensemble import TrainedEnsemble
from icl_verify.numerics.estimators import preconditioned_gd_prediction
from icl_verify.numerics.montecarlo import JointMonteCarloEstimate, monte_carlo_losses

from icl_verify.heads import DUMMY_THRESHOLD

__all__ = [
    "MultiTaskHeads",
    "kernel_multitask_prediction",
    "multitask_heads",
    "multitask_losses",
    "multitask_mode",
]


@dataclass(frozen=True)
class MultiTaskHeads:
    """Heads of K-task models (arrays with leading batch shape (...), H heads).

    Attributes:
        omega: (..., H, d) diagonals of KQ11_h (effective scale, ``W_K^T W_Q / sqrt(D)``).
        labels: (..., H, K, K) OV label blocks ``OV_h[d:, d:]`` (row: task predicted).
    """

    omega: np.ndarray
    labels: np.ndarray

    @property
    def mu(self) -> np.ndarray:
        """(..., H, K): the diagonal of the label blocks, ``mu^h_k``."""
        return np.diagonal(self.labels, axis1=-2, axis2=-1)

    @property
    def cross(self) -> np.ndarray:
        """(..., K): ``max_h max_{k' != k} |OV_h[d+k, d+k']|`` over ``max_h |mu^h_k|``."""
        K = self.labels.shape[-1]
        off = np.abs(self.labels * (1 - np.eye(K))).max(axis=(-3, -1))  # (..., K)
        return off / np.abs(self.mu).max(axis=-2)


def multitask_heads(KQ, OV, d: int) -> MultiTaskHeads:
    """The heads of circuits KQ, OV of shape (..., H, D, D), D = d + K.

    >>> KQ = np.zeros((1, 4, 4)); KQ[0, :2, :2] = np.diag([0.1, 0.2])
    >>> OV = np.zeros((1, 4, 4)); OV[0, 2:, 2:] = [[3.0, 0.1], [0.0, -2.0]]
    >>> heads = multitask_heads(KQ, OV, d=2)
    >>> heads.omega.tolist(), heads.mu.tolist(), heads.cross.round(3).tolist()
    ([[0.1, 0.2]], [[3.0, -2.0]], [0.033, 0.0])
    """
    KQ, OV = np.asarray(KQ, dtype=float), np.asarray(OV, dtype=float)
    omega = np.diagonal(KQ[..., :d, :d], axis1=-2, axis2=-1)  # (..., H, d)
    return MultiTaskHeads(omega=omega.copy(), labels=OV[..., d:, d:].copy())


def multitask_mode(omega, mu, supports, threshold: float = DUMMY_THRESHOLD) -> int:
    """The mode (module doc's rule) of one model's heads: omega (H, d), mu (H, K).

    >>> S = ((0, 1), (1, 2))
    >>> multitask_mode([[0.3, 0.3, 0.3]], [[1.0, 1.0]], S)  # one head: I
    1
    >>> multitask_mode([[0.1] * 3, [-0.1] * 3], [[4.0, 4.0], [-4.0, -4.0]], S)  # shared pair: II
    2
    >>> pairs = [[0.1, 0.1, 0], [-0.1, -0.1, 0], [0, 0.1, 0.1], [0, -0.1, -0.1]]
    >>> multitask_mode(pairs, [[4, 0], [-4, 0], [0, 4], [0, -4]], S)  # a pair per task: III
    3
    >>> multitask_mode([[-.03, -.09, -.07], [.08, .09, 0], [-.08, .02, .09]],
    ...                [[-4.0, -7.1], [6.9, 2.3], [-2.9, 4.7]], S)  # Table 2: IV
    4
    """
    omega, mu = np.asarray(omega, dtype=float), np.asarray(mu, dtype=float)
    share = np.stack(
        [np.abs(mu[:, k]) * np.abs(omega[:, list(s)]).mean(axis=1) for k, s in enumerate(supports)],
        axis=1,
    )  # (H, K)
    serves = (share >= threshold * share.max(axis=0, keepdims=True)) & (share > 0)  # (H, K)
    signs = np.sign(mu) * serves  # (H, K): +1, -1, or 0 where the head does not serve
    paired = all((signs[:, k] > 0).any() and (signs[:, k] < 0).any() for k in range(mu.shape[1]))
    if not paired:
        return 1
    if any((row > 0).any() and (row < 0).any() for row in signs):
        return 4
    counts = serves.sum(axis=1)[serves.any(axis=1)]  # tasks served by each serving head
    if (counts == 1).all():
        return 3
    if (counts == mu.shape[1]).all():
        return 2
    return 0


def kernel_multitask_prediction(omega, labels, X, Y, x_query) -> torch.Tensor:
    """The kernel form (5.8) with label leakage: ``y_hat_k = sum_h sum_k' labels^h_{kk'}
    sum_i Y_ik' softmax_i(x_i^T diag(omega^h) x_q)``.

    omega (H, d), labels (H, K, K); X (n, L, d), Y (n, L, K), x_query (n, d) -> (n, K); float64.

    >>> X = torch.tensor([[[1.0, 0.0], [0.0, 1.0]]]); Y = torch.tensor([[[1.0], [3.0]]])
    >>> kernel_multitask_prediction([[0.0, 0.0]], [[[2.0]]], X, Y, torch.tensor([[1.0, 0.0]]))
    tensor([[4.]], dtype=torch.float64)
    """
    omega = torch.as_tensor(np.asarray(omega, dtype=float))
    labels = torch.as_tensor(np.asarray(labels, dtype=float))
    X, Y, x_query = X.double(), Y.double(), x_query.double()
    scores = torch.einsum("nld,hd,nd->nhl", X, omega, x_query)  # (n, H, L)
    mixed = torch.einsum("nhl,nlk->nhk", torch.softmax(scores, dim=-1), Y)  # (n, H, K)
    return torch.einsum("hkj,nhj->nk", labels, mixed)  # (n, K)


class _Predictions:
    """The selected members' (n, K) predictions, computed once per prompt batch."""

    def __init__(self, ensemble: TrainedEnsemble, members: Sequence[int], device: str) -> None:
        self.model = ensemble.model(list(members), device)
        self.K = len(ensemble.supports)
        self._prompts, self._values = None, None

    def error(self, index: int, k: int):
        def predict(prompts: Prompts) -> torch.Tensor:
            if prompts is not self._prompts:
                tokens = _as_multitask(prompts)
                Z = embed(tokens)  # (n, D, L+1)
                members = self.model.config.ensemble
                self._values = self.model(Z.expand(members, *Z.shape))  # (M, n, K)
                self._prompts = prompts
            return self._values[index, :, k] - _query_labels(prompts)[:, k]

        return predict


def _as_multitask(prompts: Prompts) -> MultiTaskPrompts:
    """The K-label prompts that `multitask_losses` carries as `Prompts` (y: (n, L, K))."""
    K = prompts.y.shape[-1]
    return MultiTaskPrompts(
        X=prompts.X, y=prompts.y, x_query=prompts.x_query,
        y_query=prompts.beta.new_zeros(prompts.x_query.shape[0], K), beta=prompts.beta,
        supports=(),
    )  # fmt: skip


def _query_labels(prompts: Prompts) -> torch.Tensor:
    """(n, K): task k's noiseless query label beta^(k)^T x_q."""
    return torch.einsum("nkd,nd->nk", prompts.beta, prompts.x_query)


def multitask_losses(
    ensemble: TrainedEnsemble,
    members: Sequence[int],
    steps: Mapping[str, np.ndarray],
    *,
    n_prompts: int,
    seed: int = 0,
    device: str = "cpu",
) -> JointMonteCarloEstimate:
    """Per-task test MSE of trained members and of support-restricted debiased GD, same prompts.

    Names: ``"m{e}:{k}"`` for member e on task k (its prediction of task k's label), and
    ``"{name}:{k}"`` for each ``steps[name]`` (K,): restricted debiased GD on task k at step
    ``steps[name][k]``, ``(eta/L) sum_i y_ik (x_{i,S_k} - xbar_{S_k})^T x_{q,S_k}``. Prompts of
    the ensemble's training distribution at its L; errors are against the noiseless query
    labels (the sampler's ``y_query`` is 0 and each predictor returns its error).

    >>> from icl_verify.numerics.ensemble import EnsembleTraining, train_ensemble
    >>> t = EnsembleTraining(d=3, L=8, sigma2=0.1, heads=(2,), lr=3e-3, steps=12, batch=16,
    ...     seed=0, log_every=1, checkpoint_every=0, validation_batch=64, supports=((0, 1), (1, 2)))
    >>> r = multitask_losses(train_ensemble(t), [0], {"dgd": [0.5, 0.5]}, n_prompts=512)
    >>> r.names
    ('m0:0', 'm0:1', 'dgd:0', 'dgd:1')
    """
    supports, d, L = ensemble.supports, ensemble.d, ensemble.L
    K = len(supports)
    masks = torch.zeros(K, d, dtype=torch.float64)  # (K, d): 1 on S_k
    for k, support in enumerate(supports):
        masks[k, list(support)] = 1.0
    cached = _Predictions(ensemble, members, device)
    predictors = {f"m{e}:{k}": cached.error(i, k) for i, e in enumerate(members) for k in range(K)}

    def restricted(eta: float, k: int):
        def predict(prompts: Prompts) -> torch.Tensor:
            gamma = eta * masks[k].to(prompts.X)  # (d,)
            y_hat = preconditioned_gd_prediction(
                prompts.X, prompts.y[..., k], prompts.x_query, torch.diag(gamma), debiased=True
            )
            return y_hat - _query_labels(prompts)[:, k]

        return predict

    for name, values in steps.items():
        predictors |= {f"{name}:{k}": restricted(float(values[k]), k) for k in range(K)}

    def sampler(n: int, generator: torch.Generator) -> Prompts:
        p = sample_multitask_regression(
            n, d, L, supports, generator=generator, relative_noise=ensemble.sigma2, device=device
        )
        return Prompts(p.X, p.y, p.x_query, p.X.new_zeros(n), p.beta)

    return monte_carlo_losses(predictors, sampler, n_prompts, seed=seed, device=device)
