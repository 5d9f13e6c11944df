"""The hand-written closed forms of `theory` against the sympy derivations of `theory.symbolic`.

Every number expected here comes from a derivation (lambdified sympy expression)
and is compared with the numpy function at hypothesis-drawn points to 1e-10
relative (to the scale of the quantity where it can pass through zero).
"""

from __future__ import annotations

import math
from functools import cache
from types import SimpleNamespace

import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from icl_verify.theory._risks import _risk_coefficients
from icl_verify.theory.symbolic import (
    DERIVATIONS,
    derive,
    derive_approximate_loss,
    derive_bayes_limit,
    derive_gd_risks,
    derive_gradient,
    derive_manifold,
    derive_single_head,
)
from icl_verify.theory.symbolic.symbols import L, d, eta, heads, sigma2, w, xi

from icl_verify import theory

RTOL = 1e-10
FAST = settings(max_examples=40, deadline=None)

dims = st.integers(min_value=1, max_value=30)
lengths = st.integers(min_value=2, max_value=400)
noises = st.floats(min_value=0.01, max_value=3.0)


def close(actual: float, expected: float, scale: float | None = None) -> bool:
    """|actual - expected| <= RTOL * scale; scale = |expected| unless given."""
    scale = abs(expected) if scale is None else scale
    return abs(actual - expected) <= RTOL * max(scale, 1e-300)


@cache
def loss_functions(head_count: int):
    """(loss, gradient, hessian) of the derived Ltilde, lambdified in (d, L, sigma2, omega, mu)."""
    omega, mu = heads(head_count)
    loss = derive_approximate_loss(head_count).results["loss"]
    variables = (*omega, *mu)
    gradient = [sp.diff(loss, v) for v in variables]
    hessian = sp.hessian(loss, variables)
    args = (d, L, sigma2, *variables)
    return (sp.lambdify(args, loss), sp.lambdify(args, gradient), sp.lambdify(args, hessian))


def head_points(head_count: int):
    """Strategy of (d, L, sigma2, omega, mu) with d omega^2 = O(1) (the regime of (4.1))."""
    return st.tuples(dims, lengths, noises).flatmap(
        lambda dls: st.tuples(
            st.just(dls),
            st.lists(st.floats(-1.5, 1.5), min_size=head_count, max_size=head_count).map(
                lambda v: np.array(v) / math.sqrt(dls[0])
            ),
            st.lists(st.floats(-6.0, 6.0), min_size=head_count, max_size=head_count).map(np.array),
        )
    )


@pytest.mark.parametrize("name", list(DERIVATIONS))
def test_every_checked_identity_holds(name):
    derivation = derive(name)
    assert derivation.checks, f"{name} verifies nothing"
    assert all(check.passed for check in derivation.checks), [
        c.description for c in derivation.checks if not c.passed
    ]


@pytest.mark.parametrize("head_count", [2, 3])
def test_derived_loss_equals_closed_form_symbolically(head_count):
    # The closed form of (4.1) written out here independently, with an explicit double sum.
    omega, mu = heads(head_count)
    p = sum(m * o for m, o in zip(mu, omega, strict=True))
    kernel = sum(
        mu[i] * mu[j] * sp.exp(d * omega[i] * omega[j])
        for i in range(head_count)
        for j in range(head_count)
    )
    closed = 1 + sigma2 - 2 * p + p**2 + (1 + sigma2) / L * kernel
    derived = derive_approximate_loss(head_count).results["loss"]
    assert sp.expand(derived - closed) == 0


@pytest.mark.parametrize("head_count", [2, 3])
def test_approximate_loss_matches_derivation(head_count):
    loss_fn, grad_fn, _ = loss_functions(head_count)

    @FAST
    @given(head_points(head_count))
    def check(point):
        (dim, length, noise), omega, mu = point
        setting = theory.Setting(d=dim, L=length, sigma2=noise)
        expected = loss_fn(dim, length, noise, *omega, *mu)
        assert close(float(theory.approximate_loss(omega, mu, setting)), expected)
        grad_omega, grad_mu = theory.approximate_loss_grad(omega, mu, setting)
        expected_grad = np.array(grad_fn(dim, length, noise, *omega, *mu), dtype=float)
        scale = 1.0 + np.abs(expected_grad).max()
        assert np.all(np.abs(np.concatenate([grad_omega, grad_mu]) - expected_grad) <= RTOL * scale)

    check()


def test_hessian_matches_derivation():
    _, _, hessian_fn = loss_functions(2)

    @FAST
    @given(head_points(2))
    def check(point):
        (dim, length, noise), omega, mu = point
        setting = theory.Setting(d=dim, L=length, sigma2=noise)
        expected = np.array(hessian_fn(dim, length, noise, *omega, *mu), dtype=float)
        actual = theory.approximate_loss_hessian(omega, mu, setting)
        assert np.all(np.abs(actual - expected) <= RTOL * (1.0 + np.abs(expected).max()))

    check()


def test_gradient_derivation_agrees_with_diff_of_loss():
    omega, mu = heads(3)
    loss = derive_approximate_loss(3).results["loss"]
    derived = derive_gradient(3).results
    for i in range(3):
        assert sp.simplify(derived["grad_mu"][i] - sp.diff(loss, mu[i])) == 0
        assert sp.simplify(derived["grad_omega"][i] - sp.diff(loss, omega[i])) == 0


@FAST
@given(dims, lengths, noises)
def test_optimality_condition_is_the_omega_to_zero_learning_rate(dim, length, noise):
    setting = theory.Setting(d=dim, L=length, sigma2=noise)
    optimal_p = float(
        derive_gradient(2).results["optimal_p"].subs({d: dim, L: length, sigma2: noise})
    )
    assert close(float(theory.effective_learning_rate(0.0, setting)), optimal_p)


@cache
def manifold_functions():
    results = derive_manifold().results
    names = ("mu_star", "manifold_loss", "effective_learning_rate", "learning_rate_series")
    return {name: sp.lambdify((w, d, L, sigma2), results[name]) for name in names}


@FAST
@given(dims, lengths, noises, st.floats(0.01, 2.0))
def test_manifold_matches_derivation(dim, length, noise, scaled_omega):
    omega = scaled_omega / math.sqrt(dim)
    setting = theory.Setting(d=dim, L=length, sigma2=noise)
    functions = manifold_functions()
    args = (omega, dim, length, noise)
    assert close(float(theory.manifold_mu(omega, setting)), functions["mu_star"](*args))
    assert close(float(theory.manifold_loss(omega, setting)), functions["manifold_loss"](*args))
    lr = functions["effective_learning_rate"](*args)
    assert close(float(theory.effective_learning_rate(omega, setting)), lr)


def test_learning_rate_series_error_is_order_omega_12():
    # The series of (4.8) is kept through omega^8 and the next term is omega^12:
    # halving omega^2 must divide the error by 2^6.
    setting = theory.Setting(d=5, L=40, sigma2=0.1)
    series = manifold_functions()["learning_rate_series"]
    errors = [
        abs(float(theory.effective_learning_rate(om, setting)) - series(om, 5, 40, 0.1))
        for om in (math.sqrt(0.2 / 5), math.sqrt(0.1 / 5))
    ]
    assert math.log2(errors[0] / errors[1]) == pytest.approx(6.0, abs=0.1)


@FAST
@given(dims, lengths, noises)
def test_single_head_optimum_matches_derivation(dim, length, noise):
    results = derive_single_head().results
    values = {d: dim, L: length, sigma2: noise}
    optimum = theory.single_head_optimum(theory.Setting(d=dim, L=length, sigma2=noise))
    assert close(optimum.omega, float(results["omega_star"].subs(values)))
    assert close(optimum.mu, float(results["mu_star"].subs(values)))
    assert close(optimum.loss, float(results["loss_star"].subs(values)))


@FAST
@given(dims, lengths, noises, st.floats(0.05, 2.0))
def test_one_head_optimal_mu_matches_derivation(dim, length, noise, scaled_omega):
    omega = scaled_omega / math.sqrt(dim)
    results = derive_single_head().results
    values = {w: omega, d: dim, L: length, sigma2: noise}
    setting = theory.Setting(d=dim, L=length, sigma2=noise)
    assert close(
        float(theory.optimal_mu([omega], setting)[0]), float(results["mu_opt"].subs(values))
    )
    profile = float(results["profile_loss"].subs(values))
    assert close(float(theory.optimal_mu_loss([omega], setting)), profile)


@pytest.mark.parametrize("debiased, key", [(False, "gd"), (True, "debiased")])
def test_risk_coefficients_equal_derivation_symbolically(debiased, key):
    # theory._risks writes (a, b) as plain arithmetic on setting.L and setting.D, so
    # it evaluates on sympy symbols as well as on floats.
    symbolic_setting = SimpleNamespace(L=L, D=d * (1 + sigma2))
    a, b = _risk_coefficients(symbolic_setting, debiased)
    results = derive_gd_risks().results
    assert sp.simplify(a - results[f"{key}_a"]) == 0
    assert sp.simplify(b - results[f"{key}_b"]) == 0


@cache
def risk_functions():
    results = derive_gd_risks().results
    return {
        name: sp.lambdify((eta, d, L, sigma2), results[name])
        for name in (
            "gd_risk",
            "debiased_risk",
            "gd_eta_star",
            "gd_risk_star",
            "debiased_eta_star",
            "debiased_risk_star",
        )
    }


@FAST
@given(dims, lengths, noises, st.floats(-2.0, 3.0))
def test_gd_risks_match_derivation(dim, length, noise, step):
    setting = theory.Setting(d=dim, L=length, sigma2=noise)
    functions = risk_functions()
    args = (step, dim, length, noise)
    assert close(float(theory.gd_risk(step, setting)), functions["gd_risk"](*args))
    assert close(float(theory.debiased_gd_risk(step, setting)), functions["debiased_risk"](*args))
    for debiased, key in ((False, "gd"), (True, "debiased")):
        tuned = theory.optimal_gd(setting, debiased=debiased)
        assert close(tuned.eta, functions[f"{key}_eta_star"](*args))
        assert close(tuned.risk, functions[f"{key}_risk_star"](*args))


@FAST
# >= 0.01: the Marchenko-Pastur form loses ~eps/xi to cancellation, relative to R >= sigma2.
@given(st.floats(0.01, 10.0), st.floats(0.01, 10.0))
def test_bayes_and_gd_limits_match_derivation(ratio, noise):
    # The derived Bayes risk is the Marchenko-Pastur expression itself, not the closed form.
    bayes = sp.lambdify((xi, sigma2), derive_bayes_limit().results["bayes_risk"])
    assert close(theory.bayes_risk_limit(ratio, noise), bayes(ratio, noise))
    gd_limit = sp.lambdify((xi, sigma2), derive_gd_risks().results["risk_star_limit"])
    assert close(theory.gd_risk_limit(ratio, noise), gd_limit(ratio, noise))


def test_stieltjes_transform_is_positive_and_solves_its_quadratic_numerically():
    # m(z) for z < 0 must be the positive root: check at a grid, independent of sympy's simplify.
    z = sp.Symbol("z", negative=True)
    m = sp.lambdify((z, xi), derive_bayes_limit().results["stieltjes"])
    for ratio in (0.05, 0.5, 2.0):
        for point in (-0.01, -1.0, -10.0):
            value = m(point, ratio)
            assert value > 0
            assert abs(ratio * point * value**2 + (point - 1 + ratio) * value + 1) < 1e-12
