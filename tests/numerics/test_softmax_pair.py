"""numerics._he2025.softmax_pair: the softmax pair (5.2) built as MultiHeadAttention models computes
the two attention forms written out here in numpy, and its gap to the linear head converges like
eps^2 (He et al. §5.1, reference §HE-5.1-SM2LIN)."""

import numpy as np
import pytest
from icl_verify.numerics import pair_gap_expansion, pair_roundoff_bounds, softmax_pair_gaps

D, L, B = 6, 40, 8


@pytest.fixture(scope="module")
def head_and_prompts():
    rng = np.random.default_rng(0)
    KQ, OV = rng.standard_normal((2, D, D)) / np.sqrt(D)  # (D, D) each
    Z = rng.standard_normal((B, D, L + 1))  # (B, D, L+1), N(0, 1) tokens
    return KQ, OV, Z


def _numpy_gap(KQ, OV, Z, eps):
    """pair(eps) - linear at the query, (B, D): scores v_i = z_i^T KQ z_q over the L context
    tokens; linear weights v_i / L; softmax heads softmax(±eps v) with values ±OV z_i / (2 eps)."""
    context, query = Z[..., :-1], Z[..., -1]  # (B, D, L), (B, D)
    v = np.einsum("bil,ij,bj->bl", context, KQ, query)  # (B, L)
    linear = np.einsum("ij,bjl,bl->bi", OV, context, v / L)

    def softmax(s):
        w = np.exp(s - s.max(-1, keepdims=True))
        return w / w.sum(-1, keepdims=True)

    difference = softmax(eps * v) - softmax(-eps * v)  # (B, L)
    pair = np.einsum("ij,bjl,bl->bi", OV, context, difference) / (2 * eps)
    return pair - linear


def test_the_models_compute_the_two_attention_forms(head_and_prompts):
    KQ, OV, Z = head_and_prompts
    eps = [1e-1, 1e-2, 1e-3]
    gaps = softmax_pair_gaps(KQ, OV, Z, eps)
    assert gaps.shape == (3, B, D) and gaps.dtype == np.float64
    # float64 rounding: the softmax weights (~1/L) carry a relative error of a few ulp, which
    # the 1/(2 eps) of the pair's values amplifies: |error| <~ 1e-15 / eps * |OV| |z|, with
    # |OV z| ~ sqrt(D) here; the bound below is that times 10.
    for k, e in enumerate(eps):
        expected = _numpy_gap(KQ, OV, Z, e)
        np.testing.assert_allclose(gaps[k], expected, rtol=0, atol=1e-14 * np.sqrt(D) / e)


def test_the_gap_is_cauchy_with_order_two_in_eps(head_and_prompts):
    # gap(eps) = -centring + eps^2 N + O(eps^4), so |gap(eps) - gap(eps/2)| = (3/4) eps^2 |N| +
    # O(eps^4): its fitted log-log slope over eps in 1e-2..1.25e-3 is 2 (within 0.1).
    KQ, OV, Z = head_and_prompts
    eps = 1e-2 * 2.0 ** -np.arange(5)  # 1e-2 .. 6.25e-4
    gaps = softmax_pair_gaps(KQ, OV, Z, eps)
    steps = np.sqrt(((gaps[:-1] - gaps[1:]) ** 2).mean(axis=(1, 2)))  # RMS over prompts, D
    slope = np.polyfit(np.log(eps[:-1]), np.log(steps), 1)[0]
    assert abs(slope - 2) < 0.1, slope
    # and the limit is minus the centring term OV zbar zbar^T KQ z_q, to O(eps^2)
    zbar = Z[..., :-1].mean(-1)  # (B, D)
    centring = np.einsum("ij,bj,bk,kl,bl->bi", OV, zbar, zbar, KQ, Z[..., -1])
    assert np.abs(gaps[-1] + centring).max() < 4 * steps[-1]


def _centring(KQ, OV, Z):
    zbar = Z[..., :-1].mean(-1)  # (B, D)
    return np.einsum("ij,bj,bk,kl,bl->bi", OV, zbar, zbar, KQ, Z[..., -1])


def test_the_expansion_recovers_the_centring_term_its_order_and_a_finite_next_term(
    head_and_prompts,
):
    # gap(eps) = -centring + eps^2 N + O(eps^4): Richardson from the two smallest eps leaves
    # O(eps^4), within the bound (distance to the next pair's extrapolation) plus roundoff
    # (pair_roundoff_bounds); the residual after the limit falls like eps^2 (slope 2), and the
    # eps^2 coefficient agrees with (gap - limit) / eps^2 at the smallest eps to O(eps^2).
    KQ, OV, Z = head_and_prompts
    eps = np.geomspace(1e-2, 3e-4, 8)
    expansion = pair_gap_expansion(KQ, OV, Z, eps)
    roundoff, next_roundoff = pair_roundoff_bounds(OV, [Z], eps)
    assert expansion.limit.shape == expansion.next_term.shape == (B, D)
    error = np.abs(expansion.limit + _centring(KQ, OV, Z))
    assert np.all(error <= expansion.limit_bound + roundoff)
    assert abs(expansion.slope - 2) < 0.05 and expansion.slope_se < 0.05
    raw = softmax_pair_gaps(KQ, OV, Z, eps[:1])[0] - expansion.limit  # at eps = 1e-2
    scale = np.abs(expansion.next_term).max()
    np.testing.assert_allclose(raw / eps[0] ** 2, expansion.next_term, atol=1e-2 * scale)
    assert np.all(expansion.next_bound < 1e-2 * scale + next_roundoff)
    assert expansion.residual.shape == expansion.gap.shape == (8,)


def test_on_centred_prompts_the_limit_is_zero_within_the_roundoff_bound(head_and_prompts):
    # zbar = 0 exactly: the limit is 0, and what is left is the extrapolation's O(eps^4) and
    # float64 rounding amplified by 1/eps, both bounded.
    KQ, OV, Z = head_and_prompts
    centred = Z.copy()
    centred[..., :-1] -= Z[..., :-1].mean(axis=-1, keepdims=True)
    eps = np.geomspace(1e-2, 3e-4, 8)
    expansion = pair_gap_expansion(KQ, OV, centred, eps)
    roundoff, next_roundoff = pair_roundoff_bounds(OV, [centred], eps)
    assert np.all(np.abs(expansion.limit) <= expansion.limit_bound + roundoff)
    assert 1e-14 < roundoff < 1e-9  # (L + D) u ||OV|| max||z|| / eps, eps = 3e-4
    # Richardson's weights depend on eps ratios only: halving every eps doubles the per-gap
    # error (1/eps) and multiplies the next term's (1/eps^3) by 8
    finer, next_finer = pair_roundoff_bounds(OV, [centred], eps / 2)
    assert finer == pytest.approx(2 * roundoff, rel=1e-12)
    assert next_finer == pytest.approx(8 * next_roundoff, rel=1e-12)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((np.eye(3), np.eye(2), np.zeros((1, 3, 4)), [0.1]), "KQ and OV must both have shape"),
        ((np.eye(3), np.eye(3), np.zeros((1, 2, 4)), [0.1]), r"Z must have shape \(B, 3, L\+1\)"),
        ((np.eye(3), np.eye(3), np.zeros((1, 3, 1)), [0.1]), "Z must have shape"),
        ((np.eye(3), np.eye(3), np.zeros((1, 3, 4)), [0.0]), "eps must be a 1-D sequence"),
        ((np.eye(3), np.eye(3), np.zeros((1, 3, 4)), 0.1), "eps must be a 1-D sequence"),
    ],
)
def test_bad_arguments_are_refused_in_one_line(args, message):
    with pytest.raises(ValueError, match=message):
        softmax_pair_gaps(*args)
