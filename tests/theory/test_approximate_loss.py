"""Ltilde of He et al. (2025) eq. (4.1): derivatives, batching, overflow safety, optimal OV weights.

Independent sources: central finite differences with their O(h^2) error order
(the fitted order is checked, not only the size of the error), an mpmath
evaluation of (4.1) at 60 significant digits for the extreme points, and the
defining properties of the optimum (stationarity, nothing nearby is lower).
"""

import mpmath
import numpy as np
import pytest
from icl_verify.theory import (
    Setting,
    approximate_loss,
    approximate_loss_grad,
    approximate_loss_hessian,
    optimal_mu,
    optimal_mu_loss,
)

S = Setting(d=5, L=40, sigma2=0.1)
RNG_POINTS = np.random.default_rng(20250101)
# three generic 3-head points with d |omega_i omega_j| up to ~3: every term of (4.1) matters
POINTS = [(RNG_POINTS.normal(scale=0.5, size=3), RNG_POINTS.normal(size=3)) for _ in range(3)]


def _flat_loss(x, setting=S):
    h = x.size // 2
    return float(approximate_loss(x[:h], x[h:], setting))


def _flat_grad(x, setting=S):
    h = x.size // 2
    return np.concatenate(approximate_loss_grad(x[:h], x[h:], setting))


def _central_difference(f, x, h):
    """Central difference of f along every coordinate: error C h^2 + O(h^4) (+ rounding eps / h)."""
    columns = [
        (np.asarray(f(x + h * e)) - np.asarray(f(x - h * e))) / (2 * h) for e in np.eye(x.size)
    ]
    return np.stack(columns, axis=-1)


def _fitted_order(f, exact, x, steps=(1e-2, 5e-3, 2.5e-3)):
    """Slope of log(max error) against log(h) (rounding, ~1e-16 / h, stays far below h^2)."""
    errors = [np.abs(_central_difference(f, x, h) - exact).max() for h in steps]
    return np.polyfit(np.log(steps), np.log(errors), 1)[0]


@pytest.mark.parametrize("omega, mu", POINTS)
def test_gradient_matches_central_differences_with_second_order_error(omega, mu):
    exact = _flat_grad(np.concatenate([omega, mu]))
    # a wrong gradient leaves an error that does not shrink (order ~0); a right one shrinks like h^2
    assert _fitted_order(_flat_loss, exact, np.concatenate([omega, mu])) == pytest.approx(
        2.0, abs=0.15
    )


@pytest.mark.parametrize("omega, mu", POINTS)
def test_hessian_is_symmetric_and_matches_differences_of_the_gradient(omega, mu):
    x = np.concatenate([omega, mu])
    hessian = approximate_loss_hessian(omega, mu, S)
    assert hessian.shape == (6, 6)
    np.testing.assert_allclose(hessian, hessian.T, rtol=1e-13, atol=1e-13)
    assert _fitted_order(_flat_grad, hessian, x) == pytest.approx(2.0, abs=0.15)


def test_batched_calls_broadcast_and_equal_the_unbatched_ones():
    rng = np.random.default_rng(3)
    omega = rng.normal(scale=0.4, size=(4, 1, 3))  # (4, 1, H) broadcasts against mu (2, H)
    mu = rng.normal(size=(2, 3))
    loss = approximate_loss(omega, mu, S)
    grad_omega, grad_mu = approximate_loss_grad(omega, mu, S)
    hessian = approximate_loss_hessian(omega, mu, S)
    assert loss.shape == (4, 2) and grad_omega.shape == grad_mu.shape == (4, 2, 3)
    assert hessian.shape == (4, 2, 6, 6)
    for i in range(4):
        for j in range(2):
            single = (omega[i, 0], mu[j], S)
            assert loss[i, j] == approximate_loss(*single)
            np.testing.assert_array_equal(grad_omega[i, j], approximate_loss_grad(*single)[0])
            np.testing.assert_array_equal(grad_mu[i, j], approximate_loss_grad(*single)[1])
            np.testing.assert_array_equal(hessian[i, j], approximate_loss_hessian(*single))
    batch_omega = rng.normal(scale=0.4, size=(5, 3))
    np.testing.assert_array_equal(optimal_mu(batch_omega, S)[2], optimal_mu(batch_omega[2], S))
    assert optimal_mu_loss(batch_omega, S).shape == (5,)


# ---- overflow safety: d = 100, |omega_h| up to 3, so exp(d omega_i omega_j) reaches exp(900) ----

BIG = Setting(d=100, L=40, sigma2=0.1)


def _mp_loss(omega, mu, setting):
    """(4.1) in mpmath (caller sets the precision), straight from the formula: the reference."""
    omega = [
        mpmath.mpf(w) for w in omega
    ]  # exact for floats; keeps mpf arguments (differentiation steps) intact
    mu = [mpmath.mpf(m) for m in mu]
    p = mpmath.fsum(m * w for m, w in zip(mu, omega, strict=True))
    quadratic = mpmath.fsum(
        mu[i] * mu[j] * mpmath.exp(setting.d * omega[i] * omega[j])
        for i in range(len(mu))
        for j in range(len(mu))
    )
    return (
        1
        + mpmath.mpf(setting.sigma2)
        - 2 * p
        + p * p
        + (1 + mpmath.mpf(setting.sigma2)) / setting.L * quadratic
    )


def _mp_derivative(omega, mu, setting, axes):
    """d/dx_i Ltilde or d2/dx_i dx_j Ltilde (axes (i,) or (i, j); x = (omega, mu)).

    Central differences of `_mp_loss` with steps 1e-20 |x_k| (truncation error ~1e-40 relative)
    at 400 digits, enough to resolve a mixed difference h_i h_j d2Ltilde ~ 1e-223 next to
    Ltilde ~ 1. No formula is shared with the code under test.
    """
    with mpmath.workdps(400):
        x = [mpmath.mpf(v) for v in (*omega, *mu)]
        h = len(omega)
        steps = {k: mpmath.mpf("1e-20") * (abs(x[k]) if x[k] != 0 else 1) for k in axes}

        def f(shifts):
            y = list(x)
            for k, sign in shifts:
                y[k] += sign * steps[k]
            return _mp_loss(y[:h], y[h:], setting)

        if len(axes) == 1:
            (i,) = axes
            value = (f([(i, 1)]) - f([(i, -1)])) / (2 * steps[i])
        else:
            i, j = axes
            corners = [(si, sj) for si in (1, -1) for sj in (1, -1)]
            value = mpmath.fsum(si * sj * f([(i, si), (j, sj)]) for si, sj in corners) / (
                4 * steps[i] * steps[j]
            )
        return float(value)


EXTREME_POINTS = {
    # opposite heads with cancelling mu: mu e^900 = e^700 and mu^2 e^900 = e^500 are representable
    "opposite heads": ([3.0, -3.0], [np.exp(-200.0), -np.exp(-200.0)]),
    # a large-omega head whose mu^2 underflows float64 on its own, next to a small-omega head
    "mixed scales": ([3.0, 0.1], [np.exp(-450.0), 1.0]),
    "three heads": ([-3.0, 2.5, 0.0], [-np.exp(-449.0), np.exp(-312.0), 0.5]),
}


@pytest.mark.parametrize("omega, mu", EXTREME_POINTS.values(), ids=EXTREME_POINTS.keys())
def test_loss_and_gradient_are_finite_and_accurate_at_large_omega(omega, mu):
    with mpmath.workdps(60):
        expected = float(_mp_loss(omega, mu, BIG))
    assert np.isfinite(expected)
    assert float(approximate_loss(omega, mu, BIG)) == pytest.approx(expected, rel=1e-12)
    grad = np.concatenate(approximate_loss_grad(omega, mu, BIG))
    expected_grad = [_mp_derivative(omega, mu, BIG, (k,)) for k in range(2 * len(omega))]
    assert np.all(np.isfinite(grad))
    np.testing.assert_allclose(grad, expected_grad, rtol=1e-10, atol=1e-12)


def test_hessian_is_finite_and_accurate_at_large_omega():
    omega, mu = EXTREME_POINTS["mixed scales"]
    hessian = approximate_loss_hessian(omega, mu, BIG)
    # the (mu_1, mu_1) entry is 2 omega_1^2 + 2c e^900, beyond float64: inf there is the true answer
    assert hessian[2, 2] == np.inf
    finite = np.isfinite(hessian)
    assert finite.sum() == 15
    for i in range(4):
        for j in range(4):
            if finite[i, j]:
                assert hessian[i, j] == pytest.approx(
                    _mp_derivative(omega, mu, BIG, (i, j)), rel=1e-10
                ), (i, j)


def test_loss_is_inf_exactly_when_the_true_value_exceeds_float64():
    omega, mu = [3.0, -3.0], [1e-3, -1e-3]
    with mpmath.workdps(60):
        assert _mp_loss(omega, mu, BIG) > mpmath.mpf(np.finfo(float).max)
    assert approximate_loss(omega, mu, BIG) == np.inf
    grad_omega, grad_mu = approximate_loss_grad(omega, mu, BIG)
    assert np.all(np.isinf(grad_mu)) and np.all(np.isinf(grad_omega))


@mpmath.workdps(
    1000
)  # the entries span e^-900..e^900: mpmath's pivot test needs more digits than that
def _mp_optimal_mu(omega, setting):
    omega = [mpmath.mpf(w) for w in omega]
    c = (1 + mpmath.mpf(setting.sigma2)) / setting.L
    n = len(omega)
    system = mpmath.matrix(n, n)
    for i in range(n):
        for j in range(n):
            system[i, j] = omega[i] * omega[j] + c * mpmath.exp(setting.d * omega[i] * omega[j])
    return np.array([float(v) for v in mpmath.lu_solve(system, mpmath.matrix(omega))])


@pytest.mark.parametrize("omega", [[3.0, 0.1], [3.0, -2.0, 0.0], [0.3, -0.2, 0.05]])
def test_optimal_mu_matches_a_high_precision_solve(omega):
    setting = BIG if max(abs(w) for w in omega) > 1 else S
    np.testing.assert_allclose(
        optimal_mu(omega, setting), _mp_optimal_mu(omega, setting), rtol=1e-9, atol=1e-300
    )


@pytest.mark.parametrize("omega", [[0.4], [0.1, -0.1], [0.3, -0.2, 0.05], [0.5, -0.45, 0.2, -0.1]])
def test_optimal_mu_is_stationary_and_a_minimum(omega):
    mu_opt = optimal_mu(omega, S)
    _, grad_mu = approximate_loss_grad(omega, mu_opt, S)
    # scale of the terms that cancel in dLtilde/dmu: |omega|, c |E mu|; a solve leaves ~1e-13 of it
    assert np.abs(grad_mu).max() < 1e-10 * (1.0 + np.abs(mu_opt).max())
    best = optimal_mu_loss(omega, S)
    assert best == pytest.approx(approximate_loss(omega, mu_opt, S), rel=1e-12)
    rng = np.random.default_rng(11)
    for scale in (1e-1, 1e-3):
        perturbed = mu_opt + scale * rng.standard_normal((200, len(omega)))
        assert np.all(approximate_loss(omega, perturbed, S) > best)


def test_the_stage_two_bound_holds_at_sign_matched_points_with_equality_on_s_omega():
    """(4.5): below Ltilde wherever every head is sign-matched, strictly off S_omega, equal (to
    float64 rounding) on zero-sum homogeneous points, dummies included."""
    from icl_verify.theory import stage_two_lower_bound

    s, rng = Setting(d=5, L=40, sigma2=0.1), np.random.default_rng(3)
    omega = rng.normal(0, 0.3, (2000, 6))
    mu = np.sign(omega) * np.abs(rng.normal(0, 3, (2000, 6)))
    gap = approximate_loss(omega, mu, s) - stage_two_lower_bound(omega, mu, s)
    assert gap.min() > 0  # generic points are off S_omega
    on = np.array([[0.2, 0.2, -0.2, 0.0], [0.05, -0.05, -0.05, 0.0]])
    mu_on = np.array([[1.0, 2.0, -3.0, 0.0], [4.0, -1.5, -2.5, 0.0]])
    loss = approximate_loss(on, mu_on, s)
    assert np.allclose(stage_two_lower_bound(on, mu_on, s), loss, rtol=1e-14, atol=0)
    # equal to the manifold loss on S_omega at mu*(omega) (reference table: 0.22092 at 0.1)
    assert float(stage_two_lower_bound([0.1, -0.1], [4.3954, -4.3954], s)) == pytest.approx(
        0.22092, abs=1e-5
    )


def test_the_stage_two_bound_series_branch_continues_sinh():
    """sinh x - x from its series below x = 1e-2, from sinh above: the two agree at the switch
    to float64 rounding (the series' first omitted term, x^11/11!, is 1e-30 there)."""
    from icl_verify.theory import stage_two_lower_bound

    s = Setting(d=1, L=1, sigma2=0.0)  # c = 1, kappa = 1: the odd tail weighs as much as p^2
    below, above = np.sqrt(1e-2 * (1 - 1e-12)), np.sqrt(1e-2 * (1 + 1e-12))  # x = d p^2/|mu|^2
    values = [float(stage_two_lower_bound([w], [1.0], s)) for w in (below, above)]
    assert values[0] == pytest.approx(values[1], rel=1e-12)
