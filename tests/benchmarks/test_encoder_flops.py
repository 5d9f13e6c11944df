"""`benchmarks/gpu_throughput.py`'s FLOP count of the encoder's training step is exact: it equals
what torch's FLOP counter (`torch.utils.flop_counter.FlopCounterMode`) counts for the forward and
the backward of a small ensemble on the CPU, and its docstring's example holds."""

import doctest
import importlib.util
import sys
from pathlib import Path

import torch
from icl_verify.numerics import EncoderConfig, encoder_tokens, sample_sparse_regression
from torch.utils.flop_counter import FlopCounterMode

from icl_verify.settings import SparseSetting

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "benchmarks" / "gpu_throughput.py"
sys.path.insert(0, str(SCRIPT.parent))  # the script imports its folder's _machine
spec = importlib.util.spec_from_file_location("gpu_throughput", SCRIPT)
throughput = importlib.util.module_from_spec(spec)
spec.loader.exec_module(throughput)


def test_the_step_flops_are_what_torch_counts():
    config = EncoderConfig(d=5, d_hid=24, heads=3, layers=2, d_ffn=40, ensemble=2)
    B, n, q = 3, 6, 2  # prompts per member, examples, queries: m = 8 tokens
    prompts = sample_sparse_regression(
        (2, B), SparseSetting(5, 2, 0.1), n, q=q, generator=torch.Generator().manual_seed(0)
    )  # fmt: skip
    model, Z = config.build([0, 1]), encoder_tokens(prompts)  # Z: (2, B, 8, 6)
    with FlopCounterMode(display=False) as forward:
        out = model(Z, n)
    with FlopCounterMode(display=False) as backward:
        out.square().sum().backward()
    parts = throughput.encoder_step_flops(config, B, n + q, q)
    read_out = parts.pop("read_out")  # a weighted sum: no matrix product for the counter
    assert read_out == (2 * B * q * 24, 4 * B * q * 24)
    assert forward.get_total_flops() == 2 * sum(f for f, _ in parts.values())  # 2 members
    assert backward.get_total_flops() == 2 * sum(b for _, b in parts.values())


def test_the_docstring_examples():
    result = doctest.testmod(throughput)
    assert result.failed == 0 and result.attempted > 0
