"""Symbolic derivation of frozen linear attention's risk at a new length, He et al. (2025) §5.1.

`derive_frozen_linear_attention` starts from one-head linear attention (5.1) with
Gamma = gamma I, whose prediction is the one-step GD form (gamma/L) y^T X x_q. The same
Wishart computation as `derive_gd_risks` (reused, not repeated) gives its risk at any number
n of summed examples; at n = L it yields the trained gamma* = eta_GD*(L), and with gamma*
frozen and n = L' the risk R_lin(L') and its argmin L + (D + 1)/2 (§HE-5.1-LIN,
§HE-5.1-LENGTH).

`derive_softmax_pair` expands the weight of one key of a softmax head with scores scaled by eps
through the moment generating function of the empirical scores, shows that only its odd part
survives in the pair (eps KQ, OV/(2 eps)), (-eps KQ, -OV/(2 eps)), and arrives at linear
attention minus a centring term plus an eps^2 term (5.2) (§HE-5.1-SM2LIN, §HE-4.10).
"""

from __future__ import annotations

from functools import cache

import sympy as sp
from icl_verify.theory.symbolic.derivation import Check, Derivation, Step, residual_check
from icl_verify.theory.symbolic.risks import _one_step_risk, _with_D, derive_gd_risks, n
from icl_verify.theory.symbolic.symbols import D, L, eta, in_base_symbols, sigma2

L_test = sp.Symbol("L'", positive=True)  # test prompt length
gamma = sp.Symbol("gamma", real=True)  # Gamma = gamma I, the KQ block of the linear head
_y, _s = sp.IndexedBase("y"), sp.IndexedBase("s")  # labels and scores x_i^T x_q (for display)
_i = sp.Symbol("i", integer=True, positive=True)


@cache
def derive_frozen_linear_attention() -> Derivation:
    """Risk of one-head linear attention trained at L, tested at L'; its optimum and argmin.

    Results (in d, L, sigma2, L'): ``"gamma_star"`` (the trained gamma, = eta_GD*(L)),
    ``"frozen_risk"`` (R_lin(L')), ``"argmin"`` (the real minimiser in L'), ``"risk_at_argmin"``.

    >>> derive_frozen_linear_attention().results["argmin"]
    L + d*sigma^2/2 + d/2 + 1/2
    """
    steps: list[Step] = [
        Step(
            "Linear attention (5.1), one head, KQ block Gamma = gamma I, OV reading the label "
            "slot: y_hat = (1/L) sum_{i<=n} y_i x_i^T Gamma x_q = (gamma/L) y^T X x_q (s_i = "
            "x_i^T x_q), the query token adding 0 (its label slot is 0). It is the one-step GD "
            "form with eta = gamma, P = I and n summed examples: n = L in training, n = L' at "
            "test with 1/L frozen",
            sp.Eq(sp.Symbol("y_hat"), gamma / L * sp.Sum(_y[_i] * _s[_i], (_i, 1, n))),
        )
    ]
    risk_n = _one_step_risk(steps).subs(eta, gamma)  # n summed examples, coefficient gamma/L
    checks: list[Check] = []

    train_risk = sp.expand(risk_n.subs(n, L))
    (gamma_star,) = sp.solve(sp.diff(train_risk, gamma), gamma)
    gamma_star = sp.factor(gamma_star)
    curvature = sp.factor(sp.diff(train_risk, gamma, 2))
    steps.append(
        Step(
            "Training length n = L: d risk / d gamma = 0 gives the trained gamma* (the risk is a "
            "parabola in gamma with positive curvature 2(L + D + 1)/L)",
            sp.Eq(sp.Symbol("gamma*"), _with_D(gamma_star)),
        )
    )
    checks.append(
        residual_check(
            "gamma* = eta_GD*(L) of derive_gd_risks",
            gamma_star,
            derive_gd_risks().results["gd_eta_star"],
        )
    )
    checks.append(
        residual_check(
            "curvature d^2 risk / d gamma^2 = 2 (L + D + 1)/L > 0",
            curvature,
            in_base_symbols(2 * (L + D + 1) / L),
        )
    )

    frozen = sp.expand(risk_n.subs({n: L_test, gamma: gamma_star}))
    steps.append(
        Step(
            "Test length n = L' with gamma*/L frozen: the same Wishart average with n = L'",
            sp.Eq(
                sp.Symbol("R_lin"), sp.collect(_with_D(frozen - sigma2 - 1), L_test) + 1 + sigma2
            ),
        )
    )
    stated = in_base_symbols(1 + sigma2 - L_test * (2 * L + D + 1 - L_test) / (L + D + 1) ** 2)
    checks.append(
        residual_check(
            "R_lin(L') = 1 + sigma^2 - L'(2L + D + 1 - L')/(L + D + 1)^2", frozen, stated
        )
    )
    vanilla_at_test = (
        derive_gd_risks().results["gd_risk"].subs(L, L_test).subs(eta, L_test * gamma_star / L)
    )
    checks.append(
        residual_check(
            "R_lin(L') = vanilla GD risk over L' examples with step L' gamma*/L",
            frozen,
            vanilla_at_test,
        )
    )
    checks.append(
        residual_check(
            "R_lin(L) = the tuned vanilla risk sigma^2 + (D + 1)/(L + D + 1)",
            frozen.subs(L_test, L),
            derive_gd_risks().results["gd_risk_star"],
        )
    )

    (argmin,) = sp.solve(sp.diff(frozen, L_test), L_test)
    argmin = sp.expand(argmin)
    risk_at_argmin = sp.factor(frozen.subs(L_test, argmin))
    steps.append(
        Step(
            "d R_lin / d L' = 0: the argmin over real L', past the training length by (D + 1)/2 "
            "(curvature 2/(L + D + 1)^2 > 0)",
            sp.Eq(sp.Symbol("L'*"), L + (D + 1) / 2),
        )
    )
    checks.append(
        residual_check("argmin L' = L + (D + 1)/2", argmin, in_base_symbols(L + (D + 1) / 2))
    )
    checks.append(
        residual_check(
            "d^2 R_lin / d L'^2 = 2/(L + D + 1)^2 > 0",
            sp.diff(frozen, L_test, 2),
            in_base_symbols(2 / (L + D + 1) ** 2),
        )
    )
    steps.append(
        Step(
            "The least risk, at L' = L + (D + 1)/2",
            sp.Eq(sp.Symbol("R_lin*"), _with_D(risk_at_argmin - sigma2) + sigma2),
        )
    )
    return Derivation(
        name="frozen_linear_attention",
        title="one-head linear attention trained at L, tested at L' (weights frozen)",
        source="§HE-5.1-LIN, §HE-5.1-LENGTH, §HE-4.3-RISK",
        steps=tuple(steps),
        results={
            "gamma_star": gamma_star,
            "frozen_risk": frozen,
            "argmin": argmin,
            "risk_at_argmin": risk_at_argmin,
        },
        checks=tuple(checks),
        notes=(
            "Gamma = gamma I is the isotropic choice; the frozen coefficient is gamma*/L, so at L' "
            "the model is vanilla GD with step L' gamma*/L (not renormalised by 1/L').",
        ),
    )


epsilon = sp.Symbol("epsilon", positive=True)  # KQ scale of the softmax pair
u = sp.Symbol("u_i", real=True)  # centred score v_i - mean(v) of one key
m2, m3, m4 = sp.symbols("m_2 m_3 m_4", real=True)  # central moments of the L scores (m_1 = 0)
_WEIGHT_ORDER = 5  # the weight is expanded to eps^4: the pair (odd part / eps) to eps^3


def _explicit_pair_check() -> Check:
    """The pair's series for L = 3 explicit scores v_k and scalar values z_k (D = 1, OV = 1),
    from the softmax itself (exponentials as Taylor polynomials, 1/sum by sympy's series),
    against the moment form: an independent route to the eps^0 and eps^2 terms."""
    length = 3
    scores = sp.symbols(f"v_1:{length + 1}", real=True)
    values = sp.symbols(f"z_1:{length + 1}", real=True)

    def exponential(x: sp.Basic) -> sp.Basic:
        return sum(x**k / sp.factorial(k) for k in range(_WEIGHT_ORDER + 1))

    def weights(scale: sp.Basic) -> list[sp.Basic]:
        inverse = sp.series(
            1 / sum(exponential(scale * v) for v in scores), epsilon, 0, _WEIGHT_ORDER
        ).removeO()
        return [sp.expand(exponential(scale * v) * inverse) for v in scores]

    difference = sum(
        z * (plus - minus)
        for z, plus, minus in zip(values, weights(epsilon), weights(-epsilon), strict=True)
    )
    pair = sp.expand(difference / (2 * epsilon))
    series = sum(pair.coeff(epsilon, k) * epsilon**k for k in range(_WEIGHT_ORDER - 1))
    mean = sum(scores) / length
    centred = [v - mean for v in scores]
    second = sum(c**2 for c in centred) / length
    third = sum(c**3 for c in centred) / length
    moment_form = sum(
        z * (c + epsilon**2 * (c**3 - 3 * c * second - third) / 6)
        for z, c in zip(values, centred, strict=True)
    )
    return residual_check(
        "L = 3 explicit scores: the softmax pair's series to eps^3 equals (1/L) sum z_i [u_i + "
        "eps^2 (u_i^3 - 3 u_i m_2 - m_3)/6] (no eps^1, eps^3 terms)",
        series,
        moment_form / length,
    )


def _matrix_identity_check() -> Check:
    """(1/L) OV sum_i z_i u_i = (1/L) OV sum_i z_i z_i^T KQ z_q - OV zbar zbar^T KQ z_q.

    Explicit symbols, D = 2 and L = 3."""
    size, length = 2, 3
    kq = sp.Matrix(size, size, sp.symbols(f"K_1:{size * size + 1}", real=True))
    ov = sp.Matrix(size, size, sp.symbols(f"O_1:{size * size + 1}", real=True))
    tokens = [sp.Matrix(sp.symbols(f"z_{i}_1:{size + 1}", real=True)) for i in range(length + 1)]
    context, query = tokens[:-1], tokens[-1]
    scores = [(z.T * kq * query)[0, 0] for z in context]
    mean_score = sum(scores) / length
    mean_token = sum(context, sp.zeros(size, 1)) / length
    centred = (
        ov
        * sum(
            (z * (v - mean_score) for z, v in zip(context, scores, strict=True)), sp.zeros(size, 1)
        )
        / length
    )
    linear = ov * sum((z * z.T * kq * query for z in context), sp.zeros(size, 1)) / length
    centring = ov * mean_token * mean_token.T * kq * query
    components = sp.Matrix(sp.symbols(f"c_1:{size + 1}", real=True))  # free weights: all entries
    return residual_check(
        "matrix form (D = 2, L = 3; every component, weighted by free symbols c_k): (1/L) OV "
        "sum_i z_i u_i = linear - OV zbar zbar^T KQ z_q",
        (components.T * centred)[0, 0],
        (components.T * (linear - centring))[0, 0],
    )


def _scalar_form_check() -> Check:
    """With scalar values y_i the eps^2 term is HE-4.10's cubic term.

    (1/L) sum y_i (u_i^3 - 3 u_i m2 - m3) = (1/L) sum (y_i - ybar)(u_i^3 - 3 u_i m2), L = 3."""
    length = 3
    labels = sp.symbols(f"y_1:{length + 1}", real=True)
    centred = sp.symbols(f"u_1:{length}", real=True)
    centred = (*centred, -sum(centred))  # the centred scores sum to 0
    second = sum(c**2 for c in centred) / length
    third = sum(c**3 for c in centred) / length
    mean_label = sum(labels) / length
    ours = (
        sum(y * (c**3 - 3 * c * second - third) for y, c in zip(labels, centred, strict=True))
        / length
    )
    reference = sum(
        (y - mean_label) * (c**3 - 3 * c * second) for y, c in zip(labels, centred, strict=True)
    )
    return residual_check(
        "scalar values y_i: (1/L) sum y_i (u_i^3 - 3 u_i m_2 - m_3) = (1/L) sum (y_i - ybar)"
        "(u_i^3 - 3 u_i m_2), HE-4.10's cubic term",
        ours,
        reference / length,
    )


@cache
def derive_softmax_pair() -> Derivation:
    """The softmax pair (eps KQ, OV/(2 eps)), (-eps KQ, -OV/(2 eps)) as linear attention, to eps^2.

    Results (in eps, u_i, m_2, m_3, m_4): ``"weight_series"`` (L softmax_i to eps^4),
    ``"pair_weight"`` ((L softmax_i(eps) - L softmax_i(-eps))/(2 eps) to eps^3) and
    ``"next_term_weight"`` (its eps^2 coefficient (u_i^3 - 3 u_i m_2 - m_3)/6).

    >>> derive_softmax_pair().results["next_term_weight"]
    -m_2*u_i/2 - m_3/6 + u_i**3/6
    """
    steps: list[Step] = []
    checks: list[Check] = []
    head_weight = sp.Function("softmax_i")(epsilon)
    mgf = sp.Function("M")(epsilon)
    steps.append(
        Step(
            "One head with scores eps v_i, v_i = z_i^T KQ z_q over the L context tokens. Shifting "
            "every score by mean(v) leaves the softmax unchanged, so with u_i = v_i - mean(v) "
            "the weight is e^(eps u_i)/(L M(eps)), M the moment generating function of the "
            "empirical centred scores",
            sp.Eq(head_weight, sp.exp(epsilon * u) / (L * mgf)),
        )
    )
    moments = 1 + sum(
        epsilon**k * m / sp.factorial(k) for k, m in ((2, m2), (3, m3), (4, m4))
    )  # M(eps), m_1 = 0
    steps.append(
        Step(
            "M(eps) = (1/L) sum_j e^(eps u_j) = sum_k eps^k m_k / k!, m_k = mean(u^k), m_1 = 0",
            sp.Eq(mgf, moments + sp.O(epsilon**_WEIGHT_ORDER)),
        )
    )
    weight = sp.expand(
        sp.series(sp.exp(epsilon * u) / moments, epsilon, 0, _WEIGHT_ORDER).removeO()
    )
    steps.append(
        Step(
            "Series of L softmax_i in eps",
            sp.Eq(L * head_weight, sp.collect(weight, epsilon) + sp.O(epsilon**_WEIGHT_ORDER)),
        )
    )
    reference_weight = (
        1 + epsilon * u + epsilon**2 * (u**2 - m2) / 2 + epsilon**3 * (u**3 - 3 * u * m2 - m3) / 6
    )
    checks.append(
        residual_check(
            "to eps^3 it is HE-4.10's expansion 1 + eps u + eps^2 (u^2 - m_2)/2 + eps^3 (u^3 - "
            "3 u m_2 - m_3)/6",
            sum(weight.coeff(epsilon, k) * epsilon**k for k in range(4)),
            reference_weight,
        )
    )
    even = sp.expand((weight + weight.subs(epsilon, -epsilon)) / 2)
    odd = sp.expand((weight - weight.subs(epsilon, -epsilon)) / 2)
    steps.append(
        Step(
            "The head (-eps KQ, -OV/(2 eps)) has weights L softmax_i(-eps) and the opposite OV "
            "sign, so the even part of L softmax_i(eps) cancels in the pair",
            sp.Eq(sp.Symbol("even part"), sp.collect(even, epsilon)),
        )
    )
    pair_weight = sp.expand(odd / epsilon)
    steps.append(
        Step(
            "so the pair outputs (1/L) OV sum_i z_i times the pair weight (L softmax_i(eps) - "
            "L softmax_i(-eps))/(2 eps) = (odd part)/eps; the next odd term is eps^5, so the "
            "error is O(eps^4)",
            sp.Eq(
                sp.Symbol("pair weight"),
                sp.collect(pair_weight, epsilon) + sp.O(epsilon ** (_WEIGHT_ORDER - 1)),
            ),
        )
    )
    checks.append(_explicit_pair_check())
    next_weight = pair_weight.coeff(epsilon, 2)
    linear, centring, next_term = sp.symbols("linear centring N")
    steps.append(
        Step(
            "Sum over the keys: (1/L) OV sum_i z_i u_i = (1/L) OV sum_i z_i z_i^T KQ z_q - OV zbar "
            "zbar^T KQ z_q (linear attention minus centring), and N = (1/L) OV sum_i z_i times "
            "the eps^2 coefficient",
            sp.Eq(sp.Symbol("pair"), linear - centring + epsilon**2 * next_term + sp.O(epsilon**4)),
        )
    )
    steps.append(
        Step(
            "The eps^2 coefficient of the pair weight, which N sums: N = (1/L) OV sum_i z_i times",
            next_weight,
        )
    )
    checks.append(
        residual_check(
            "pair weight = u_i + eps^2 (u_i^3 - 3 u_i m_2 - m_3)/6 to eps^3",
            pair_weight,
            u + epsilon**2 * (u**3 - 3 * u * m2 - m3) / 6,
        )
    )
    checks.append(_matrix_identity_check())
    checks.append(_scalar_form_check())
    return Derivation(
        name="softmax_pair",
        title="a softmax head pair emulates one linear-attention head, to O(eps^4)",
        source="§HE-5.1-SM2LIN, (5.2), §HE-4.10",
        steps=tuple(steps),
        results={
            "weight_series": weight,
            "pair_weight": pair_weight,
            "next_term_weight": next_weight,
        },
        checks=tuple(checks),
        notes=(
            "The heads attend to the L context tokens only. The centring term is small when the "
            "tokens are centred (E z = 0): then zbar = O(1/sqrt(L)).",
        ),
    )
