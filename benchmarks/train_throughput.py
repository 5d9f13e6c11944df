"""Training throughput of batched attention ensembles: model-steps per second (E * steps / s).

Setting of He et al. (2025) §0.5: d = 5, L = 40, batch 256, H = 4 heads, Adam. Each ensemble size
E trains with `numerics.trainer.train` for two run lengths; the rate is taken from the difference,
so set-up (initialisation, validation prompts, first-call overheads) cancels out.

    python benchmarks/train_throughput.py                      # CPU (and CUDA when present)
    python benchmarks/train_throughput.py --compile --out x.json

Prints a table and writes JSON (default benchmarks/out/train_throughput.json).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from icl_verify.numerics.models import AttentionConfig  # noqa: E402
from icl_verify.numerics.trainer import LinearRegressionTask, TrainConfig, train  # noqa: E402

from icl_verify._files import write_atomic  # noqa: E402


def seconds_for(E: int, steps: int, device: str, data_streams: str, compile_: bool) -> float:
    config = TrainConfig(
        steps=steps,
        batch=256,
        device=device,
        log_every=steps,
        validation_batch=256,
        data_streams=data_streams,
        compile=compile_,
    )
    start = time.perf_counter()
    train(
        AttentionConfig(d=5, heads=4, ensemble=E),
        LinearRegressionTask(5, 40, 0.1),
        config,
        progress=False,
    )
    if device == "cuda":
        torch.cuda.synchronize()
    return time.perf_counter() - start


def measure(E: int, steps: int, device: str, data_streams: str, compile_: bool) -> dict:
    short, long = max(steps // 5, 2), steps + max(steps // 5, 2)
    seconds_for(E, short, device, data_streams, compile_)  # warm-up (imports, compilation)
    t_short = seconds_for(E, short, device, data_streams, compile_)
    t_long = seconds_for(E, long, device, data_streams, compile_)
    per_step = max(t_long - t_short, 1e-9) / (long - short)
    return {
        "ensemble": E,
        "device": device,
        "data_streams": data_streams,
        "compile": compile_,
        "steps_timed": long - short,
        "ms_per_step": 1e3 * per_step,
        "model_steps_per_s": E / per_step,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ensembles", type=int, nargs="+", default=[1, 8, 64])
    parser.add_argument("--steps", type=int, default=40, help="timed steps per measurement")
    parser.add_argument("--devices", nargs="+", default=None, help="default: cpu (+ cuda)")
    parser.add_argument(
        "--data-streams", nargs="+", default=["member", "shared"], choices=["member", "shared"]
    )
    parser.add_argument("--compile", action="store_true", help="also time torch.compile")
    parser.add_argument("--threads", type=int, default=None, help="torch CPU threads")
    parser.add_argument("--out", default="benchmarks/out/train_throughput.json")
    args = parser.parse_args(argv)
    if args.threads is not None:
        torch.set_num_threads(args.threads)
    devices = args.devices or (["cpu", "cuda"] if torch.cuda.is_available() else ["cpu"])

    rows = []
    print(
        f"{'device':>6} {'streams':>7} {'compile':>7} {'E':>4} {'ms/step':>9} "
        f"{'model-steps/s':>14} {'vs E=1':>7}"
    )
    for device in devices:
        for compile_ in [False, True] if (args.compile or device == "cuda") else [False]:
            for streams in args.data_streams:
                base = None
                for E in args.ensembles:
                    row = measure(E, args.steps, device, streams, compile_)
                    base = base or row["model_steps_per_s"]
                    row["speedup_vs_first"] = row["model_steps_per_s"] / base
                    rows.append(row)
                    print(
                        f"{device:>6} {streams:>7} {compile_!s:>7} {E:>4} "
                        f"{row['ms_per_step']:>9.2f} {row['model_steps_per_s']:>14.1f} "
                        f"{row['speedup_vs_first']:>7.2f}",
                        flush=True,
                    )

    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    meta = {
        "torch": torch.__version__,
        "python": platform.python_version(),
        "machine": platform.machine(),
        "cpu_count": os.cpu_count(),
        "torch_threads": torch.get_num_threads(),
        "cuda": torch.cuda.get_device_name() if torch.cuda.is_available() else None,
        "setting": {"d": 5, "L": 40, "batch": 256, "heads": 4, "optimizer": "adam"},
    }
    write_atomic(out, json.dumps({"meta": meta, "rows": rows}, indent=2))
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
