"""The typed figure data of Chen et al.'s trained encoders (`figures.data.trained_encoders`):
each class survives results.json (``to_record``, JSON, ``from_record``) unchanged, and writes
the keys results.json held before the classes existed, so stored runs still render."""

import dataclasses
import json

import numpy as np
import pytest
from icl_verify.figures.data.trained_encoders import (
    DenseData,
    DepthGates,
    Footnote,
    Gain,
    HeadMap,
    HeadsData,
    ImportanceData,
    Judged,
    ProbePaths,
    Probes,
    PruneData,
    PrunedSetting,
    Regime,
    RiskCurves,
    RiskScale,
    Settings,
)
from icl_verify.validation.records import to_json

LAYERS, HEADS, SIGMAS, N = (2, 3), (1, 4), 2, 3
GATE = ("risk", "ridge", "gap", "gap_se", "reached")  # a gate's stored numbers
rng = np.random.default_rng(0)


def _gate(reached: bool) -> Regime:
    return Regime(*rng.normal(size=4).tolist(), reached=reached)


def _curves() -> RiskCurves:
    shape = (len(LAYERS), len(HEADS), SIGMAS, N)
    return RiskCurves(np.array([4.0, 10.0, 16.0]), LAYERS, HEADS, rng.normal(size=shape),
                      rng.normal(size=shape), rng.normal(size=(3, SIGMAS, N)),
                      rng.normal(size=(3, SIGMAS, N)))  # fmt: skip


def _gates() -> DepthGates:
    return DepthGates(LAYERS, (_gate(True), _gate(False)))


def _pruned(h: int, L: int) -> PrunedSetting:
    probes = tuple(Probes(rng.normal(size=L + 1), rng.normal(size=L + 1),
                          rng.normal(size=(SIGMAS, L + 1))) for _ in range(3))  # fmt: skip
    return PrunedSetting(h, L, rng.integers(0, h, size=(2, L, h)), probes)


def _head_map(h: int, L: int) -> HeadMap:
    return HeadMap(*(rng.normal(size=s) for s in ((2, L, h), (2, L, h), (2, L, h), (2,),
                                                  (2, L), (L, h))), pattern_share=0.5)  # fmt: skip


# (the object, the arguments from_record takes, the record keys results.json held before)
CASES = {
    "scale": (RiskScale(4.0), (), ["null_risk"]),
    "heads": (
        HeadsData(_gates(), _curves()), (LAYERS, HEADS),
        ["regime_reached"]
        + [f"L{L}_regime_{f}" for L in LAYERS for f in GATE]
        + ["n"] + [f"L{L}_h{h}_{s}" for L in LAYERS for h in HEADS for s in ("mean", "se")]
        + [f"{b}_{s}" for b in ("ols", "ridge", "lasso") for s in ("mean", "se")],
    ),
    "dense": (
        DenseData(_curves(), tuple(Gain(*rng.normal(size=4).tolist()) for _ in LAYERS),
                  (_gate(True), _gate(True)), Judged(LAYERS, (True, False))),
        (LAYERS, HEADS),
        ["n"] + [f"L{L}_h{h}_{s}" for L in LAYERS for h in HEADS for s in ("mean", "se")]
        + [f"{b}_{s}" for b in ("ols", "ridge", "lasso") for s in ("mean", "se")]
        + [f"L{L}_gain_{g}" for L in LAYERS for g in ("dense", "dense_se", "sparse", "sparse_se")]
        + [f"L{L}_sparse_regime_{f}" for L in LAYERS for f in GATE]
        + [f"L{L}_regime_reached" for L in LAYERS] + ["regime_reached"],
    ),
    "prune": (
        PruneData(_gates(), tuple(_pruned(4, L) for L in LAYERS)), ([(4, L) for L in LAYERS],),
        ["regime_reached"]
        + [f"L{L}_regime_{f}" for L in LAYERS for f in GATE]
        + [f"h4_L{L}_kept" for L in LAYERS]
        + [f"h4_L{L}_{m}_{s}" for L in LAYERS for m in ("pruned", "unpruned", "one_head")
           for s in ("mean", "se", "per_sigma")],
    ),
    "pprobe": (
        ProbePaths(_gate(False), np.arange(4.0), HEADS, rng.normal(size=(2, SIGMAS, 4)),
                   rng.normal(size=(2, SIGMAS, 4)), rng.normal(size=(2, 2))),
        (HEADS,),
        [f"regime_{f}" for f in GATE] + ["steps"]
        + [f"h{h}_{s}" for h in HEADS for s in ("mean", "se", "rate")],
    ),
    "settings": (
        Settings(np.array([0.0, 0.4]), np.array([4.0, 4.0]), np.array([2.0, 3.0])), (),
        ["setting_zeta", "setting_heads", "setting_layers"],
    ),
    "importance": (
        ImportanceData((_head_map(4, 2), _head_map(4, 3)), (_gate(True), _gate(False))), (2,),
        [f"s{i}_{f}" for i in range(2) for f in ("weights", "delta", "delta_se", "intact",
                                                 "effective", "sorted", "pattern_share")]
        + [f"s{i}_regime_{f}" for i in range(2) for f in GATE] + ["regime_reached"],
    ),
    "footnote": (Footnote(4, 3, 1.5, 1.2, 0.1), (1,),
                 [f"footnote1_{f}" for f in ("heads", "layers", "risk", "ridge", "gap_se")]),
}  # fmt: skip


def _assert_same(a, b):
    """Dataclasses field by field, arrays by value and shape, the rest by equality and type."""
    if dataclasses.is_dataclass(a):
        assert type(a) is type(b)
        for field in dataclasses.fields(a):
            _assert_same(getattr(a, field.name), getattr(b, field.name))
    elif isinstance(a, np.ndarray):
        np.testing.assert_array_equal(a, b, strict=False)
        assert np.shape(a) == np.shape(b)
    elif isinstance(a, tuple):
        assert len(a) == len(b)
        for x, y in zip(a, b, strict=True):
            _assert_same(x, y)
    else:
        assert a == b and type(a) is type(b), (a, b)


@pytest.mark.parametrize("case", CASES)
def test_a_record_survives_results_json_and_keeps_the_stored_keys(case):
    item, args, keys = CASES[case]
    record = item.to_record(*args) if isinstance(item, Footnote) else item.to_record()
    assert sorted(record) == sorted(keys)
    stored = json.loads(json.dumps(to_json(record)))  # as results.json holds it
    _assert_same(type(item).from_record(stored, *args), item)


def test_labels_name_the_fields_that_vary():
    settings = Settings(np.array([0.0, 0.0]), np.array([4.0, 8.0]), np.array([3.0, 4.0]))
    assert settings.labels() == ["h = 4, L = 3", "h = 8, L = 4"]
    same = Settings(np.array([0.0]), np.array([4.0]), np.array([3.0]))
    assert same.labels() == ["h = 4"]  # nothing varies: h
