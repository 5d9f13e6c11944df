"""The GPU campaign's plan and state (`benchmarks/gpu_campaign.py`, `gpu_session.py --plan`,
``--merge``), on the CPU: what is left is read from a state's cache, estimated from a benchmark,
and a handed-over state merges into the repository's, furthest training kept."""

import dataclasses
import doctest
import importlib.util
import io
import json
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest
import torch
from icl_verify.validation.cache import config_key
from icl_verify.validation.registry import select_claims

ROOT = Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("gpu_campaign", ROOT / "benchmarks/gpu_campaign.py")
campaign = importlib.util.module_from_spec(spec)
sys.modules["gpu_campaign"] = campaign  # its dataclasses look their module up by name
spec.loader.exec_module(campaign)

# A benchmark of the shape gpu_throughput.py writes: one He grid row pair and encoder rows.
BENCHMARK = {
    "meta": {"device": "test card"},
    "grid": [{"E": 1, "H": 2, "graph": True, "us_per_step": 100.0},
             {"E": 16, "H": 2, "graph": True, "us_per_step": 250.0},
             {"E": 1, "H": 4, "graph": True, "us_per_step": 120.0},
             {"E": 16, "H": 4, "graph": True, "us_per_step": 300.0}],
    "encoder": [{"h": h, "graph": True, "ms_per_step": 5.0} for h in (1, 2, 4, 8)],
    "side_by_side": [{"processes": 1, "model_steps_per_s": 1.0},
                     {"processes": 4, "model_steps_per_s": 4.0}],
}  # fmt: skip
KMS = "HE-5.3-KMS"


def _key(spec, device="cpu"):
    return config_key(spec.ARTEFACT, {**dataclasses.asdict(spec), "device": device})


def _kms_training():
    claim = select_claims([KMS])[0]
    (training,) = claim.trainings(claim.parameters("smoke"))
    return training


def test_the_doctests():
    assert doctest.testmod(campaign).failed == 0
    path = ROOT / "benchmarks" / "gpu_session.py"
    session_spec = importlib.util.spec_from_file_location("gpu_session", path)
    session = importlib.util.module_from_spec(session_spec)
    sys.modules["gpu_session"] = session
    session_spec.loader.exec_module(session)
    assert doctest.testmod(session, optionflags=doctest.NORMALIZE_WHITESPACE).failed == 0


def test_a_checkpointed_training_is_left_with_its_steps_and_a_finished_one_is_not(tmp_path):
    training = _kms_training()
    entry = tmp_path / "cache" / _key(training)
    entry.mkdir(parents=True)
    torch.save({"step": 7}, entry / "checkpoint.pt")
    rows = {r.claims: r for r in campaign.trainings_left(tmp_path, BENCHMARK, "smoke", "cpu")}
    row = rows[(KMS,)]
    per_step, _ = campaign.step_seconds(training, BENCHMARK)
    assert (row.done, row.steps) == (7, training.steps)
    assert row.seconds == pytest.approx(per_step * (training.steps - 7), rel=1e-12)
    (entry / "result.npz").write_bytes(b"finished")
    rows = {r.claims for r in campaign.trainings_left(tmp_path, BENCHMARK, "smoke", "cpu")}
    assert (KMS,) not in rows and rows  # the others are still left


def test_a_claim_published_at_full_size_is_not_in_the_plan(tmp_path):
    rows = campaign.trainings_left(tmp_path, BENCHMARK, "smoke", "cpu")
    claims = {c for r in rows for c in r.claims}
    assert "HE-OBS1" not in claims  # published at the paper preset (docs/paper/cpu-obs, gpu-2)
    assert {KMS, "CZZ-HEADS"} <= claims


def test_the_encoder_estimate_scales_with_members_layers_batch_and_tokens():
    claim = select_claims(["CZZ-HEADS"])[0]
    training = claim.trainings(claim.parameters("paper"))[0]  # 5 members, L = 3, batch 64
    seconds, basis = campaign.step_seconds(training, BENCHMARK)
    assert seconds == pytest.approx(5.0e-3 * training.layers / 4) and "x0.75" in basis
    decoder = dataclasses.replace(training, architecture="decoder")
    assert campaign.step_seconds(decoder, BENCHMARK)[0] == pytest.approx(2 * seconds)


def _parts(folder: Path, files: dict[str, bytes]) -> None:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "state-00.tar.gz").write_bytes(buffer.getvalue())


def _checkpoint(step: int) -> bytes:
    buffer = io.BytesIO()
    torch.save({"step": step}, buffer)
    return buffer.getvalue()


def _run(claims: int) -> bytes:
    return json.dumps({"claims": [{}] * claims}).encode()


def test_merging_keeps_the_furthest_training_and_the_fuller_run(tmp_path):
    ours, theirs = tmp_path / "repo-state", tmp_path / "returned"
    _parts(ours, {
        "cache/a/checkpoint.pt": _checkpoint(500), "cache/b/checkpoint.pt": _checkpoint(10),
        "cache/c/result.npz": b"done", "cache/c/checkpoint.pt": _checkpoint(9),
        "runs/r/results.json": _run(3), "session.json": b'{"stages": {"x": {"status": "f"}}}',
    })  # fmt: skip
    _parts(theirs, {
        "cache/a/checkpoint.pt": _checkpoint(400), "cache/b/checkpoint.pt": _checkpoint(90),
        "cache/c/checkpoint.pt": _checkpoint(99), "cache/d/result.npz": b"new",
        "runs/r/results.json": _run(2), "session.json": b'{"stages": {"y": {"status": "g"}}}',
    })  # fmt: skip
    taken = campaign.merge(theirs, ours)
    assert taken == {"cache": ["b", "d"], "runs": []}
    state = campaign.unpack(ours, tmp_path / "merged")
    assert campaign.checkpoint_step(state / "cache" / "a") == 500
    assert campaign.checkpoint_step(state / "cache" / "b") == 90
    assert (state / "cache" / "c" / "result.npz").read_bytes() == b"done"
    assert not (state / "cache" / "c" / "checkpoint.pt").exists()  # finished: not carried
    assert (state / "cache" / "d" / "result.npz").exists()
    assert len(json.loads((state / "runs" / "r" / "results.json").read_text())["claims"]) == 3
    assert set(json.loads((state / "session.json").read_text())["stages"]) == {"x", "y"}
    assert sorted(p.name for p in ours.iterdir()) == ["state-00.tar.gz"]  # no staging left


def test_the_command_prints_the_plan_and_refuses_a_merge_of_nothing(tmp_path):
    bench = tmp_path / "bench.json"
    bench.write_text(json.dumps(BENCHMARK))
    script = str(ROOT / "benchmarks" / "gpu_session.py")
    (tmp_path / "state").mkdir()
    done = subprocess.run([sys.executable, script, "--plan", "--state", str(tmp_path / "state"),
                           "--benchmark", str(bench), "--preset", "smoke", "--device", "cpu"],
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "GPU-minutes" in done.stdout and "occasion(s)" in done.stdout and KMS in done.stdout
    refused = subprocess.run([sys.executable, script, "--merge", str(tmp_path)],
                             capture_output=True, text=True, timeout=60)  # fmt: skip
    assert refused.returncode == 2
    assert "--merge: must be a folder of state-NN.tar.gz" in refused.stderr
