"""`icl-verify list | run | report` end to end: exit codes, files, resume, re-rendering."""

import json
from dataclasses import replace

import icl_verify.validation.registry as registry
import numpy as np
import pytest
from icl_verify.validation.claims.he2025.manifold import CLAIM_MANIFOLD
from icl_verify.validation.cli import main
from icl_verify.validation.estimates import Prediction
from icl_verify.validation.records import SCHEMA_VERSION, load_run
from icl_verify.validation.rules import Tolerance

PILOTS = ["HE-T4.2ii", "HE-MAN"]


@pytest.fixture(scope="module")
def smoke_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("results")
    status = main(["run", *PILOTS, "--preset", "smoke", "--out", str(out), "--run-id", "pilot",
                   "--seed", "3", "--device", "cpu", "--no-progress"])  # fmt: skip
    return status, out / "pilot"


def test_list_names_every_claim_with_its_source(capsys):
    assert main(["list"]) == 0
    text = capsys.readouterr().out
    for claim_id in PILOTS:
        assert claim_id in text
    assert "He et al. 2025" in text and "(4.13)" in text
    assert text.startswith("# He et al. 2025\n")  # one heading per paper


def test_a_reader_closing_the_pipe_stops_the_listing_quietly(monkeypatch, capsys):
    # `icl-verify list | head -1`: the reader has gone, so writing raises BrokenPipeError;
    # the command stops with the shell's SIGPIPE status and no traceback.
    import io
    import os

    read_end, write_end = os.pipe()
    os.close(read_end)
    closed_pipe = io.TextIOWrapper(io.FileIO(write_end, "w"), write_through=False)
    monkeypatch.setattr("sys.stdout", closed_pipe)
    assert main(["list"]) == 141
    monkeypatch.undo()
    assert capsys.readouterr().err == ""


def test_run_of_the_pilots_agrees_and_writes_every_file(smoke_run):
    status, run_dir = smoke_run
    assert status == 0
    record = load_run(run_dir)
    assert record.schema_version == SCHEMA_VERSION
    assert (record.preset, record.seed, record.device) == ("smoke", 3, "cpu")
    assert record.finished is not None
    assert {c.id: c.verdict for c in record.claims} == {i: "agrees" for i in PILOTS}
    for claim in record.claims:
        assert claim.seconds > 0 and claim.checks
        for path in claim.figures:
            assert (run_dir / path).read_bytes()[:4] == b"\x89PNG"
    data = json.loads((run_dir / "results.json").read_text())
    assert {"python", "numpy", "torch", "git_commit", "package_version"} <= set(data["environment"])
    report = (run_dir / "report.md").read_text()
    assert "| HE-T4.2ii" in report and "![HE-MAN](figures/HE-MAN.png)" in report  # († marks)
    assert not list(run_dir.glob("*.tmp")) and not list(run_dir.glob(".*"))  # atomic writes


def test_report_rerenders_from_results_json_alone(smoke_run, capsys):
    _, run_dir = smoke_run
    (run_dir / "report.md").unlink()
    figure = run_dir / "figures" / "HE-MAN.png"
    figure.unlink()
    assert main(["report", str(run_dir)]) == 0
    assert "HE-MAN" in (run_dir / "report.md").read_text()
    assert figure.read_bytes()[:4] == b"\x89PNG"


def test_report_renders_the_tables_the_claims_give_now_from_the_stored_numbers(
    smoke_run, tmp_path, monkeypatch, capsys
):
    # a run recorded before HE-MAN had a table: `report` renders the table of today's claim
    # from the stored numbers, without measuring, and writes it into results.json too
    import shutil

    run_dir = tmp_path / "pilot"
    shutil.copytree(smoke_run[1], run_dir)
    stored = load_run(run_dir).claim("HE-MAN")
    assert stored.tables == ()

    def table(params, prediction, measurement):
        first = next(iter(measurement.values))
        top = np.max(measurement.values[first].value)
        return f"| L | max {first} |\n|---|---|\n| {params.L} | {top:.6g} |"

    def must_not_run(params, runtime):
        raise AssertionError("report measured a claim")

    claims = tuple(replace(c, table=table, measure=must_not_run) if c.id == "HE-MAN" else c
                   for c in registry.all_claims())  # fmt: skip
    monkeypatch.setattr(registry, "all_claims", lambda: claims)
    assert main(["report", str(run_dir), "--no-figures"]) == 0
    first = next(iter(stored.measurement["values"]))
    top = np.max(stored.measurement["values"][first]["value"])
    expected = f"| L | max {first} |\n|---|---|\n| {stored.params['L']} | {top:.6g} |"
    assert load_run(run_dir).claim("HE-MAN").tables == (expected,)
    assert expected in (run_dir / "report.md").read_text()
    assert load_run(run_dir).claim("HE-T4.2ii").tables == ()  # a claim without a table: as stored

    # each record from its own numbers (a sweep stores one record per point, with one id)
    from icl_verify.validation.report import retabulate

    doubled = replace(stored, params={**stored.params, "L": 2 * stored.params["L"]})
    twice = retabulate(replace(load_run(run_dir), claims=(stored, doubled)))
    assert [t.tables[0].splitlines()[-1].split(" | ")[0] for t in twice.claims] == [
        f"| {stored.params['L']}", f"| {2 * stored.params['L']}"]


def test_report_recomputes_where_each_verdict_turns_from_the_stored_numbers(smoke_run, tmp_path):
    # a run recorded before checks said where their verdict turns gets it from today's rules
    import shutil

    run_dir = tmp_path / "older"
    shutil.copytree(smoke_run[1], run_dir)
    record = load_run(run_dir)
    blank = replace(record, claims=tuple(
        replace(c, checks=tuple(replace(k, changes_at="") for k in c.checks))
        for c in record.claims))  # fmt: skip
    blank.save(run_dir)
    assert main(["report", str(run_dir), "--no-figures"]) == 0
    again = load_run(run_dir)
    assert [[k.changes_at for k in c.checks] for c in again.claims] == [
        [k.changes_at for k in c.checks] for c in record.claims]
    assert all(k.changes_at for c in again.claims for k in c.checks)


def test_rerunning_a_run_id_skips_finished_claims(smoke_run, monkeypatch, capsys):
    status, run_dir = smoke_run
    before = {c.id: c.seconds for c in load_run(run_dir).claims}

    def must_not_run(params, runtime):
        raise AssertionError("a finished claim was measured again")

    claims = tuple(replace(c, measure=must_not_run) for c in registry.all_claims())
    monkeypatch.setattr(registry, "all_claims", lambda: claims)
    args = ["run", *PILOTS, "--preset", "smoke", "--out", str(run_dir.parent), "--run-id",
            "pilot", "--seed", "3", "--device", "cpu", "--no-progress"]  # fmt: skip
    assert main(args) == 0
    assert {c.id: c.seconds for c in load_run(run_dir).claims} == before


def test_a_partial_run_resumes_with_the_missing_claim(tmp_path, capsys):
    args = ["--preset", "smoke", "--out", str(tmp_path), "--run-id", "part", "--device", "cpu",
            "--no-progress"]  # fmt: skip
    assert main(["run", "HE-MAN", *args]) == 0
    first = load_run(tmp_path / "part").claims[0]
    assert main(["run", "HE-MAN", "HE-T4.2ii", *args]) == 0
    claims = load_run(tmp_path / "part").claims
    assert [c.id for c in claims] == ["HE-MAN", "HE-T4.2ii"]
    assert claims[0] == first  # kept, not recomputed
    # Resuming with another seed would mix two experiments: refused as bad input.
    assert main(["run", "HE-MAN", *args, "--seed", "9"]) == 2
    assert "run-id 'part' exists" in capsys.readouterr().err


def test_a_run_killed_mid_way_keeps_the_finished_claims(tmp_path, monkeypatch, capsys):
    def killed(params, runtime):
        raise KeyboardInterrupt  # the process is stopped while measuring the second claim

    first, second = registry.select_claims(["HE-MAN", "HE-T4.2ii"])  # both agree at smoke size
    monkeypatch.setattr(registry, "all_claims", lambda: (first, replace(second, measure=killed)))
    args = ["run", "--preset", "smoke", "--out", str(tmp_path), "--run-id", "k", "--device", "cpu",
            "--no-progress", "--workers", "1"]  # fmt: skip  (the registry patched here)
    assert main(args) == 130  # 128 + SIGINT, with one line on what was saved
    assert "1 claim finished and saved in" in capsys.readouterr().err
    kept = load_run(tmp_path / "k")
    assert [c.id for c in kept.claims] == [first.id] and kept.finished is None
    monkeypatch.setattr(registry, "all_claims", lambda: (first, second))
    assert main(args) == 0  # resumes: only the second claim runs now
    assert load_run(tmp_path / "k").claims[0] == kept.claims[0]


def _patched(monkeypatch, **changes):
    claim = replace(CLAIM_MANIFOLD, **changes)
    monkeypatch.setattr(registry, "all_claims", lambda: (claim,))


def test_a_disagreeing_claim_exits_1_and_is_reported_as_a_finding(tmp_path, monkeypatch, capsys):
    def wrong_predict(params):
        right = CLAIM_MANIFOLD.predict(params)
        values = {**right.values, "plus_sum": 1.01 * right.values["plus_sum"]}
        return Prediction(values, right.figure_data)

    _patched(monkeypatch, predict=wrong_predict)
    status = main(["run", "HE-MAN", "--preset", "smoke", "--out", str(tmp_path), "--run-id", "w",
                   "--device", "cpu", "--no-progress"])  # fmt: skip
    assert status == 1
    report = (tmp_path / "w" / "report.md").read_text()
    assert "**Finding: the measurement contradicts the claim**" in report


def test_an_inconclusive_claim_warns_and_exits_0_unless_strict(tmp_path, monkeypatch, capsys):
    def too_tight(params):  # a tolerance below the optimiser's error bounds: cannot decide
        return tuple(replace(c, rule=Tolerance("test", atol=1e-300))
                     for c in CLAIM_MANIFOLD.checks(params))  # fmt: skip

    _patched(monkeypatch, checks=too_tight)
    base = ["run", "HE-MAN", "--preset", "smoke", "--out", str(tmp_path), "--device", "cpu",
            "--no-progress"]  # fmt: skip
    assert main([*base, "--run-id", "a"]) == 0
    assert "warning: inconclusive: HE-MAN" in capsys.readouterr().err
    assert main([*base, "--run-id", "b", "--strict"]) == 1


@pytest.mark.parametrize(
    "args, names",
    [
        (["run", "HE-NOPE"], "unknown claim id 'HE-NOPE'"),
        (["run", "--preset", "huge"], "--preset must be one of smoke, quick, paper"),
        (["run", "--device", "tpu"], "--device must be auto, cpu, cuda or cuda:N"),
        (["run", "--seed", "-1"], "--seed must be an integer in [0,"),
        (["run", "--seed", "abc"], "--seed must be an integer in [0,"),
        (["run", "--run-id", "../x"], "--run-id must be"),
        (["run", "--budget", "0"], "--budget must be a number of seconds > 0, got '0'"),
        (["run", "--budget", "nan"], "--budget must be a number of seconds > 0"),
        (["run", "--budget", "1e999"], "--budget must be a number of seconds > 0"),
        (["report", "/nonexistent/run"], "RESULTS_DIR: results directory must contain"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(args, names, tmp_path, capsys):
    extra = ["--out", str(tmp_path)] if args[0] == "run" else []
    assert main([*args, *extra]) == 2
    err = capsys.readouterr().err
    assert names in err
    assert err.count("\n") == 1 and "Traceback" not in err


def test_cuda_device_without_cuda_is_bad_input(tmp_path, capsys):
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("CUDA present: the device is valid here")
    assert main(["run", "HE-MAN", "--device", "cuda", "--out", str(tmp_path)]) == 2
    assert "CUDA is not available" in capsys.readouterr().err


def test_results_json_keeps_arrays_and_error_kinds(smoke_run):
    _, run_dir = smoke_run
    claim = {c.id: c for c in load_run(run_dir).claims}["HE-T4.2ii"]
    measured = claim.restored_measurement().values["profile"]
    assert measured.error_kind == "bound"
    assert isinstance(measured.value, np.ndarray) and measured.value.ndim == 1
    assert all(check.justification for check in claim.checks)


def test_a_run_stopped_at_its_budget_exits_3_and_the_same_run_id_finishes_it(
    tmp_path, monkeypatch, capsys
):
    """A budget that ends inside the trainings: each training checkpoints and stops at its first
    step, a claim that trains nothing finishes, exit 3 names the others; the same run id
    without a budget continues from the checkpoints and ends with the record of a run that was
    never stopped. (The clocks are set: the runner's before the deadline, the trainer's after.)"""
    import time
    from types import SimpleNamespace

    import icl_verify.numerics._core._training.deadline as trainer_deadline
    import icl_verify.validation.runner as runner

    ids = ["HE-OBS1", "HE-OBS2", "HE-MAN"]
    base = ["run", *ids, "--preset", "smoke", "--device", "cpu", "--workers", "1", "--no-progress"]
    stopped = [*base, "--out", str(tmp_path / "a"), "--run-id", "r", "--budget", "60"]
    with monkeypatch.context() as clocks:
        clocks.setattr(runner, "time", SimpleNamespace(time=lambda: 0.0,
                                                       perf_counter=time.perf_counter))
        clocks.setattr(trainer_deadline, "time", SimpleNamespace(time=lambda: 61.0))
        assert main(stopped) == 3
    err = capsys.readouterr().err
    assert "unfinished: HE-OBS1: training stopped at its deadline after step 1 of 300" in err
    assert "unfinished: HE-OBS2: training stopped at its deadline after step 2 of 300" in err
    assert "continue it with --run-id r" in err and "HE-MAN" not in err
    record = load_run(tmp_path / "a" / "r")
    assert set(record.unfinished) == {"HE-OBS1", "HE-OBS2"} and record.finished is None
    assert record.finished_ids() == {"HE-MAN"}
    report = (tmp_path / "a" / "r" / "report.md").read_text()
    assert "HE-OBS1 unfinished (the run's budget)" in report
    assert ", not finished\n" in report  # the header's line, not "finished (unfinished)"
    assert main([*base, "--out", str(tmp_path / "a"), "--run-id", "r"]) in (0, 1)
    resumed = load_run(tmp_path / "a" / "r")
    assert not resumed.unfinished and resumed.finished is not None
    assert main([*base, "--out", str(tmp_path / "b"), "--run-id", "r"]) in (0, 1)
    fresh = load_run(tmp_path / "b" / "r")
    for claim in fresh.claims:  # the same numbers, bit for bit on the CPU
        again = next(c for c in resumed.claims if c.id == claim.id)
        assert again.measurement == claim.measurement, claim.id
