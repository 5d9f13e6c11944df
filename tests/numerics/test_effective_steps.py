"""numerics.effective_steps: the least-squares step of a model on debiased one-step GD recovers
the step of a model built to be debiased GD, and its delta-method SE is the spread over seeds."""

import math

import numpy as np
import pytest
from icl_verify.numerics.effective_steps import fitted_pattern_steps, fitted_steps

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
