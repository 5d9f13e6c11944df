"""A sampled solution of a flow on Ltilde and the structure read off it (He et al., Sec. 4.1-4.2).

`Trajectory` holds t, omega(t), mu(t), Ltilde(t) and answers, per time, the
questions of Stage I/II and of the solution manifold S_omega (4.7)
(reference/he2025.md §HE-S1, §HE-S2, §HE-MAN):

- head types: positive (omega_h > 0), negative (omega_h < 0) or dummy, by the one
  definition of the project, `icl_verify.heads.head_types`: a head is *dummy* when its
  share |omega_h mu_h| of the GD-like term is below 5% of the largest head's (a head with
  mu_h = 0 contributes nothing to Ltilde whatever its omega_h, and one with omega_h = 0
  only adds mu_h ybar, which the zero-sum ratio counts);
- sign matching: every non-dummy head has sign(mu_h) = sign(omega_h);
- zero-sum OV: the ratio |sum_h mu_h| / sum_h |mu_h| (0 exactly when zero-sum);
- homogeneous KQ scaling: the dispersion std/mean of |omega_h| over non-dummy heads;
- distance to S_omega: the residual defined in `Trajectory.manifold_distance`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
from icl_verify.theory import Setting, manifold_mu

from icl_verify.heads import DUMMY, DUMMY_THRESHOLD, NEGATIVE, POSITIVE, head_types

__all__ = ["DUMMY", "DUMMY_THRESHOLD", "NEGATIVE", "POSITIVE", "EventRecord", "Trajectory"]


@dataclass(frozen=True)
class EventRecord:
    """The times (N,) at which an event function crossed zero, and the heads there, (N, H) each."""

    t: np.ndarray
    omega: np.ndarray
    mu: np.ndarray


@dataclass(frozen=True)
class Trajectory:
    """The path t -> theta(t) = (omega(t), mu(t)) of H heads at T times, with Ltilde along it.

    Attributes:
        t: times, shape (T,), in units of the flow's time (t = lr * k for gradient descent).
        omega: KQ scales, shape (T, H).
        mu: OV weights, shape (T, H).
        loss: Ltilde(omega(t), mu(t)) of eq. (4.1), shape (T,).
        setting: the problem setting the loss was evaluated in.
        events: for each named event of the solve, where it fired.

    >>> from icl_verify.theory import Setting
    >>> s = Setting(d=5, L=40, sigma2=0.1)
    >>> path = Trajectory(t=np.array([0.0]), omega=np.array([[0.1, -0.1, 0.07]]),
    ...                   mu=np.array([[4.3954, -4.3954, 0.0]]), loss=np.array([0.22]), setting=s)
    >>> path.head_types().tolist(), path.zero_sum_ratio.tolist(), path.sign_matched().tolist()
    ([[1, -1, 0]], [0.0], [True])
    >>> round(float(path.manifold_distance()[0]), 4)  # on S_omega up to the rounded mu*
    0.0
    """

    t: np.ndarray
    omega: np.ndarray
    mu: np.ndarray
    loss: np.ndarray
    setting: Setting
    events: Mapping[str, EventRecord] = field(default_factory=dict)

    def __post_init__(self) -> None:
        t, omega, mu, loss = (
            np.asarray(a, dtype=float) for a in (self.t, self.omega, self.mu, self.loss)
        )
        if t.ndim != 1 or omega.ndim != 2 or omega.shape != mu.shape or omega.shape[0] != t.size:
            raise ValueError(
                f"need t (T,), omega and mu (T, H); got {t.shape}, {omega.shape}, {mu.shape}"
            )
        if loss.shape != t.shape:
            raise ValueError(f"loss must have shape {t.shape}, got {loss.shape}")
        for name, value in (("t", t), ("omega", omega), ("mu", mu), ("loss", loss)):
            value.setflags(write=False)
            object.__setattr__(self, name, value)

    @property
    def num_heads(self) -> int:
        """H."""
        return self.omega.shape[1]

    @property
    def mu_dot_omega(self) -> np.ndarray:
        """p(t) = mu^T omega, shape (T,): the effective GD step (2 omega mu for two heads)."""
        return np.sum(self.mu * self.omega, axis=1)

    @property
    def zero_sum_ratio(self) -> np.ndarray:
        """|sum_h mu_h| / sum_h |mu_h|, shape (T,): 0 if zero-sum, 1 if all mu_h share a sign."""
        with np.errstate(invalid="ignore"):
            return np.abs(self.mu.sum(axis=1)) / np.abs(self.mu).sum(axis=1)

    def head_types(self, threshold: float = DUMMY_THRESHOLD) -> np.ndarray:
        """POSITIVE (1), NEGATIVE (-1) or DUMMY (0) per head and time, shape (T, H).

        `icl_verify.heads.head_types` at every time: dummy when |omega_h mu_h| <=
        threshold * max_k |omega_k mu_k| (all heads dummy where every product is 0).
        """
        return head_types(self.omega, self.mu, threshold)

    def sign_matched(self, threshold: float = DUMMY_THRESHOLD) -> np.ndarray:
        """True where every non-dummy head has mu_h omega_h > 0, shape (T,)."""
        types = self.head_types(threshold)
        return np.all((types == DUMMY) | (self.mu * types > 0), axis=1)

    def kq_dispersion(self, threshold: float = DUMMY_THRESHOLD) -> np.ndarray:
        """std/mean of |omega_h| over non-dummy heads, shape (T,): 0 for homogeneous KQ (4.4)."""
        active = self.head_types(threshold) != DUMMY
        size = np.where(active, np.abs(self.omega), np.nan)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.nanstd(size, axis=1) / np.nanmean(size, axis=1)

    def manifold_distance(self, threshold: float = DUMMY_THRESHOLD) -> np.ndarray:
        """Residual of the equations of S_omega (4.7) for the current head types, shape (T,).

        With A the non-dummy heads, s_h their signs, wbar = mean_{h in A} |omega_h| and
        m = mu*(wbar) of (4.6), the distance is the square root of

            sum_{h in A} (|omega_h| - wbar)^2                  (homogeneous KQ scaling)
          + sum_{h dummy} mu_h^2                                (dummy heads are off)
          + sum_{h in A} min(0, s_h mu_h)^2                     (sign matching)
          + (sum_{s_h = +1} mu_h - m)^2 + (sum_{s_h = -1} mu_h + m)^2   (group sums = +-mu*)

        It is zero exactly on S_omega (with omega = wbar) and infinite when every head is dummy.
        A dummy head's omega_h is left free (Ltilde does not depend on it when mu_h = 0),
        whereas (4.7) as reconstructed in the reference also asks omega_h = 0 there.
        """
        types = self.head_types(threshold)
        active = types != DUMMY
        count = active.sum(axis=1)
        size = np.abs(self.omega)
        with np.errstate(invalid="ignore", divide="ignore"):
            wbar = np.where(active, size, 0.0).sum(axis=1) / count
            target = manifold_mu(wbar, self.setting)
        spread = np.where(active, size - wbar[:, None], 0.0)
        dummy = np.where(active, 0.0, self.mu)
        wrong_sign = np.minimum(0.0, self.mu * types)
        positive = np.where(types == POSITIVE, self.mu, 0.0).sum(axis=1) - target
        negative = np.where(types == NEGATIVE, self.mu, 0.0).sum(axis=1) + target
        squares = (spread**2 + dummy**2 + wrong_sign**2).sum(axis=1) + positive**2 + negative**2
        return np.where(count > 0, np.sqrt(squares), np.inf)
