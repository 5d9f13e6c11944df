"""Multi-task read-outs (He et al. 2025 §5.4): heads from circuits, the kernel form against the
model itself, the mode rule, and per-task Monte Carlo errors."""

import math

import numpy as np
import pytest
import torch
from icl_verify.numerics import (
    AttentionConfig,
    EnsembleTraining,
    MultiHeadAttention,
    embed,
    first_order_gaps,
    kernel_multitask_prediction,
    mode_history,
    mode_reading,
    multitask_heads,
    multitask_losses,
    multitask_mode,
    sample_multitask_regression,
    settled_heads,
    train_ensemble,
)
from icl_verify.numerics._core.montecarlo import _block_generator
from icl_verify.theory import (
    first_order_prediction,
    restricted_dgd_risk,
    support_groups,
    task_preconditioners,
)

from icl_verify.settings import Setting
from icl_verify.statistics import group_means

SUPPORTS = ((0, 1, 2, 3), (2, 3, 4, 5))


def _model_with_circuits(KQ, OV):
    """A float64 one-member K-label model whose circuits are KQ, OV (H, D, D)."""
    H, D, _ = KQ.shape
    config = AttentionConfig(d=D - 2, heads=H, n_labels=2)
    model = MultiHeadAttention(config, seeds=[0]).double()
    with torch.no_grad():
        model.W_K.copy_(math.sqrt(D) * torch.eye(D, dtype=torch.float64).expand(1, H, D, D))
        model.W_Q.copy_(torch.as_tensor(KQ)[None])
        model.W_V.copy_(torch.eye(D, dtype=torch.float64).expand(1, H, D, D))
        model.W_O.copy_(torch.as_tensor(OV)[None])
    return model


def test_the_kernel_form_is_what_the_model_computes_and_heads_are_read_back():
    rng = np.random.default_rng(0)
    H, d, K = 3, 6, 2
    KQ, OV = np.zeros((H, d + K, d + K)), np.zeros((H, d + K, d + K))
    omega = 0.2 * rng.standard_normal((H, d))
    labels = rng.standard_normal((H, K, K))  # with leakage between tasks
    KQ[:, :d, :d] = np.stack([np.diag(w) for w in omega])
    OV[:, d:, d:] = labels
    model = _model_with_circuits(KQ, OV)
    p = sample_multitask_regression(
        256, Setting(d, 48, 0.1), SUPPORTS, generator=torch.Generator().manual_seed(0),
        dtype=torch.float64
    )
    from_model = model(embed(p)[None])[0]  # (n, K)
    kernel = kernel_multitask_prediction(omega, labels, p.X, p.y, p.x_query)
    assert torch.allclose(from_model, kernel, rtol=0, atol=1e-12)
    heads = multitask_heads(model.KQ.detach().numpy()[0], model.OV.detach().numpy()[0], d)
    assert np.allclose(heads.omega, omega, atol=1e-14) and np.allclose(heads.labels, labels)
    off = np.abs(labels * (1 - np.eye(K))).max(axis=(0, 2)) / np.abs(heads.mu).max(axis=0)
    assert np.allclose(heads.cross, off)


def test_the_mode_rule_uses_the_per_task_dummy_threshold():
    S = ((0, 1), (1, 2))
    pairs = np.array([[0.1, 0.1, 0], [-0.1, -0.1, 0], [0, 0.1, 0.1], [0, -0.1, -0.1]])
    mu = np.array([[4.0, 0.0], [-4.0, 0.0], [0.0, 4.0], [0.0, -4.0]])
    small, large = mu.copy(), mu.copy()
    small[:2, 1] = [0.1, -0.1]  # 2.5% of task 2's largest share: not serving, still III
    large[:2, 1] = [0.4, -0.4]  # 10%: heads 1-2 serve both tasks with one sign each
    assert multitask_mode(pairs, small, S) == 3
    assert multitask_mode(pairs, large, S) == 0
    same_sign = mu.copy()
    same_sign[:, 1] = np.abs(same_sign[:, 1])  # task 2 has no negative head: no pair
    assert multitask_mode(pairs, same_sign, S) == 1


@pytest.fixture(scope="module")
def trained():
    training = EnsembleTraining(d=6, L=48, sigma2=0.1, heads=(1, 3), lr=1e-2, steps=40, batch=32,
                                seed=0, log_every=10, checkpoint_every=0, validation_batch=256,
                                supports=SUPPORTS)  # fmt: skip
    return train_ensemble(training)


def test_multitask_losses_are_the_models_and_restricted_gds_errors_on_the_same_prompts(trained):
    r = multitask_losses(trained, [0, 1], {"a": [0.9, 0.9], "b": [0.5, 0.7]}, n_prompts=4096)
    assert r.names == ("m0:0", "m0:1", "m1:0", "m1:1", "a:0", "a:1", "b:0", "b:1")
    # the same prompts (one randomness block), evaluated here directly
    p = sample_multitask_regression(
        4096, Setting(6, 48, 0.1), SUPPORTS, generator=_block_generator(0, 0, torch.device("cpu"))
    )
    with torch.no_grad():
        y_hat = trained.model()(embed(p).expand(2, -1, -1, -1))  # (E, n, K)
    direct = ((y_hat - p.y_query) ** 2).double().mean(dim=1).numpy()  # (E, K)
    measured = np.array([[r[f"m{e}:{k}"].mean for k in range(2)] for e in range(2)])
    assert np.allclose(measured, direct, rtol=1e-5)
    for name, steps in (("a", [0.9, 0.9]), ("b", [0.5, 0.7])):
        for k in range(2):
            exact = float(restricted_dgd_risk(steps[k], 4, 48, 0.1))
            assert abs(r[f"{name}:{k}"].mean - exact) < 4 * r[f"{name}:{k}"].stderr


def _logged_heads(omega, mu, n_logs):
    """`MultiTaskHeads` of one member logged n_logs times: omega (n, H, d), mu (n, H, K)."""
    omega, mu = np.asarray(omega, dtype=float), np.asarray(mu, dtype=float)
    n, H, d = omega.shape
    K = mu.shape[-1]
    KQ, OV = np.zeros((n, 1, H, d + K, d + K)), np.zeros((n, 1, H, d + K, d + K))
    KQ[..., range(d), range(d)] = omega[:, None]
    OV[..., range(d, d + K), range(d, d + K)] = mu[:, None]
    assert n == n_logs
    return multitask_heads(KQ, OV, d)


PAIRS = np.array([[0.1, 0.1, 0.1, 0.1, 0, 0], [-0.1, -0.1, -0.1, -0.1, 0, 0],
                  [0, 0, 0.1, 0.1, 0.1, 0.1], [0, 0, -0.1, -0.1, -0.1, -0.1]])  # fmt: skip
PAIR_MU = np.array([[4.0, 0.0], [-4.0, 0.0], [0.0, 4.0], [0.0, -4.0]])  # a ± pair per task


def test_the_settled_preconditioners_are_the_group_means_of_gamma_k_and_sums_vanish():
    # constant logs of a pair per task (mode III): Gamma_k = 0.8 on S_k, 0 off it; per group
    # G1 = S1\S2, G2 = S1 and S2, G3 = S2\S1, task-major; zero sums exactly 0, no noise
    heads = _logged_heads(np.stack([PAIRS] * 40), np.stack([PAIR_MU] * 40), 40)
    groups = support_groups(SUPPORTS, 6)
    settled = settled_heads(heads, 0, 4, groups)
    expected = group_means(task_preconditioners(PAIRS, PAIR_MU), groups).ravel()
    np.testing.assert_allclose(settled.gamma, expected)
    np.testing.assert_allclose(settled.gamma, [0.8, 0.8, 0.0, 0.0, 0.8, 0.8])
    np.testing.assert_allclose(settled.gamma_error, 0.0, atol=1e-15)
    np.testing.assert_array_equal(settled.zero_sum, [0.0, 0.0])
    # a zero-sum ratio still falling toward 0 is not judged yet: its error is its value
    mu = np.stack([PAIR_MU] * 40)
    mu[:, 0, 0] = np.linspace(8.0, 4.4, 40)  # head 1 outweighs head 2 on task 1, less and less
    falling = settled_heads(_logged_heads(np.stack([PAIRS] * 40), mu, 40), 0, 4, groups)
    assert falling.zero_sum[0] == pytest.approx(0.4 / 8.4)
    assert falling.zero_sum_error[0] == pytest.approx(falling.zero_sum[0])


def test_the_mode_is_read_at_every_log_and_per_group():
    shared = np.array([[0.1] * 6, [-0.1] * 6, [0.0] * 6, [0.0] * 6])  # one pair for both: II
    shared_mu = np.array([[4.0, 4.0], [-4.0, -4.0], [0.0, 0.0], [0.0, 0.0]])
    omega = np.stack([shared] * 3 + [PAIRS] * 3)  # (n = 6, H = 4, d)
    mu = np.stack([shared_mu] * 3 + [PAIR_MU] * 3)
    heads = _logged_heads(omega, mu, 6)
    modes = mode_history(heads, [4], SUPPORTS)
    assert modes[:, 0].tolist() == [2, 2, 2, 3, 3, 3]
    assert mode_reading(modes, [0], shown=0, expected=3).reached
    read = mode_reading(modes, [0], shown=0, expected=4)
    assert (read.mode, read.reached, read.held) == (3, False, True)  # held over the last half
    assert not mode_reading(modes[:5], [0], shown=0, expected=4).held


def test_the_first_order_gap_shrinks_like_omega_squared_for_pairs():
    # the kernel form (5.8) minus its first-order expansion (A.4): in a ± pair the even orders
    # cancel, so at fixed mu omega the remainder is O(omega^2) of the prediction: halving omega
    # quarters the relative gap (a pair per task; the same prompts for both, seed 1)
    heads = []
    for scale in (1.0, 0.5):
        KQ, OV = np.zeros((1, 4, 8, 8)), np.zeros((1, 4, 8, 8))
        KQ[0, :, range(6), range(6)] = scale * PAIRS.T
        OV[0, :, 6 + np.arange(2), 6 + np.arange(2)] = PAIR_MU.T / scale
        heads.append(multitask_heads(KQ, OV, 6))
    gaps = [
        first_order_gaps(h, [0], [4], first_order_prediction, setting=Setting(6, 48, 0.1),
                         supports=SUPPORTS, n_prompts=2048, seed=1)[0]
        for h in heads
    ]  # fmt: skip
    assert 0 < gaps[0] < 0.2
    assert gaps[1] / gaps[0] == pytest.approx(0.25, abs=0.03)
