"""HE-MAN at smoke size: it agrees, and it disagrees with a closed form wrong by 1e-4.

HE-MAN part (i) (eq. (4.6)) is an exact statement about Ltilde, measured by an optimiser; a
wrong closed form must therefore be caught. (HE-T4.2ii: tests/validation/test_claim_optimality.py.)
"""

from icl_verify.validation.cache import ArtefactCache
from icl_verify.validation.claim import evaluate
from icl_verify.validation.claims.he2025.manifold import CLAIM_MANIFOLD, draw_trials
from icl_verify.validation.estimates import AGREES, DISAGREES, worst_verdict
from icl_verify.validation.runtime import Runtime


def test_manifold_agrees_at_smoke_size(at_smoke):
    verdicts = CLAIM_MANIFOLD.verdicts(*at_smoke(CLAIM_MANIFOLD))
    assert set(verdicts.values()) == {AGREES}, verdicts


def test_manifold_disagrees_with_a_slightly_wrong_mu_star(at_smoke):
    params, prediction, measurement = at_smoke(CLAIM_MANIFOLD)
    # mu* off by one part in 1e4 (far above the optimiser's bounds) must be caught.
    scaled = {k: prediction.values[k] * (1 + 1e-4) for k in ("plus_sum", "minus_sum")}
    verdicts = CLAIM_MANIFOLD.verdicts(params, prediction.with_values(**scaled), measurement)
    assert verdicts["plus_sum"] == verdicts["minus_sum"] == DISAGREES


def test_manifold_design_has_every_kind_of_head():
    params = CLAIM_MANIFOLD.presets["smoke"]
    trials = draw_trials(params)
    assert len(trials.signs) == params.n_trials
    for signs in trials.signs:
        assert 2 <= signs.size <= params.H_max
        assert {1, -1} <= set(signs.tolist())
        assert (0 in signs) == (signs.size >= 3)


def test_manifold_measurement_depends_on_the_seed_only_through_the_starts(tmp_path):
    """Another seed changes the optimiser's starts (and the split of mu within a group),
    but not the verdict: only the group sums are determined."""
    params = CLAIM_MANIFOLD.presets["smoke"]
    runtime = Runtime("cpu", 12345, ArtefactCache(tmp_path))
    measurement = CLAIM_MANIFOLD.measure(params, runtime)
    prediction = CLAIM_MANIFOLD.predict(params)
    results = evaluate(CLAIM_MANIFOLD.checks(params), prediction, measurement)
    assert worst_verdict(r.judgement.verdict for r in results) == AGREES
