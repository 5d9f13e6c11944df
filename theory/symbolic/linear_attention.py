"""Symbolic derivation of frozen linear attention's risk at a new length, He et al. (2025) §5.1.

`derive_frozen_linear_attention` starts from one-head linear attention (5.1) with
Gamma = gamma I, whose prediction is the one-step GD form (gamma/L) y^T X x_q. The same
Wishart computation as `derive_gd_risks` (reused, not repeated) gives its risk at any number
n of summed examples; at n = L it yields the trained gamma* = eta_GD*(L), and with gamma*
frozen and n = L' the risk R_lin(L') and its argmin L + (D + 1)/2 (§HE-5.1-LIN,
§HE-5.1-LENGTH).
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
