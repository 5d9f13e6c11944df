"""Wall time of `make verify` (``icl-verify run --preset quick --device cpu``) by worker count.

Issue 12 asks for the main job's wall time with both cores against one, in one run. This runs
``icl-verify run --preset PRESET --device cpu --workers N --no-progress`` for each N in
``--workers`` (default 1 then 2) in this one process, each into its own fresh results folder
(so no run reuses another's cached trained models), and prints each wall time, each exit
status and the ratio of the first to each (the speed-up over one worker), and, from each
run's results.json, the claims' own seconds: their sum and the slowest (the budget of `make
verify` is watched claim by claim). With one worker a claim's seconds include the trainings it
is the first to read; with several, trainings run as tasks of their own and a claim's seconds
exclude them (the sum is then the claims' measuring time only). Claim ids given after the
options time that subset instead of every claim (the report must say which).

    python benchmarks/verify_wall_time.py                        # every claim, quick preset
    python benchmarks/verify_wall_time.py --preset smoke HE-P4.1 HE-T4.2i

Writes JSON (default benchmarks/out/verify_wall_time.json). Exit status 0 when every run
ended with 0 or 1 (1 = a claim disagrees, a finding, as `make verify` tolerates), else 1.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _machine import machine  # noqa: E402  (benchmarks/, the script's folder)

from icl_verify._files import write_atomic  # noqa: E402


def time_run(preset: str, workers: int, claims: list[str]) -> dict:
    """One ``icl-verify run`` in a fresh results folder: its wall seconds, exit status and each
    claim's seconds as its record states them (slowest first)."""
    with tempfile.TemporaryDirectory(prefix="verify-wall-") as out:
        command = [
            sys.executable, "-m", "icl_verify.validation.cli", "run", *claims,
            "--preset", preset, "--device", "cpu", "--workers", str(workers),
            "--no-progress", "--out", out, "--run-id", "timed",
        ]  # fmt: skip
        start = time.perf_counter()
        finished = subprocess.run(command, capture_output=True, text=True)
        seconds = time.perf_counter() - start
        results = Path(out) / "timed" / "results.json"
        records = json.loads(results.read_text())["claims"] if results.exists() else []
    tail = (finished.stdout + finished.stderr).strip().splitlines()[-3:]
    claim_seconds = dict(
        sorted(((r["id"], r["seconds"]) for r in records), key=lambda item: -item[1])
    )
    return {"workers": workers, "seconds": seconds, "exit": finished.returncode, "tail": tail,
            "claim_seconds": claim_seconds}  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("claims", nargs="*", metavar="ID", help="claim ids (default: all)")
    parser.add_argument("--preset", default="quick")
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--out", default="benchmarks/out/verify_wall_time.json")
    args = parser.parse_args(argv)

    rows = []
    print(f"{'workers':>7} {'wall s':>9} {'exit':>4} {'speed-up':>8}", flush=True)
    for workers in args.workers:
        row = time_run(args.preset, workers, args.claims)
        row["speedup_vs_first"] = rows[0]["seconds"] / row["seconds"] if rows else 1.0
        rows.append(row)
        print(
            f"{workers:>7} {row['seconds']:>9.1f} {row['exit']:>4} {row['speedup_vs_first']:>8.2f}",
            flush=True,
        )
        slowest = ", ".join(f"{i} {t:.0f}" for i, t in list(row["claim_seconds"].items())[:6])
        print(f"{'':>7} claims {sum(row['claim_seconds'].values()):.0f} s in all; slowest: "
              f"{slowest}", flush=True)  # fmt: skip
        if row["exit"] not in (0, 1):
            print("\n".join(row["tail"]), file=sys.stderr)

    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    meta = {
        **machine(),
        "preset": args.preset,
        "claims": args.claims or "all",
    }
    write_atomic(out, json.dumps({"meta": meta, "rows": rows}, indent=2))
    print(f"wrote {out}")
    return 0 if all(row["exit"] in (0, 1) for row in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
