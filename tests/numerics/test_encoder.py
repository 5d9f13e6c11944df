"""numerics._core.encoder: the multi-layer encoder of Chen, Zhao, Zou (2024) §3, batched over
members."""

import pytest
import torch
from icl_verify.numerics import Encoder, EncoderConfig, encoder_tokens, sample_sparse_regression

from icl_verify.settings import SparseSetting

CONFIG = EncoderConfig(d=6, d_hid=24, heads=4, layers=3, ensemble=3)
N, Q = 9, 3  # labelled examples, queries


def _tokens(E: int, batch: int = 5, seed: int = 0) -> torch.Tensor:
    prompts = sample_sparse_regression(
        (E, batch), SparseSetting(6, 2, 0.1), N, q=Q, generator=torch.Generator().manual_seed(seed),
        dtype=torch.float64
    )  # fmt: skip
    return encoder_tokens(prompts)  # (E, batch, N + Q, 7)


def _model(config: EncoderConfig = CONFIG, seeds=(5, 6, 7)) -> Encoder:
    return Encoder(config, list(seeds)).double()


def test_a_member_computes_what_it_computes_alone():
    Z = _tokens(3)
    together = _model()(Z, N)
    alone = _model(EncoderConfig(d=6, d_hid=24, heads=4, layers=3, ensemble=1), (6,))(Z[1:2], N)
    assert together.shape == (3, 5, Q)
    assert torch.equal(together[1:2], alone)  # the ensemble axis is a batch axis


def test_masking_one_head_zeroes_exactly_that_heads_slice():
    model, Z = _model(), _tokens(3)
    _, states = model(Z, N, hidden=True)
    head_mask = torch.ones(3, CONFIG.layers, CONFIG.heads)
    head_mask[:, 1, 2] = 0.0  # layer 2, head 3 of every member
    intact = model.heads_output(states[1], 1)
    masked = model.heads_output(states[1], 1, head_mask=head_mask)
    dh = CONFIG.head_dim
    assert (masked[..., 2 * dh : 3 * dh] == 0).all()
    assert torch.equal(masked[..., : 2 * dh], intact[..., : 2 * dh])
    assert torch.equal(masked[..., 3 * dh :], intact[..., 3 * dh :])
    # and the model's output changes only from that layer on
    _, masked_states = model(Z, N, head_mask=head_mask, hidden=True)
    assert torch.equal(masked_states[1], states[1]) and not torch.equal(masked_states[2], states[2])


def test_without_positional_encoding_the_order_of_examples_does_not_matter():
    model, Z = _model(), _tokens(3)
    permuted = torch.cat([Z[:, :, torch.randperm(N, generator=torch.Generator().manual_seed(1))],
                          Z[:, :, N:]], dim=2)  # fmt: skip
    # reordering changes only the order of the attention sums: per block <= m u max|H| (m = 12
    # tokens, |H| <= 3.5 after LayerNorm here: ~1e-14), carried through 3 blocks of O(1) gain
    # (weights N(0, 0.02^2), LayerNorm); 1e-12 allows a gain of 10 per block (seen: 6e-17)
    torch.testing.assert_close(model(permuted, N), model(Z, N), rtol=0, atol=1e-12)


def test_the_query_mask_keeps_queries_apart():
    Z = _tokens(3)
    other = Z.clone()
    other[:, :, N + 1 :, :-1] += 1.0  # move every query but the first
    for mask_queries, apart in ((True, True), (False, False)):
        config = EncoderConfig(
            d=6, d_hid=24, heads=4, layers=3, ensemble=3, mask_queries=mask_queries
        )
        model = _model(config)
        first, first_other = model(Z, N)[..., 0], model(other, N)[..., 0]
        assert torch.equal(first, first_other) is apart


def test_hidden_states_per_layer():
    out, states = _model()(_tokens(3), N, hidden=True)
    assert len(states) == CONFIG.layers + 1
    assert all(state.shape == (3, 5, N + Q, CONFIG.d_hid) for state in states)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"d_hid": 30, "heads": 4}, "heads must divide d_hid = 30, got 4"),
        ({"layers": 0}, "layers must be an integer >= 1, got 0"),
        ({"heads": 0}, "heads must be an integer >= 1, got 0"),
        ({"d_ffn": 0}, "d_ffn must be an integer >= 1 or None, got 0"),
    ],
)
def test_bad_architecture_one_line(kwargs, message):
    with pytest.raises(ValueError, match=f"^{message}$"):
        EncoderConfig(**kwargs)


def test_bad_n_one_line():
    with pytest.raises(ValueError, match=r"^n must be in 1\.\.11 \(m = 12 tokens"):
        _model()(_tokens(3), 12)
