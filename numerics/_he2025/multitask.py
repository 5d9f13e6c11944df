"""Multi-task heads read off trained models, their mode, and per-task test errors (He et al. 2025
§5.4, Appendix A.3; reference §HE-5.4-MT).

A model trained on K-task prompts (`numerics.sample_multitask_regression`, token length
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

Read-outs over the logs and the kernel's truncation: `mode_history` (each member's mode at every
log) and `mode_reading` (the mode a group of members reached); `settled_heads` (``Gamma_k`` per
coordinate group, by `icl_verify.statistics.group_means`, and the zero-sum ratios where training
settles);
`first_order_gaps` (the kernel predictor against a first-order one the caller passes in, on
fresh prompts); `block_pattern` (how far a member's circuits are from the block pattern (5.8)
that the mode reading assumes, settled over the logs); `single_kernel` (Mode I on one head: the
shared coordinates' weight and the tasks' equal label weights).

Nothing here imports `theory`: the kernel predictor is evaluated as the model computes it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import torch
from icl_verify.numerics._core.data import (
    MultiTaskPrompts,
    Prompts,
    embed,
    sample_multitask_regression,
)
from icl_verify.numerics._core.ensemble import TrainedEnsemble
from icl_verify.numerics._core.estimators import preconditioned_gd_prediction
from icl_verify.numerics._core.montecarlo import JointMonteCarloEstimate, monte_carlo_losses
from icl_verify.numerics._he2025.settling import settled_value

from icl_verify.heads import DUMMY_THRESHOLD
from icl_verify.settings import Setting
from icl_verify.statistics import group_means

__all__ = [
    "BlockPattern",
    "ModeReading",
    "MultiTaskHeads",
    "SettledHeads",
    "SingleKernel",
    "first_order_gaps",
    "kernel_multitask_prediction",
    "mode_history",
    "mode_reading",
    "multitask_heads",
    "multitask_losses",
    "multitask_mode",
    "block_pattern",
    "settled_heads",
    "single_kernel",
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


@dataclass(frozen=True)
class BlockPattern:
    """How far one member is from the block pattern (5.8), ``KQ11_h = diag(omega^h)`` and OV
    last K rows ``[0_{K x d}, diag(mu^h)]``, each settled toward 0 over the logs
    (`numerics.settled_value`; value and error). Member-level RMS ratios:

    Attributes:
        kq_off: RMS of the off-diagonal KQ11 entries over the RMS of their diagonals (all heads).
        ov_features: RMS of the OV label rows' covariate part ``OV_h[d:, :d]`` over max |mu^h_k|.
        cross: the largest cross-task label weight ``|OV_h[d+k, d+k']|``, k' != k, over the
            largest ``|mu^h_k|`` of its task (`MultiTaskHeads.cross`), worst task.
    """

    kq_off: tuple[float, float]
    ov_features: tuple[float, float]
    cross: tuple[float, float]


def block_pattern(KQ_history, OV_history, member: int, H: int, d: int) -> BlockPattern:
    """`BlockPattern` of ``member`` (H heads) from its logged circuits (n, E, H_max, D, D).

    >>> KQ = np.zeros((8, 1, 1, 4, 4)); KQ[..., :2, :2] = np.diag([0.1, 0.2])
    >>> OV = np.zeros((8, 1, 1, 4, 4)); OV[..., 2:, 2:] = [[3.0, 0.3], [0.0, -2.0]]
    >>> pattern = block_pattern(KQ, OV, 0, 1, d=2)
    >>> pattern.kq_off, pattern.ov_features, round(pattern.cross[0], 12)  # 0.3 / 3
    ((0.0, 0.0), (0.0, 0.0), 0.1)
    """
    KQ = np.asarray(KQ_history, dtype=float)[:, member, :H]  # (n, H, D, D)
    OV = np.asarray(OV_history, dtype=float)[:, member, :H]
    block = KQ[..., :d, :d]
    diagonal = np.diagonal(block, axis1=-2, axis2=-1)  # (n, H, d)
    off = block - diagonal[..., None] * np.eye(d)
    rms = lambda x: np.sqrt(np.mean(x**2, axis=tuple(range(1, x.ndim))))  # noqa: E731 (n,)
    heads = multitask_heads(KQ, OV, d)
    scale = np.abs(heads.mu).max(axis=(-2, -1))  # (n,)
    kq = rms(off) * np.sqrt(d / max(d - 1, 1)) / rms(diagonal)  # per off-diagonal entry
    return BlockPattern(
        kq_off=settled_value(kq, toward=0.0),
        ov_features=settled_value(rms(OV[..., d:, :d]) / scale, toward=0.0),
        cross=settled_value(heads.cross.max(axis=-1), toward=0.0),
    )


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
    the ensemble's training distribution at its L (its data model, ``shared_beta`` included);
    errors are against the noiseless query
    labels (the sampler's ``y_query`` is 0 and each predictor returns its error).

    >>> from icl_verify.numerics import EnsembleTraining, train_ensemble
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

    setting = Setting(d, L, ensemble.sigma2)  # sigma2: the relative noise of the tasks

    def sampler(n: int, generator: torch.Generator) -> Prompts:
        p = sample_multitask_regression(
            n, setting, supports, generator=generator, shared_beta=ensemble.shared_beta,
            device=device,
        )  # fmt: skip
        return Prompts(p.X, p.y, p.x_query, p.X.new_zeros(n), p.beta)

    return monte_carlo_losses(predictors, sampler, n_prompts, seed=seed, device=device)


# ---------------------------------------------------------------------------------------------
# read-outs over the logs


def mode_history(heads: MultiTaskHeads, head_counts: Sequence[int], supports) -> np.ndarray:
    """Each member's `multitask_mode` at every log: (n, E) int.

    heads: (n, E, H, ...) logged heads (`multitask_heads` of the circuit history); member e has
    ``head_counts[e]`` heads.

    >>> S = ((0, 1), (1, 2))
    >>> heads = multitask_heads(np.zeros((1, 1, 2, 5, 5)), np.zeros((1, 1, 2, 5, 5)), d=3)
    >>> heads.omega[0, 0] = [[0.1] * 3, [-0.1] * 3]  # a shared ± pair
    >>> heads.labels[0, 0, :, [0, 1], [0, 1]] = [[4.0, -4.0], [4.0, -4.0]]
    >>> mode_history(heads, [2], S).tolist()
    [[2]]
    """
    n = heads.omega.shape[0]
    modes = np.zeros((n, len(head_counts)), dtype=int)  # (n, E)
    for t in range(n):
        for e, H in enumerate(head_counts):
            modes[t, e] = multitask_mode(heads.omega[t, e, :H], heads.mu[t, e, :H], supports)
    return modes


@dataclass(frozen=True)
class ModeReading:
    """The mode read for a group of members (those with one H).

    Attributes:
        mode: ``expected`` when some member of the group ends in it, else the shown member's
            final mode.
        reached: whether some member ends in ``expected``.
        held: whether the mode read held over the last half of the logs: on some member that
            ends in ``expected`` when one does, else on the shown member (the same standard for
            either outcome).
    """

    mode: int
    reached: bool
    held: bool


def mode_reading(
    modes: np.ndarray, members: Sequence[int], shown: int, expected: int
) -> ModeReading:
    """Which mode a group of ``members`` reached, from their (n, E) `mode_history`.

    >>> modes = np.array([[1, 1, 1], [1, 4, 3], [1, 4, 3], [1, 4, 4]])  # (n, E)
    >>> mode_reading(modes, [1, 2], shown=1, expected=3)  # member 2 left mode III at the end
    ModeReading(mode=4, reached=False, held=True)
    >>> mode_reading(modes, [1, 2], shown=1, expected=4)  # member 1 held IV over the last half
    ModeReading(mode=4, reached=True, held=True)
    >>> mode_reading(modes[:, [0, 2]], [1], shown=1, expected=4)
    ModeReading(mode=4, reached=True, held=False)
    """
    members = np.asarray(members)
    late = modes[modes.shape[0] // 2 :]  # the last half of the logs
    reaching = members[modes[-1, members] == expected]
    if reaching.size:
        held = bool(np.any(np.all(late[:, reaching] == expected, axis=0)))
        return ModeReading(int(expected), True, held)
    return ModeReading(
        int(modes[-1, shown]), False, bool(np.all(late[:, shown] == modes[-1, shown]))
    )


@dataclass(frozen=True)
class SettledHeads:
    """One member's task preconditioners and zero-sum ratios where training settles.

    Attributes:
        gamma, gamma_error: (K G,) ``Gamma_k = sum_h mu^h_k diag(omega^h)`` averaged over each
            coordinate group (task-major) at the last log, with `numerics.settled_value`'s
            error (Adam noise and drift over the logs).
        zero_sum, zero_sum_error: (K,) ``|sum_h mu^h_k| / sum_h |mu^h_k|`` at the last log, with
            `settled_value`'s error toward 0.
    """

    gamma: np.ndarray
    gamma_error: np.ndarray
    zero_sum: np.ndarray
    zero_sum_error: np.ndarray


def settled_heads(heads: MultiTaskHeads, member: int, H: int, groups) -> SettledHeads:
    """`SettledHeads` of ``member`` (its first H heads) from the logged heads (n, E, H, ...).

    >>> heads = multitask_heads(np.zeros((8, 1, 2, 4, 4)), np.zeros((8, 1, 2, 4, 4)), d=2)
    >>> heads.omega[:] = [[0.1, 0.1], [-0.1, -0.1]]
    >>> heads.labels[..., 0, 0] = [4.0, -4.0]; heads.labels[..., 1, 1] = [2.0, -2.0]
    >>> settled = settled_heads(heads, 0, 2, ((0,), (1,)))
    >>> settled.gamma.tolist(), settled.zero_sum.tolist()  # 2 mu omega per group; sums 0
    ([0.8, 0.8, 0.4, 0.4], [0.0, 0.0])
    """
    n = heads.omega.shape[0]
    mu, omega = heads.mu[:, member, :H], heads.omega[:, member, :H]  # (n, H, K), (n, H, d)
    gamma = np.einsum("nhk,nhd->nkd", mu, omega)  # (n, K, d)
    grouped = group_means(gamma, groups).reshape(n, -1)  # (n, K G)
    settled = np.array([settled_value(grouped[:, j]) for j in range(grouped.shape[1])])
    ratio = np.abs(mu.sum(axis=1)) / np.abs(mu).sum(axis=1)  # (n, K)
    zero = np.array([settled_value(ratio[:, k], toward=0.0) for k in range(ratio.shape[1])])
    return SettledHeads(settled[:, 0], settled[:, 1], zero[:, 0], zero[:, 1])


@dataclass(frozen=True)
class SingleKernel:
    """Mode I read on a one-head member, settled over the logs (value, error):

    Attributes:
        overlap_ratio: mean |omega_j| over coordinates in several supports, over the mean on
            coordinates in one support (> 1: the shared coordinates weigh more).
        task_asymmetry: ``(max_k |mu_k| - min_k |mu_k|) / sum_k |mu_k|`` (0: the same weight for
            every task's labels).
    """

    overlap_ratio: tuple[float, float]
    task_asymmetry: tuple[float, float]


def single_kernel(heads: MultiTaskHeads, member: int, supports) -> SingleKernel:
    """`SingleKernel` of a one-head ``member`` from the logged heads (n, E, H, ...).

    >>> heads = multitask_heads(np.zeros((8, 1, 1, 5, 5)), np.zeros((8, 1, 1, 5, 5)), d=3)
    >>> heads.omega[:] = [0.4, 0.5, 0.4]
    >>> heads.labels[..., 0, 0] = heads.labels[..., 1, 1] = 1.6
    >>> reading = single_kernel(heads, 0, ((0, 1), (1, 2)))
    >>> reading.overlap_ratio, reading.task_asymmetry
    ((1.25, 0.0), (0.0, 0.0))
    """
    d = heads.omega.shape[-1]
    count = np.zeros(d, dtype=int)
    for support in supports:
        count[list(support)] += 1
    if not (count > 1).any() or not (count == 1).any():
        raise ValueError("supports must have coordinates shared by tasks and coordinates of one")
    omega = np.abs(heads.omega[:, member, 0])  # (n, d)
    mu = np.abs(heads.mu[:, member, 0])  # (n, K)
    ratio = omega[:, count > 1].mean(axis=1) / omega[:, count == 1].mean(axis=1)
    asymmetry = (mu.max(axis=1) - mu.min(axis=1)) / mu.sum(axis=1)
    return SingleKernel(settled_value(ratio), settled_value(asymmetry, toward=0.0))


def first_order_gaps(
    heads: MultiTaskHeads,
    members: Sequence[int],
    head_counts: Sequence[int],
    first_order: Callable[..., np.ndarray],
    *,
    setting: Setting,
    supports,
    n_prompts: int = 4096,
    seed: int = 0,
) -> np.ndarray:
    """RMS gap between the kernel predictor and a first-order one over the RMS first-order
    prediction, per member (the worst task): (len(members),).

    On ``n_prompts`` fresh prompts of the training distribution (`sample_multitask_regression`
    of ``setting``, its sigma2 the relative noise, and ``supports``; a CPU generator seeded by
    ``seed``): the kernel form (5.8) is `kernel_multitask_prediction`
    of the member's heads (omega (H, d), label blocks (H, K, K)); the first-order one is
    ``first_order(omega, mu, X, Y, x_query) -> (n, K)`` (mu the diagonals (H, K); float64 numpy
    arrays), passed in by the caller, e.g. `theory.first_order_prediction`.

    heads: final heads (E, H, ...); member e has ``head_counts[e]`` heads.

    >>> heads = multitask_heads(np.zeros((1, 1, 4, 4)), np.zeros((1, 1, 4, 4)), d=2)
    >>> heads.omega[0, 0], heads.labels[0, 0] = [1e-3, 1e-3], np.eye(2)
    >>> def mean_label(omega, mu, X, Y, x_query):  # the kernel at omega = 0: ybar_k mu_k
    ...     return Y.mean(axis=-2) * mu.sum(axis=0)
    >>> from icl_verify.settings import Setting
    >>> gaps = first_order_gaps(heads, [0], [1], mean_label, setting=Setting(d=2, L=20, sigma2=0.1),
    ...                         supports=((0,), (1,)), n_prompts=256)
    >>> bool(gaps[0] < 1e-2)
    True
    """
    generator = torch.Generator().manual_seed(seed)
    p = sample_multitask_regression(n_prompts, setting, supports, generator=generator)
    X, Y, xq = (t.double().numpy() for t in (p.X, p.y, p.x_query))
    gaps = []
    for e in members:
        H = head_counts[e]
        omega, labels = heads.omega[e, :H], heads.labels[e, :H]
        exact = kernel_multitask_prediction(omega, labels, p.X, p.y, p.x_query).numpy()  # (n, K)
        first = first_order(omega, np.diagonal(labels, axis1=-2, axis2=-1), X, Y, xq)
        gap = np.sqrt(((exact - first) ** 2).mean(axis=0) / (first**2).mean(axis=0))  # (K,)
        gaps.append(gap.max())
    return np.array(gaps)
