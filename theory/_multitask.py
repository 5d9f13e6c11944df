"""Multi-task in-context regression, He et al. (2025) §5.4 and Appendix A.3 (reference §HE-5.4-MT).

K tasks share the covariates x ~ N(0, I_d); task k reads the coordinates of its support S_k. In
the authors' code (``MultiTaskLinearReg``, the data model here) each task draws its own
``beta^(k) ~ N(0, I_s)``, s = |S_k|, its context labels carry noise of variance ``r s`` (r the
relative noise, 0.1) and its query label is noiseless.

Trained heads take the global pattern (5.7)-(5.8): ``KQ11_h = diag(omega^h)``, the OV label block
``diag(mu^h)``, so that ``y_hat_k = sum_h mu^h_k sum_i y_ik softmax(x_i^T diag(omega^h) x_q)_i``.
To first order in omega (reference "First order [DERIVED]"; §HE-4.10 per head),

    y_hat_k ~ (1/L) sum_i y_ik (x_i - xbar)^T Gamma_k x_q + ybar_k sum_h mu^h_k,
    Gamma_k = sum_h mu^h_k diag(omega^h)                                         (A.4)

which is support-restricted debiased GD (A.1) when ``sum_h mu^h_k = 0`` and
``Gamma_k = eta_k 1_{S_k}`` (no weight off S_k): `support_conditions` reads both conditions.

Risks (Monte-Carlo tested): for a diagonal ``Gamma`` (any d entries) the predictor
``(1/L) sum_i y_i (x_i - xbar)^T Gamma x_q`` of one task (support S, s = |S|) is preconditioned
debiased GD (`theory.preconditioned_gd_risk`) with Sigma = I, beta ~ N(0,
diag(1_S)), context noise r s and a noiseless query; with n = L - 1 its risk reads

    R(Gamma) = s - 2 (n/L) sum_{j in S} Gamma_j
                 + (n/L^2) [ (n+1) sum_{j in S} Gamma_j^2 + s (1+r) sum_j Gamma_j^2 ].

Minimised coordinate by coordinate: Gamma_j = 0 off S and ``L / (L + D)`` on S, D = s(1+r):
support-restricted debiased GD at its optimal step is the best diagonal preconditioner, and at
``Gamma = eta 1_S`` the formula is ``s (R_dGD(eta; d=s, sigma2=r) - r)`` (§HE-4.3-RISK with the
labels rescaled by 1/sqrt(s) to the reference's ``beta ~ N(0, I/s)``, and the query-noise floor
dropped: `restricted_dgd_risk`). With one Gamma shared by all tasks (mode II, two heads) the
summed risk is minimised at ``Gamma_j = L c_j / ((n+1) c_j + sum_k D_k)``, c_j the number of
supports holding j (`shared_preconditioner`). `optimal_task_preconditioners` gives each task's
optimum in the mode the paper reports at H heads.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from icl_verify.theory._preconditioning import preconditioned_gd_risk
from icl_verify.theory._risks import TunedRisk, debiased_gd_risk, optimal_gd

from icl_verify.settings import Setting

__all__ = [
    "PAPER_TABLE_2",
    "GroupTable",
    "SupportConditions",
    "first_order_prediction",
    "optimal_task_preconditioners",
    "paper_mode",
    "preconditioned_dgd_risk",
    "restricted_dgd_risk",
    "restricted_optimum",
    "shared_preconditioner",
    "support_conditions",
    "support_groups",
    "task_preconditioners",
]


def _supports(supports, d: int) -> tuple[tuple[int, ...], ...]:
    """The supports as sorted tuples of 0-based indices in [0, d); ValueError otherwise."""
    try:
        parsed = tuple(tuple(sorted({int(j) for j in s})) for s in supports)
    except (TypeError, ValueError):
        raise ValueError(f"supports must be lists of integer indices, got {supports!r}") from None
    if not parsed or any(not s or s[0] < 0 or s[-1] >= d for s in parsed):
        raise ValueError(
            f"supports must be one or more non-empty lists of indices in [0, {d}), got {supports!r}"
        )
    return parsed


def support_groups(supports, d: int) -> tuple[tuple[int, ...], ...]:
    """Coordinates grouped by the set of supports holding them, ordered by first coordinate.

    Coordinates in no support are left out.

    >>> support_groups(((0, 1, 2, 3), (2, 3, 4, 5)), 6)
    ((0, 1), (2, 3), (4, 5))
    """
    groups: dict[tuple[bool, ...], list[int]] = {}
    for j in range(d):
        pattern = tuple(j in s for s in supports)
        if any(pattern):
            groups.setdefault(pattern, []).append(j)
    return tuple(tuple(g) for g in groups.values())


def _heads(omega, mu) -> tuple[np.ndarray, np.ndarray]:
    omega, mu = np.asarray(omega, dtype=float), np.asarray(mu, dtype=float)
    if omega.ndim != 2 or mu.ndim != 2 or omega.shape[0] != mu.shape[0]:
        raise ValueError(
            f"omega and mu must have shapes (H, d) and (H, K), got {omega.shape} and {mu.shape}"
        )
    return omega, mu


def task_preconditioners(omega, mu) -> np.ndarray:
    """``Gamma_k = sum_h mu^h_k diag(omega^h)`` of (A.4), as the (K, d) array of diagonals.

    omega: (H, d) KQ11 diagonals; mu: (H, K) OV label weights of each head for each task.

    >>> task_preconditioners([[0.1, 0.1, 0.0], [-0.1, -0.1, 0.0]], [[4.0, 1.0], [-4.0, -1.0]])
    array([[0.8, 0.8, 0. ],
           [0.2, 0.2, 0. ]])
    """
    omega, mu = _heads(omega, mu)
    return mu.T @ omega  # (K, d)


def first_order_prediction(omega, mu, X, Y, x_query) -> np.ndarray:
    """The first-order multi-task predictor (A.4), one prediction per task.

    ``y_hat_k = (1/L) sum_i Y_ik (x_i - xbar)^T Gamma_k x_q + ybar_k sum_h mu^h_k``.
    omega (H, d), mu (H, K); X (..., L, d), Y (..., L, K), x_query (..., d) -> (..., K).

    >>> X = np.array([[1.0, 0.0], [-1.0, 2.0]]); Y = np.array([[1.0], [3.0]])
    >>> first_order_prediction([[0.5, 0.5], [-0.5, -0.5]], [[1.0], [-1.0]], X, Y, [1.0, 0.0])
    array([-1.])
    """
    Gamma = task_preconditioners(omega, mu)  # (K, d)
    X, Y, x_query = (np.asarray(a, dtype=float) for a in (X, Y, x_query))
    centred = X - X.mean(axis=-2, keepdims=True)  # (..., L, d)
    scaled_query = Gamma * x_query[..., None, :]  # (..., K, d): Gamma_k x_q
    scores = np.einsum("...ld,...kd->...lk", centred, scaled_query)  # (..., L, K)
    L = X.shape[-2]
    return (Y * scores).sum(axis=-2) / L + Y.mean(axis=-2) * np.asarray(mu).sum(axis=0)


@dataclass(frozen=True)
class SupportConditions:
    """How far heads are from support-restricted debiased GD per task, (A.1)-(A.4).

    Attributes:
        zero_sum: (K,) ``sum_h mu^h_k`` (0 removes the ``ybar_k`` term).
        on_support: K arrays, ``Gamma_k`` on ``S_k`` (ideal: all equal to eta_k).
        off_support: K arrays, ``Gamma_k`` off ``S_k`` (ideal: 0, no leakage).
        eta: (K,) mean of ``Gamma_k`` on ``S_k``: the step the task applies.
        leakage: (K,) ``max |Gamma_k off S_k| / eta_k`` (0 when S_k is everything).
        spread: (K,) ``(max - min of Gamma_k on S_k) / eta_k`` (0: a scalar step on S_k).
    """

    zero_sum: np.ndarray
    on_support: tuple[np.ndarray, ...]
    off_support: tuple[np.ndarray, ...]
    eta: np.ndarray
    leakage: np.ndarray
    spread: np.ndarray


def support_conditions(omega, mu, supports) -> SupportConditions:
    """The zero-sum and no-leakage conditions of (A.1)-(A.3) evaluated on heads (omega, mu).

    omega (H, d), mu (H, K); supports: K lists of 0-based indices in [0, d).

    >>> c = support_conditions([[0.1, 0.1, 0.0], [-0.1, -0.1, 0.1]], [[4.0], [-4.0]], [[0, 1]])
    >>> c.zero_sum, c.eta, c.leakage, c.spread
    (array([0.]), array([0.8]), array([0.5]), array([0.]))
    """
    omega, mu = _heads(omega, mu)
    supports = _supports(supports, omega.shape[1])
    if len(supports) != mu.shape[1]:
        raise ValueError(f"supports must list K = {mu.shape[1]} supports, got {len(supports)}")
    Gamma = task_preconditioners(omega, mu)  # (K, d)
    on, off = [], []
    for k, support in enumerate(supports):
        mask = np.zeros(omega.shape[1], dtype=bool)
        mask[list(support)] = True
        on.append(Gamma[k, mask])
        off.append(Gamma[k, ~mask])
    eta = np.array([values.mean() for values in on])
    leakage = np.array([np.abs(o).max(initial=0.0) for o in off]) / np.abs(eta)
    spread = np.array([np.ptp(values) for values in on]) / np.abs(eta)
    return SupportConditions(mu.sum(axis=0), tuple(on), tuple(off), eta, leakage, spread)


def paper_mode(H: int, K: int) -> int:
    """The mode the paper reports for H heads and K tasks (§HE-5.4-MT; Figures 16-19 at K = 2).

    1 (I): one head, one weighted kernel regressor; 2 (II): 2 <= H <= K, one ± pair shared by
    every task; 4 (IV): K < H < 2K, superposition; 3 (III): H >= 2K, a ± pair per task.
    (Codes as `numerics._he2025.multitask.MODE_NAMES`; the paper ran K = 2, H = 1..4.)

    >>> [paper_mode(H, 2) for H in (1, 2, 3, 4, 8)]
    [1, 2, 4, 3, 3]
    """
    if H < 1 or K < 1:
        raise ValueError(f"H and K must be integers >= 1, got H={H}, K={K}")
    if H == 1:
        return 1
    if H <= K:
        return 2
    return 4 if H < 2 * K else 3


def _check_task(L, relative_noise) -> None:
    Setting(d=1, L=L, sigma2=relative_noise)  # validates L and the noise


def preconditioned_dgd_risk(gamma, support, L: int, relative_noise: float = 0.1) -> float:
    """Risk of ``(1/L) sum_i y_i (x_i - xbar)^T diag(gamma) x_q`` on one task (module formula).

    The task's data are those of `numerics.sample_multitask_regression` (beta ~ N(0, I_s),
    context noise r s, noiseless query): `theory.preconditioned_gd_risk` with
    that signal and noise, ``R = s - 2 (n/L) sum_S gamma_j + (n/L^2) [(n+1) sum_S gamma_j^2 +
    s (1+r) sum_j gamma_j^2]``, n = L - 1. gamma: (d,); support: indices.

    >>> round(preconditioned_dgd_risk([0.9, 0.9, 0.9, 0.9, 0.0, 0.0], [0, 1, 2, 3], 48), 5)
    0.41331
    >>> round(preconditioned_dgd_risk([0.9, 0.9, 0.9, 0.9, 0.1, 0.1], [0, 1, 2, 3], 48), 5)
    0.41511
    """
    gamma = np.asarray(gamma, dtype=float)
    if gamma.ndim != 1:
        raise ValueError(f"gamma must be a (d,) array of diagonal entries, got shape {gamma.shape}")
    (support,) = _supports([support], gamma.size)
    _check_task(L, relative_noise)
    d, s = gamma.size, len(support)
    mask = np.zeros(d)
    mask[list(support)] = 1.0
    task = Setting(d=d, L=L, sigma2=relative_noise * s)
    return preconditioned_gd_risk(
        np.diag(gamma), np.eye(d), task, debiased=True, signal=np.diag(mask), query_noise=False
    )


def restricted_dgd_risk(eta, s: int, L: int, relative_noise: float = 0.1) -> np.ndarray:
    """Risk of support-restricted debiased GD (A.1) at step eta on a task with |S_k| = s.

    ``s (R_dGD(eta; d=s, L, sigma2=r) - r)`` with `theory.debiased_gd_risk` (§HE-4.3-RISK): the
    labels rescaled by 1/sqrt(s) are the reference's data model, whose query noise r is dropped.

    >>> round(float(restricted_dgd_risk(0.9, 4, 48)), 5)
    0.41331
    """
    setting = Setting(d=s, L=L, sigma2=relative_noise)
    return s * (debiased_gd_risk(eta, setting) - relative_noise)


def restricted_optimum(s: int, L: int, relative_noise: float = 0.1) -> TunedRisk:
    """The optimal step ``eta*_k = L / (L + s(1+r))`` of (A.1) and its risk ``s (D+1)/(L+D)``.

    >>> t = restricted_optimum(4, 48)
    >>> round(t.eta, 5), round(t.risk, 5)
    (0.91603, 0.41221)
    """
    setting = Setting(d=s, L=L, sigma2=relative_noise)
    tuned = optimal_gd(setting, debiased=True)
    return TunedRisk(eta=tuned.eta, risk=s * (tuned.risk - relative_noise))


def shared_preconditioner(supports, d: int, L: int, relative_noise: float = 0.1) -> np.ndarray:
    """The diagonal Gamma shared by every task that minimises their summed risk (mode II).

    ``Gamma_j = L c_j / ((n+1) c_j + sum_k |S_k| (1+r))``, c_j = number of supports holding j:
    a two-head ± pair gives every task the same Gamma up to scale (module doc). (d,) array.

    >>> shared_preconditioner([[0, 1, 2, 3], [2, 3, 4, 5]], 6, 48).round(4)
    array([0.8451, 0.8451, 0.916 , 0.916 , 0.8451, 0.8451])
    """
    supports = _supports(supports, d)
    _check_task(L, relative_noise)
    counts = np.zeros(d)  # (d,): c_j
    for support in supports:
        counts[list(support)] += 1
    total = sum(len(s) for s in supports) * (1 + relative_noise)
    return L * counts / (L * counts + total)


def optimal_task_preconditioners(
    H: int, supports, d: int, L: int, relative_noise: float = 0.1
) -> np.ndarray:
    """(K, d): the optimal Gamma_k of every task in the mode the paper reports at H heads.

    Mode II (2 <= H <= K, `paper_mode`): one ± pair, so every task gets the same Gamma, the
    `shared_preconditioner`; otherwise support-restricted debiased GD (A.1) at its optimal step,
    ``Gamma_k = eta*_k 1_{S_k}`` (`restricted_optimum`; module doc).

    >>> S = [[0, 1, 2, 3], [2, 3, 4, 5]]
    >>> optimal_task_preconditioners(3, S, 6, 48).round(4)
    array([[0.916, 0.916, 0.916, 0.916, 0.   , 0.   ],
           [0.   , 0.   , 0.916, 0.916, 0.916, 0.916]])
    >>> optimal_task_preconditioners(2, S, 6, 48).round(4)[1]
    array([0.8451, 0.8451, 0.916 , 0.916 , 0.8451, 0.8451])
    """
    supports = _supports(supports, d)
    K = len(supports)
    if paper_mode(H, K) == 2:  # one ± pair: every task the same Gamma
        return np.tile(shared_preconditioner(supports, d, L, relative_noise), (K, 1))
    gamma = np.zeros((K, d))
    for k, support in enumerate(supports):
        gamma[k, list(support)] = restricted_optimum(len(support), L, relative_noise).eta
    return gamma


@dataclass(frozen=True)
class GroupTable:
    """Heads given per coordinate group (a table of the paper): omega (H, G), mu (H, K), and
    each task's support as group indices (the conditions then read Gamma per group)."""

    omega: np.ndarray
    mu: np.ndarray
    supports: tuple[tuple[int, ...], ...]

    def conditions(self) -> SupportConditions:
        """`support_conditions` of the table, per group.

        >>> c = PAPER_TABLE_2.conditions()
        >>> c.zero_sum.round(3), c.on_support[0].round(3), c.off_support[1].round(3)
        (array([0.055, 0.003]), array([0.906, 0.915]), array([0.009]))
        """
        return support_conditions(self.omega, self.mu, self.supports)


def _paper_table_2() -> GroupTable:
    # [TEXT] numbers of Table 2 (H = 3, released setting), reference §HE-5.4-MT; the paper's
    # columns are omega on G1, G3, G2, mu_1, mu_2; stored here in group order G1, G2, G3
    # (G1 = S1 \ S2, G2 = S1 ∩ S2, G3 = S2 \ S1), so S1 = {G1, G2} and S2 = {G2, G3}.
    omega = np.array(
        [[-0.0316, -0.0893, -0.0689], [0.0779, 0.0870, 0.0000], [-0.0837, 0.0152, 0.0927]]
    )  # (H=3, G=3)
    mu = np.array([[-3.9911, -7.0742], [6.9204, 2.3371], [-2.8739, 4.7399]])  # (H=3, K=2)
    return GroupTable(omega=omega, mu=mu, supports=((0, 1), (1, 2)))


#: Table 2 of the paper (H = 3, superposition), columns reordered to groups G1, G2, G3.
PAPER_TABLE_2 = _paper_table_2()
