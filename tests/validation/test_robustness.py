"""Nothing lost, no tracebacks: damaged cache entries and checkpoints are recomputed, two
processes share a cache, a damaged or foreign results.json and an unwritable --out exit 2
with one line."""

import dataclasses
import functools
import io
import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest
from icl_verify.validation.cache import ArtefactCache, config_key
from icl_verify.validation.cli import main
from icl_verify.validation.records import DamagedRunError, RunRecord, load_run

# ---------------------------------------------------------------------------------------------
# the artefact cache


def _npz(arrays) -> bytes:
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    return buffer.getvalue()


GOOD_NPZ = _npz({"x": np.arange(64.0)})
DAMAGE = {  # file name -> kind -> bytes
    "result.npz": {
        "truncated": GOOD_NPZ[: len(GOOD_NPZ) // 2],
        "garbage": b"\x00\xffnot a zip file" * 10,
        "empty": b"",
        "bit flip": GOOD_NPZ[:100] + bytes([GOOD_NPZ[100] ^ 0xFF]) + GOOD_NPZ[101:],  # CRC
        "pickled objects": _npz({"x": np.array([{"a": 1}], dtype=object)}),
        "an npy, not an npz": b"\x93NUMPY\x01\x00v\x00{'descr': '<f8', 'fortran_order': False,",
    },
    "result.json": {
        "truncated": b'{"loss": 0.25, "ste',
        "not UTF-8": b'{"loss": "\xff\xfe"}',
        "empty": b"",
    },
}
CASES = [(name, kind) for name, kinds in DAMAGE.items() for kind in kinds]


def _stored_entry(root, good):
    """A cache entry of `good` stored once under `root`: (entry, compute, calls, its folder),
    ``entry(compute)`` loading it again and ``calls`` counting the computations."""
    cache = ArtefactCache(root)
    calls = []

    def compute():
        calls.append(1)
        return good

    entry = functools.partial(cache.cached, "isotropic-setting", {"n": 1})
    entry(compute)
    return entry, compute, calls, cache.directory("isotropic-setting", {"n": 1})


@pytest.mark.parametrize("name, kind", CASES, ids=[f"{n}-{k}" for n, k in CASES])
def test_a_damaged_entry_is_reported_in_one_line_deleted_and_recomputed(
    tmp_path, capsys, name, kind
):
    arrays = name == "result.npz"
    good = {"x": np.arange(64.0)} if arrays else {"loss": 0.25, "steps": [1, 2]}
    entry, compute, calls, folder = _stored_entry(tmp_path, good)
    path = folder / name
    path.write_bytes(DAMAGE[name][kind])
    capsys.readouterr()

    again = entry(compute)
    err = capsys.readouterr().err
    assert len(calls) == 2  # recomputed
    key = config_key("isotropic-setting", {"n": 1})
    assert err.count("\n") == 1 and err.startswith(
        f"icl-verify: warning: cache entry {key} (isotropic-setting) is damaged ({name}: "
    ), err
    assert err.rstrip().endswith("; recomputing")
    for loaded in (again, entry(compute)):  # stored whole again
        if arrays:
            assert loaded.keys() == {"x"} and np.array_equal(loaded["x"], good["x"])
        else:
            assert loaded == good
    assert len(calls) == 2 and capsys.readouterr().err == ""
    assert sorted(p.name for p in path.parent.iterdir()) == ["config.json", name]


@pytest.mark.parametrize("name", ["result.npz", "result.json", "config.json"])
def test_a_folder_in_place_of_an_entrys_file_is_removed_and_the_entry_recomputed(
    tmp_path, capsys, name
):
    """A damaged entry of any shape: a folder (with something in it) where the entry keeps a
    file is reported like a damaged file (the result's) and replaced, on the first rerun."""
    arrays = name != "result.json"
    good = {"x": np.arange(8.0)} if arrays else {"loss": 0.25}
    entry, compute, calls, folder = _stored_entry(tmp_path, good)
    path = folder / name
    path.unlink()
    (path / "inside").mkdir(parents=True)
    capsys.readouterr()
    loaded = entry(compute)
    assert path.is_file() and (loaded.keys() == {"x"} if arrays else loaded == good)
    assert len(calls) == (2 if name != "config.json" else 1)  # config.json: only rewritten
    err = capsys.readouterr().err
    assert "Traceback" not in err and err.count("\n") <= 1


def test_a_damaged_or_foreign_config_json_is_rewritten(tmp_path):
    cache = ArtefactCache(tmp_path)
    record = cache.directory("isotropic-setting", {"n": 1}) / "config.json"
    expected = record.read_text()
    for damage in (b"", b'{"name": "ent', b"\xff\xfe", b'{"name": "other"}'):
        record.write_bytes(damage)
        assert cache.directory("isotropic-setting", {"n": 1}) == record.parent
        assert record.read_text() == expected
    assert json.loads(expected)["config"] == {"n": 1}


# Two real processes on one cache folder. Each waits for a common start time, then asks for
# the same (slow) entry; both must return the right arrays, and the entry must load whole.
WORKER = textwrap.dedent(
    """
    import json, sys, time
    import numpy as np
    from icl_verify.validation.cache import ArtefactCache

    root, start = sys.argv[1], float(sys.argv[2])
    computed = []

    def compute():
        computed.append(1)
        time.sleep(0.5)  # the other process asks meanwhile
        return {"x": np.arange(200_000.0) ** 2, "y": np.full(3, 7.0)}

    while time.time() < start:
        time.sleep(0.002)
    result = ArtefactCache(root).cached("isotropic-setting", {"n": 200_000}, compute)
    right = np.array_equal(result["x"], np.arange(200_000.0) ** 2) and result["y"].sum() == 21.0
    print(json.dumps({"right": bool(right), "computed": len(computed)}))
    """
)


def _python(*args: str, **kwargs) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kwargs
    )


def test_two_processes_asking_for_the_same_entry_both_finish_with_whole_results(tmp_path):
    start = time.time() + 3.0  # both have imported numpy by then
    workers = [_python("-c", WORKER, str(tmp_path), str(start)) for _ in range(2)]
    reports = []
    for worker in workers:
        out, err = worker.communicate(timeout=120)
        assert worker.returncode == 0 and err == "", err
        reports.append(json.loads(out))
    assert all(report["right"] for report in reports)
    # one computed, the other waited on the entry's lock and read it (validation.cache)
    assert sorted(report["computed"] for report in reports) == [0, 1]
    cache = ArtefactCache(tmp_path)
    missing = lambda: pytest.fail("entry not stored")  # noqa: E731
    stored = cache.cached("isotropic-setting", {"n": 200_000}, missing)
    assert np.array_equal(stored["x"], np.arange(200_000.0) ** 2)
    folder = cache.directory("isotropic-setting", {"n": 200_000})
    assert sorted(p.name for p in folder.iterdir()) == ["config.json", "result.npz"]


# A writer process rewrites an entry (atomically, as the cache does) as fast as it can while
# this process reads it; a torn file would be reported as damaged and call `compute`.
REWRITER = textwrap.dedent(
    """
    import io, sys, time
    import numpy as np
    from icl_verify._files import write_atomic

    path, until = sys.argv[1], float(sys.argv[2])
    key = path.split("/")[-2]  # the entry's key, which its result file holds
    rewrites = 0
    while time.time() < until:
        buffer = io.BytesIO()
        np.savez(buffer, x=np.full(100_000, float(rewrites % 7)), __entry_key__=np.asarray(key))
        write_atomic(path, buffer.getvalue())
        rewrites += 1
    print(rewrites)
    """
)


def test_a_reader_never_sees_a_partial_entry_while_another_process_rewrites_it(tmp_path):
    cache = ArtefactCache(tmp_path)
    cache.cached("isotropic-setting", {}, lambda: {"x": np.zeros(100_000)})
    path = cache.directory("isotropic-setting", {}) / "result.npz"
    until = time.time() + 4.0
    writer = _python("-c", REWRITER, str(path), str(until))
    reads = 0
    while time.time() < until:
        torn = lambda: pytest.fail("a reader saw a torn entry")  # noqa: E731
        x = cache.cached("isotropic-setting", {}, torn)["x"]
        assert x.shape == (100_000,) and np.all(x == x[0])
        reads += 1
    out, err = writer.communicate(timeout=60)
    assert writer.returncode == 0 and err == "", err
    assert int(out) > 10 and reads > 10  # both really ran at the same time


# ---------------------------------------------------------------------------------------------
# the trainer's checkpoints


def _checkpoint_damage(good: bytes) -> dict[str, bytes]:
    import torch

    foreign = io.BytesIO()
    torch.save({"weights": torch.zeros(2)}, foreign)  # a torch file, not our checkpoint
    return {
        "truncated": good[: len(good) // 2],
        "garbage": b"\x00\xffnot a checkpoint" * 20,
        "empty": b"",
        "foreign": foreign.getvalue(),
    }


def test_the_trainer_starts_over_from_a_damaged_checkpoint(tmp_path, capsys):
    import torch
    from icl_verify.numerics import AttentionConfig, LinearRegressionTask, TrainConfig, train

    model, task = AttentionConfig(d=2, heads=2, ensemble=2), LinearRegressionTask(2, 6, 0.1)
    config = TrainConfig(
        lr=1e-2, batch=8, steps=12, validation_batch=16, log_every=4, checkpoint_every=4
    )
    path = tmp_path / "checkpoint.pt"
    fresh = train(model, task, config, checkpoint_path=path, progress=False)
    good = path.read_bytes()
    capsys.readouterr()
    for kind, damage in _checkpoint_damage(good).items():
        path.write_bytes(damage)
        resumed = train(model, task, config, checkpoint_path=path, resume=True, progress=False)
        err = capsys.readouterr().err
        assert err.count("\n") == 1, (kind, err)
        assert err.startswith(f"icl-verify: warning: checkpoint {str(path)!r} is damaged (")
        assert err.rstrip().endswith("; training from step 0"), (kind, err)
        for name, value in fresh.model.state_dict().items():  # the same run, from scratch
            assert torch.equal(value, resumed.model.state_dict()[name]), (kind, name)
        assert (fresh.history.test_loss == resumed.history.test_loss).all(), kind
        assert torch.load(path, weights_only=False)["step"] == 12, kind  # a good one again


# ---------------------------------------------------------------------------------------------
# results.json on resume and report


def _claim_json() -> dict:
    return {
        "id": "HE-MAN", "source": "He et al. 2025", "statement": "s", "params": {"d": 5},
        "prediction": {"values": {"a": 1.0}, "figure_data": {}},
        "measurement": {"values": {"a": {"value": 1.0, "error": 0.1, "error_kind": "se"}},
                        "figure_data": {}},
        "checks": [{"quantity": "a", "label": "a", "predicted": 1.0, "measured": 1.0,
                    "error": 0.1, "error_kind": "se", "rule": "r", "justification": "j",
                    "verdict": "agrees", "score": 0.0}],
        "verdict": "agrees", "seconds": 1.0, "figures": ["figures/HE-MAN.png"],
        "device": "cpu", "overrides": {},
    }  # fmt: skip


def _record_json(**changes) -> dict:
    data = json.loads(RunRecord.start("r", "smoke", 0, "cpu").to_json())
    return {**data, "claims": [_claim_json()], **changes}


def _with_claim(**changes) -> bytes:
    return json.dumps(_record_json(claims=[{**_claim_json(), **changes}])).encode()


GOOD_RECORD = json.dumps(_record_json()).encode()
DAMAGED_RECORDS = {
    "truncated": GOOD_RECORD[: len(GOOD_RECORD) // 2],
    "empty": b"",
    "not JSON": b"\x89PNG\r\n\x1a\n binary",
    "not UTF-8": b'{"schema_version": "\xff"}',
    "other schema": json.dumps(_record_json(schema_version=1)).encode(),
    "other program": json.dumps({"name": "left-pad", "version": "1.3.0"}).encode(),
    "JSON list": b"[1, 2, 3]",
    "no claims list": json.dumps(_record_json(claims={"HE-MAN": 1})).encode(),
    "missing field": json.dumps({k: v for k, v in _record_json().items() if k != "seed"}).encode(),
    "no claims": json.dumps({k: v for k, v in _record_json().items() if k != "claims"}).encode(),
    "unknown field": json.dumps(_record_json(extra=1)).encode(),
    "seed a string": json.dumps(_record_json(seed="0")).encode(),
    "claim checks not a list": _with_claim(checks="x"),
    "claim verdict unknown": _with_claim(verdict="maybe"),
    "claim estimate": _with_claim(measurement={"values": {"a": [1]}, "figure_data": {}}),
    "figure outside the run": _with_claim(figures=["../../elsewhere.png"]),
}


def test_the_good_record_of_these_tests_loads(tmp_path):
    (tmp_path / "results.json").write_bytes(GOOD_RECORD)
    assert load_run(tmp_path).claims[0].id == "HE-MAN"


@pytest.mark.parametrize("kind", DAMAGED_RECORDS)
def test_load_run_raises_one_line_naming_the_file_and_what_to_do(tmp_path, kind):
    path = tmp_path / "results.json"
    path.write_bytes(DAMAGED_RECORDS[kind])
    with pytest.raises(DamagedRunError) as caught:
        load_run(tmp_path)
    message = str(caught.value)
    assert "\n" not in message and message.startswith(f"{path}: ")
    assert message.endswith(f"; delete the folder {tmp_path} or choose another --run-id")


def _one_error_line(capsys) -> str:
    captured = capsys.readouterr()
    lines = captured.err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("icl-verify: error: "), captured.err
    assert "Traceback" not in captured.err + captured.out
    return lines[0]


@pytest.mark.parametrize("kind", ["truncated", "not JSON", "other schema", "other program"])
def test_run_resuming_a_damaged_results_json_exits_2_with_one_line(tmp_path, capsys, kind):
    run_dir = tmp_path / "r"
    run_dir.mkdir()
    (run_dir / "results.json").write_bytes(DAMAGED_RECORDS[kind])
    argv = ["run", "HE-MAN", "--preset", "smoke", "--out", str(tmp_path), "--run-id", "r",
            "--device", "cpu", "--no-progress"]  # fmt: skip
    assert main(argv) == 2
    line = _one_error_line(capsys)
    assert str(run_dir / "results.json") in line and "another --run-id" in line
    assert (run_dir / "results.json").read_bytes() == DAMAGED_RECORDS[kind]  # left as it was


@pytest.mark.parametrize("kind", ["truncated", "other schema", "figure outside the run"])
def test_report_on_a_damaged_results_json_exits_2_with_one_line(tmp_path, capsys, kind):
    (tmp_path / "results.json").write_bytes(DAMAGED_RECORDS[kind])
    assert main(["report", str(tmp_path)]) == 2
    assert str(tmp_path / "results.json") in _one_error_line(capsys)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results.json"]  # nothing drawn


# ---------------------------------------------------------------------------------------------
# --out


RUN = ["run", "HE-MAN", "--preset", "smoke", "--device", "cpu", "--no-progress", "--out"]


def test_out_below_a_file_exits_2_with_one_line(tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("in the way")
    for out in (blocker, blocker / "sub", blocker / "sub" / "deeper"):
        assert main([*RUN, str(out)]) == 2
        line = _one_error_line(capsys)
        assert line == (
            f"icl-verify: error: --out {out}: not a writable directory ({blocker} is not a folder)"
        )
    assert blocker.read_text() == "in the way"


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders anyway")
def test_out_in_a_read_only_folder_exits_2_with_one_line(tmp_path, capsys):
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        for out in (locked, locked / "sub"):
            assert main([*RUN, str(out)]) == 2
            line = _one_error_line(capsys)
            assert line.endswith(
                f"--out {out}: not a writable directory (cannot create a folder in {locked}: "
                "Permission denied)"
            )
        assert list(locked.iterdir()) == []
    finally:
        locked.chmod(0o700)


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="a Linux /proc")
@pytest.mark.parametrize("option", ["--out", "--cache"])
def test_a_folder_the_system_refuses_exits_2_with_one_line(tmp_path, capsys, option):
    # /proc passes a permission check as root, and refuses every new folder
    args = [*RUN, str(tmp_path / "out")]
    assert main([*args, option, "/proc/x"]) == 2
    assert _one_error_line(capsys) == (
        f"icl-verify: error: {option} /proc/x: not a writable directory (cannot create a folder "
        "in /proc: No such file or directory)"
    )
    assert not (tmp_path / "out").exists()


def test_writable_directory_accepts_a_folder_to_be_created(tmp_path):
    from icl_verify.validation.commands.run import writable_directory

    assert writable_directory(tmp_path / "a" / "b") == tmp_path / "a" / "b"
    assert writable_directory(Path("results")) == Path("results")
    assert not (tmp_path / "a").exists()  # the check creates nothing


def test_a_run_folder_or_cache_that_is_a_file_exits_2_with_one_line(tmp_path, capsys):
    (tmp_path / "taken").write_text("not a folder")
    args = ["run", "HE-MAN", "--preset", "smoke", "--out", str(tmp_path), "--no-progress"]
    assert main([*args, "--run-id", "taken"]) == 2
    err = capsys.readouterr().err
    assert "taken is not a folder" in err and err.count("\n") == 1
    (tmp_path / "cache").write_text("not a folder")
    assert main([*args, "--run-id", "fresh"]) == 2
    err = capsys.readouterr().err
    assert "cache is not a folder" in err and err.count("\n") == 1


def test_a_full_disk_mid_run_is_one_line_naming_the_file_and_the_rerun_resumes(
    tmp_path, capsys, monkeypatch
):
    import errno

    import icl_verify._files as files

    original, calls = os.fsync, []

    def full_after_first(fd):  # the first file is written, then the disk fills: the kernel's
        calls.append(fd)  # error names no file
        if len(calls) > 1:
            raise OSError(errno.ENOSPC, "No space left on device")
        original(fd)

    monkeypatch.setattr(files.os, "fsync", full_after_first)
    args = ["run", "HE-MAN", "--preset", "smoke", "--out", str(tmp_path), "--run-id", "full",
            "--no-progress"]  # fmt: skip
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.endswith(": No space left on device\n"), err
    written = Path(err.removeprefix("icl-verify: error: ").rsplit(": ", 1)[0])
    assert written.parent.exists() and tmp_path in written.parents  # the file it could not write
    assert not [p for p in tmp_path.rglob(".*.tmp")]  # no half-written file left
    monkeypatch.setattr(files.os, "fsync", original)
    assert main(args) == 0  # the same run id resumes once there is room
    assert [c.id for c in load_run(tmp_path / "full").claims] == ["HE-MAN"]


def test_two_runs_sharing_one_cache_at_the_same_time_both_finish_alike(tmp_path):
    """Two `icl-verify run` processes, one cache, the same trained and Monte Carlo claims at
    once: both finish, with the same numbers, and every cache entry loads."""
    ids = ["HE-OBS3", "HE-P4.1"]
    runs = [
        subprocess.Popen(
            [sys.executable, "-m", "icl_verify.validation.cli", "run", *ids, "--preset", "smoke",
             "--device", "cpu", "--out", str(tmp_path), "--run-id", name, "--no-progress"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        for name in ("a", "b")
    ]
    for process in runs:
        _, err = process.communicate(timeout=600)
        assert process.returncode in (0, 1), err[-2000:]
    first, second = (load_run(tmp_path / name) for name in ("a", "b"))
    for one, other in zip(first.claims, second.claims, strict=True):
        assert (one.id, one.verdict) == (other.id, other.verdict)
        assert one.measurement == other.measurement and one.prediction == other.prediction
    assert "nan" not in json.dumps(first.claims[0].measurement).lower()


# ---------------------------------------------------------------------------------------------
# a trained entry after a kill or a damaged, missing or foreign file: recomputed, never a crash

TRAINED = dict(d=2, L=8, sigma2=0.1, heads=(1, 2), lr=3e-3, steps=24, batch=16, seed=0,
               log_every=2, checkpoint_every=12, validation_batch=64)  # fmt: skip


def _foreign(folder: Path, other: Path, name: str) -> None:
    (folder / name).write_bytes((other / name).read_bytes())


ENTRY_FAULTS = {  # what is found in the entry's folder -> the warnings it costs
    "final checkpoint, no result (killed before storing)": (
        lambda folder, other: (folder / "result.npz").unlink(), 0),
    "result truncated": (lambda folder, other: (folder / "result.npz").write_bytes(
        (folder / "result.npz").read_bytes()[:300]), 1),
    "result emptied": (lambda folder, other: (folder / "result.npz").write_bytes(b""), 1),
    "result of another entry": (lambda folder, other: _foreign(folder, other, "result.npz"), 1),
    "checkpoint of another entry, no result": (lambda folder, other: (
        (folder / "result.npz").unlink(), _foreign(folder, other, "checkpoint.pt")), 1),
}  # fmt: skip


@pytest.mark.parametrize("fault", ENTRY_FAULTS)
def test_a_trained_entry_found_in_any_state_gives_the_numbers_of_a_clean_one(
    tmp_path, capsys, fault
):
    from icl_verify.numerics import EnsembleTraining
    from icl_verify.validation.runtime import Runtime

    spec, other = EnsembleTraining(**TRAINED), EnsembleTraining(**{**TRAINED, "seed": 1})
    clean = Runtime("cpu", 0, ArtefactCache(tmp_path / "clean")).trained(spec).arrays()
    runtime = Runtime("cpu", 0, ArtefactCache(tmp_path / "faulty"))
    runtime.trained(spec), runtime.trained(other)
    key = {**dataclasses.asdict(spec), "device": "cpu"}
    folder = runtime.checkpoint_dir(spec.ARTEFACT, key)
    other_folder = runtime.checkpoint_dir(other.ARTEFACT, {**key, "seed": 1})
    assert (folder / "checkpoint.pt").is_file() and (other_folder / "result.npz").is_file()
    damage, warnings = ENTRY_FAULTS[fault]
    damage(folder, other_folder)
    capsys.readouterr()

    again = runtime.trained(spec).arrays()
    err = capsys.readouterr().err
    assert err.count("\n") == warnings and "Traceback" not in err, err
    assert again.keys() == clean.keys()
    for name, value in clean.items():
        if name != "train_seconds":  # wall time, the one field a rerun may change
            assert np.array_equal(again[name], value, equal_nan=True), (fault, name)
    assert np.array_equal(runtime.trained(spec).arrays()["omega"], clean["omega"])  # stored
    assert capsys.readouterr().err == ""
