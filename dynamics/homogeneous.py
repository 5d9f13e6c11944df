"""The minimum of Ltilde (4.1) over the homogeneous space Theta_bar(omega), by brute force.

Theorem 4.2(ii) of He et al. (2025) (eq. (4.13), proof D.2) is about

    Theta_bar(omega) = {omega_h in {+omega, -omega, 0} for every head, mu free}.

Here that minimum is found without the closed form: each of the 3^H - 1 sign patterns
(+1, -1, 0 per head; not all 0, which has no KQ scale) is minimised over mu by
`minimise_over_mu` (trust-region Newton with an error bound), and the least minimum is
taken. At the minimiser the heads fall in three groups (positive, negative and dummy,
omega_h = 0); the theorem says the dummy group's OV sum is zero and the positive/negative
sums are +-mu*(omega), so the step omega (sum_+ mu - sum_- mu) is 2 omega mu*(omega).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
from icl_verify.dynamics.minimise import (
    MuMinimum,
    dummy_share,
    group_sum_errors,
    group_sums,
    minimise_over_mu,
)
from icl_verify.theory import Setting


def sign_patterns(heads: int) -> np.ndarray:
    """Every pattern of +1, -1, 0 over `heads` heads except all 0, shape (3^H - 1, H).

    In `itertools.product((1, -1, 0), repeat=heads)` order (the order of the random starts).

    >>> patterns = sign_patterns(2)
    >>> patterns.shape, patterns[:3].tolist()
    ((8, 2), [[1, 1], [1, -1], [1, 0]])
    """
    patterns = np.array(list(itertools.product((1, -1, 0), repeat=heads)))  # (3^H, H)
    return patterns[np.any(patterns != 0, axis=1)]


@dataclass(frozen=True)
class HomogeneousMinimum:
    """min over Theta_bar(omega) of Ltilde, read at the minimiser, each with an error bound.

    Attributes:
        loss, loss_error: the least minimum over the sign patterns and its bound.
        eta, eta_error: omega (sum_+ mu - sum_- mu) at the best pattern (the GD step of the
            positive and negative groups; 2 omega mu*(omega) by the theorem) and its bound.
        dummy_share, dummy_share_error: the largest |sum_0 mu| / mean(|sum_+ mu|, |sum_- mu|)
            over the patterns with a dummy head whose minimum ties with the least (within the
            bounds), and its bound; 0 when no such pattern ties.
        patterns: how many sign patterns were minimised.
    """

    loss: float
    loss_error: float
    eta: float
    eta_error: float
    dummy_share: float
    dummy_share_error: float
    patterns: int


def homogeneous_minimum(
    omega: float, heads: int, setting: Setting, rng: np.random.Generator, gtol: float
) -> HomogeneousMinimum:
    """min of Ltilde over Theta_bar(omega) with H = `heads`: every sign pattern, minimised over mu.

    Args:
        omega: the common KQ scale, > 0.
        heads: number of heads H (>= 3 for a pattern with +, - and dummy heads).
        rng: draws each pattern's start mu ~ N(0, I_H), one after the other.
        gtol: the optimiser's gradient-norm tolerance.

    >>> from icl_verify.theory import manifold_loss
    >>> s = Setting(d=5, L=40, sigma2=0.1)
    >>> best = homogeneous_minimum(0.1, 3, s, np.random.default_rng(0), 1e-13)
    >>> bool(abs(best.loss - manifold_loss(0.1, s)) < 1e-12), best.patterns
    (True, 26)
    """
    patterns = sign_patterns(heads)
    minima = [
        minimise_over_mu(omega * signs, setting, rng.normal(size=heads), gtol) for signs in patterns
    ]
    losses = np.array([m.loss for m in minima])
    errors = np.array([m.loss_error for m in minima])
    best = int(np.argmin(losses))
    minimising = losses <= losses[best] + errors[best] + errors  # ties within the bounds
    sums = group_sums(minima[best].mu, patterns[best])
    sum_errors = group_sum_errors(minima[best].mu_error, patterns[best])
    share, share_error = _dummy_share(minima, patterns, minimising)
    return HomogeneousMinimum(
        loss=float(losses[best]),
        loss_error=float(errors[best]),
        eta=float(omega * (sums[0] - sums[1])),
        eta_error=float(omega * (sum_errors[0] + sum_errors[1])),
        dummy_share=share,
        dummy_share_error=share_error,
        patterns=len(patterns),
    )


def _dummy_share(
    minima: list[MuMinimum], patterns: np.ndarray, minimising: np.ndarray
) -> tuple[float, float]:
    """max |sum_0| / mean(|sum_+|, |sum_-|) over minimising patterns with dummy heads; its bound."""
    worst, worst_error = 0.0, 0.0
    for minimum, signs, keep in zip(minima, patterns, minimising, strict=True):
        if not keep or not np.any(signs == 0):
            continue
        share, error = dummy_share(
            group_sums(minimum.mu, signs), group_sum_errors(minimum.mu_error, signs)
        )
        if share >= worst:
            worst, worst_error = share, error
    return float(worst), float(worst_error)
