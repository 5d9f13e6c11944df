"""Training throughput on one GPU: the CUDA-graph step beside the plain one, beside the authors'.

Measured in one run on one card (``--device cuda``), every number below from the same process:

- **grid**: model-steps/s (E members x steps / s) of `numerics.train` for E in {1, 16,
  64, 256, 1024} and H in {1, 2, 4, 8} at d = 5, L = 40, batch 256 per member (He et al. §0.5,
  one shared data stream as the claims' ensembles draw), with the step captured as a CUDA graph
  and with plain launches. Each rate is timed inside one training: the device is synchronised
  at step ``warmup`` and at the last step (a callback), so start-up, capture and the validation
  prompts stay outside;
- **authors**: the training step of XintianPan/ICL_linear as published (their
  ``MultiHeadAttention`` of ``src/models.py`` and ``LinearReg`` of ``utils/data_utils.py``,
  loaded from ``--authors DIR``, a checkout; never copied here): data drawn on the CPU, copied,
  Adam, ``loss.item()`` each step; one model per step, H in {1, 2, 4, 8}. The ratio per H is
  ours (graph, best E) over theirs;
- **kernels**: CUDA kernels per step of the plain step (torch profiler; the graph replays the
  same kernels) and microseconds per step of each path, against the launch-bound floor: the
  kernels per step times the time per kernel of a replayed graph of tiny kernels;
- **ceiling**: TFLOP/s of a square matrix product (n = 8192; 1024 with ``--quick``) in float32,
  TF32 (CUDA only) and bf16: what the matrix units give this run, the encoder's yardstick;
- **encoder**: the Chen et al. encoder (d = 16, d_hid 256, 4 layers, batch 64, n + q = 16
  tokens, members with their own data streams over the sigma grid), per precision (float32 as
  today: explicit attention; tf32 and bf16: `scaled_dot_product_attention`, the matrix units;
  `numerics._core.encoder`): E = 5 at h in {1, 2, 4, 8}, and E in {20, 40, 80} at h = 8 (where the
  card fills; 20 = every (h, sigma) of one depth). Per row: ms per step (graph; plain too for
  float32 at E = 5), ms per member-step, and TFLOP/s from the exact matrix-product FLOPs of a
  member-step (`encoder_step_flops`: 19.55 GFLOP at this size) against the ceiling;
- **side by side**: P processes each training the paper preset's He et al. ensemble (13
  members, H up to 8) at once: the summed model-steps/s for P in {1, 2, 4} (the GPU is shared by
  time slices between processes).

    python benchmarks/gpu_throughput.py --authors .authors --out $OUT/gpu_throughput.json

Prints a table and writes JSON (default benchmarks/out/gpu_throughput.json). ``--quick`` cuts
the grid and the step counts (a smoke run, also on the CPU with ``--device cpu``).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import multiprocessing
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _machine import machine  # noqa: E402  (benchmarks/, the script's folder)
from icl_verify.numerics import (  # noqa: E402
    AttentionConfig,  # noqa: E402
    EncoderConfig,
    LinearRegressionTask,
    SparseRegressionTask,
    TrainConfig,
    train,
)
from icl_verify.numerics._core.encoder import matrix_precision  # noqa: E402
from icl_verify.validation.claims.chen2024 import PAPER_SIGMAS  # noqa: E402

from icl_verify._files import write_atomic  # noqa: E402

PAPER_HEADS = (1, 1, 2, 2, 2, 2, 3, 3, 4, 4, 4, 8, 8)  # the paper preset's HE-OBS ensemble
ENCODER_BATCH, ENCODER_TOKENS, ENCODER_QUERIES = 64, 16, 4  # Chen et al. App. B: n = 12, q = 4


def _synchronize(device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.synchronize(device)


def timed_training(model, task, config: TrainConfig, warmup: int) -> tuple[float, bool]:
    """Seconds per step of steps ``warmup``+1 .. ``config.steps`` - 1 of one training (the last
    step, which logs, is left out), and whether they ran as a captured CUDA graph."""
    marks, last = {}, config.steps - 1

    def clock(step: int, _model) -> None:
        if step in (warmup, last):
            _synchronize(config.device)
            marks[step] = time.perf_counter()

    result = train(model, task, config, callback=clock, progress=False)
    return (marks[last] - marks[warmup]) / (last - warmup), result.cuda_graph


def grid(device: str, ensembles, heads, warmup: int, steps: int) -> list[dict]:
    rows = []
    for E in ensembles:
        for H in heads:
            for graph in (True, False):
                config = TrainConfig(batch=256, steps=warmup + steps, device=device,
                                     log_every=warmup + steps, validation_batch=64,
                                     data_streams="shared", cuda_graph=graph)  # fmt: skip
                per_step, captured = timed_training(
                    AttentionConfig(d=5, heads=H, ensemble=E), LinearRegressionTask(5, 40, 0.1),
                    config, warmup,
                )  # fmt: skip
                rows.append({"E": E, "H": H, "graph": graph, "captured": captured,
                             "us_per_step": 1e6 * per_step,
                             "model_steps_per_s": E / per_step})  # fmt: skip
                print(f"  E {E:5d} H {H} {'graph' if graph else 'plain'}: "
                      f"{1e6 * per_step:9.1f} us/step, {E / per_step:12.0f} model-steps/s",
                      flush=True)  # fmt: skip
    return rows


def _load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def authors_step(folder: Path, device: str, heads, warmup: int, steps: int) -> list[dict]:
    """Steps/s of the authors' training step (their model and data class, their loop's step)."""
    models = _load(folder / "src" / "models.py", "authors_models")
    data = _load(folder / "utils" / "data_utils.py", "authors_data_utils")
    rows = []
    for H in heads:
        model = models.MultiHeadAttention(6, H, init_method="random", bias=False, n_out=1)
        model.to(device)
        optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
        loss_func = torch.nn.MSELoss()
        prompts = data.LinearReg({"L": 40, "dx": 5, "dy": 1, "number_of_samples": 256,
                                  "noise_std": 0.1**0.5})  # fmt: skip
        for step in range(warmup + steps):
            if step == warmup:
                _synchronize(device)
                start = time.perf_counter()
            z_q, z, y_q = prompts.__generatedata__()  # on the CPU, as their loop draws
            z_q, z, y_q = z_q.to(device), z.to(device), y_q.to(device)
            optimizer.zero_grad()
            loss = loss_func(model(z_q, z), y_q)
            loss.backward()
            optimizer.step()
            loss.detach().item()  # their train_step returns the loss as a float every step
        _synchronize(device)
        per_step = (time.perf_counter() - start) / steps
        rows.append({"H": H, "us_per_step": 1e6 * per_step, "model_steps_per_s": 1 / per_step})
        print(f"  authors H {H}: {1e6 * per_step:9.1f} us/step", flush=True)
    return rows


def kernels(device: str, E: int, H: int, steps: int) -> dict:
    """Kernels per plain step (profiler), and the time per kernel of a replayed graph of tiny
    kernels (the launch-bound floor of one kernel)."""
    from torch.profiler import ProfilerActivity, profile

    config = TrainConfig(batch=256, steps=steps + 5, device=device, log_every=steps + 5,
                         validation_batch=64, data_streams="shared", cuda_graph=False)  # fmt: skip
    counted = {}

    def count(step: int, _model) -> None:
        if step == 5:
            counted["profile"] = profile(activities=[ProfilerActivity.CUDA])
            counted["profile"].__enter__()
        if step == steps + 4:  # the last step's log is outside
            _synchronize(device)
            counted["profile"].__exit__(None, None, None)

    train(AttentionConfig(d=5, heads=H, ensemble=E), LinearRegressionTask(5, 40, 0.1), config,
          callback=count, progress=False)  # fmt: skip
    events = [e for e in counted["profile"].events() if e.device_type.name == "CUDA"]
    launched = len(events) / (steps - 1)
    tiny = torch.zeros(1, device=device)
    graph, count_tiny = torch.cuda.CUDAGraph(), 200
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        for _ in range(3):
            tiny.add_(1.0)
        with torch.cuda.graph(graph, stream=stream):
            for _ in range(count_tiny):
                tiny.add_(1.0)
        graph.replay()
        torch.cuda.synchronize()
        start = time.perf_counter()
        for _ in range(20):
            graph.replay()
        torch.cuda.synchronize()
    per_kernel = (time.perf_counter() - start) / (20 * count_tiny)
    return {"E": E, "H": H, "kernels_per_step": launched, "us_per_tiny_kernel_in_graph":
            1e6 * per_kernel, "floor_us_per_step": 1e6 * per_kernel * launched}  # fmt: skip


def encoder_step_flops(config: EncoderConfig, batch: int, tokens: int, queries: int) -> dict:
    """Exact matrix-product FLOPs (2 per multiply-add) of one member's training step of the
    encoder ``config`` on ``batch`` prompts of ``tokens`` tokens, ``queries`` of them read out:
    part -> (forward, backward). Forward, with B = batch, m = tokens, D = d + 1, K = d_hid,
    F = FFN width and per layer: embedding B m D K; QKV B m K 3K; scores and AV B m m K each
    (h heads of m m K/h); W_O B m K K; FFN 2 B m K F; read-out B q K. Backward: twice each, but
    the embedding once (the prompt takes no gradient, only W_E does); the read-out's 2 B q K
    are a weighted sum, not a matrix product, so torch's FLOP counter leaves them out.

    >>> parts = encoder_step_flops(EncoderConfig(d=16, d_hid=256, heads=8, layers=4), 64, 16, 4)
    >>> sum(f + b for f, b in parts.values())  # per member-step at the paper's size: 19.5 GFLOP
    19546898432
    """
    B, m, D, K, F = batch, tokens, config.d + 1, config.d_hid, config.ffn_width
    L = config.layers
    forward = {
        "embedding": 2 * B * m * D * K,
        "qkv": 2 * L * B * m * K * 3 * K,
        "scores": 2 * L * B * m * m * K,
        "av": 2 * L * B * m * m * K,
        "w_o": 2 * L * B * m * K * K,
        "ffn": 2 * L * B * m * 2 * K * F,
        "read_out": 2 * B * queries * K,
    }
    return {part: (f, f if part == "embedding" else 2 * f) for part, f in forward.items()}


def ceiling(device: str, size: int, repeats: int) -> list[dict]:
    """TFLOP/s of ``size`` x ``size`` matrix products (2 size^3 FLOPs each) in float32, TF32
    (CUDA only) and bf16: the matrix units' rate this run reaches."""
    rows = []
    precisions = ("float32", "tf32", "bf16") if device.startswith("cuda") else ("float32", "bf16")
    generator = torch.Generator(device).manual_seed(0)
    for precision in precisions:
        dtype = torch.bfloat16 if precision == "bf16" else torch.float32
        a, b = (torch.randn(size, size, device=device, generator=generator).to(dtype)
                for _ in range(2))  # (size, size) each  # fmt: skip
        with matrix_precision("tf32" if precision == "tf32" else "float32", torch.device(device)):
            for _ in range(3):
                a @ b
            _synchronize(device)
            start = time.perf_counter()
            for _ in range(repeats):
                a @ b
            _synchronize(device)
        seconds = (time.perf_counter() - start) / repeats
        rows.append({"precision": precision, "n": size, "tflops": 2 * size**3 / seconds / 1e12})
        print(f"  matrix product {size}^3 {precision}: {rows[-1]['tflops']:8.1f} TFLOP/s",
              flush=True)  # fmt: skip
    return rows


def encoder(device: str, heads, ensembles, warmup: int, steps: int) -> list[dict]:
    """The encoder's training step per (h, E, precision): E = 5 at every h of ``heads``, then
    every E of ``ensembles`` at the largest h; graph (plain too for float32 at E = 5)."""
    cuda = device.startswith("cuda")
    precisions = ("float32", "tf32", "bf16") if cuda else ("float32", "bf16")
    cases = [(h, 5) for h in heads] + [(max(heads), E) for E in ensembles]
    rows = []
    for h, E in cases:
        architecture = EncoderConfig(d=16, d_hid=256, heads=h, layers=4, ensemble=E)
        parts = encoder_step_flops(architecture, ENCODER_BATCH, ENCODER_TOKENS, ENCODER_QUERIES)
        flops = sum(f + b for f, b in parts.values())  # one member-step
        tasks = [SparseRegressionTask(sigma=s) for s in PAPER_SIGMAS] * (E // len(PAPER_SIGMAS))
        for precision in precisions:
            for graph in (True, False) if (precision, E) == ("float32", 5) else (True,):
                config = TrainConfig(lr=1e-4, batch=ENCODER_BATCH, steps=warmup + steps,
                                     device=device, log_every=warmup + steps,
                                     validation_batch=64, cuda_graph=graph)  # fmt: skip
                per_step, captured = timed_training(
                    architecture.with_precision(precision), tasks, config, warmup
                )
                rows.append({
                    "h": h, "E": E, "precision": precision, "graph": graph,
                    "captured": captured,
                    "attention": "explicit" if precision == "float32" else "sdpa",
                    "ms_per_step": 1e3 * per_step, "ms_per_member_step": 1e3 * per_step / E,
                    "gflop_per_member_step": flops / 1e9,
                    "tflops": E * flops / per_step / 1e12,
                })  # fmt: skip
                print(f"  encoder h {h} E {E:3d} {precision:7} {'graph' if graph else 'plain'}: "
                      f"{1e3 * per_step:8.3f} ms/step, {1e3 * per_step / E:7.3f} ms/member-step, "
                      f"{rows[-1]['tflops']:7.2f} TFLOP/s", flush=True)  # fmt: skip
    return rows


def _side_by_side_worker(device: str, warmup: int, steps: int, queue) -> None:
    config = TrainConfig(batch=256, steps=warmup + steps, device=device,
                         log_every=warmup + steps, validation_batch=64,
                         data_streams="shared")  # fmt: skip
    model = AttentionConfig(d=5, heads=PAPER_HEADS, ensemble=len(PAPER_HEADS))
    queue.put(timed_training(model, LinearRegressionTask(5, 40, 0.1), config, warmup)[0])


def side_by_side(device: str, processes, warmup: int, steps: int) -> list[dict]:
    rows = []
    spawn = multiprocessing.get_context("spawn")
    for P in processes:
        queue = spawn.Queue()
        workers = [spawn.Process(target=_side_by_side_worker, args=(device, warmup, steps, queue))
                   for _ in range(P)]  # fmt: skip
        for worker in workers:
            worker.start()
        per_step = [queue.get() for _ in workers]
        for worker in workers:
            worker.join()
        total = sum(len(PAPER_HEADS) / s for s in per_step)
        rows.append({"processes": P, "model_steps_per_s": total,
                     "us_per_step_each": [1e6 * s for s in per_step]})  # fmt: skip
        print(f"  {P} processes side by side: {total:10.0f} model-steps/s together", flush=True)
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--authors", type=Path, default=None,
                        help="a checkout of XintianPan/ICL_linear (left out when not given)")
    parser.add_argument("--quick", action="store_true", help="a smoke run: few sizes and steps")
    parser.add_argument("--out", type=Path, default=Path("benchmarks/out/gpu_throughput.json"))
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    device = args.device
    if args.quick:
        ensembles, heads, warmup, steps, big = (1, 16), (1, 4), 5, 20, (2,)
    else:
        ensembles, heads, warmup, steps, big = (1, 16, 64, 256, 1024), (1, 2, 4, 8), 20, 100, (
            1, 2, 4)
    cuda = device.startswith("cuda")
    meta = machine() | {"device": torch.cuda.get_device_name(device) if cuda else "cpu"}
    result: dict = {"meta": meta}

    def save() -> None:  # after every part: a run cut short keeps what it measured
        args.out.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(args.out, json.dumps(result, indent=1))

    print(f"device: {meta['device']}", flush=True)
    result["grid"] = grid(device, ensembles, heads, warmup, steps)
    save()
    if args.authors is not None:
        result["authors"] = authors_step(args.authors, device, heads, warmup, steps)
        save()
    if cuda:
        result["kernels"] = [kernels(device, E, 4, 20) for E in (1, 13)]
        save()
    result["ceiling"] = ceiling(device, 1024 if args.quick else 8192, 3 if args.quick else 20)
    save()
    if args.quick:
        result["encoder"] = encoder(device, (2,), (), 2, 3)
    else:
        result["encoder"] = encoder(device, (1, 2, 4, 8), (20, 40, 80), 5, 50)
    save()
    if cuda:
        result["side_by_side"] = side_by_side(device, big, warmup, 4 * steps)
        save()
    print(summary(result))
    return 0


def summary(result: dict) -> str:
    """The table of the run: best graph rate per H against the authors' step."""
    lines = [f"{'H':>3} {'ours graph, best E':>20} {'at E':>6} {'ours E=1 graph':>15} "
             f"{'authors':>9} {'ratio best':>11} {'ratio E=1':>10}"]  # fmt: skip
    authors = {row["H"]: row["model_steps_per_s"] for row in result.get("authors", [])}
    for H in sorted({row["H"] for row in result["grid"]}):
        graphed = [r for r in result["grid"] if r["H"] == H and r["captured"]]
        if not graphed:  # the capture failed (or a CPU run): no graph rate to show
            lines.append(f"{H:>3} (no step ran as a CUDA graph)")
            continue
        best = max(graphed, key=lambda r: r["model_steps_per_s"])
        one = next(r for r in graphed if r["E"] == 1)
        theirs = authors.get(H, float("nan"))
        lines.append(f"{H:>3} {best['model_steps_per_s']:>20.0f} {best['E']:>6} "
                     f"{one['model_steps_per_s']:>15.0f} {theirs:>9.0f} "
                     f"{best['model_steps_per_s'] / theirs:>11.1f} "
                     f"{one['model_steps_per_s'] / theirs:>10.2f}")  # fmt: skip
    return "\n".join(lines + encoder_summary(result))


def encoder_summary(result: dict) -> list[str]:
    """The encoder's rows against the matrix-product ceiling of their precision."""
    top = {row["precision"]: row["tflops"] for row in result.get("ceiling", [])}
    rows = result.get("encoder", [])
    if not rows:
        return []
    lines = ["", f"encoder (d 16, d_hid 256, 4 layers, batch 64, 16 tokens): "
             f"{rows[0]['gflop_per_member_step']:.2f} GFLOP per member-step; ceiling "
             + ", ".join(f"{p} {t:.1f}" for p, t in top.items()) + " TFLOP/s",
             f"{'h':>3} {'E':>4} {'precision':>9} {'step':>6} {'ms/step':>9} "
             f"{'ms/member-step':>15} {'TFLOP/s':>8} {'of ceiling':>11}"]  # fmt: skip
    for row in rows:
        share = row["tflops"] / top.get(row["precision"], float("nan"))
        lines.append(f"{row['h']:>3} {row['E']:>4} {row['precision']:>9} "
                     f"{'graph' if row['graph'] else 'plain':>6} {row['ms_per_step']:>9.3f} "
                     f"{row['ms_per_member_step']:>15.3f} {row['tflops']:>8.2f} "
                     f"{share:>11.1%}")  # fmt: skip
    return lines


if __name__ == "__main__":
    sys.exit(main())
