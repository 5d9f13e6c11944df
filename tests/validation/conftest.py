"""Fixtures shared by the claim tests."""

import pytest
from icl_verify.validation.cache import ArtefactCache
from icl_verify.validation.runtime import Runtime, derived_seed


@pytest.fixture(scope="session")
def at_smoke(tmp_path_factory):
    """`at_smoke(claim)` -> (params, prediction, measurement) at the smoke preset.

    Each claim is measured once per test session, with the seed and a cache of its own
    that the runner would give it at run seed 0.
    """
    done = {}

    def measured(claim):
        if claim.id not in done:
            params = claim.presets["smoke"]
            cache = ArtefactCache(tmp_path_factory.mktemp("cache"))
            runtime = Runtime("cpu", derived_seed(0, claim.id), cache)
            done[claim.id] = (params, claim.predict(params), claim.measure(params, runtime))
        return done[claim.id]

    return measured
