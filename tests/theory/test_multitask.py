"""Multi-task theory (He et al. 2025 §5.4, App. A.3): risks against Monte Carlo and numerical
minimisation, Table 2's arithmetic, and the first-order predictor's error order against the
exact kernel predictor."""

import numpy as np
import pytest
import torch
from icl_verify.numerics import kernel_multitask_prediction
from icl_verify.theory import (
    PAPER_TABLE_2,
    first_order_prediction,
    preconditioned_dgd_risk,
    restricted_dgd_risk,
    restricted_optimum,
    shared_preconditioner,
    support_conditions,
    support_groups,
)
from scipy.optimize import minimize, minimize_scalar

SUPPORTS = ((0, 1, 2, 3), (2, 3, 4, 5))
D, L, R = 6, 48, 0.1


def _prompts(n, rng, L=L):
    """The authors' MultiTaskLinearReg in numpy (independent of numerics): X, Y, x_q, y_q."""
    X, xq = rng.standard_normal((n, L, D)), rng.standard_normal((n, D))
    masks = np.zeros((len(SUPPORTS), D))
    for k, s in enumerate(SUPPORTS):
        masks[k, list(s)] = 1.0
    beta = rng.standard_normal((n, len(SUPPORTS), D)) * masks  # (n, K, d)
    noise = rng.standard_normal((n, L, len(SUPPORTS))) * np.sqrt(R * masks.sum(axis=1))
    return X, np.einsum("nld,nkd->nlk", X, beta) + noise, xq, np.einsum("nd,nkd->nk", xq, beta)


def test_preconditioned_risk_matches_monte_carlo_with_leakage_and_uneven_weights():
    gamma = np.array([0.7, 1.1, 0.9, 0.8, 0.3, -0.2])  # on S_1 uneven, leakage on 5, 6
    rng = np.random.default_rng(0)
    losses = []
    for _ in range(10):
        X, Y, xq, yq = _prompts(4000, rng)
        centred = X - X.mean(axis=1, keepdims=True)
        y_hat = np.einsum("nl,nld,d,nd->n", Y[..., 0], centred, gamma, xq) / L
        losses.append((y_hat - yq[:, 0]) ** 2)
    losses = np.concatenate(losses)
    se = losses.std(ddof=1) / np.sqrt(losses.size)
    assert abs(losses.mean() - preconditioned_dgd_risk(gamma, SUPPORTS[0], L, R)) < 4 * se


def test_restricted_risk_is_the_rescaled_single_task_risk_and_the_optimum_minimises_it():
    for eta in (0.3, 0.9, 1.4):
        gamma = eta * np.isin(np.arange(D), SUPPORTS[1])
        assert float(restricted_dgd_risk(eta, 4, L, R)) == pytest.approx(
            preconditioned_dgd_risk(gamma, SUPPORTS[1], L, R), rel=1e-12
        )
    best = minimize_scalar(lambda eta: float(restricted_dgd_risk(eta, 4, L, R)))
    tuned = restricted_optimum(4, L, R)
    assert tuned.eta == pytest.approx(best.x, abs=1e-6)
    assert tuned.risk == pytest.approx(best.fun, rel=1e-10)


def test_restricted_step_is_the_best_diagonal_preconditioner_and_the_shared_one_best_shared():
    own = minimize(lambda g: preconditioned_dgd_risk(g, SUPPORTS[0], L, R), np.full(D, 0.5))
    expected = restricted_optimum(4, L, R).eta * np.isin(np.arange(D), SUPPORTS[0])
    assert np.allclose(own.x, expected, atol=1e-5)

    def summed(g):
        return sum(preconditioned_dgd_risk(g, s, L, R) for s in SUPPORTS)

    shared = minimize(summed, np.full(D, 0.5))
    assert np.allclose(shared.x, shared_preconditioner(SUPPORTS, D, L, R), atol=1e-5)


def test_table_2_arithmetic_reproduces_the_quoted_sums_and_preconditioners():
    c = PAPER_TABLE_2.conditions()  # groups G1, G2, G3; S_1 = {G1, G2}, S_2 = {G2, G3}
    assert np.allclose(c.zero_sum, [0.055, 0.003], atol=6e-4)
    assert np.allclose(c.on_support[0], [0.906, 0.915], atol=6e-4)
    assert np.allclose(c.off_support[0], [0.009], atol=6e-4)
    assert np.allclose(c.on_support[1], [0.907, 0.927], atol=6e-4)
    assert np.allclose(c.off_support[1], [0.009], atol=6e-4)
    assert np.all(c.leakage < 0.011) and np.all(c.spread < 0.025)
    assert np.allclose(c.eta, L / (L + 4 * (1 + R)), atol=0.01)  # reference: ≈ 0.916


def _table_2_heads():
    """Table 2's heads on the d = 6 coordinates (groups G1, G2, G3 = pairs of coordinates)."""
    return np.repeat(PAPER_TABLE_2.omega, 2, axis=1), PAPER_TABLE_2.mu  # (3, 6), (3, 2)


def _pair_heads():
    """Mode III's ideal heads: a ± pair per task, omega on its support only."""
    masks = np.array([np.isin(np.arange(D), s) for s in SUPPORTS], dtype=float)  # (2, 6)
    omega = np.stack([masks[0], -masks[0], masks[1], -masks[1]]) * 0.1  # (4, 6)
    mu = np.array([[1.0, 0.0], [-1.0, 0.0], [0.0, 1.0], [0.0, -1.0]]) * 4.6
    return omega, mu


@pytest.mark.parametrize(
    ("heads", "order"),
    [(_table_2_heads, 1.0), (_pair_heads, 2.0)],
    ids=["superposition-table-2", "pairs-per-task"],
)
def test_first_order_error_shrinks_at_the_derived_order(heads, order):
    """At fixed Gamma (omega = t omega_0, mu = mu_0 / t), the kernel predictor minus (A.4) is the
    second-order softmax term, O(t) relative; for ± pairs the even orders cancel (as in §HE-4.10)
    and the gap is O(t^2) relative."""
    omega, mu = heads()
    rng = np.random.default_rng(1)
    X, Y, xq, _ = _prompts(4000, rng)
    scales = np.array([0.05, 0.1, 0.2])
    gaps = []
    for t in scales:
        first = first_order_prediction(t * omega, mu / t, X, Y, xq)
        labels = np.einsum("hk,kj->hkj", mu / t, np.eye(2))  # diagonal label blocks
        exact = kernel_multitask_prediction(
            t * omega, labels, torch.from_numpy(X), torch.from_numpy(Y), torch.from_numpy(xq)
        ).numpy()
        gaps.append(np.sqrt(np.mean((exact - first) ** 2) / np.mean(first**2)))
    slope = np.polyfit(np.log(scales), np.log(gaps), 1)[0]
    assert slope == pytest.approx(order, abs=0.1)


def test_support_conditions_refuse_bad_supports():
    omega, mu = _pair_heads()
    with pytest.raises(ValueError, match=r"supports must be one or more non-empty lists"):
        support_conditions(omega, mu, [[0, 6], [1]])
    with pytest.raises(ValueError, match="supports must list K = 2 supports"):
        support_conditions(omega, mu, [[0, 1]])


def test_support_groups_follow_membership_for_three_tasks():
    assert support_groups(((0, 1), (1, 2), (2, 3)), 5) == ((0,), (1,), (2,), (3,))
    assert support_groups(((0, 2), (0, 2, 3)), 4) == ((0, 2), (3,))
