"""Phase portrait of (B.4): the sampled field vanishes on the nullclines; flows reach the valley."""

import numpy as np
import pytest
from icl_verify.dynamics import TwoHeadField, phase_portrait
from icl_verify.theory import Setting, manifold_mu

SETTING = Setting(d=5, L=40, sigma2=0.1)


@pytest.fixture(scope="module")
def portrait():
    return phase_portrait(SETTING, resolution=9, t_end=1e4)


def test_field_vanishes_on_both_nullclines(portrait):
    field = TwoHeadField(SETTING)
    d_omega, _ = field.velocity(portrait.curve_omega, portrait.omega_nullcline_mu)
    _, d_mu = field.velocity(portrait.curve_omega, portrait.mu_nullcline_mu)
    # relative to the size of the terms that cancel (2 mu and 2 omega): rounding only
    assert np.max(np.abs(d_omega) / (2 * portrait.omega_nullcline_mu)) < 1e-12
    assert np.max(np.abs(d_mu) / (2 * portrait.curve_omega)) < 1e-12
    np.testing.assert_allclose(portrait.mu_nullcline_mu, manifold_mu(portrait.curve_omega, SETTING))


def test_grid_field_is_the_reduced_field(portrait):
    i, j = 3, 5
    d_omega, d_mu = TwoHeadField(SETTING).rhs(0.0, np.array([portrait.omega[j], portrait.mu[i]]))
    assert portrait.d_omega[i, j] == d_omega and portrait.d_mu[i, j] == d_mu
    assert portrait.omega[0] == pytest.approx(1e-3) and portrait.omega[-1] == pytest.approx(1.0)


def test_every_trajectory_ends_in_the_valley_below_its_start_loss(portrait):
    """Gradient flow lowers Ltilde; from every start in the quadrant it reaches mu = mu*(omega)
    (slow-manifold lag 1/(24 t w^2 (1+kappa)) < 1e-2 at t = 1e4 for w < 0.2)."""
    for path in portrait.trajectories:
        w, mu = path.omega[-1, 0], path.mu[-1, 0]
        assert path.loss[-1] < path.loss[0]
        assert w < 0.2
        assert mu / manifold_mu(w, SETTING) == pytest.approx(1.0, abs=1e-2)


def test_bad_ranges_raise():
    with pytest.raises(ValueError, match="omega_range must satisfy 0 < low < high"):
        phase_portrait(SETTING, omega_range=(0.0, 1.0))
    with pytest.raises(ValueError, match="resolution must be an integer >= 2"):
        phase_portrait(SETTING, resolution=1)
