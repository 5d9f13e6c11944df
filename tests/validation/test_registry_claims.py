"""Every registered claim at smoke size, from one run of the whole registry.

For each claim (found by the registry, so a new claim is covered without editing
this file): it runs; its record survives the round trip through results.json (the
parameters come back as the claim's parameter class, equal to the smoke preset); the
stored verdict is what its rules give on the stored numbers; its figure is redrawn
from the stored record alone; and its declared wrong prediction comes out `disagrees` --
except where the record is outside the paper's regime (a trained Chen et al. claim whose gate
is shut, ``regime_reached`` 0: every value in range reads inconclusive by design), where a
wrong prediction inside the range is inconclusive too; such a claim's rules show their power
against it on in-regime numbers in its own tests (tests/validation/test_claims_trained_encoders.py).
"""

import dataclasses
import json

import matplotlib.pyplot as plt
import pytest
from icl_verify.validation.claim import evaluate
from icl_verify.validation.estimates import DISAGREES, INCONCLUSIVE, worst_verdict
from icl_verify.validation.records import ClaimRecord, load_run
from icl_verify.validation.registry import all_claims
from icl_verify.validation.runner import run_claims

CLAIMS = all_claims()
pytestmark = pytest.mark.heavy  # every claim at smoke


@pytest.fixture(scope="module")
def stored_run(tmp_path_factory, smoke_cache):
    """All claims at smoke size, then read back from results.json: (run folder, stored ids).
    The cache is the session's of runs at seed 0 (`smoke_cache`), shared with the claims'
    own tests: a training one of them made is read, as a second claim of one run reads it."""
    out = tmp_path_factory.mktemp("registry")
    run_claims(CLAIMS, preset="smoke", out=out, run_id="smoke", seed=0, device="cpu",
               cache=smoke_cache)  # fmt: skip
    run_dir = out / "smoke"
    return run_dir, {claim.id: claim for claim in load_run(run_dir).claims}


@pytest.mark.parametrize("claim", CLAIMS, ids=[claim.id for claim in CLAIMS])
def test_claim_runs_round_trips_redraws_and_rejects_its_wrong_prediction(claim, stored_run):
    run_dir, stored = stored_run
    record = stored[claim.id]
    assert ClaimRecord.from_json(json.loads(json.dumps(dataclasses.asdict(record)))) == record

    params = record.restored_params(claim)
    assert params == claim.presets["smoke"] and record.overrides == {}
    prediction, measurement = record.restored_prediction(), record.restored_measurement()
    results = evaluate(claim.checks(params), prediction, measurement)
    assert worst_verdict(r.judgement.verdict for r in results) == record.verdict
    assert {r.check.quantity for r in results} == {c.quantity for c in record.checks}

    figures = claim.draw(params, prediction, measurement)
    assert len(figures) == len(claim.figures) == len(record.figures)
    for k, figure in enumerate(figures):
        path = run_dir / "redrawn" / f"{claim.id}-{k}.png"
        path.parent.mkdir(exist_ok=True)
        figure.savefig(path)
        plt.close(figure)
        assert path.stat().st_size > 10_000  # a drawn figure, not an empty canvas

    wrong = evaluate(claim.checks(params), claim.wrong(params, prediction), measurement)
    outside = measurement.figure_data.get("regime_reached") == 0.0
    expected = {DISAGREES, INCONCLUSIVE} if outside else {DISAGREES}
    assert worst_verdict(r.judgement.verdict for r in wrong) in expected


def test_every_claim_has_three_presets_of_its_own_parameter_class():
    for claim in CLAIMS:
        assert tuple(claim.presets) == ("smoke", "quick", "paper")
        assert all(type(p) is claim.params for p in claim.presets.values())
