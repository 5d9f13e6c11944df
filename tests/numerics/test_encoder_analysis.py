"""numerics._chen2024.encoder_analysis: head importance by masking, App. B's aggregate, linear
probes."""

import numpy as np
import pytest
import torch
from icl_verify.numerics import (
    Encoder,
    EncoderConfig,
    effective_heads,
    embed,
    encoder_tokens,
    fit_probe,
    head_importance,
    preprocess_then_gd_transformer,
    probe_excess_risks,
    sample_sparse_regression,
    sorted_average,
)

from icl_verify.settings import SparseSetting

D, N = 5, 8


def _prompts(shape, seed: int):
    return sample_sparse_regression(
        shape, SparseSetting(D, 2, 0.1), N, q=1, generator=torch.Generator().manual_seed(seed),
        dtype=torch.float64
    )


def test_a_head_that_writes_nothing_has_zero_importance():
    config = EncoderConfig(d=D, d_hid=12, heads=3, layers=2, ensemble=2)
    model = Encoder(config, [0, 1]).double()
    with torch.no_grad():  # member 0: head 2 of layer 1 reaches W_O through zero columns
        model.W_O[0, 0, :, 8:12] = 0.0
    prompts = _prompts((2, 256), seed=0)
    clean = (prompts.X_query[..., 0, :] * prompts.w_star).sum(-1)  # (E, B): x_q^T w*
    result = head_importance(model, encoder_tokens(prompts), N, clean)
    assert result.delta[0, 0, 2] == 0.0 and result.delta_se[0, 0, 2] == 0.0
    assert result.delta[1, 0, 2] != 0.0  # the other member's head does write
    np.testing.assert_allclose(np.nansum(result.weights, axis=-1), 1.0, rtol=1e-12)
    assert result.intact.shape == (2,)


def test_sorted_average_and_effective_heads_of_the_papers_two_patterns():
    flat = np.full((1, 4), 0.25)  # layer 1: every head matters
    one = np.array([[0.0, 1.0, 0.0, 0.0]])  # a later layer: one head
    models = np.stack([np.concatenate([flat, one]), np.concatenate([flat, one[:, ::-1]])])
    average = sorted_average(models)  # the dominant head lands in column 0 for both models
    np.testing.assert_array_equal(average, [[0.25] * 4, [1.0, 0.0, 0.0, 0.0]])
    np.testing.assert_array_equal(effective_heads(average), [4.0, 1.0])


def test_a_probe_recovers_the_constructed_networks_read_out():
    # Chen et al.'s preprocess-then-GD network (issue 9): its prediction is W_O applied to the
    # last layer's query token, a fixed linear map, so the probe on that token reproduces it on
    # new prompts up to least squares' rounding: relative RMS error <= K kappa u (Higham §20,
    # SVD-based least squares, K = 3d dimensions, kappa the centred states' condition number on
    # their range), while after fewer layers the prediction is out of a linear probe's reach.
    d = D
    model = preprocess_then_gd_transformer(d, N, eta=0.02, t=2)
    fit, new = _prompts(400, seed=1), _prompts(400, seed=2)
    states = [H[..., N] for H in model.hidden_states(embed(fit), N)]  # (B, 3d) query tokens
    targets = model.forward(embed(fit), N)[..., N]
    new_states = [H[..., N] for H in model.hidden_states(embed(new), N)]
    new_targets = model.forward(embed(new), N)[..., N]
    risks, ses = probe_excess_risks(states, targets, new_states, new_targets, lam=0.0)
    last = states[-1] - states[-1].mean(dim=0)
    singular = torch.linalg.svdvals(last)
    singular = singular[singular > singular[0] * 1e-12]
    kappa = float(singular[0] / singular[-1])
    bound = 3 * d * kappa * np.finfo(np.float64).eps
    assert np.sqrt(risks[-1] / new_targets.var().item()) <= bound
    assert risks[0] > 0.5 * new_targets.var().item()  # the embedding alone: no prediction yet
    assert ses.shape == risks.shape == (len(model.layers) + 1,)


def test_bad_lam_one_line():
    with pytest.raises(ValueError, match=r"^lam must be a number >= 0, got -1$"):
        fit_probe(torch.zeros(3, 2), torch.zeros(3), lam=-1)
    with pytest.raises(ValueError, match=r"^lam must be a number >= 0, got nan$"):
        fit_probe(torch.zeros(3, 2), torch.zeros(3), lam=float("nan"))
