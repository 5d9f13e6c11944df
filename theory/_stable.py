"""Overflow-safe helpers shared by the closed forms: scaled exponentials and sinh(u)/u."""

from __future__ import annotations

import numpy as np


def times_exp(value: np.ndarray, log_scale: np.ndarray) -> np.ndarray:
    """value * exp(log_scale), finite whenever the product is representable.

    A value of exactly zero gives zero even when exp(log_scale) overflows.
    """
    value, log_scale = np.broadcast_arrays(np.asarray(value, float), np.asarray(log_scale, float))
    with np.errstate(divide="ignore", over="ignore"):
        magnitude = np.exp(np.log(np.abs(value)) + log_scale)
    return np.where(value == 0.0, 0.0, np.sign(value) * magnitude)


def sinhc(u: np.ndarray) -> np.ndarray:
    """sinh(u) / u with the limit 1 at u = 0; inf once sinh overflows (u > ~710)."""
    u = np.asarray(u, dtype=float)
    small = np.abs(u) < 1e-4
    safe = np.where(small, 1.0, u)
    with np.errstate(over="ignore"):
        ratio = np.sinh(safe) / safe
    return np.where(small, 1.0 + u * u / 6.0, ratio)
