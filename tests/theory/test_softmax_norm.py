"""The softmax-norm expansion (Figure 20) against the sympy derivation and a numpy Monte Carlo.

The Monte Carlo draws x_i, x_q in numpy (independent of `numerics`) and uses the exactly known
mean of e^{omega^2 ||x_q||^2} (chi^2 moment generating function, itself checked here) as a
control variate, so that the small 1/L correction is resolved: the relative error of the
leading term must fall as 1/L (fitted order) with the derived coefficient.
"""

import numpy as np
import pytest
import sympy as sp
from icl_verify.theory import (
    conditional_norm_expansion,
    softmax_norm_expansion,
    softmax_norm_regime,
)
from icl_verify.theory._softmax_norm import chi2_mgf
from icl_verify.theory.symbolic import derive_softmax_norm
from icl_verify.theory.symbolic.softmax_norm import u
from icl_verify.theory.symbolic.symbols import L, d, w

OMEGA, D = 0.2, 5
LENGTHS = (20, 40, 80, 160)


def _scaled_norms(omega, d, L, n, rng):
    """n samples of (L ||p||^2, e^{omega^2 ||x_q||^2}), numpy float64."""
    keys = rng.standard_normal((n, L, d))
    query = rng.standard_normal((n, d))
    scores = omega * np.einsum("nld,nd->nl", keys, query)
    weights = np.exp(scores - scores.max(axis=1, keepdims=True))
    p = weights / weights.sum(axis=1, keepdims=True)
    return L * (p**2).sum(axis=1), np.exp(omega**2 * (query**2).sum(axis=1))


@pytest.fixture(scope="module")
def corrections():
    """MC of E[L||p||^2] - M(omega^2) per L with its SE (control variate e^{omega^2 r})."""
    rng = np.random.default_rng(7)
    leading = softmax_norm_expansion(OMEGA, D).leading
    out = []
    for length in LENGTHS:
        norms, limit = _scaled_norms(OMEGA, D, length, 60_000, rng)
        difference = norms - limit  # mean: E[N] - M exactly, since E e^{omega^2 r} = M
        out.append((difference.mean(), difference.std(ddof=1) / np.sqrt(difference.size)))
    return leading, np.array(out)


def test_numeric_coefficients_match_the_sympy_derivation():
    results = derive_softmax_norm().results
    assert derive_softmax_norm().all_checks_passed
    for omega, r in ((0.1, 3.0), (0.3, 7.5)):
        e = conditional_norm_expansion(omega, r)
        point = {u: np.exp(omega**2 * r)}
        assert e.first == pytest.approx(float(results["first_conditional"].subs(point)), rel=1e-12)
        assert e.second == pytest.approx(
            float(results["second_conditional"].subs(point)), rel=1e-12
        )
    mean = sp.lambdify((w, d, L), results["mean"])
    e = softmax_norm_expansion(0.2, 7)
    assert e.value(50, order=2) == pytest.approx(mean(0.2, 7, 50), rel=1e-12)
    assert softmax_norm_regime(0.2, 7, 50) == pytest.approx(
        float(results["regime"].subs({w: 0.2, d: 7, L: 50})), rel=1e-12
    )


def test_chi2_mgf_against_quadrature_and_its_domain():
    from scipy.integrate import quad
    from scipy.stats import chi2

    numeric = quad(lambda r: np.exp(0.1 * r) * chi2.pdf(r, 5), 0, 200, limit=200)[0]
    assert chi2_mgf(0.1, 5) == pytest.approx(numeric, rel=1e-8)
    assert softmax_norm_expansion(0.3, 5).second == np.inf  # needs 12 omega^2 < 1
    with pytest.raises(ValueError, match="^d must be an integer >= 1, got 0$"):
        chi2_mgf(0.1, 0)


def test_leading_error_falls_as_one_over_L_with_the_derived_coefficient(corrections):
    leading, measured = corrections
    expansion = softmax_norm_expansion(OMEGA, D)
    lengths = np.array(LENGTHS, dtype=float)
    # the relative error of the leading term: its fitted order in L is -1
    slope, _ = np.polyfit(np.log(lengths), np.log(-measured[:, 0] / leading), 1)
    assert slope == pytest.approx(-1.0, abs=0.1)
    # and its size is C_1/L within the next term |C_2|/L^2 and 4 SE
    predicted = expansion.first / lengths
    allowed = expansion.next_term(lengths, order=1) + 4 * measured[:, 1]
    assert np.all(np.abs(measured[:, 0] - predicted) <= allowed)
    # the leading term alone is rejected at the smallest L (the check can fail)
    assert abs(measured[0, 0]) > 4 * measured[0, 1]


def test_bad_input_is_one_line():
    with pytest.raises(ValueError, match="^omega must be finite real numbers"):
        softmax_norm_expansion(float("nan"), 5)
    with pytest.raises(ValueError, match="^L must be numbers >= 1"):
        softmax_norm_regime(0.2, 5, 0)
