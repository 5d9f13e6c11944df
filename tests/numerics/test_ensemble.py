"""A trained ensemble equals its members trained alone (float64): exact since Adam is element-wise
and the ensemble loss is the sum of the members' mean losses."""

import pytest
import torch
from icl_verify.numerics import AttentionConfig, LinearRegressionTask, TrainConfig, train

D_COV, L = 3, 6


@pytest.mark.parametrize("optimizer", ["adam", "adamw", "sgd"])
def test_ensemble_members_follow_their_solo_runs(optimizer):
    heads = (1, 2, 3)  # member 0 and 1 are padded with inactive heads
    tasks = tuple(LinearRegressionTask(D_COV, L, sigma2) for sigma2 in (0.1, 0.5, 0.0))
    config = TrainConfig(
        optimizer=optimizer,
        lr=3e-2,
        weight_decay=0.01,
        batch=32,
        steps=25,
        seed=7,
        validation_batch=64,
        log_every=5,
        dtype="float64",
        device="cpu",
    )
    ensemble = train(
        AttentionConfig(d=D_COV, heads=heads, ensemble=3), tasks, config, progress=False
    )
    for e, (H, task) in enumerate(zip(heads, tasks, strict=True)):
        solo_config = TrainConfig(**{**config.__dict__, "seed": config.seed + e})
        solo = train(AttentionConfig(d=D_COV, heads=H), task, solo_config, progress=False)
        for name in ("W_Q", "W_K", "W_V", "W_O"):
            torch.testing.assert_close(
                getattr(ensemble.model, name)[e, :H],
                getattr(solo.model, name)[0],
                rtol=1e-10,
                atol=1e-12,
            )
            assert (getattr(ensemble.model, name)[e, H:] == 0).all()  # padding stays inactive
        torch.testing.assert_close(
            torch.from_numpy(ensemble.history.test_loss[:, e]),
            torch.from_numpy(solo.history.test_loss[:, 0]),
            rtol=1e-10,
            atol=0,
        )
    # the members really differ (own seeds, own data), so the agreement above is not trivial
    assert not torch.allclose(ensemble.model.W_Q[0, 0], ensemble.model.W_Q[1, 0])
