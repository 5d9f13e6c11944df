"""The brute-force minimum of Ltilde over Theta_bar(omega) (dynamics.homogeneous_minimum).

Independent source: Theorem 4.2(ii) written out here, min = 1 + sigma2 - 1/(1 + c sinh(d w^2)/w^2)
with c = (1 + sigma2)/L, dummy group sum 0 and step 2 w mu*(w) = 1/(1 + kappa sinh(u)/u),
u = d w^2, kappa = c d. The optimiser's own bounds must contain the distance to it.
"""

import itertools

import numpy as np
import pytest
from icl_verify.dynamics import homogeneous_minimum, sign_patterns
from icl_verify.theory import Setting


@pytest.mark.parametrize("heads", [1, 3, 4])
def test_sign_patterns_are_every_pattern_but_all_dummy(heads):
    patterns = sign_patterns(heads)
    assert patterns.shape == (3**heads - 1, heads)
    assert len({tuple(p) for p in patterns.tolist()}) == 3**heads - 1
    every = set(itertools.product((1, -1, 0), repeat=heads)) - {(0,) * heads}
    assert {tuple(p) for p in patterns.tolist()} == every


@pytest.mark.parametrize("omega", [0.05, 0.3])
def test_four_heads_reach_the_closed_form_within_the_bounds(omega):
    d, L, sigma2 = 5, 40, 0.1
    c = (1 + sigma2) / L
    u = d * omega**2
    best = homogeneous_minimum(omega, 4, Setting(d, L, sigma2), np.random.default_rng(4), 1e-13)
    assert best.patterns == 80
    closed_form = 1 + sigma2 - 1 / (1 + c * np.sinh(u) / omega**2)
    assert abs(best.loss - closed_form) <= best.loss_error + 1e-15
    assert best.loss_error < 1e-12
    step = 1 / (1 + c * d * np.sinh(u) / u)
    assert abs(best.eta - step) <= best.eta_error + 1e-15
    assert best.dummy_share <= best.dummy_share_error + 1e-15
