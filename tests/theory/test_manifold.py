"""Solution manifold S_omega (He et al. 2025, (4.6)-(4.8)) and the single-head optimum (4.12).

Independent sources: the linear optimality system of (4.1) (reference check (i) of
§HE-MAN), brute-force minimisation of (4.1) with scipy.optimize where that system is
singular (dummy and repeated heads), limits derived below by Taylor expansion, and
scipy.optimize.minimize_scalar on the one-head profile.

Where an optimiser's result is compared with a closed form, the tolerance comes from
where the optimiser stopped, not from a fixed number: a minimiser's error is the Newton
step H^+ g at the returned point (g the gradient, H the Hessian there, both from the
analytic derivatives checked in test_approximate_loss), so the bound is that step times
a safety factor, plus the rounding of g. A fixed atol fails on a CPU where the optimiser
happens to stop a little earlier, and says nothing where it stops much closer.
"""

import numpy as np
import pytest
from icl_verify.theory import (
    Setting,
    approximate_loss,
    approximate_loss_grad,
    approximate_loss_hessian,
    effective_learning_rate,
    manifold_loss,
    manifold_mu,
    optimal_mu,
    single_head_optimum,
    step_decrement_slope_bias,
)
from scipy.optimize import minimize, minimize_scalar

SETTINGS = [Setting(5, 40, 0.1), Setting(20, 160, 1.0), Setting(2, 3, 0.0)]
EPS = np.finfo(float).eps


def _gradient_rounding(omega, mu, setting):
    """Componentwise bounds on the rounding error of `approximate_loss_grad` (omega, mu parts).

    Each component is a sum of a few terms (H + 4 at most, each with a few roundings and an
    exp); its error is below 8 (H + 4) eps times the sum of the terms' magnitudes:
        dL/dmu_i    = -2 w_i + 2 p w_i + 2c (E mu)_i
        dL/dw_i     = -2 mu_i + 2 p mu_i + 2cd mu_i (E (mu o w))_i,   E = exp(d w w^T).
    """
    omega, mu = np.asarray(omega, dtype=float), np.asarray(mu, dtype=float)
    c, d = setting.c, setting.d
    kernel = np.exp(d * np.outer(omega, omega))
    p = np.sum(np.abs(mu * omega))
    size_mu = 2 * np.abs(omega) * (1 + p) + 2 * c * kernel @ np.abs(mu)
    size_omega = 2 * np.abs(mu) * (1 + p) + 2 * c * d * np.abs(mu) * (kernel @ np.abs(mu * omega))
    scale = 8 * (len(omega) + 4) * EPS
    return scale * size_omega, scale * size_mu


def _loss_rounding(omega, mu, setting):
    """A bound on the rounding error of `approximate_loss` (and of a closed form near it)."""
    omega, mu = np.asarray(omega, dtype=float), np.asarray(mu, dtype=float)
    p = np.sum(np.abs(mu * omega))
    quadratic = np.abs(mu) @ np.exp(setting.d * np.outer(omega, omega)) @ np.abs(mu)
    terms = 1 + setting.sigma2 + 2 * p + p * p + setting.c * quadratic
    return 8 * (len(omega) + 4) * EPS * terms


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

    BFGS may report "precision loss" on the flat (within-group) directions, so the result
    is judged by where it stopped (`_group_sum_bound`), not by result.success.
    """
    start = np.random.default_rng(seed).normal(size=len(omega))
    result = minimize(
        lambda mu: float(approximate_loss(omega, mu, setting)),
        start,
        jac=lambda mu: approximate_loss_grad(omega, mu, setting)[1],
        method="BFGS",
        options={"gtol": 1e-10},
    )
    return result.x


def _group_sum_bound(omega, mu, groups, setting):
    """Bounds on |group sums of mu - those of the minimisers| and on L(mu) - min L, from the stop.

    For fixed omega, Ltilde is exactly quadratic in mu with the constant Hessian
    A = 2 (w w^T + c E), E = exp(d w w^T), and gradient g = A mu - 2w. Heads of one group
    have equal omega, so equal rows of A: A = S^T B S with S the group-sum matrix (G x H) and
    B = 2 (v v^T + c exp(d v v^T)) over the G distinct values v, which is positive definite
    (exp(d x y) is a strictly positive definite kernel on distinct points). Hence the null
    space of A is exactly the within-group exchanges (S N = 0, checked below), every
    minimiser has the same group sums, and, exactly,
        S mu - S mu_min = S A^+ g,        L(mu) - min L = g^T A^+ g / 2.
    The only error of these numbers is rounding: that of g (`_gradient_rounding`, carried
    through |S A^+|) and that of A^+ g itself (relative cond(A on its range) eps <= 1e-11
    here); the factor 2 covers the latter many times over. Near-collinear heads (a dummy
    head next to small omegas) make the smallest positive eigenvalue of A small (~5e-5 at
    omega = 0.1), so a stop at |g| ~ 1e-9 leaves group sums ~1e-6 off: the bound follows.
    """
    H = len(omega)
    g = approximate_loss_grad(omega, mu, setting)[1]
    A = approximate_loss_hessian(omega, mu, setting)[H:, H:]
    np.testing.assert_allclose(
        A, 2 * (np.outer(omega, omega) + setting.c * np.exp(setting.d * np.outer(omega, omega)))
    )
    eigenvalues, vectors = np.linalg.eigh(A)
    S = np.array([group.astype(float) for group in groups])
    nulls = H - len(groups)  # the within-group exchanges; the G positive eigenvalues are B's
    assert np.all(np.abs(eigenvalues[:nulls]) < 1e-12 * eigenvalues[-1]), eigenvalues
    assert eigenvalues[nulls] > 1e-8 * eigenvalues[-1], eigenvalues  # a clear gap
    assert np.abs(S @ vectors[:, :nulls]).max(initial=0.0) < 1e-12  # they keep group sums
    inverse = (vectors[:, nulls:] / eigenvalues[nulls:]) @ vectors[:, nulls:].T  # A^+
    rounding = np.abs(S @ inverse) @ _gradient_rounding(omega, mu, setting)[1]
    sums = 2 * (np.abs(S @ inverse @ g) + rounding)
    loss = 2 * (g @ inverse @ g / 2) + _loss_rounding(omega, mu, setting)
    return sums, loss


PATTERNS = [(1, 1, -1), (1, -1, 0), (1, 1, -1, -1, 0), (1, -1, -1, 0, 0)]


@pytest.mark.parametrize(
    "pattern", PATTERNS, ids=lambda p: "".join({1: "p", -1: "m", 0: "0"}[s] for s in p)
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
    signs = [s for s in (1, -1, 0) if np.any(pattern == s)]
    groups = [pattern == s for s in signs]
    group_sums = np.array([mu[group].sum() for group in groups])
    expected = np.array([{1: mu_star, -1: -mu_star, 0: 0.0}[s] for s in signs])
    bound, loss_bound = _group_sum_bound(omega_vec, mu, groups, setting)
    # the stop decides the group sums to 1e-5 of mu*, or this check could not tell much
    assert np.all(bound <= 1e-5 * mu_star), (bound, mu_star)
    error = np.abs(group_sums - expected)
    assert np.all(error <= bound), (error, bound)
    assert abs(approximate_loss(omega_vec, mu, setting) - manifold_loss(omega, setting)) <= (
        loss_bound
    )
    # and it has teeth: a mu* off by 3e-5 (relative) is refused, since that error is at least
    # 3e-5 mu* - bound >= 2e-5 mu* > bound
    assert np.any(np.abs(group_sums - expected * (1 + 3e-5)) > bound)


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


@pytest.mark.parametrize("kappa", [0.01, 0.1375, 1.0, 5.0])
@pytest.mark.parametrize("u_top", [0.1, 0.2, 0.5, 1.0])
def test_step_decrement_slope_bias_bounds_the_exact_decrements_slope(kappa, u_top):
    # The step's shortfall from 1/(1+kappa), written out from (4.1) as in the test above:
    # C = kappa (g - 1) / ((1 + kappa)(1 + kappa g)), g = sinh(u)/u, u = d omega^2. Its decrements
    # along geometric grids of 4 to 30 points ending at u_top, least-squares slope against the
    # lower omega of each pair: within the bound of 4, and the bound under 2.7 u_top^2.
    d = 5
    setting = Setting(d=d, L=int(round(d * 1.1 / kappa)) or 1, sigma2=0.1)
    kappa = setting.kappa  # the nearest kappa an integer L gives
    bias = step_decrement_slope_bias(u_top, setting)
    for low, points in ((0.5, 4), (0.1, 8), (0.02, 30)):
        omega = np.geomspace(low, 1.0, points) * np.sqrt(u_top / d)
        g = np.sinh(d * omega**2) / (d * omega**2)
        shortfall = kappa * (g - 1) / ((1 + kappa) * (1 + kappa * g))
        slope = np.polyfit(np.log(omega[:-1]), np.log(np.diff(shortfall)), 1)[0]
        assert abs(slope - 4.0) <= bias
    assert bias < 2.7 * u_top**2


@pytest.mark.parametrize("setting", SETTINGS, ids=str)
def test_manifold_mu_is_odd_decreasing_and_infinite_at_zero(setting):
    omega = np.linspace(1e-3, 2.0, 200)
    mu = manifold_mu(omega, setting)
    assert np.all(np.diff(mu) < 0)
    np.testing.assert_allclose(manifold_mu(-omega, setting), -mu, rtol=1e-15)
    assert manifold_mu(0.0, setting) == np.inf
    np.testing.assert_allclose(2 * omega * mu, effective_learning_rate(omega, setting), rtol=1e-14)


def _one_head_bound(omega, mu, setting):
    """Bounds on |(omega, mu) - the minimiser| (componentwise) and on L - min L, from the stop.

    One head: z = (omega, mu), g the gradient and H the (positive definite) Hessian at z.
    With z* the minimiser, g = Hbar (z - z*), Hbar the mean Hessian on the segment [z*, z],
    so z - z* = Hbar^-1 g and, with eps = |Hbar - H| / lambda_min(H) < 1,
        |(z - z*) - H^-1 g| <= eps / (1 - eps) |H^-1 g|.
    eps is measured as |H(z - H^-1 g) - H(z)| / lambda_min (the Hessian at the predicted
    minimiser; ~1e-8 here) and must be < 0.1, or the quadratic model is not to be trusted.
    The bound is twice the step plus that model term plus the rounding of g through |H^-1|
    (the factor 2 is margin); L(z) - L(z*) = g^T Hbar^-1 g / 2, bounded likewise.
    """
    g_omega, g_mu = approximate_loss_grad([omega], [mu], setting)
    g = np.array([g_omega[0], g_mu[0]])
    hessian = approximate_loss_hessian([omega], [mu], setting)
    lowest = np.linalg.eigvalsh(hessian)[0]
    assert lowest > 0, hessian
    inverse = np.linalg.inv(hessian)
    step = inverse @ g
    moved = approximate_loss_hessian([omega - step[0]], [mu - step[1]], setting)
    eps = np.linalg.norm(moved - hessian, 2) / lowest
    assert eps < 0.1, eps
    model = eps / (1 - eps) * np.linalg.norm(step)
    rounding = np.abs(inverse) @ np.concatenate(_gradient_rounding([omega], [mu], setting))
    where = 2 * (np.abs(step) + model + rounding)
    loss = 2 * (g @ step / 2) / (1 - eps) + _loss_rounding([omega], [mu], setting)
    return where, loss


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
    # the nested stops leave (omega, mu) a Newton step from the minimiser: |error| <= bound
    (omega_bound, mu_bound), loss_bound = _one_head_bound(outer.x, mu, setting)
    assert omega_bound < 1e-6 * opt.omega and mu_bound < 1e-6 * opt.mu  # precise enough to tell
    assert abs(opt.omega - outer.x) <= omega_bound
    assert abs(opt.mu - mu) <= mu_bound
    assert abs(opt.loss - loss) <= loss_bound
    # and it has teeth: an omega* or mu* off by 3e-6 (relative) is refused
    assert abs(opt.omega * (1 + 3e-6) - outer.x) > omega_bound
    assert abs(opt.mu * (1 + 3e-6) - mu) > mu_bound
    assert opt.loss <= loss + 4e-16  # the closed form is the minimum, up to one rounding of ~0.4
    assert approximate_loss([opt.omega], [opt.mu], setting) == pytest.approx(opt.loss, rel=1e-14)
