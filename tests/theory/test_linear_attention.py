"""Linear attention in He et al. 2025, §5.1: frozen at a new length, and emulated by softmax pairs.

Frozen one-head linear attention (§HE-5.1-LENGTH). Independent sources: a Monte Carlo of the
frozen predictor written here with numpy (covariates, task, noise drawn; coefficient
eta_GD*(L)/L summed over L' examples) within 4 standard errors; brute-force search over integer
lengths for the best length; the reference's table (3 digits); and the sympy derivation,
lambdified, against the float64 closed form to 1e-12 relative.

The softmax pair (5.2) (§HE-5.1-SM2LIN): the pair's output computed here with numpy softmaxes
in float64 at eps = 1e-2..1e-3, against the expansion's terms; the fitted log-log slopes of the
remainders must be the orders of the expansion, 4 and 2.
"""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp
from icl_verify.theory import (
    FrozenLinearMinimum,
    Setting,
    SoftmaxPairExpansion,
    frozen_linear_attention_minimum,
    frozen_linear_attention_risk,
    gd_risk,
    optimal_gd,
    softmax_pair_expansion,
)
from icl_verify.theory.symbolic import (
    DERIVATIONS,
    derive_frozen_linear_attention,
    derive_softmax_pair,
)
from icl_verify.theory.symbolic.linear_attention import L_test, m2, m3, u
from icl_verify.theory.symbolic.symbols import L, d, sigma2

SETTING = Setting(d=5, L=40, sigma2=0.1)


def frozen_predictor_risk(setting: Setting, test_length: int, prompts: int, seed: int):
    """MC mean and SE of (y_hat - y_q)^2 for y_hat = (eta*(L)/L) sum_{i<=L'} y_i x_i^T x_q.

    eta*(L) = L/(L + D + 1), with D = d (1 + sigma2) written out here.
    """
    d_, L_, s2 = setting.d, setting.L, setting.sigma2
    coefficient = (L_ / (L_ + d_ * (1 + s2) + 1)) / L_
    rng = np.random.default_rng(seed)
    errors = []
    for chunk in np.array_split(np.arange(prompts), 20):
        n = chunk.size
        x = rng.standard_normal((n, test_length, d_))  # (n, L', d)
        x_q = rng.standard_normal((n, d_))  # (n, d)
        beta = rng.standard_normal((n, d_)) / np.sqrt(d_)  # (n, d), E||beta||^2 = 1
        y = np.einsum("nld,nd->nl", x, beta) + np.sqrt(s2) * rng.standard_normal((n, test_length))
        y_q = np.einsum("nd,nd->n", x_q, beta) + np.sqrt(s2) * rng.standard_normal(n)
        y_hat = coefficient * np.einsum("nl,nld,nd->n", y, x, x_q)  # (n,)
        errors.append((y_hat - y_q) ** 2)
    errors = np.concatenate(errors)
    return errors.mean(), errors.std(ddof=1) / np.sqrt(prompts)


@pytest.mark.parametrize("test_length, reference", [(20, 0.485), (40, 0.240), (100, 1.724)])
def test_risk_matches_monte_carlo_of_the_frozen_predictor(test_length, reference):
    mean, se = frozen_predictor_risk(SETTING, test_length, 200_000, seed=test_length)
    predicted = frozen_linear_attention_risk(test_length, SETTING)
    print(f"L'={test_length}: MC {mean:.4f} ± {se:.4f}, formula {predicted:.4f}")
    assert abs(mean - predicted) <= 4 * se
    assert round(predicted, 3) == reference  # the reference's table, 3 digits


def test_reference_table_row():
    risks = frozen_linear_attention_risk(np.array([10, 20, 30, 40, 60, 80, 100]), SETTING)
    assert risks.round(3).tolist() == [0.746, 0.485, 0.316, 0.240, 0.365, 0.860, 1.724]


@pytest.mark.parametrize("d_, L_, s2", [(5, 40, 0.1), (2, 3, 0.0), (20, 160, 1.0)])
def test_frozen_model_is_vanilla_gd_over_the_test_examples(d_, L_, s2):
    # coefficient eta*(L)/L on L' examples = step L' eta*(L)/L at length L' (the other theory form)
    setting = Setting(d_, L_, s2)
    eta_star = optimal_gd(setting).eta
    for length in (1, L_, 3 * L_ + 7):
        expected = float(gd_risk(length * eta_star / L_, Setting(d_, length, s2)))
        assert frozen_linear_attention_risk(length, setting) == pytest.approx(expected, rel=1e-13)
    # at the training length it is the tuned GD risk
    assert frozen_linear_attention_risk(L_, setting) == pytest.approx(
        optimal_gd(setting).risk, rel=1e-13
    )


@pytest.mark.parametrize("d_, L_, s2", [(5, 40, 0.1), (2, 3, 0.0), (1, 1, 0.0), (30, 20, 2.5)])
def test_minimum_is_the_best_integer_length(d_, L_, s2):
    setting = Setting(d_, L_, s2)
    found = frozen_linear_attention_minimum(setting)
    assert isinstance(found, FrozenLinearMinimum)
    lengths = np.arange(1, 3 * L_ + 200)
    risks = frozen_linear_attention_risk(lengths, setting)
    assert (
        found.best_length == lengths[np.argmin(risks)]
    )  # argmin takes the first (smaller) on ties
    assert found.risk == risks.min()
    assert found.length == pytest.approx(L_ + (d_ * (1 + s2) + 1) / 2, rel=1e-15)
    assert abs(found.best_length - found.length) <= 0.5


def test_minimum_at_the_reference_setting():
    found = frozen_linear_attention_minimum(SETTING)
    assert (found.length, found.best_length) == (43.25, 43)


def test_tie_between_two_lengths_takes_the_smaller():
    # d = 2, sigma2 = 0: vertex L + 3/2, equal risk at L + 1 and L + 2 (exact in float64)
    setting = Setting(2, 10, 0.0)
    risks = frozen_linear_attention_risk([11, 12], setting)
    assert risks[0] == risks[1]
    assert frozen_linear_attention_minimum(setting).best_length == 11


def test_return_types_and_shapes():
    assert type(frozen_linear_attention_risk(40, SETTING)) is float
    assert type(frozen_linear_attention_risk(np.int64(40), SETTING)) is float
    grid = np.arange(1, 13).reshape(3, 4)
    risks = frozen_linear_attention_risk(grid, SETTING)
    assert risks.shape == (3, 4) and risks.dtype == np.float64
    assert frozen_linear_attention_risk(100_000, SETTING) > 0


@pytest.mark.parametrize(
    "bad",
    [0, -3, 100_001, 40.0, float("nan"), True, np.bool_(True), [1, 0], np.array([40.0]), "40"],
    ids=repr,
)
def test_bad_lengths_are_refused_in_one_line(bad):
    with pytest.raises(ValueError) as error:
        frozen_linear_attention_risk(bad, SETTING)
    message = str(error.value)
    assert message.startswith("L_test must be integers in 1..100000, got ")
    assert "\n" not in message


def test_derivation_agrees_with_the_closed_form():
    derivation = derive_frozen_linear_attention()
    assert derivation.all_checks_passed
    assert DERIVATIONS["frozen_linear_attention"].function is derive_frozen_linear_attention
    risk = sp.lambdify((d, L, sigma2, L_test), derivation.results["frozen_risk"])
    argmin = sp.lambdify((d, L, sigma2), derivation.results["argmin"])
    rng = np.random.default_rng(3)
    for _ in range(20):
        setting = Setting(int(rng.integers(1, 50)), int(rng.integers(1, 500)), rng.uniform(0, 3))
        length = int(rng.integers(1, 2000))
        expected = frozen_linear_attention_risk(length, setting)
        # the closed form is a difference of O(1) terms: compare on the scale 1 + sigma2
        scale = 1 + setting.sigma2 + length**2 / (setting.L + setting.D + 1) ** 2
        got = risk(setting.d, setting.L, setting.sigma2, length)
        assert abs(got - expected) <= 1e-12 * scale
        assert argmin(setting.d, setting.L, setting.sigma2) == pytest.approx(
            frozen_linear_attention_minimum(setting).length, rel=1e-14
        )
    gamma_star = derivation.results["gamma_star"].subs({d: 5, L: 40, sigma2: sp.Rational(1, 10)})
    assert float(gamma_star) == pytest.approx(optimal_gd(SETTING).eta, rel=1e-15)


# ---- (5.2): two softmax heads per linear head ----


def random_head_and_prompts(seed: int, batch: int = 50, size: int = 6, length: int = 40):
    """KQ, OV (D, D) with entries N(0, 1/D) and prompts Z (B, D, L + 1) with N(0, 1) tokens."""
    rng = np.random.default_rng(seed)
    kq = rng.standard_normal((size, size)) / np.sqrt(size)
    ov = rng.standard_normal((size, size)) / np.sqrt(size)
    return kq, ov, rng.standard_normal((batch, size, length + 1))


def softmax_pair(kq, ov, prompts, eps):
    """Summed output of the heads (eps KQ, OV/(2 eps)), (-eps KQ, -OV/(2 eps)) over the context."""
    context, query = prompts[:, :, :-1], prompts[:, :, -1]  # (B, D, L), (B, D)
    scores = np.einsum("bdl,de,be->bl", context, kq, query)  # (B, L)
    output = 0.0
    for sign in (1.0, -1.0):
        logits = sign * eps * scores
        weights = np.exp(logits - logits.max(axis=1, keepdims=True))
        weights /= weights.sum(axis=1, keepdims=True)  # (B, L)
        output = output + sign / (2 * eps) * np.einsum("bdl,bl->bd", context, weights) @ ov.T
    return output  # (B, D)


@pytest.mark.parametrize("seed", [0, 1])
def test_pair_minus_expansion_is_order_eps4_and_the_linear_part_order_eps2(seed):
    kq, ov, prompts = random_head_and_prompts(seed)
    terms = softmax_pair_expansion(kq, ov, prompts)
    assert isinstance(terms, SoftmaxPairExpansion)
    epsilons = np.geomspace(1e-2, 1e-3, 6)
    fourth, second = [], []
    for eps in epsilons:
        pair = softmax_pair(kq, ov, prompts, eps)
        fourth.append(
            np.max(np.abs(pair - (terms.linear - terms.centring + eps**2 * terms.next_term)))
        )
        second.append(np.max(np.abs(pair - terms.linear + terms.centring)))
    slope4 = np.polyfit(np.log(epsilons), np.log(fourth), 1)[0]
    slope2 = np.polyfit(np.log(epsilons), np.log(second), 1)[0]
    print(f"seed {seed}: slopes {slope4:.4f} (eps^4 remainder), {slope2:.4f} (eps^2 remainder)")
    # Next terms are relatively O(eps^2) <= 1e-4 x (a constant ~ score^2 ~ 10) over the range, so
    # the slopes are biased by < 1e-2; rounding (~1e-16 |OV z| L / eps ~ 1e-12) stays below the
    # smallest eps^4 remainder (~3e-11).
    assert abs(slope4 - 4) < 0.02
    assert abs(slope2 - 2) < 0.01
    ratios = np.array(fourth) / epsilons**4
    assert ratios.max() / ratios.min() < 1.01  # bounded: the eps^4 coefficient, seen six times


def test_expansion_terms_by_their_definitions_and_the_symbolic_weight():
    kq, ov, prompts = random_head_and_prompts(2, batch=3, size=3, length=5)
    terms = softmax_pair_expansion(kq, ov, prompts)
    weight = sp.lambdify((u, m2, m3), derive_softmax_pair().results["next_term_weight"])
    for b, prompt in enumerate(prompts):
        context, query = prompt[:, :-1], prompt[:, -1]
        scores = np.array([z @ kq @ query for z in context.T])
        centred = scores - scores.mean()
        second, third = np.mean(centred**2), np.mean(centred**3)
        zbar = context.mean(axis=1)
        linear = ov @ sum(z * (z @ kq @ query) for z in context.T) / 5
        np.testing.assert_allclose(terms.linear[b], linear, rtol=1e-13, atol=1e-14)
        np.testing.assert_allclose(terms.centring[b], ov @ zbar * (zbar @ kq @ query), atol=1e-14)
        next_term = (
            ov
            @ sum(z * weight(c, second, third) for z, c in zip(context.T, centred, strict=True))
            / 5
        )
        np.testing.assert_allclose(terms.next_term[b], next_term, rtol=1e-12, atol=1e-14)


def test_one_prompt_drops_the_batch_axis_and_one_key_gives_zero():
    kq, ov, prompts = random_head_and_prompts(3, batch=2, size=4, length=7)
    batched = softmax_pair_expansion(kq, ov, prompts)
    single = softmax_pair_expansion(kq, ov, prompts[1])
    for name in ("linear", "centring", "next_term"):
        assert getattr(single, name).shape == (4,)
        assert getattr(batched, name).shape == (2, 4)
        # the same sums in another order: rounding of ~L terms
        np.testing.assert_allclose(
            getattr(single, name), getattr(batched, name)[1], rtol=1e-13, atol=1e-14
        )
    # L = 1: one key has weight 1 in both heads, so the pair outputs 0 at every eps
    one_key = softmax_pair_expansion(kq, ov, prompts[:, :, :2])
    np.testing.assert_allclose(one_key.linear - one_key.centring, 0, atol=1e-14)
    np.testing.assert_allclose(one_key.next_term, 0, atol=1e-14)


@pytest.mark.parametrize(
    "kq_shape, ov_shape, z, name",
    [
        ((4, 4), (4, 4), np.ones(5), "Z"),
        ((4, 4), (4, 4), np.ones((4, 1)), "Z"),
        ((4, 4), (4, 4), np.full((4, 3), np.nan), "Z"),
        ((3, 4), (4, 4), np.ones((2, 4, 3)), "KQ"),
        ((4, 4), (4, 5), np.ones((2, 4, 3)), "OV"),
    ],
)
def test_bad_pair_inputs_are_refused_in_one_line(kq_shape, ov_shape, z, name):
    with pytest.raises(ValueError) as error:
        softmax_pair_expansion(np.zeros(kq_shape), np.zeros(ov_shape), z)
    assert str(error.value).startswith(f"{name} must be a finite")
    assert "\n" not in str(error.value)


def test_non_finite_circuit_is_refused():
    with pytest.raises(ValueError, match="^OV must be .* with non-finite entries$"):
        softmax_pair_expansion(np.eye(2), np.array([[1.0, np.inf], [0, 1]]), np.ones((2, 3)))


def test_softmax_pair_derivation_holds():
    derivation = derive_softmax_pair()
    assert derivation.all_checks_passed and len(derivation.checks) >= 4
    assert DERIVATIONS["softmax_pair"].function is derive_softmax_pair
