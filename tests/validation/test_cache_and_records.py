"""The artefact cache (keyed by the full configuration) and the versioned results schema."""

import functools
import json

import numpy as np
import pytest
from icl_verify.validation.cache import (
    ArtefactCache,
    canonical_json,
    config_key,
    producers,
)
from icl_verify.validation.records import SCHEMA_VERSION, RunRecord, load_run
from icl_verify.validation.runtime import Runtime, derived_seed

from icl_verify._files import write_atomic


def test_config_key_ignores_key_order_and_sees_every_value():
    key = functools.partial(config_key, "trained-ensemble")
    assert key({"a": 1, "b": [1.0, 2.0]}) == key({"b": [1.0, 2.0], "a": 1})
    assert key({"a": 1}) != key({"a": 2})
    assert key({"a": 1}) != config_key("two-head-train", {"a": 1})
    assert key({"a": np.arange(2.0)}) == key({"a": [0.0, 1.0]})
    with pytest.raises(ValueError):
        canonical_json({"a": float("nan")})  # NaN has no canonical JSON form


def test_cached_arrays_and_json_are_computed_once(tmp_path):
    cache = ArtefactCache(tmp_path)
    calls = []

    def arrays():
        calls.append("arrays")
        return {"w": np.linspace(0, 1, 5)}

    def document():
        calls.append("json")
        return {"loss": 0.25, "steps": [1, 2]}

    for _ in range(2):
        stored = cache.cached("isotropic-setting", {"n": 5}, arrays)
        assert stored["w"].tolist() == [0, 0.25, 0.5, 0.75, 1]
        loss = cache.cached("random-init-stages", {"n": 5}, document)
        assert loss == {"loss": 0.25, "steps": [1, 2]}
    assert calls == ["arrays", "json"]
    cache.cached("isotropic-setting", {"n": 6}, arrays)  # another configuration: computed again
    assert calls == ["arrays", "json", "arrays"]
    folder = cache.directory("isotropic-setting", {"n": 5})
    assert folder.name == config_key("isotropic-setting", {"n": 5})
    stored = json.loads((folder / "config.json").read_text())
    assert (stored["name"], stored["config"]) == ("isotropic-setting", {"n": 5})
    assert stored["code"]["producer"] == producers()["isotropic-setting"].version


def test_a_failed_computation_leaves_nothing_cached(tmp_path):
    cache = ArtefactCache(tmp_path)

    def broken():
        raise RuntimeError("killed")

    with pytest.raises(RuntimeError):
        cache.cached("true-loss-train", {}, broken)
    assert cache.cached("true-loss-train", {}, lambda: {"ok": 1}) == {"ok": 1}


def test_write_atomic_replaces_and_leaves_no_temporary(tmp_path):
    path = tmp_path / "sub" / "f.json"
    write_atomic(path, "one")
    write_atomic(path, b"two")
    assert path.read_text() == "two"
    assert [p.name for p in path.parent.iterdir()] == ["f.json"]


def test_runtime_streams_are_reproducible_and_distinct(tmp_path):
    runtime = Runtime("cpu", derived_seed(0, "HE-MAN"), ArtefactCache(tmp_path))
    a, b = runtime.rng("starts").random(3), runtime.rng("starts").random(3)
    assert np.array_equal(a, b)
    assert not np.array_equal(a, runtime.rng("other").random(3))
    assert derived_seed(0, "HE-MAN") != derived_seed(0, "HE-T4.2ii")
    assert list(runtime.progress([1, 2], "no bar")) == [1, 2]


def test_run_record_round_trips_and_refuses_other_schemas(tmp_path):
    record = RunRecord.start("r1", "smoke", 7, "cpu")
    record.save(tmp_path)
    loaded = load_run(tmp_path)
    assert loaded == record
    assert loaded.environment["python"] and "git_commit" in loaded.environment
    data = json.loads((tmp_path / "results.json").read_text())
    assert data["schema_version"] == SCHEMA_VERSION
    data["schema_version"] = SCHEMA_VERSION + 1
    (tmp_path / "results.json").write_text(json.dumps(data))
    with pytest.raises(ValueError, match="schema_version must be"):
        load_run(tmp_path)
    with pytest.raises(ValueError, match="must contain results.json"):
        load_run(tmp_path / "missing")


def test_the_key_holds_the_version_of_the_code_that_makes_the_artefact(monkeypatch):
    """A producer's new version, or a new package version, gives a new entry: the artefacts of
    the old code are never read."""
    import icl_verify.validation.cache as cache

    import icl_verify

    before = config_key("trained-ensemble", {"d": 5})
    bumped = dict(cache.producers())
    bumped["trained-ensemble"] = cache.Producer(2, "icl_verify.numerics._core.ensemble")
    with monkeypatch.context() as patched:
        patched.setattr(cache, "producers", lambda: bumped)
        assert config_key("trained-ensemble", {"d": 5}) != before
    with monkeypatch.context() as patched:
        patched.setattr(icl_verify, "__version__", "99.0")
        assert config_key("trained-ensemble", {"d": 5}) != before
    assert config_key("trained-ensemble", {"d": 5}) == before
