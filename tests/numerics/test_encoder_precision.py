"""numerics._core.encoder's precision option (float32 | tf32 | bf16) and its fused attention.

- a float32 training keeps the cache key and the checkpoint fingerprint it had before the option
  existed (pinned digests); tf32 and bf16 have keys and fingerprints of their own;
- attention through `scaled_dot_product_attention` is the explicit softmax's function, to
  float32 rounding, with the query mask, the causal mask and the head mask;
- bf16 runs the forward under autocast with float32 weights, gradients and prediction, close to
  float32 within bf16 rounding; tf32 is refused on the CPU, and its backward hook holds TF32 for
  that backward pass only.
"""

import dataclasses
import hashlib

import numpy as np
import pytest
import torch
from icl_verify.numerics import (
    DecoderConfig,
    EncoderConfig,
    EncoderTraining,
    attention_heads,
    decoder_tokens,
    encoder_tokens,
    sample_sparse_regression,
    train_encoders,
)
from icl_verify.numerics._chen2024.encoder_training import MixedPrecisionTraining
from icl_verify.numerics._core._training.checkpoints import fingerprint
from icl_verify.numerics._core.encoder import MixedPrecisionEncoderConfig, precision_output
from icl_verify.validation.cache import canonical_json

from icl_verify.settings import SparseSetting

U32 = 2.0**-24  # unit roundoff of float32
U_BF16 = 2.0**-8  # unit roundoff of bfloat16 (8 significant bits)

# The quick preset's h = 4 training of CZZ-HEADS (validation/claims/chen2024/_encoders.py).
QUICK = EncoderTraining(d_hid=32, heads=4, layers=3, sigmas=(0.1,), replicates=2, lr=1e-3,
                        steps=3000, batch=64, log_every=75, checkpoint_every=1000)  # fmt: skip


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _key_text(training) -> str:
    """What `validation.Runtime.trained` hashes (with the producer's name and code versions)."""
    return canonical_json({**dataclasses.asdict(training), "device": "cpu"})


def _fingerprint_of(training) -> str:
    return fingerprint(training.model_config(), training.tasks(), training.train_config("cpu"))


def test_a_float32_training_keeps_its_cache_key_and_fingerprint():
    # computed at commit d4a457c, before the precision option existed:
    # sha256(canonical_json({**asdict(QUICK), "device": "cpu"})); config_key of it was
    # ef186f2203c9f1304ceb1c420f1d33af26da75c09a80c4829d5b92379820a041 (package 0.1.0,
    # trained-encoders version 1); and sha256 of the trainer's checkpoint fingerprint
    assert _digest(_key_text(QUICK)) == (
        "ab77ca4f288a4777488c9c7eb3f67fcbd2f52d53fe081b706970fd4b38a837d9"
    )
    assert _digest(_fingerprint_of(QUICK)) == (
        "4c8d52066920833cd7f4e44af421ee9d2680705e0bc972eae5be3bfa5730eadb"
    )
    decoder = dataclasses.replace(QUICK, architecture="decoder")
    assert _digest(_fingerprint_of(decoder)) == (
        "3e17c5dec5ced17e84631aa2e1d43bd805a0828b9ddfe1de41510cadaedf1962"
    )
    assert QUICK.with_precision("float32") == QUICK
    assert type(QUICK.with_precision("bf16").with_precision("float32")) is EncoderTraining


def test_each_precision_has_its_own_cache_key_and_fingerprint():
    trainings = [QUICK.with_precision(p) for p in ("float32", "tf32", "bf16")]
    assert len({_key_text(t) for t in trainings}) == 3
    assert len({_fingerprint_of(t) for t in trainings}) == 3
    assert '"precision":"bf16"' in _key_text(trainings[2])
    assert "precision='tf32'" in repr(trainings[1].model_config())
    decoder = dataclasses.replace(QUICK, architecture="decoder").with_precision("bf16")
    assert decoder.model_config().precision == "bf16"


@pytest.mark.parametrize(
    "make",
    [
        lambda: EncoderConfig().with_precision("fp16"),
        lambda: DecoderConfig().with_precision("fp16"),
        lambda: MixedPrecisionEncoderConfig(precision="fp16"),
        lambda: QUICK.with_precision("fp16"),
        lambda: MixedPrecisionTraining(**dataclasses.asdict(QUICK), precision="fp16"),
    ],
)
def test_a_bad_precision_is_one_line(make):
    with pytest.raises(ValueError, match=r"^precision must be one of \('float32', 'tf32', "
                                         r"'bf16'\), got 'fp16'$"):  # fmt: skip
        make()


@pytest.mark.parametrize("mask", ["none", "queries", "causal"])
def test_fused_attention_is_the_explicit_softmax_to_float32_rounding(mask):
    E, B, m, K, h = 2, 16, 12, 32, 4
    g = torch.Generator().manual_seed(0)
    H = torch.randn(E, B, m, K, generator=g)  # (E, B, m, K)
    W = torch.randn(E, 3 * K, K, generator=g) / K**0.5  # (E, 3K, K)
    b = 0.1 * torch.randn(E, 3 * K, generator=g)  # (E, 3K)
    masks = {
        "none": None,
        "queries": torch.arange(m) >= 9,  # (m,): the last 3 tokens are never attended to
        "causal": torch.ones(m, m, dtype=torch.bool).triu(1),  # (m, m)
    }
    head_mask = torch.tensor([[1.0, 0.0, 1.0, 1.0], [0.0, 1.0, 1.0, 0.0]])  # (E, h)
    explicit = attention_heads(H, W, b, h, masks[mask], head_mask)
    fused = attention_heads(H, W, b, h, masks[mask], head_mask, fused=True)
    # the same Q, K, V; each path rounds the scores (a dot product of length dh) and the
    # weighted sum over m keys: each within (dh + m) u max|V| of the exact value, so they are
    # within twice that of each other (seen: ~3 u max|V|)
    V = (H @ W[:, None, 2 * K :].transpose(-1, -2) + b[:, None, None, 2 * K :]).abs().max()
    tolerance = 2 * (K // h + m) * U32 * V.item()
    torch.testing.assert_close(fused, explicit, rtol=0, atol=tolerance)
    dh = K // h
    assert (fused[1, ..., :dh] == 0).all()  # the head mask still zeroes a head's slice


def _prompts(E: int = 2, batch: int = 64):
    return sample_sparse_regression(
        (E, batch), SparseSetting(6, 2, 0.1), 9, q=3, generator=torch.Generator().manual_seed(0)
    )  # fmt: skip


@pytest.mark.parametrize("architecture", ["encoder", "decoder"])
def test_bf16_computes_under_autocast_with_float32_weights_gradients_and_prediction(architecture):
    if architecture == "encoder":
        config = EncoderConfig(d=6, d_hid=32, heads=4, layers=3, ensemble=2, mask_queries=True)
        Z, n = encoder_tokens(_prompts()), 9  # (E, B, 12, 7)
    else:
        config = DecoderConfig(d=6, d_hid=32, heads=4, layers=3, positions=24, ensemble=2)
        Z, n = decoder_tokens(_prompts()), 9  # (E, B, 24, 6)
    exact = config.build([0, 1])(Z, n)
    model = config.with_precision("bf16").build([0, 1])
    out = model(Z, n)
    out.square().sum().backward()
    assert out.dtype == torch.float32
    assert all(p.dtype == p.grad.dtype == torch.float32 for p in model.parameters())
    # every matrix product rounds its inputs to bf16 (relative u each): over 3 blocks of a few
    # products each, the prediction's relative error stays within a few u per block; 2 (layers
    # + 1) u bounds it with room (seen: ~1 u), and it is far above float32's rounding
    error = ((out - exact).norm() / exact.norm()).item()
    assert 100 * U32 < error < 2 * (config.layers + 1) * U_BF16


@pytest.mark.parametrize("config", [EncoderConfig(d=6, d_hid=8, heads=2, layers=1),
                                    DecoderConfig(d=6, d_hid=8, heads=2, layers=1, positions=24)])
def test_tf32_is_refused_on_the_cpu(config):
    model = config.with_precision("tf32").build([0])
    tokens = encoder_tokens if isinstance(config, EncoderConfig) else decoder_tokens
    with pytest.raises(ValueError, match=r"^precision 'tf32' needs a CUDA device .* got cpu;"):
        model(tokens(_prompts(1, 4)), 9)


def test_the_tf32_hook_holds_tf32_for_that_backward_only():
    matmul = torch.backends.cuda.matmul
    seen = []

    class Record(torch.autograd.Function):  # records the setting when the backward reaches it
        @staticmethod
        def forward(ctx, x):
            return x.clone()

        @staticmethod
        def backward(ctx, grad):
            seen.append(matmul.fp32_precision)
            return grad

    before = matmul.fp32_precision
    x = torch.ones(3, requires_grad=True)
    out = precision_output(Record.apply(x) * 2.0, "tf32", torch.float32)
    assert matmul.fp32_precision == before  # the forward leaves it as it was
    out.sum().backward()
    assert seen == ["tf32"] and matmul.fp32_precision == before


def test_a_bf16_training_trains_in_bf16_and_is_evaluated_in_float32():
    training = EncoderTraining(d=4, s=2, n=6, q=2, d_hid=8, heads=2, layers=2, sigmas=(0.1,),
                               lr=1e-3, steps=20, batch=8, log_every=10, validation_batch=16)
    exact, fast = train_encoders(training), train_encoders(training.with_precision("bf16"))
    assert fast.model().config == training.model_config()  # float32, the plain config
    differences = [np.abs(exact.state[k] - fast.state[k]).max() for k in exact.state]
    # the same init and prompts; bf16's rounding moves 20 Adam steps of lr 1e-3 (each at most
    # lr per weight: 0.02 in all) by a fraction of that
    assert 0 < max(differences) < 20 * 1e-3
