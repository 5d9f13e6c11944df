"""The trainer on a GPU (marker ``cuda``: skipped without one; ``pytest -m cuda`` runs them).

- float64 on CUDA follows the CPU run step for step, to the rounding of summation order, also
  with the trainer's own streams drawn on the CPU (`numerics.draw_on_cpu`);
- the CUDA-graph step (captured once, replayed) gives the plain step's numbers for every task
  the claims train (linear, KMS, multi-task, activations, linear attention, the encoder), and a
  run stopped and resumed through a graph equals an uninterrupted one;
- ``cuda:N`` names a card wherever ``cuda`` does.

The claims' verdicts on CUDA against the CPU are `tests/validation/test_cuda_claims.py`.
"""

import dataclasses

import numpy as np
import pytest
import torch
from icl_verify.numerics import (
    AttentionConfig,
    EncoderConfig,
    LinearRegressionTask,
    MultiTaskRegressionTask,
    SparseRegressionTask,
    TrainConfig,
    TrainingStopped,
    train,
)

pytestmark = pytest.mark.cuda

U64 = float(np.finfo(np.float64).eps) / 2  # unit roundoff of float64


@dataclasses.dataclass(frozen=True)
class _HostDrawn(LinearRegressionTask):
    """Linear-regression prompts drawn on the CPU from one generator of the task's own, then
    copied to the training device: a CPU and a CUDA run see the same prompts in the same order
    (their generators differ: the CPU's Mersenne twister, CUDA's Philox)."""

    stream: torch.Generator = dataclasses.field(default=None, compare=False)

    def sampler(self, device, dtype):
        cpu = super().sampler(torch.device("cpu"), dtype)

        def draw(batch, generator):
            Z, target = cpu(batch, self.stream)
            return Z.to(device), target.to(device)

        return draw


def test_float64_on_cuda_follows_the_cpu_run_to_the_rounding_of_summation_order():
    """50 Adam steps at d = 5, L = 40, B = 256, H up to 4, in float64, same prompts.

    Tolerance: a gradient entry sums N <= B (L + 1) D^2 products, so CPU and GPU (other
    summation orders) may differ by gamma_N = N u relative (Higham, Thm 3.1); Adam's step
    lr m_hat / sqrt(v_hat) is a ratio of two such sums and moves at most 2 gamma_N lr per
    step, so after k steps the weights differ by at most k * 2 gamma_N * lr (the feedback of
    earlier differences through the gradient is second order in them). The logged losses are
    means of sums of N_v = Bv (L + 1) D terms: relative gamma_{N_v} each, plus the weights'.
    """
    steps, lr, B, L, D = 50, 1e-3, 256, 40, 6
    model = AttentionConfig(d=5, heads=(1, 2, 4), ensemble=3)

    def run(device: str):
        task = _HostDrawn(5, L, 0.1, stream=torch.Generator().manual_seed(7))
        config = TrainConfig(lr=lr, batch=B, steps=steps, dtype="float64", device=device,
                             log_every=10, validation_batch=512, data_streams="shared",
                             cuda_graph=False)  # fmt: skip
        return train(model, task, config, progress=False)

    _follows_to_summation_order(run("cpu"), run("cuda"), steps, lr, B, L, D)


def _follows_to_summation_order(cpu, gpu, steps, lr, B, L, D) -> None:
    """The weights and logged losses of ``gpu`` within the summation-order bound of the test
    above of ``cpu``'s (512 validation prompts)."""
    gamma = B * (L + 1) * D**2 * U64
    gpu_weights = dict(gpu.model.named_parameters())
    for name, value in cpu.model.named_parameters():
        difference = (gpu_weights[name].detach().cpu() - value.detach()).abs().max().item()
        assert difference <= steps * 2 * gamma * lr, (name, difference)
    loss_bound = 512 * (L + 1) * D * U64 + steps * 2 * gamma * lr
    np.testing.assert_allclose(gpu.history.test_loss, cpu.history.test_loss, rtol=loss_bound)


def _tasks():
    """(model config, task, data streams) of every kind the claims train, tiny."""
    kms = torch.tensor([[0.5 ** abs(i - j) for j in range(4)] for i in range(4)])
    return {
        "softmax": (AttentionConfig(d=4, heads=(1, 2, 4), ensemble=3),
                    LinearRegressionTask(4, 16, 0.1), "shared"),
        "kms": (AttentionConfig(d=4, heads=2, ensemble=2),
                LinearRegressionTask(4, 16, 0.1, covariance=kms), "shared"),
        "multitask": (AttentionConfig(d=6, heads=(2, 3), ensemble=2, n_labels=2),
                      MultiTaskRegressionTask(6, 16), "shared"),
        "activations": (AttentionConfig(d=4, heads=2, ensemble=3,
                                        attention=("softmax", "tanh", "elu:0.5")),
                        LinearRegressionTask(4, 16, 0.1), "member"),
        "linear": (AttentionConfig(d=4, heads=1, ensemble=2, attention="linear", train_length=16),
                   LinearRegressionTask(4, 16, 0.1), "member"),
        "encoder": (EncoderConfig(d=8, d_hid=16, heads=4, layers=2, ensemble=2),
                    SparseRegressionTask(d=8, n=6, q=2, s=2, sigma=0.1), "member"),
    }  # fmt: skip


@pytest.mark.parametrize("kind", list(_tasks()))
def test_the_cuda_graph_step_computes_the_plain_step_numbers(kind, capsys):
    model, task, streams = _tasks()[kind]
    config = TrainConfig(lr=3e-3, batch=32, steps=40, log_every=10, validation_batch=64,
                         device="cuda", data_streams=streams)  # fmt: skip
    graphed = train(model, task, config, progress=False)
    assert "could not be captured" not in capsys.readouterr().err  # it did run as a graph
    plain = train(model, task, dataclasses.replace(config, cuda_graph=False), progress=False)
    for name, value in plain.model.state_dict().items():
        assert torch.equal(graphed.model.state_dict()[name], value), name
    for field in ("train_loss", "test_loss", "omega", "mu", "KQ", "OV"):
        np.testing.assert_array_equal(
            getattr(graphed.history, field), getattr(plain.history, field), err_msg=field
        )


def test_a_graph_run_stopped_at_its_deadline_resumes_to_the_uninterrupted_run(tmp_path):
    model, task, _ = _tasks()["softmax"]
    config = TrainConfig(lr=3e-3, batch=32, steps=60, log_every=10, validation_batch=64,
                         device="cuda", data_streams="shared")  # fmt: skip
    whole = train(model, task, config, progress=False)
    path = tmp_path / "checkpoint.pt"
    with pytest.raises(TrainingStopped):  # stops after step 1: the graph is never captured
        train(model, task, config, checkpoint_path=path, deadline=0.0, progress=False)
    short = dataclasses.replace(config, steps=40)  # through capture and replays, then "killed"
    train(model, task, short, checkpoint_path=path, resume=True, progress=False)
    resumed = train(model, task, config, checkpoint_path=path, resume=True, progress=False)
    for name, value in whole.model.state_dict().items():
        assert torch.equal(resumed.model.state_dict()[name], value), name
    np.testing.assert_array_equal(resumed.history.test_loss, whole.history.test_loss)


def test_cuda_n_names_a_card_wherever_cuda_does():
    model, task, streams = _tasks()["softmax"]
    config = TrainConfig(lr=3e-3, batch=32, steps=12, log_every=6, validation_batch=64,
                         data_streams=streams, device="cuda")  # fmt: skip
    plain = train(model, task, config, progress=False)
    last = torch.cuda.device_count() - 1
    numbered = train(model, task, dataclasses.replace(config, device="cuda:0"), progress=False)
    assert next(numbered.model.parameters()).device == torch.device("cuda:0")
    np.testing.assert_array_equal(numbered.history.test_loss, plain.history.test_loss)
    elsewhere = dataclasses.replace(config, device=f"cuda:{last}")
    trained = train(model, task, elsewhere, progress=False)
    assert next(trained.model.parameters()).device.index == last
    with pytest.raises(ValueError, match=r"the CUDA device index must be in \[0, "):
        train(model, task, dataclasses.replace(config, device=f"cuda:{last + 1}"))


@pytest.mark.parametrize("streams", ["shared", "member"])
def test_inside_draw_on_cpu_a_cuda_run_follows_the_cpu_run_to_the_rounding_of_summation_order(
    streams,
):
    """`numerics.draw_on_cpu` on the trainer itself: its training and validation streams come
    from the CPU, so a float64 CUDA run stays within the bound of the test above (same sizes,
    same derivation), which prompts of CUDA's own stream miss by orders of magnitude; and the
    run takes the plain path (a CUDA graph cannot replay a draw on the host)."""
    from icl_verify.numerics import draw_on_cpu

    steps, lr, B, L, D = 50, 1e-3, 256, 40, 6
    model = AttentionConfig(d=5, heads=(1, 2, 4), ensemble=3)
    config = TrainConfig(lr=lr, batch=B, steps=steps, dtype="float64", log_every=10,
                         validation_batch=512, data_streams=streams)  # fmt: skip

    def run(device: str):
        with draw_on_cpu():
            return train(model, LinearRegressionTask(5, L, 0.1),
                         dataclasses.replace(config, device=device), progress=False)  # fmt: skip

    cpu, gpu = run("cpu"), run("cuda")
    assert not gpu.cuda_graph
    _follows_to_summation_order(cpu, gpu, steps, lr, B, L, D)
