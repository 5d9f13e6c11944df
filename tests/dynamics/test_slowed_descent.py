"""Gradient descent on Ltilde as the reference of the true-loss SGD (App. C, HE-C-TRUELOSS):
the iterates against a hand-written descent, their first-order convergence to the flow, and
the read-outs."""

import numpy as np
import pytest
from icl_verify.dynamics import (
    ODESolver,
    SaveAt,
    gradient_flow,
    log_norm,
    phase_one_records,
    slowed_descent,
)
from icl_verify.theory import Setting, approximate_loss_grad

from icl_verify.statistics import loglog_slope

SETTING = Setting(d=5, L=40, sigma2=0.1)
OMEGA0, MU0 = np.array([0.02, -0.03, 0.04]), np.array([0.03, -0.02, 0.01])


def test_rows_are_the_descent_iterates_at_the_records():
    """Row j is iterate k_j = times_j / lr of theta <- theta - lr s grad Ltilde (theory's
    gradient), whatever the slowdown s: the clock is scaled, not the iterate count."""
    lr, s, log_every = 0.05, 1 - 1 / SETTING.L, 4
    times = np.arange(6) * log_every * lr
    path = slowed_descent(OMEGA0, MU0, SETTING, lr, times, slowdown=s)
    omega, mu, rows = OMEGA0.copy(), MU0.copy(), [(OMEGA0, MU0)]
    for k in range(1, 5 * log_every + 1):
        grad_omega, grad_mu = approximate_loss_grad(omega, mu, SETTING)
        omega, mu = omega - lr * s * grad_omega, mu - lr * s * grad_mu
        if k % log_every == 0:
            rows.append((omega, mu))
    np.testing.assert_allclose(path.t, times * s, rtol=1e-15)
    np.testing.assert_allclose(path.omega, [r[0] for r in rows], rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(path.mu, [r[1] for r in rows], rtol=1e-12, atol=1e-15)


def test_descent_converges_to_the_flow_at_first_order():
    """Gradient descent is the explicit Euler scheme of the flow: its error at a fixed time is
    O(lr), a log-log slope of 1 in lr (0.9 to 1.1 over lr = 0.04 ... 0.005)."""
    t_end = 4.0
    flow = gradient_flow(OMEGA0, MU0, SETTING, (0.0, t_end), ODESolver(rtol=1e-12, atol=1e-14),
                         SaveAt([0.0, t_end]))  # fmt: skip
    steps = np.array([0.04, 0.02, 0.01, 0.005])
    errors = []
    for lr in steps:
        path = slowed_descent(OMEGA0, MU0, SETTING, lr, np.array([0.0, t_end]))
        errors.append(np.abs(path.omega[-1] - flow.omega[-1]).max())
    assert loglog_slope(steps, np.array(errors)).slope == pytest.approx(1.0, abs=0.1)


def test_log_norm_is_the_log_of_the_euclidean_norm():
    """ln ||c theta|| = ln c + ln ||theta||, and ln ||(3, 4)|| = ln 5, per row."""
    omega, mu = np.array([[3.0, 0.0], [0.3, -0.2]]), np.array([[0.0, 4.0], [1.0, 0.5]])
    assert log_norm(omega[0], mu[0]) == pytest.approx(np.log(5.0), rel=1e-15)
    np.testing.assert_allclose(log_norm(7 * omega, 7 * mu), np.log(7) + log_norm(omega, mu),
                               rtol=1e-14)  # fmt: skip


def test_phase_one_records_stop_at_the_first_exit():
    """The window ends at the first record beyond fraction / sqrt(d) even if later records come
    back inside; the start is not in it; all records when none leaves."""
    omega = np.array([[0.01, -0.02], [0.1, 0.0], [0.0, -0.3], [0.1, 0.1]])  # d = 4: bound 0.25
    assert phase_one_records(omega, 4, 0.5).tolist() == [1]
    assert phase_one_records(omega, 4, 1.0).tolist() == [1, 2, 3]
