"""The typed figure data (`figures.data`): each class survives results.json (``to_record``, JSON,
``from_record``) unchanged, and writes the keys results.json held before the classes existed
(spelled out here as the claims wrote them), so stored runs still render."""

import dataclasses
import json

import numpy as np
import pytest
from icl_verify.figures.data import constructions, isotropic, obs_length, sparse_bounds, true_loss
from icl_verify.figures.data import linear_attention_length as length
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
from icl_verify.theory import READINGS, STEP_READINGS
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

def _arrays(*shapes) -> tuple[np.ndarray, ...]:
    return tuple(rng.normal(size=shape) for shape in shapes)


N_GRID, S_GRID, RATIO_D = 4, 3, 2  # CZZ-T5.3's grids: n, s, d of the ratio


def _isotropic() -> isotropic.IsotropicData:
    def risks():
        index = (rng.integers(0, 5, size=N_GRID).astype(float),
                 *(rng.integers(0, 5, size=(N_GRID, 2)).astype(float) for _ in range(2)),
                 rng.integers(0, 5, size=N_GRID).astype(float))  # fmt: skip
        return isotropic.Risks(*_arrays((5, N_GRID), (5, N_GRID)), index=index)

    def tuning(size):
        return isotropic.PregdTuning(*_arrays(*[(size,)] * 4), np.ones((size, 2)))

    shapes = ((RATIO_D,), (RATIO_D,), (RATIO_D,), (N_GRID,), (S_GRID,), (S_GRID,))
    slopes = isotropic.Slopes(*_arrays(*shapes), 0.5, 0.1, 1.0, np.inf, 0.9, 0.2)
    narrow = risks()  # pre-gd's tuned points over n: also the narrow panel's
    tunings = (isotropic.PregdTuning(*_arrays(*[(N_GRID,)] * 4), narrow.index[2]),
               tuning(S_GRID), tuning(S_GRID))  # fmt: skip
    return isotropic.IsotropicData(narrow, risks(), tunings, slopes)


ESTIMATORS, TUNED = ("ols", "ridge", "gd", "pregd", "lasso"), ("ridge", "gd", "pregd", "lasso")
PANEL_KEYS = ("pregd_eta_t_{}", "pregd_eta_t_{}_se", "pregd_s_curvature_{}",
              "pregd_s_curvature_{}_se", "pregd_index_{}")  # fmt: skip
TERMS, SOURCES = ("d4", "d5", "d6", "d7", "cross"), ("same", "independent")
LENGTH_CURVES = ("H1", "H2", "dGD", "dGDfit", "Bayes")
COMPARE, TRAINED = (1, 2), (1, 2, 4)  # HE-OBS3: H compared, H trained (4 drawn only)

CASES |= {
    "isotropic theory": (
        isotropic.IsotropicTheory(*_arrays((N_GRID,), (S_GRID,), (S_GRID,)), 1.0, -1.0,
                                  *_arrays((N_GRID,), (S_GRID,), (S_GRID,)), 2.0, 1.0),
        (),
        ["lasso_rate", "step_budget_beta", "step_budget_appendix", "step_slope_beta",
         "step_slope_appendix", "step_budget_narrow", "reading_theorem", "reading_discussion",
         "reading_slope_theorem", "reading_slope_discussion"],
    ),
    "isotropic": (
        _isotropic(), (),
        sorted({f"{e}_{r}{se}" for r in ("narrow", "wide") for e in ESTIMATORS
                for se in ("", "_se")}
               | {f"{e}_index_{r}" for r in ("narrow", "wide") for e in TUNED}
               | {k.format(p) for p in ("narrow", "step", "reading") for k in PANEL_KEYS}
               | {"pregd_reading", "pregd_reading_se", "reading_slope", "reading_slope_se",
                  "step_slope", "step_slope_se", "step_slope_reading", "step_slope_reading_se",
                  "ratio", "ratio_se", "ratio_baseline_is_ridge", "narrow_baseline_is_ridge"}),
    ),
    "wins theory": (
        sparse_bounds.WinsTheory(_arrays((3,))[0], 2.5, 3.0, *_arrays((3,), (3,), (3,))), (),
        ["bounds_ratio", "trace_condition", "trace_sigma", "margin_over_n2", "margin_over_n",
         "margin_condition"],
    ),
    "wins": (
        sparse_bounds.WinsData(*_arrays(*[(3,)] * 8)), (),
        ["n", "gd_risk", "pregd_risk", "gd_t", "pregd_t", "margin_term_max",
         "margin_term_median", "margin_ratio_max"],
    ),
    "proof theory": (sparse_bounds.ProofTheory(*_arrays((3,), (3,))), (), ["n", "A"]),
    "proof": (
        sparse_bounds.ProofTerms(*_arrays((3,), (5, 2, 3, 2))), (),
        ["n"] + [f"{t}_{s}" for t in TERMS for s in SOURCES],
    ),
    "gd layers": (
        constructions.GdLayersData(*_arrays((6,), (6,)), constructions.Sizes(*_arrays(*[(2,)] * 5)),
                                   *_arrays((4,), (4,), (4,))),
        (),
        ["config", "step", "d", "n", "q", "t", "eta", "bound_steps", "bound_float64",
         "bound_float32"],
    ),
    "true loss theory": (
        true_loss.TrueLossTheory(*_arrays((5,), (2,), (5, 4), (5, 4), (5,), (5,), (5, 4), (5, 4),
                                          (5,)), 0.1, 0.4, *_arrays((3,), (3,))),
        (),
        ["t", "window", "gd_omega", "gd_mu", "gd_loss", "slowed_log_norm", "flow_omega",
         "flow_mu", "flow_loss", "gap_limit", "eta_limit", "path_loss", "path_inside"],
    ),
    "true loss": (
        true_loss.TrueLossData(*_arrays((5,), (5, 4), (5, 4), (5, 4), (5, 4), (5,), (5,), (3,),
                                        (3,), (3,))),
        (),
        ["t", "omega", "mu", "omega_se", "mu_se", "log_norm", "log_norm_se", "loss_t", "loss",
         "loss_se"],
    ),
    "length theory": (
        length.LengthTheory(*_arrays((3,), (3,), (3,)), 43.25, 43.0, 45.0, 100.0,
                            _arrays((3,))[0]),
        (),
        ["lengths", "frozen", "dgd", "argmin", "best_length", "grid_best", "longest",
         "allowance"],
    ),
    "length": (
        length.LengthData(length.LengthModels(*_arrays((3,), (3,), (3,), (2, 3)), 45.0,
                                              *_arrays((2,), (2,), (1,), (2,))),
                          *_arrays((5, 3), (5, 3))),
        (),
        ["lengths", "linear_mean", "linear_se", "linear_members", "measured_argmin",
         "fitted_steps", "fitted_steps_se", "one_head_members", "two_head_members"]
        + [f"{c}_{s}" for c in LENGTH_CURVES for s in ("mean", "se")],
    ),
    "obs3 theory": (obs_length.Obs3Theory(*_arrays((3,), (3,), (3,), (3,)), 11.0), (),
                    ["dgd", "gd", "single", "bayes_sharp", "bayes_uniform"]),
    "obs3": (
        obs_length.Obs3Data(*_arrays((3,), (2,), (2,)), obs_length.shown_heads(COMPARE, TRAINED),
                            *_arrays((3, 2, 3), (3, 2, 3), (2, 2, 3)),
                            obs_length.FixedKernels(*_arrays(*[(3,)] * 4)),
                            *_arrays((1, 3), (1, 3), (2, 2), (2, 1))),
        (COMPARE, TRAINED),
        ["lengths", "eta_eff", "members"]
        + [f"{c}_{s}" for c in ("H1", "H2", "H4", "dGD", "GD", "Bayes", "dGDeff1", "dGDeff2")
           for s in ("mean", "se")]
        + ["pair_mean", "pair_se", "single_mean", "single_se", "bayes_ratio_mean",
           "bayes_ratio_se", "slopes", "bayes_sharp_ratio"],
    ),
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


def test_the_isotropic_readings_are_the_theorys():
    """`figures.data.isotropic` names §7.11's readings as `theory` does (its fields hold one
    bound and one eta t budget per reading)."""
    assert (isotropic.READINGS, isotropic.STEP_READINGS) == (READINGS, STEP_READINGS)


def test_obs3_shows_the_compared_heads_first_then_the_others_ascending():
    assert obs_length.shown_heads((1, 4), (8, 1, 2, 4, 2)) == (1, 4, 2, 8)
