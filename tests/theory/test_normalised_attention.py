"""Two heads with a normalised activation f (He et al. 2025, §5.2, §HE-5.2-ACT, Table 1).

Independent sources, each written here:
- a_f = f'(0)/f(0) (and f''/f, f'''/f) against difference quotients of f, with tolerances from
  their truncation (h |f''| / 2 for a one-sided quotient) and rounding (~4 eps / h^k);
- the kernel-mean step against closed forms: 2 omega mu for the softmax, and for f = (1 + c x)^2
  4 c omega mu E[r / (1 + c^2 omega^2 r)] / d by scipy's 1-D quadrature of the chi^2 density
  (tolerance: quad's own error estimate plus 3e-13 relative, the stated accuracy);
- the kernel-mean step against a plain Monte Carlo over (x_q, s) for tanh and elu:0.5 (4 SE);
- the second-order step against the kernel-mean step: their relative difference is O(omega^4),
  a fitted log-log slope of 4.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import sympy as sp
from icl_verify.theory import (
    ActivationCoefficients,
    activation_coefficients,
    first_order_step,
    kernel_mean_step,
    second_order_step,
)
from icl_verify.theory.symbolic import DERIVATIONS, derive_normalised_activation
from icl_verify.theory.symbolic.normalised_attention import a, b, c, mu, t
from icl_verify.theory.symbolic.symbols import d, w
from scipy import integrate, stats

from icl_verify.activations import FAMILIES, ActivationError, parse_activation

EPS = np.finfo(float).eps
SPECS = ["softmax", "tanh"] + [
    f"{family}:{c_}" for family in ("elu", "quadratic") for c_ in (0.5, 0.8, 1)
]


def numpy_f(spec: str):
    """f of a spec, evaluated by numpy (through sympy's lambdify of the activation's expression)."""
    activation = parse_activation(spec)
    return sp.lambdify(activation.symbol, activation.expression, "numpy")


# ---- the coefficients a_f, b, t ----


@pytest.mark.parametrize("spec", SPECS)
def test_first_order_coefficient_matches_one_sided_difference_quotients(spec):
    f = numpy_f(spec)
    coefficients = activation_coefficients(spec)
    assert isinstance(coefficients, ActivationCoefficients)
    f0 = float(f(0.0))
    assert coefficients.f0 == f0
    h = 1e-7  # truncation h |f''| / (2 f0) <= 1e-7 (|f''| <= 2 here), rounding 4 eps / h ~ 1e-8
    right = (f(h) - f(0.0)) / h / f0
    left = (f(0.0) - f(-h)) / h / f0
    assert coefficients.a == pytest.approx(right, abs=2e-7)
    assert coefficients.a == pytest.approx(left, abs=2e-7)


@pytest.mark.parametrize("spec", SPECS)
def test_higher_coefficients_match_central_differences_or_are_absent(spec):
    f = numpy_f(spec)
    coefficients = activation_coefficients(spec)
    f0 = float(f(0.0))
    h2, h3 = 1e-4, 1e-3
    # second: truncation h^2 |f''''| / 12 < 1e-8, rounding 4 eps / h^2 ~ 1e-7
    second = (f(h2) - 2 * f(0.0) + f(-h2)) / h2**2 / f0
    # third: truncation h^2 |f'''''| / 4 < 1e-5, rounding 6 eps / (2 h^3) ~ 1e-6
    third = (f(2 * h3) - 2 * f(h3) + 2 * f(-h3) - f(-2 * h3)) / (2 * h3**3) / f0
    if spec.startswith("elu"):
        # f'' jumps at 0: the one-sided second differences differ by c^2
        c_ = float(spec.split(":")[1])
        right = (f(2 * h2) - 2 * f(h2) + f(0.0)) / h2**2
        left = (f(0.0) - 2 * f(-h2) + f(-2 * h2)) / h2**2
        assert left - right == pytest.approx(c_**2, rel=1e-3)
        assert coefficients.b is None and coefficients.t is None
        return
    assert coefficients.b == pytest.approx(second, abs=1e-6)
    assert coefficients.t == pytest.approx(third, abs=1e-5)


def test_the_families_have_the_papers_first_order_coefficients():
    # a_f = 1, 1, c, 2c (reference §HE-5.2-ACT, by arithmetic on Table 1)
    for c_ in (0.5, 0.8, 1.0):
        assert activation_coefficients(f"elu:{c_}").a == pytest.approx(c_, rel=1e-15)
        assert activation_coefficients(f"quadratic:{c_}").a == pytest.approx(2 * c_, rel=1e-15)
    assert activation_coefficients("softmax") == ActivationCoefficients(1.0, 1.0, 1.0, 1.0)
    assert activation_coefficients("tanh") == ActivationCoefficients(1.0, 1.0, 0.0, -2.0)


def _numpy_only(v):
    """f = e^v + v^2 + 1: numpy refuses a sympy symbol, so it is differentiated numerically."""
    return np.exp(v) + v**2 + 1.0


def _scalar_only(v):
    """f = e^(2 v) + 1 with math.exp: scalars only."""
    return math.exp(2.0 * v) + 1.0


def test_callables_symbolic_when_they_accept_a_symbol_else_numerical():
    # (1 + x)^2 works on a sympy symbol: exact
    assert activation_coefficients(lambda x: (1 + x) ** 2) == ActivationCoefficients(
        2.0, 1.0, 2.0, 0.0
    )
    # f(0) = 2, f' = 1, f'' = 3, f''' = 1; accuracy stated: 1e-12, 1e-9, 1e-6 relative
    numeric = activation_coefficients(_numpy_only)
    assert numeric.f0 == 2.0
    assert numeric.a == pytest.approx(0.5, abs=1e-12)
    assert numeric.b == pytest.approx(1.5, abs=1e-9 * 1.5)
    assert numeric.t == pytest.approx(0.5, abs=1e-6)
    # f(0) = 2, f^(k)(0) = 2^k
    scalar = activation_coefficients(_scalar_only)
    assert (scalar.a, scalar.b, scalar.t) == pytest.approx((1.0, 2.0, 4.0), abs=4e-6)
    # the numerical path sees elu's kink in f'' too
    elu = activation_coefficients(lambda v: np.where(v < 0, np.exp(0.5 * v), 1 + 0.5 * v))
    assert elu.a == pytest.approx(0.5, abs=1e-12) and elu.b is None and elu.t is None


def test_all_input_forms_agree():
    x = sp.Symbol("x", real=True)
    forms = ["quadratic:0.8", parse_activation("quadratic:0.8"), (1 + 0.8 * x) ** 2]
    forms.append(lambda v: (1 + 0.8 * v) ** 2)
    forms.append(sp.Symbol("u") ** 2 * 0.64 + 1.6 * sp.Symbol("u") + 1)  # any one symbol
    values = [activation_coefficients(form) for form in forms]
    for value in values:
        assert value.a == pytest.approx(1.6, rel=1e-15) and value.b == pytest.approx(1.28)


def _kinked(v):
    return 1.0 + np.abs(v)


def _cusp(v):
    return 1.0 + math.sqrt(abs(v))


@pytest.mark.parametrize(
    "f, name, words",
    [
        ("f:x", "'f:x'", "f(0) must be finite and > 0"),
        ("f:x - 1", "'f:x - 1'", "f(0) must be finite and > 0"),
        ("f:1/x", "'f:1/x'", "f(0) must be finite and > 0"),
        ("f:1 + 200*x", "'f:1 + 200*x'", "f must be positive near 0"),
        ("f:1 + abs(x)", "'f:1 + abs(x)'", "f must be differentiable at 0"),
        ("f:1 + sqrt(abs(x))", "'f:1 + sqrt(abs(x))'", "f must be differentiable at 0"),
        (_kinked, "_kinked", "f must be differentiable at 0"),
        (_cusp, "_cusp", "f must be differentiable at 0"),
        (sp.Symbol("x") + sp.Symbol("y") + 1, "x + y + 1", "one variable"),
        ("f:Piecewise((1, x < 0), (2, True))", "Piecewise", "f must be continuous at 0"),
    ],
    ids=lambda value: value if isinstance(value, str) else None,
)
def test_refusals_are_one_line_naming_f(f, name, words):
    with pytest.raises(ActivationError) as error:
        activation_coefficients(f)
    message = str(error.value)
    assert "\n" not in message and name in message and words in message, message


def test_not_a_function_is_refused():
    with pytest.raises(ActivationError, match="^activation must be .*, got int$"):
        activation_coefficients(3)


# ---- the steps ----


def test_first_order_step_is_twice_a_omega_mu():
    # Table 1, column 6 (quadratic family, c = 0.5): eta_eff = 1.0122
    assert round(first_order_step("quadratic:0.5", 0.2882, 1.7561), 4) == 1.0122
    omega = np.array([0.1, 0.2, 0.3])
    steps = first_order_step("elu:0.8", omega, 2.0)
    np.testing.assert_allclose(steps, 2 * 0.8 * omega * 2.0, rtol=1e-15)


@pytest.mark.parametrize("d_", [1, 5, 100])
def test_kernel_mean_of_the_softmax_is_exactly_two_omega_mu(d_):
    omega = np.array([1e-3, 0.05, 0.2, 0.5, 1.0])
    steps = kernel_mean_step("softmax", omega, 1.3, d_)
    np.testing.assert_allclose(steps, 2 * omega * 1.3, rtol=3e-13, atol=0)


def quadratic_closed_form(c_, omega, mu_, d_):
    """4 c omega mu E[r/(1 + c^2 omega^2 r)]/d, r ~ chi^2_d, by scipy quad; with its error."""
    k = (c_ * omega) ** 2
    value, error = integrate.quad(
        lambda r: r / (1 + k * r) * stats.chi2.pdf(r, d_), 0, np.inf, epsabs=0, epsrel=1e-13
    )
    scale = 4 * c_ * omega * mu_ / d_
    return scale * value, scale * error


@pytest.mark.parametrize("d_", [1, 5, 20, 100])
@pytest.mark.parametrize("c_", [0.5, 1.0])
@pytest.mark.parametrize("omega", [0.01, 0.2882, 1.0])
def test_kernel_mean_of_the_quadratic_family_matches_its_closed_form(omega, c_, d_):
    expected, error = quadratic_closed_form(c_, omega, 1.7561, d_)
    got = kernel_mean_step(f"quadratic:{c_}", omega, 1.7561, d_)
    assert abs(got - expected) <= 2 * error + 3e-13 * abs(expected)


def test_table_one_quadratic_column_kernel_mean():
    # first order 1.0122; the r-averaged kernel mean is 0.888, and 0.917 with r = ||x_q||^2 set
    # to its mean d (the reference's "about 0.92")
    step = kernel_mean_step("quadratic:0.5", 0.2882, 1.7561, 5)
    assert step == pytest.approx(quadratic_closed_form(0.5, 0.2882, 1.7561, 5)[0], rel=1e-12)
    assert round(step, 3) == 0.888
    plug_in = 4 * 0.5 * 0.2882 * 1.7561 / (1 + (0.5 * 0.2882) ** 2 * 5)
    assert round(plug_in, 3) == 0.917


def monte_carlo_kernel_mean(f, omega, mu_, d_, queries, scores, seed):
    """Plain MC of eta_km = E_r[r eta(r)]/d over x_q (r = ||x_q||^2) and s | x_q ~ N(0, r).

    For each x_q the ratios E[s f(+-omega s)]/E f(+-omega s) use `scores` draws of s for the
    numerator and independent ones for the denominator, so the ratio's bias is only that of 1/mean,
    relative Var f / (n (E f)^2) ~ a^2 omega^2 r / n ~ 2e-4 here (< SE / 5). r enters as a control
    variate (E r = d exactly). Returns (mean, SE).
    """
    rng = np.random.default_rng(seed)
    values, radii = [], []
    for _ in range(queries // 500):
        x_q = rng.standard_normal((500, d_))  # (Q, d)
        r = np.sum(x_q**2, axis=1)  # (Q,)
        s_top = np.sqrt(r)[:, None] * rng.standard_normal((500, scores))  # (Q, n)
        s_bottom = np.sqrt(r)[:, None] * rng.standard_normal((500, scores))  # (Q, n)
        ratio = [
            np.mean(s_top * f(sign * omega * s_top), axis=1)
            / np.mean(f(sign * omega * s_bottom), axis=1)
            for sign in (1.0, -1.0)
        ]
        values.append(mu_ * (ratio[0] - ratio[1]))  # r eta(r), (Q,)
        radii.append(r)
    values, radii = np.concatenate(values), np.concatenate(radii)
    slope = np.cov(values, radii)[0, 1] / np.var(radii, ddof=1)
    adjusted = values - slope * (radii - d_)
    return adjusted.mean() / d_, adjusted.std(ddof=1) / np.sqrt(values.size) / d_


@pytest.mark.parametrize(
    "spec, f",
    [
        ("tanh", lambda v: 1.0 + np.tanh(v)),
        ("elu:0.5", lambda v: np.where(v < 0, np.exp(0.5 * np.minimum(v, 0)), 1.0 + 0.5 * v)),
    ],
)
def test_kernel_mean_matches_monte_carlo(spec, f):
    omega, mu_, d_ = 0.2, 2.5, 5
    mean, se = monte_carlo_kernel_mean(f, omega, mu_, d_, queries=4000, scores=1000, seed=7)
    step = kernel_mean_step(spec, omega, mu_, d_)
    first = first_order_step(spec, omega, mu_)
    print(f"{spec}: MC {mean:.5f} ± {se:.5f}, kernel mean {step:.5f}, first order {first:.5f}")
    assert abs(mean - step) <= 4 * se
    assert abs(mean - first) > 10 * se  # the kernel mean is not the first-order step here


@pytest.mark.parametrize("spec", ["tanh", "quadratic:0.5", "f:exp(x) + x**3", "f:1 + x + x**2"])
def test_second_order_step_is_the_kernel_mean_to_order_omega4(spec):
    # at fixed step 2 omega mu = 1 the relative difference is O(omega^4)
    omega = np.geomspace(0.004, 0.03, 6)
    mu_ = 1 / (2 * omega)
    kernel = kernel_mean_step(spec, omega, mu_, 5)
    second = second_order_step(spec, omega, mu_, 5)
    first = first_order_step(spec, omega, mu_)
    difference = np.abs(second - kernel) / np.abs(kernel)
    slope = np.polyfit(np.log(omega), np.log(difference), 1)[0]
    # next term relatively O(omega^2 (d + 2)(d + 4)) < 5e-2 over the range: slope bias < 0.1;
    # the smallest difference (~1e-9) is far above the quadrature's 3e-13
    print(f"{spec}: slope {slope:.3f}, smallest relative difference {difference.min():.1e}")
    assert abs(slope - 4) < 0.1
    assert np.all(np.abs(second - kernel) < np.abs(first - kernel))


def test_softmax_steps_agree_at_every_order():
    omega = np.array([0.05, 0.3, 0.8])
    for step in (
        second_order_step("softmax", omega, 2.0, 5),
        kernel_mean_step("softmax", omega, 2.0, 5),
    ):
        np.testing.assert_allclose(step, first_order_step("softmax", omega, 2.0), rtol=3e-13)


def test_second_order_step_needs_three_derivatives():
    with pytest.raises(ActivationError, match="^activation 'elu:0.5': the second-order step needs"):
        second_order_step("elu:0.5", 0.2, 2.5, 5)


def test_shapes_and_bad_arguments():
    grid = kernel_mean_step("tanh", np.full((2, 3), 0.2), np.array([1.0, 2.0, 3.0]), 5)
    assert grid.shape == (2, 3)
    np.testing.assert_allclose(grid[0] / [1.0, 2.0, 3.0], grid[0, 0], rtol=1e-14)
    assert type(kernel_mean_step("tanh", 0.2, 1.0, 5)) is float
    for call, name in [
        (lambda: kernel_mean_step("tanh", np.nan, 1.0, 5), "omega"),
        (lambda: kernel_mean_step("tanh", 0.2, "two", 5), "mu"),
        (lambda: kernel_mean_step("tanh", 0.2, 1.0, 0), "d"),
        (lambda: first_order_step("tanh", [0.1, np.inf], 1.0), "omega"),
        (lambda: second_order_step("tanh", 0.2, True, 5), "mu"),
        (lambda: kernel_mean_step("softmax", 40.0, 1.0, 5), "omega"),  # e^(omega s) overflows
    ]:
        with pytest.raises(ValueError) as error:
            call()
        assert str(error.value).startswith(f"{name} must ") and "\n" not in str(error.value)


# ---- the derivation ----


def test_derivation_holds_and_reports_each_familys_coefficient():
    derivation = derive_normalised_activation()
    assert derivation.all_checks_passed
    assert DERIVATIONS["normalised_activation"].function is derive_normalised_activation
    assert {f"a_{family}" for family in FAMILIES} <= set(derivation.results)
    for c_ in (0.5, 0.8, 1.0):
        for family in ("elu", "quadratic"):
            derived = float(derivation.results[f"a_{family}"].subs(c, c_))
            assert derived == pytest.approx(activation_coefficients(f"{family}:{c_}").a, rel=1e-15)
    assert "curvature_elu" not in derivation.results  # elu is not twice differentiable at 0


@pytest.mark.parametrize("spec", ["tanh", "quadratic:0.8", "softmax"])
def test_derived_series_is_second_order_step(spec):
    series = sp.lambdify(
        (a, b, t, w, mu, d), derive_normalised_activation().results["eta_km_series"]
    )
    k = activation_coefficients(spec)
    for omega, mu_, d_ in [(0.1, 3.0, 5), (0.37, 1.2, 20)]:
        assert series(k.a, k.b, k.t, omega, mu_, d_) == pytest.approx(
            second_order_step(spec, omega, mu_, d_), rel=1e-14
        )
