"""Symbolic derivation of the softmax-norm approximation of He et al. (2025), App. C (Figure 20).

`derive_softmax_norm` expands E[L ||p||^2], p = softmax(omega X^T x_q), as a ratio of two
sample means (the delta method carried to second order in 1/L) with the Gaussian moment
generating function, conditionally on r = ||x_q||^2, then averages over r ~ chi^2_d with the
chi^2 moment generating function (reference §HE-P4.1, Figure 20; the paper's formula is
stripped, so this is an independent derivation).
"""

from __future__ import annotations

from functools import cache

import sympy as sp
from icl_verify.theory.symbolic.derivation import Check, Derivation, Step, residual_check
from icl_verify.theory.symbolic.symbols import L, d, w

a = sp.Symbol("a", positive=True)  # variance omega^2 r of one score s_i given x_q
r = sp.Symbol("r", positive=True)  # ||x_q||^2
u = sp.Symbol("u", positive=True)  # e^a = e^{omega^2 r}
N = sp.Symbol("N", positive=True)  # L ||p||^2
alpha, beta = sp.symbols("alpha beta", real=True)  # relative deviations of the two sample means
ORDER = 2  # highest power of 1/L kept


def _gaussian_power_mean(k: int) -> sp.Basic:
    """E[e^{k s}] for s ~ N(0, a): e^{k^2 a / 2}."""
    return sp.exp(sp.Rational(k) ** 2 * a / 2)


def _joint_moment(i: int, j: int) -> sp.Basic:
    """E[X^i Y^j] of one key, X = e^{2s}/E e^{2s} - 1, Y = e^{s}/E e^{s} - 1."""
    e = sp.Symbol("e")
    expanded = sp.expand(
        (e**2 / _gaussian_power_mean(2) - 1) ** i * (e / _gaussian_power_mean(1) - 1) ** j
    )
    return sp.expand(
        sum(
            coefficient * _gaussian_power_mean(k)
            for (k,), coefficient in sp.Poly(expanded, e).terms()
        )
    )


def _sample_mean_moment(i: int, j: int) -> sp.Basic:
    """E[alpha^i beta^j] of the sample means to O(1/L^2) (alpha, beta: L-key means of X, Y)."""
    m = _joint_moment
    table = {
        (0, 0): sp.Integer(1),
        (1, 0): sp.Integer(0),
        (0, 1): sp.Integer(0),
        (1, 1): m(1, 1) / L,
        (0, 2): m(0, 2) / L,
        (1, 2): m(1, 2) / L**2,  # third moments of a mean: kappa_3 / L^2
        (0, 3): m(0, 3) / L**2,
        (1, 3): 3 * m(1, 1) * m(0, 2) / L**2,  # fourth: pairings (Isserlis) + O(1/L^3)
        (0, 4): 3 * m(0, 2) ** 2 / L**2,
    }
    return table[(i, j)]


@cache
def derive_softmax_norm() -> Derivation:
    """E[L ||p||^2] to O(1/L^2), given r and averaged over r ~ chi^2_d; the regime parameter.

    Results: ``"conditional"`` (in u = e^{omega^2 r} and L), ``"first_conditional"``,
    ``"second_conditional"`` (coefficients of 1/L and 1/L^2 given r), ``"mean"`` (averaged over
    r, in omega, d, L), ``"regime"`` (relative variance of the numerator mean at r = d).

    >>> sp.factor(derive_softmax_norm().results["first_conditional"])
    -u*(u - 1)*(2*u - 1)
    """
    steps: list[Step] = []
    checks: list[Check] = []
    A, B = sp.symbols("Abar Bbar", positive=True)
    steps.append(
        Step(
            "N = L ||p||^2. Given x_q with r = ||x_q||^2 the scores s_i = omega x_i^T x_q are "
            "iid N(0, a), a = omega^2 r, and N = Abar / Bbar^2 with Abar, Bbar the means over "
            "the L keys of e^{2 s_i} and e^{s_i}; E e^{k s} = e^{k^2 a / 2}, so the law of "
            "large numbers gives e^{2a} / e^{a} = e^{a}: ||p||^2 ~ e^{omega^2 ||x_q||^2} / L",
            sp.Eq(N, A / B**2),
        )
    )
    ratio = sp.expand(
        sp.series((1 + alpha) * (1 + beta) ** -2, beta, 0, 5).removeO()
    )  # degree <= 4 in beta, <= 1 in alpha
    steps.append(
        Step(
            "Abar = E e^{2s} (1 + alpha), Bbar = E e^{s} (1 + beta): expand "
            "(1 + alpha)(1 + beta)^{-2} to fourth order; E alpha^i beta^j is O(1/L) for "
            "i + j = 2 and O(1/L^2) for 3 and 4 "
            "(third cumulants / L^2, pairings of second moments / L^2)",
            sp.Eq(N * sp.exp(-a), ratio),
        )
    )
    poly = sp.Poly(ratio, alpha, beta)
    relative = sum(
        c * _sample_mean_moment(i, j) for (i, j), c in poly.terms() if i + j <= 4
    )  # degree 5+: O(1/L^3)
    conditional = sp.expand(sp.exp(a) * relative)
    in_u = sp.expand(sp.powsimp(conditional).subs(a, sp.log(u)))
    first = sp.expand(in_u.coeff(L, -1))
    second = sp.expand(in_u.coeff(L, -2))
    steps.append(
        Step(
            "The ratio estimator's bias given r, with u = e^{omega^2 r}: leading u, first "
            "correction -u(u - 1)(2u - 1)/L, second u(u - 1)^2 (3u^3 + 6u^2 - 7u + 1)/L^2",
            sp.Eq(sp.Symbol("E[N|r]"), u + sp.factor(first) / L + sp.factor(second) / L**2),
        )
    )
    checks.append(residual_check("leading term given r is e^{omega^2 r}", in_u.coeff(L, 0), u))
    mu = sp.Matrix([_gaussian_power_mean(2), _gaussian_power_mean(1)])
    hessian = sp.hessian(A / B**2, (A, B)).subs({A: mu[0], B: mu[1]})
    powers = (2, 1)  # (e^{2s}, e^{s})
    covariance = sp.Matrix(
        2, 2, lambda i, j: _gaussian_power_mean(powers[i] + powers[j]) - mu[i] * mu[j]
    )  # per-key covariance
    delta_method = sp.expand(sp.powsimp((hessian * covariance).trace() / 2))
    checks.append(
        residual_check(
            "first correction = (1/2) tr(Hessian of A/B^2 x per-key covariance) (delta method)",
            first,
            sp.expand(delta_method.subs(a, sp.log(u))),
        )
    )
    for name, term in (("first", first), ("second", second)):
        checks.append(
            residual_check(
                f"{name} correction vanishes at omega = 0 (uniform p)", term.subs(u, 1), 0
            )
        )
    steps.append(
        Step(
            "Average over r ~ chi^2_d with E e^{q omega^2 r} = (1 - 2 q omega^2)^{-d/2} "
            "(2 q omega^2 < 1; the second-order term needs u^6, so 12 omega^2 < 1): the leading "
            "term (1 - 2 omega^2)^{-d/2} ~ e^{omega^2 d} when omega^2 << 1",
            sp.Eq(
                sp.Symbol("E[N]"),
                (1 - 2 * w**2) ** (-d / 2) + sp.Symbol("C_1") / L + sp.Symbol("C_2") / L**2,
            ),
        )
    )
    mean = sp.expand(in_u).replace(
        lambda e: e.is_Pow and e.base == u, lambda e: (1 - 2 * e.exp * w**2) ** (-d / 2)
    )
    mean = mean.subs(u, (1 - 2 * w**2) ** (-d / 2))
    regime = (sp.exp(4 * w**2 * d) - 1) / L
    steps.append(
        Step(
            "Regime: the expansion is in powers of the per-key relative variances over L; the "
            "largest, that of e^{2s} at the typical r = d, is (e^{4 omega^2 d} - 1)/L. The "
            "approximation holds when L >> e^{4 omega^2 d}: for fixed d and growing L; not for "
            "d proportional to L at fixed omega (omega^2 d grows faster than log L); again for "
            "omega = c d^{-1/2} (omega^2 d = c^2 fixed)",
            sp.Eq(sp.Symbol("rho"), regime),
        )
    )
    return Derivation(
        name="softmax_norm",
        title="E L||softmax(omega X^T x_q)||^2 to O(1/L^2), given ||x_q||^2 and averaged",
        source="§HE-P4.1, Figure 20",
        steps=tuple(steps),
        results={
            "conditional": u + first / L + second / L**2,
            "first_conditional": first,
            "second_conditional": second,
            "mean": mean,
            "regime": regime,
        },
        checks=tuple(checks),
        notes=(
            "The appendix's approximation, most likely: ||p||^2 ~ e^{omega^2 ||x_q||^2}/L, i.e. "
            "~ 1/L as omega^2 d -> 0 (the softmax denominator ~ L e^{omega^2 ||x_q||^2 / 2} of "
            "Prop. 4.1's proof).",
        ),
    )
