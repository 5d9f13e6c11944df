# %% [markdown]
# # A formula pinned in your own pytest suite
#
# `icl_verify.testing.assert_claim` runs a claim and fails as a plain `AssertionError`,
# listing every check that did not agree, so a result a project relies on becomes a
# regression test. The file below pins two claims at a setting of its own: HE-T4.2ii (the
# minimum of L̃ over homogeneous KQ scales, Theorem 4.2(ii) of He et al.) at d = 8, and
# HE-4.12 (a single head's optimum ω* = 1/√d), one of the statements the simulation
# contradicts: its test shows what a failure reads like.

# %%
import os
import subprocess
import sys
import tempfile
from pathlib import Path

PRESET = os.environ.get("TUTORIAL_PRESET", "quick")
OUT = Path(os.environ.get("TUTORIAL_OUT") or tempfile.mkdtemp(prefix="icl-verify-example-"))

test_file = OUT / "test_my_setting.py"
test_file.write_text(f'''
from icl_verify.testing import assert_claim


def test_the_homogeneous_minimum_at_d_8():
    assert_claim("HE-T4.2ii", preset="{PRESET}", d=8)


def test_the_single_head_optimum_at_d_8():
    assert_claim("HE-4.12", preset="{PRESET}", d=8)
''')
print(f"wrote {test_file.name}")

# %% [markdown]
# pytest runs it as any other test file:

# %%
tests = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                        "--tb=short", "--color=no", "--rootdir", str(OUT), str(test_file)],
                       capture_output=True, text=True, cwd=OUT)  # fmt: skip
print(tests.stdout)
