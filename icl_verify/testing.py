"""Claims as regression tests in a researcher's own test suite.

``assert_claim("HE-P4.1", preset="smoke", d=10)`` runs the claim (`icl_verify.run`) and
fails, as a plain ``AssertionError`` that pytest shows, with every check that did not agree:
its quantity, prediction, measurement, rule and verdict. A formula a researcher derives and
registers as a claim of their own package (entry point ``icl_verify.claims``, see
`icl_verify.validation.registry`) is pinned the same way.

    # test_my_setting.py
    from icl_verify.testing import assert_claim

    def test_kernel_sum_bound_holds_at_d_10():
        assert_claim("HE-P4.1", preset="smoke", d=10)

Runs go to a temporary folder unless ``out`` is given; pass one (e.g. pytest's
``tmp_path_factory.getbasetemp()``) to share the trained-model cache between tests.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

__all__ = ["assert_claim"]


def assert_claim(
    claim_id: str,
    preset: str = "smoke",
    *,
    allow_inconclusive: bool = False,
    out: str | Path | None = None,
    **params,
):
    """Run ``claim_id`` at ``preset`` with ``params`` (`icl_verify.run`); AssertionError listing
    the checks that disagree (and those that are inconclusive, unless ``allow_inconclusive``).
    Returns the `ClaimResult` when it passes. Bad parameters raise ValueError, as `run` does.

    Without ``out`` the run goes into a temporary folder, removed when the claim passes (the
    returned result holds its numbers; its figures are redrawn by ``figure()``) and kept when
    it fails, for the report its message names.

    >>> result = assert_claim("HE-T4.2ii")
    >>> result.verdict
    'agrees'
    >>> assert_claim("HE-C-SOFTMAXNORM", samples=1)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    icl_verify.validation.params.ParameterError: HE-C-SOFTMAXNORM: samples must be ...
    """
    from icl_verify.validation.api import run
    from icl_verify.validation.records import value_text

    folder = tempfile.mkdtemp(prefix="icl-verify-") if out is None else out
    try:
        result = run(claim_id, preset, out=folder, **params)
    except BaseException:
        if out is None:
            shutil.rmtree(folder, ignore_errors=True)
        raise
    failing = {"disagrees"} | (set() if allow_inconclusive else {"inconclusive"})
    bad = [check for check in result.checks if check.verdict in failing]
    if bad:
        lines = [f"{claim_id} at preset {preset!r} {dict(params) or ''}: {result.verdict}"]
        lines += [
            f"  {check.verdict}: {check.label}: predicted {value_text(check.predicted)}, measured "
            f"{value_text(check.measured)} ± {value_text(check.error)} ({check.rule})"
            for check in bad
        ]
        lines.append(f"  report: {result.run_dir / 'report.md'}")
        raise AssertionError("\n".join(lines))
    if out is None:
        shutil.rmtree(folder, ignore_errors=True)
    return result

