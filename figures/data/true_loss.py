"""Figure data of He et al. (2025) Figure 21 (`figures.true_loss`, HE-C-TRUELOSS): GD on L̃ (4.1)
at SGD's step, slowed by 1 - 1/L and as a flow (prediction), and the member mean of SGD on the
true loss (measurement), under the keys results.json has always held (``gd_omega``,
``path_loss``, ``log_norm_se``, ...).

>>> data = TrueLossData(*(np.zeros(2),) * 10)
>>> sorted(data.to_record())[:3]
['log_norm', 'log_norm_se', 'loss']
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from icl_verify.figures.data import FlatRecord


@dataclass(frozen=True)
class TrueLossTheory(FlatRecord):
    """HE-C-TRUELOSS's prediction side: on the time grid t = lr k, GD on L̃ at SGD's step
    (omega, mu per head, L̃), ln‖θ‖ of GD slowed by 1 - 1/L, L̃'s gradient flow, the manifold
    gap and optimal step in the limit, the loss path L̃ (slowed) + p(2 - p/η*)/L per loss record
    and which records lie inside d max ω_h² ≤ 1 (judged), and the checked Phase I window."""

    t: np.ndarray  # (R,)
    window: np.ndarray  # (W,) indices into t
    gd_omega: np.ndarray  # (R, H)
    gd_mu: np.ndarray  # (R, H)
    gd_loss: np.ndarray  # (R,)
    slowed_log_norm: np.ndarray  # (R,)
    flow_omega: np.ndarray  # (R, H)
    flow_mu: np.ndarray  # (R, H)
    flow_loss: np.ndarray  # (R,)
    gap_limit: float
    eta_limit: float  # 1/(1 + kappa)
    path_loss: np.ndarray  # (loss records,)
    path_inside: np.ndarray  # (loss records,) 1 inside, 0 outside


@dataclass(frozen=True)
class TrueLossData(FlatRecord):
    """HE-C-TRUELOSS's measurement: the member mean (± SE) of SGD on the true loss per logged
    t: omega and mu per head, ln‖θ‖, and the true loss at the loss records."""

    t: np.ndarray  # (R,)
    omega: np.ndarray  # (R, H)
    mu: np.ndarray  # (R, H)
    omega_se: np.ndarray
    mu_se: np.ndarray
    log_norm: np.ndarray  # (R,)
    log_norm_se: np.ndarray
    loss_t: np.ndarray  # (loss records,)
    loss: np.ndarray  # (loss records,)
    loss_se: np.ndarray
