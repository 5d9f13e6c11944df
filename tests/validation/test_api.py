"""The Python interface (`icl_verify.run`, `icl_verify.sweep`, `icl_verify.testing`) and claims
from another installed package (entry points ``icl_verify.claims``)."""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from icl_verify.validation.cli import main
from icl_verify.validation.records import load_run

import icl_verify
from icl_verify.testing import assert_claim

ROOT = Path(__file__).resolve().parents[2]


def test_run_returns_the_record_the_cli_writes(tmp_path):
    result = icl_verify.run("HE-MAN", preset="smoke", out=tmp_path, run_id="api", d=4)
    stored = load_run(tmp_path / "api").claims[0]
    assert result.record == stored and result.params["d"] == 4
    assert main(["run", "HE-MAN", "--preset", "smoke", "--set", "d=4", "--out", str(tmp_path),
                 "--run-id", "cli", "--no-progress", "--workers", "1"]) == 0  # fmt: skip
    cli = load_run(tmp_path / "cli").claims[0]
    assert (cli.params, cli.verdict) == (stored.params, stored.verdict)
    assert [c.measured for c in cli.checks] == [c.measured for c in stored.checks]
    assert all(path.is_file() for path in result.figures)


def test_table_and_figure_come_from_the_record(tmp_path):
    result = icl_verify.run("HE-MAN", preset="smoke", out=tmp_path)
    rows = result.table()
    rows = rows.to_dict("records") if hasattr(rows, "to_dict") else rows  # pandas optional
    assert [r["verdict"] for r in rows] == [c.verdict for c in result.checks]
    assert rows[0]["measured"] == result.checks[0].measured
    figure = result.figure()
    assert figure.axes  # a matplotlib Figure drawn from the stored numbers
    assert "| quantity | rule | verdict |" in result._repr_markdown_()


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: icl_verify.run("HE-MAN", preset="smoke", d=0), "HE-MAN: d must be an integer"),
        (lambda: icl_verify.run("HE-MAN", preset="smoke", nope=1),
         "HE-MAN: unknown parameter 'nope'"),
        (lambda: icl_verify.run("HE-NOPE"), "unknown claim id 'HE-NOPE'"),
        (lambda: icl_verify.run("HE-MAN", preset="huge"), "preset must be one of"),
        (lambda: icl_verify.sweep("HE-MAN", {"d": [3]}, d=4),
         "HE-MAN: d is both swept and set"),
        (lambda: icl_verify.sweep("HE-MAN", {"d": [3, -1]}, preset="smoke"),
         "point 2 of 2 (d=-1): d must be an integer"),
        # a Python value is not parsed: a str, a float or a bool where an integer is asked is
        # refused in the command line's words (--set d=five: "got 'five'")
        (lambda: icl_verify.run("HE-MAN", preset="smoke", d="5"),
         "HE-MAN: d must be an integer in [1, 10000], got '5'"),
        (lambda: icl_verify.run("HE-MAN", preset="smoke", d=5.0),
         "HE-MAN: d must be an integer in [1, 10000], got 5.0"),
        (lambda: icl_verify.run_many(["HE-MAN"], "smoke", sets={"d": True}),
         "HE-MAN: d must be an integer in [1, 10000], got True"),
        (lambda: icl_verify.sweep("HE-MAN", {"d": 5}, preset="smoke"),
         "HE-MAN: grid['d'] must be a non-empty list of the values to sweep, got 5"),
        (lambda: icl_verify.run("HE-OBS9"), "unknown claim id 'HE-OBS9'; did you mean HE-OBS4"),
    ],
)  # fmt: skip
def test_bad_input_is_one_value_error_naming_the_parameter(call, message):
    with pytest.raises(ValueError) as error:
        call()
    assert message in str(error.value) and "\n" not in str(error.value)


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"preset": ["smoke"]}, "preset must be one of smoke, quick, paper, got ['smoke']"),
        ({"out": 5}, "out must be a folder path (a str or a Path), got 5"),
        ({"out": None}, "out must be a folder path (a str or a Path), got None"),
        ({"workers": "2"}, "workers must be an integer >= 1 or None (one per core), got '2'"),
        ({"workers": 0}, "workers must be an integer >= 1"),
        ({"seed": 1.5}, "seed must be an integer in [0, 9223372036854775807], got 1.5"),
        ({"run_id": 7}, "run_id must be a folder name (a str) or None, got 7"),
    ],
)
def test_a_run_argument_of_the_wrong_kind_is_one_line_and_leaves_no_folder(
    arguments, message, tmp_path, monkeypatch
):
    monkeypatch.chdir(tmp_path)  # out=None/5 would otherwise name a folder here
    for call in (icl_verify.run, icl_verify.sweep):
        grid = ({"d": [3, 4]},) if call is icl_verify.sweep else ()
        kwargs = {"preset": "smoke", "out": str(tmp_path / "out"), **arguments}
        with pytest.raises(ValueError) as error:
            call("HE-MAN", *grid, **kwargs)
        assert str(error.value) == message or (message in str(error.value))
        assert "\n" not in str(error.value)
    assert list(tmp_path.iterdir()) == []


def test_results_print_a_short_summary_and_assert_claim_cleans_up(tmp_path, monkeypatch):
    result = icl_verify.run("HE-S2-BOUND", preset="smoke", out=tmp_path)
    text = repr(result)
    assert text.startswith("<ClaimResult HE-S2-BOUND: ") and "\n" not in text and len(text) < 300
    many = icl_verify.run_many(["HE-S2-BOUND", "HE-MAN"], "smoke", out=tmp_path)
    assert repr(many).startswith("<RunResult 2 records (") and len(repr(many)) < 300
    monkeypatch.setenv("TMPDIR", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", None)  # read TMPDIR again
    assert_claim("HE-S2-BOUND")
    assert list((tmp_path / "tmp").iterdir()) == []  # passed: its run folder removed


def test_sweep_returns_every_point_in_grid_order(tmp_path):
    result = icl_verify.sweep("HE-MAN", {"d": [3, 5]}, preset="smoke", out=tmp_path, L=20)
    assert [p.params["d"] for p in result.points] == [3, 5]
    assert all(p.params["L"] == 20 for p in result.points)
    assert result.validity_map.is_file()
    rows = result.table()
    rows = rows.to_dict("records") if hasattr(rows, "to_dict") else rows
    assert [r["d"] for r in rows] == [3, 5]


def test_assert_claim_passes_or_names_the_checks_that_did_not_agree(tmp_path):
    assert assert_claim("HE-MAN", out=tmp_path).verdict == "agrees"
    with pytest.raises(AssertionError) as failure:  # HE-4.12 disagrees (a finding) at smoke
        assert_claim("HE-4.12", out=tmp_path)
    text = str(failure.value)
    assert text.startswith("HE-4.12 at preset 'smoke'") and "disagrees:" in text
    assert "report:" in text


PLUGIN = '''
"""A claim from outside the repository: the mean of N(mu, 1) samples is mu."""
from dataclasses import dataclass

import numpy as np
from icl_verify.validation.claim import Check, Claim, FigureRef, Source, scaled
from icl_verify.validation.estimates import Estimate, Measurement, Prediction
from icl_verify.validation.rules import ZScore
from icl_verify.validation.params import Params, param


@dataclass(frozen=True, kw_only=True)
class MeanParams(Params):
    mu: float = param(0.5, help="the mean", low=-10, high=10)
    n_samples: int = param(help="samples", low=2, role="count")


def measure(params, runtime):
    x = runtime.rng("x").normal(params.mu, 1.0, params.n_samples)
    return Measurement({"mean": Estimate(x.mean(), x.std(ddof=1) / np.sqrt(x.size))})


CLAIMS = (
    Claim(
        id="MY-MEAN",
        source=Source("My notes 2026", "1"),
        statement="The sample mean of N(mu, 1) draws estimates mu.",
        params=MeanParams,
        presets={name: MeanParams(n_samples=n) for name, n in
                 (("smoke", 1000), ("quick", 10000), ("paper", 100000))},
        predict=lambda params: Prediction({"mean": params.mu}),
        measure=measure,
        checks=lambda params: (Check("mean", ZScore("Monte Carlo SE", abs_resolution=0.5),
                                     "sample mean vs mu"),),
        figure=FigureRef("my_claims_figures", "draw"),
        wrong=scaled("mean", 3.0, why="The mean tripled: far outside the Monte Carlo SE."),
        summary="sample mean vs mu",
    ),
)
'''

FIGURES = '''
def draw(params, prediction, measurement):
    import matplotlib.pyplot as plt

    figure, axis = plt.subplots()
    axis.axhline(prediction.values["mean"])
    axis.plot([0], [measurement.values["mean"].value], "o")
    return figure
'''

PYPROJECT = """
[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"

[project]
name = "my-claims"
version = "0.1"

[project.entry-points."icl_verify.claims"]
mine = "my_claims"
broken = "my_claims_missing"

[tool.setuptools]
py-modules = ["my_claims", "my_claims_figures"]
"""


def test_a_claim_package_installed_elsewhere_is_found_by_list_run_and_python(tmp_path):
    package = tmp_path / "package"
    package.mkdir()
    (package / "pyproject.toml").write_text(textwrap.dedent(PYPROJECT))
    (package / "my_claims.py").write_text(PLUGIN)
    (package / "my_claims_figures.py").write_text(FIGURES)
    target = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps",
                    "--no-build-isolation", "--target", str(target), str(package)],
                   check=True)  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(target)}
    command = [str(Path(sys.executable).with_name("icl-verify"))]
    listed = subprocess.run([*command, "list"], env=env, capture_output=True, text=True)
    assert listed.returncode == 0 and "MY-MEAN" in listed.stdout
    assert "claims entry point 'broken'" in listed.stderr  # a broken plugin: warned, left out
    ran = subprocess.run([*command, "run", "MY-MEAN", "--preset", "smoke", "--out",
                          str(tmp_path / "out"), "--run-id", "r", "--no-progress"],
                         env=env, capture_output=True, text=True)  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    record = json.loads((tmp_path / "out" / "r" / "results.json").read_text())
    assert record["claims"][0]["verdict"] == "agrees"
    assert (tmp_path / "out" / "r" / "figures" / "MY-MEAN.png").is_file()
    out = str(tmp_path / "py")
    script = f"import icl_verify; print(icl_verify.run('MY-MEAN', 'smoke', out={out!r}).verdict)"
    python = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                            text=True)  # fmt: skip
    assert python.stdout.strip() == "agrees", python.stderr


def test_run_many_is_what_the_command_line_runs(tmp_path):
    result = icl_verify.run_many(["HE-MAN", "HE-4.9"], "smoke", sets={"d": 4},
                                 tables={"HE-MAN": {"L": 20}}, out=tmp_path,
                                 run_id="many")  # fmt: skip
    assert [c.id for c in result.claims] == ["HE-MAN", "HE-4.9"]
    assert result["HE-MAN"].params["L"] == 20 and result["HE-4.9"].params["d"] == 4
    assert load_run(tmp_path / "many") == result.record
    with pytest.raises(KeyError):
        result["HE-S1"]
