"""Symbolic derivation of the two-head step with a normalised activation, He et al. (2025) §5.2.

`derive_normalised_activation` takes the kernel-mean limit of the two heads (omega, mu),
(-omega, -mu) with phi(v)_i = f(v_i)/sum_j f(v_j): given r = ||x_q||^2 the prediction is
(beta^T x_q) eta(r). It expands eta(r) in omega for a general f through its Taylor coefficients
and the Gaussian moments of the scores (sympy integrals, reused from the derivation of (4.1)),
averages over r ~ chi^2_d, and finds eta exactly for the softmax and the quadratic family. The
first-order coefficient a_f = f'(0)/f(0) of each family of `icl_verify.activations.FAMILIES`
comes out with its parameter c symbolic (§HE-5.2-ACT, Table 1).
"""

from __future__ import annotations

from functools import cache

import sympy as sp
from icl_verify.theory._normalised_attention import exact_coefficients
from icl_verify.theory.symbolic.approximate_loss import _gaussian_mean, gaussian_moments, q, s
from icl_verify.theory.symbolic.approximate_loss import a as rate
from icl_verify.theory.symbolic.derivation import Check, Derivation, Step, residual_check
from icl_verify.theory.symbolic.symbols import d
from icl_verify.theory.symbolic.symbols import w as omega
from sympy.parsing.sympy_parser import (
    implicit_multiplication_application,
    parse_expr,
    standard_transformations,
)

from icl_verify.activations import FAMILIES

r = sp.Symbol("r", positive=True)  # ||x_q||^2, the variance of the scores given x_q
mu = sp.Symbol("mu", real=True)  # OV scale of the heads
c = sp.Symbol("c", positive=True)  # the parameter of the elu and quadratic families
x = sp.Symbol("x", real=True)  # the argument of f (as in icl_verify.activations)
a, b, t = sp.symbols("a b t", real=True)  # f'(0), f''(0), f'''(0) over f(0)
f4, f5 = sp.symbols("f_4 f_5", real=True)  # f''''(0), f'''''(0) over f(0): must not enter
_E = sp.Function("E")


@cache
def _score_moment(power: int) -> sp.Basic:
    """E s^power for s ~ N(0, r) (sympy integral)."""
    return _gaussian_mean(s**power, r)


def _score_mean(polynomial: sp.Basic) -> sp.Basic:
    """E p(s) for a polynomial p, s ~ N(0, r), term by term."""
    terms = sp.Poly(sp.expand(polynomial), s).terms()
    return sp.expand(sum(term * _score_moment(k) for (k,), term in terms))


def _polynomial_tilt(f: sp.Basic):
    """scale -> E[s f(scale s)] / E f(scale s) for a polynomial f in x."""
    return lambda scale: _score_mean(s * f.subs(x, scale * s)) / _score_mean(f.subs(x, scale * s))


def _softmax_tilt(scale: sp.Basic) -> sp.Basic:
    """E[s e^(scale s)] / E e^(scale s), from the Gaussian moments behind (4.1)."""
    moments, at = gaussian_moments(), {rate: scale, q: r}
    return moments["E s exp(a s)"].subs(at) / moments["E exp(a s)"].subs(at)


def _kernel_mean_eta(tilt) -> sp.Basic:
    """eta(r) = mu (E[s f(omega s)]/E f(omega s) - E[s f(-omega s)]/E f(-omega s)) / r."""
    return mu * (tilt(omega) - tilt(-omega)) / r


def _stated_coefficient(family: str) -> sp.Basic:
    """a_f as `FAMILIES` states it in words ("a_f = 2c" -> 2 c)."""
    words = FAMILIES[family][1].split("=")[1]
    transformations = (*standard_transformations, implicit_multiplication_application)
    return parse_expr(words, local_dict={"c": c}, transformations=transformations)


@cache
def derive_normalised_activation() -> Derivation:
    """The two-head step eta(r) and its chi^2 average eta_km to second order in omega; exact
    softmax and quadratic cases; a_f of every family.

    Results: ``"eta_series"`` (eta(r) to omega^3, in a, b, t, omega, mu, r), ``"eta_km_series"``
    (in d), ``"softmax_eta"``, ``"quadratic_eta"`` (exact), and per family of `FAMILIES`
    ``"a_<family>"`` (a_f, c symbolic) and, where f is three times differentiable at 0,
    ``"curvature_<family>"`` = t/a - b.

    >>> derivation = derive_normalised_activation()
    >>> derivation.results["a_quadratic"], derivation.results["curvature_tanh"]
    (2*c, -2)
    """
    steps: list[Step] = []
    checks: list[Check] = []
    steps.append(
        Step(
            "Two heads (omega, mu), (-omega, -mu), phi(v)_i = f(v_i)/sum_j f(v_j), scores s_i = "
            "x_i^T x_q. As L -> oo each head's weighted label mean tends to E[y f(omega s)]/E f("
            "omega s); given x_q, s ~ N(0, r) with r = ||x_q||^2 and E[x | s] = s x_q / r, so the "
            "prediction tends to (beta^T x_q) eta(r) with",
            sp.Eq(
                sp.Function("eta")(r),
                mu
                * (
                    _E(s * sp.Function("f")(omega * s)) / _E(sp.Function("f")(omega * s))
                    - _E(s * sp.Function("f")(-omega * s)) / _E(sp.Function("f")(-omega * s))
                )
                / r,
            ),
        )
    )
    taylor = 1 + a * x + b * x**2 / 2 + t * x**3 / 6 + f4 * x**4 / 24 + f5 * x**5 / 120
    steps.append(
        Step(
            "A general f near 0, over f(0) (which cancels in every ratio): a = f'(0)/f(0) = a_f, "
            "b = f''(0)/f(0), t = f'''(0)/f(0)",
            sp.Eq(sp.Function("f")(x) / sp.Function("f")(0), taylor + sp.O(x**6)),
        )
    )
    steps.append(
        Step(
            "Gaussian moments of the scores, term by term from E s^k (sympy integrals over "
            "s ~ N(0, r))",
            sp.Tuple(
                sp.Eq(_E(sp.Function("f")(omega * s)), _score_mean(taylor.subs(x, omega * s))),
                sp.Eq(
                    _E(s * sp.Function("f")(omega * s)),
                    sp.factor(_score_mean(s * taylor.subs(x, omega * s))),
                ),
            ),
        )
    )
    eta = _kernel_mean_eta(_polynomial_tilt(taylor))
    eta_series = sp.expand(sp.series(eta, omega, 0, 5).removeO())
    steps.append(
        Step(
            "Series in omega: even powers cancel between the heads, and f'''' and f''''' do not "
            "enter to this order",
            sp.Eq(sp.Function("eta")(r), sp.collect(eta_series, omega) + sp.O(omega**5)),
        )
    )
    checks.append(
        residual_check(
            "eta(r) = 2 a omega mu [1 + (t/a - b) omega^2 r / 2] + O(omega^5)",
            eta_series,
            2 * a * omega * mu * (1 + (t / a - b) * omega**2 * r / 2),
        )
    )
    density = r ** (d / 2 - 1) * sp.exp(-r / 2) / (2 ** (d / 2) * sp.gamma(d / 2))
    moments = [
        sp.factor(sp.gammasimp(sp.integrate(r**k * density, (r, 0, sp.oo), conds="none")))
        for k in (1, 2)
    ]
    steps.append(
        Step(
            "r = ||x_q||^2 ~ chi^2_d: E r and E r^2 (sympy integrals of the density)",
            sp.Tuple(sp.Eq(_E(r), moments[0]), sp.Eq(_E(r**2), moments[1])),
        )
    )
    checks.append(residual_check("E r^2 = d (d + 2)", moments[1], d * (d + 2)))
    raw_moments = {1: moments[0], 2: moments[1]}
    weighted = sp.Poly(sp.expand(r * eta_series), r)  # r eta(r): powers r and r^2 only
    eta_km = sp.expand(sum(term * raw_moments[k] for (k,), term in weighted.terms()) / d)
    steps.append(
        Step(
            "Least-squares step of debiased GD (whose L -> oo prediction is eta beta^T x_q) fitted "
            "to the model: eta_km = E[(beta^T x_q)^2 eta(r)]/E[(beta^T x_q)^2] = E_r[r eta(r)]/d",
            sp.Eq(sp.Symbol("eta_km"), sp.collect(sp.factor(eta_km), omega) + sp.O(omega**5)),
        )
    )
    checks.append(
        residual_check(
            "eta_km = 2 a omega mu [1 + (t/a - b)(d + 2) omega^2 / 2] + O(omega^5)",
            eta_km,
            2 * a * omega * mu * (1 + (t / a - b) * (d + 2) * omega**2 / 2),
        )
    )
    softmax_eta = sp.simplify(_kernel_mean_eta(_softmax_tilt))
    steps.append(
        Step(
            "Softmax, f = exp: E[s e^(omega s)] / E e^(omega s) = omega r, so eta = 2 omega mu at "
            "every order and every r",
            sp.Eq(sp.Function("eta")(r), softmax_eta),
        )
    )
    checks.append(
        residual_check("softmax: eta(r) = 2 omega mu exactly", softmax_eta, 2 * omega * mu)
    )
    quadratic_eta = sp.factor(_kernel_mean_eta(_polynomial_tilt((1 + c * x) ** 2)))
    steps.append(
        Step(
            "Quadratic, f = (1 + c x)^2: E f(omega s) = 1 + c^2 omega^2 r and E[s f(omega s)] = "
            "2 c omega r, so exactly",
            sp.Eq(sp.Function("eta")(r), quadratic_eta),
        )
    )
    checks.append(
        residual_check(
            "quadratic: eta(r) = 4 c omega mu / (1 + c^2 omega^2 r)",
            quadratic_eta,
            4 * c * omega * mu / (1 + c**2 * omega**2 * r),
        )
    )
    results: dict[str, sp.Basic] = {
        "eta_series": eta_series,
        "eta_km_series": eta_km,
        "softmax_eta": softmax_eta,
        "quadratic_eta": quadratic_eta,
    }
    rows = []
    for family, (formula, _) in FAMILIES.items():
        f = sp.sympify(formula, locals={"x": x, "c": c})
        value, first, second, third = exact_coefficients(f, x, family)
        coefficient = sp.simplify(first / value)
        results[f"a_{family}"] = coefficient
        checks.append(
            residual_check(
                f"{family}: a_f from f equals the table's '{FAMILIES[family][1]}'",
                coefficient,
                _stated_coefficient(family),
            )
        )
        if third is None:
            rows.append(sp.Tuple(sp.Symbol(family), f, coefficient, sp.Symbol("none")))
            continue
        curvature = sp.simplify(third / first - second / value)
        results[f"curvature_{family}"] = curvature
        rows.append(sp.Tuple(sp.Symbol(family), f, coefficient, curvature))
        if family in ("softmax", "quadratic"):  # exact eta(r) known: its series, independently
            exact = softmax_eta if family == "softmax" else quadratic_eta
            checks.append(
                residual_check(
                    f"{family}: the series of its exact eta(r) = the general series at its "
                    "(a, b, t)",
                    sp.expand(sp.series(exact, omega, 0, 5).removeO()),
                    eta_series.subs({a: first / value, b: second / value, t: third / value}),
                )
            )
    steps.append(
        Step(
            "Each family of icl_verify.activations: (f, a_f, t/a - b), one-sided limits at 0 (elu "
            "is a Piecewise whose f'' jumps at 0, so it has no second-order coefficient)",
            sp.Tuple(*rows),
        )
    )
    return Derivation(
        name="normalised_activation",
        title="two heads with a normalised activation: the kernel-mean step to second order",
        source="§HE-5.2-ACT, Table 1, (4.11)",
        steps=tuple(steps),
        results=results,
        checks=tuple(checks),
        notes=(
            "eta(r) is the L -> infinity limit given x_q; eta_km is evaluated by quadrature in "
            "theory.kernel_mean_step and truncated in theory.second_order_step.",
        ),
    )
