"""Symbolic derivations of the approximate loss (4.1) and its gradient, He et al. (2025) Sec. 4.1.

`derive_approximate_loss` obtains Ltilde of (4.1) from the kernel-sum predictor (3.2)
at leading order in 1/L (reference §HE-P4.1): every Gaussian moment it needs is
computed by sympy as a one-dimensional integral, and the terms the argument drops
are listed with their size. `derive_gradient` splits the gradient into the
zero-sum, sign-matching and higher-order parts of Stage I (§HE-S1) and derives the
optimality condition (4.3).
"""

from __future__ import annotations

from functools import cache

import sympy as sp
from icl_verify.theory.symbolic.derivation import Check, Derivation, Step, residual_check
from icl_verify.theory.symbolic.symbols import (
    L,
    c,
    closed_form_loss,
    d,
    heads,
    in_base_symbols,
    kappa,
    sigma2,
)

# Conditional on the query x_q and the task beta: s = x^T x_q ~ N(0, q) for a context x.
s = sp.Symbol("s", real=True)  # score x_i^T x_q of one context example
q = sp.Symbol("q", positive=True)  # ||x_q||^2
b = sp.Symbol("b", real=True)  # beta^T x_q, the noiseless query label
beta_norm2 = sp.Symbol("||beta||^2", positive=True)
omega_a, omega_b = sp.symbols("omega_h omega_h'", real=True)  # scales of two heads
a = sp.Symbol("a", real=True)  # generic exponent rate


E = sp.Function("E")  # expectation, unevaluated, for display


def _gaussian_mean(integrand: sp.Basic, variance: sp.Basic = q) -> sp.Basic:
    """E f(s) for s ~ N(0, variance), by sympy integration."""
    density = sp.exp(-(s**2) / (2 * variance)) / sp.sqrt(2 * sp.pi * variance)
    return sp.simplify(sp.integrate(integrand * density, (s, -sp.oo, sp.oo), conds="none"))


@cache
def gaussian_moments() -> dict[str, sp.Basic]:
    """The one-dimensional Gaussian moments behind (4.1), from sympy integrals.

    Keys: ``"E exp(a s)"`` (integrated), ``"E s exp(a s)"``, ``"E s^2 exp(a s)"``
    (its first and second derivatives in a: differentiation under the integral sign)
    for s ~ N(0, q); ``"E exp(a z^2)"`` (integrated with r = 1 - 2a > 0) and
    ``"E z^4"`` (integrated) for z ~ N(0, 1).

    >>> gaussian_moments()["E exp(a s)"]
    exp(a**2*q/2)
    """
    r = sp.Symbol("r", positive=True)
    mgf = _gaussian_mean(sp.exp(a * s))
    return {
        "E exp(a s)": mgf,
        "E s exp(a s)": sp.factor(sp.diff(mgf, a)),
        "E s^2 exp(a s)": sp.factor(sp.diff(mgf, a, 2)),
        # z ~ N(0, 1): E exp(a z^2) = integral of exp(-r z^2 / 2) / sqrt(2 pi), r = 1 - 2a.
        "E exp(a z^2)": sp.integrate(
            sp.exp(-r * s**2 / 2) / sp.sqrt(2 * sp.pi), (s, -sp.oo, sp.oo)
        ).subs(r, 1 - 2 * a),
        "E z^4": _gaussian_mean(s**4, 1),
    }


@cache
def derive_approximate_loss(head_count: int = 2) -> Derivation:
    """Ltilde of (4.1) from the kernel-sum predictor (3.2), for `head_count` explicit heads.

    Results: ``"loss"`` (Ltilde in d, L, sigma2, omega_h, mu_h), ``"head_mean"``
    (E of one head's output given x_q, beta), ``"head_covariance"`` (leading
    per-sample covariance of two heads); given x_q and beta, in the module symbols
    q = ||x_q||^2, b = beta^T x_q, ||beta||^2, omega_h, omega_h': ``"per_sample_second_moment"``
    (exact E[T_h T_h'], T_h = y exp(omega_h s - omega_h^2 q/2)) and ``"ratio_bias"``
    (first-order bias of one head's softmax ratio). The check asserts that ``"loss"`` equals
    1 + sigma2 - 2 mu^T omega + mu^T (omega omega^T + c exp(d omega omega^T)) mu exactly.

    >>> derivation = derive_approximate_loss(1)
    >>> derivation.all_checks_passed
    True
    >>> omega, mu = heads(1)
    >>> derivation.results["loss"].subs({omega[0]: 0, mu[0]: 0})  # predicting 0 costs E y_q^2
    sigma^2 + 1
    """
    if head_count < 1:
        raise ValueError(f"head_count must be an integer >= 1, got {head_count!r}")
    moments = gaussian_moments()
    omega, mu = heads(head_count)
    steps: list[Step] = []
    checks: list[Check] = []

    i, j = sp.symbols("i j", integer=True, positive=True)
    y_i, s_i = sp.IndexedBase("y"), sp.IndexedBase("s")
    y_hat = sp.Symbol("yhat")
    predictor = sum(
        m * sp.Sum(y_i[i] * sp.exp(o * s_i[i]), (i, 1, L)) / sp.Sum(sp.exp(o * s_i[j]), (j, 1, L))
        for o, m in zip(omega, mu, strict=True)
    )
    steps.append(Step("Kernel-sum predictor (3.2), s_i = x_i^T x_q", sp.Eq(y_hat, predictor)))
    steps.append(
        Step(
            "Given x_q and beta: s ~ N(0, q) with q = ||x_q||^2, b = beta^T x_q; regress y on s: "
            "y = (b/q) s + z + eps, z independent of s, Var z = ||beta||^2 - b^2/q",
            sp.Eq(sp.Symbol("y"), b * s / q + sp.Symbol("z") + sp.Symbol("epsilon")),
        )
    )

    mgf = moments["E exp(a s)"]
    steps.append(
        Step(
            "Softmax denominator / L -> its mean (law of large numbers); sympy integral",
            sp.Eq(E(sp.exp(a * s)), mgf),
        )
    )
    first = moments["E s exp(a s)"]
    checks.append(
        residual_check("Stein's lemma E[s f(s)] = q E[f'(s)] for f = exp(a s)", first, q * a * mgf)
    )
    numerator_mean = (b / q) * first
    steps.append(
        Step(
            "Numerator / L -> E[y exp(a s)] = (b/q) E[s exp(a s)] = (b/q) d/da E exp(a s) (Stein)",
            sp.Eq(E(sp.Symbol("y") * sp.exp(a * s)), numerator_mean),
        )
    )
    head_mean = sp.simplify(numerator_mean / mgf).subs(a, omega_a)
    steps.append(
        Step(
            "One head at leading order: E[numerator] / E[denominator]",
            sp.Eq(E(sp.Symbol("yhat_h")), head_mean),
        )
    )

    # Per-sample term of head h: T_h = y exp(omega_h s - omega_h^2 q / 2); second moments.
    second = moments["E s^2 exp(a s)"]
    y2_moment = (b / q) ** 2 * second + (beta_norm2 - b**2 / q + sigma2) * mgf  # E[y^2 exp(a s)]
    cross = sp.simplify(
        y2_moment.subs(a, omega_a + omega_b) * sp.exp(-(omega_a**2 + omega_b**2) * q / 2)
    )
    steps.append(
        Step(
            "Per-sample terms T_h = y exp(omega_h s - omega_h^2 q/2): E[T_h T_h'] "
            "(cross terms of y^2 have mean 0)",
            sp.Eq(E(sp.Symbol("T_h") * sp.Symbol("T_h'")), sp.factor(cross)),
        )
    )
    covariance_full = cross - omega_a * omega_b * b**2
    covariance_leading = (1 + sigma2) * sp.exp(omega_a * omega_b * q)
    signal_part = sp.simplify(
        covariance_full
        - covariance_leading.subs(sigma2, sigma2)
        - (beta_norm2 - 1) * sp.exp(omega_a * omega_b * q)
    )
    steps.append(
        Step(
            "Covariance of two heads' per-sample terms, with E||beta||^2 = 1; "
            "keep the part that does not vanish with omega b",
            sp.Eq(sp.Symbol("L") * sp.Symbol("Cov_hh'"), covariance_leading),
        )
    )

    # Mean squared error given x_q and beta, then averaged: E[b^2 | x_q] = q/d, E q = d.
    p = sum(m * o for m, o in zip(mu, omega, strict=True))
    variance = (
        sum(
            mu[h] * mu[k] * covariance_leading.subs({omega_a: omega[h], omega_b: omega[k]})
            for h in range(head_count)
            for k in range(head_count)
        )
        / L
    )
    conditional = (p - 1) ** 2 * b**2 + sigma2 + variance
    steps.append(
        Step(
            "MSE given x_q, beta: squared bias (p - 1)^2 b^2 with p = mu^T omega, "
            "query noise sigma^2, variance mu^T Cov mu",
            conditional,
        )
    )
    averaged = conditional.subs(b**2, 1).subs(q, d)
    loss = sp.expand(averaged)
    kernel_sum = sp.Add(
        *[
            mu[h] * mu[k] * sp.exp(d * omega[h] * omega[k])
            for h in range(head_count)
            for k in range(head_count)
        ]
    )
    compact = (p - 1) ** 2 + sigma2 + sp.Mul((1 + sigma2) / L, kernel_sum, evaluate=False)
    checks.append(residual_check("averaged MSE, as displayed", averaged, compact))
    steps.append(
        Step(
            "Average: E b^2 = E[q]/d = 1 (exact); replace q = ||x_q||^2 by its mean d in "
            "the variance",
            sp.Eq(sp.Symbol("Ltilde"), compact),
        )
    )
    target = in_base_symbols(closed_form_loss(omega, mu))
    checks.append(
        residual_check(
            "Ltilde minus closed form (4.1): 1 + sigma^2 - 2 mu^T omega + "
            "mu^T(omega omega^T + c exp(d omega omega^T)) mu",
            loss,
            target,
        )
    )
    h, h2 = sp.symbols("h h'", integer=True, positive=True)
    mu_h, omega_h = sp.IndexedBase("mu"), sp.IndexedBase("omega")
    generic = (
        1
        + sigma2
        - 2 * sp.Symbol("p")
        + sp.Symbol("p") ** 2
        + c
        * sp.Sum(
            mu_h[h] * mu_h[h2] * sp.exp(d * omega_h[h] * omega_h[h2]),
            (h, 1, sp.Symbol("H")),
            (h2, 1, sp.Symbol("H")),
        )
    )
    steps.append(
        Step(
            "That is (4.1) for any H, with p = mu^T omega and c = (1 + sigma^2)/L",
            sp.Eq(sp.Symbol("Ltilde"), generic),
        )
    )

    # Dropped terms, each derived.
    chi2_mgf = sp.simplify(moments["E exp(a z^2)"] ** d)
    log_ratio = sp.series(sp.log(chi2_mgf) - a * d, a, 0, 4).removeO()
    kurtosis = (moments["E z^4"] + (d - 1)) / d  # E[x_1^2 ||x||^2] / (E x_1^2 E||x||^2)
    ratio_bias = _ratio_estimator_bias()
    signal_display = b**2 * (
        (omega_a + omega_b) ** 2 * sp.exp(omega_a * omega_b * q) - omega_a * omega_b
    )
    checks.append(
        residual_check(
            "signal part of the covariance, as displayed",
            signal_part.subs(beta_norm2, 1),
            signal_display,
        )
    )
    dropped = (
        Step(
            "||x_q||^2 fluctuations: E exp(a ||x_q||^2) = (product of d 1-D integrals) vs exp(ad); "
            "log of the ratio, a = omega_h omega_h'",
            sp.Eq(sp.log(chi2_mgf * sp.exp(-a * d)), sp.expand(log_ratio)),
        ),
        Step(
            "(d+2)/d kurtosis factor wherever b^2 meets a function of ||x_q||^2: "
            "E[(beta^T x_q)^2 ||x_q||^2] / (E(beta^T x_q)^2 E||x_q||^2), from E z^4 = 3",
            sp.factor(kurtosis),
        ),
        Step(
            "Signal part of the per-sample covariance (O(omega^2 b^2), divided by L)",
            signal_display,
        ),
        Step(
            "O(1/L) ratio-estimator bias of one head: E[N/D] - E N / E D ~ "
            "(E N Var D / (E D)^3 - Cov(N, D) / (E D)^2) / L",
            sp.Eq(sp.Symbol("bias_h"), ratio_bias),
        ),
    )
    pair_gap, pair_gap_limit = _pair_gap(signal_display, ratio_bias)
    pair_p = sp.Symbol("p", positive=True)
    checks.append(
        residual_check(
            "pair: L x (dropped signal + bias terms) -> 2p - p^2 as omega -> 0",
            pair_gap_limit,
            2 * pair_p - pair_p**2,
        )
    )
    dropped += (
        Step(
            "Together on the pair (omega, mu*), (-omega, -mu*), p = 2 omega mu*, E b^2 = 1, q = d: "
            "L x [mu^T (signal part) mu + 2 (p - 1) E(b sum_h mu_h bias_h)]; -> 2p - p^2 as "
            "omega -> 0, i.e. -> 1/L as p -> 1 (exact small-omega gap: 1/(L + D), §HE-P4.1)",
            sp.Eq(sp.Symbol("L*gap"), pair_gap),
        ),
    )
    return Derivation(
        name="approximate_loss",
        title=f"approximate loss Ltilde (4.1) from the kernel-sum predictor (3.2), H={head_count}",
        source="§HE-P4.1",
        steps=tuple(steps),
        results={
            "loss": loss,
            "head_mean": head_mean,
            "head_covariance": covariance_leading.subs(q, d),
            "per_sample_second_moment": cross,
            "ratio_bias": ratio_bias,
        },
        dropped=dropped,
        checks=tuple(checks),
        notes=("Leading order in 1/L: valid for d max_h omega_h^2 = O(1), bounded mu, large L.",),
    )


def _pair_gap(signal: sp.Basic, ratio_bias: sp.Basic) -> tuple[sp.Basic, sp.Basic]:
    """L times the dropped O(1/L) terms on the two-head pair, and its omega -> 0 limit."""
    w, p = sp.symbols("omega p", positive=True)
    omega, mu = (w, -w), (p / (2 * w), -p / (2 * w))
    pairs = [(i, j) for i in range(2) for j in range(2)]
    signal_sum = sum(
        mu[i] * mu[j] * signal.subs({omega_a: omega[i], omega_b: omega[j]}) for i, j in pairs
    )
    bias_sum = sum(mu[i] * ratio_bias.subs(omega_a, omega[i]) for i in range(2))
    gap = (signal_sum + 2 * (p - 1) * L * b * bias_sum).subs(q, d).subs(b**2, 1)
    gap = sp.factor(sp.expand(gap))
    return gap, sp.factor(sp.limit(gap, w, 0))


def _ratio_estimator_bias() -> sp.Basic:
    """First-order (delta-method) bias of numerator/denominator of one head, times L."""
    moments = gaussian_moments()
    mgf, first = moments["E exp(a s)"], moments["E s exp(a s)"]
    mean_d = mgf.subs(a, omega_a)
    mean_n = ((b / q) * first).subs(a, omega_a)
    var_d = mgf.subs(a, 2 * omega_a) - mean_d**2
    cov_nd = ((b / q) * first).subs(a, 2 * omega_a) - mean_n * mean_d
    return sp.simplify((mean_n * var_d / mean_d**3 - cov_nd / mean_d**2) / L)


def _series_remainders(omega, mu):
    """Closed forms of the k >= 2 tails of exp(d omega omega^T) = sum_k d^k/k! w_k w_k^T.

    Returns (tail of Ltilde / c, tail R_mu of dLtilde/dmu, tail R_omega of dLtilde/domega).
    """
    count = len(omega)
    tail = [
        [sp.exp(d * omega[i] * omega[j]) - 1 - d * omega[i] * omega[j] for j in range(count)]
        for i in range(count)
    ]
    loss_tail = sum(mu[i] * mu[j] * tail[i][j] for i in range(count) for j in range(count))
    grad_mu_tail = [2 * c * sum(tail[i][j] * mu[j] for j in range(count)) for i in range(count)]
    grad_omega_tail = [
        2
        * c
        * d
        * mu[i]
        * sum(mu[j] * omega[j] * (sp.exp(d * omega[i] * omega[j]) - 1) for j in range(count))
        for i in range(count)
    ]
    return loss_tail, grad_mu_tail, grad_omega_tail


def _leading_order(expression: sp.Basic, omega, t: sp.Symbol) -> tuple[int, sp.Basic]:
    """(k, leading term) of `expression` as omega -> t omega, t -> 0 (exp by Taylor polynomial)."""
    scaled = expression.subs({o: t * o for o in omega}, simultaneous=True)
    polynomial = sp.expand(scaled.replace(sp.exp, lambda z: 1 + z + z**2 / 2 + z**3 / 6))
    power = min(monomial[0] for monomial in sp.Poly(polynomial, t).monoms())
    return power, sp.factor(polynomial.coeff(t, power)) * t**power


@cache
def derive_gradient(head_count: int = 2) -> Derivation:
    """Gradient of Ltilde (4.1), its Stage-I split (§HE-S1) and the optimality condition (4.3).

    Results: ``"grad_omega"``, ``"grad_mu"`` (column matrices, in d, L, sigma2),
    ``"optimal_p"`` (the value of p = mu^T omega that minimises the low-order part).

    >>> derivation = derive_gradient(2)
    >>> derivation.all_checks_passed, derivation.results["optimal_p"]
    (True, L/(L + d*(sigma^2 + 1)))
    """
    omega, mu = heads(head_count)
    count = head_count
    loss_c = closed_form_loss(omega, mu)  # with the symbol c
    p_sym, k = sp.Symbol("p", real=True), sp.Symbol("k", integer=True, nonnegative=True)
    p = sum(m * o for m, o in zip(mu, omega, strict=True))
    x = sp.Symbol("x", real=True)
    steps: list[Step] = []
    checks: list[Check] = []

    series = sp.Sum(x**k / sp.factorial(k), (k, 0, sp.oo))
    steps.append(
        Step(
            "Entry (h, h') of exp(d omega omega^T) as a power series, x = d omega_h omega_h'",
            sp.Eq(series, series.doit()),
        )
    )
    checks.append(
        residual_check("sum_k x^k/k! = exp(x) (sympy summation)", series.doit(), sp.exp(x))
    )
    loss_tail, grad_mu_tail, grad_omega_tail = _series_remainders(omega, mu)
    split = 1 + sigma2 - 2 * p + (1 + kappa) * p**2 + c * sum(mu) ** 2 + c * loss_tail
    moment_k = sp.Function("M")(k)  # M(k) = mu^T omega^{o k}
    steps.append(
        Step(
            "k = 0 gives c (1^T mu)^2, k = 1 gives c d p^2 = kappa p^2 (p = mu^T omega); "
            "M(k) = mu^T omega^(o k)",
            sp.Eq(
                sp.Symbol("Ltilde"),
                1
                + sigma2
                - 2 * p_sym
                + (1 + kappa) * p_sym**2
                + c
                * sp.Sum(sp.IndexedBase("mu")[sp.Symbol("h")], (sp.Symbol("h"), 1, sp.Symbol("H")))
                ** 2
                + c * sp.Sum(d**k / sp.factorial(k) * moment_k**2, (k, 2, sp.oo)),
            ),
        )
    )
    checks.append(
        residual_check(
            "series split of Ltilde equals (4.1) (tail in closed form)",
            split.subs(kappa, c * d),
            loss_c,
        )
    )

    grad_mu = [sp.diff(loss_c, m) for m in mu]
    grad_omega = [sp.diff(loss_c, o) for o in omega]
    bracket = 1 - (1 + kappa) * p
    for i in range(count):
        checks.append(
            residual_check(
                f"dLtilde/dmu_{i + 1} = -2[1-(1+kappa)p] omega_{i + 1} + 2c(1^T mu) + tail",
                grad_mu[i],
                (-2 * bracket * omega[i] + 2 * c * sum(mu) + grad_mu_tail[i]).subs(kappa, c * d),
            )
        )
        checks.append(
            residual_check(
                f"dLtilde/domega_{i + 1} = -2[1-(1+kappa)p] mu_{i + 1} + tail",
                grad_omega[i],
                (-2 * bracket * mu[i] + grad_omega_tail[i]).subs(kappa, c * d),
            )
        )
    ones = sp.Matrix([1] * count)
    h = sp.Symbol("h", integer=True, positive=True)
    mu_sum = sp.Sum(sp.IndexedBase("mu")[h], (h, 1, sp.Symbol("H")))
    sign_matching = -2 * (1 - (1 + kappa) * p_sym)
    steps.append(
        Step(
            "grad_mu = sign-matching term + zero-sum OV term 2c (1^T mu) 1 + tail R_mu; "
            "R_mu = 2c sum_{k>=2} d^k/k! M(k) omega^(o k)",
            sp.Eq(
                sp.MatrixSymbol("grad_mu", count, 1),
                sp.MatAdd(
                    sign_matching * sp.MatrixSymbol("omega", count, 1),
                    2 * c * mu_sum * sp.OneMatrix(count, 1),
                    sp.MatrixSymbol("R_mu", count, 1),
                ),
                evaluate=False,
            ),
        )
    )
    steps.append(
        Step(
            "grad_omega = sign-matching term + tail R_omega; "
            "R_omega = 2c sum_{k>=1} d^(k+1)/k! M(k+1) mu o omega^(o k)",
            sp.Eq(
                sp.MatrixSymbol("grad_omega", count, 1),
                sp.MatAdd(
                    sign_matching * sp.MatrixSymbol("mu", count, 1),
                    sp.MatrixSymbol("R_omega", count, 1),
                ),
                evaluate=False,
            ),
        )
    )
    t = sp.Symbol("t", positive=True)
    (power_mu, order_mu), (power_omega, order_omega) = (
        _leading_order(tail[0], omega, t) for tail in (grad_mu_tail, grad_omega_tail)
    )
    steps.append(
        Step("Size of the tails as omega -> t omega, t -> 0 (head 1): R_mu = O(t^4)", order_mu)
    )
    steps.append(Step("... and R_omega = O(t^3)", order_omega))
    checks.append(
        Check(
            "R_mu starts at order omega^4 and R_omega at omega^3",
            sp.Tuple(power_mu, power_omega),
            (power_mu, power_omega) == (4, 3),
        )
    )

    # Gradient flow with the sign-matching terms only: mu_h and omega_h align.
    h_mu, h_omega = sp.symbols("mu_h omega_h", real=True)
    flow_mu = 2 * (1 - (1 + kappa) * p_sym) * h_omega  # -grad_mu, sign-matching part
    flow_omega = 2 * (1 - (1 + kappa) * p_sym) * h_mu  # -grad_omega, sign-matching part
    product_rate = sp.factor(flow_mu * h_omega + h_mu * flow_omega)
    difference_rate = sp.factor(flow_mu - flow_omega)
    steps.append(
        Step(
            "Sign matching: under gradient flow with these terms, d(mu_h omega_h)/dt", product_rate
        )
    )
    steps.append(
        Step("... and d(mu_h - omega_h)/dt (decays while p < 1/(1+kappa))", difference_rate)
    )
    zero_sum_rate = (ones.T * (-2 * c * sum(mu) * ones))[0, 0]
    checks.append(
        residual_check(
            f"d(1^T mu)/dt from the zero-sum term = -2cH (1^T mu) at H = {count}",
            zero_sum_rate,
            -2 * c * count * sum(mu),
        )
    )
    steps.append(
        Step(
            "Zero-sum term relaxes 1^T mu at rate 2cH: d(1^T mu)/dt from it",
            -2 * c * sp.Symbol("H") * mu_sum,
        )
    )

    low_order = -2 * p_sym + (1 + kappa) * p_sym**2
    (optimal_p,) = sp.solve(sp.diff(low_order, p_sym), p_sym)
    steps.append(
        Step(
            "Optimality condition (4.3): minimise -2p + (1+kappa)p^2 over p",
            sp.Eq(p_sym, optimal_p),
        )
    )
    optimal_p_base = in_base_symbols(optimal_p)
    steps.append(Step("In d, L, sigma^2", sp.Eq(p_sym, optimal_p_base)))
    to_base = {c: (1 + sigma2) / L}
    return Derivation(
        name="gradient",
        title=f"gradient of Ltilde, Stage-I split and optimality condition (4.3), H = {head_count}",
        source="§HE-S1, (4.3)",
        steps=tuple(steps),
        results={
            "grad_omega": sp.ImmutableMatrix([g.subs(to_base) for g in grad_omega]),
            "grad_mu": sp.ImmutableMatrix([g.subs(to_base) for g in grad_mu]),
            "optimal_p": optimal_p_base,
        },
        checks=tuple(checks),
        notes=(
            "Tails R in closed form: R_mu,h = 2c sum_j mu_j (exp(d omega_h omega_j) - 1 - "
            "d omega_h omega_j); R_omega,h = 2cd mu_h sum_j mu_j omega_j "
            "(exp(d omega_h omega_j) - 1).",
        ),
    )
