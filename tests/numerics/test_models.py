"""numerics._core.models: forward passes agree, variants compute their formulas, inits are as
stated."""

import math

import pytest
import torch
from icl_verify.numerics import (
    AttentionConfig,
    KernelSumModel,
    MultiHeadAttention,
    embed,
    omega_mu,
    sample_linear_regression,
)
from torch import nn

from icl_verify.settings import Setting

D_COV, L = 4, 9


def _prompts(batch_shape=(2, 5), L_=L, seed=0):
    g = torch.Generator().manual_seed(seed)
    return sample_linear_regression(
        batch_shape, Setting(D_COV, L_, 0.1), generator=g, dtype=torch.float64
    )


def _model(**kwargs) -> MultiHeadAttention:
    config = AttentionConfig(**{"d": D_COV, "heads": 3, "ensemble": 2, **kwargs})
    return MultiHeadAttention(config, seeds=list(range(10, 10 + config.ensemble))).double()


def _set_pattern(model, omega, mu):
    """Weights realising KQ11_h = omega_h I, OV last row (0, ..., 0, mu_h); omega, mu: (E, H)."""
    D = model.config.d_embed
    P = torch.diag(torch.tensor([1.0] * (D - 1) + [0.0], dtype=torch.float64))
    label = torch.zeros(D, D, dtype=torch.float64)
    label[-1, -1] = 1.0
    with torch.no_grad():
        model.W_K.copy_(torch.eye(D, dtype=torch.float64).expand_as(model.W_K))
        model.W_Q.copy_(math.sqrt(D) * omega[..., None, None] * P)
        model.W_V.copy_(label.expand_as(model.W_V))
        model.W_O.copy_(mu[..., None, None] * label)


@pytest.mark.parametrize(
    "attention", ["softmax", "linear", torch.exp, lambda s: nn.functional.elu(s) + 1]
)
def test_query_forward_equals_causal_sequence_forward_at_the_query(attention):
    model = _model(attention=attention, train_length=L)
    Z = embed(_prompts())
    full = model.forward_sequence(Z)  # (E, B, D, L+1)
    torch.testing.assert_close(model(Z), full[..., -1, -1], rtol=0, atol=1e-6)
    assert (model(Z) - full[..., -1, -1]).abs().max() < 1e-12  # float64: only rounding


def test_sequence_forward_is_strictly_causal():
    model = _model()
    Z = embed(_prompts())
    changed = Z.clone()
    changed[..., 5:] = torch.randn_like(changed[..., 5:])
    a, b = model.forward_sequence(Z), model.forward_sequence(changed)
    # token t sees tokens < t only: changing tokens 5.. leaves the outputs at 0..4 unchanged
    torch.testing.assert_close(a[..., :5], b[..., :5], rtol=0, atol=1e-14)
    torch.testing.assert_close(a[..., 0], Z[..., 0])  # the first token sees nothing


def test_pattern_weights_give_the_kernel_sum_predictor_3_2():
    omega = torch.tensor([[0.3, -0.2, 0.05], [0.7, 0.1, -0.4]], dtype=torch.float64)
    mu = torch.tensor([[2.0, -1.0, 0.5], [1.5, -3.0, 0.2]], dtype=torch.float64)
    model = _model()
    _set_pattern(model, omega, mu)
    prompts = _prompts()
    kernel = KernelSumModel(omega, mu)
    torch.testing.assert_close(model(embed(prompts)), kernel(prompts), rtol=0, atol=1e-12)
    got_omega, got_mu = omega_mu(model.KQ, model.OV, D_COV)
    torch.testing.assert_close(got_omega, omega)
    torch.testing.assert_close(got_mu, mu)


def test_linear_attention_keeps_its_training_one_over_L():
    # (5.1) with KQ11 = Gamma, OV last row (0..0, 1): y_hat = (1/L_train) sum_i y_i x_i^T Gamma x_q
    # at any test length L' (the query token's own label slot is 0).
    model = _model(heads=1, ensemble=1, attention="linear", train_length=L)
    D = model.config.d_embed
    gamma = torch.randn(D_COV, D_COV, generator=torch.Generator().manual_seed(1)).double()
    with torch.no_grad():
        model.W_K.copy_(torch.eye(D)[None, None])
        model.W_Q.zero_()
        model.W_Q[0, 0, :D_COV, :D_COV] = math.sqrt(D) * gamma
        model.W_V.zero_()
        model.W_V[0, 0, -1, -1] = 1.0
        model.W_O.copy_(model.W_V)
    for L_test in (L, 3 * L):
        p = _prompts((1, 6), L_=L_test)
        expected = torch.einsum("bl,bli,ij,bj->b", p.y[0], p.X[0], gamma, p.x_query[0]) / L
        torch.testing.assert_close(model(embed(p))[0], expected, rtol=0, atol=1e-12)


def test_normalised_exp_activation_is_softmax():
    softmax, normalised_exp = _model(), _model(attention=torch.exp)
    Z = embed(_prompts())
    torch.testing.assert_close(softmax(Z), normalised_exp(Z), rtol=0, atol=1e-12)


def test_default_init_is_nn_linear_kaiming_uniform():
    # member e, head h draws W_Q, W_K, W_V, W_O in that order, each as nn.Linear(D, D, bias=False)
    # would from a generator seeded with the member's seed.
    model = _model()
    D = model.config.d_embed
    for e, seed in enumerate((10, 11)):
        torch.manual_seed(seed)
        for h in range(3):
            for W in (model.W_Q, model.W_K, model.W_V, model.W_O):
                expected = nn.Linear(D, D, bias=False).weight.double()
                assert torch.equal(W[e, h], expected)
    bound = 1 / math.sqrt(D)  # kaiming_uniform(a=sqrt 5) on fan_in D: U(-1/sqrt D, 1/sqrt D)
    assert model.W_Q.abs().max() <= bound


def test_inactive_heads_add_nothing_and_get_no_gradient():
    model = _model(heads=(1, 3))
    solo = MultiHeadAttention(AttentionConfig(d=D_COV, heads=1), seeds=[10]).double()
    Z = embed(_prompts())
    out = model(Z)
    torch.testing.assert_close(out[0], solo(Z[:1])[0], rtol=0, atol=1e-14)
    out.sum().backward()
    for W in (model.W_Q, model.W_K, model.W_V, model.W_O):
        assert (W[0, 1:] == 0).all() and (W.grad[0, 1:] == 0).all()
        assert (W.grad[1] != 0).any()


def test_symmetric_init_realises_definition_b1():
    eps = 0.02
    model = MultiHeadAttention(
        AttentionConfig(d=D_COV, heads=2, init="symmetric", init_scale=eps), seeds=[0]
    ).double()
    omega, mu = omega_mu(model.KQ, model.OV, D_COV)
    torch.testing.assert_close(omega[0], torch.tensor([eps, -eps], dtype=torch.float64))
    torch.testing.assert_close(mu[0], torch.tensor([eps, -eps], dtype=torch.float64))
    kq11 = model.KQ[0, :, :D_COV, :D_COV]
    torch.testing.assert_close(kq11[0], eps * torch.eye(D_COV, dtype=torch.float64))
    torch.testing.assert_close(kq11[1], -eps * torch.eye(D_COV, dtype=torch.float64))
    last_row = model.OV[0, :, -1]
    assert (last_row[:, :-1] == 0).all()


def test_small_identity_init_is_near_scaled_identity():
    s = 0.1
    model = _model(init="small_identity", init_scale=s)
    D = model.config.d_embed
    deviation = (model.W_Q - s * torch.eye(D, dtype=torch.float64)) / (0.1 * s)  # = G, N(0, 1)
    n = deviation.numel()
    assert abs(deviation.mean().item()) < 4 / math.sqrt(n)  # mean 0 within 4 SE
    assert abs(deviation.pow(2).mean().item() - 1) < 4 * math.sqrt(2 / n)  # variance 1 within 4 SE


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"d": 0}, "d"),
        ({"heads": (2, 2, 2)}, "heads"),
        ({"heads": 0}, "heads"),
        ({"attention": "relu"}, "attention"),
        ({"init": "zeros"}, "init"),
        ({"init": "symmetric", "heads": 3}, "heads"),
        ({"init_scale": -1.0}, "init_scale"),
    ],
)
def test_bad_config_raises_naming_the_parameter(kwargs, name):
    with pytest.raises(ValueError, match=f"^{name} "):
        AttentionConfig(**{"d": D_COV, "ensemble": 2, **kwargs})
