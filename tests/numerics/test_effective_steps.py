"""numerics._he2025.effective_steps: the least-squares step of a model on debiased one-step GD
recovers
the step of a model built to be debiased GD, and its delta-method SE is the spread over seeds."""

import math

import numpy as np
import pytest
from icl_verify.numerics import (
    JointMonteCarloEstimate,
    extrapolated_pattern_steps,
    fitted_pattern_steps,
    fitted_steps,
    relative_mse,
)
from icl_verify.theory import kernel_mean_step

D_COV, L, SIGMA2, ETA = 5, 40, 0.1, 0.85


@pytest.mark.parametrize("length", [None, 100])
def test_the_softmax_pair_at_small_omega_has_the_step_2_omega_mu(pattern_ensemble, length):
    # The pair (omega, mu), (-omega, -mu) is debiased GD with eta = 2 omega mu plus a remainder r
    # of RMS <= eta omega^2 d^{3/2} sqrt((1 + sigma2) / (6 L')) (reference §HE-T4.2i: measured
    # 0.79-0.83 times this at d = 5, L' = 40..640). The fit estimates eta + E[r g] / E[g^2], and
    # by Cauchy-Schwarz |E[r g]| / E[g^2] <= RMS(r) / RMS(g), with E[g^2] >= ((L'-1)/L')^2 E[(beta^T
    # x_q)^2] = ((L'-1)/L')^2 (E[g | beta, x_q] = (L'-1)/L' beta^T x_q). Tolerance: that bound plus
    # 4 SE. Both omegas in one ensemble: two members, one forward pass.
    omegas = np.array([0.01, 0.02])
    ensemble = pattern_ensemble(
        np.stack([omegas, -omegas], 1), np.stack([ETA / (2 * omegas), -ETA / (2 * omegas)], 1),
        d=D_COV, L=L, sigma2=SIGMA2,
    )  # fmt: skip
    steps = fitted_steps(ensemble, [0, 1], n_prompts=8192, seed=1, length=length)
    n = L if length is None else length
    remainder = ETA * omegas**2 * D_COV**1.5 * math.sqrt((1 + SIGMA2) / (6 * n))
    bound = remainder / ((n - 1) / n) + 4 * steps.stderr
    assert np.all(np.abs(steps.value - ETA) < bound)
    assert steps.value.shape == steps.stderr.shape == (2,) and steps.n == 8192


def test_the_standard_error_is_the_spread_over_independent_seeds(pattern_ensemble):
    # 40 independent estimates (seeds 0..39) of three members (a pair at omega = 0.3, where the
    # remainder is large; a single head; a pair at omega = 0.01, where the fit is nearly exact
    # and the ratio's covariance terms carry the SE): their sample SD over the mean reported SE
    # has a relative SD of about sqrt((kurtosis - 1) / (4 * 39)) < 0.16 (measured excess kurtosis
    # of the estimates <= 2), so it must lie in [0.6, 1.5] (about 3 SD).
    ensemble = pattern_ensemble(
        [[0.3, -0.3], [0.45, 0.0], [0.01, -0.01]], [[1.5, -1.5], [1.6, 0.0], [42.5, -42.5]],
        d=D_COV, L=L, sigma2=SIGMA2,
    )  # fmt: skip
    runs = [fitted_steps(ensemble, [0, 1, 2], n_prompts=4096, seed=s) for s in range(40)]
    values = np.array([r.value for r in runs])  # (40, 3)
    stderr = np.array([r.stderr for r in runs])
    ratio = values.std(axis=0, ddof=1) / stderr.mean(axis=0)
    assert np.all((0.6 < ratio) & (ratio < 1.5)), ratio


def test_bad_arguments_are_refused_in_one_line(pattern_ensemble):
    ensemble = pattern_ensemble([[0.1, -0.1]], [[4.0, -4.0]], d=2, L=8)
    for kwargs, message in [
        (dict(members=[1]), "members must be a non-empty list of indices in 0..0"),
        (dict(members=[]), "members must be a non-empty list"),
        (dict(members=[0], length=0), "length must be an integer in 1..100000"),
        (dict(members=[0], length=2.5), "length must be an integer in 1..100000"),
        (dict(members=[0], n_prompts=1), "n_prompts must be an integer >= 2"),
    ]:
        members = kwargs.pop("members")
        with pytest.raises(ValueError, match=message):
            fitted_steps(ensemble, members, **{"n_prompts": 64, **kwargs})


def test_pattern_steps_of_softmax_pairs_are_two_omega_mu():
    """Two softmax heads (omega, mu), (-omega, -mu) are debiased GD with step 2 omega mu up to
    O(omega^2) terms whose projection on the GD direction vanishes for Gaussian scores (He et
    al. (4.10)): at omega = 0.02 the fit is 1 within 4 SE plus the 0.2 omega^2 bias bound."""
    steps = fitted_pattern_steps(
        [0.02, 0.02], [25.0, 12.5], attention="softmax", d=5, L=40, sigma2=0.1, n_prompts=8192
    )
    np.testing.assert_array_less(np.abs(steps.value - [1.0, 0.5]), 4 * steps.stderr + 1e-3)


def test_pattern_steps_refuse_mismatched_parameters():
    with pytest.raises(ValueError, match="omega and mu must be finite 1-D arrays"):
        fitted_pattern_steps(
            [0.1, 0.2], [1.0], attention="tanh", d=2, L=8, sigma2=0.1, n_prompts=64
        )


def test_the_extrapolation_in_one_over_l_is_richardsons_of_two_independent_fits():
    # value = (L2 eta2 - L1 eta1) / (L2 - L1) of the fits at L1 (seed 3) and L2 (seed 4);
    # the SEs of the independent fits combine in quadrature with the same weights.
    kwargs = dict(attention=("softmax", "tanh"), d=3, sigma2=0.1, n_prompts=2048)
    steps = extrapolated_pattern_steps(
        [0.3, 0.3], [5 / 3, 5 / 3], lengths=(20, 60), seeds=(3, 4), **kwargs
    )
    fits = [
        fitted_pattern_steps([0.3, 0.3], [5 / 3, 5 / 3], L=n, seed=s, **kwargs)
        for n, s in ((20, 3), (60, 4))
    ]
    np.testing.assert_allclose(steps.value, (60 * fits[1].value - 20 * fits[0].value) / 40)
    np.testing.assert_allclose(steps.stderr, np.hypot(0.5 * fits[0].stderr, 1.5 * fits[1].stderr))
    assert steps.n == 2048


def test_the_extrapolated_step_is_the_kernel_mean_where_the_fit_at_finite_l_is_not():
    # At omega = 0.3 the fitted step at L differs from its L -> infinity limit, the kernel mean
    # (theory.kernel_mean_step, exact quadrature), by c/L; Richardson in 1/L leaves O(1/L^2).
    # The extrapolation from L = 50, 100 agrees with the kernel mean within 4 SE; the fit at
    # L = 50 alone is off by many SE (c/L ~ 1e-2).
    omega, mu = np.array([0.3, 0.3]), np.array([5 / 3, 5 / 3])
    specs = ("softmax", "quadratic:1")
    kwargs = dict(attention=specs, d=5, sigma2=0.1, n_prompts=65_536)
    steps = extrapolated_pattern_steps(omega, mu, lengths=(50, 100), seeds=(0, 1), **kwargs)
    kernel = np.array([kernel_mean_step(s, 0.3, 5 / 3, 5) for s in specs])
    np.testing.assert_array_less(np.abs(steps.value - kernel), 4 * steps.stderr)
    short = fitted_pattern_steps(omega, mu, L=50, seed=0, **kwargs)
    assert np.all(np.abs(short.value - kernel) > 4 * short.stderr)


def test_relative_mse_is_the_ratio_of_means_with_the_paired_se():
    covariance = np.array([[0.5, 0.3], [0.3, 0.4]])
    losses = JointMonteCarloEstimate(("m@8", "b@8"), np.array([0.9, 0.6]), covariance, n=50)
    ratio, se = relative_mse(losses, "m", "b", [8])
    assert ratio[0] == pytest.approx(0.9 / 0.6, rel=1e-14)
    assert se[0] == pytest.approx(math.sqrt((0.5 + 0.4 - 0.6) / 50) / 0.6, rel=1e-14)
    same, zero = relative_mse(losses, "b", "b", [8])
    assert same[0] == 1.0 and zero[0] == 0.0
