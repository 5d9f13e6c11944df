"""Milliseconds per Adam step of `numerics.Encoder` ensembles, by size (issue 14's study).

The training step of Chen, Zhao, Zou (2024) App. B: sparse-regression prompts (d = 16, s = 4,
n = 12 examples, q = 4 queries, batch 64 per member; fresh prompts every step), squared error at
the query positions, Adam. Each row times ``--steps`` steps after two warm-up steps, on one
torch thread (``--threads``), for an ensemble of E members (the noise grid times the seeds
train side by side), and prints ms per step and per member-step and the hours that 320k
steps (the paper's) and ``--budget`` steps would take.

    python benchmarks/encoder_step_cost.py
    python benchmarks/encoder_step_cost.py --sizes 256:8:4 64:4:3 --ensembles 1 5
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _machine import machine  # noqa: E402  (benchmarks/, the script's folder)
from icl_verify.numerics import (  # noqa: E402
    Encoder,
    EncoderConfig,
    encoder_tokens,
    sample_sparse_regression,  # noqa: E402
)

from icl_verify._files import write_atomic  # noqa: E402
from icl_verify.settings import SparseSetting

D, S, N, Q, BATCH, PAPER_STEPS = 16, 4, 12, 4, 64, 320_000


def ms_per_step(config: EncoderConfig, steps: int) -> float:
    model = Encoder(config, list(range(config.ensemble)))
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
    generator = torch.Generator().manual_seed(0)
    for step in range(steps + 2):
        if step == 2:
            start = time.perf_counter()
        prompts = sample_sparse_regression(
            (config.ensemble, BATCH), SparseSetting(D, S, 0.1), N, q=Q, generator=generator
        )
        loss = ((model(encoder_tokens(prompts), N) - prompts.y_query) ** 2).mean((1, 2)).sum()
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
    return 1e3 * (time.perf_counter() - start) / steps


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--sizes", nargs="+", default=["256:8:4", "64:8:4", "64:4:3", "32:4:3", "32:1:3"],
        help="D_HID:HEADS:LAYERS per row",
    )  # fmt: skip
    parser.add_argument("--ensembles", type=int, nargs="+", default=[1, 5])
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--budget", type=int, default=20_000, help="steps of a CPU preset")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--out", default="benchmarks/out/encoder_step_cost.json")
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)

    rows = []
    print(f"{'d_hid':>5} {'h':>2} {'L':>2} {'E':>3} {'ms/step':>8} {'ms/member-step':>14} "
          f"{'paper h/model':>13} {f'{args.budget} steps h':>14}")  # fmt: skip
    for size in args.sizes:
        d_hid, heads, layers = (int(v) for v in size.split(":"))
        for E in args.ensembles:
            config = EncoderConfig(d=D, d_hid=d_hid, heads=heads, layers=layers, ensemble=E)
            ms = ms_per_step(config, args.steps)
            rows.append({"d_hid": d_hid, "heads": heads, "layers": layers, "ensemble": E,
                         "ms_per_step": ms, "ms_per_member_step": ms / E})  # fmt: skip
            print(f"{d_hid:>5} {heads:>2} {layers:>2} {E:>3} {ms:>8.1f} {ms / E:>14.2f} "
                  f"{ms / E * PAPER_STEPS / 3.6e6:>13.2f} {ms * args.budget / 3.6e6:>14.2f}",
                  flush=True)  # fmt: skip

    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    meta = {**machine(), "torch_threads": args.threads, "setting": {"d": D, "s": S, "n": N,
            "q": Q, "batch": BATCH}, "steps_timed": args.steps}  # fmt: skip
    write_atomic(out, json.dumps({"meta": meta, "rows": rows}, indent=2))
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
