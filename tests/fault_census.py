"""The fault census of issue 24: bad inputs and faults tried as a new user would, at the smoke
preset, each judged clean or not, counted by class. Not part of the suite (minutes of real
processes); run it on a tree to count, or on two trees to compare:

    python tests/fault_census.py                        # this checkout's icl-verify
    python tests/fault_census.py --python OTHER/bin/python --jobs 2

Every case is real: `icl-verify` in a process of its own session, real signals, real files.
A case is clean when it ends as a user may expect:

- bad input and sizes beyond any machine: one line on stderr naming what is wrong, exit 2,
  no run folder left (or, for a number that does no harm, the run finishing normally);
- kill -9 at any moment, a damaged or foreign cache file: the rerun ends normally (exit
  0/1) with the numbers of an undisturbed run, warnings only on stderr;
- SIGINT/SIGTERM: exit 130/143, one line saying what was saved, no process of the run left
  within 5 s, the resume ends with the numbers of an undisturbed run;
- paths: one line and exit 2 before any work;
- two runs at once: two run folders, every record kept.

Anything else (a traceback, another exit status, more lines, a folder without a record, a
process left, numbers that differ, a record lost, running past the case's time limit) is
not clean, with the reason printed.
"""

from __future__ import annotations

import argparse
import collections
import dataclasses
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

SMOKE = ["--preset", "smoke", "--device", "cpu", "--no-progress"]
TRAINED = ["HE-OBS3", "HE-5.2-ACT", "CZZ-HEADS"]  # ~18 s at smoke, one worker: kills land mid-way
LIMIT = 30.0  # seconds a refusal or a one-claim smoke run may take


@dataclasses.dataclass(frozen=True)
class Case:
    kind: str
    name: str
    run: Callable[[Census, Path], str | None]  # None when clean, else why not


@dataclasses.dataclass
class Census:
    python: str
    reference: dict | None = None  # the undisturbed run's measurements, per claim

    def start(self, *args: str, cwd: Path) -> subprocess.Popen:
        return subprocess.Popen(
            [self.python, "-m", "icl_verify.validation.cli", *args], cwd=cwd,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
        )  # fmt: skip

    def cli(self, *args: str, cwd: Path, limit: float = LIMIT) -> tuple[int | None, str]:
        """Exit status (None past ``limit`` s, then the run is killed) and stderr."""
        job = self.start(*args, cwd=cwd)
        try:
            _, err = job.communicate(timeout=limit)
        except subprocess.TimeoutExpired:
            kill_session(job.pid)
            _, err = job.communicate()
            return None, err
        return job.returncode, err

    def measurements(self, cwd: Path) -> dict:
        """The undisturbed run of TRAINED (computed once per census)."""
        if self.reference is None:
            out = cwd / "reference"
            status, err = self.cli("run", *TRAINED, *SMOKE, "--workers", "1", "--out", str(out),
                                   "--run-id", "r", cwd=cwd, limit=300)  # fmt: skip
            assert status in (0, 1), err
            self.reference = measured(out / "r")
        return self.reference


def measured(run_dir: Path) -> dict:
    """The measurements of the records in ``run_dir`` so far, by claim id and parameters."""
    try:
        claims = json.loads((run_dir / "results.json").read_text())["claims"]
    except (OSError, ValueError, KeyError):
        return {}
    return {f"{c['id']} {json.dumps(c['params'], sort_keys=True)}": c["measurement"]
            for c in claims}  # fmt: skip


def session_alive(session: int) -> list[int]:
    alive = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[3]) == session and fields[0] not in ("Z", "X"):
            alive.append(int(stat.parent.name))
    return alive


def kill_session(session: int) -> None:
    for pid in session_alive(session):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def left_alive(session: int, seconds: float = 5.0) -> str | None:
    end = time.monotonic() + seconds
    while session_alive(session):
        if time.monotonic() > end:
            kill_session(session)
            return f"processes left running {seconds:g} s after the end"
        time.sleep(0.05)
    return None


def one_line_refusal(status: int | None, err: str, out: Path | None = None) -> str | None:
    """Clean: exit 2, one line on stderr, no run folder (a cache folder alone is no record)."""
    if status is None:
        return f"ran past {LIMIT:g} s"
    if "Traceback" in err:
        return "traceback"
    if status != 2:
        return f"exit {status}, wanted 2"
    if len(err.strip().splitlines()) != 1:
        return f"{len(err.strip().splitlines())} lines on stderr"
    if out is not None and out.is_dir():
        left = [p.name for p in out.iterdir() if p.name != "cache"]
        if left:
            return f"run folder left: {left[0]}"
    return None


def refused_or_harmless(status: int | None, err: str, out: Path) -> str | None:
    """A huge value: refused in one line, or a normal run (exit 0/1) within the limit."""
    if status in (0, 1) and "Traceback" not in err:
        return None
    return one_line_refusal(status, err, out)


def warnings_only(err: str) -> str | None:
    lines = [line for line in err.strip().splitlines() if line]
    if "Traceback" in err:
        return "traceback"
    bad = [line for line in lines if not line.startswith("icl-verify: warning")]
    return f"stderr: {bad[0][:120]}" if bad else None


# -- the cases ---------------------------------------------------------------------------------


def bad_input(args: list[str]) -> Callable[[Census, Path], str | None]:
    def run(census: Census, tmp: Path) -> str | None:
        out = tmp / "out"
        status, err = census.cli(*args, "--out", str(out), cwd=tmp)
        return one_line_refusal(status, err, out)

    return run


def huge(args: list[str]) -> Callable[[Census, Path], str | None]:
    def run(census: Census, tmp: Path) -> str | None:
        out = tmp / "out"
        status, err = census.cli(*args, "--out", str(out), cwd=tmp)
        return refused_or_harmless(status, err, out)

    return run


def flow(args: list[str]) -> Callable[[Census, Path], str | None]:
    def run(census: Census, tmp: Path) -> str | None:
        status, err = census.cli("flow", "two-head", *args, cwd=tmp)
        return one_line_refusal(status, err)

    return run


def huge_values() -> list[Case]:
    """Each parameter name of the registry once (its first claim): a number beyond any machine
    (1e30 for an integer, 1e300 for a real, a list ending in 1e30)."""
    from icl_verify.validation.registry import all_claims

    seen, cases = set(), []
    for claim in all_claims():
        smoke = claim.presets["smoke"]
        for field in dataclasses.fields(smoke):
            value = getattr(smoke, field.name)
            if field.name in seen or isinstance(value, (str, bool)):
                continue
            seen.add(field.name)
            if isinstance(value, tuple):
                if not all(isinstance(v, int) for v in value):
                    continue
                text = "[" + ",".join(map(str, (*value, "1e30"))) + "]"
            else:
                text = "1e30" if isinstance(value, int) else "1e300"
            args = ["run", claim.id, *SMOKE, "--workers", "1", "--set", f"{field.name}={text}"]
            cases.append(Case("huge value (--set)", f"{claim.id} {field.name}={text}", huge(args)))
    return cases


MEMORY = [  # within the stated caps, beyond this machine's memory
    ("HE-OBS3", "heads=[1,2,2,4,100000]"),
    ("HE-OBS3", "batch=1000000000"),
    ("HE-OBS3", "validation_batch=1000000000"),
    ("HE-P4.1", "d=10000"),
    ("HE-OBS3", "L=100000"),
    # counts that a measurement draws at once (found by setting every count to 1e8)
    *((claim, "n_prompts=100000000") for claim in ("CZZ-HEADS", "CZZ-IMPORTANCE", "CZZ-PPROBE",
                                                   "CZZ-PRUNE", "CZZ-PREGD", "HE-4.9",
                                                   "HE-5.1-SM2LIN")),
]  # (He et al.'s Monte Carlo prompts stream in blocks: n_prompts=1e9 is a long run, not a fault)
GRIDS = [
    ("HE-P4.1", "L=logspace:1:1e30:3"),
    ("HE-P4.1", "d=1e30"),
    ("HE-P4.1", "d=10000"),
    ("HE-OBS3", "steps=100,1e30"),
    ("HE-OBS3", "heads=[1,100000]"),
    ("HE-T4.2ii", "L=1e5,1e30"),
]
BAD = [  # the classes that ended cleanly before: kept clean
    ["run", "HE-P4.1", *SMOKE, "--set", "sigma2=-1"],
    ["run", "HE-P4.1", *SMOKE, "--set", "sigma2=nan"],
    ["run", "HE-OBS3", *SMOKE, "--set", "heads=[0]"],
    ["run", "HE-OBS3", *SMOKE, "--set", "heads=[]"],
    ["run", "HE-P4.1", *SMOKE, "--set", "L=0"],
    ["run", "HE-P4.1", *SMOKE, "--set", "d=two"],
    ["run", "HE-P4.1", *SMOKE, "--set", "nosuch=1"],
    ["run", "NOSUCH", *SMOKE],
    ["run", "HE-P4.1", "--preset", "huge"],
    ["run", "HE-P4.1", *SMOKE, "--device", "tpu"],
    ["run", "HE-P4.1", *SMOKE, "--seed", "-1"],
    ["run", "HE-P4.1", *SMOKE, "--run-id", "../x"],
    ["run", "HE-P4.1", *SMOKE, "--workers", "0"],
    ["run", "HE-P4.1", *SMOKE, "--budget", "-5"],
    ["sweep", "HE-P4.1", *SMOKE, "--grid", "d="],
    ["sweep", "HE-P4.1", *SMOKE, "--grid", "d=logspace:1:10"],
    ["sweep", "HE-P4.1", *SMOKE, "--grid", "d=3,3"],
    ["sweep", "HE-P4.1", *SMOKE],
]


def toml_cases() -> list[Case]:
    texts = {
        "not TOML": "[HE-P4.1\nd = 3",
        "unknown claim": '["NOSUCH"]\nd = 3',
        "unknown parameter": '["HE-P4.1"]\nnosuch = 3',
        "wrong type": '["HE-P4.1"]\nd = "three"',
        "not a table": 'd = 3',
        "huge": '["HE-P4.1"]\nd = 1e30',
    }  # fmt: skip

    def case(text: str) -> Callable[[Census, Path], str | None]:
        def run(census: Census, tmp: Path) -> str | None:
            (tmp / "c.toml").write_text(text)
            out = tmp / "out"
            status, err = census.cli("run", "HE-P4.1", *SMOKE, "--config", str(tmp / "c.toml"),
                                     "--out", str(out), cwd=tmp)  # fmt: skip
            return one_line_refusal(status, err, out)

        return run

    return [Case("bad input", f"--config {name}", case(text)) for name, text in texts.items()]


def path_cases() -> list[Case]:
    def case(make: Callable[[Path], list[str]], ends: str = "run") -> Callable:
        def run(census: Census, tmp: Path) -> str | None:
            args = make(tmp)
            status, err = census.cli(*args, cwd=tmp)
            return one_line_refusal(status, err)

        return run

    def file_at(tmp: Path) -> Path:
        (tmp / "f").write_text("a file")
        return tmp / "f"

    one = ["run", "HE-P4.1", *SMOKE]
    return [
        Case("paths", "run --out /proc/x", case(lambda t: [*one, "--out", "/proc/x"])),
        Case("paths", "run --cache /proc/x",
             case(lambda t: [*one, "--out", str(t / "o"), "--cache", "/proc/x"])),
        Case("paths", "sweep --out /proc/x", case(lambda t: [
            "sweep", "HE-P4.1", "--grid", "d=2,3", *SMOKE, "--out", "/proc/x"])),
        Case("paths", "flow --out /proc/x.png",
             case(lambda t: ["flow", "two-head", "--t-end", "1e4", "--out", "/proc/x.png"])),
        Case("paths", "run --out below a file",
             case(lambda t: [*one, "--out", str(file_at(t) / "x")])),
        Case("paths", "run --cache below a file",
             case(lambda t: [*one, "--out", str(t / "o"), "--cache", str(file_at(t) / "x")])),
        Case("paths", "flow --out below a file",
             case(lambda t: ["flow", "two-head", "--out", str(file_at(t) / "x.png")])),
        Case("paths", "report of /proc/x", case(lambda t: ["report", "/proc/x"])),
        Case("paths", "report of a file", case(lambda t: ["report", str(file_at(t))])),
    ]  # fmt: skip


def killed_at(seconds: float) -> Callable[[Census, Path], str | None]:
    """kill -9 of a one-worker run of TRAINED after ``seconds``; then the same run id."""

    def run(census: Census, tmp: Path) -> str | None:
        reference = census.measurements(tmp.parent / "shared")
        args = ["run", *TRAINED, *SMOKE, "--workers", "1", "--out", str(tmp), "--run-id", "k"]
        job = census.start(*args, cwd=tmp)
        time.sleep(seconds)
        kill_session(job.pid)
        job.communicate()
        status, err = census.cli(*args, cwd=tmp, limit=300)
        if status not in (0, 1):
            return f"resume: exit {status}" + (" (traceback)" if "Traceback" in err else "")
        return warnings_only(err) or same(measured(tmp / "k"), reference)

    return run


def same(found: dict, reference: dict) -> str | None:
    lost = sorted(set(reference) - set(found))
    if lost:
        return f"records lost: {lost}"
    differ = [i for i in reference if found[i] != reference[i]]
    return f"numbers differ: {differ}" if differ else None


DAMAGES = {
    "result.npz truncated": ("result.npz", lambda b, other: b[: len(b) // 2]),
    "result.npz emptied": ("result.npz", lambda b, other: b""),
    "result.npz garbage": ("result.npz", lambda b, other: b"\x00garbage" * 50),
    "result.npz of another entry": ("result.npz", lambda b, other: other),
    "result.npz deleted (killed before storing)": ("result.npz", lambda b, other: None),
    "checkpoint.pt truncated": ("checkpoint.pt", lambda b, other: b[: len(b) // 2]),
    "checkpoint.pt emptied": ("checkpoint.pt", lambda b, other: b""),
    "checkpoint.pt of another entry": ("checkpoint.pt", lambda b, other: other),
    "config.json garbage": ("config.json", lambda b, other: b"{not json"),
}


def damaged(what: str, both: bool) -> Callable[[Census, Path], str | None]:
    """A finished run's every cache entry damaged (``both``: result.npz deleted too, so the
    damaged checkpoint is read); a new run on that cache."""
    name, damage = DAMAGES[what]

    def run(census: Census, tmp: Path) -> str | None:
        reference = census.measurements(tmp.parent / "shared")
        shutil.copytree(tmp.parent / "shared" / "reference" / "cache", tmp / "cache")
        entries = sorted(p for p in (tmp / "cache").iterdir() if (p / name).is_file())
        originals = {entry: (entry / name).read_bytes() for entry in entries}
        for i, entry in enumerate(entries):
            other = originals[entries[(i + 1) % len(entries)]]
            changed = damage(originals[entry], other)
            if changed is None:
                (entry / name).unlink()
            else:
                (entry / name).write_bytes(changed)
            if both:
                (entry / "result.npz").unlink(missing_ok=True)
        args = ["run", *TRAINED, *SMOKE, "--workers", "1", "--out", str(tmp), "--run-id", "d"]
        status, err = census.cli(*args, cwd=tmp, limit=300)
        if status not in (0, 1):
            return f"exit {status}" + (" (traceback)" if "Traceback" in err else "")
        return warnings_only(err) or same(measured(tmp / "d"), reference)

    return run


def interrupted(signum: int, group: bool, workers: int, sweep: bool) -> Callable:
    def run(census: Census, tmp: Path) -> str | None:
        if sweep:
            args = ["sweep", "HE-5.2-ACT", "--grid", "steps=120,4800,6000", "--set",
                    'activations=["softmax","tanh"]']  # fmt: skip
        else:
            args = ["run", "HE-MAN", "HE-4.9", *TRAINED]
        args += [*SMOKE, "--workers", str(workers), "--out", str(tmp), "--run-id", "i"]
        job = census.start(*args, cwd=tmp)
        end = time.monotonic() + 120
        while not measured(tmp / "i") and job.poll() is None and time.monotonic() < end:
            time.sleep(0.05)
        saved = len(measured(tmp / "i"))
        (os.killpg if group else os.kill)(job.pid, signum)
        try:
            _, err = job.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            kill_session(job.pid)
            return "still running 60 s after the signal"
        why = left_alive(job.pid)
        if job.returncode != 128 + signum:
            return f"exit {job.returncode}, wanted {128 + signum}" + (
                " (traceback)" if "Traceback" in err else "")
        if len(err.strip().splitlines()) != 1:
            return f"{len(err.strip().splitlines())} lines on stderr"
        if why:
            return why
        kept = measured(tmp / "i")
        if len(kept) < saved:
            return "a saved record lost"
        status, err = census.cli(*args, cwd=tmp, limit=300)
        after = measured(tmp / "i")
        if status not in (0, 1):
            return f"resume: exit {status}"
        return same(after, kept) if kept else None

    return run


def parent_killed(census: Census, tmp: Path) -> str | None:
    job = census.start("run", *TRAINED, *SMOKE, "--workers", "2", "--out", str(tmp), cwd=tmp)
    end = time.monotonic() + 60
    while len(session_alive(job.pid)) < 3 and time.monotonic() < end:
        time.sleep(0.05)
    os.kill(job.pid, signal.SIGKILL)
    job.communicate()
    return left_alive(job.pid)


def two_at_once(census: Census, tmp: Path) -> str | None:
    jobs = [census.start("run", "HE-MAN", *SMOKE, "--workers", "1", "--out", str(tmp), cwd=tmp)
            for _ in "ab"]  # fmt: skip
    for job in jobs:
        job.communicate(timeout=120)
    folders = [p for p in tmp.iterdir() if p.is_dir() and p.name != "cache"]
    records = sum(len(measured(folder)) for folder in folders)
    return None if records == 2 else f"{records} records in {len(folders)} run folders"


def all_cases() -> list[Case]:
    cases = [Case("bad input", " ".join(a[:2] + a[len(SMOKE) + 2 :]), bad_input(a)) for a in BAD]
    cases += toml_cases()
    cases += huge_values()
    for claim, setting in MEMORY:
        cases.append(Case("beyond memory (--set)", f"{claim} {setting}", bad_input(
            ["run", claim, *SMOKE, "--set", setting])))  # fmt: skip
    for claim, grid in GRIDS:
        cases.append(Case("sweep grid", f"{claim} --grid {grid}", bad_input(
            ["sweep", claim, *SMOKE, "--grid", grid])))  # fmt: skip
    for option, value in [("--d", "1000000"), ("--d", "1e30"), ("--L", "1e30"),
                          ("--t-end", "1e30"), ("--sigma2", "1e300"), ("--eps", "nan")]:
        cases.append(Case("flow", f"{option} {value}", flow([option, value, "--out", "x.png"])))
    cases += path_cases()
    cases += [Case("kill -9 mid-run", f"at {s:g} s", killed_at(s)) for s in (1, 3, 5, 8, 12)]
    cases += [Case("damaged cache file", what, damaged(what, both=False)) for what in DAMAGES]
    cases += [Case("damaged cache file", f"{what}, no result", damaged(what, both=True))
              for what in DAMAGES if what.startswith("checkpoint")]  # fmt: skip
    for sweep in (False, True):
        for workers in (1, 2):
            for signum, group in ((signal.SIGINT, True), (signal.SIGTERM, False)):
                name = (f"{'sweep' if sweep else 'run'} {signal.Signals(signum).name} "
                        f"{'to the group' if group else 'to the parent'}, {workers} workers")
                cases.append(Case("interrupt", name, interrupted(signum, group, workers, sweep)))
    cases += [Case("interrupt", "kill -9 of the parent, 2 workers", parent_killed)]
    cases += [Case("two runs at once", "one --out, the same second", two_at_once)]
    return cases


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--python", default=sys.executable, help="the tree's interpreter")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--only", default="", help="run the classes whose name contains this")
    args = parser.parse_args()
    cases = [case for case in all_cases() if args.only in case.kind]
    census = Census(args.python)
    root = Path(tempfile.mkdtemp(prefix="census-"))
    (root / "shared").mkdir()
    census.measurements(root / "shared")

    def judge(i_case: tuple[int, Case]) -> tuple[Case, str | None]:
        i, case = i_case
        tmp = root / f"case-{i}"
        tmp.mkdir()
        try:
            return case, case.run(census, tmp)
        except Exception as error:  # the census's own failure is the case's, reported
            return case, f"census: {type(error).__name__}: {error}"[:200]

    counts = collections.defaultdict(lambda: [0, 0])
    with ThreadPoolExecutor(args.jobs) as pool:
        for case, why in pool.map(judge, enumerate(cases)):
            counts[case.kind][why is None] += 1
            print(f"{'clean' if why is None else 'NOT  '} {case.kind}: {case.name}"
                  + ("" if why is None else f": {why}"), flush=True)  # fmt: skip
    print("\n| class | cases | clean | not clean |\n|---|---|---|---|")
    for kind, (bad, good) in counts.items():
        print(f"| {kind} | {bad + good} | {good} | {bad} |")
    total = [sum(c[i] for c in counts.values()) for i in (0, 1)]
    print(f"| all | {sum(total)} | {total[1]} | {total[0]} |")
    shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
