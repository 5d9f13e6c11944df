"""numerics._core.circuits: each pattern measure on hand-built circuits, against values by hand."""

import math

import numpy as np
import pytest
import torch
from icl_verify.numerics import (
    AttentionConfig,
    MultiHeadAttention,
    kq_circuit,
    omega_mu,
    ov_circuit,
    summarize_circuits,
)

from icl_verify.heads import DUMMY_THRESHOLD

d = 3


def _circuits(omegas, mus):
    """KQ_h = omega_h I on KQ11 and OV_h = mu_h at ov22, nothing else; shapes (1, H, d+1, d+1)."""
    H = len(omegas)
    KQ = torch.zeros(1, H, d + 1, d + 1, dtype=torch.float64)
    OV = torch.zeros(1, H, d + 1, d + 1, dtype=torch.float64)
    for h, (w, m) in enumerate(zip(omegas, mus, strict=True)):
        KQ[0, h, :d, :d] = w * torch.eye(d)
        OV[0, h, d, d] = m
    return KQ, OV


def test_block_measures_by_hand():
    KQ, OV = _circuits([0.0], [2.0])
    KQ[0, 0, :d, :d] = torch.diag(torch.tensor([0.1, 0.2, 0.3]))
    KQ[0, 0, 0, 1] = 0.04  # one off-diagonal entry of KQ11
    KQ[0, 0, d, 2] = 0.03  # one entry of kq21
    KQ[0, 0, 1, d] = 5.0  # last column: never used, must not count
    OV[0, 0, d, 0] = 0.02  # one entry of ov21
    OV[0, 0, 0, 0] = 7.0  # first d rows of OV: never used
    (s,) = summarize_circuits(KQ, OV, d)
    diag = np.array([0.1, 0.2, 0.3])
    assert s.omega[0] == pytest.approx(0.2)
    assert s.diagonality[0] == pytest.approx((diag**2).sum() / ((diag**2).sum() + 0.04**2))
    assert s.diagonal_spread[0] == pytest.approx(diag.std() / 0.2)
    # RMS over the d*d - d off-diagonal KQ11 entries and the d kq21 entries, over RMS(diag)
    off_rms = math.sqrt((0.04**2 + 0.03**2) / (d * d))
    assert s.kq_off_pattern[0] == pytest.approx(off_rms / math.sqrt((diag**2).mean()))
    assert s.ov_off_pattern[0] == pytest.approx(math.sqrt(0.02**2 / d) / 2.0)


def test_head_level_measures_by_hand():
    # products |omega mu|: 1.0, just under and just over the dummy threshold (5% of the largest)
    omegas = [0.5, 0.01, -0.1]
    mus = [2.0, -0.99 * DUMMY_THRESHOLD * 100, -1.01 * DUMMY_THRESHOLD * 10]
    (s,) = summarize_circuits(*_circuits(omegas, mus), d)
    assert s.dummy.tolist() == [False, True, False]
    assert s.sign_matching  # the mismatched head (omega > 0, mu < 0) is dummy
    assert s.zero_sum_ratio == pytest.approx(abs(sum(mus)) / sum(abs(m) for m in mus))
    assert s.kq_homogeneity == pytest.approx(0.5 / 0.1)  # over the two non-dummy heads

    (mismatch,) = summarize_circuits(*_circuits([0.2, -0.2], [1.0, 1.0]), d)
    assert not mismatch.sign_matching and mismatch.zero_sum_ratio == 1.0


def test_circuits_follow_the_stated_products_and_padding():
    model = MultiHeadAttention(AttentionConfig(d=d, heads=(1, 2), ensemble=2), seeds=[0, 1])
    torch.testing.assert_close(model.KQ, kq_circuit(model.W_K, model.W_Q))
    torch.testing.assert_close(model.KQ, model.W_K.mT @ model.W_Q / 2.0)  # sqrt(D) = 2
    torch.testing.assert_close(model.OV[1], model.W_O[1] @ model.W_V[1])
    torch.testing.assert_close(ov_circuit(model.W_O, model.W_V)[0, 0], model.OV[0, 0])
    summaries = summarize_circuits(model.KQ, model.OV, d, model.config.heads)
    assert [len(s.omega) for s in summaries] == [1, 2]
    omega, mu = omega_mu(model.KQ, model.OV, d)
    assert np.allclose(summaries[1].mu, mu[1].detach().double().numpy())
    assert np.allclose(summaries[0].omega, omega[0, :1].detach().double().numpy())
