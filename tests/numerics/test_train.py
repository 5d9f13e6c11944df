"""numerics.train: resume after a kill is bit-for-bit, divergence is caught, history is kept."""

import dataclasses

import pytest
import torch
from icl_verify.numerics import (
    AttentionConfig,
    LinearRegressionTask,
    MultiTaskRegressionTask,
    TrainConfig,
    TrainingDivergedError,
    train,
)

from icl_verify.devices import resolve_device

MODEL = AttentionConfig(d=3, heads=2, ensemble=2)
TASK = LinearRegressionTask(3, 6, 0.1)
CONFIG = TrainConfig(
    lr=1e-2, batch=16, steps=30, validation_batch=32, log_every=4, checkpoint_every=5, device="cpu"
)


class Killed(Exception):
    pass


def _kill_at(step_to_die: int):
    def callback(step, model):
        if step == step_to_die:
            raise Killed

    return callback


def test_resume_after_a_kill_reaches_the_same_weights_bit_for_bit(tmp_path):
    uninterrupted = train(MODEL, TASK, CONFIG, progress=False)
    path = tmp_path / "run.pt"
    with pytest.raises(Killed):  # killed at step 13: the last checkpoint is step 10
        train(MODEL, TASK, CONFIG, checkpoint_path=path, callback=_kill_at(13), progress=False)
    assert torch.load(path, weights_only=False)["step"] == 10
    resumed = train(MODEL, TASK, CONFIG, checkpoint_path=path, resume=True, progress=False)
    for name, value in uninterrupted.model.state_dict().items():
        assert torch.equal(value, resumed.model.state_dict()[name]), name
    for field in ("steps", "train_loss", "test_loss", "omega", "mu"):
        assert (getattr(uninterrupted.history, field) == getattr(resumed.history, field)).all()
    assert not list(tmp_path.glob("*.tmp"))  # atomic writes leave no temporary file


def test_resume_refuses_a_checkpoint_of_another_run(tmp_path):
    path = tmp_path / "run.pt"
    train(MODEL, TASK, CONFIG, checkpoint_path=path, progress=False)
    other = TrainConfig(**{**CONFIG.__dict__, "lr": 2e-2})
    with pytest.raises(ValueError, match="^checkpoint_path .* different run"):
        train(MODEL, TASK, other, checkpoint_path=path, resume=True, progress=False)


def test_non_finite_loss_names_the_step_and_keeps_the_last_good_checkpoint(tmp_path):
    path = tmp_path / "run.pt"

    def poison(step, model):  # after step 12 a weight is NaN, so the loss of step 13 is NaN
        if step == 12:
            with torch.no_grad():
                model.W_Q[0, 0, 0, 0] = float("nan")

    with pytest.raises(TrainingDivergedError, match="at step 13; last good checkpoint .step 10."):
        train(MODEL, TASK, CONFIG, checkpoint_path=path, callback=poison, progress=False)
    state = torch.load(path, weights_only=False)
    assert state["step"] == 10
    assert all(torch.isfinite(v).all() for v in state["model"].values())


def test_history_records_and_loss_decreases():
    # a few hundred Adam steps must beat the zero predictor, whose risk is
    # E y_q^2 = E||beta||^2 + sigma2 = 1.1 (the initial model is close to it: |y_hat| is small)
    config = TrainConfig(lr=1e-2, batch=64, steps=300, validation_batch=512, log_every=100)
    result = train(AttentionConfig(d=3, heads=2, ensemble=2), TASK, config, progress=False)
    history = result.history
    assert history.steps.tolist() == [100, 200, 300]
    assert history.test_loss.shape == (3, 2) and history.omega.shape == (3, 2, 2)
    assert (history.test_loss[-1] < 0.9).all()
    assert torch.allclose(
        torch.from_numpy(history.mu[-1]), result.model.OV[..., -1, -1].double().detach()
    )


def test_multitask_training_predicts_one_label_per_task():
    model = AttentionConfig(d=6, heads=3, n_labels=2)
    config = TrainConfig(batch=8, steps=3, validation_batch=16, log_every=3)
    result = train(model, MultiTaskRegressionTask(L=12), config, progress=False)
    assert result.history.test_loss.shape == (1, 1)
    assert torch.isnan(torch.from_numpy(result.history.omega)).all()


def test_bad_arguments():
    with pytest.raises(ValueError, match="^optimizer "):
        TrainConfig(optimizer="lbfgs")
    with pytest.raises(ValueError, match="^lr "):
        TrainConfig(lr=0.0)
    with pytest.raises(ValueError, match="^task "):
        train(MODEL, LinearRegressionTask(4, 6, 0.1), CONFIG, progress=False)
    with pytest.raises(ValueError, match="^checkpoint_path "):
        train(MODEL, TASK, CONFIG, resume=True, progress=False)
    assert resolve_device("auto") == ("cuda" if torch.cuda.is_available() else "cpu")
    with pytest.raises(ValueError, match="^device must be auto, cpu, cuda or cuda:N, got 'gpu'"):
        TrainConfig(device="gpu")
    with pytest.raises(ValueError, match="^momentum is SGD's"):
        TrainConfig(optimizer="adam", momentum=0.9)
    with pytest.raises(ValueError, match="^momentum must be a number in"):
        TrainConfig(optimizer="sgd", momentum=1.0)


def test_sgd_momentum_acts_from_the_second_step_as_heavy_ball():
    # heavy ball: v1 = g1, so the first step is plain SGD's; from the second, lr (g2 + 0.9 g1)
    def weights(steps, momentum):
        config = dataclasses.replace(CONFIG, optimizer="sgd", momentum=momentum, steps=steps,
                                     checkpoint_every=0, log_every=1)  # fmt: skip
        return list(train(MODEL, TASK, config, progress=False).model.parameters())

    for a, b in zip(weights(1, 0.9), weights(1, 0.0), strict=True):
        assert torch.equal(a, b)
    assert any(not torch.equal(a, b) for a, b in zip(weights(2, 0.9), weights(2, 0.0), strict=True))


# ---------------------------------------------------------------------------------------------
# workers: the members in slices, one process each, merged back

WORKERS_MODEL = AttentionConfig(d=3, heads=2, ensemble=3)  # slices of 1 and 2 members
TWO_WORKERS = dataclasses.replace(CONFIG, workers=2)


def _assert_same_run(a, b):
    for name, value in a.model.state_dict().items():
        assert torch.equal(value, b.model.state_dict()[name]), name
    for field in ("steps", "train_loss", "test_loss", "omega", "mu"):
        assert (getattr(a.history, field) == getattr(b.history, field)).all(), field


def test_two_workers_train_the_same_members_bit_for_bit(tmp_path):
    # each slice is a run of its own with seed + lo, whose members draw the full run's streams;
    # the ensemble axis is a batch axis, so a member's arithmetic does not depend on E
    one = train(WORKERS_MODEL, TASK, CONFIG, progress=False)
    path = tmp_path / "run.pt"
    two = train(WORKERS_MODEL, TASK, TWO_WORKERS, checkpoint_path=path, progress=False)
    _assert_same_run(one, two)
    state = torch.load(path, weights_only=False)  # one merged checkpoint, parts removed
    assert state["step"] == 30 and sorted(p.name for p in tmp_path.iterdir()) == ["run.pt"]
    assert state["model"]["W_Q"].shape[0] == 3 and len(state["generators"]) == 3


def test_two_workers_with_per_member_heads_are_bit_for_bit_the_same_run():
    # members with fewer heads than the largest (padded with exact zeros and zero Adam
    # moments) are split and merged back exactly when every slice keeps the largest H (slices
    # (0,) and (1, 2): H = 3 and H = 1, 3), so no tensor changes shape and nothing rounds
    # differently. (A slice whose largest H is smaller sums in another order: that case agrees
    # only to float32 rounding, see the module docstring, and is not asserted here.)
    model = AttentionConfig(d=3, heads=(3, 1, 3), ensemble=3)
    one = train(model, TASK, CONFIG, progress=False)
    two = train(model, TASK, TWO_WORKERS, progress=False)
    _assert_same_run(one, two)
    assert (two.history.omega[:, 1, 1:] == 0).all()  # member 1's padded (inactive) heads


def test_two_workers_resume_after_a_kill_bit_for_bit(tmp_path):
    from icl_verify.numerics._core._training.workers import slices, sub_run

    uninterrupted = train(WORKERS_MODEL, TASK, CONFIG, progress=False)
    path = tmp_path / "run.pt"
    # a killed two-worker run: worker 0 died at step 13 (part at step 10), worker 1 at 7 (step 5)
    tasks = (TASK,) * WORKERS_MODEL.ensemble
    for i, ((lo, hi), die) in enumerate(zip(slices(3, 2), (13, 7), strict=True)):
        part = tmp_path / f"run.pt.part{i}of2"
        with pytest.raises(Killed):
            run = sub_run(WORKERS_MODEL, tasks, CONFIG, lo, hi)
            train(*run, checkpoint_path=part, callback=_kill_at(die), progress=False)
    resumed = train(WORKERS_MODEL, TASK, TWO_WORKERS, checkpoint_path=path, resume=True,
                    progress=False)  # fmt: skip
    _assert_same_run(uninterrupted, resumed)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.pt"]


def test_two_workers_resume_a_one_worker_checkpoint(tmp_path):
    uninterrupted = train(WORKERS_MODEL, TASK, CONFIG, progress=False)
    path = tmp_path / "run.pt"
    with pytest.raises(Killed):  # one process, killed at step 13: the checkpoint is step 10
        train(WORKERS_MODEL, TASK, CONFIG, checkpoint_path=path, callback=_kill_at(13),
              progress=False)  # fmt: skip
    resumed = train(WORKERS_MODEL, TASK, TWO_WORKERS, checkpoint_path=path, resume=True,
                    progress=False)  # fmt: skip
    _assert_same_run(uninterrupted, resumed)


def test_two_workers_progress_bar_counts_the_workers_steps(monkeypatch):
    from icl_verify.numerics._core._training import workers

    updates = []

    class Bar:  # records the parent's updates of the bar
        def __init__(self, **options):
            self.n = 0

        def update(self, k):
            self.n += k
            updates.append(k)

        def close(self):
            pass

    monkeypatch.setattr(workers, "tqdm", Bar)
    train(WORKERS_MODEL, TASK, TWO_WORKERS, progress=True)
    # the slices' shared step counters took the bar to the end; the closing update found
    # nothing left (it completes the bar only for parts that resumed at their last step)
    assert sum(updates) == CONFIG.steps and updates[-1] == 0


def test_bad_workers_one_line():
    for bad in (0, -1, 1.5, True):
        with pytest.raises(ValueError, match="^workers must be an integer >= 1, got"):
            TrainConfig(workers=bad)
    shared = dataclasses.replace(TWO_WORKERS, data_streams="shared")
    with pytest.raises(ValueError, match="^data_streams must be 'member' when workers > 1"):
        train(WORKERS_MODEL, TASK, shared, progress=False)
    with pytest.raises(ValueError, match="^callback must be None when workers > 1"):
        train(WORKERS_MODEL, TASK, TWO_WORKERS, callback=_kill_at(3), progress=False)
    model = AttentionConfig(d=3, ensemble=2, attention=lambda x: x)
    with pytest.raises(ValueError, match="^workers must be 1 for an attention that cannot be"):
        train(model, TASK, TWO_WORKERS, progress=False)
