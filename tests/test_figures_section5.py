"""Figures of HE-5.1-* and HE-5.2-ACT (`figures.linear_attention`, `figures.activations`).

The figures draw stored numbers only, so they are fed synthetic `figure_data` of the claims'
shapes (d = 5, L = 40, sigma2 = 0.1: GD and debiased-GD risks from the closed forms of
reference §HE-4.3-RISK, the frozen linear-attention risk of §HE-5.1-LENGTH), passed through
results.json storage (`ClaimRecord.restored_*`: lists back as arrays, NaN kept). The tests
check that what a reader compares is what was stored: the theory lines sit at the stored
values, the legends name exact vs measured, and an activation without a paired member says
so instead of drawing.
"""

import json
from types import SimpleNamespace

import matplotlib.pyplot as plt
import numpy as np
import pytest
from icl_verify.figures import activations, linear_attention
from icl_verify.figures.data.activations import (
    ActivationData,
    ActivationRuns,
    ActivationTheory,
    PairedCurves,
)
from icl_verify.figures.data.linear_attention_length import (
    CURVES,
    LengthData,
    LengthModels,
    LengthTheory,
)
from icl_verify.validation.estimates import Estimate, Measurement, Prediction
from icl_verify.validation.records import ClaimRecord, estimate_json, to_json

d, L, SIGMA2 = 5, 40, 0.1
DEFF = d * (1 + SIGMA2)  # D = d (1 + sigma^2) of §HE-4.3-RISK
ETA_GD, ETA_DGD = L / (L + DEFF + 1), L / (L + DEFF)
LENGTHS = np.arange(10, 101, 5, dtype=float)  # (n,)
TRAINING = dict(d=d, L=L, sigma2=SIGMA2, steps=10_000, lr=3e-3, batch=256)
SPECS = ("softmax", "tanh", "elu:0.5", "quadratic:1")
A_F = np.array([1.0, 1.0, 0.5, 2.0])


def _dgd_risk(eta, lengths):
    """R_dGD(eta) at prompt length L' (reference §HE-4.3-RISK)."""
    n = np.asarray(lengths, dtype=float)
    return 1 + SIGMA2 - 2 * eta * (n - 1) / n + eta**2 * (n - 1) * (n + DEFF) / n**2


def _stored(prediction: Prediction, measurement: Measurement):
    """The prediction and measurement as a report redraws them from results.json."""
    record = ClaimRecord(
        id="X",
        source="",
        statement="",
        params={},
        checks=(),
        verdict="",
        seconds=0.0,
        figures=(),
        device="cpu",
        prediction={"values": {}, "figure_data": to_json(dict(prediction.figure_data))},
        measurement={
            "values": {k: estimate_json(v) for k, v in measurement.values.items()},
            "figure_data": to_json(dict(measurement.figure_data)),
        },
    )
    record = ClaimRecord.from_json(json.loads(json.dumps(to_json(record.__dict__))))
    return record.restored_prediction(), record.restored_measurement()


def lin_inputs(members=3, n_logs=401, seed=0):
    rng = np.random.default_rng(seed)
    params = SimpleNamespace(**TRAINING, step_atol=0.01, n_prompts=65_536, linear_members=members)
    risk = 1 + SIGMA2 - 2 * ETA_GD + ETA_GD**2 * (L + DEFF + 1) / L  # R_GD(eta*)
    KQ = 0.02 * rng.normal(size=(members, d + 1, d + 1))  # (E, D, D)
    KQ[:, :d, :d] += 0.5 * np.eye(d)
    OV = 0.02 * rng.normal(size=(members, d + 1, d + 1))  # (E, D, D)
    OV[:, -1, -1] = ETA_GD / 0.5
    steps = np.arange(n_logs) * 25.0  # (n,)
    rise = 1 - np.exp(-steps[:, None] / rng.uniform(300, 900, members))  # (n, E)
    history = ETA_GD * rise + 0.003 * rng.normal(size=(n_logs, members))
    prediction = Prediction({}, {"eta_gd": ETA_GD, "risk_gd": risk})
    measurement = Measurement(
        {
            "risk": Estimate(risk + 0.002 * rng.normal(size=members), np.full(members, 0.0015)),
            "step": Estimate(history[-1], np.full(members, 0.004)),
        },
        {"log_steps": steps, "step_history": history, "KQ": KQ, "OV": OV},
    )
    return params, *_stored(prediction, measurement)


def pair_inputs():
    params = SimpleNamespace(D=6, L=40, n_prompts=64)
    eps = np.geomspace(3e-2, 1e-3, 6)  # (n,), decreasing as in the claim
    centring = 0.37
    prediction = Prediction({}, {"centring_norm": np.array([0.0, centring])})
    measurement = Measurement(
        {"slope": Estimate([2.001, 1.998], [0.002, 0.003])},
        {
            "eps": eps,
            "residual_centred": 0.8 * eps**2,
            "residual_uncentred": 1.9 * eps**2,
            "gap_uncentred": centring + 1.9 * eps**2,
        },
    )
    return params, *_stored(prediction, measurement)


def length_inputs(seed=0):
    rng = np.random.default_rng(seed)
    params = SimpleNamespace(**TRAINING, linear_members=3, n_prompts=16_384)
    frozen = 1 + SIGMA2 - LENGTHS * (2 * L + DEFF + 1 - LENGTHS) / (L + DEFF + 1) ** 2
    dgd = _dgd_risk(ETA_DGD, LENGTHS)
    se = 0.004 * np.ones_like(LENGTHS)
    curves = {  # as `CURVES` orders them
        "H1": 1.3 * _dgd_risk(0.8, LENGTHS),
        "H2": 1.01 * _dgd_risk(0.897, LENGTHS),
        "dGD": dgd,
        "dGDfit": _dgd_risk(0.897, LENGTHS),
        "Bayes": SIGMA2 + 0.5 * d / (LENGTHS + d),
    }
    assert tuple(curves) == CURVES
    models = LengthModels(
        lengths=LENGTHS,
        linear_mean=frozen + se * rng.normal(size=LENGTHS.size),
        linear_se=se,
        linear_members=frozen * np.array([0.97, 1.0, 1.03])[:, None],  # (E, n)
        measured_argmin=45.0,
        fitted_steps=np.array([0.893, 0.901]),  # the paired two-head seeds': mean 0.897
        fitted_steps_se=np.array([0.002, 0.002]),
        one_head_members=np.array([0.0, 1.0]),
        two_head_members=np.array([2.0, 5.0]),
    )
    means = np.array([curve + se * rng.normal(size=LENGTHS.size) for curve in curves.values()])
    data = LengthData(models, means, np.tile(se, (len(CURVES), 1)))
    theory = LengthTheory(LENGTHS, frozen, dgd, argmin=L + (DEFF + 1) / 2, best_length=43.0,
                          grid_best=45.0, longest=100.0,
                          allowance=np.zeros(LENGTHS.size))  # fmt: skip
    prediction = Prediction({}, theory.to_record())
    return params, *_stored(prediction, Measurement({}, data.to_record()))


def act_inputs(unpaired=(3,), seeds=3, n_logs=201, seed=0, a_f=A_F):
    """Synthetic HE-5.2-ACT data; activations in `unpaired` have no paired member."""
    rng = np.random.default_rng(seed)
    params = SimpleNamespace(
        **TRAINING,
        activations=SPECS,
        seeds=seeds,
        n_prompts=16_384,
        kernel_length=400,
        kernel_prompts=65_536,
        omega_max=0.3,
        dgd_rtol=0.05,
    )
    omegas = np.array([0.1, 0.2, 0.3])  # (n_omega,)
    kernel = a_f[:, None] * (1 - np.array([0.1, 0.4, 0.3, 1.5])[:, None] * omegas**2)
    steps = np.arange(n_logs) * 50.0  # (n,)
    eta_fit, table = np.full(len(SPECS), np.nan), np.full((len(SPECS), 3), np.nan)
    runs, curves = [], []
    for a in range(len(SPECS)):
        paired = a not in unpaired
        omega, mu = 0.13 / A_F[a] ** 0.5, 3.4 / A_F[a] ** 0.5
        signs = np.array([1.0, -1.0 if paired else 1.0])
        grow = 1 - np.exp(-steps / 400)[:, None, None]  # (n, 1, 1)
        KQ = np.zeros((2, d + 1, d + 1))  # (2, D, D)
        KQ[:, :d, :d] = omega * np.eye(d) * signs[:, None, None]
        OV = np.zeros((2, d + 1, d + 1))  # (2, D, D)
        OV[:, -1, -1] = mu * signs
        runs.append(ActivationRuns(
            paired_count=2 * paired,
            omega_history=omega * signs * grow * rng.uniform(0.8, 1.2, (seeds, 2)),
            mu_history=mu * signs * grow * rng.uniform(0.8, 1.2, (seeds, 2)),
            KQ=KQ, OV=OV, shown=a % seeds,
        ))  # fmt: skip
        curves.append(None)
        if paired:
            eta_fit[a] = ETA_DGD - 0.01 * a
            table[a] = omega, mu, a % seeds
            dgd = _dgd_risk(eta_fit[a], LENGTHS)
            curves[a] = PairedCurves(dgd * 1.01, np.full(LENGTHS.size, 0.003), dgd)
    data = ActivationData(
        steps, tuple(runs), tuple(curves), LENGTHS,
        dgd=_dgd_risk(ETA_DGD, LENGTHS),  # at the optimal step, the judged baseline
        kernel_measured=kernel + 0.002 * rng.normal(size=kernel.shape),
        kernel_measured_se=np.full(kernel.shape, 0.002), table=table, eta_fit=eta_fit,
        eta_fit_error=np.where(np.isnan(eta_fit), np.nan, 0.01),
    )  # fmt: skip
    theory = ActivationTheory(a_f=a_f, kernel_omegas=omegas, kernel_step=kernel,
                              eta_star=ETA_DGD, step_shift=np.full(LENGTHS.size, 0.03))
    prediction = Prediction({}, theory.to_record())
    ratio = np.zeros((len(SPECS), LENGTHS.size))  # (A, n): as the claim, 0 ± inf if unpaired
    ratio[~np.isnan(eta_fit)] = 1.01
    error = np.where(ratio > 0, 0.002, np.inf)
    tracks = Estimate(ratio.ravel(), error.ravel())  # activation-major, as the claim stores it
    return params, *_stored(prediction, Measurement({"tracks_dgd": tracks}, data.to_record()))


def _texts(figure) -> str:
    """Every title, label, legend entry and annotation of a figure, one string."""
    found = [t.get_text() for t in figure.findobj(lambda o: hasattr(o, "get_text"))]
    return "\n".join(found)


def _line_levels(axis) -> set[float]:
    """The y of every horizontal line drawn on an axis."""
    levels = set()
    for line in axis.get_lines():
        y = np.asarray(line.get_ydata(), dtype=float)
        if y.size == 2 and y[0] == y[1]:
            levels.add(round(float(y[0]), 12))
    return levels


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def test_figure_lin_draws_the_stored_optimum_and_every_member():
    params, prediction, measurement = lin_inputs(members=3)
    figure = linear_attention.figure_lin(params, prediction, measurement)
    # the step and risk panels: axhline at eta_GD* and R_GD(eta*), as stored
    step_axis = next(a for a in figure.axes if a.get_ylabel().startswith("learned step"))
    risk_axis = next(a for a in figure.axes if a.get_ylabel().startswith("test MSE at L"))
    assert round(ETA_GD, 12) in _line_levels(step_axis)
    assert round(prediction.figure_data["risk_gd"], 12) in _line_levels(risk_axis)
    # one step curve per member, plus the zoom on the last quarter of the logs
    history = measurement.figure_data["step_history"]
    curves = [line for line in step_axis.get_lines() if np.size(line.get_xdata()) > 2]
    assert len(curves) == 3 and np.allclose(curves[2].get_ydata(), history[1:, 2])
    text = _texts(figure)
    for needed in (
        "(exact)",
        "measured (± 1 SE)",
        "d=5, L=40, σ²=0.1",
        "10000 Adam steps",
        "member 2",
    ):
        assert needed in text


def test_figure_pair_shows_the_raw_gap_and_the_fitted_slopes():
    params, prediction, measurement = pair_inputs()
    figure = linear_attention.figure_pair(params, prediction, measurement)
    axis = figure.axes[0]
    assert axis.get_xscale() == axis.get_yscale() == "log"
    assert round(0.37, 12) in _line_levels(axis)  # the centring term the raw gap sits on
    text = _texts(figure)
    assert "slope 2.0010 ± 0.002" in text and "slope 1.9980 ± 0.003" in text
    assert "max |pair − linear| (measured)" in text


def test_figure_length_keeps_every_curve_readable():
    params, prediction, measurement = length_inputs()
    figure = linear_attention.figure_length(params, prediction, measurement)
    full, zoom = figure.axes[:2]
    assert full.get_yscale() == "log"
    data = measurement.figure_data
    low, high = full.get_ylim()  # (a): every curve, from the Bayes floor to the linear rise
    assert low <= data["Bayes_mean"].min() and high >= data["linear_mean"].max()
    low, high = zoom.get_ylim()  # (b): the softmax curves fill the zoom; linear attention leaves
    at = data["lengths"] >= params.L
    assert low <= data["Bayes_mean"][at].min() and high >= data["H1_mean"][at].max()
    assert high < 0.5 * data["linear_mean"].max()
    text = _texts(figure)
    for needed in (
        "argmin R_lin = L + (d(1+σ²)+1)/2 = 43.25 (exact)",
        "L' = 45",
        "training L = 40",
        "fitted step 0.897",
    ):
        assert needed in text


def test_figure_9_has_one_row_per_activation_and_says_which_paired():
    params, prediction, measurement = act_inputs(unpaired=(3,))
    figure = activations.figure_9(params, prediction, measurement)
    assert len(figure.axes) == 4 * len(SPECS) + 2  # 2 heads x (KQ, OV) per row + colour bars
    text = _texts(figure)
    assert "quadratic:1, a_f=2\n0/3 seeds paired\nshown: member 0" in text
    assert "elu:0.5, a_f=0.5\n2/3 seeds paired\nshown: member 2" in text


def test_figure_10_highlights_the_shown_member():
    params, prediction, measurement = act_inputs(unpaired=())
    figure = activations.figure_10(params, prediction, measurement)
    omega_axis = next(a for a in figure.axes if a.get_title().startswith("tanh"))
    lines = [line for line in omega_axis.get_lines() if np.size(line.get_xdata()) > 2]
    assert len(lines) == params.seeds * 2  # every seed, both heads
    bold = [line for line in lines if line.get_alpha() == 1.0]
    runs = ActivationData.from_record(measurement.figure_data, len(SPECS)).runs[1]
    shown, history = runs.shown, runs.omega_history
    assert len(bold) == 2 and np.allclose(bold[0].get_ydata(), history[1:, shown, 0])


def test_figure_11_says_when_an_activation_has_no_curve():
    params, prediction, measurement = act_inputs(unpaired=(1,))
    assert ActivationData.from_record(measurement.figure_data, len(SPECS)).curves[1] is None
    figure = activations.figure_11(params, prediction, measurement)
    text = _texts(figure)
    assert text.count("no paired member among 3 seeds") == 1
    # the fitted steps of activations 0 and 2 (ETA_DGD - 0.01 a); activation 1 has none
    assert "η̂ = 0.879" in text and "η̂ = 0.859" in text and "η̂ = 0.869" not in text
    assert "1 ± (dgd_rtol + step allowance) = 1 ± 0.08" in text
    assert "debiased GD at η* = 1/(1+κ) = 0.879 (MC, same prompts; judged)" in text


def test_figure_kernel_step_normalises_by_a_f_and_marks_missing_steps():
    params, prediction, measurement = act_inputs(unpaired=(2,))
    figure = activations.figure_kernel_step(params, prediction, measurement)
    step_axis, fit_axis = figure.axes[:2]
    kernel = ActivationTheory.from_record(prediction.figure_data).kernel_step / A_F[:, None]
    theory = [line for line in step_axis.get_lines() if line.get_linestyle() == "-"]
    drawn = [line.get_ydata() for line in theory if np.size(line.get_ydata()) == 3]
    assert len(drawn) == len(SPECS) and np.allclose(drawn, kernel)
    assert round(ETA_DGD, 12) in _line_levels(fit_axis)
    assert [t.get_text() for t in fit_axis.get_xticklabels()] == list(SPECS)
    assert "no paired\nseed" in _texts(figure)


def test_figure_kernel_step_leaves_out_an_activation_without_a_first_order_step():
    a_f = np.array([1.0, 0.0, 0.5, 2.0])  # e.g. f = 1 + x^2: f'(0) = 0
    params, prediction, measurement = act_inputs(unpaired=(), a_f=a_f)
    figure = activations.figure_kernel_step(params, prediction, measurement)
    theory = [line for line in figure.axes[0].get_lines() if line.get_linestyle() == "-"]
    assert len([line for line in theory if np.size(line.get_ydata()) == 3]) == len(SPECS) - 1
    assert "tanh: a_f = 0, not drawn" in _texts(figure)


def test_figure_11_ratio_axis_reaches_a_model_outside_the_tolerance():
    params, prediction, measurement = act_inputs(unpaired=())
    tracks = measurement.values["tracks_dgd"]
    ratio = tracks.value.copy()
    ratio[LENGTHS.size + 3] = 1.2  # activation 1 at L' = 25: 20% above dGD, 2.5 x the rule
    measurement = Measurement(
        {"tracks_dgd": Estimate(ratio, tracks.error)}, measurement.figure_data
    )
    figure = activations.figure_11(params, prediction, measurement)
    ratio_axes = [a for a in figure.axes if a.get_ylabel().startswith("MSE / dGD")]
    assert len(ratio_axes) == len(SPECS)
    assert all(axis.get_ylim()[1] > 1.2 for axis in ratio_axes)  # one scale, every point shown
