"""Trained ensembles built by hand: members with the pattern KQ11_h = omega_h I, OV last row
(0, ..., 0, mu_h) (He et al. (3.1)), whose predictions are known in closed form."""

import numpy as np
import pytest
import torch
from icl_verify.numerics import MultiHeadAttention, TrainedEnsemble
from icl_verify.numerics._core.ensemble import WEIGHT_NAMES


@pytest.fixture
def pattern_ensemble():
    """``build(omega, mu, *, d, L, sigma2=0.1, attention="softmax")``: a `TrainedEnsemble` whose
    member e has heads with KQ11_h = omega[e][h] I and OV last row (0, ..., 0, mu[e][h])."""

    def build(omega, mu, *, d, L, sigma2=0.1, attention="softmax"):
        omega = torch.as_tensor(omega, dtype=torch.float64)  # (E, H)
        mu = torch.as_tensor(mu, dtype=torch.float64)  # (E, H)
        E, H = omega.shape
        D = d + 1
        KQ = torch.zeros(E, H, D, D, dtype=torch.float64)
        KQ[..., :d, :d] = omega[..., None, None] * torch.eye(d, dtype=torch.float64)
        OV = torch.zeros(E, H, D, D, dtype=torch.float64)
        OV[..., -1, -1] = mu
        model = MultiHeadAttention.from_circuits(KQ, OV, attention, L)
        blank = np.zeros((1, E, H))
        return TrainedEnsemble(
            d=d,
            L=L,
            sigma2=sigma2,
            attention=attention,
            heads=np.full(E, H),
            weights={name: getattr(model, name).detach().numpy() for name in WEIGHT_NAMES},
            steps=np.array([1]),
            test_loss=np.zeros((1, E)),
            omega=blank + omega.numpy(),
            mu=blank + mu.numpy(),
            KQ_history=KQ.numpy()[None],
            OV_history=OV.numpy()[None],
        )

    return build
