"""The user sets the setting: `run --set`, `run --config FILE.toml` and `show`, end to end.

At smoke size for claims of three kinds, each with a parameter changed: a Monte Carlo
claim (HE-P4.1, --set), an ODE claim (HE-B-PHASE3) and a trained-model claim (HE-OBS3)
through one TOML file. The record and the report state the parameters used, and the
cache keys hold them (a changed setting never reuses another setting's artefact).
"""

import json

import pytest
from icl_verify.validation.cli import main
from icl_verify.validation.records import load_run

COMMON = ["--preset", "smoke", "--device", "cpu", "--no-progress"]


def _entries(cache):
    """The configurations stored in the artefact cache: a list of {"name", "config"}."""
    return [json.loads(p.read_text()) for p in cache.glob("*/config.json")]


@pytest.fixture(scope="module")
def changed_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("set")
    config = out / "setting.toml"
    config.write_text('["HE-B-PHASE3"]\nd = 6\nL = 60\n\n["HE-OBS3"]\nsteps = 120\n')
    ids = ["HE-P4.1", "HE-B-PHASE3", "HE-OBS3"]
    status = main(["run", *ids, "--set", "gap_L=20,40,80,160", "--config", str(config),
                   "--out", str(out), "--run-id", "r", *COMMON])  # fmt: skip
    return status, out


def test_the_changed_parameters_are_used_recorded_and_reported(changed_run):
    status, out = changed_run
    assert status in (0, 1)
    claims = {c.id: c for c in load_run(out / "r").claims}
    assert claims["HE-P4.1"].overrides == {"gap_L": [20, 40, 80, 160]}
    assert claims["HE-P4.1"].params["gap_L"] == [20, 40, 80, 160]
    assert claims["HE-B-PHASE3"].overrides == {"d": 6, "L": 60}
    assert claims["HE-OBS3"].overrides == {"steps": 120}
    assert claims["HE-OBS3"].params["d"] == 5  # the file's d = 6 is HE-B-PHASE3's only
    report = (out / "r" / "report.md").read_text()
    assert "changed from the preset: `d=6, L=60`" in report
    assert "changed from the preset: `steps=120`" in report


def test_the_cache_key_holds_the_changed_parameters(changed_run):
    _, out = changed_run
    configs = [entry["config"] for entry in _entries(out / "cache")]
    assert any(c.get("steps") == 120 for c in configs), configs  # the training, at 120 steps


def test_the_measurement_follows_the_changed_setting(changed_run):
    _, out = changed_run
    claims = {c.id: c for c in load_run(out / "r").claims}
    lengths = claims["HE-P4.1"].measurement["figure_data"]
    assert any(len(v) == 4 for v in lengths.values() if isinstance(v, list)), lengths.keys()


def test_resuming_a_run_with_other_parameters_is_refused(changed_run, capsys):
    _, out = changed_run
    status = main(["run", "HE-P4.1", "--set", "gap_L=20,40,80", "--out", str(out),
                   "--run-id", "r", *COMMON])  # fmt: skip
    assert status == 2
    err = capsys.readouterr().err
    assert "finished HE-P4.1 with other parameters" in err and err.count("\n") == 1


@pytest.mark.parametrize(
    "extra, toml, message",
    [
        (["--set", "dd=3"], None, "--set dd: no claim run has a parameter 'dd'"),
        (["--set", "d=0"], None, "HE-MAN: d must be an integer in [1, 10000], got 0"),
        (["--set", "sigma2=nan"], None, "HE-MAN: sigma2 must be a number in [0, 1e+12], got nan"),
        (["--set", "omega_min=0.9"], None, "HE-MAN: omega_min must be < omega_max"),
        (["--set", "d"], None, "--set must be KEY=VALUE"),
        ([], '["HE-MAN"]\nd = "five"\n', "HE-MAN: d must be an integer in [1, 10000], got 'five'"),
        ([], '["HE-MAN"]\nsize = 3\n', "HE-MAN: unknown parameter 'size'"),
        ([], '["HE-NOPE"]\nd = 3\n', "unknown claim id 'HE-NOPE'"),
        ([], "d = 3\n", "top-level key 'd' must be a table named by a claim id"),
        ([], '["HE-MAN"\nd = 3\n', "not valid TOML"),
        ([], '["HE-MAN"]\nd = ' + "[" * 4000 + "]" * 4000 + "\n", "nested too deep to read"),
    ],
)
def test_a_bad_setting_is_one_line_and_exit_2(extra, toml, message, tmp_path, capsys):
    if toml is not None:
        (tmp_path / "c.toml").write_text(toml)
        extra = [*extra, "--config", str(tmp_path / "c.toml")]
    assert main(["run", "HE-MAN", *extra, "--out", str(tmp_path), *COMMON]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1 and "Traceback" not in err
    assert not (tmp_path / "cache").exists()  # refused before any work


def test_show_prints_statement_parameters_presets_and_ranges(capsys):
    assert main(["show", "HE-P4.1"]) == 0
    text = capsys.readouterr().out
    assert text.startswith("HE-P4.1  He et al. 2025")
    header = next(line for line in text.splitlines() if line.startswith("parameter"))
    assert header.split()[:5] == ["parameter", "type", "smoke", "quick", "paper"]
    assert any(line.split()[:2] == ["sigma2", "float"] for line in text.splitlines())
    assert main(["show", "HE-NOPE"]) == 2


@pytest.mark.parametrize(
    "claim_id, setting, message",
    [
        ("HE-5.2-ACT", "activations=softmax,f:abs(x)+1", "f must be differentiable at 0"),
        ("HE-5.2-ACT", "activations=f:x**2", "f(0) must be finite and > 0, got 0.0"),
        ("HE-5.2-ACT", "activations=elu", "'elu' needs a parameter: 'elu:c' with c > 0"),
        ("HE-5.2-ACT", "activations=f:1+y", "f may use only the variable x, got y"),
        (
            "HE-5.2-ACT",
            "lengths=0,40",
            "lengths must be a non-empty list of integers in [1, 100000]",
        ),
        ("HE-5.1-LENGTH", "lengths=40,100001", "lengths must be a non-empty list of integers in"),
    ],
)
def test_section5_settings_are_refused_in_one_line_with_exit_2(
    claim_id, setting, message, tmp_path, capsys
):
    """He §5: an activation f not positive or not differentiable at 0, L' outside 1..10^5."""
    assert main(["run", claim_id, "--set", setting, "--out", str(tmp_path), *COMMON]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1 and "Traceback" not in err
