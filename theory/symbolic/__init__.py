"""Sympy derivations of the formulas of He et al. (2025), Sections 4.1-4.3, that `theory` evaluates.

Each derivation is a function returning a `Derivation` (steps, results, dropped
terms, verified identities; `plain()` and `latex()` renderings):

- `derive_approximate_loss`: Ltilde of (4.1) from the kernel-sum predictor (3.2) (§HE-P4.1);
- `derive_gradient`: its gradient, the Stage-I split and condition (4.3) (§HE-S1);
- `derive_manifold`: mu*(omega) (4.6), S_omega (4.7), learning rate (4.8) (§HE-MAN);
- `derive_single_head`: omega* = 1/sqrt(d), mu*, Ltilde* (§HE-4.12);
- `derive_gd_risks`: exact risks of one-step GD and debiased GD (§HE-4.3-RISK);
- `derive_bayes_limit`: Bayes risk limit from Marchenko-Pastur (§HE-T4.2iii);
- `derive_frozen_linear_attention`: linear attention trained at L, tested at L' (§HE-5.1-LENGTH);
- `derive_softmax_pair`: a softmax head pair emulates a linear head, (5.2) (§HE-5.1-SM2LIN);
- `derive_normalised_activation`: two heads with a normalised activation f as debiased GD: a_f,
  the kernel-mean step to second order (§HE-5.2-ACT);
- `derive_softmax_norm`: E L||softmax(omega X^T x_q)||^2 to O(1/L^2) and its regime (Figure 20).
- `derive_preconditioned_gd`: risk and optimal preconditioners of one-step GD on N(0, Sigma),
  vanilla and debiased (§HE-5.3-KMS, Lemma E.4).

`DERIVATIONS` maps a name to its function and a one-line summary; `derive(name)`
runs one. Results are cached, so a second call is free.

>>> sorted(DERIVATIONS)[:2]
['approximate_loss', 'bayes_limit']
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from icl_verify.theory.symbolic.approximate_loss import derive_approximate_loss, derive_gradient
from icl_verify.theory.symbolic.derivation import Check, Derivation, Step
from icl_verify.theory.symbolic.linear_attention import (
    derive_frozen_linear_attention,
    derive_softmax_pair,
)
from icl_verify.theory.symbolic.manifold import derive_manifold, derive_single_head
from icl_verify.theory.symbolic.normalised_attention import derive_normalised_activation
from icl_verify.theory.symbolic.preconditioning import derive_preconditioned_gd
from icl_verify.theory.symbolic.risks import derive_bayes_limit, derive_gd_risks
from icl_verify.theory.symbolic.softmax_norm import derive_softmax_norm


@dataclass(frozen=True)
class RegisteredDerivation:
    """A derivation in the registry: the function that runs it and what it derives, in one line."""

    function: Callable[[], Derivation]
    summary: str


DERIVATIONS: dict[str, RegisteredDerivation] = {
    "approximate_loss": RegisteredDerivation(
        derive_approximate_loss,
        "Ltilde (4.1) from the kernel-sum predictor (3.2) at leading order in 1/L",
    ),
    "gradient": RegisteredDerivation(
        derive_gradient, "gradient of Ltilde: zero-sum and sign-matching terms, condition (4.3)"
    ),
    "manifold": RegisteredDerivation(
        derive_manifold, "solution manifold: mu*(omega) (4.6), S_omega (4.7), learning rate (4.8)"
    ),
    "single_head": RegisteredDerivation(
        derive_single_head, "single-head optimum omega* = 1/sqrt(d), mu*, Ltilde* (4.12)"
    ),
    "gd_risks": RegisteredDerivation(
        derive_gd_risks, "exact finite-(d, L) risks of vanilla and debiased one-step GD"
    ),
    "bayes_limit": RegisteredDerivation(
        derive_bayes_limit, "Bayes risk as d/L -> xi from the Marchenko-Pastur Stieltjes transform"
    ),
    "frozen_linear_attention": RegisteredDerivation(
        derive_frozen_linear_attention,
        "linear attention trained at L, tested at L': risk R_lin(L') and argmin L + (D+1)/2",
    ),
    "softmax_pair": RegisteredDerivation(
        derive_softmax_pair,
        "softmax pair (eps KQ, OV/2eps), (-eps KQ, -OV/2eps) = linear - centring + O(eps^2) (5.2)",
    ),
    "normalised_activation": RegisteredDerivation(
        derive_normalised_activation,
        "normalised activation f: a_f per family, kernel-mean step 2 a omega mu [1 + O(omega^2)]",
    ),
    "softmax_norm": RegisteredDerivation(
        derive_softmax_norm,
        "L ||softmax(omega X^T x_q)||^2 -> e^{omega^2 ||x_q||^2}, its 1/L and 1/L^2 terms, regime",
    ),
    "preconditioned_gd": RegisteredDerivation(
        derive_preconditioned_gd,
        "one-step GD on N(0, Sigma): risk and optimal preconditioners, vanilla and debiased (5.6)",
    ),
}


def derive(name: str) -> Derivation:
    """Run the registered derivation `name` (one of `DERIVATIONS`).

    >>> derive("single_head").results["omega_star"]
    1/sqrt(d)
    >>> derive("nope")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: name must be one of approximate_loss, gradient, ...; got 'nope'
    """
    if name not in DERIVATIONS:
        raise ValueError(f"name must be one of {', '.join(DERIVATIONS)}; got {name!r}")
    return DERIVATIONS[name].function()


__all__ = [
    "DERIVATIONS",
    "Check",
    "Derivation",
    "RegisteredDerivation",
    "Step",
    "derive",
    "derive_approximate_loss",
    "derive_bayes_limit",
    "derive_frozen_linear_attention",
    "derive_gd_risks",
    "derive_gradient",
    "derive_manifold",
    "derive_normalised_activation",
    "derive_preconditioned_gd",
    "derive_single_head",
    "derive_softmax_norm",
    "derive_softmax_pair",
]
