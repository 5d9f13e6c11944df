"""The squared norm of a softmax vector over Gaussian scores, He et al. (2025) App. C (Figure 20).

For p = softmax(omega X^T x_q) over L keys x_i, x_q ~ N(0, I_d), N = L ||p||^2 is the ratio
of two sample means, mean(e^{2 s_i}) / mean(e^{s_i})^2 with s_i = omega x_i^T x_q. Given
r = ||x_q||^2 and u = e^{omega^2 r} (derivation "softmax_norm", `theory.symbolic`):

    E[N | r] = u - u(u - 1)(2u - 1)/L + u(u - 1)^2 (3u^3 + 6u^2 - 7u + 1)/L^2 + O(L^-3),

and averaged over r ~ chi^2_d with E u^q = M(q omega^2) = (1 - 2 q omega^2)^{-d/2}:

    E[N] = M(w2) - [2 M(3 w2) - 3 M(2 w2) + M(w2)]/L
           + [3 M(6 w2) - 16 M(4 w2) + 21 M(3 w2) - 9 M(2 w2) + M(w2)]/L^2 + ...,   w2 = omega^2.

The approximation the proof of Prop. 4.1 uses is the leading term: ||p||^2 ~ e^{omega^2
||x_q||^2}/L ~ e^{omega^2 d}/L (-> 1/L as omega^2 d -> 0). Its regime: the expansion is in
the per-key relative variance of e^{2 s} at r = d, rho = (e^{4 omega^2 d} - 1)/L; it holds
when rho << 1 (L >> e^{4 omega^2 d}); it fails for d proportional to L at fixed omega and
holds again for omega = c d^{-1/2}. The r-average of the O(1/L^2) term exists for
12 omega^2 < 1.
"""

from __future__ import annotations

import math
import numbers
from typing import NamedTuple

import numpy as np

# E[N | r] = sum_k L^-k sum_q coefficient * u^q: {power q of u: coefficient} per order k
CONDITIONAL_TERMS = (
    {1: 1.0},
    {3: -2.0, 2: 3.0, 1: -1.0},
    {6: 3.0, 4: -16.0, 3: 21.0, 2: -9.0, 1: 1.0},
)
MOMENT_LIMIT = 1.0 / 12.0  # omega^2 below which every r-averaged term exists (u^6: 12 omega^2 < 1)


class NormExpansion(NamedTuple):
    """E[L ||p||^2] = leading + first / L + second / L^2 + O(L^-3) (coefficients, float64)."""

    leading: np.ndarray | float
    first: np.ndarray | float
    second: np.ndarray | float

    def value(self, L, order: int = 1):
        """The expansion truncated after the L^-order term (order 0, 1 or 2).

        >>> NormExpansion(1.0, -2.0, 4.0).value(10, order=1)
        0.8
        """
        terms = (self.leading, self.first, self.second)[: order + 1]
        return _plain(sum(term / np.asarray(L, dtype=float) ** k for k, term in enumerate(terms)))

    def next_term(self, L, order: int = 1):
        """|The first neglected term| of the order-`order` truncation (order 0 or 1).

        >>> NormExpansion(1.0, -2.0, 4.0).next_term(10, order=1)
        0.04
        """
        term = (self.first, self.second)[order]
        return _plain(np.abs(term) / np.asarray(L, dtype=float) ** (order + 1))


def _plain(value):
    """A float for a 0-d result, else the array."""
    value = np.asarray(value, dtype=float)
    return value if value.ndim else float(value)


def _omega(omega) -> np.ndarray:
    values = np.asarray(omega, dtype=float)
    if not np.all(np.isfinite(values)):
        raise ValueError(f"omega must be finite real numbers, got {omega!r}")
    return values


def _positive_int(name: str, value) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
    return int(value)


def conditional_norm_expansion(omega, r) -> NormExpansion:
    """E[L ||p||^2 | ||x_q||^2 = r] to O(1/L^2): coefficients in u = e^{omega^2 r} (module doc).

    Args:
        omega: score scale, any shape (broadcast with r).
        r: squared query norm(s) >= 0.

    >>> e = conditional_norm_expansion(0.2, 5.0)
    >>> round(e.leading, 6), round(e.first, 6), round(e.second, 6)
    (1.221403, -0.390166, 0.411171)
    """
    omega, r = _omega(omega), np.asarray(r, dtype=float)
    if np.any(~(r >= 0)):
        raise ValueError(f"r must be real numbers >= 0, got {r!r}")
    u = np.exp(omega**2 * r)
    coefficients = [sum(c * u**q for q, c in terms.items()) for terms in CONDITIONAL_TERMS]
    return NormExpansion(*(_plain(c) for c in coefficients))


def chi2_mgf(t, d: int):
    """E e^{t R} for R ~ chi^2_d: (1 - 2t)^{-d/2} for t < 1/2, inf beyond.

    >>> round(chi2_mgf(0.04, 5), 6)
    1.231772
    >>> chi2_mgf(0.5, 5)
    inf
    """
    d = _positive_int("d", d)
    t = np.asarray(t, dtype=float)
    inside = t < 0.5
    value = np.where(inside, np.exp(-0.5 * d * np.log1p(-2 * np.where(inside, t, 0.0))), np.inf)
    return _plain(value)


def softmax_norm_expansion(omega, d: int) -> NormExpansion:
    """E[L ||p||^2] over x_q ~ N(0, I_d) to O(1/L^2) (module doc; Figure 20).

    A coefficient is inf where its r-average does not exist (2 q omega^2 >= 1 for a power
    u^q it needs: the first-order term needs omega^2 < 1/6, the second omega^2 < 1/12).

    >>> e = softmax_norm_expansion(0.2, 5)
    >>> round(e.leading, 4), round(e.first, 4), round(e.second, 4)
    (1.2318, -0.5647, 2.4439)
    >>> round(e.value(40), 4)  # the leading term with its 1/L correction at L = 40
    1.2177
    """
    omega2 = _omega(omega) ** 2
    coefficients = [
        sum(c * chi2_mgf(q * omega2, d) for q, c in terms.items()) for terms in CONDITIONAL_TERMS
    ]
    return NormExpansion(*(_plain(c) for c in coefficients))


def softmax_norm_regime(omega, d: int, L) -> np.ndarray | float:
    """rho = (e^{4 omega^2 d} - 1)/L: relative variance of the mean of e^{2 s} at r = d.

    The expansion of `softmax_norm_expansion` is in powers of such per-key relative variances
    over L; it holds for rho << 1 and fails for rho >~ 1 (module doc).

    >>> round(softmax_norm_regime(0.2, 5, 40), 4)
    0.0306
    >>> round(softmax_norm_regime(0.2, 80, 640), 1)  # d = L/8 at fixed omega: past the regime
    566.0
    """
    d = _positive_int("d", d)
    lengths = np.asarray(L, dtype=float)
    if np.any(~(lengths >= 1)):
        raise ValueError(f"L must be numbers >= 1, got {L!r}")
    rho = np.expm1(4 * _omega(omega) ** 2 * d) / lengths
    return _plain(rho)


def limit_density(y, omega: float, d: int) -> np.ndarray:
    """Density of the L -> infinity limit e^{omega^2 R}, R ~ chi^2_d, of L ||p||^2 at y >= 1.

    f(y) = chi2_pdf(log(y) / omega^2; d) / (omega^2 y), zero at y < 1.

    >>> from scipy.integrate import quad
    >>> round(quad(limit_density, 1, np.inf, args=(0.2, 5))[0], 6)
    1.0
    """
    omega2 = float(_omega(omega)) ** 2
    if omega2 == 0:
        raise ValueError("omega must be nonzero for a density (the limit is the point 1)")
    d = _positive_int("d", d)
    y = np.asarray(y, dtype=float)
    r = np.log(np.maximum(y, 1.0)) / omega2
    with np.errstate(divide="ignore"):
        log_pdf = (d / 2 - 1) * np.log(r) - r / 2 - (d / 2) * math.log(2) - math.lgamma(d / 2)
    return np.where(y > 1, np.exp(log_pdf) / (omega2 * y), 0.0)


class TiltedMoments(NamedTuple):
    """Moments of the unnormalised attention weight e^{omega s}, s = x^T x_q, over one example
    (x ~ N(0, I_d), y = beta^T x + eps, eps ~ N(0, sigma2)), given x_q and beta."""

    weight: np.ndarray  # E[e^{omega s}]
    label: np.ndarray  # E[y e^{omega s}]
    square: np.ndarray  # E[y^2 e^{omega s}]


def tilted_moments(omega, x_query, beta, sigma2: float) -> TiltedMoments:
    """Gaussian integration by parts (Stein's lemma, He et al. 2025 App. C, the step behind
    (4.1); reference §HE-P4.1): under the weight e^{omega s} the example is N(omega x_q, I_d)
    tilted by e^{omega^2 r / 2}, r = ||x_q||^2, so

        E[e^{omega s}]       = e^{omega^2 r / 2},
        E[y e^{omega s}]     = omega beta^T x_q e^{omega^2 r / 2},
        E[y^2 e^{omega s}]   = ((omega beta^T x_q)^2 + ||beta||^2 + sigma2) e^{omega^2 r / 2}.

    ``omega`` (...,), ``x_query`` (..., d), ``beta`` (..., d), broadcast together.

    >>> m = tilted_moments(0.0, [1.0, 2.0], [0.5, 0.5], 0.1)  # omega = 0: plain moments
    >>> float(m.weight), float(m.label), round(float(m.square), 12)
    (1.0, 0.0, 0.6)
    """
    omega = np.asarray(omega, dtype=float)
    x_query, beta = np.asarray(x_query, dtype=float), np.asarray(beta, dtype=float)
    tilt = np.exp(0.5 * omega * omega * np.sum(x_query * x_query, axis=-1))
    mean = omega * np.sum(beta * x_query, axis=-1)  # E[y] under the tilted law
    square = mean * mean + np.sum(beta * beta, axis=-1) + sigma2
    return TiltedMoments(tilt, mean * tilt, square * tilt)
