"""At which CPU-sized setting do Chen et al.'s trained-encoder findings appear? (issue 14)

Trains, for each number of heads h, one ensemble of encoders (`numerics._chen2024.encoder_training`)
in the paper's regime (d = 16, s = 4, n = 12 training examples, q = 4 queries, x ~ N(0, I),
w* ~ N(0, I) on the support), one member per (replicate, sigma), with only width, depth and
steps reduced; then reads every member at the paper's evaluation (n = 10, q = 1):

- its ICL excess risk against the noiseless query label, beside OLS (minimum norm) and ridge
  tuned over {1, ..., 1e-4} on the same prompts;
- its head importance W (3.1) per (layer, head) and the effective number of heads 1/sum W^2.

Prints a table per h and writes everything (time per model, risks, every importance matrix)
to ``--out`` as JSON.

    python benchmarks/encoder_size_study.py --d-hid 32 --layers 3 --heads 1 4 --steps 20000
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _machine import machine  # noqa: E402  (benchmarks/, the script's folder)
from icl_verify.numerics import (  # noqa: E402  # noqa: E402  # noqa: E402
    EncoderTraining,
    effective_heads,
    head_importance,
    least_squares_excess_risks,
    member_prompts,
    oracle_tuned,
    train_encoders,
)

RIDGE_GRID = (1.0, 1e-1, 1e-2, 1e-3, 1e-4)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--d-hid", type=int, default=32)
    parser.add_argument("--layers", type=int, default=3)
    parser.add_argument("--heads", type=int, nargs="+", default=[1, 4])
    parser.add_argument(
        "--steps",
        type=int,
        nargs="+",
        default=[20_000],
        help="read the models after each of these step counts (resumed)",
    )
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--sigmas", type=float, nargs="+", default=[0.0, 0.1, 0.2, 0.4, 0.8])
    parser.add_argument("--replicates", type=int, default=1)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--eval-prompts", type=int, default=2048)
    parser.add_argument(
        "--checkpoints", default=None, help="folder for the trainer's checkpoints (a rerun resumes)"
    )
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    torch.set_num_threads(1)

    report = {"machine": machine(), "args": vars(args), "runs": []}
    for h, steps in ((h, steps) for h in args.heads for steps in args.steps):
        training = EncoderTraining(
            d_hid=args.d_hid, heads=h, layers=args.layers, sigmas=tuple(args.sigmas),
            replicates=args.replicates, lr=args.lr, steps=steps, batch=args.batch,
            log_every=1000, checkpoint_every=1000,
        )  # fmt: skip
        folder = None
        if args.checkpoints:
            folder = Path(args.checkpoints) / f"h{h}"
            folder.mkdir(parents=True, exist_ok=True)
        start = time.perf_counter()
        trained = train_encoders(training, checkpoint_dir=folder, workers=args.workers,
                                 progress=True)  # fmt: skip
        seconds = time.perf_counter() - start
        model = trained.model()
        generator = torch.Generator().manual_seed(7)
        prompts, tokens, clean = member_prompts(
            training.member_sigmas, args.eval_prompts, d=16, n=10, s=4, generator=generator
        )
        importance = head_importance(model, tokens, 10, clean[..., 0])
        X, y, w = prompts.X.double(), prompts.y.double(), prompts.w_star.double()
        ls = least_squares_excess_risks(X, y, w, (0.0, *RIDGE_GRID))  # (6, E, B)
        ols = ls[0].mean(dim=1).numpy()
        ridge = np.array([oracle_tuned(ls[1:, e]).mean for e in range(ls.shape[1])])
        eff = effective_heads(importance.weights)  # (E, layers)
        run = {
            "heads": h,
            "steps": steps,
            "train_seconds": seconds,
            "members": len(training.member_sigmas),
            "sigmas": list(training.member_sigmas),
            "final_test_loss": trained.test_loss[-1].tolist(),
            "risk": importance.intact.tolist(),
            "ols": ols.tolist(),
            "ridge": ridge.tolist(),
            "weights": importance.weights.tolist(),
            "delta": importance.delta.tolist(),
            "delta_se": importance.delta_se.tolist(),
            "effective_heads": eff.tolist(),
        }
        report["runs"].append(run)
        print(f"\nh = {h}, {steps} steps: {seconds:.0f} s for {run['members']} members "
              f"({seconds / run['members']:.0f} s per model)")  # fmt: skip
        for e, sigma in enumerate(training.member_sigmas):
            print(
                f"  sigma {sigma:<4g} risk {run['risk'][e]:.3f} (ols {ols[e]:.3f}, "
                f"ridge {ridge[e]:.3f})  eff. heads per layer "
                + " ".join(f"{v:.2f}" for v in eff[e])
            )
            if h > 1:
                for i, row in enumerate(importance.weights[e]):
                    print(f"      layer {i + 1}: " + " ".join(f"{v:+.2f}" for v in row))
        if args.out:
            with open(args.out, "w") as f:
                json.dump(report, f, indent=1)


if __name__ == "__main__":
    main()
