"""Symbolic derivations of one-step GD risks and the Bayes risk limit, He et al. (2025) Sec. 4.3.

`derive_gd_risks` computes the exact finite-(d, L) mean squared error of vanilla and
debiased one-step GD from Gaussian and Wishart moments (reference §HE-4.3-RISK): the
fourth Gaussian moment is a sympy integral, the Wishart moments are assembled from
it, and the error is averaged over the query, the task and the noise in turn.
`derive_bayes_limit` takes the Marchenko-Pastur Stieltjes transform to the Bayes risk
in the proportional regime d/L -> xi and simplifies it (§HE-T4.2iii).
"""

from __future__ import annotations

from functools import cache

import numpy as np
import sympy as sp
from icl_verify.theory.symbolic.approximate_loss import gaussian_moments
from icl_verify.theory.symbolic.derivation import Check, Derivation, Step, residual_check
from icl_verify.theory.symbolic.symbols import D, L, d, eta, in_base_symbols, sigma2, xi

n = sp.Symbol("n", positive=True)  # degrees of freedom of the Wishart matrix (L or L - 1)
_X = sp.MatrixSymbol("X", L, d)  # context covariates, one row per example
_W = sp.MatrixSymbol("W", d, d)  # X^T P X
trace_w, trace_w2 = sp.Trace(_W), sp.Trace(_W**2)
_E = sp.Function("E")


def _with_D(expression: sp.Basic) -> sp.Basic:
    """Rewrite in D = d (1 + sigma^2) (for display)."""
    return sp.factor(sp.simplify(expression.subs(sigma2, D / d - 1)))


def _wishart_moments() -> tuple[sp.Basic, sp.Basic, list[Step]]:
    """E tr W and E tr W^2 for W = sum_{i<=n} x_i x_i^T, x_i ~ N(0, I_d), from E z^4."""
    fourth = gaussian_moments()["E z^4"]
    norm_times_square = fourth + (d - 1)  # E[||x||^2 x_1^2] = E z^4 + (d - 1) (E z^2)^2
    # E W^2 = sum_{i != j} E[x_i x_i^T] E[x_j x_j^T] + sum_i E[||x_i||^2 x_i x_i^T]  (times I)
    second_diagonal = n * (n - 1) + n * norm_times_square
    steps = [
        Step(
            "Fourth Gaussian moment E z^4 (sympy integral), so E[||x||^2 x_1^2] = E z^4 + (d - 1)",
            sp.Eq(_E(sp.Symbol("x_1") ** 2 * sp.Symbol("|x|") ** 2), norm_times_square),
        ),
        Step(
            "Wishart W = sum_{i<=n} x_i x_i^T: E W = n I; E W^2 = [n(n-1) + n E(x_1^2 |x|^2)] I",
            sp.Eq(_E(_W**2), sp.factor(second_diagonal) * sp.Identity(d), evaluate=False),
        ),
    ]
    return n * d, sp.expand(d * second_diagonal), steps


def _one_step_risk(steps: list[Step]) -> sp.Basic:
    """MSE of y_hat = (eta/L) y^T P X x_q with X^T P X ~ Wishart_d(n, I), P a rank-n projector."""
    scaled = eta / L
    # y_hat - y_q = x_q^T A beta + (eta/L) x_q^T X^T P eps - eps_q,  A = (eta/L) W - I.
    trace_a2 = scaled**2 * trace_w2 - 2 * scaled * trace_w + d  # tr(A^2)
    conditional = trace_a2 / d + scaled**2 * sigma2 * trace_w + sigma2
    steps.append(
        Step(
            "Error y_hat - y_q = x_q^T A beta + (eta/L) x_q^T X^T P eps - eps_q, A = (eta/L) W - I;"
            " average over x_q (E x_q x_q^T = I), beta (E beta beta^T = I/d), eps (variance "
            "sigma^2)",
            sp.Eq(sp.Symbol("risk"), conditional),
        )
    )
    mean_trace, mean_trace_sq, wishart_steps = _wishart_moments()
    steps += wishart_steps
    risk = sp.expand(conditional.subs({trace_w: mean_trace, trace_w2: mean_trace_sq}))
    steps.append(
        Step(
            "Average over X with E tr W = n d, E tr W^2 = n d (n + d + 1)",
            sp.Eq(sp.Symbol("risk"), sp.collect(risk, eta, sp.factor)),
        )
    )
    return risk


@cache
def derive_gd_risks() -> Derivation:
    """Exact risks of vanilla and debiased one-step GD as quadratics in eta, with eta* and risk*.

    Results (in d, L, sigma2, eta): ``"gd_risk"``, ``"debiased_gd_risk"``, their
    coefficients ``"gd_a"``, ``"gd_b"``, ``"debiased_a"``, ``"debiased_b"`` of
    1 + sigma2 - 2 a eta + b eta^2, the tuned ``"gd_eta_star"``, ``"gd_risk_star"``,
    ``"debiased_eta_star"``, ``"debiased_risk_star"`` and the proportional limit
    ``"risk_star_limit"`` (in xi, sigma2).

    >>> derive_gd_risks().results["debiased_eta_star"]
    L/(L + d*sigma^2 + d)
    """
    steps: list[Step] = [
        Step(
            "Vanilla GD: y_hat = (eta/L) sum_i y_i x_i^T x_q = (eta/L) y^T X x_q; debiased (4.11): "
            "(eta/L) y^T P X x_q, P = I - 11^T/L. Both are (eta/L) y^T P X x_q with P a projector "
            "of rank n",
            sp.Eq(sp.Symbol("n"), sp.Tuple(L, L - 1)),
        )
    ]
    steps.append(
        Step(
            "Rotation invariance: X^T P X = (U^T X)^T (U^T X) with U^T X Gaussian, "
            "so W = X^T P X ~ Wishart_d(n, I); n = L (vanilla), L - 1 (debiased)",
            sp.Eq(sp.Symbol("W"), sp.Symbol("Wishart_d(n, I)")),
        )
    )
    risk_n = _one_step_risk(steps)
    checks: list[Check] = []
    results: dict[str, sp.Basic] = {}
    for label, key, dof in (("vanilla", "gd", L), ("debiased", "debiased", L - 1)):
        risk = sp.expand(risk_n.subs(n, dof))
        a = sp.factor(-risk.coeff(eta, 1) / 2)
        b = sp.factor(risk.coeff(eta, 2))
        checks.append(
            residual_check(
                f"{label}: risk = 1 + sigma^2 - 2 a eta + b eta^2",
                risk,
                1 + sigma2 - 2 * a * eta + b * eta**2,
            )
        )
        eta_star = sp.factor(a / b)
        risk_star = sp.factor(1 + sigma2 - a**2 / b)
        steps.append(
            Step(
                f"{label} (n = {dof}): coefficients (a, b) of 1 + sigma^2 - 2 a eta + b eta^2, "
                "D = d (1 + sigma^2)",
                _with_D(sp.Tuple(a, b)),
            )
        )
        steps.append(
            Step(
                f"{label}: eta* = a/b and risk* = 1 + sigma^2 - a^2/b",
                sp.Tuple(_with_D(eta_star), _with_D(risk_star - sigma2) + sigma2),
            )
        )
        results.update(
            {
                f"{key}_risk": risk,
                f"{key}_a": a,
                f"{key}_b": b,
                f"{key}_eta_star": eta_star,
                f"{key}_risk_star": risk_star,
            }
        )
    checks.append(
        residual_check(
            "debiased eta* = 1/(1 + kappa), the manifold limit of (4.8)",
            results["debiased_eta_star"],
            1 / (1 + (1 + sigma2) * d / L),
        )
    )
    checks.append(
        residual_check(
            "vanilla risk* = sigma^2 + (D + 1)/(L + D + 1)",
            results["gd_risk_star"],
            in_base_symbols(sigma2 + (D + 1) / (L + D + 1)),
        )
    )
    checks.append(
        residual_check(
            "debiased risk* = sigma^2 + (D + 1)/(L + D)",
            results["debiased_risk_star"],
            in_base_symbols(sigma2 + (D + 1) / (L + D)),
        )
    )
    difference = sp.factor(results["debiased_risk"] - results["gd_risk"])
    steps.append(
        Step(
            "Debiased minus vanilla at the same eta (-> 0 as L grows)",
            sp.collect(sp.expand(_with_D(difference)), eta, sp.factor),
        )
    )
    limits = [
        sp.limit(results[f"{key}_risk_star"].subs(d, xi * L), L, sp.oo)
        for key in ("gd", "debiased")
    ]
    steps.append(
        Step(
            "Proportional limit d = xi L, L -> oo of risk* (vanilla and debiased agree)",
            sp.factor(limits[1] - sigma2) + sigma2,
        )
    )
    checks.append(residual_check("both tuned risks have the same limit", limits[0], limits[1]))
    results["risk_star_limit"] = limits[1]
    return Derivation(
        name="gd_risks",
        title="exact finite-(d, L) risks of vanilla and debiased one-step GD",
        source="§HE-4.3-RISK, (4.11)",
        steps=tuple(steps),
        results=results,
        checks=tuple(checks),
        notes=(
            "The query label is noisy (risk includes sigma^2); E||beta||^2 = 1 (beta ~ N(0, I/d)).",
        ),
    )


@cache
def derive_bayes_limit() -> Derivation:
    """The Bayes risk as d, L -> oo with d/L -> xi, from the Marchenko-Pastur Stieltjes transform.

    Results: ``"stieltjes"`` (m(z) in xi, z), ``"bayes_risk"`` (in xi, sigma2),
    ``"closed_form"`` (the form of `theory.bayes_risk_limit`).

    >>> derive_bayes_limit().all_checks_passed
    True
    """
    z = sp.Symbol("z", negative=True)
    m_sym = sp.Symbol("m")
    steps: list[Step] = []
    checks: list[Check] = []
    steps.append(
        Step(
            "Bayes estimator = posterior mean = ridge (X^T X + sigma^2 d I)^{-1} X^T y; its risk "
            "(query noise plus posterior variance)",
            sp.Eq(
                sp.Symbol("R_Bayes"),
                sigma2 + sigma2 * sp.Trace(sp.Inverse(_X.T * _X + sigma2 * d * sp.Identity(d))),
            ),
        )
    )
    steps.append(
        Step(
            "Divide by L: (1/L) tr((X^T X/L + sigma^2 xi I)^{-1}) -> xi m(-sigma^2 xi), with "
            "xi = d/L and m the Stieltjes transform of the Marchenko-Pastur law of X^T X/L",
            sp.Eq(sp.Symbol("R_Bayes"), sigma2 + sigma2 * xi * sp.Function("m")(-sigma2 * xi)),
        )
    )
    quadratic = xi * z * m_sym**2 + (z - 1 + xi) * m_sym + 1
    stieltjes = ((1 - xi - z) - sp.sqrt((1 - xi - z) ** 2 - 4 * xi * z)) / (2 * xi * z)
    steps.append(
        Step("Marchenko-Pastur: m(z) solves xi z m^2 + (z - 1 + xi) m + 1 = 0", sp.Eq(quadratic, 0))
    )
    steps.append(
        Step(
            "The root that is positive for z < 0 (a Stieltjes transform at negative z)",
            sp.Eq(sp.Function("m")(z), stieltjes),
        )
    )
    checks.append(residual_check("m(z) solves its quadratic", quadratic.subs(m_sym, stieltjes), 0))
    risk = sigma2 + sigma2 * xi * stieltjes.subs(z, -sigma2 * xi)
    closed = (sigma2 + (xi - 1) / xi + sp.sqrt((sigma2 + (1 - xi) / xi) ** 2 + 4 * sigma2)) / 2
    simplified = sp.simplify(risk)
    steps.append(Step("Substitute z = -sigma^2 xi", sp.Eq(sp.Symbol("R_Bayes"), simplified)))
    symbolic = residual_check(
        "R_Bayes equals the closed form of theory.bayes_risk_limit (sympy)", risk, closed
    )
    checks.append(symbolic)
    checks += _bayes_independent_checks(risk, closed)
    steps.append(Step("Closed form (theory.bayes_risk_limit)", sp.Eq(sp.Symbol("R_Bayes"), closed)))
    small_xi = sp.series(closed, xi, 0, 2).removeO()
    steps.append(
        Step(
            "Small xi: Bayes excess risk ~ sigma^2 xi (vs xi(1+sigma^2) for tuned GD)",
            sp.Eq(sp.Symbol("R_Bayes"), sp.collect(sp.expand(small_xi), xi)),
        )
    )
    return Derivation(
        name="bayes_limit",
        title="Bayes risk in the proportional regime d/L -> xi (Theorem 4.2(iii))",
        source="§HE-T4.2iii",
        steps=tuple(steps),
        results={"stieltjes": stieltjes, "bayes_risk": risk, "closed_form": closed},
        checks=tuple(checks),
        notes=("xi is the limit of d/L (dimension over prompt length), not L/d.",),
    )


def _bayes_independent_checks(risk: sp.Basic, closed: sp.Basic) -> list[Check]:
    """Checks that do not rely on sympy cancelling radicals: 20 random points and the squared form.

    Both forms R satisfy (2 xi (R - sigma^2) + 1 - xi + sigma^2 xi)^2 = (1 - xi + sigma^2 xi)^2
    + 4 sigma^2 xi^2, and both take the root where the bracket is positive.
    """
    evaluate = sp.lambdify((xi, sigma2), risk - closed, "numpy")
    points = np.random.default_rng(0).uniform([0.01, 0.01], [5.0, 5.0], size=(20, 2))
    worst = float(np.max(np.abs(evaluate(points[:, 0], points[:, 1]))))
    checks = [
        Check(
            "max |R_Bayes - closed form| at 20 random (xi, sigma^2) in (0, 5]^2 (< 1e-12)",
            sp.Float(worst, 3),
            worst < 1e-12,
        )
    ]
    right = (1 - xi + sigma2 * xi) ** 2 + 4 * sigma2 * xi**2
    for label, form in (("Marchenko-Pastur form", risk), ("closed form", closed)):
        bracket = 2 * xi * (form - sigma2) + 1 - xi + sigma2 * xi
        checks.append(
            residual_check(
                f"{label}: (2 xi (R - sigma^2) + 1 - xi + sigma^2 xi)^2 = "
                "(1 - xi + sigma^2 xi)^2 + 4 sigma^2 xi^2",
                sp.expand(bracket**2),
                sp.expand(right),
            )
        )
        positive = sp.lambdify((xi, sigma2), bracket, "numpy")(points[:, 0], points[:, 1])
        checks.append(
            Check(
                f"{label}: the bracket is positive (the + root) at the 20 points",
                sp.Float(float(np.min(positive)), 3),
                bool(np.all(positive > 0)),
            )
        )
    return checks
