"""The weight-space flow of Ltilde (`dynamics.weight_space`): the gradient flow on a two-head
model's weights from Def. B.1, read in (omega, mu).

Independent source: the flow is re-derived here by integrating the weights themselves (chain
rule through omega = mean_i a_i b_i / sqrt(D), mu = v o, with the gradient of
`theory.approximate_loss_grad`), solver tolerance 1e-10. The analytic Jacobian is checked
against central differences.
"""

import math

import numpy as np
import pytest
from icl_verify.dynamics import SaveAt, WeightSpaceField, weight_space_flow
from icl_verify.theory import Setting, approximate_loss_grad
from scipy.integrate import solve_ivp

SETTING = Setting(d=5, L=40, sigma2=0.1)


def test_weight_space_flow_is_the_flow_on_the_weights():
    eps, (d, D) = 0.02, (SETTING.d, SETTING.d + 1)
    times = np.array([0.0, 2.0, 5.0, 10.0])

    def rhs(t, y):  # head 1: KQ diagonal a_i (W_K), b_i (W_Q); OV: v (W_V), o (W_O)
        a, b, v, o = y[:d], y[d : 2 * d], y[-2], y[-1]
        omega, mu = np.mean(a * b) / math.sqrt(D), v * o
        g_omega, g_mu = approximate_loss_grad(
            np.array([omega, -omega]), np.array([mu, -mu]), SETTING
        )
        d_omega = g_omega[0] / (d * math.sqrt(D))  # dL/d(a_i b_i); head 2 mirrors head 1
        return np.concatenate([-d_omega * b, -d_omega * a, [-g_mu[0] * o, -g_mu[0] * v]])

    start = np.concatenate([np.ones(d), np.full(d, eps * math.sqrt(D)), [1.0, eps]])
    weights = solve_ivp(rhs, (0.0, times[-1]), start, t_eval=times, rtol=1e-10, atol=1e-13).y
    omega = np.mean(weights[:d] * weights[d : 2 * d], axis=0) / math.sqrt(D)
    mu = weights[-2] * weights[-1]
    path = weight_space_flow(eps, SETTING, (0.0, times[-1]), saveat=SaveAt(times))
    np.testing.assert_allclose(path.omega[:, 0], omega, rtol=1e-7)
    np.testing.assert_allclose(path.mu[:, 0], mu, rtol=1e-7)
    np.testing.assert_array_equal(path.omega[:, 1], -path.omega[:, 0])  # head 2 mirrors head 1


@pytest.mark.parametrize("state", [(0.3, 1.2), (0.05, 0.7), (0.5, 0.4), (-0.2, 2.0)])
def test_jacobian_matches_central_differences(state):
    field, y, h = WeightSpaceField(SETTING, eps=0.02), np.array(state), 1e-6
    numeric = np.column_stack(
        [(field.rhs(0.0, y + h * e) - field.rhs(0.0, y - h * e)) / (2 * h) for e in np.eye(2)]
    )
    np.testing.assert_allclose(field.jacobian(0.0, y), numeric, atol=1e-8)


def test_loss_decreases_along_the_flow():
    path = weight_space_flow(0.02, SETTING, (0.0, 50.0), saveat=SaveAt(np.linspace(0, 50, 101)))
    assert np.all(np.diff(path.loss) <= 1e-12)


def test_bad_eps_is_one_line():
    with pytest.raises(ValueError, match="eps must be a finite number > 0, got 0.0"):
        WeightSpaceField(SETTING, eps=0.0)
