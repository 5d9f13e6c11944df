"""Preconditioned one-step GD on N(0, Sigma) covariates: risk and optimal preconditioners (§5.3).

He et al. (2025) Lemma E.4 (reference §HE-5.3-KMS) gives the vanilla optimum; this derivation
also gives the debiased one, which the trained two-head model implements (5.5). The Gaussian
moment identities are derived with a general (symbolic) Sigma: Isserlis' theorem contracted
to ``E[z z^T A z z^T] = 2 Sigma A Sigma + tr(A Sigma) Sigma`` (checked entrywise at d = 3),
the Wishart moment ``E[W A W] = n(n+1) Sigma A Sigma + n tr(A Sigma) Sigma`` (n = L for
vanilla GD, n = L - 1 after centring), the moments of ``g = (1/L) X^T P y``, the risk as a
quadratic in Gamma, and its minimiser; the last two are verified symbolically at d = 2 with
Sigma and Gamma fully symbolic.
"""

from __future__ import annotations

from functools import cache
from itertools import product

import sympy as sp
from icl_verify.theory.symbolic.derivation import Check, Derivation, Step, residual_check
from icl_verify.theory.symbolic.symbols import L, d, sigma2

n = sp.Symbol("n", positive=True)  # Wishart degrees of freedom: L (vanilla), L - 1 (debiased)
trace_sigma = sp.Symbol("tr(Sigma)", positive=True)


def _symmetric(name: str, size: int) -> sp.Matrix:
    """A symmetric matrix of symbols name_ij (i <= j)."""
    return sp.Matrix(
        size, size, lambda i, j: sp.Symbol(f"{name}_{min(i, j) + 1}{max(i, j) + 1}", real=True)
    )


def _isserlis_check(size: int) -> Check:
    """E[z z^T A z z^T] from E z_i z_j z_k z_l = S_ij S_kl + S_ik S_jl + S_il S_jk."""
    S, A = _symmetric("S", size), _symmetric("A", size)
    moment = sp.zeros(size, size)
    for i, j, k, m in product(range(size), repeat=4):
        fourth = S[i, j] * S[k, m] + S[i, k] * S[j, m] + S[i, m] * S[j, k]
        moment[i, m] += A[j, k] * fourth
    closed = 2 * S * A * S + (A * S).trace() * S
    return _zero_matrix_check(
        f"Isserlis at d = {size}: E[z z^T A z z^T] = 2 Sigma A Sigma + tr(A Sigma) Sigma",
        moment - closed,
    )


def _zero_matrix_check(description: str, matrix: sp.Matrix) -> Check:
    """Every entry of ``matrix`` simplifies to exactly 0."""
    residual = matrix.applyfunc(lambda entry: sp.cancel(sp.together(sp.expand(entry))))
    return Check(description, residual, residual.is_zero_matrix is True)


@cache
def derive_preconditioned_gd() -> Derivation:
    """Risk of ``y_hat = (1/L) sum_i y_i x_i^T Gamma x_q`` (and its centred form) on N(0, Sigma).

    Results (in L, d, sigma2, tr(Sigma), n): ``"second_moment"`` the scalar coefficients
    (b_n, c_n) of ``E g g^T = b_n Sigma^2/d + c_n (tr Sigma/d + sigma2) Sigma/L``; the
    coefficients ``a, b, c`` of ``risk = tr Sigma/d + sigma2 - 2 a tr(Gamma Sigma^2)/d +
    tr(Gamma Sigma Gamma^T M)``, ``M = b Sigma^2/d + c (tr Sigma/d + sigma2) Sigma/L`` for
    ``"vanilla_*"`` and ``"debiased_*"``; the ridge ``(tr Sigma + d sigma2)/L`` of the optima
    ``Gamma* = a [b Sigma + c ridge I]^{-1}``.

    >>> result = derive_preconditioned_gd()
    >>> result.results["debiased_a"], result.results["debiased_b"]
    ((L - 1)/L, (L - 1)/L)
    >>> result.all_checks_passed
    True
    """
    checks = [_isserlis_check(3)]
    steps = [
        Step(
            "y_hat = g^T Gamma x_q with g = (1/L) X^T P y (P = I vanilla, the centring projector "
            "debiased); given beta, E(y_hat - y_q)^2 = E (Gamma^T g - beta)^T Sigma "
            "(Gamma^T g - beta) + sigma^2: only E[g | beta] and E[g g^T | beta] enter",
            sp.Eq(sp.Symbol("risk"), sp.Symbol("E(Gamma'g - beta)'Sigma(Gamma'g - beta)") + sigma2),
        ),
        Step(
            "Isserlis (checked entrywise at d = 3 with symbolic Sigma, A): "
            "E[z z^T A z z^T] = 2 Sigma A Sigma + tr(A Sigma) Sigma",
            sp.Symbol("2*Sigma*A*Sigma + tr(A*Sigma)*Sigma"),
        ),
    ]
    # W = X^T P X ~ Wishart_n(Sigma): n(n-1) off-diagonal pairs plus n diagonal terms
    wishart_aa, wishart_tr = n * (n - 1) + 2 * n, n
    checks.append(residual_check("E[W A W]: n(n-1) + 2n = n(n+1)", wishart_aa, n * (n + 1)))
    steps.append(
        Step(
            "W = X^T P X ~ Wishart_n(Sigma) (n = L vanilla, L - 1 debiased); summing Isserlis over "
            "its n independent rows: E[W A W] = n(n+1) Sigma A Sigma + n tr(A Sigma) Sigma",
            sp.Tuple(sp.factor(wishart_aa), wishart_tr),
        )
    )
    # g = (1/L)(W beta + X^T P eps): E[g|beta] = (n/L) Sigma beta; E[gg^T|beta] =
    # (1/L^2)(E[W bb^T W] + sigma2 E W); average over beta ~ N(0, I/d)
    mean_coefficient = n / L
    second = sp.Tuple(sp.factor(wishart_aa / L**2), sp.factor(wishart_tr / L))
    steps.append(
        Step(
            "E[g|beta] = (n/L) Sigma beta; E[g g^T|beta] = (1/L^2)(E[W beta beta^T W] + sigma^2 "
            "E W); with E beta beta^T = I/d: E g g^T = b_n Sigma^2/d + c_n (tr Sigma/d + "
            "sigma^2) Sigma / L, (b_n, c_n) =",
            second,
        )
    )
    results: dict[str, sp.Basic] = {"second_moment": second}
    for label, dof in (("vanilla", L), ("debiased", L - 1)):
        a = sp.factor(mean_coefficient.subs(n, dof))
        b = sp.factor(second[0].subs(n, dof))
        c = sp.factor(second[1].subs(n, dof))
        results.update({f"{label}_a": a, f"{label}_b": b, f"{label}_c": c})
        steps.append(Step(f"{label} (n = {dof}): (a, b, c) =", sp.Tuple(a, b, c)))
    checks += _d2_checks(results)
    ridge = (trace_sigma + d * sigma2) / L
    results["ridge"] = ridge
    steps.append(
        Step(
            "The risk is convex quadratic in Gamma; its gradient -2a Sigma^2/d + 2 M Gamma Sigma "
            "vanishes at Gamma* = a M^{-1} Sigma / d = a [b Sigma + c ridge I]^{-1}; debiased: "
            "a = b = c, so Gamma*_d = [Sigma + ridge I]^{-1} (checked at d = 2), ridge =",
            ridge,
        )
    )
    return Derivation(
        name="preconditioned_gd",
        title="risk and optimal preconditioner of vanilla and debiased one-step GD on N(0, Sigma)",
        source="§HE-5.3-KMS (Lemma E.4)",
        steps=tuple(steps),
        results=results,
        checks=tuple(checks),
        notes=(
            "beta ~ N(0, I_d/d) and a noisy query label (reference §0.2); Gamma need not be "
            "symmetric; at Sigma = I the optima are eta* I with the steps of §HE-4.3-RISK.",
        ),
    )


def _d2_checks(results: dict[str, sp.Basic]) -> list[Check]:
    """At d = 2, symbolic Sigma and Gamma: the risk from the moments equals the (a, b, c) form,
    and its gradient vanishes at a [b Sigma + c ridge I]^{-1}."""
    size = 2
    S = _symmetric("S", size)
    G = sp.Matrix(size, size, lambda i, j: sp.Symbol(f"G_{i + 1}{j + 1}", real=True))
    tr = S.trace()
    checks = []
    for label, dof in (("vanilla", L), ("debiased", L - 1)):
        a, b, c = (results[f"{label}_{k}"] for k in "abc")
        # moments averaged over beta ~ N(0, I/size), from E[W A W] with A = beta beta^T
        cross = (dof / L) * S / size  # E[g beta^T]
        gram = (dof * (dof + 1) * S * S / size + dof * (tr / size) * S + sigma2 * dof * S) / L**2
        risk = (S * G.T * gram * G).trace() - 2 * (S * G.T * cross).trace() + tr / size + sigma2
        M = b * S * S / size + c * (tr / size + sigma2) * S / L
        closed = tr / size + sigma2 - 2 * a * (G * S * S).trace() / size + (G * S * G.T * M).trace()
        checks.append(residual_check(f"{label} risk at d = 2 = (a, b, c) form", risk, closed))
        optimum = a * (b * S + c * (tr + size * sigma2) / L * sp.eye(size)).inv()
        gradient = sp.Matrix([sp.diff(risk, g) for g in G]).subs(dict(zip(G, optimum, strict=True)))
        checks.append(
            _zero_matrix_check(f"{label}: gradient of the risk vanishes at Gamma*", gradient)
        )
    return checks
