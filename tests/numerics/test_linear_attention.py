"""numerics._he2025.linear_attention: one-head linear attention on the GD pattern is vanilla GD with
the step omega mu, frozen at its training 1/L; its Monte Carlo risks against the exact ones of
`theory` (He et al. §5.1, reference §HE-5.1-LIN, §HE-5.1-LENGTH)."""

import dataclasses

import numpy as np
import pytest
from icl_verify.numerics import learned_steps, linear_vs_softmax_by_test_length, read_linear_members
from icl_verify.theory import (
    Setting,
    debiased_gd_risk,
    frozen_linear_attention_risk,
    gd_risk,
    optimal_gd,
)

D_COV, L, SIGMA2 = 5, 40, 0.1
SETTING = Setting(D_COV, L, SIGMA2)


def _with_logs(ensemble, gamma_logs, omega):
    """The ensemble with a logged history whose one-head member e has omega and step
    gamma_logs[:, e] (mu = gamma / omega): what `learned_steps` and `settled_mean` read."""
    n = gamma_logs.shape[0]
    return dataclasses.replace(
        ensemble,
        steps=np.arange(1, n + 1) * 10,
        omega=np.full((n, gamma_logs.shape[1], 1), omega),
        mu=(gamma_logs / omega)[..., None],
        test_loss=np.zeros((n, gamma_logs.shape[1])),
    )


def test_the_learned_step_is_omega_mu_and_settles_at_the_last_quarter_mean(pattern_ensemble):
    eta = optimal_gd(SETTING).eta  # L / (L + D + 1)
    ensemble = pattern_ensemble([[0.5], [2.0]], [[eta / 0.5], [0.4]], d=D_COV, L=L,
                                attention="linear")  # fmt: skip
    np.testing.assert_allclose(learned_steps(ensemble), [[eta, 0.8]])
    # logs: a transient, then eta +- 0.01 alternating: the settled step is eta, its error the
    # batch-means SE of an alternating series (0 for even batches) plus the drift (0)
    logs = np.full((80, 2), eta) + 0.01 * (-1.0) ** np.arange(80)[:, None]
    logs[:20] = 0.3
    members = read_linear_members(_with_logs(ensemble, logs, 0.5), n_prompts=16_384, seed=1)
    np.testing.assert_allclose(members.step, [eta, eta], atol=1e-12)
    np.testing.assert_allclose(members.step_error, 0.0, atol=1e-12)
    assert members.step_history.shape == (80, 2)
    np.testing.assert_allclose(members.kq_off_pattern, 0.0, atol=1e-7)  # the exact pattern
    np.testing.assert_allclose(members.ov_off_pattern, 0.0, atol=1e-7)
    # the risk is that of vanilla GD at the final circuits' step (gamma = omega mu)
    exact = gd_risk(np.array([eta, 0.8]), SETTING)
    assert np.all(np.abs(members.risk - exact) < 4 * members.risk_se), (members.risk, exact)
    assert members.KQ.shape == members.OV.shape == (2, D_COV + 1, D_COV + 1)


def test_linear_attention_keeps_its_frozen_risk_and_the_pair_tracks_debiased_gd(
    pattern_ensemble,
):
    # The linear member at eta*(L) tested at L' is GD with the frozen step L' eta*(L) / L: its
    # exact risk is theory.frozen_linear_attention_risk, lowest near L + (D+1)/2 and rising
    # after. The softmax pair at omega = 0.01 is debiased GD at 2 omega mu to O(omega^2); the
    # single head (second head 0) renormalises too. All on the same nested prompts; every
    # configuration twice (identical seeds: no spread, the Monte Carlo SE alone).
    eta, eta_d = optimal_gd(SETTING).eta, optimal_gd(SETTING, debiased=True).eta
    linear = pattern_ensemble([[1.0], [1.0]], [[eta], [eta]], d=D_COV, L=L, attention="linear")
    single, pair = [0.45, 0.0], [0.01, -0.01]
    softmax = pattern_ensemble(
        [single, single, pair, pair], [[1.6, 0.0]] * 2 + [[50 * eta_d, -50 * eta_d]] * 2,
        d=D_COV, L=L,
    )  # fmt: skip
    lengths = [10, 40, 43, 100]
    result = linear_vs_softmax_by_test_length(
        linear, softmax, ([0, 1], [2, 3]), lengths, debiased_step=eta_d, rise_from=43,
        n_prompts=16_384, seed=2,
    )  # fmt: skip
    frozen = frozen_linear_attention_risk(np.array(lengths), SETTING)
    assert np.all(np.isfinite(result.linear_se))
    assert np.all(np.abs(result.linear_mean - frozen) < 4 * result.linear_se)
    rise = frozen[3] - frozen[2]
    assert result.linear_rise == pytest.approx(rise, abs=4 * result.linear_rise_se)
    assert result.linear_rise > 1.0  # at L' = 100 the frozen step overshoots
    assert result.measured_argmin == 43.0
    # the pair: fitted step 2 omega mu = eta_d, and the MSE ratio to dGD at the given step (here
    # the same) is 1 + O(omega^2)
    assert result.fitted.value[0] == pytest.approx(eta_d, abs=4 * result.fitted.stderr[0] + 1e-3)
    gap = np.abs(result.two_head_ratio - 1.0)
    assert np.all(gap < 4 * result.two_head_ratio_se + 1e-3), gap
    dgd = debiased_gd_risk(eta_d, Setting(D_COV, 100, SIGMA2))
    dgd_mean, dgd_se = result.curves["dGD"]
    assert dgd_mean[3] == pytest.approx(dgd, abs=4 * dgd_se[3])
    assert np.all(result.softmax_gain > 4 * result.softmax_gain_se)  # both improve with L'
    assert set(result.curves) == {"H1", "H2", "dGD", "dGDfit", "Bayes"}


def test_the_seeds_spread_is_in_the_error_bar(pattern_ensemble):
    """Two linear members whose steps differ by 4% (as Adam's noise leaves final snapshots): the
    mean is that of their exact frozen risks, and its SE holds their spread with the t factor of
    two seeds (1.84 at one SE), far above the Monte Carlo SE of the shared prompts."""
    eta = optimal_gd(SETTING).eta
    steps = np.array([0.98, 1.02]) * eta
    linear = pattern_ensemble([[1.0], [1.0]], steps[:, None], d=D_COV, L=L, attention="linear")
    softmax = pattern_ensemble([[0.45, 0.0], [0.01, -0.01]], [[1.6, 0.0], [44.0, -44.0]],
                               d=D_COV, L=L)  # fmt: skip
    lengths = [40, 100]
    result = linear_vs_softmax_by_test_length(
        linear, softmax, ([0], [1]), lengths, debiased_step=0.88, rise_from=40, n_prompts=8192,
        seed=3,
    )  # fmt: skip
    exact = np.array(
        [[gd_risk(g * n / L, Setting(D_COV, n, SIGMA2)) for n in lengths] for g in steps]
    )  # (2, n): GD with the frozen step g L'/L
    half_spread = np.abs(exact[0] - exact[1]) / 2
    assert np.all(result.linear_se >= 1.8 * 0.9 * half_spread)
    assert np.all(np.abs(result.linear_mean - exact.mean(axis=0)) < result.linear_se)
    assert np.all(np.isinf(result.softmax_gain_se))  # one seed per softmax configuration
