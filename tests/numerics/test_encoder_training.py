"""Training the Chen et al. encoder with numerics._core.trainer: ensemble = solo runs, workers,
resume,
pruning kept through fine-tuning, and P-probing against GD's exact excess risk."""

import dataclasses

import numpy as np
import pytest
import torch
from icl_verify.numerics import (
    EncoderConfig,
    EncoderTraining,
    SparseRegressionTask,
    TrainConfig,
    fine_tune_pruned,
    gd_excess_risks,
    p_probe,
    sample_sparse_regression,
    train,
    train_encoders,
)

from icl_verify.settings import SparseSetting

TASK = SparseRegressionTask(d=4, n=6, q=2, s=2, sigma=0.1)
CONFIG = TrainConfig(steps=12, batch=8, log_every=4, validation_batch=16, dtype="float64",
                     device="cpu")  # fmt: skip


def _arch(ensemble: int) -> EncoderConfig:
    return EncoderConfig(d=4, d_hid=8, heads=2, layers=2, ensemble=ensemble)


def test_an_ensemble_member_trains_exactly_as_its_solo_run():
    # each member's loss enters the sum alone, so its gradient is its solo gradient, and Adam
    # is element-wise: member e with seed e follows the solo run of seed e bit for bit
    together = train(_arch(3), TASK, CONFIG, progress=False)
    for e in range(3):
        solo = train(_arch(1), TASK, dataclasses.replace(CONFIG, seed=e), progress=False)
        for name, value in solo.model.state_dict().items():
            assert torch.equal(together.model.state_dict()[name][e : e + 1], value), name
        np.testing.assert_array_equal(
            together.history.test_loss[:, e], solo.history.test_loss[:, 0]
        )


def test_two_workers_and_a_resumed_run_equal_one_uninterrupted_run(tmp_path):
    whole = train(_arch(3), TASK, CONFIG, progress=False)
    split = train(_arch(3), TASK, dataclasses.replace(CONFIG, workers=2), progress=False)
    path = tmp_path / "run.pt"
    train(_arch(3), TASK, dataclasses.replace(CONFIG, steps=8), checkpoint_path=path,
          progress=False)  # fmt: skip
    resumed = train(_arch(3), TASK, CONFIG, checkpoint_path=path, resume=True, progress=False)
    for other in (split, resumed):
        for name, value in whole.model.state_dict().items():
            assert torch.equal(other.model.state_dict()[name], value), name
        np.testing.assert_array_equal(other.history.test_loss, whole.history.test_loss)


def test_a_task_that_does_not_fit_the_encoder_is_one_line():
    with pytest.raises(ValueError, match=r"^task must be a SparseRegressionTask with d = 4"):
        train(_arch(1), SparseRegressionTask(d=5, n=6, q=2, s=2), CONFIG, progress=False)


def test_fine_tuning_keeps_the_pruned_heads_pruned_and_their_weights_untouched():
    training = EncoderTraining(d=4, s=2, n=6, q=2, d_hid=8, heads=2, layers=2, sigmas=(0.1,),
                               replicates=2, lr=1e-2, steps=10, batch=8, log_every=5,
                               validation_batch=16)  # fmt: skip
    trained = train_encoders(training)
    kept = np.array([[[1, 1], [0, 1]], [[1, 1], [1, 0]]])
    tuned = fine_tune_pruned(trained, kept, steps=10)
    np.testing.assert_array_equal(tuned.state["kept"], kept)
    before, after = trained.state["W_QKV"], tuned.state["W_QKV"]  # (E, layers, 3 K, K)
    head = [slice(0, 4), slice(4, 8)]  # layer 2, head j owns rows j*4:(j+1)*4 of Q, K and V
    for e, j in ((0, 0), (1, 1)):  # the pruned head of each member: no gradient, no Adam step
        rows = np.r_[head[j], 8 + np.arange(8)[head[j]], 16 + np.arange(8)[head[j]]]
        np.testing.assert_array_equal(after[e, 1, rows], before[e, 1, rows])
    assert not np.array_equal(after[0, 1, 4:8], before[0, 1, 4:8])  # the kept one trained on


def test_p_probe_on_raw_covariates_is_gd_and_matches_its_exact_excess_risk():
    # features = x itself (a known linear map: the identity): P-probing is then GD on the first
    # q - 1 queries, whose exact excess risk (v - w*)^T (v - w*) (numerics._core.sparse_regression,
    # an independent path) the last query's squared error estimates without bias; the paired
    # difference per prompt has mean 0 and the check is 4 of its SEs
    g = torch.Generator().manual_seed(3)
    prompts = sample_sparse_regression(
        (1, 4000), SparseSetting(6, 2, 0.2), 3, q=11, generator=g, dtype=torch.float64
    )  # fmt: skip
    X, y = prompts.X_query, prompts.y_query  # (1, B, 11, d), (1, B, 11)
    clean = (X[..., -1, :] * prompts.w_star).sum(-1)
    result = p_probe((X, y, clean), (X, y, clean), rates=[0.1], steps=[0, 5, 50])
    exact = gd_excess_risks(X[..., :-1, :], y[..., :-1], prompts.w_star, 0.1, [0, 5, 50])
    difference = result.risks[0] - exact[0].T.numpy()  # (T, B)
    se = difference.std(axis=-1, ddof=1) / np.sqrt(difference.shape[-1])
    assert np.all(np.abs(difference.mean(axis=-1)) <= 4 * se)
    np.testing.assert_allclose(result.risks[0, 0], clean[0].numpy() ** 2)  # w_0 = 0
