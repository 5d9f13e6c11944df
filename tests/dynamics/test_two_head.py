"""The two-head flow of Appendix B: symmetry (Def. B.1), reduced ODE (B.4), phases I-III."""

import math

import numpy as np
import pytest
from icl_verify.dynamics import (
    Event,
    ODESolver,
    SaveAt,
    TwoHeadField,
    equal_ratio_peak,
    gradient_flow,
    lambert_peak_bound,
    naive_late_omega,
    opposite_heads,
    perturbed_flow_ends,
    perturbed_starts,
    phase_one_end,
    symmetric_init,
    symmetric_start_flows,
    two_head_flow,
    two_head_phases,
)
from icl_verify.theory import Setting, approximate_loss_grad, manifold_mu
from scipy.optimize import brentq

SETTING = Setting(d=5, L=40, sigma2=0.1)
TIGHT = ODESolver(rtol=1e-12, atol=1e-14)


def test_full_flow_from_symmetric_start_stays_on_the_symmetric_subspace():
    """Ltilde(omega, mu) = Ltilde(-P omega, -P mu) (P swaps heads), so the 4-D flow keeps
    omega_2 = -omega_1, mu_2 = -mu_1; numerically up to rounding (~1e-12), and it equals (B.4)."""
    omega0, mu0 = symmetric_init(1e-3)
    saveat = SaveAt(np.linspace(0.0, 50.0, 501))
    full = gradient_flow(omega0, mu0, SETTING, (0.0, 50.0), TIGHT, saveat)
    assert np.max(np.abs(full.omega.sum(axis=1))) < 1e-12
    assert np.max(np.abs(full.mu.sum(axis=1))) < 1e-12
    reduced = two_head_flow(1e-3, SETTING, (0.0, 50.0), TIGHT, saveat)
    # both solves carry local errors ~ rtol = 1e-12 amplified by Phase I growth e^{2t} <= e^8
    np.testing.assert_allclose(reduced.omega, full.omega, rtol=1e-8, atol=1e-12)
    np.testing.assert_allclose(reduced.mu, full.mu, rtol=1e-8, atol=1e-12)


def test_reduced_field_is_minus_the_gradient_restricted_to_the_subspace():
    """(B.4) from -grad Ltilde of theory at (w, -w), (m, -m): identity up to rounding."""
    rng = np.random.default_rng(0)
    w, m = rng.uniform(-0.8, 0.8, 50), rng.uniform(-5.0, 5.0, 50)
    grad_omega, grad_mu = approximate_loss_grad(
        np.stack([w, -w], -1), np.stack([m, -m], -1), SETTING
    )
    d_omega, d_mu = TwoHeadField(SETTING).velocity(w, m)
    np.testing.assert_allclose(d_omega, -grad_omega[:, 0], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(d_mu, -grad_mu[:, 0], rtol=1e-12, atol=1e-12)


def test_smaller_start_only_shifts_time_by_half_log_ten():
    """Phase I is linear (omega = mu = eps e^{2t}), so eps -> eps/10 delays everything by
    (1/2) ln 10; the nonlinearity at the start is O(eps^2) = 1e-6 relative."""
    peak = Event("peak", lambda t, y: TwoHeadField(SETTING).rhs(t, y)[0], direction=-1)
    times = [
        two_head_flow(eps, SETTING, (0.0, 10.0), TIGHT, SaveAt([0.0, 10.0]), (peak,))
        .events["peak"].t[0]
        for eps in (1e-3, 1e-4)
    ]  # fmt: skip
    assert times[1] - times[0] == pytest.approx(0.5 * math.log(10.0), abs=1e-4)


@pytest.fixture(scope="module")
def phases():
    return two_head_phases(SETTING, eps=1e-3, t_end=1e6)


def test_late_time_rates_follow_the_valley_floor_law(phases):
    """Along the valley mu = 1/(2(1+kappa) omega), the reduced loss is
    inf + kappa d^2 w^4 / (6 (1+kappa)^2) and arclength ds = dw / (2 (1+kappa) w^2); the
    flow d w/dt = -(1/2) dR/dw (dw/ds)^2 integrates to omega = (8 kappa d^2 t)^{-1/6}:
    slopes -1/6 and +1/6 (tolerance 0.01, reference acceptance test), omega(t_end) within 1%
    (the law drops O(t0 / t) and O(d omega^2) corrections, both < 1% at t = 1e6)."""
    assert phases.late_slope_omega == pytest.approx(-1 / 6, abs=0.01)
    assert phases.late_slope_mu == pytest.approx(1 / 6, abs=0.01)
    t_end = phases.trajectory.t[-1]
    valley_law = (8 * SETTING.kappa * SETTING.d**2 * t_end) ** (-1 / 6)
    assert phases.trajectory.omega[-1, 0] == pytest.approx(valley_law, rel=0.01)


def test_product_tends_to_the_debiased_gd_step(phases):
    """(4.8): 2 omega mu* = 1/(1 + kappa sinhc(d omega^2)) -> 1/(1+kappa) as omega -> 0."""
    assert phases.product_limit == pytest.approx(1 / (1 + SETTING.kappa), abs=1e-3)


def test_peak_obeys_its_condition_and_bounds(phases):
    """d omega/dt = 0 <=> 2 r w^2 (1 + kappa cosh(d w^2)) = 1 with r = mu/omega >= 1, so the
    peak is the root of that equation at the measured r, below the r = 1 root and below
    the Lambert-W bound sqrt(W(L/(1+sigma2))/d)."""
    kappa, d = SETTING.kappa, SETTING.d
    r = phases.peak_mu / phases.peak_omega
    assert r >= 1.0

    def condition(w):
        return 2 * r * w * w * (1 + kappa * math.cosh(d * w * w)) - 1

    def slope(w):  # > 0 on (0, 1): one root
        return 4 * r * w * (1 + kappa * math.cosh(d * w * w)) + 4 * r * kappa * d * w**3 * (
            math.sinh(d * w * w)
        )

    root = brentq(condition, 0.0, 1.0)
    # Tolerance from where the two stops lie: each is |condition| / slope (a Newton step) from
    # the exact root, doubled (the slope changes by ~1e-14 relative over that distance), plus
    # the rounding of condition (a few eps times its terms, ~2) over the slope.
    rounding = 16 * np.finfo(float).eps * 2.0
    bound = 2 * sum((abs(condition(w)) + rounding) / slope(w) for w in (phases.peak_omega, root))
    assert bound < 1e-9  # precise enough to tell (typically ~1e-14)
    assert abs(phases.peak_omega - root) <= bound
    assert phases.peak_omega <= equal_ratio_peak(SETTING) <= lambert_peak_bound(SETTING)
    # the peak comes after Phase I ends
    assert phases.phase_one_end < phases.peak_time


def test_phase_one_growth_and_end(phases):
    """omega = eps e^{2t} (B.5) up to the log deficit: d ln omega/dt = 2 - 4 (1+kappa) omega^2
    + O(omega^4) integrates to -(1+kappa)(omega^2 - eps^2). T1 within 5% of the
    leading-order prediction (it neglects mu/omega - 1 and O(omega^4))."""
    path = phases.trajectory
    early = path.t <= 1.0
    deficit = np.log(path.omega[early, 0] / (1e-3 * np.exp(2 * path.t[early])))
    predicted = -(1 + SETTING.kappa) * (path.omega[early, 0] ** 2 - 1e-3**2)
    np.testing.assert_allclose(deficit, predicted, atol=1e-7)  # next term O(omega^4) < 1e-8
    # the fitted rate: 2 up to the correction 4 (1+kappa) omega^2 <= 4 (1+kappa)(eps e^2)^2
    assert phases.growth_rate == pytest.approx(
        2.0, abs=4 * (1 + SETTING.kappa) * (1e-3 * math.e**2) ** 2
    )
    t1, _ = phase_one_end(SETTING, 1e-3)
    assert phases.phase_one_end == pytest.approx(t1, rel=0.05)


def test_peak_features(phases):
    """At the peak event d omega/dt = 0 exactly, i.e. 2 mu w (1 + kappa cosh(d w^2)) = 1 up to
    the event's location (100 rtol); t_peak = (1/2) ln(omega_max/eps) + O(1) (B.15)."""
    assert abs(phases.peak_residual) <= 100 * 1e-10
    assert phases.peak_time_offset == phases.peak_time - 0.5 * math.log(phases.peak_omega / 1e-3)
    assert abs(phases.peak_time_offset) <= 1.0


def test_naive_two_timescale_law_is_contradicted(phases):
    """(B.18)'s omega ~ t^{-1/2} is not what the integrated ODE does: the late slope is 1/3 away
    from -1/2, and omega(t_end) is orders of magnitude above (2 A t_end)^{-1/2}."""
    assert abs(phases.late_slope_omega - (-0.5)) > 0.3
    assert phases.omega_end > 30 * float(naive_late_omega(SETTING, phases.trajectory.t[-1]))
    assert phases.omega_end == phases.trajectory.omega[-1, 0]


def test_features_are_the_attributes_by_their_keys(phases):
    """`features()` is a view of the attributes: its keys are `FEATURES`', stable names."""
    features = phases.features()
    assert list(features) == list(phases.FEATURES)
    assert all(features[key] == getattr(phases, key) for key in features)


def test_bad_inputs():
    with pytest.raises(ValueError, match="eps must be a finite number > 0, got -1"):
        symmetric_init(-1)
    with pytest.raises(ValueError, match="t_end must be a finite number >= 1e4"):
        two_head_phases(SETTING, t_end=10.0)


def test_mu_lags_mu_star_by_the_slow_manifold_amount():
    """Why (B.18) fails: on the slow manifold d mu/dt = 4 (w^2 + c sinh u)(mu* - mu) must equal
    the drift d mu/dt = mu / (6 t) of the t^{1/6} law, so mu/mu* - 1 = -1/(24 t w^2 (1+kappa))
    to leading order; the neglected terms are O(d w^2) relative."""
    path = two_head_flow(1e-3, SETTING, (0.0, 1e6), TIGHT, SaveAt(np.geomspace(1e4, 1e6, 20)))
    w, mu, t = path.omega[:, 0], path.mu[:, 0], path.t
    lag = mu / manifold_mu(w, SETTING) - 1
    predicted = -1 / (24 * t * w**2 * (1 + SETTING.kappa))
    assert np.all(np.abs(lag / predicted - 1) < SETTING.d * w**2)


def test_symmetric_start_flows_agree_to_the_solver_accuracy():
    """The full flow from Def. B.1 stays symmetric and is (B.4): both gaps are solver error, so
    they shrink with the tolerance (1e-6 -> 1e-10) and sit near rtol at rtol = 1e-10."""
    tight = symmetric_start_flows(SETTING, 1e-3, 50.0, rtol=1e-10)
    loose = symmetric_start_flows(SETTING, 1e-3, 50.0, rtol=1e-6)
    assert tight.asymmetry <= 1e-9 and tight.reduced_gap <= 1e-9
    assert tight.reduced_gap < loose.reduced_gap
    np.testing.assert_array_equal(tight.full.t, tight.reduced.t)


def test_perturbed_starts_scale_each_coordinate_of_def_b1():
    """Each coordinate is (eps, -eps, eps, -eps) times an independent 1 + U(-a, a): the factors
    lie in the band, have mean 1 and variance a^2/3 (checked to 5 SE over 4000 draws), and the
    seed fixes them."""
    starts = perturbed_starts(1e-3, 0.1, 1000, seed=3)
    factors = starts / (np.array([1.0, -1.0, 1.0, -1.0]) * 1e-3)
    assert np.all(np.abs(factors - 1) <= 0.1)
    assert abs(factors.mean() - 1) < 5 * 0.1 / math.sqrt(3 * 4000)
    assert factors.var() == pytest.approx(0.01 / 3, rel=0.1)
    np.testing.assert_array_equal(starts, perturbed_starts(1e-3, 0.1, 1000, seed=3))


def test_perturbed_flow_ends_are_equivariant_and_a_same_sign_start_stays_same_sign():
    """Ltilde is invariant under swapping the heads, so the flow from the swapped start ends at
    the swapped end state; a start with omega_1 = omega_2, mu_1 = mu_2 stays on that diagonal and
    never ends with opposite heads."""
    start = perturbed_starts(1e-3, 0.1, 1, seed=0)
    swapped = start[:, [1, 0, 3, 2]]
    same_sign = np.full((1, 4), 1e-3)
    ends = perturbed_flow_ends(np.concatenate([start, swapped, same_sign]), SETTING, 300.0)
    np.testing.assert_allclose(ends[1], ends[0][[1, 0, 3, 2]], rtol=1e-5)
    assert opposite_heads(ends).tolist() == [True, True, False]
    assert ends[2, 0] == pytest.approx(ends[2, 1], rel=1e-6)


def test_phase_one_ratio_follows_its_growing_forcing_not_the_quasi_static_balance():
    """mu/omega - 1 on the integrated (B.4) is kappa u^3/(12 d) (forcing (4/3) c u^3 over the
    restoring rate 4 plus its growth rate 12) to a relative 2(1+kappa) omega^2 + u^2/10 at
    u <= 0.1; the quasi-static balance (forcing / 4, three times larger) is far outside."""
    from icl_verify.dynamics import ODESolver, SaveAt, phase_one_ratio_excess, two_head_flow

    setting, eps = Setting(d=5, L=40, sigma2=0.1), 1e-3
    times = np.linspace(0.0, 5.0, 4001)
    path = two_head_flow(eps, setting, (0.0, 5.0), solver=ODESolver(rtol=1e-12, atol=1e-14),
                         saveat=SaveAt(times))  # fmt: skip
    omega = np.sqrt(np.array([0.05, 0.075, 0.1]) / setting.d)
    excess = np.interp(omega, path.omega[:, 0], path.mu[:, 0] / path.omega[:, 0] - 1)
    law = phase_one_ratio_excess(setting, omega)
    allowed = 2 * (1 + setting.kappa) * omega**2 + (setting.d * omega**2) ** 2 / 10
    assert np.all(np.abs(excess / law - 1) <= allowed)
    assert np.all(np.abs(excess / (4 * law) - 1) > 0.5)  # the quasi-static value: rejected


@pytest.mark.parametrize("d, L", [(400, 3200), (1600, 12800)])  # HE-B-PHASE2's paper sizes
def test_the_equal_ratio_root_at_a_large_d_solves_its_condition(d, L):
    """At d = 1600 cosh(d w^2) overflows float64 inside the bracket; the root, where d w^2 is
    small, must still solve 2 w^2 (1 + kappa cosh(d w^2)) = 1: brentq stops within xtol +
    rtol |w| (1e-14 + 4 eps |w|) of the root, so the residual is at most the condition's slope
    times that, plus the rounding of evaluating it (a few eps)."""
    setting = Setting(d=d, L=L, sigma2=0.1)
    w = equal_ratio_peak(setting)
    kappa = setting.kappa
    residual = 2 * w * w * (1 + kappa * math.cosh(d * w * w)) - 1
    slope = 4 * w * (1 + kappa * math.cosh(d * w * w)) + 4 * kappa * d * w**3 * math.sinh(d * w * w)
    eps = np.finfo(float).eps
    assert 0 < d * w * w < 700 and abs(residual) <= slope * (1e-14 + 4 * eps * w) + 4 * eps
