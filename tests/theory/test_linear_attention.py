"""Frozen one-head linear attention at a new prompt length (He et al. 2025, §5.1, §HE-5.1-LENGTH).

Independent sources: a Monte Carlo of the frozen predictor written here with numpy (covariates,
task, noise drawn; coefficient eta_GD*(L)/L summed over L' examples) within 4 standard errors;
brute-force search over integer lengths for the best length; the reference's table (3 digits);
and the sympy derivation, lambdified, against the float64 closed form to 1e-12 relative.
"""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp
from icl_verify.theory import (
    FrozenLinearMinimum,
    Setting,
    frozen_linear_attention_minimum,
    frozen_linear_attention_risk,
    gd_risk,
    optimal_gd,
)
from icl_verify.theory.symbolic import DERIVATIONS, derive_frozen_linear_attention
from icl_verify.theory.symbolic.linear_attention import L_test
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
