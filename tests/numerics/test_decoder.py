"""numerics._core.decoder: the GPT-2-style decoder of Chen, Zhao, Zou (2024) App. G, batched over
members: the interleaved layout, causality, a member alone, torch's own pre-LN layers as peer,
training through the trainer (ensemble = solo runs), and the correlated design's covariates."""

import dataclasses

import numpy as np
import pytest
import torch
import torch.nn.functional as F  # noqa: N812
from icl_verify.numerics import (
    Decoder,
    DecoderConfig,
    EncoderTraining,
    SparseRegressionTask,
    TrainConfig,
    decoder_tokens,
    sample_sparse_regression,
    train,
    train_encoders,
)
from icl_verify.numerics._core.decoder import LN_EPS

from icl_verify.covariance import equicorrelated_covariance
from icl_verify.settings import SparseSetting

CONFIG = DecoderConfig(d=5, d_hid=24, heads=4, layers=3, positions=20, ensemble=3)
N, Q = 6, 4  # the first N examples are context only; predictions at the Q after them


def _tokens(E: int, batch: int = 5, seed: int = 0) -> torch.Tensor:
    prompts = sample_sparse_regression(
        (E, batch), SparseSetting(5, 2, 0.1), N, q=Q, generator=torch.Generator().manual_seed(seed),
        dtype=torch.float64
    )  # fmt: skip
    return decoder_tokens(prompts)  # (E, batch, 2 (N + Q), 5)


def _model(config: DecoderConfig = CONFIG, seeds=(5, 6, 7)) -> Decoder:
    return Decoder(config, list(seeds)).double()


def test_tokens_interleave_x_and_zero_padded_y():
    prompts = sample_sparse_regression(
        2, SparseSetting(5, 2, 0.1), N, q=Q, generator=torch.Generator().manual_seed(1)
    )  # fmt: skip
    Z = decoder_tokens(prompts)
    X = torch.cat([prompts.X, prompts.X_query], dim=-2)
    y = torch.cat([prompts.y, prompts.y_query], dim=-1)
    assert torch.equal(Z[:, 0::2], X) and torch.equal(Z[:, 1::2, 0], y)
    assert (Z[:, 1::2, 1:] == 0).all()


def test_a_later_token_never_moves_an_earlier_prediction():
    model, Z = _model(), _tokens(3)
    base = model(Z, 0)  # (E, B, N + Q): every x token's prediction
    for t in range(Z.shape[2]):
        other = Z.clone()
        other[:, :, t] += 1.0
        moved = (model(other, 0) - base).abs().amax(dim=(0, 1))  # (N + Q,) per prediction
        # the prediction at x_j (token 2j) reads tokens 0..2j: a change at token t moves only
        # the predictions j >= ceil(t / 2); those before it stay bit for bit
        first = (t + 1) // 2
        assert (moved[:first] == 0).all(), t
        assert (moved[first:] > 0).all(), t


def test_a_member_computes_what_it_computes_alone():
    Z = _tokens(3)
    together = _model()(Z, N)
    alone = _model(dataclasses.replace(CONFIG, ensemble=1), (6,))(Z[1:2], N)
    assert together.shape == (3, 5, Q)
    assert torch.equal(together[1:2], alone)


def test_torchs_pre_ln_transformer_layers_compute_the_same_member():
    # peer: torch.nn.TransformerEncoderLayer with norm_first (GPT-2's pre-LN block), a causal
    # mask and tanh-GELU, loaded with member 1's weights; float64, so the two sum in different
    # orders only: ~1e-15 per operation over 3 blocks (1e-12 leaves room; seen: ~1e-15)
    model, Z = _model(), _tokens(3)
    e, K, T = 1, CONFIG.d_hid, Z.shape[2]
    layers = []
    for i in range(CONFIG.layers):
        layer = torch.nn.TransformerEncoderLayer(
            K, CONFIG.heads, CONFIG.ffn_width, dropout=0.0, batch_first=True, norm_first=True,
            activation=lambda x: F.gelu(x, approximate="tanh"), layer_norm_eps=LN_EPS,
            dtype=torch.float64,
        )  # fmt: skip
        with torch.no_grad():
            layer.self_attn.in_proj_weight.copy_(model.W_QKV[e, i])
            layer.self_attn.in_proj_bias.copy_(model.b_QKV[e, i])
            layer.self_attn.out_proj.weight.copy_(model.W_O[e, i])
            layer.self_attn.out_proj.bias.copy_(model.b_O[e, i])
            layer.linear1.weight.copy_(model.W_1[e, i])
            layer.linear1.bias.copy_(model.b_1[e, i])
            layer.linear2.weight.copy_(model.W_2[e, i])
            layer.linear2.bias.copy_(model.b_2[e, i])
            layer.norm1.weight.copy_(model.ln1_g[e, i])
            layer.norm1.bias.copy_(model.ln1_b[e, i])
            layer.norm2.weight.copy_(model.ln2_g[e, i])
            layer.norm2.bias.copy_(model.ln2_b[e, i])
        layers.append(layer.eval())
    with torch.no_grad():
        H = Z[e] @ model.W_in[e].T + model.b_in[e] + model.W_pos[e, :T]  # (B, T, K)
        causal = torch.nn.Transformer.generate_square_subsequent_mask(T, dtype=torch.float64)
        for layer in layers:
            H = layer(H, src_mask=causal)
        H = F.layer_norm(H, (K,), model.lnf_g[e], model.lnf_b[e], eps=LN_EPS)
        peer = H[:, 0::2] @ model.W_R[e] + model.b_R[e]  # (B, N + Q)
        ours = model(Z, 0)[e]
    torch.testing.assert_close(ours, peer, rtol=0, atol=1e-12)


def test_masking_a_head_moves_the_prediction_and_an_all_ones_mask_does_not():
    model, Z = _model(), _tokens(3)
    ones = torch.ones(3, CONFIG.layers, CONFIG.heads, dtype=torch.float64)
    assert torch.equal(model(Z, N, head_mask=ones), model(Z, N))
    masked = ones.clone()
    masked[:, 1, 2] = 0.0
    assert (model(Z, N, head_mask=masked) != model(Z, N)).all()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [({"positions": 0}, "positions must be an integer >= 1"),
     ({"heads": 5}, "heads must divide d_hid = 24"),
     ({"layers": 0}, "layers must be an integer >= 1")],
)  # fmt: skip
def test_bad_architecture_one_line(kwargs, message):
    with pytest.raises(ValueError, match=f"^{message}"):
        dataclasses.replace(CONFIG, **kwargs)


def test_too_many_tokens_or_a_bad_n_is_one_line():
    model, Z = _model(), _tokens(3)
    with pytest.raises(ValueError, match=r"^Z must hold an even number of tokens in 2..20"):
        model(torch.cat([Z, Z[:, :, :2]], dim=2), N)
    with pytest.raises(ValueError, match=r"^n must be in 0..9"):
        model(Z, 10)


TASK = SparseRegressionTask(d=5, n=N, q=Q, s=2, sigma=0.1, tokens="decoder")
TRAIN = TrainConfig(steps=12, batch=8, log_every=4, validation_batch=16, dtype="float64",
                    device="cpu")  # fmt: skip


def test_an_ensemble_member_trains_exactly_as_its_solo_run():
    config = dataclasses.replace(CONFIG, d_hid=8, heads=2, layers=2)
    together = train(config, TASK, TRAIN, progress=False)
    for e in range(3):
        solo = train(dataclasses.replace(config, ensemble=1), TASK,
                     dataclasses.replace(TRAIN, seed=e), progress=False)  # fmt: skip
        for name, value in solo.model.state_dict().items():
            assert torch.equal(together.model.state_dict()[name][e : e + 1], value), name


def test_a_task_that_does_not_fit_the_decoder_is_one_line():
    with pytest.raises(ValueError, match=r"^task must be a SparseRegressionTask with d = 5 and "
                       r"decoder tokens \(at most 20 of them\)"):  # fmt: skip
        train(CONFIG, dataclasses.replace(TASK, q=5), TRAIN, progress=False)
    with pytest.raises(ValueError, match=r"decoder tokens"):
        train(CONFIG, dataclasses.replace(TASK, tokens="encoder"), TRAIN, progress=False)


def test_a_bad_zeta_or_layout_is_one_line():
    with pytest.raises(ValueError, match=r"^zeta must be a finite real number >= 0, got -0.1$"):
        SparseRegressionTask(zeta=-0.1)
    with pytest.raises(ValueError, match=r"^tokens must be one of \['decoder', 'encoder'\]"):
        SparseRegressionTask(tokens="gpt")


def test_correlated_training_prompts_have_the_stated_covariance():
    # the task's draws: sample covariance of 20k x vectors against I + zeta 11^T; the entries'
    # SEs are <= sqrt((1 + zeta)^2 * 2 / 20000) ~ 0.014 at zeta = 0.4: 5 SE = 0.07
    draw = SparseRegressionTask(d=4, n=10, q=1, s=2, zeta=0.4).sampler(
        torch.device("cpu"), torch.float64)
    Z, _ = draw(2000, torch.Generator().manual_seed(0))  # (2000, 11, 5)
    X = Z[..., :4].reshape(-1, 4).numpy()
    np.testing.assert_allclose(np.cov(X.T), equicorrelated_covariance(4, 0.4), atol=0.07)


def test_a_decoder_training_reads_its_own_layout_and_covariance():
    training = EncoderTraining(d=4, s=2, n=3, q=5, d_hid=8, heads=2, layers=2, sigmas=(0.1,),
                               lr=1e-3, steps=4, batch=4, validation_batch=4,
                               architecture="decoder", zeta=0.2)  # fmt: skip
    trained = train_encoders(training)
    assert isinstance(trained.model(), Decoder) and trained.model().config.positions == 16
    np.testing.assert_array_equal(training.covariance().numpy(),
                                  equicorrelated_covariance(4, 0.2))  # fmt: skip
