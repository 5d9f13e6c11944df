"""Normalised attention activations, shared by every layer: one definition of each family.

He et al. (2025) §5.2 (reference §HE-5.2-ACT) replace the softmax by a normalised activation

    phi(v)_i = f(v_i) / sum_j f(v_j),            f = exp gives the softmax,

and Table 1 trains two-head models with three families besides the softmax, whose formulas the
extracted paper lost. By arithmetic on Table 1 their first-order coefficients
``a_f = f'(0) / f(0)`` are 1 (a family without a parameter), c and 2c (c in {0.5, 0.8, 1}).
This toolkit's choice, with the reasons (each f is positive near 0 and differentiable there,
which the first-order expansion needs, and has the paper's a_f):

- ``softmax``: f(x) = exp(x), a_f = 1, the paper's reference column;
- ``tanh``: f(x) = 1 + tanh(x) (= 2 sigmoid(2x)), a_f = 1, no parameter; bounded and positive
  everywhere; f''(0) = 0, so it differs from exp at second order;
- ``elu:c``: f(x) = elu(c x) + 1 (exp(cx) for x < 0, 1 + cx for x >= 0), a_f = c: the usual
  positive feature map of linear-attention papers; C^1 at 0 (its f'' jumps there);
- ``quadratic:c``: f(x) = (1 + c x)^2, a_f = 2c: the simplest f with a_f = 2c; its kernel mean
  is exact in closed form.

Any other f can be given as a sympy expression in ``x``: the spec ``"f:1 + x + x**2/2"``.

An `Activation` holds the spec and its sympy expression, the one definition: `theory` derives
a_f and the kernel mean from the expression, `numerics` evaluates it on tensors through
`Activation.torch_function` (sympy's ``lambdify`` to torch, so the two cannot disagree).
Plain Python and sympy (imported on use), so every layer may import this module.

>>> parse_activation("elu:0.5").first_order_name
'a_f = c = 0.5'
>>> parse_activation("quadratic:0.8").expression
(0.8*x + 1)**2
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property

__all__ = ["FAMILIES", "Activation", "ActivationError", "parse_activation"]

#: family -> (f(x) as a sympy expression in x and the parameter c, a_f in words).
FAMILIES: dict[str, tuple[str, str]] = {
    "softmax": ("exp(x)", "a_f = 1"),
    "tanh": ("1 + tanh(x)", "a_f = 1"),
    "elu": ("Piecewise((exp(c*x), x < 0), (1 + c*x, True))", "a_f = c"),
    "quadratic": ("(1 + c*x)**2", "a_f = 2c"),
}
WITH_PARAMETER = ("elu", "quadratic")
CUSTOM = "f"  # spec "f:<expression in x>"


class ActivationError(ValueError):
    """A malformed activation spec or an f the theory cannot use; the message is one line."""


@dataclass(frozen=True)
class Activation:
    """A normalised activation f: its spec (``"softmax"``, ``"tanh"``, ``"elu:0.5"``,
    ``"quadratic:1"`` or ``"f:<expression in x>"``), family and parameter c (None if none).

    >>> act = parse_activation("tanh")
    >>> act.spec, act.c, str(act.expression)
    ('tanh', None, 'tanh(x) + 1')
    """

    spec: str
    family: str
    c: float | None = None
    source: str = ""  # the expression text of a custom f

    @property
    def symbol(self):
        """The sympy symbol x of `expression` (real)."""
        import sympy as sp

        return sp.Symbol("x", real=True)

    @cached_property
    def expression(self):
        """f(x) as a sympy expression in `symbol`."""
        import sympy as sp

        text = self.source if self.family == CUSTOM else FAMILIES[self.family][0]
        names = {"x": self.symbol, "c": sp.Float(self.c) if self.c is not None else None}
        try:
            expression = sp.sympify(text, locals={k: v for k, v in names.items() if v is not None})
        except (sp.SympifyError, SyntaxError, TypeError) as error:
            raise ActivationError(
                f"activation {self.spec!r}: f must be a sympy expression in x, got {text!r} "
                f"({type(error).__name__})"
            ) from None
        free = expression.free_symbols - {self.symbol}
        if free:
            raise ActivationError(
                f"activation {self.spec!r}: f may use only the variable x, got "
                f"{', '.join(sorted(map(str, free)))}"
            )
        return expression

    def torch_function(self):
        """f as a function of a torch tensor (elementwise), from `expression` by lambdify."""
        import sympy as sp

        return sp.lambdify(self.symbol, self.expression, modules="torch")

    @property
    def first_order_name(self) -> str:
        """a_f in the family's words, e.g. ``'a_f = 2c = 1.6'``."""
        if self.family == CUSTOM:
            return "a_f = f'(0)/f(0)"
        words = FAMILIES[self.family][1]
        if self.c is None:
            return words
        factor = 2.0 if self.family == "quadratic" else 1.0
        return f"{words} = {factor * self.c:g}"


def parse_activation(spec: str) -> Activation:
    """The `Activation` of a spec; a malformed spec raises `ActivationError` in one line.

    >>> parse_activation("quadratic:1").c
    1.0
    >>> parse_activation("elu")
    Traceback (most recent call last):
    ...
    icl_verify.activations.ActivationError: activation 'elu' needs a parameter: 'elu:c' with c > 0
    """
    if not isinstance(spec, str) or not spec.strip():
        raise ActivationError(f"activation must be a non-empty string, got {spec!r}")
    family, _, rest = spec.strip().partition(":")
    family = family.strip()
    if family == CUSTOM:
        if not rest.strip():
            raise ActivationError(f"activation {spec!r}: give f as 'f:<expression in x>'")
        activation = Activation(spec, CUSTOM, None, rest.strip())
        _ = activation.expression  # parse now: a bad expression is refused here
        return activation
    if family not in FAMILIES:
        raise ActivationError(
            f"activation must be one of {', '.join(FAMILIES)} (with ':c' for "
            f"{' and '.join(WITH_PARAMETER)}) or 'f:<expression in x>', got {spec!r}"
        )
    if family in WITH_PARAMETER:
        try:
            c = float(rest)
        except ValueError:
            raise ActivationError(
                f"activation {spec!r} needs a parameter: '{family}:c' with c > 0"
            ) from None
        if not (math.isfinite(c) and c > 0):
            raise ActivationError(f"activation {spec!r}: c must be a finite number > 0, got {c}")
        return Activation(f"{family}:{c:g}", family, c)
    if rest:
        raise ActivationError(f"activation {family!r} takes no parameter, got {spec!r}")
    return Activation(family, family)
