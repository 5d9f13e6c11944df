"""Fixtures shared by the claim tests."""

import os

import pytest
from icl_verify.validation.cache import ArtefactCache
from icl_verify.validation.runtime import Runtime, derived_seed


@pytest.fixture(scope="session")
def smoke_cache(tmp_path_factory):
    """The artefact cache folder of this test session's runs at run seed 0, as one run's
    ``OUT/cache`` is to its claims: one folder for every xdist worker of the session (the
    session's base folder, above each worker's own; a new one each session), so a training or
    a solve that several claims or runs read is made once. Entries are locked: a process
    asking for one that another is making waits, then reads it (`ArtefactCache`;
    tests/validation/test_executors.py), and a result is the same made or read."""
    base = tmp_path_factory.getbasetemp()
    folder = (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / "smoke-cache"
    folder.mkdir(exist_ok=True)
    return folder


@pytest.fixture(scope="session")
def at_smoke(smoke_cache):
    """`at_smoke(claim)` -> (params, prediction, measurement) at the smoke preset.

    Each claim is measured once per test session (per xdist worker), with the seed the runner
    would give it at run seed 0 and the session's cache of those runs (`smoke_cache`).
    """
    done = {}

    def measured(claim):
        if claim.id not in done:
            params = claim.presets["smoke"]
            runtime = Runtime("cpu", derived_seed(0, claim.id), ArtefactCache(smoke_cache))
            done[claim.id] = (params, claim.predict(params), claim.measure(params, runtime))
        return done[claim.id]

    return measured
