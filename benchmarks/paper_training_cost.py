"""What the paper preset's training of HE-OBS1-4 would cost on this CPU, extrapolated.

HE-OBS1-4 read one trained ensemble (`SharedEnsembleParams.training` of their shared
parameters, `validation.claims.he2025._ensembles`): at the paper preset 13 members (H = 1, 1,
2, ..., 8, padded to 8 heads), 500k Adam steps, batch 256, d = 5, L = 40, a log (validation
loss, omega, mu, circuits) every 1000 steps.
This times `numerics.train_ensemble` on exactly that training, cut to a short and a long run
(``--steps``, default 300 and 2300 so that the long one crosses two logs), per torch thread
count (``--threads``, default 1 and 2: the claims run on one thread each; two threads is the
only way one training can use both cores of this machine, since its members share one data
stream and cannot be split between processes). The seconds per step is the difference over
the step difference (start-up cancels); the estimate is that times the preset's steps. It is
an extrapolation from a few thousand steps, nothing more: later steps cost the same (the
model's size does not change), so it is off by the timing noise of the short runs only.

    python benchmarks/paper_training_cost.py
    python benchmarks/paper_training_cost.py --steps 500 5500 --threads 2

Prints a table and writes JSON (default benchmarks/out/paper_training_cost.json).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _machine import machine  # noqa: E402  (benchmarks/, the script's folder)
from icl_verify.numerics import train_ensemble  # noqa: E402
from icl_verify.validation.registry import select_claims  # noqa: E402

from icl_verify._files import write_atomic  # noqa: E402

CLAIM = "HE-OBS1"  # HE-OBS1-4 share this claim's training


def seconds_for(paper, steps: int) -> float:
    run = dataclasses.replace(paper, steps=steps, checkpoint_every=0)
    start = time.perf_counter()
    train_ensemble(run, device="cpu")
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preset", default="paper")
    parser.add_argument(
        "--steps", type=int, nargs=2, default=[300, 2300], metavar=("SHORT", "LONG")
    )
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--out", default="benchmarks/out/paper_training_cost.json")
    args = parser.parse_args(argv)
    short, long = args.steps
    paper = select_claims([CLAIM])[0].presets[args.preset].training()

    rows = []
    print(f"{CLAIM} ({args.preset}): {len(paper.heads)} members, heads {list(paper.heads)}, "
          f"{paper.steps} steps, batch {paper.batch}, log every {paper.log_every}")  # fmt: skip
    print(f"{'threads':>7} {'ms/step':>8} {'estimate h':>10}")
    for threads in args.threads:
        torch.set_num_threads(threads)
        seconds_for(paper, 20)  # warm-up
        per_step = (seconds_for(paper, long) - seconds_for(paper, short)) / (long - short)
        rows.append({
            "threads": threads, "ms_per_step": 1e3 * per_step,
            "estimate_hours": per_step * paper.steps / 3600,
        })  # fmt: skip
        print(f"{threads:>7} {rows[-1]['ms_per_step']:>8.2f} {rows[-1]['estimate_hours']:>10.2f}")

    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    meta = {
        **machine(),
        "claim": CLAIM,
        "preset": args.preset,
        "training": dataclasses.asdict(paper),
        "steps_timed": [short, long],
    }
    write_atomic(out, json.dumps({"meta": meta, "rows": rows}, indent=2))
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
