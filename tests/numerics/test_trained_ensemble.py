"""numerics._core.ensemble: the trained ensemble of the He et al. §3 claims, its resume, its members
and
their test MSE at other prompt lengths (Figure 4) on nested prompts."""

import numpy as np
import pytest
from icl_verify.numerics import (
    EnsembleTraining,
    TrainedEnsemble,
    TrainingStopped,
    member_kinds,
    mse_by_test_length,
    representative,
    train_ensemble,
)
from icl_verify.theory import Setting, debiased_gd_risk, optimal_gd

SMOKE = EnsembleTraining(d=5, L=40, sigma2=0.1, heads=(1, 2, 2, 4), lr=1e-2, steps=300,
                         batch=128, seed=0, log_every=10, checkpoint_every=100,
                         validation_batch=512)  # fmt: skip


@pytest.fixture(scope="module")
def ensemble():
    return train_ensemble(SMOKE)


def test_resumed_training_matches_an_uninterrupted_one(tmp_path):
    tiny = dict(d=2, L=8, sigma2=0.1, heads=(1, 2), lr=3e-3, batch=16, seed=0, log_every=5,
                checkpoint_every=10, validation_batch=64)  # fmt: skip
    whole = train_ensemble(EnsembleTraining(steps=20, **tiny), "cpu", tmp_path / "a")
    train_ensemble(EnsembleTraining(steps=10, **tiny), "cpu", tmp_path / "b")  # "killed" at 10
    resumed = train_ensemble(EnsembleTraining(steps=20, **tiny), "cpu", tmp_path / "b")
    _assert_same_training(resumed, whole)
    assert not np.isnan(resumed.KQ_history).any()


def _assert_same_training(ensemble, expected):
    """Equal arrays, bit for bit, but for the wall time the training took."""
    for key, array in expected.arrays().items():
        if key != "train_seconds":
            np.testing.assert_array_equal(ensemble.arrays()[key], array, err_msg=key)
    assert 0 < expected.train_seconds and 0 < ensemble.train_seconds


def test_a_training_stopped_at_its_deadline_resumes_to_the_uninterrupted_result(tmp_path):
    tiny = dict(d=2, L=8, sigma2=0.1, heads=(1, 2), lr=3e-3, batch=16, seed=0, log_every=5,
                checkpoint_every=10, validation_batch=64, steps=20)  # fmt: skip
    whole = train_ensemble(EnsembleTraining(**tiny), "cpu", tmp_path / "a")
    with pytest.raises(TrainingStopped, match="after step 1 of 20") as stopped:
        train_ensemble(EnsembleTraining(**tiny), "cpu", tmp_path / "b", deadline=0.0)
    assert stopped.value.step == 1  # between checkpoints and logs: its own checkpoint
    with pytest.raises(TrainingStopped, match="after step 2 of 20"):  # one more step, then stop
        train_ensemble(EnsembleTraining(**tiny), "cpu", tmp_path / "b", deadline=0.0)
    resumed = train_ensemble(EnsembleTraining(**tiny), "cpu", tmp_path / "b")
    _assert_same_training(resumed, whole)


def test_arrays_round_trip_and_the_logged_circuits_give_the_logged_scales(ensemble):
    again = TrainedEnsemble.from_arrays(SMOKE, ensemble.arrays())
    for key, array in ensemble.arrays().items():
        np.testing.assert_array_equal(again.arrays()[key], array)
    # omega_h = mean diag KQ11_h (float32 circuits), as the trainer logs it (float64)
    log = ensemble.steps.size // 2
    summaries = ensemble.summaries(log)
    for e, H in enumerate(ensemble.heads):
        np.testing.assert_allclose(summaries[e].omega, ensemble.omega[log, e, :H], rtol=1e-5)


def test_member_kinds_partition_the_ensemble(ensemble):
    kinds = member_kinds(ensemble)
    total = kinds.single.astype(int) + kinds.paired.astype(int) + kinds.trapped.astype(int)
    assert np.all(total == 1)
    assert np.all(kinds.single == (ensemble.heads == 1))
    for e in np.flatnonzero(kinds.paired):  # a paired member has live heads of both signs
        omega = ensemble.omega[-1, e, : ensemble.heads[e]]
        assert omega.max() > 0 > omega.min()
    two = representative(ensemble, 2)
    assert ensemble.heads[two] == 2
    assert ensemble.test_loss[-1, two] == ensemble.test_loss[-1, ensemble.heads == 2].min()


def test_dgd_baseline_on_nested_prompts_matches_the_exact_risk_and_bayes_is_best(ensemble):
    # Every L' reads the first L' examples of one draw: each length is still an exact sample
    # of its own prompt distribution, so the debiased-GD baseline must match its exact risk
    # (§HE-4.3-RISK) within 4 SE at every L', and the Bayes predictor beats it (paired).
    setting, lengths = Setting(5, 40, 0.1), (10, 40, 100)
    eta = optimal_gd(setting, debiased=True).eta
    losses = mse_by_test_length(
        {"H1": (ensemble, 0), "H2": (ensemble, 1)}, lengths, debiased_steps={"dGD": eta},
        gd_steps={"GD": optimal_gd(setting).eta}, n_prompts=4096, seed=3,
    )  # fmt: skip
    for n in lengths:
        estimate = losses[f"dGD@{n}"]
        exact = debiased_gd_risk(eta, Setting(5, n, 0.1))
        assert abs(estimate.mean - exact) < 4 * estimate.stderr
        gap = losses.difference(f"Bayes@{n}", f"dGD@{n}")
        assert gap.mean < -4 * gap.stderr
    eta_eff = ensemble.first_order_steps([0, 1])
    assert eta_eff.shape == (2,) and np.all(np.isfinite(eta_eff))


def test_kms_and_multitask_trainings_carry_their_data_model_to_the_members():
    tiny = dict(L=8, sigma2=0.1, heads=(1, 3), lr=3e-3, steps=20, batch=16, seed=0,
                log_every=10, checkpoint_every=0, validation_batch=64)  # fmt: skip
    kms = train_ensemble(EnsembleTraining(d=3, rho=0.5, **tiny))
    assert kms.rho == 0.5
    assert np.allclose(EnsembleTraining(d=3, rho=0.5, **tiny).task().covariance.numpy(),
                       0.5 ** np.abs(np.subtract.outer(np.arange(3), np.arange(3))))  # fmt: skip
    supports = ((0, 1), (1, 2, 3))
    multi = train_ensemble(EnsembleTraining(d=4, supports=supports, **tiny))
    model = multi.model()
    assert multi.supports == supports and model.config.n_labels == 2
    assert multi.KQ_history.shape[-1] == 4 + 2  # D = d + K
    with pytest.raises(ValueError, match="models\\['kms'\\] must be trained on isotropic"):
        mse_by_test_length({"kms": (kms, 0)}, [8], n_prompts=64)


@pytest.mark.parametrize(
    ("change", "match"),
    [(dict(rho=1.0), "rho must be a real number in \\(-1, 1\\)"),
     (dict(rho=0.5, supports=((0,),)), "rho must be 0 for multi-task")],
)  # fmt: skip
def test_a_training_refuses_a_bad_correlation(change, match):
    with pytest.raises(ValueError, match=match):
        EnsembleTraining(**{**SMOKE.__dict__, **change})
