"""Head vocabulary shared by every layer: positive, negative and dummy heads.

He et al. (2025), §4.2 (reference §HE-MAN, §HE-4.10): at the optimum each head has KQ
scale omega_h in {+omega, -omega, 0}; to first order in omega a head adds
``mu_h sum_i y_i (1 + omega_h u_i) / L`` to the prediction, so its share of the
GD-like term is omega_h mu_h (the pair (omega, mu), (-omega, -mu) gives eta = 2 omega mu).
A head is *dummy* when that share is negligible,

    |omega_h mu_h| < DUMMY_THRESHOLD * max_k |omega_k mu_k|,

(it may still add ``mu_h ybar``, which the zero-sum ratio counts), and otherwise
*positive* or *negative* by the sign of omega_h. This module is the one definition:
`numerics._core.circuits` (trained models), `dynamics.trajectory` (ODE solutions) and the
claims all classify heads with `head_types`. Plain numpy, so every layer may import it.
"""

from __future__ import annotations

import numpy as np

POSITIVE, NEGATIVE, DUMMY = 1, -1, 0  # values returned by head_types

#: A dummy head carries under 5% of the largest head's share omega_h mu_h of the GD-like term.
DUMMY_THRESHOLD = 0.05


def head_scales(KQ, OV, d: int) -> tuple[np.ndarray, np.ndarray]:
    """The effective head scales (3.1) of circuits, in numpy: ``omega_h = mean diag(KQ11_h)``
    (the first d diagonal entries), ``mu_h = OV_h[-1, -1]``; `numerics.omega_mu` is the
    same in torch (for tensors on a device).

    KQ, OV: (..., D, D) -> omega, mu of shape (...).

    >>> omega, mu = head_scales(np.diag([0.2, 0.4, 9.0]), np.diag([0.0, 0.0, 3.0]), d=2)
    >>> round(float(omega), 12), float(mu)
    (0.3, 3.0)
    """
    KQ, OV = np.asarray(KQ, dtype=float), np.asarray(OV, dtype=float)
    return np.diagonal(KQ[..., :d, :d], axis1=-2, axis2=-1).mean(axis=-1), OV[..., -1, -1]


def head_types(omega, mu, threshold: float = DUMMY_THRESHOLD) -> np.ndarray:
    """POSITIVE (1), NEGATIVE (-1) or DUMMY (0) per head, over the last axis (heads).

    Args:
        omega, mu: effective KQ scales and OV weights, shape (..., H).
        threshold: the dummy threshold relative to the largest |omega_h mu_h|.

    All heads are dummy where every product is zero.

    >>> head_types([0.4, -0.4, 0.3], [1.0, -1.0, 0.01]).tolist()
    [1, -1, 0]
    """
    omega, mu = np.asarray(omega, dtype=float), np.asarray(mu, dtype=float)
    share = np.abs(omega * mu)  # (..., H)
    active = share > threshold * share.max(axis=-1, keepdims=True)
    active &= share > 0
    return np.where(active, np.sign(omega), DUMMY).astype(int)


#: The four modes of multi-head attention on K tasks, He et al. (2025) §5.4 (reference
#: §HE-5.4-MT), by the codes `numerics.multitask_mode` returns and
#: `theory.paper_mode` predicts: I one weighted kernel regressor, II one ± pair shared
#: by every task, III a ± pair per task, IV superposition (a head serves two tasks with opposite
#: signs); 0 when a trained model fits none of them.
MODE_NAMES = {0: "unclassified", 1: "I", 2: "II", 3: "III", 4: "IV"}
