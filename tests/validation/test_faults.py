"""Faults survived with real processes and real signals (issue 24): Ctrl-C and SIGTERM stop a
run or a sweep in one line with every finished record saved and no process left behind; a
parent killed with -9 leaves no worker; a training killed with -9 resumes to the numbers of
an uninterrupted one; two runs started at once get two run folders.

Each test starts `icl-verify` in a session of its own (``start_new_session``), as a shell
starts a job: Ctrl-C is SIGINT to that session's process group, and the processes still
alive afterwards are those of the session (Linux's /proc; elsewhere these tests are skipped).
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from icl_verify.validation.records import load_run

pytestmark = [
    pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="a Linux /proc"),
    pytest.mark.heavy,  # runs of trained claims started, stopped and resumed
]

CLI = [sys.executable, "-m", "icl_verify.validation.cli"]
SMOKE = ["--preset", "smoke", "--device", "cpu", "--no-progress"]
# cheap claims first, then three that train for seconds each at smoke: an interrupt after the
# first record lands while others run
CLAIMS = ["HE-MAN", "HE-4.9", "HE-5.2-ACT", "CZZ-HEADS", "CZZ-T5.3"]
# a line of `report_interrupt`: the signal, what was saved where, how to resume
INTERRUPTED = re.compile(
    r"icl-verify: interrupted \((SIGINT|SIGTERM)\): (\d+) (claims?|points?) finished and saved "
    r"in (\S+); resume with --run-id (\S+)"
)


def start(*args: str) -> subprocess.Popen:
    """`icl-verify ARGS` as a job of its own session (its pid is the session's id)."""
    return subprocess.Popen(
        [*CLI, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        start_new_session=True,
    )  # fmt: skip


def alive_in_session(session: int) -> list[int]:
    """The pids of the processes of ``session`` that still run (zombies, dead and awaiting
    their parent's wait, do not count)."""
    alive = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):  # ended while being read
            continue
        state, sid = fields[0], int(fields[3])
        if sid == session and state not in ("Z", "X"):
            alive.append(int(stat.parent.name))
    return alive


def wait_for(condition, timeout: float, what: str, job: subprocess.Popen | None = None) -> None:
    """Poll ``condition`` until it holds; fail after ``timeout`` s, or at once with its stderr
    when ``job`` ends first."""
    end = time.monotonic() + timeout
    while not condition():
        if job is not None and job.poll() is not None:
            raise AssertionError(f"ended ({job.returncode}) before {what}: {job.stderr.read()}")
        if time.monotonic() > end:
            raise AssertionError(f"not within {timeout:g} s: {what}")
        time.sleep(0.05)


def saved(run_dir: Path) -> int:
    """The records in ``run_dir``'s results.json so far (0 before it is written)."""
    try:
        return len(load_run(run_dir).claims)
    except ValueError:
        return 0


def the_one_line(err: str) -> re.Match:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err[-3000:]
    match = INTERRUPTED.fullmatch(lines[0])
    assert match, lines[0]
    return match


def interrupted_run(tmp_path: Path, signum: int, whole_group: bool) -> tuple[str, Path]:
    """A two-worker run of CLAIMS sent ``signum`` once its first record is saved (to its whole
    process group, as Ctrl-C is, or to the parent alone); its stderr and run folder, after
    checking the exit status and that no process of it is left."""
    run_dir = tmp_path / "a"
    job = start("run", *CLAIMS, *SMOKE, "--workers", "2", "--out", str(tmp_path), "--run-id", "a")
    wait_for(lambda: saved(run_dir) >= 1, 120, "a first record saved", job)
    (os.killpg if whole_group else os.kill)(job.pid, signum)
    _, err = job.communicate(timeout=60)
    assert job.returncode == 128 + signum, err[-3000:]
    wait_for(lambda: not alive_in_session(job.pid), 5, "every worker of the run ended")
    return err, run_dir


def test_ctrl_c_saves_what_finished_says_how_to_resume_and_exits_130(tmp_path):
    err, run_dir = interrupted_run(tmp_path, signal.SIGINT, whole_group=True)
    match = the_one_line(err)
    before = {c.id: c for c in load_run(run_dir).claims}
    assert int(match.group(2)) == len(before) >= 1
    claims = "claim" if len(before) == 1 else "claims"
    assert match.group(1, 3, 4, 5) == ("SIGINT", claims, str(run_dir), "a")
    # the line's advice: the same run id finishes the rest and keeps what was saved
    done = subprocess.run(
        [*CLI, "run", *CLAIMS, *SMOKE, "--out", str(tmp_path), "--run-id", "a"],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode in (0, 1), done.stderr[-3000:]
    after = {c.id: c for c in load_run(run_dir).claims}
    assert sorted(after) == sorted(CLAIMS)
    assert all(after[i].measurement == before[i].measurement for i in before)


def test_sigterm_to_the_parent_alone_stops_its_workers_and_exits_143(tmp_path):
    err, run_dir = interrupted_run(tmp_path, signal.SIGTERM, whole_group=False)
    match = the_one_line(err)
    assert match.group(1) == "SIGTERM" and int(match.group(2)) == saved(run_dir) >= 1


def test_kill_9_of_the_parent_leaves_no_worker_behind(tmp_path):
    job = start("run", *CLAIMS[2:], *SMOKE, "--workers", "2", "--out", str(tmp_path))
    wait_for(lambda: len(alive_in_session(job.pid)) >= 3, 60, "two workers started", job)
    job.kill()
    job.communicate(timeout=10)
    wait_for(lambda: not alive_in_session(job.pid), 5, "the orphaned workers ended")


def test_ctrl_c_stops_a_sweep_with_its_finished_points_saved(tmp_path):
    run_dir = tmp_path / "s"
    # a first point of seconds, then longer ones still training when the signal comes
    grid = ["--grid", "steps=120,4800,6000,7200", "--set", 'activations=["softmax","tanh"]']
    job = start("sweep", "HE-5.2-ACT", *grid, *SMOKE, "--workers", "2", "--out", str(tmp_path),
                "--run-id", "s")  # fmt: skip
    wait_for(lambda: saved(run_dir) >= 1, 120, "a first point saved", job)
    os.killpg(job.pid, signal.SIGINT)
    _, err = job.communicate(timeout=60)
    assert job.returncode == 130, err[-3000:]
    wait_for(lambda: not alive_in_session(job.pid), 5, "every worker of the sweep ended")
    match = the_one_line(err)
    assert match.group(1, 5) == ("SIGINT", "s") and match.group(3).startswith("point")
    assert int(match.group(2)) == saved(run_dir) >= 1


def test_two_runs_started_at_once_get_two_run_folders(tmp_path):
    jobs = [start("run", "HE-MAN", *SMOKE, "--workers", "1", "--out", str(tmp_path)) for _ in "ab"]
    for job in jobs:
        _, err = job.communicate(timeout=120)
        assert job.returncode == 0, err[-3000:]
    folders = sorted(p for p in tmp_path.iterdir() if p.is_dir() and p.name != "cache")
    assert len(folders) == 2
    assert all([c.id for c in load_run(f).claims] == ["HE-MAN"] for f in folders)


def test_the_same_second_gives_distinct_default_run_ids(tmp_path, monkeypatch, capsys):
    from datetime import datetime

    import icl_verify.validation.commands.run as run_command
    from icl_verify.validation.cli import main

    class Frozen(datetime):
        @classmethod
        def now(cls, tz=None):
            return datetime(2026, 11, 26, 12, 0, 0)

    monkeypatch.setattr(run_command, "datetime", Frozen)
    for _ in range(2):
        assert main(["run", "HE-MAN", *SMOKE, "--workers", "1", "--out", str(tmp_path)]) == 0
    capsys.readouterr()
    runs = sorted(p.name for p in tmp_path.iterdir() if p.name != "cache")
    assert runs == ["smoke-20261126-120000", "smoke-20261126-120000-2"]


# -- a training killed with -9 ----------------------------------------------------------------

SPEC = dict(d=3, L=8, sigma2=0.1, heads=(1, 2), lr=1e-3, steps=6000, batch=16, seed=0,
            log_every=100, checkpoint_every=100, validation_batch=64)  # fmt: skip
TRAINING = f"""
import sys
from icl_verify.numerics import EnsembleTraining, train_ensemble
train_ensemble(EnsembleTraining(**{SPEC!r}), "cpu", sys.argv[1])
"""


def test_a_training_killed_with_9_resumes_to_the_numbers_of_an_uninterrupted_one(tmp_path):
    import torch
    from icl_verify.numerics import EnsembleTraining, train_ensemble

    job = subprocess.Popen([sys.executable, "-c", TRAINING, str(tmp_path)])
    checkpoint = tmp_path / "checkpoint.pt"
    wait_for(checkpoint.exists, 60, "a first checkpoint")
    time.sleep(0.3)  # between two checkpoints, or writing one
    job.kill()
    assert job.wait(timeout=10) == -signal.SIGKILL
    step = torch.load(checkpoint, weights_only=False)["step"]
    assert 0 < step < SPEC["steps"]  # killed mid-training
    spec = EnsembleTraining(**SPEC)
    resumed = train_ensemble(spec, "cpu", tmp_path).arrays()
    whole = train_ensemble(spec, "cpu", None).arrays()
    assert resumed.keys() == whole.keys()
    for name in whole.keys() - {"train_seconds"}:  # wall-clock time is not a result
        assert np.array_equal(resumed[name], whole[name], equal_nan=True), name
