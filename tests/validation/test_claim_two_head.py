"""The two-head flow claims (Appendix B) at smoke size: they run, their rules fail on wrong
predictions, and the weight-space flow used against the trained model is the gradient flow of
Ltilde on the model's weights.

Independent sources: the weight-space flow is re-derived here by integrating the weights
themselves (chain rule through omega = mean_i a_i b_i / sqrt(D), mu = v o, with the gradient of
`theory.approximate_loss_grad`), solver tolerance 1e-10; the naive law's slope -1/2 and the
(B.4) clock t = lr k are the wrong predictions the rules must reject.
"""

import math

import numpy as np
import pytest
from icl_verify.dynamics import SaveAt, two_head_flow
from icl_verify.theory import Setting, approximate_loss_grad
from icl_verify.validation.cache import ArtefactCache
from icl_verify.validation.claim import AGREES, DISAGREES, Prediction, evaluate
from icl_verify.validation.claims.he2025.two_head import (
    CLAIM_INIT,
    CLAIM_PHASE1,
    CLAIM_PHASE2,
    CLAIM_PHASE3,
    weight_space_flow,
)
from icl_verify.validation.presets import claim_params
from icl_verify.validation.runtime import Runtime
from scipy.integrate import solve_ivp


def _run(claim, tmp_path):
    params = claim_params("smoke", claim.id)
    runtime = Runtime("cpu", 0, ArtefactCache(tmp_path / "cache"))
    return params, claim.predict(params), claim.measure(params, runtime)


def _verdicts(claim, params, prediction, measurement):
    results = evaluate(claim.checks(params), prediction, measurement)
    return {r.check.quantity: r.judgement.verdict for r in results}


def _with_values(prediction, **values):
    return Prediction({**prediction.values, **values}, prediction.figure_data)


@pytest.fixture(scope="module")
def phase1(tmp_path_factory):
    return _run(CLAIM_PHASE1, tmp_path_factory.mktemp("phase1"))


def test_init_agrees_and_catches_a_broken_symmetry(tmp_path):
    params, prediction, measurement = _run(CLAIM_INIT, tmp_path)
    assert set(_verdicts(CLAIM_INIT, params, prediction, measurement).values()) == {AGREES}
    wrong = _with_values(prediction, reduced_gap=1e-6, opposite_fraction=0.5)
    verdicts = _verdicts(CLAIM_INIT, params, wrong, measurement)
    assert verdicts["reduced_gap"] == verdicts["opposite_fraction"] == DISAGREES


def test_phase1_ode_checks_agree_and_the_b4_clock_is_rejected_for_sgd(phase1):
    params, prediction, measurement = phase1
    verdicts = _verdicts(CLAIM_PHASE1, params, prediction, measurement)
    assert verdicts["growth_rate"] == verdicts["T1"] == AGREES
    assert DISAGREES not in verdicts.values()
    # (B.4) read at t = lr k: the reduced ODE in (omega, mu) is not the trained model's flow
    setting = Setting(params["d"], params["L"], params["sigma2"])
    times = np.asarray(params["compare_t"], dtype=float)
    b4 = two_head_flow(params["train_eps"], setting, (0.0, times[-1]), saveat=SaveAt(times))
    wrong = _with_values(
        prediction, sgd_log_omega=np.log(b4.omega[:, 0]), sgd_log_mu=np.log(b4.mu[:, 0])
    )
    verdicts = _verdicts(CLAIM_PHASE1, params, wrong, measurement)
    assert verdicts["sgd_log_omega"] == verdicts["sgd_log_mu"] == DISAGREES
    # a T1 off by 10% (twice the tolerance) is rejected
    wrong_t1 = _with_values(prediction, T1=1.1 * measurement.values["T1"].value)
    assert _verdicts(CLAIM_PHASE1, params, wrong_t1, measurement)["T1"] == DISAGREES


def test_phase2_and_phase3_agree_and_the_naive_law_is_rejected(tmp_path):
    for claim in (CLAIM_PHASE2, CLAIM_PHASE3):
        params, prediction, measurement = _run(claim, tmp_path)
        assert set(_verdicts(claim, params, prediction, measurement).values()) == {AGREES}
    naive = _with_values(prediction, slope_omega=-0.5, slope_mu=0.5)  # (B.18): omega ~ t^{-1/2}
    verdicts = _verdicts(CLAIM_PHASE3, params, naive, measurement)
    assert verdicts["slope_omega"] == verdicts["slope_mu"] == DISAGREES


def test_weight_space_flow_is_the_flow_on_the_weights():
    setting, eps = Setting(d=5, L=40, sigma2=0.1), 0.02
    d, D = setting.d, setting.d + 1
    times = np.array([0.0, 2.0, 5.0, 10.0])

    def rhs(t, y):  # head 1: KQ diagonal a_i (W_K), b_i (W_Q); OV: v (W_V), o (W_O)
        a, b, v, o = y[:d], y[d : 2 * d], y[-2], y[-1]
        omega, mu = np.mean(a * b) / math.sqrt(D), v * o
        g_omega, g_mu = approximate_loss_grad(
            np.array([omega, -omega]), np.array([mu, -mu]), setting
        )
        d_omega = g_omega[0] / (d * math.sqrt(D))  # dL/d(a_i b_i); head 2 mirrors head 1
        return np.concatenate([-d_omega * b, -d_omega * a, [-g_mu[0] * o, -g_mu[0] * v]])

    start = np.concatenate([np.ones(d), np.full(d, eps * math.sqrt(D)), [1.0, eps]])
    weights = solve_ivp(rhs, (0.0, times[-1]), start, t_eval=times, rtol=1e-10, atol=1e-13).y
    omega = np.mean(weights[:d] * weights[d : 2 * d], axis=0) / math.sqrt(D)
    mu = weights[-2] * weights[-1]
    flow_omega, flow_mu = weight_space_flow(setting, eps, times)
    np.testing.assert_allclose(flow_omega, omega, rtol=1e-7)
    np.testing.assert_allclose(flow_mu, mu, rtol=1e-7)
