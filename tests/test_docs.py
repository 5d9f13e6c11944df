"""The documentation site's generated pages and the tutorial: every claim has a page, the
committed verdicts cover the registry, derivations render as mathematics, and the tutorial
(a jupytext percent script) runs at the smoke preset, so none of them can rot."""

import json
import os
import subprocess
import sys
from pathlib import Path

from icl_verify.validation import site
from icl_verify.validation.registry import all_claims

ROOT = Path(__file__).resolve().parents[1]
SUMMARY = ROOT / "docs" / "verdicts-quick.json"


def test_the_committed_verdicts_cover_every_claim():
    # regenerate after `make verify`: site.write_verdict_summary(RUN_DIR, SUMMARY)
    stored = json.loads(SUMMARY.read_text())["claims"]
    assert set(stored) == {claim.id for claim in all_claims()}


def test_every_claim_has_a_page_with_its_rules_parameters_and_verdict():
    latest = site.Verdicts.from_summary(SUMMARY)
    for claim in all_claims():
        page = site.claim_page(claim, latest, {claim.id: ["figures/x.png"]})
        assert page.startswith(f"# {claim.id}\n") and "## Rules" in page
        assert "| parameter | type | smoke | quick | paper |" in page
        assert f"**{latest.claims[claim.id]['verdict']}**" in page
        assert "![" in page and "*Why this rule:*" in page
    index = site.claims_index(latest)
    assert all(f"[{claim.id}]({claim.id}.md)" in index for claim in all_claims())


def test_the_findings_page_lists_exactly_the_claims_that_disagree():
    latest = site.Verdicts.from_summary(SUMMARY)
    page = site.findings_page(latest)
    disagree = {i for i, entry in latest.claims.items() if entry["verdict"] == "disagrees"}
    listed = set(__import__("re").findall(r"^## \[([A-Z0-9.\-]+)\]", page, flags=8))
    assert listed == disagree and disagree


def test_a_derivation_page_is_mathematics():
    page = site.derivation_page("manifold")
    assert page.count("$$") >= 2 * 5 and "\\sinh" in page


def test_the_tutorial_runs_at_smoke(tmp_path):
    env = {**os.environ, "TUTORIAL_PRESET": "smoke", "TUTORIAL_OUT": str(tmp_path),
           "MPLBACKEND": "Agg"}  # fmt: skip
    done = subprocess.run([sys.executable, str(ROOT / "docs" / "tutorial.py")], env=env,
                          capture_output=True, text=True, timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert (tmp_path / "two-head-portrait.png").is_file()
    assert list(tmp_path.glob("api-sweep-HE-T4.2i-*/figures/HE-T4.2i-validity-map.png"))
