"""Ltilde (He et al. 2025, eq. (4.1)) against the true loss of the attention predictor (3.2).

At a small-omega point of the two-head manifold S_omega (omega = 0.1, mu = +-mu*(0.1);
d = 5, sigma2 = 0.1) the Monte Carlo loss of

    y_hat = sum_h mu_h sum_i y_i softmax(omega_h x_i^T x_q)_i

exceeds Ltilde by a gap that shrinks like 1/L. The expected gap is derived below
(small-omega limit, exact at finite L); the Monte Carlo averages the exact risk given
(X, x_q), identity (*) of tests/theory/montecarlo_numpy.py, which is cross-checked here
against plain sampling of beta and the noise.
"""

import numpy as np
import pytest
from icl_verify.theory import Setting, approximate_loss, manifold_mu

from tests.theory import montecarlo_numpy as mc

D_DIM, SIGMA2, OMEGA = 5, 0.1, 0.1
PROMPTS = {40: 200_000, 160: 100_000}  # SE of the gap ~1.4% at L=40, ~2% at L=160


def _two_head(omega, setting):
    mu_star = float(manifold_mu(omega, setting))
    return [omega, -omega], [mu_star, -mu_star]


def _limit_gap(setting):
    """lim_{omega -> 0} (true loss - Ltilde) on S_omega = 1 / (L + D), derived here.

    With mu = +-eta / (2 omega): softmax(+-omega s)_i = (1 +- omega u_i) / L + O(omega^2),
    u_i = (x_i - xbar)^T x_q, so y_hat -> (eta / L) sum_i y_i u_i (debiased GD, (4.11)) and
    eta = 2 omega mu*(omega) -> 1 / (1 + kappa) = L / (L + D) by (4.8).
    Its risk, from identity (*) averaged over x_q with W = (eta / L) P X and
    G = X^T P X ~ Wishart_d(L - 1, I) (E tr G = (L-1) d, E tr G^2 = (L-1) d (L + d)):
        E ||(eta/L) G - I||_F^2 / d + sigma2 (eta/L)^2 E tr G + sigma2
        = 1 + sigma2 - 2 eta (L-1)/L + eta^2 (L-1)(L+D)/L^2 = sigma2 + (D+1)/(L+D) at eta = L/(L+D),
    while Ltilde on S_omega -> 1 + sigma2 - L/(L+D) = sigma2 + D/(L+D). The difference is 1/(L+D).
    """
    return 1.0 / (setting.L + setting.D)


def _gap(L, seed):
    setting = Setting(D_DIM, L, SIGMA2)
    omega, mu = _two_head(OMEGA, setting)
    rng = np.random.default_rng(seed)
    loss = mc.risk(mc.softmax_attention_weights(omega, mu), D_DIM, L, SIGMA2, rng, PROMPTS[L])
    return loss.mean - float(approximate_loss(omega, mu, setting)), loss.se


@pytest.fixture(scope="module")
def gaps():
    return {L: _gap(L, seed=L) for L in PROMPTS}


def test_gap_matches_the_small_omega_limit_at_each_length(gaps):
    for L, (gap, se) in gaps.items():
        expected = _limit_gap(Setting(D_DIM, L, SIGMA2))
        print(
            f"L={L}: MC - Ltilde = {gap:.5f} ± {se:.5f}; L (MC - Ltilde) = {L * gap:.3f}"
            f" ± {L * se:.3f}; derived 1/(L+D) = {expected:.5f} (L/(L+D) = {L * expected:.3f})"
        )
        assert abs(gap - expected) < 4 * se


def test_omega_point_is_inside_the_small_omega_limit(gaps):
    # The limit above is for omega -> 0; at omega = 0.1 the corrections are O(omega^2). Measured
    # directly: the paired difference of true losses at omega = 0.1 and omega = 0.01 (same prompts)
    # minus the change of Ltilde must be far below the MC error of the gap, else the test above
    # would compare with the wrong number.
    for L, (_, gap_se) in gaps.items():
        setting = Setting(D_DIM, L, SIGMA2)
        big, small = _two_head(OMEGA, setting), _two_head(OMEGA / 10, setting)
        shift = mc.risk(
            mc.softmax_attention_weights(*big),
            D_DIM,
            L,
            SIGMA2,
            np.random.default_rng(7),
            20_000,
            baseline=mc.softmax_attention_weights(*small),
        )
        ltilde_shift = float(approximate_loss(*big, setting) - approximate_loss(*small, setting))
        gap_shift = shift.mean - ltilde_shift
        print(f"L={L}: gap(omega=0.1) - gap(omega=0.01) = {gap_shift:.1e} ± {shift.se:.1e}")
        assert abs(gap_shift) + 4 * shift.se < gap_se


def test_gap_shrinks_like_one_over_l_plus_d(gaps):
    (gap_40, se_40), (gap_160, se_160) = gaps[40], gaps[160]
    ratio = gap_40 / gap_160
    ratio_se = ratio * np.hypot(se_40 / gap_40, se_160 / gap_160)  # delta method, independent runs
    D = Setting(D_DIM, 40, SIGMA2).D
    expected = (160 + D) / (40 + D)  # from the derived gap 1 / (L + D); pure 1/L would give 4
    print(
        f"gap(40)/gap(160) = {ratio:.3f} ± {ratio_se:.3f}; derived (160+D)/(40+D) = {expected:.3f}"
    )
    assert abs(ratio - expected) < 4 * ratio_se
    assert gap_160 > 0 and gap_40 > 3 * gap_160  # it does shrink, roughly like 1/L


def test_conditional_identity_agrees_with_plain_sampling():
    setting = Setting(D_DIM, 40, SIGMA2)
    weights = mc.softmax_attention_weights(*_two_head(OMEGA, setting))
    averaged = mc.risk(weights, D_DIM, 40, SIGMA2, np.random.default_rng(1), 50_000)
    plain = mc.plain_risk(weights, D_DIM, 40, SIGMA2, np.random.default_rng(2), 200_000)
    print(
        f"identity (*): {averaged.mean:.5f} ± {averaged.se:.5f};"
        f" plain: {plain.mean:.5f} ± {plain.se:.5f}"
    )
    assert abs(averaged.mean - plain.mean) < 4 * np.hypot(averaged.se, plain.se)
