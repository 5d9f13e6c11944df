"""Solution manifold S_omega (He et al. 2025, (4.6)-(4.8)) and the single-head optimum (4.12).

Independent sources: the linear optimality system of (4.1) (reference check (i) of
§HE-MAN), brute-force minimisation of (4.1) with scipy.optimize where that system is
singular (dummy and repeated heads), limits derived below by Taylor expansion, and
scipy.optimize.minimize_scalar on the one-head profile.
"""

import numpy as np
import pytest
from icl_verify.theory import (
    Setting,
    approximate_loss,
    approximate_loss_grad,
    effective_learning_rate,
    manifold_loss,
    manifold_mu,
    optimal_mu,
    single_head_optimum,
)
from scipy.optimize import minimize, minimize_scalar

SETTINGS = [Setting(5, 40, 0.1), Setting(20, 160, 1.0), Setting(2, 3, 0.0)]


@pytest.mark.parametrize("setting", SETTINGS, ids=str)
@pytest.mark.parametrize("omega", [0.02, 0.1, 0.3, 1.0 / np.sqrt(5), 1.0])
def test_optimal_mu_at_opposite_heads_is_plus_minus_manifold_mu(setting, omega):
    mu_opt = optimal_mu([omega, -omega], setting)
    mu_star = float(manifold_mu(omega, setting))
    np.testing.assert_allclose(mu_opt, [mu_star, -mu_star], rtol=1e-10)
    # and the loss there is the closed form on S_omega (4.7)-(4.8)
    assert approximate_loss([omega, -omega], mu_opt, setting) == pytest.approx(
        manifold_loss(omega, setting), rel=1e-12
    )


def _brute_force_mu(omega, setting, seed):
    """argmin_mu Ltilde(omega, mu) by BFGS from a random start.

    The analytic gradient (checked in test_approximate_loss) makes a 1e-9 stationarity
    test possible; BFGS may report "precision loss" on the flat (within-group) directions,
    so the criterion is the gradient at the returned point, not result.success.
    """
    start = np.random.default_rng(seed).normal(size=len(omega))
    result = minimize(
        lambda mu: float(approximate_loss(omega, mu, setting)),
        start,
        jac=lambda mu: approximate_loss_grad(omega, mu, setting)[1],
        method="BFGS",
        options={"gtol": 1e-10},
    )
    assert np.abs(approximate_loss_grad(omega, result.x, setting)[1]).max() < 1e-8, result.message
    return result.x


@pytest.mark.parametrize(
    "pattern",
    [(1, 1, -1), (1, -1, 0), (1, 1, -1, -1, 0), (1, -1, -1, 0, 0)],
    ids=lambda p: (
        "".join("+-0"[(1 - s) if s >= 0 else 1] for s in p).replace("+", "p").replace("-", "m")
    ),
)
@pytest.mark.parametrize("omega", [0.1, 0.3])
def test_brute_force_minimum_on_the_homogeneous_set_has_group_sums_plus_minus_manifold_mu(
    pattern, omega
):
    # repeated omegas make the linear system of optimal_mu singular (only group sums are
    # determined), so the check minimises (4.1) over mu with omega_h in {+omega, -omega, 0}
    setting = SETTINGS[0]
    pattern = np.array(pattern, dtype=float)
    omega_vec = omega * pattern
    mu = _brute_force_mu(omega_vec, setting, seed=len(pattern))
    mu_star = float(manifold_mu(omega, setting))
    group_sums = [mu[pattern == s].sum() for s in (1, -1, 0)]
    # gradient <= 1e-8 and the Hessian in the group-sum directions is >= 2c ~ 0.05, so the group
    # sums are within ~1e-6 of the minimiser (the dummy-head sum is 0 exactly at the optimum)
    np.testing.assert_allclose(group_sums, [mu_star, -mu_star, 0.0], atol=1e-6)
    assert approximate_loss(omega_vec, mu, setting) == pytest.approx(
        manifold_loss(omega, setting), abs=1e-12
    )


@pytest.mark.parametrize("setting", SETTINGS, ids=str)
def test_manifold_loss_increases_in_omega_and_is_even(setting):
    # up to d omega^2 = 20: 1 + sigma2 - loss ~ 20 / (kappa sinh 20) is still far above rounding
    omega = np.linspace(1e-3, np.sqrt(20.0 / setting.d), 400)
    loss = manifold_loss(omega, setting)
    assert np.all(np.diff(loss) > 0)
    np.testing.assert_array_equal(loss, manifold_loss(-omega, setting))
    # bounded by the trivial predictor y_hat = 0 (loss 1 + sigma2) and above the omega -> 0 infimum
    kappa = setting.kappa
    assert np.all(loss < 1 + setting.sigma2)
    assert np.all(loss > setting.sigma2 + kappa / (1 + kappa))


@pytest.mark.parametrize("setting", SETTINGS, ids=str)
def test_effective_learning_rate_tends_to_one_over_one_plus_kappa(setting):
    # On (omega, -omega), (m, -m) with eta = 2 omega m fixed, (4.1) reads
    #   1 + sigma2 - 2 eta + eta^2 + c eta^2 sinh(d omega^2) / omega^2,
    # and sinh(d omega^2) / omega^2 = d (1 + (d omega^2)^2 / 6 + ...), so the minimising eta is
    #   1 / (1 + kappa (1 + x^2 / 6 + O(x^4))),  x = d omega^2
    #   = 1 / (1 + kappa) - kappa x^2 / (6 (1 + kappa)^2) + O(x^4).
    kappa, d = setting.kappa, setting.d
    limit = 1.0 / (1.0 + kappa)
    assert effective_learning_rate(0.0, setting) == pytest.approx(limit, rel=1e-15)
    slope = kappa * d * d / (6.0 * (1.0 + kappa) ** 2)  # coefficient of omega^4
    for omega in (1e-1 / np.sqrt(d), 3e-2 / np.sqrt(d)):
        deficit = limit - float(effective_learning_rate(omega, setting))
        # the next term is O(x^4) = O(omega^8): relative size ~x^2 ~ 1e-4 at the larger omega
        assert deficit / omega**4 == pytest.approx(slope, rel=2 * (d * omega**2) ** 2 + 1e-6)
    omega = np.linspace(1e-3, 1.0, 50)
    assert np.all(np.diff(effective_learning_rate(omega, setting)) < 0)


@pytest.mark.parametrize("setting", SETTINGS, ids=str)
def test_manifold_mu_is_odd_decreasing_and_infinite_at_zero(setting):
    omega = np.linspace(1e-3, 2.0, 200)
    mu = manifold_mu(omega, setting)
    assert np.all(np.diff(mu) < 0)
    np.testing.assert_allclose(manifold_mu(-omega, setting), -mu, rtol=1e-15)
    assert manifold_mu(0.0, setting) == np.inf
    np.testing.assert_allclose(2 * omega * mu, effective_learning_rate(omega, setting), rtol=1e-14)


@pytest.mark.parametrize("setting", SETTINGS, ids=str)
def test_single_head_optimum_minimises_the_one_head_profile(setting):
    def best_mu(omega):
        inner = minimize_scalar(lambda m: float(approximate_loss([omega], [m], setting)))
        return inner.x, inner.fun

    outer = minimize_scalar(
        lambda w: best_mu(w)[1], bounds=(1e-2, 3.0), method="bounded", options={"xatol": 1e-9}
    )
    mu, loss = best_mu(outer.x)
    opt = single_head_optimum(setting)
    # loss is flat at the minimum: |omega error| ~ sqrt(eps / curvature) ~ 1e-7; mu inherits it
    assert opt.omega == pytest.approx(outer.x, abs=1e-5)
    assert opt.mu == pytest.approx(mu, rel=1e-5)
    assert opt.loss == pytest.approx(loss, rel=1e-12)
    assert opt.loss <= loss + 4e-16  # the closed form is the minimum, up to one rounding of ~0.4
    assert approximate_loss([opt.omega], [opt.mu], setting) == pytest.approx(opt.loss, rel=1e-14)
