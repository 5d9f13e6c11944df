"""The sympy symbols every derivation in `theory.symbolic` shares (reference §0.1).

Results are expressed in the base symbols ``d, L, sigma2`` (and ``omega_h, mu_h,
eta, xi, w``) so that `sympy.lambdify` turns them straight into numpy functions.
The abbreviations ``c, kappa, D`` are symbols of their own for display; `in_base_symbols`
replaces them by their definitions.
"""

from __future__ import annotations

import sympy as sp

d = sp.Symbol("d", positive=True)  # covariate dimension
L = sp.Symbol("L", positive=True)  # number of in-context examples
sigma2 = sp.Symbol("sigma^2", positive=True)  # label-noise variance
eta = sp.Symbol("eta", real=True)  # one-step GD step size
xi = sp.Symbol("xi", positive=True)  # lim d / L in the proportional regime
w = sp.Symbol("omega", positive=True)  # common KQ magnitude on the manifold / single head

c = sp.Symbol("c", positive=True)  # (1 + sigma2) / L
kappa = sp.Symbol("kappa", positive=True)  # (1 + sigma2) d / L
D = sp.Symbol("D", positive=True)  # d (1 + sigma2)

DEFINITIONS = {c: (1 + sigma2) / L, kappa: (1 + sigma2) * d / L, D: d * (1 + sigma2)}


def in_base_symbols(expression: sp.Basic) -> sp.Basic:
    """Replace the abbreviations c, kappa, D by their definitions in d, L, sigma2.

    >>> in_base_symbols(kappa / c)
    d
    """
    return sp.simplify(expression.subs(DEFINITIONS))


def heads(count: int) -> tuple[tuple[sp.Symbol, ...], tuple[sp.Symbol, ...]]:
    """KQ scales (omega_1..omega_H) and OV weights (mu_1..mu_H) as real symbols.

    >>> heads(2)
    ((omega_1, omega_2), (mu_1, mu_2))
    """
    if count < 1:
        raise ValueError(f"count (number of heads) must be an integer >= 1, got {count!r}")
    omega = sp.symbols(f"omega_1:{count + 1}", real=True)
    mu = sp.symbols(f"mu_1:{count + 1}", real=True)
    return tuple(omega), tuple(mu)


def closed_form_loss(omega, mu) -> sp.Basic:
    """Ltilde of (4.1) for explicit heads.

    1 + sigma2 - 2 mu^T omega + mu^T (omega omega^T + c exp(d omega omega^T)) mu.

    Written with the abbreviation c; `in_base_symbols` expands it.

    >>> omega, mu = heads(1)
    >>> closed_form_loss(omega, mu)
    c*mu_1**2*exp(d*omega_1**2) + mu_1**2*omega_1**2 - 2*mu_1*omega_1 + sigma^2 + 1
    """
    omega_vec, mu_vec = sp.Matrix(omega), sp.Matrix(mu)
    kernel = sp.Matrix(len(omega), len(omega), lambda i, j: sp.exp(d * omega[i] * omega[j]))
    quadratic = (mu_vec.T * (omega_vec * omega_vec.T + c * kernel) * mu_vec)[0, 0]
    return sp.expand(1 + sigma2 - 2 * (mu_vec.T * omega_vec)[0, 0] + quadratic)
