"""Time the true-loss landscape of the two-head kernel-sum predictor (3.2) on a 50 x 50 grid.

He et al. (2025) Fig. 6 compares the true loss with the approximate loss (4.1) over (omega, mu)
for the ± pair ``(omega, -omega), (mu, -mu)``. `numerics.kernel_sum_loss_grid` gets
every mu from one pass per omega (the loss is quadratic in mu), so the cost is one softmax per
(omega, prompt). This script measures the wall time of the default landscape (d=5, L=40,
sigma2=0.1, 50 omega x 50 mu, 1e5 prompts each, all on the same prompts) and prints it with
the largest standard error on the grid.

    .venv/bin/python benchmarks/montecarlo_grid.py                      # CPU, defaults
    .venv/bin/python benchmarks/montecarlo_grid.py --device cuda --prompts 1000000
"""

from __future__ import annotations

import argparse
import time

import torch
from icl_verify.numerics import kernel_sum_loss_grid

from icl_verify.settings import Setting


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--d", type=int, default=5)
    parser.add_argument("--L", type=int, default=40)
    parser.add_argument("--sigma2", type=float, default=0.1)
    parser.add_argument("--grid", type=int, default=50, help="points per axis")
    parser.add_argument("--prompts", type=int, default=100_000)
    parser.add_argument("--chunk", type=int, default=2048)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--threads", type=int, default=None, help="torch CPU threads")
    args = parser.parse_args()
    if args.threads is not None:
        torch.set_num_threads(args.threads)

    omega = torch.linspace(0.01, 0.6, args.grid)  # (G,) KQ scale of the positive head
    mu = torch.linspace(0.1, 8.0, args.grid)  # (M,) OV weight of the positive head
    setting = Setting(d=args.d, L=args.L, sigma2=args.sigma2)
    start = time.perf_counter()
    landscape = kernel_sum_loss_grid(
        torch.stack([omega, -omega], dim=1),
        torch.stack([mu, -mu], dim=1),
        setting,
        args.prompts,
        chunk=args.chunk,
        seed=0,
        device=args.device,
    )
    if args.device.startswith("cuda"):
        torch.cuda.synchronize()
    seconds = time.perf_counter() - start
    best = divmod(int(landscape.mean.argmin()), args.grid)
    print(
        f"{args.grid} x {args.grid} grid, {landscape.n} prompts, d={args.d}, L={args.L}, "
        f"sigma2={args.sigma2}, device={args.device}, threads={torch.get_num_threads()}: "
        f"{seconds:.2f} s; max SE {landscape.stderr.max():.2e}; "
        f"min loss {landscape.mean.min():.4f} at omega={omega[best[0]]:.3f}, mu={mu[best[1]]:.3f}"
    )


if __name__ == "__main__":
    main()
