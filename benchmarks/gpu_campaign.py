"""The GPU campaign across occasions: what is left of it, how long it takes, and its state.

A lent GPU comes for 15 minutes at a time (`benchmarks/gpu_session.py` is the one command to
give it). Between occasions the campaign's state (cache entries of the trainings, finished or
checkpointed, and the run records) lives in the repository under ``docs/paper/gpu-state/`` as
parts of at most 15 MiB (``state-NN.tar.gz``); an occasion made elsewhere hands its returned
files over in ``../shared/gpu-runs/<date>/`` and `merge` folds them in. Three uses:

- `plan`: every trained claim of both papers not yet published at the full paper preset, its
  trainings with the steps done (from the state's cache: a result, or a checkpoint's step) and
  the GPU seconds the rest needs, estimated from the latest benchmark (`step_seconds`), and how
  many occasions that makes;
- `merge`: a handed-over state into the repository's, per cache entry the furthest one (a
  finished result over a checkpoint, a later checkpoint over an earlier one), per run the record
  holding more finished claims;
- `unpack`: parts into a state folder (what an occasion starts from).

    python benchmarks/gpu_session.py --plan            # the plan from docs/paper/gpu-state
    python benchmarks/gpu_session.py --merge ../shared/gpu-runs/2026-11-27-h200

The module imports torch and the package only inside functions, so ``--help`` is instant.
"""

from __future__ import annotations

import dataclasses
import io
import json
import math
import re
import shutil
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
STATE_DIR = REPO / "docs" / "paper" / "gpu-state"  # the campaign's state between occasions
PUBLISHED = REPO / "docs" / "paper"
PART_BYTES = 15 * 2**20  # one returned file (the device tool takes 16 MiB at most)
PAPERS = {"he2025": "He", "chen2024": "Chen"}  # stage -> the papers' key prefix
# What one 15-minute occasion leaves for commands: the 2026-11-27 occasion ran 530 + 230 s of
# commands in its 900 s of device time (the rest: the machine's start, copies, idle waits).
OCCASION_SECONDS = 720.0
# Per occasion: the packing at the end (gpu_session's --reserve) and one claim process's start;
# once per campaign: the CUDA tests and the benchmark (gpu_session's ESTIMATES).
RESERVE_SECONDS = 25.0 + 10.0
FIRST_OCCASION_SECONDS = 120.0 + 150.0


def dated_benchmarks() -> list[Path]:
    """The GPU benchmarks kept in ``docs/benchmarks`` (``gpu_throughput_<card>_<date>.json``),
    newest date first."""
    dated = [(re.search(r"(\d{4}-\d{2}-\d{2})\.json$", p.name), p)
             for p in (REPO / "docs" / "benchmarks").glob("gpu_throughput_*.json")]  # fmt: skip
    return [p for match, p in sorted(dated, key=lambda m: m[0].group(1) if m[0] else "",
                                      reverse=True) if match]  # fmt: skip


def unpack(parts: Path, into: Path) -> Path:
    """The ``state-NN.tar.gz`` parts of ``parts`` (a returned folder or ``docs/paper/gpu-state``)
    unpacked into ``into``; returns ``into``. A folder with no parts is a state already."""
    files = sorted(Path(parts).glob("state-*.tar.gz"))
    if not files:
        return Path(parts)
    data = b"".join(f.read_bytes() for f in files)
    Path(into).mkdir(parents=True, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as archive:
        archive.extractall(into, filter="data")
    return Path(into)


FINISHED = 2**62  # `checkpoint_step` of a finished entry: beyond any training's steps


def finished(entry: Path) -> bool:
    """Whether the cache entry holds its result (``result.npz`` or ``result.json``)."""
    return (entry / "result.npz").exists() or (entry / "result.json").exists()


def checkpoint_step(entry: Path) -> int:
    """How far the training of a cache entry is: -1 without a checkpoint, else its step
    (a finished entry counts as `FINISHED`)."""
    if finished(entry):
        return FINISHED
    checkpoints = sorted(entry.glob("checkpoint*.pt"))
    if not checkpoints:
        return -1
    import torch

    try:
        return int(torch.load(checkpoints[0], map_location="cpu", weights_only=False)["step"])
    except Exception:  # a damaged checkpoint is no progress (the trainer starts over too)
        return -1


def _finished_claims(run: Path) -> int:
    try:
        return len(json.loads((run / "results.json").read_text()).get("claims", []))
    except (OSError, ValueError):
        return -1


def merge(source: Path, into: Path = STATE_DIR) -> dict[str, list[str]]:
    """Fold the state handed over in ``source`` (a returned folder's parts, or a state folder)
    into the parts under ``into``: per cache entry the furthest training, per run the record
    with more finished claims; ``session.json``'s stages are the union, the later's kept. The
    parts are rewritten whole (written beside, then renamed), so a killed merge leaves the old
    parts or the new ones. Returns what came from ``source``: {"cache": [...], "runs": [...]}.
    """
    with tempfile.TemporaryDirectory() as tmp:
        ours = unpack(into, Path(tmp) / "ours")
        theirs = unpack(source, Path(tmp) / "theirs")
        taken: dict[str, list[str]] = {"cache": [], "runs": []}
        for entry in sorted((theirs / "cache").glob("*/")) if (theirs / "cache").exists() else []:
            mine = ours / "cache" / entry.name
            if checkpoint_step(entry) > checkpoint_step(mine):
                shutil.rmtree(mine, ignore_errors=True)
                shutil.copytree(entry, mine)
                taken["cache"].append(entry.name)
        for run in sorted((theirs / "runs").glob("*/")) if (theirs / "runs").exists() else []:
            mine = ours / "runs" / run.name
            if _finished_claims(run) >= _finished_claims(mine):
                shutil.rmtree(mine, ignore_errors=True)
                shutil.copytree(run, mine)
                taken["runs"].append(run.name)
        stages: dict = {}
        for folder in (ours, theirs):
            if (folder / "session.json").exists():
                stages.update(json.loads((folder / "session.json").read_text())["stages"])
        (ours / "session.json").write_text(json.dumps({"stages": stages}, indent=1))
        pack_parts(ours, Path(into))
    return taken


def pack_parts(state: Path, into: Path) -> list[Path]:
    """``state`` (cache, runs, session.json; never logs or finished trainings' checkpoints) as
    ``state-NN.tar.gz`` parts of at most `PART_BYTES` under ``into``, replacing its parts."""
    members = []
    for path in sorted(state.rglob("*")):
        name = str(path.relative_to(state))
        if not path.is_file() or name.split("/")[0] not in ("cache", "runs", "session.json"):
            continue
        if path.name.startswith("checkpoint") and finished(path.parent):
            continue
        members.append((path, name))
    return write_parts(tar_bytes(members), into)


def tar_bytes(members: list[tuple[Path, str]]) -> bytes:
    """A gzipped tar of ``members`` (a file's path, its name in the archive)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz", compresslevel=6) as archive:
        for path, name in members:
            archive.add(path, arcname=name)
    return buffer.getvalue()


def write_parts(data: bytes, into: Path) -> list[Path]:
    """``data`` as ``state-NN.tar.gz`` parts of at most `PART_BYTES` under ``into``, replacing
    its parts: written beside them first, so a kill leaves whole parts of one archive."""
    into.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=into, prefix=".parts-"))
    written = []
    for i in range(0, len(data), PART_BYTES):
        part = staging / f"state-{i // PART_BYTES:02d}.tar.gz"
        part.write_bytes(data[i : i + PART_BYTES])
        written.append(part)
    for old in into.glob("state-*.tar.gz"):
        old.unlink()
    final = [part.rename(into / part.name) for part in written]
    staging.rmdir()
    return final


# ---------------------------------------------------------------------------------------------
# the plan


@dataclass(frozen=True)
class TrainingLeft:
    """One training of the campaign not yet finished."""

    paper: str  # "he2025" | "chen2024"
    claims: tuple[str, ...]  # the unpublished claims that read it
    what: str  # the training in a few words
    steps: int  # its Adam steps
    done: int  # steps checkpointed in the state (0: not started)
    seconds: float  # estimated GPU seconds for the rest (NaN: no benchmark row for it)
    basis: str  # which benchmark row, and how it was scaled


def _grid_us(grid: list[dict], E: int, H: int) -> tuple[float, str]:
    """He et al.'s graph step for E members with at most H heads: the benchmark grid's row of
    the smallest measured H >= H, interpolated linearly in E between the measured ensembles
    (the step is launch-bound at small E and grows with E beyond)."""
    rows = [r for r in grid if r["graph"] and r.get("captured", True)]
    heads = sorted({r["H"] for r in rows})
    h = next((x for x in heads if x >= H), heads[-1])
    points = sorted((r["E"], r["us_per_step"]) for r in rows if r["H"] == h)
    lo = max((p for p in points if p[0] <= E), default=points[0])
    hi = min((p for p in points if p[0] >= E), default=points[-1])
    us = lo[1] if hi[0] == lo[0] else lo[1] + (hi[1] - lo[1]) * (E - lo[0]) / (hi[0] - lo[0])
    return us, f"grid H={h}, E={lo[0]}..{hi[0]} interpolated at E={E}"


def _encoder_ms(rows: list[dict], spec) -> tuple[float, str]:
    """Chen et al.'s graph step for the training ``spec``: the benchmark's fastest row of its
    head count and precision (the paper encoder: 4 layers, batch 64, 16 tokens, at the row's E
    members, 5 unless the row says), scaled linearly by members, layers, batch and tokens (a
    matrix-product-bound step; the decoder's 2 (n + q) tokens double it)."""
    precision = getattr(spec, "precision", "float32")
    fits = [r for r in rows if r["graph"] and r["h"] == spec.heads
            and r.get("precision", "float32") == precision]  # fmt: skip
    if not fits:
        return math.nan, f"no benchmark row for h={spec.heads}, {precision}"
    row = min(fits, key=lambda r: r["ms_per_step"] / r.get("E", 5))
    tokens = (spec.n + spec.q) * (2 if spec.architecture == "decoder" else 1)
    scale = (len(spec.member_sigmas) / row.get("E", 5)) * (spec.layers / 4) * (spec.batch / 64)
    scale *= tokens / 16
    return row["ms_per_step"] * scale, f"encoder h={spec.heads} {precision}, x{scale:.2f}"


def step_seconds(spec, benchmark: dict) -> tuple[float, str]:
    """Estimated GPU seconds of one step of the training ``spec`` from ``benchmark`` (the JSON
    of `benchmarks/gpu_throughput.py`), and the row it came from.

    >>> grid = [{"E": 1, "H": 2, "graph": True, "us_per_step": 100.0},
    ...         {"E": 16, "H": 2, "graph": True, "us_per_step": 250.0}]
    >>> from icl_verify.numerics import EnsembleTraining
    >>> spec = EnsembleTraining(d=5, L=40, sigma2=0.1, heads=(2,) * 4, lr=1e-3, steps=10,
    ...     batch=64, seed=0, log_every=10, checkpoint_every=0, validation_batch=64)
    >>> step_seconds(spec, {"grid": grid})
    (0.00013, 'grid H=2, E=1..16 interpolated at E=4')
    """
    inner = getattr(spec, "training", None)  # a pruned fine-tuning runs its encoders' step
    if inner is not None:
        seconds, basis = _encoder_ms(benchmark.get("encoder", []), inner)
        return seconds * 1e-3, basis
    if hasattr(spec, "architecture"):
        seconds, basis = _encoder_ms(benchmark.get("encoder", []), spec)
        return seconds * 1e-3, basis
    us, basis = _grid_us(benchmark.get("grid", []), len(spec.heads), max(spec.heads))
    return round(us * 1e-6, 12), basis


def trainings_left(state: Path, benchmark: dict, preset: str = "paper",
                   device: str = "cuda") -> list[TrainingLeft]:  # fmt: skip
    """Every training of a trained claim not yet published at the full ``preset`` (claims in
    registry order, each training once), with its progress in ``state`` and its estimate."""
    from icl_verify.validation.cache import config_key
    from icl_verify.validation.published import newest_by_device, publications
    from icl_verify.validation.registry import trained_claims
    from icl_verify.validation.training import TrainedParams

    published = publications(PUBLISHED)
    rows: dict[str, TrainingLeft] = {}
    for paper, prefix in PAPERS.items():
        for claim in trained_claims(prefix):
            if newest_by_device(claim.id, published) or not issubclass(claim.params, TrainedParams):
                continue
            specs = list(claim.trainings(claim.parameters(preset)))
            specs += [s for spec in specs for s in getattr(spec, "inputs", tuple)()]
            for spec in specs:
                key = config_key(spec.ARTEFACT, {**dataclasses.asdict(spec), "device": device})
                if key in rows:
                    rows[key] = dataclasses.replace(rows[key],
                                                    claims=(*rows[key].claims, claim.id))
                    continue
                done = checkpoint_step(Path(state) / "cache" / key)
                if done == FINISHED:
                    continue
                per_step, basis = step_seconds(spec, benchmark)
                done = max(done, 0)
                rows[key] = TrainingLeft(paper, (claim.id,), _what(spec), spec.steps, done,
                                         per_step * (spec.steps - done), basis)  # fmt: skip
    return list(rows.values())


def _what(spec) -> str:
    inner = getattr(spec, "training", None)
    if inner is not None:
        return f"pruned fine-tune of L={inner.layers}, h={inner.heads}"
    if hasattr(spec, "architecture"):
        return (f"{spec.architecture} L={spec.layers}, h={spec.heads}, s={spec.s}, "
                f"zeta={spec.zeta}, {len(spec.member_sigmas)} members")  # fmt: skip
    attention = spec.attention if isinstance(spec.attention, str) else "mixed"
    return (f"{attention} E={len(spec.heads)}, H<={max(spec.heads)}, {spec.optimizer} "
            f"lr={spec.lr:g} batch={spec.batch}")  # fmt: skip


def occasions(seconds: float, occasion: float = OCCASION_SECONDS) -> int:
    """Occasions of ``occasion`` seconds of commands that ``seconds`` of training need, the
    first also running the CUDA tests and the benchmark (`FIRST_OCCASION_SECONDS`).

    >>> occasions(0.0), occasions(415.0), occasions(416.0), occasions(1100.0), occasions(1101.0)
    (1, 1, 2, 2, 3)
    """
    usable = occasion - RESERVE_SECONDS
    first = usable - FIRST_OCCASION_SECONDS
    return 1 if seconds <= first else 1 + math.ceil((seconds - first) / usable)


def format_plan(left: list[TrainingLeft], benchmark: dict, source: str) -> str:
    """The plan as text: a row per training, the totals per paper, and the occasions."""
    lines = [f"The campaign's plan (trainings of trained claims not yet published at the full "
             f"paper preset); step times from {source} ({benchmark.get('meta', {}).get('device')})",
             "", f"{'paper':9} {'training':52} {'steps done':>17} {'GPU s':>8}  claims",
             ]  # fmt: skip
    for row in left:
        lines.append(f"{row.paper:9} {row.what:52} {row.done:>8}/{row.steps:<8} "
                     f"{row.seconds:8.0f}  {', '.join(row.claims)}  [{row.basis}]")  # fmt: skip
    total = 0.0
    lines.append("")
    for paper in PAPERS:
        seconds = sum(r.seconds for r in left if r.paper == paper)
        total += seconds
        count = sum(r.paper == paper for r in left)
        lines.append(f"{paper}: {seconds / 60:.1f} GPU-minutes in {count} trainings")
    side = {r["processes"]: r["model_steps_per_s"] for r in benchmark.get("side_by_side", [])}
    he = sum(r.seconds for r in left if r.paper == "he2025")
    lines.append(f"in all: {total / 60:.1f} GPU-minutes, {occasions(total)} occasion(s) of "
                 f"{OCCASION_SECONDS:.0f} s of commands")  # fmt: skip
    if 1 in side and max(side) > 1:
        p = max(side)
        faster = he / (side[p] / side[1])
        lines.append(f"with He et al.'s trainings {p} side by side ({side[p] / side[1]:.1f}x the "
                     f"model-steps of one): {(total - he + faster) / 60:.1f} GPU-minutes, "
                     f"{occasions(total - he + faster)} occasion(s)")  # fmt: skip
    return "\n".join(lines)
