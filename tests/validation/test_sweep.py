"""`icl-verify sweep`: grid parsing, one results.json, resume, errors, the validity map."""

import json

import numpy as np
import pytest
from icl_verify.validation import sweep as sweep_module
from icl_verify.validation.cli import main
from icl_verify.validation.params import ParameterError
from icl_verify.validation.records import RunRecord, load_run
from icl_verify.validation.registry import select_claims
from icl_verify.validation.report import validity_map_data, worst_check
from icl_verify.validation.sweep import parse_grid

FAST = "HE-T4.2ii"  # an optimiser claim: ~0.1 s a point at the smoke preset


def _base(claim_id: str = FAST):
    return select_claims([claim_id])[0].presets["smoke"]


def _one_error_line(capsys) -> str:
    captured = capsys.readouterr()
    lines = captured.err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("icl-verify: error: "), captured.err
    assert "Traceback" not in captured.err + captured.out
    return lines[0]


# -- grid parsing ------------------------------------------------------------------------------


def test_lists_give_the_product_first_key_slowest_with_typed_values():
    grid = parse_grid(_base(), ["d=3,5", "sigma2=0,0.5"])
    assert grid.keys == ("d", "sigma2") and grid.mode == "product"
    assert [p.values for p in grid.points] == [
        {"d": 3, "sigma2": 0.0}, {"d": 3, "sigma2": 0.5},
        {"d": 5, "sigma2": 0.0}, {"d": 5, "sigma2": 0.5},
    ]  # fmt: skip
    assert isinstance(grid.points[0].values["d"], int)
    assert grid.points[3].params.d == 5 and grid.points[3].params.H == _base().H  # rest: preset


def test_logspace_of_an_integer_is_rounded_deduplicated_and_said():
    grid = parse_grid(_base(), ["L=logspace:1:4:6"])  # 1, 1.32, 1.74, 2.30, 3.03, 4
    assert [p.values["L"] for p in grid.points] == [1, 2, 3, 4]
    assert grid.notes == ("--grid L=logspace:1:4:6: rounded to integers 1, 2, 3, 4 "
                          "(2 repeated values dropped)",)  # fmt: skip
    floats = parse_grid(_base(), ["sigma2=logspace:0.01:1:3"])
    assert np.allclose([p.values["sigma2"] for p in floats.points], [0.01, 0.1, 1.0])
    assert floats.notes == ()
    assert [p.values["L"] for p in parse_grid(_base(), ["L=linspace:10:20:3"]).points] == [
        10, 15, 20,
    ]  # fmt: skip


def test_zip_pairs_the_lists_and_json_lists_carry_list_parameters():
    grid = parse_grid(_base(), ["d=3,5", "L=20,40"], zipped=True)
    assert [p.values for p in grid.points] == [{"d": 3, "L": 20}, {"d": 5, "L": 40}]
    lengths = parse_grid(_base("HE-T4.2i"), ["L_values=[[80,160,320],[40,80,160]]"])
    assert [p.params.L_values for p in lengths.points] == [(80, 160, 320), (40, 80, 160)]


@pytest.mark.parametrize(
    "grids, zipped, message",
    [
        (["dd=3"], False, "--grid dd: no parameter 'dd'"),
        (["d="], False, "--grid must be KEY=VALUES"),
        (["d3"], False, "--grid must be KEY=VALUES"),
        (["d=3,,5"], False, "--grid d=3,,5: an empty value"),
        (["d=3", "d=5"], False, "--grid d: given twice"),
        (["d=3,0"], False, "--grid point 2 of 2 (d=0): d must be an integer in [1, 10000], got 0"),
        (["d=3,x"], False,
         "--grid point 2 of 2 (d=x): d must be an integer in [1, 10000], got 'x'"),
        (["d=3,3.0"], False, "--grid points 1 and 2 are the same (d=3)"),
        (["L=logspace:0:8:3"], False, "logspace needs START > 0 and STOP > 0"),
        (["L=logspace:2:8"], False, "--grid L=logspace:2:8: write logspace:START:STOP:COUNT"),
        (["L=linspace:2:8:1"], False, "COUNT in [2, 10000]"),
        (["d=[3,"], False, "--grid d: not a non-empty JSON list"),
        (["d=3,5", "L=20"], True, "--zip needs grids of equal lengths, got d: 2, L: 1"),
        (["omega_min=0.05,0.9"], False, "--grid point 2 of 2 (omega_min=0.9): omega_min must be"),
        ([], False, "--grid: give at least one"),
    ],
)
def test_every_bad_grid_is_one_line_naming_the_key(grids, zipped, message):
    with pytest.raises(ParameterError) as caught:
        parse_grid(_base(), grids, zipped=zipped)
    assert message in str(caught.value) and "\n" not in str(caught.value)


def test_a_list_parameter_needs_json():
    with pytest.raises(ParameterError, match=r"L_values is a list parameter; write its values"):
        parse_grid(_base("HE-T4.2i"), ["L_values=80,160"])


# -- end to end --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def swept(tmp_path_factory):
    """A 2 x 2 sweep of the fast claim at the smoke preset: (out folder, exit status)."""
    pytest.importorskip("icl_verify.figures.validity_map", reason="the validity-map figures")
    out = tmp_path_factory.mktemp("sweeps")
    argv = ["sweep", FAST, "--grid", "d=3,5", "--grid", "L=20,40", "--preset", "smoke"]
    status = main(argv + ["--out", str(out), "--run-id", "s", "--no-progress"])
    return out, status


def test_a_2x2_sweep_keeps_every_point_with_its_parameters_in_one_results_json(swept):
    out, status = swept
    assert status == 0
    record = load_run(out / "s")
    assert record.sweep.claim == FAST and record.sweep.keys == ("d", "L")
    assert [(c.params["d"], c.params["L"]) for c in record.claims] == [
        (3, 20), (3, 40), (5, 20), (5, 40),
    ]  # fmt: skip
    assert all(c.id == FAST and c.params["H"] == _base().H for c in record.claims)
    assert record.claims[0].overrides == {"d": 3, "L": 20}
    assert len({c.figures[0] for c in record.claims}) == 4  # each point's own figure
    assert all((out / "s" / c.figures[0]).is_file() for c in record.claims)


def test_the_sweep_report_has_a_row_per_point_and_the_map(swept):
    out, _ = swept
    report = (out / "s" / "report.md").read_text()
    assert "| point | d | L | verdict | worst check | score |" in report
    assert "| 4 | 5 | 40 | agrees |" in report
    assert f"![{FAST} validity map](figures/{FAST}-validity-map.png)" in report
    assert (out / "s" / "figures" / f"{FAST}-validity-map.png").stat().st_size > 0


def test_the_validity_map_is_drawn_by_report_from_results_json_alone(swept, capsys):
    out, _ = swept
    run_dir = out / "s"
    record = load_run(run_dir)
    data = validity_map_data(record)
    assert (data.x_name, data.y_name) == ("d", "L")
    assert data.x_values.tolist() == [3, 5] and data.y_values.tolist() == [20, 40]
    assert data.scores[1, 0] == worst_check(record.claims[1]).score  # d=3, L=40: row L, column d
    assert data.verdicts.tolist() == [["agrees", "agrees"], ["agrees", "agrees"]]
    figure = run_dir / "figures" / f"{FAST}-validity-map.png"
    figure.unlink()
    (run_dir / "report.md").unlink()
    assert main(["report", str(run_dir)]) == 0
    assert figure.stat().st_size > 0 and "| 1 | 3 | 20 |" in (run_dir / "report.md").read_text()


def test_a_list_valued_key_is_a_category_of_the_2d_map(tmp_path):
    # HE-S2's heads is a list parameter: two keys still give the 2-D grid, ticks as JSON text.
    argv = ["sweep", "HE-S2", "--grid", "heads=[[2],[4]]", "--grid", "scale=0.01,0.1"]
    assert main(argv + ["--preset", "smoke", "--out", str(tmp_path), "--run-id", "s",
                        "--no-progress"]) in (0, 1)  # fmt: skip
    data = validity_map_data(load_run(tmp_path / "s"))
    assert data.x_values.tolist() == ["[2]", "[4]"] and data.y_values.tolist() == [0.01, 0.1]
    assert data.scores.shape == (2, 2) and np.isfinite(data.scores).all()


def test_a_one_key_sweep_maps_each_scalar_check_and_array_checks_by_score(swept):
    out, _ = swept
    record = load_run(out / "s")
    keep = [c for c in record.claims if c.params["L"] == 20]
    spec = type(record.sweep)(FAST, ("d",), "product", ({"d": 3}, {"d": 5}, {"d": 7}))
    data = validity_map_data(RunRecord(**{**record.__dict__, "claims": keep, "sweep": spec}))
    assert data.y_values is None and data.x_values.tolist() == [3, 5, 7]
    assert data.verdicts.tolist() == ["agrees", "agrees", ""]  # d=7 not run
    checks = record.claims[0].checks
    assert len(data.series) == len(checks)
    for check, (label, predicted, measured, error) in zip(checks, data.series, strict=True):
        assert np.isnan(measured[2])
        if np.ndim(check.predicted) == 0:  # a scalar check: its own numbers
            assert label == check.label and predicted[0] == check.predicted
            assert error[1] == keep[1].checks[checks.index(check)].error
        else:  # an array-valued check: its worst score against the line 1
            assert label == f"{check.label}: worst score (1 = contradicted)"
            assert predicted.tolist()[:2] == [1.0, 1.0] and measured[0] == check.score
    assert {np.ndim(c.predicted) for c in checks} == {0, 1}  # both kinds are exercised


def test_a_killed_sweep_rerun_redoes_only_the_unfinished_points(tmp_path, monkeypatch):
    pytest.importorskip("icl_verify.figures.validity_map", reason="the validity-map figures")
    argv = ["sweep", FAST, "--grid", "d=2,3,4", "--preset", "smoke", "--out", str(tmp_path)]
    argv += ["--run-id", "k", "--no-progress", "--workers", "1"]  # run_task patched here
    real, ran = sweep_module.run_task, []

    def killed_after_one(task):
        if ran:
            raise KeyboardInterrupt  # the process killed while the second point runs
        ran.append(task.point)
        return real(task)

    monkeypatch.setattr(sweep_module, "run_task", killed_after_one)
    assert main(argv) == 130  # 128 + SIGINT
    partial = load_run(tmp_path / "k")  # whole, with the one finished point
    assert [c.params["d"] for c in partial.claims] == [2] and partial.finished is None

    def counted(task):
        ran.append(task.point)
        return real(task)

    monkeypatch.setattr(sweep_module, "run_task", counted)
    assert main(argv) == 0
    assert ran == [0, 1, 2]  # point 0 once, before the kill; then only 1 and 2
    record = load_run(tmp_path / "k")
    assert [c.params["d"] for c in record.claims] == [2, 3, 4] and record.finished


def test_reusing_a_run_id_with_another_grid_seed_or_set_exits_2(swept, capsys):
    out, _ = swept
    base = ["sweep", FAST, "--preset", "smoke", "--out", str(out), "--run-id", "s"]
    cases = {
        "another grid": (["--grid", "d=3,5", "--grid", "L=20,80"], "over another grid"),
        "another seed": (["--grid", "d=3,5", "--grid", "L=20,40", "--seed", "1"], "seed 0"),
        "another --set": (
            ["--grid", "d=3,5", "--grid", "L=20,40", "--set", "H=4"],
            "with other parameters",
        ),
    }
    before = (out / "s" / "results.json").read_bytes()
    for extra, message in cases.values():
        assert main(base + extra) == 2
        assert message in _one_error_line(capsys)
    # `icl-verify run` given the sweep's run id refuses it too (its points are not a run)
    run = ["run", FAST, "--preset", "smoke", "--out", str(out), "--run-id", "s", "--no-progress"]
    assert main(run) == 2
    assert "holds a sweep of" in _one_error_line(capsys)
    assert (out / "s" / "results.json").read_bytes() == before


@pytest.mark.parametrize(
    "argv, message",
    [
        (["NO-SUCH", "--grid", "d=3"], "NO-SUCH"),
        ([FAST, "--grid", "dd=3"], "--grid dd: no parameter 'dd'"),
        ([FAST, "--grid", "d=3,-1"], "--grid point 2 of 2 (d=-1): d must be"),
        ([FAST], "--grid"),
        ([FAST, "--grid", "d=3", "--set", "d=4"], "--grid d: also given by --set"),
        ([FAST, "--grid", "d=3", "--preset", "huge"], "--preset must be one of"),
    ],
)
def test_bad_input_exits_2_with_one_line_and_writes_nothing(tmp_path, capsys, argv, message):
    assert main(["sweep", *argv, "--out", str(tmp_path / "out"), "--run-id", "x"]) == 2
    assert message in _one_error_line(capsys)
    assert not (tmp_path / "out").exists()


def test_a_plain_run_record_has_no_sweep_field():
    data = json.loads(RunRecord.start("r", "smoke", 0, "cpu").to_json())
    assert "sweep" not in data
