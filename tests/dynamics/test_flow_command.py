"""`icl-verify flow two-head` end to end: figure written, exit codes, one-line errors."""

import pytest
from icl_verify.dynamics import TwoHeadPhases
from icl_verify.validation.cli import main


@pytest.mark.parametrize("series", [False, True])
def test_flow_writes_a_png_and_prints_the_phase_features_without_verdicts(tmp_path, capsys, series):
    """Every feature of `TwoHeadPhases` by its key with its value; the verdicts are the claims'
    (no "agrees"/"DISAGREES" here), named on the last line."""
    out = tmp_path / "flow.png"
    argv = ["flow", "two-head", "--d", "5", "--L", "40", "--sigma2", "0.1", "--t-end", "1e5"]
    assert main([*argv, "--out", str(out), *(["--series"] if series else [])]) == 0
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    lines = capsys.readouterr().out.splitlines()
    rows = {line.split()[0]: line.split()[1] for line in lines[1 : 1 + len(TwoHeadPhases.FEATURES)]}
    assert list(rows) == list(TwoHeadPhases.FEATURES)
    assert float(rows["late_slope_omega"]) == pytest.approx(-1 / 6, abs=0.01)
    assert not any("agrees" in line.lower() for line in lines)
    assert "HE-B-PHASE3" in lines[-2] and lines[-1] == f"wrote {out}"


@pytest.mark.parametrize(
    ("flag", "value", "message"),
    [
        ("--d", "0", "--d must be an integer in [1, 400], got '0'"),
        ("--d", "1000000", "--d must be an integer in [1, 400], got '1000000'"),
        ("--L", "four", "--L must be an integer in [1, 100000], got 'four'"),
        ("--sigma2", "-1", "--sigma2 must be a number in [0, 1e+12], got '-1'"),
        ("--sigma2", "1e300", "--sigma2 must be a number in [0, 1e+12], got '1e300'"),
        ("--eps", "0", "--eps must be a number in (0, 0.1], got '0'"),
        ("--t-end", "10", "--t-end must be a number in [10000, 1e+09], got '10'"),
    ],
)
def test_bad_input_exits_2_with_one_line(tmp_path, capsys, flag, value, message):
    out = tmp_path / "x.png"
    assert main(["flow", "two-head", flag, value, "--out", str(out)]) == 2
    error = capsys.readouterr().err
    assert error.strip().endswith(message) and error.count("\n") == 1
    assert not out.exists()


def test_out_must_be_a_png_in_an_existing_directory(tmp_path, capsys):
    assert main(["flow", "two-head", "--out", str(tmp_path / "x.pdf")]) == 2
    assert main(["flow", "two-head", "--out", str(tmp_path / "missing" / "x.png")]) == 2
