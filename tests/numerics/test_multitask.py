"""Multi-task read-outs (He et al. 2025 §5.4): heads from circuits, the kernel form against the
model itself, the mode rule, and per-task Monte Carlo errors."""

import math

import numpy as np
import pytest
import torch
from icl_verify.numerics.data import embed, sample_multitask_regression
from icl_verify.numerics.ensemble import EnsembleTraining, train_ensemble
from icl_verify.numerics.models import AttentionConfig, MultiHeadAttention
from icl_verify.numerics.montecarlo import _block_generator
from icl_verify.numerics.multitask import (
    kernel_multitask_prediction,
    multitask_heads,
    multitask_losses,
    multitask_mode,
)
from icl_verify.theory.multitask import restricted_dgd_risk

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
        256, d, 48, SUPPORTS, generator=torch.Generator().manual_seed(0), dtype=torch.float64
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
        4096, 6, 48, SUPPORTS, generator=_block_generator(0, 0, torch.device("cpu"))
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
