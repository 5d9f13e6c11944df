"""Normalised activations (He et al. §5.2) as attention: a spec computes the f it names, tiny
ensembles train with it and are rebuilt with it, and a checkpoint names its activation."""

import dataclasses

import numpy as np
import pytest
import torch
from icl_verify.numerics import (
    AttentionConfig,
    EnsembleTraining,
    LinearRegressionTask,
    MultiHeadAttention,
    TrainConfig,
    TrainedEnsemble,
    embed,
    sample_linear_regression,
    train,
    train_ensemble,
)
from torch import nn

from icl_verify.settings import Setting

D_COV, L = 3, 9


def _prompts(seed=0):
    g = torch.Generator().manual_seed(seed)
    return sample_linear_regression(
        (2, 5), Setting(D_COV, L, 0.1), generator=g, dtype=torch.float64
    )


def _model(attention) -> MultiHeadAttention:
    config = AttentionConfig(d=D_COV, heads=3, ensemble=2, attention=attention, train_length=L)
    return MultiHeadAttention(config, seeds=[10, 11]).double()


@pytest.mark.parametrize(
    ("spec", "f"),
    [
        ("tanh", lambda s: 1 + torch.tanh(s)),
        ("elu:0.5", lambda s: nn.functional.elu(0.5 * s) + 1),
        ("quadratic:0.8", lambda s: (1 + 0.8 * s) ** 2),
        ("f:1 + x + x**2/2", lambda s: 1 + s + s**2 / 2),
        ("softmax", torch.exp),
    ],
)
def test_a_spec_computes_the_activation_it_names(spec, f):
    # The spec's f comes from its sympy expression (lambdify); the callable is written here.
    # Same weights, same prompts, float64: equal up to rounding (a few ulp of O(1) outputs).
    Z = embed(_prompts())
    by_spec, by_callable = _model(spec), _model(f)
    torch.testing.assert_close(by_spec(Z), by_callable(Z), rtol=0, atol=1e-13)
    torch.testing.assert_close(
        by_spec.forward_sequence(Z), by_callable.forward_sequence(Z), rtol=0, atol=1e-13
    )


def test_a_constant_f_is_uniform_attention():
    # f = 1: every context token weighs 1/L, so a head with OV last row (0, .., 0, mu) and any
    # KQ predicts mu * ybar.
    mu = 1.7
    OV = torch.zeros(1, 1, D_COV + 1, D_COV + 1, dtype=torch.float64)
    OV[..., -1, -1] = mu
    KQ = torch.randn(1, 1, D_COV + 1, D_COV + 1, generator=torch.Generator().manual_seed(2))
    model = MultiHeadAttention.from_circuits(KQ, OV, "f:1")
    prompts = _prompts()
    torch.testing.assert_close(
        model(embed(prompts)[:1]), mu * prompts.y[:1].mean(-1), rtol=0, atol=1e-14
    )


def test_specs_are_stored_normalised_and_bad_ones_refused_in_one_line():
    assert AttentionConfig(attention=" elu:.5 ").attention == "elu:0.5"
    assert AttentionConfig(attention="quadratic:1").attention == "quadratic:1"
    for bad in ("relu", "elu", "quadratic:-1", "f:x + y", 3):
        with pytest.raises(ValueError, match="^attention must be") as error:
            AttentionConfig(attention=bad)
        assert "\n" not in str(error.value)


TINY = dict(d=2, L=8, sigma2=0.1, heads=(1, 2, 2), lr=1e-2, steps=100, batch=64, seed=0,
            log_every=10, checkpoint_every=0, validation_batch=512)  # fmt: skip


@pytest.mark.parametrize("attention", ["tanh", "quadratic:1", "linear"])
def test_tiny_ensembles_train_and_are_rebuilt_with_their_attention(attention):
    ensemble = train_ensemble(EnsembleTraining(**TINY, attention=attention))
    assert ensemble.attention == attention
    # it learns: on the same validation prompts, every member's loss fell (from ~1.1 at the
    # nn.Linear init; the one-step GD optimum of §HE-4.3-RISK is 0.39 at d=2, L=8)
    assert np.all(ensemble.test_loss[-1] < ensemble.test_loss[0] - 0.2)
    # the rebuilt members reproduce the final validation loss the trainer logged (the trainer's
    # validation prompts: seed TrainConfig.validation_seed, float32), up to float32 rounding
    restored = TrainedEnsemble.from_arrays(
        EnsembleTraining(**TINY, attention=attention), ensemble.arrays()
    )
    model = restored.model()
    assert model.config.attention == attention and model.config.train_length == TINY["L"]
    generator = torch.Generator().manual_seed(TrainConfig().validation_seed)
    prompts = sample_linear_regression(512, Setting(2, 8, 0.1), generator=generator)
    Z = embed(prompts)
    with torch.no_grad():
        losses = ((model(Z.expand(3, *Z.shape)) - prompts.y_query) ** 2).mean(dim=1)
    np.testing.assert_allclose(losses.double().numpy(), ensemble.test_loss[-1], rtol=1e-5)


def _train(attention, path, steps, resume=False):
    return train(
        AttentionConfig(d=5, heads=2, attention=attention),
        LinearRegressionTask(5, 8, 0.1),
        TrainConfig(steps=steps, batch=8, validation_batch=16, log_every=2, device="cpu"),
        checkpoint_path=path,
        resume=resume,
        progress=False,
    )


def square(x):
    return (1 + x) ** 2


def test_a_checkpoint_names_its_activation(tmp_path):
    # a callable attention trains and resumes (its fingerprint once crashed the trainer)
    _train(square, tmp_path / "f.pt", 4)
    resumed = _train(square, tmp_path / "f.pt", 6, resume=True)
    assert resumed.history.steps.tolist() == [2, 4, 6]
    # another callable, or another spec, is another run
    with pytest.raises(ValueError, match="holds a different run"):
        _train(lambda x: (1 + 2 * x) ** 2, tmp_path / "f.pt", 6, resume=True)
    _train("tanh", tmp_path / "spec.pt", 4)
    with pytest.raises(ValueError, match="holds a different run"):
        _train("quadratic:1", tmp_path / "spec.pt", 6, resume=True)
    assert _train("tanh", tmp_path / "spec.pt", 6, resume=True).history.steps[-1] == 6


def test_members_with_different_attentions_predict_as_their_own_models():
    """One ensemble with an attention per member equals one model per attention."""
    generator = torch.Generator().manual_seed(3)
    KQ = torch.randn(3, 2, 4, 4, generator=generator, dtype=torch.float64) / 2  # (E, H, D, D)
    OV = torch.randn(3, 2, 4, 4, generator=generator, dtype=torch.float64) / 2
    attentions = ("softmax", "quadratic:0.8", "linear")
    mixed = MultiHeadAttention.from_circuits(KQ, OV, attention=attentions)
    prompts = sample_linear_regression(
        16, Setting(3, 10, 0.1), generator=generator, dtype=torch.float64
    )
    Z = embed(prompts)  # (16, 4, 11)
    together = mixed(Z.expand(3, *Z.shape))  # (3, 16)
    for e, attention in enumerate(attentions):
        alone = MultiHeadAttention.from_circuits(KQ[e : e + 1], OV[e : e + 1], attention=attention)
        torch.testing.assert_close(together[e : e + 1], alone(Z[None]), rtol=0, atol=1e-13)


def test_attention_per_member_must_match_the_ensemble():
    with pytest.raises(ValueError, match="tuple of 2 attention strings"):
        AttentionConfig(ensemble=2, attention=("softmax", "tanh", "linear"))
    assert AttentionConfig(ensemble=2, attention=("tanh", "tanh")).attention == "tanh"


ONE_PER_FAMILY = ("softmax", "tanh", "elu:0.5", "quadratic:0.5")
EIGHT = ("softmax", "tanh", "elu:0.5", "elu:0.8", "elu:1", "quadratic:0.5", "quadratic:0.8",
         "quadratic:1")  # fmt: skip


def _step_operators(attention: tuple[str, ...]) -> int:
    """Operators the profiler records in one forward and backward pass of the ensemble."""
    E = len(attention)
    model = MultiHeadAttention(
        AttentionConfig(d=3, heads=2, ensemble=E, attention=attention), range(E)
    )
    prompts = sample_linear_regression(
        (E, 8), Setting(3, 9, 0.1), generator=torch.Generator().manual_seed(0)
    )
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as profile:
        ((model(embed(prompts)) - prompts.y_query) ** 2).mean(1).sum().backward()
    return len(profile.events())


def test_a_steps_operators_grow_with_the_families_not_with_the_activations():
    # HE-5.2-ACT's ensemble lists its members activation by activation: 8 activations of 4
    # families cost a step the operators of 4 (same E = 8). Each operator is a kernel launch
    # on a GPU, where these small models are launch-bound: one launch set per activation made
    # its paper step 3.5x the softmax ensemble's (one set per family, c a tensor per member).
    two_seeds = tuple(spec for spec in ONE_PER_FAMILY for _ in range(2))
    assert _step_operators(EIGHT) == _step_operators(two_seeds)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_an_ensemble_of_activations_is_its_members_alone_bit_for_bit(dtype):
    # forward and gradients, members of a family with different c in one run (c a tensor: in
    # float64 it must be the spec's number, not its float32 rounding)
    attention = tuple(spec for spec in EIGHT for _ in range(2))
    E = len(attention)
    config = AttentionConfig(d=3, heads=2, ensemble=E, attention=attention, train_length=9)
    model = MultiHeadAttention(config, seeds=range(E)).to(dtype)
    generator = torch.Generator().manual_seed(1)
    prompts = sample_linear_regression(
        (E, 16), Setting(3, 9, 0.1), generator=generator, dtype=dtype
    )
    Z = embed(prompts)
    together = model(Z)
    ((together - prompts.y_query) ** 2).mean(1).sum().backward()
    for e, spec in enumerate(attention):
        alone = MultiHeadAttention(config.members(e, e + 1), [e]).to(dtype)
        prediction = alone(Z[e : e + 1])
        ((prediction - prompts.y_query[e : e + 1]) ** 2).mean(1).sum().backward()
        assert torch.equal(prediction, together[e : e + 1]), spec
        for name in ("W_Q", "W_K", "W_V", "W_O"):
            assert torch.equal(getattr(alone, name).grad, getattr(model, name).grad[e : e + 1])


@pytest.mark.cuda
def test_on_cuda_the_graph_step_of_an_activation_ensemble_is_its_plain_step():
    # HE-5.2-ACT's layout (one family with three c): the c tensors made in the plain warm-up
    # steps are the ones the captured graph reads
    model = AttentionConfig(d=4, heads=2, ensemble=len(EIGHT), attention=EIGHT)
    config = TrainConfig(lr=3e-3, batch=32, steps=40, log_every=10, validation_batch=64,
                         device="cuda", data_streams="shared")  # fmt: skip
    task = LinearRegressionTask(4, 16, 0.1)
    graphed = train(model, task, config, progress=False)
    plain = train(model, task, dataclasses.replace(config, cuda_graph=False), progress=False)
    assert graphed.cuda_graph and not plain.cuda_graph
    for name, value in plain.model.state_dict().items():
        assert torch.equal(graphed.model.state_dict()[name], value), name
    np.testing.assert_array_equal(graphed.history.test_loss, plain.history.test_loss)
