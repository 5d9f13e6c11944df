"""H-head gradient flow d theta/dt = -grad Ltilde (4.1): Jacobian, descent, GD -> flow order."""

import numpy as np
import pytest
from icl_verify.dynamics import (
    GradientDescent,
    GradientFlowField,
    ODESolver,
    SaveAt,
    Trajectory,
    TwoHeadField,
    gradient_flow,
)
from icl_verify.theory import Setting, manifold_mu

SETTING = Setting(d=5, L=40, sigma2=0.1)


@pytest.mark.parametrize("field", [GradientFlowField(SETTING), TwoHeadField(SETTING)])
def test_analytic_jacobian_matches_central_differences(field):
    """Central differences have error O(h^2) ~ 1e-10 at h = 1e-5 (f'' = O(1) here)."""
    rng = np.random.default_rng(0)
    n = 6 if isinstance(field, GradientFlowField) else 2
    y = rng.normal(scale=0.4, size=n)
    h = 1e-5
    columns = [(field.rhs(0, y + h * e) - field.rhs(0, y - h * e)) / (2 * h) for e in np.eye(n)]
    np.testing.assert_allclose(field.jacobian(0, y), np.array(columns).T, atol=1e-8)


def test_loss_never_increases_along_the_flow():
    """dLtilde/dt = -|grad Ltilde|^2 <= 0; allow only the solver's relative error (rtol 1e-10)."""
    rng = np.random.default_rng(1)
    path = gradient_flow(rng.normal(0, 0.01, 4), rng.normal(0, 0.01, 4), SETTING, (0.0, 1e3))
    assert np.all(np.diff(path.loss) <= 1e-9 * path.loss[:-1])
    assert path.loss[-1] < path.loss[0]


def test_energy_identity_loss_drop_equals_integrated_squared_gradient():
    """L(0) - L(T) = int_0^T |grad L|^2 dt; trapezoid on 4000 points has relative error ~1e-6."""
    field = GradientFlowField(SETTING)
    path = gradient_flow(
        [0.05, -0.03, 0.02], [0.01, -0.04, 0.03], SETTING, (0.0, 5.0),
        saveat=SaveAt(np.linspace(0.0, 5.0, 4000)),
    )  # fmt: skip
    states = np.concatenate([path.omega, path.mu], axis=1)
    speed2 = np.array([np.sum(field.rhs(0, y) ** 2) for y in states])
    integral = np.sum((speed2[1:] + speed2[:-1]) / 2 * np.diff(path.t))
    assert abs((path.loss[0] - path.loss[-1]) - integral) < 1e-5 * integral


def test_gradient_descent_converges_to_the_flow_at_order_one():
    """Forward Euler: global error C lr + O(lr^2) on [0, T]; fitted order must be 1 +- 0.1."""
    omega0, mu0 = [0.3, -0.2, 0.25], [0.1, -0.3, 0.2]
    times = SaveAt([0.0, 2.0])
    exact = gradient_flow(
        omega0, mu0, SETTING, (0.0, 2.0), ODESolver(rtol=1e-12, atol=1e-14), times
    )
    lrs = np.array([0.02, 0.01, 0.005, 0.0025])
    errors = []
    for lr in lrs:
        path = gradient_flow(omega0, mu0, SETTING, (0.0, 2.0), GradientDescent(lr), times)
        assert path.t[-1] == pytest.approx(2.0)  # t = lr * k
        diff = np.concatenate([path.omega[-1] - exact.omega[-1], path.mu[-1] - exact.mu[-1]])
        errors.append(np.linalg.norm(diff))
    order = np.polyfit(np.log(lrs), np.log(errors), 1)[0]
    assert abs(order - 1.0) < 0.1, (order, errors)


def test_small_random_start_ends_sign_matched_zero_sum_and_homogeneous():
    """Stage I/II (HE-S1, HE-S2) and (4.3): by t = 1e4, mu^T omega has reached 1/(1+kappa)."""
    rng = np.random.default_rng(3)
    solver = ODESolver(rtol=1e-8, atol=1e-10)  # the end state is read to 1e-3
    path = gradient_flow(
        rng.normal(0, 0.01, 4), rng.normal(0, 0.01, 4), SETTING, (0.0, 1e4), solver
    )
    assert path.sign_matched()[-1]
    assert path.zero_sum_ratio[-1] < 1e-3
    assert path.kq_dispersion()[-1] < 1e-2
    # the product limit of (4.8) at omega -> 0; tolerance 1e-3 as in the reference's acceptance test
    assert abs(path.mu_dot_omega[-1] - 1 / (1 + SETTING.kappa)) < 1e-3


def test_manifold_distance_is_zero_on_S_omega_and_positive_off_it():
    """Points built from (4.7): +/-/dummy pattern, random split of the group sums +-mu*(omega)."""
    rng = np.random.default_rng(4)
    w = 0.13
    types = np.array([1, 1, -1, 0, -1])
    mu = np.zeros(5)
    for sign in (1, -1):
        group = types == sign
        share = rng.uniform(0.5, 1.0, group.sum())  # no head 10x below another: none dummy
        share /= share.sum()
        mu[group] = sign * manifold_mu(w, SETTING) * share
    omega = w * types.astype(float)
    on = Trajectory(np.zeros(1), omega[None], mu[None], np.zeros(1), SETTING)
    assert on.manifold_distance()[0] < 1e-12
    assert on.head_types()[0].tolist() == types.tolist()
    # stretch one head's |omega|: only the spread and the two group-sum terms become nonzero
    stretched = omega * np.array([1, 1.1, 1, 1, 1])
    off = Trajectory(np.zeros(1), stretched[None], mu[None], np.zeros(1), SETTING)
    sizes = np.abs(stretched[types != 0])
    target = manifold_mu(sizes.mean(), SETTING)
    expected = np.sqrt(
        np.sum((sizes - sizes.mean()) ** 2)
        + (mu[types == 1].sum() - target) ** 2
        + (mu[types == -1].sum() + target) ** 2
    )
    assert off.manifold_distance()[0] == pytest.approx(expected, rel=1e-12)
    assert expected > 0.01


@pytest.mark.parametrize(
    ("omega0", "mu0", "t_span", "message"),
    [
        ([0.1, 0.2], [0.1], (0.0, 1.0), "omega0 and mu0 must be 1-D of the same length"),
        ([0.1, np.nan], [0.1, 0.2], (0.0, 1.0), "omega0 and mu0 must be finite"),
        ([0.1], [0.1], (1.0, 0.0), "t_span must be finite with t0 < t1"),
        ([0.1], [0.1], (0.0, np.inf), "t_span must be finite with t0 < t1"),
    ],
)
def test_bad_input_raises_one_line_value_error(omega0, mu0, t_span, message):
    with pytest.raises(ValueError, match=message) as error:
        gradient_flow(omega0, mu0, SETTING, t_span)
    assert "\n" not in str(error.value)


def test_head_types_are_the_one_definition_of_icl_verify_heads():
    """`Trajectory.head_types` classifies by the share |omega_h mu_h| (`icl_verify.heads`): a head
    with a large mu_h but omega_h = 0 is dummy, one with small mu_h but a large share is not."""
    from icl_verify.heads import DUMMY_THRESHOLD, head_types

    omega = np.array([[0.2, -0.2, 0.0, 0.9], [0.2, -0.2, 0.1, 0.001]])
    mu = np.array([[1.0, -1.0, 0.8, 0.06], [1.0, -1.0, 0.01, 0.5]])
    path = Trajectory(np.arange(2.0), omega, mu, np.zeros(2), SETTING)
    assert path.head_types().tolist() == [[1, -1, 0, 1], [1, -1, 0, 0]]
    np.testing.assert_array_equal(path.head_types(), head_types(omega, mu))
    assert DUMMY_THRESHOLD == 0.05
