"""One GPU session within a time budget: CUDA tests, throughput, then the trained claims at the
papers' size, resumable across sessions.

A lent GPU comes for minutes at a time; this is the one command to give it (the README,
"The trained claims on a GPU"). In order, each stage only if the budget leaves it time:

1. ``cuda-tests``: ``pytest -m cuda`` (the trainer on CUDA against the CPU, the CUDA-graph
   step against the plain one, every trained claim on CUDA from the CPU's prompts against the
   CPU's values); ``precision``: the Chen claims at quick with TF32 and bf16 against float32,
   two training seeds (`PRECISION_TEST`, its table in the log);
2. ``benchmark``: `benchmarks/gpu_throughput.py` (with ``--authors DIR``, the authors' step);
3. ``he2025``, ``chen2024``: ``icl-verify run --preset PRESET --device DEVICE --budget
   SECONDS`` of each paper's trained claims into the run ``paper-<paper>`` under
   ``STATE/runs`` with the cache ``STATE/cache`` (`stage_groups`): He et al.'s on a card as one
   run, its trainings side by side in 4 processes; Chen et al.'s one training group at a time
   with the claims that read it right after it (so a budget that ends mid-way leaves whole
   claims finished, not every training half-done); a Chen group whose trainings would not
   finish in the time left (from the benchmark's step time) is not started.

A stage that finished is recorded in ``STATE/session.json`` and skipped when the command runs
again with the same ``--state``; an unfinished run continues from its checkpoints (the run
id and the cache are the same). At the end, ``OUT`` receives at most 8 files: ``session.json``,
the benchmark's JSON, the log, ``reports.tar.gz`` (each run's report.md, results.json and
figures) and ``state-NN.tar.gz`` (the state to carry to the next session, in parts of at most
15 MiB: the runs and the cache without the checkpoints of finished trainings, then the
checkpoints of unfinished ones while they fit). Unpack the parts into ``STATE`` before the
next session (``cat state-*.tar.gz | tar -xz -C STATE``).

The campaign goes on across occasions from the state kept in the repository,
``docs/paper/gpu-state/`` (`gpu_campaign`): ``--restore`` starts from it, ``--merge`` folds an
occasion's returned files into it afterwards, ``--plan`` says what is left and how long it takes.

    python benchmarks/gpu_session.py --budget 480 --state .gpu-state --out $OUT \
        --restore docs/paper/gpu-state --authors .authors
    python benchmarks/gpu_session.py --merge ../shared/gpu-runs/DATE   # after it: into the repo
    python benchmarks/gpu_session.py --plan                            # what is left, GPU seconds
    python benchmarks/gpu_session.py --device cpu --preset smoke --budget 60 --skip cuda-tests \
        --skip benchmark --state /tmp/s --out /tmp/o        # the same path on the CPU, small

Exit status 0 when every stage finished, 3 when the budget left some unfinished (run again
with the same state to continue), 1 when a stage failed.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import gpu_campaign  # noqa: E402  (benchmarks/, the script's folder)

REPO = Path(__file__).resolve().parents[1]
STAGES = ("cuda-tests", "precision", "benchmark", "he2025", "chen2024")
PAPERS = gpu_campaign.PAPERS  # stage -> the papers' key prefix
ESTIMATES = {"cuda-tests": 120.0, "precision": 180.0, "benchmark": 150.0}  # seconds (the GPU)
LIMITS = {"cuda-tests": 240.0, "precision": 300.0, "benchmark": 300.0}  # at most: killed after
# The matrix units against float32 on the trained Chen claims at quick (issue 36 item 4): its
# own stage, so its minutes are budgeted apart from the other CUDA tests.
PRECISION_TEST = ("tests/validation/test_encoder_precision_claims.py::"
                  "test_the_matrix_units_give_the_float32_verdicts_and_values_on_cuda")
PART_BYTES = gpu_campaign.PART_BYTES
MAX_PARTS = 4  # 8 files at most come back: 4 state parts and 4 others


def claim_groups(paper: str, preset: str) -> list[list[str]]:
    """The paper's trained claims (`validation.registry.trained_claims`) in groups: each
    training in registry order (`Claim.trainings`) with the claims that read only trainings
    done by then; last, each claim that trains inside its measurement, seeded by the run (its
    parameters not a `TrainedParams`), on its own.

    >>> claim_groups("chen2024", "quick")  # doctest: +NORMALIZE_WHITESPACE
    [['CZZ-IMPORTANCE'], ['CZZ-HEADS', 'CZZ-PRUNE', 'CZZ-PPROBE'], ['CZZ-G-DECODER'],
     ['CZZ-G-DENSE'], ['CZZ-G-CORRELATED']]
    """
    from icl_verify.validation.registry import trained_claims
    from icl_verify.validation.training import TrainedParams

    claims = trained_claims(PAPERS[paper])
    needs = {c.id: set(c.trainings(c.parameters(preset))) for c in claims
             if issubclass(c.params, TrainedParams)}  # fmt: skip
    groups, done, placed = [], set(), set()
    for claim in claims:
        if claim.id not in needs or claim.id in placed:
            continue
        done |= needs[claim.id]
        group = [c.id for c in claims if c.id in needs and c.id not in placed
                 and needs[c.id] <= done]  # fmt: skip
        placed |= set(group)
        groups.append(group)
    return groups + [[c.id] for c in claims if c.id not in needs]


class Session:
    """The state of the session (``STATE/session.json``) and its log."""

    def __init__(self, state: Path, out: Path, deadline: float, reserve: float) -> None:
        self.state, self.out, self.deadline, self.reserve = state, out, deadline, reserve
        state.mkdir(parents=True, exist_ok=True)
        out.mkdir(parents=True, exist_ok=True)
        self.path = state / "session.json"
        self.record = json.loads(self.path.read_text()) if self.path.exists() else {"stages": {}}
        self.log_path = state / "log.txt"

    def left(self) -> float:
        return self.deadline - time.time()

    def say(self, text: str) -> None:
        line = f"[{time.strftime('%H:%M:%S')} left {self.left():6.0f} s] {text}"
        print(line, flush=True)
        with open(self.log_path, "a") as log:
            log.write(line + "\n")

    def done(self, stage: str) -> bool:
        return self.record["stages"].get(stage, {}).get("status") in ("passed", "finished")

    def mark(self, stage: str, **entry) -> None:
        self.record["stages"][stage] = {**self.record["stages"].get(stage, {}), **entry}
        self.path.write_text(json.dumps(self.record, indent=1))

    def command(self, stage: str, argv: list[str], timeout: float, log_name: str) -> int:
        """Run ``argv`` (output to STATE/<log_name> and this log), killed at ``timeout`` s."""
        self.say(f"{stage}: {' '.join(argv)}")
        start = time.time()
        path = self.state / log_name
        offset = path.stat().st_size if path.exists() else 0
        with open(path, "a") as log:
            try:
                status = subprocess.run(argv, cwd=REPO, stdout=log, stderr=subprocess.STDOUT,
                                        timeout=max(timeout, 1.0)).returncode  # fmt: skip
            except subprocess.TimeoutExpired:
                status = -9
        seconds = time.time() - start
        with open(path, "rb") as log:  # what this command printed
            log.seek(offset)
            tail = log.read().decode(errors="replace").splitlines()[-12:]
        for line in tail:
            self.say(f"  | {line}")
        self.say(f"{stage}: exit {status} after {seconds:.0f} s")
        runs = self.record["stages"].get(stage, {}).get("seconds", 0.0)
        self.mark(stage, seconds=runs + seconds, exit=status)
        return status


def cuda_tests(session: Session, stage: str) -> None:
    """``pytest -m cuda``: every CUDA test but the precision comparison (stage "cuda-tests"),
    or that comparison alone, its per-claim table printed (stage "precision")."""
    tests = ["--deselect", PRECISION_TEST, "tests"] if stage == "cuda-tests" else \
        ["-s", PRECISION_TEST]
    argv = [sys.executable, "-m", "pytest", "-m", "cuda", "-q", "-rA", "-p", "no:cacheprovider",
            *tests]  # fmt: skip
    limit = min(session.left() - session.reserve, LIMITS[stage])
    status = session.command(stage, argv, limit, f"{stage.replace('-', '_')}.txt")
    session.mark(stage, status="passed" if status == 0 else "failed")


def benchmark(session: Session, device: str, authors: Path | None) -> None:
    argv = [sys.executable, "benchmarks/gpu_throughput.py", "--device", device,
            "--out", str(session.state / "gpu_throughput.json")]  # fmt: skip
    if authors is not None:
        argv += ["--authors", str(authors)]
    limit = min(session.left() - session.reserve, LIMITS["benchmark"])
    status = session.command("benchmark", argv, limit, "benchmark.txt")
    session.mark("benchmark", status="passed" if status == 0 else "failed")


def _params(claim, preset: str, sets: dict[str, str]):
    """The claim's parameters at ``preset`` with the ``--set`` values it has."""
    known = claim.presets[preset]
    return claim.parameters(preset, {k: v for k, v in sets.items() if hasattr(known, k)})


def _encoder_seconds(session: Session, group: list[str], preset: str, device: str,
                     sets: dict[str, str]) -> float:  # fmt: skip
    """Seconds the group's encoder trainings not yet in the cache need, from the benchmark's
    slowest step (0 when none is needed; NaN when the benchmark did not run)."""
    from icl_verify.validation.cache import config_key
    from icl_verify.validation.registry import select_claims

    trainings = {t for c in select_claims(group) for t in c.trainings(_params(c, preset, sets))}
    todo = [
        t for t in trainings
        if not (session.state / "cache" / config_key(
            "trained-encoders", {**dataclasses.asdict(t), "device": device}) / "result.npz"
        ).exists()
    ]  # fmt: skip
    if not todo:
        return 0.0
    path = session.state / "gpu_throughput.json"
    rows = json.loads(path.read_text()).get("encoder", []) if path.exists() else []
    rates = [row["ms_per_step"] for row in rows if row["graph"]]
    return max(rates) * 1e-3 * sum(t.steps for t in todo) if rates else math.nan


def run_id(paper: str, preset: str, sets: dict[str, str]) -> str:
    """The run a stage writes: a run with ``--set`` values is its own (a smaller size first
    does not count as the full preset's claims finished).

    >>> run_id("chen2024", "paper", {}), run_id("chen2024", "paper", {"layers": "4,5"})
    ('paper-chen2024', 'paper-chen2024-layers4_5')
    """
    changed = "".join(f"-{k}{v.replace(',', '_')}" for k, v in sorted(sets.items()))
    return re.sub(r"[^A-Za-z0-9._-]", "_", f"{preset}-{paper}{changed}")


def stage_groups(paper: str, preset: str, device: str) -> tuple[list[list[str]], int]:
    """The claim groups a stage runs one after another, and the workers of each: He et al.'s
    trained claims as one run on a card (its trainings side by side in `CUDA_WORKERS` processes,
    each claim starting once the trainings it reads are made: `validation.runner.work_order`);
    Chen et al.'s, and any stage on the CPU, one training group at a time (`claim_groups`),
    so a budget that ends mid-way leaves whole claims finished.

    >>> stage_groups("he2025", "smoke", "cuda")[1], stage_groups("he2025", "smoke", "cpu")[1]
    (4, 1)
    """
    from icl_verify.validation.runner import CUDA_WORKERS

    groups = claim_groups(paper, preset)
    if paper == "he2025" and device.startswith("cuda"):
        return [[claim for group in groups for claim in group]], CUDA_WORKERS
    return groups, 1


def claims_stage(session: Session, paper: str, preset: str, device: str,
                 sets: dict[str, str]) -> None:  # fmt: skip
    run = run_id(paper, preset, sets)  # also the stage's name in session.json
    finished = True
    groups, workers = stage_groups(paper, preset, device)
    for group in groups:
        left = session.left() - session.reserve
        if paper == "chen2024" and preset == "paper":  # a paper encoder's state stays here
            need = _encoder_seconds(session, group, preset, device, sets)
            if not need <= left:
                session.say(f"chen2024: {group} not started: its encoder trainings need "
                            f"~{need:.0f} s (from the benchmark), {left:.0f} s left")  # fmt: skip
                finished = False
                break
        if left < 5:  # not even the start-up of a run
            finished = False
            break
        argv = [sys.executable, "-m", "icl_verify.validation.cli", "run", *group, "--preset",
                preset, "--device", device, "--workers", str(workers), "--budget", f"{left:.0f}",
                "--run-id", run, "--out", str(session.state / "runs"), "--cache",
                str(session.state / "cache"), "--no-progress",
                *(x for k, v in sets.items() for x in ("--set", f"{k}={v}"))]  # fmt: skip
        status = session.command(run, argv, left + 60, f"{run}.txt")
        if status not in (0, 1):  # 3: stopped at the budget; else a failure
            finished = False
            if status != 3:
                session.mark(run, status="failed")
                return
            break
    session.mark(run, status="finished" if finished else "unfinished", run_id=run)


def pack(session: Session) -> None:
    """OUT: session.json, the benchmark, the log, reports.tar.gz, state-NN.tar.gz."""
    state, out = session.state, session.out
    for name in ("session.json", "gpu_throughput.json"):
        if (state / name).exists():
            (out / name).write_bytes((state / name).read_bytes())
    reports = []
    for run in sorted((state / "runs").glob("*")) if (state / "runs").exists() else []:
        for path in sorted(run.rglob("*")):
            if path.is_file():
                reports.append((path, str(path.relative_to(state / "runs"))))
    (out / "reports.tar.gz").write_bytes(gpu_campaign.tar_bytes(reports))
    # the state: what a next session needs; finished trainings' checkpoints are not needed
    cache = state / "cache"
    entries = sorted(p for p in cache.iterdir() if p.is_dir()) if cache.exists() else []
    first, later = [], []
    for entry in entries:
        done = gpu_campaign.finished(entry)
        for path in sorted(entry.rglob("*")):
            if not path.is_file():
                continue
            name = str(path.relative_to(state))
            if path.name.startswith("checkpoint") and done:
                continue
            (later if path.name.startswith("checkpoint") else first).append((path, name))
    for path in sorted(state.glob("*")):
        if path.is_file() and path.suffix in (".json", ".txt"):
            first.append((path, path.name))
    for path in sorted((state / "runs").rglob("*")) if (state / "runs").exists() else []:
        if path.is_file():
            first.append((path, str(path.relative_to(state))))
    kept, left_out = list(first), []
    for member in sorted(later, key=lambda m: m[0].stat().st_size):  # small checkpoints first
        if len(gpu_campaign.tar_bytes(kept + [member])) <= PART_BYTES * MAX_PARTS:
            kept.append(member)
        else:
            left_out.append(member[1])
    data = gpu_campaign.tar_bytes(kept)
    parts = len(gpu_campaign.write_parts(data, out))
    session.mark("pack", state_bytes=len(data), left_out=left_out)
    session.say(f"packed: state {len(data) / 2**20:.1f} MiB in {parts} parts; "
                f"left out: {left_out or 'nothing'}")  # fmt: skip
    (out / "log.txt").write_bytes(session.log_path.read_bytes())
    (out / "session.json").write_bytes(session.path.read_bytes())


def plan(args, parser) -> int:
    """``--plan``: the campaign's plan (`gpu_campaign.trainings_left`) printed."""
    with tempfile.TemporaryDirectory() as tmp:
        state = args.state if args.state is not None and args.state.is_dir() else \
            gpu_campaign.unpack(gpu_campaign.STATE_DIR, Path(tmp) / "state")
        candidates = [args.benchmark] if args.benchmark is not None else [
            state / "gpu_throughput.json", *gpu_campaign.dated_benchmarks()]
        source = next((p for p in candidates if p.is_file()), None)
        if source is None:
            parser.error("--benchmark: no benchmark JSON found; give one")
        benchmark = json.loads(source.read_text())
        left = gpu_campaign.trainings_left(state, benchmark, args.preset, args.device)
    print(gpu_campaign.format_plan(left, benchmark, str(source)))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", type=float, help="seconds for the whole session")
    parser.add_argument("--state", type=Path, help="the session's state folder")
    parser.add_argument("--out", type=Path, help="where the returned files go")
    parser.add_argument("--restore", type=Path, default=None, metavar="PARTS",
                        help="unpack the state parts in PARTS (e.g. docs/paper/gpu-state) into "
                        "--state first, when --state holds no session yet")  # fmt: skip
    parser.add_argument("--plan", action="store_true",
                        help="print what is left of the campaign (from the state in --state, "
                        "else docs/paper/gpu-state) with GPU seconds and occasions, and exit")
    parser.add_argument("--benchmark", type=Path, default=None,
                        help="the benchmark JSON --plan estimates from (default: the state's, "
                        "else the newest docs/benchmarks/gpu_throughput_*.json)")  # fmt: skip
    parser.add_argument("--merge", type=Path, default=None, metavar="RETURNED",
                        help="merge the state of a returned folder (e.g. ../shared/gpu-runs/"
                        "DATE) into docs/paper/gpu-state and exit")  # fmt: skip
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--preset", default="paper")
    parser.add_argument("--authors", type=Path, default=None,
                        help="a checkout of XintianPan/ICL_linear for the benchmark")
    parser.add_argument("--skip", action="append", default=[], choices=STAGES)
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="a parameter of every trained claim that has it, e.g. layers=4 "
                        "(the Chen encoders at one depth first); the run id names it")  # fmt: skip
    parser.add_argument("--reserve", type=float, default=25.0,
                        help="seconds of the budget kept for writing OUT at the end")
    args = parser.parse_args(argv)
    if args.merge is not None:
        if not list(args.merge.glob("state-*.tar.gz")):
            parser.error(f"--merge: must be a folder of state-NN.tar.gz parts, none in "
                         f"{args.merge}")  # fmt: skip
        taken = gpu_campaign.merge(args.merge)
        print(f"merged into {gpu_campaign.STATE_DIR}: {len(taken['cache'])} cache entries and "
              f"runs {taken['runs']} from {args.merge}")  # fmt: skip
        return 0
    if args.plan:
        return plan(args, parser)
    for name in ("budget", "state", "out"):
        if getattr(args, name) is None:
            parser.error(f"--{name}: required to run a session (or give --plan or --merge)")
    if not all("=" in item for item in args.set):
        parser.error("--set: must be KEY=VALUE, e.g. layers=4")
    sets = dict(item.split("=", 1) for item in args.set)
    if args.restore is not None and not (args.state / "session.json").exists():
        gpu_campaign.unpack(args.restore, args.state)
    session = Session(
        args.state.resolve(), args.out.resolve(), time.time() + args.budget, args.reserve
    )
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    session.say(f"session: budget {args.budget:.0f} s, device {args.device}, preset "
                f"{args.preset}, done before: {sorted(session.record['stages'])}")  # fmt: skip
    def name(stage: str) -> str:  # a claims stage is recorded under its run id
        return run_id(stage, args.preset, sets) if stage in PAPERS else stage

    for stage in STAGES:
        if stage in args.skip or session.done(name(stage)):
            continue
        if session.left() - session.reserve < ESTIMATES.get(stage, 10.0):
            session.say(f"{stage}: not started ({ESTIMATES.get(stage, 10.0):.0f} s needed)")
            continue
        if stage in ("cuda-tests", "precision"):
            cuda_tests(session, stage)
        elif stage == "benchmark":
            benchmark(session, args.device, args.authors)
        else:
            claims_stage(session, stage, args.preset, args.device, sets)
    pack(session)
    statuses = {name(s): session.record["stages"].get(name(s), {}).get("status", "not started")
                for s in STAGES if s not in args.skip}  # fmt: skip
    session.say(f"stages: {statuses}")
    if "failed" in statuses.values():
        return 1
    return 0 if all(s in ("passed", "finished") for s in statuses.values()) else 3


if __name__ == "__main__":
    sys.exit(main())
