"""The distribution installs one top-level import package, `icl_verify`, holding every module.

Builds the wheel (no dependencies, no network) and reads its file list: the only
top-level names are `icl_verify/` and its dist-info, and every Python file of the
five layer folders is in it under `icl_verify/<layer>/`, stubs too (`numerics` reads its own
at import).
"""

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import icl_verify

ROOT = Path(__file__).resolve().parents[1]


def test_wheel_holds_exactly_the_icl_verify_package(tmp_path):
    # Built from a copy: an in-tree build/ folder would outlive deleted modules.
    source = tmp_path / "source"
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(
        ".git", ".venv", "build", "results", "*.egg-info", "__pycache__", ".*cache"))  # fmt: skip
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
         "-w", str(tmp_path), str(source)],
        check=True, capture_output=True, timeout=300,
    )  # fmt: skip
    (wheel,) = tmp_path.glob("icl_verify-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    top = {name.split("/")[0] for name in names}
    assert {t for t in top if not t.endswith(".dist-info")} == {"icl_verify"}
    expected = {f"icl_verify/{p.name}" for p in (ROOT / "icl_verify").glob("*.py")}
    for layer in icl_verify.SUBPACKAGES:
        sources = [*(ROOT / layer).rglob("*.py"), *(ROOT / layer).rglob("*.pyi")]  # stubs too
        expected |= {f"icl_verify/{p.relative_to(ROOT).as_posix()}" for p in sources}
    assert expected - set(names) == set()
    (top_level,) = [n for n in names if n.endswith("top_level.txt")]
    assert zipfile.ZipFile(wheel).read(top_level).decode().split() == ["icl_verify"]
