"""statistics.replicate_mean: the error bar of a mean over training replicates covers what it says.

Replicates are drawn as a trained measurement is: value_r = theta + a_r (the seed's offset,
SD tau) + the Monte Carlo error of the test prompts (SD m), shared by the replicates (the same
prompts) or not. Over many such experiments, |mean - theta| <= z x stderr must hold as often
as z exact normal SEs cover, 2 Phi(z) - 1: exactly where the t interval is exact (no Monte
Carlo error), at least that often where the bar errs on the wide side (the Monte Carlo part).
"""

import numpy as np
import pytest
from scipy.stats import norm

from icl_verify.statistics import replicate_mean

EXPERIMENTS = 20_000


def _coverage(R: int, tau: float, m: float, shared: bool, z: float, seed: int) -> float:
    rng = np.random.default_rng(seed)
    seeds = tau * rng.standard_normal((R, EXPERIMENTS))  # (R, N)
    noise = m * rng.standard_normal((1 if shared else R, EXPERIMENTS))
    values = seeds + noise  # theta = 0
    result = replicate_mean(values, np.full_like(values, m), shared_draws=shared, z=z)
    return float(np.mean(np.abs(result.value) <= z * result.stderr))


@pytest.mark.parametrize("R", [2, 3, 5])
@pytest.mark.parametrize("z", [1.0, 2.0])
def test_seeds_alone_cover_exactly_as_z_normal_ses(R, z):
    """No Monte Carlo error: the bar is the t interval, whose coverage is exact; 4 binomial SEs."""
    nominal = 2 * norm.cdf(z) - 1
    coverage = _coverage(R, tau=1.0, m=0.0, shared=True, z=z, seed=R)
    assert abs(coverage - nominal) <= 4 * np.sqrt(nominal * (1 - nominal) / EXPERIMENTS)


@pytest.mark.parametrize("shared", [True, False])
@pytest.mark.parametrize("m", [0.3, 1.0, 3.0])
def test_with_monte_carlo_error_the_bar_covers_at_least_as_z_normal_ses(shared, m):
    """Seeds and Monte Carlo together (R = 3, z = 1): never short of the nominal coverage by
    more than 4 binomial SEs, shared prompts or independent ones."""
    nominal = 2 * norm.cdf(1.0) - 1
    coverage = _coverage(3, tau=1.0, m=m, shared=shared, z=1.0, seed=int(10 * m) + shared)
    assert coverage >= nominal - 4 * np.sqrt(nominal * (1 - nominal) / EXPERIMENTS)


def test_without_the_t_factor_two_replicates_cover_too_little():
    """The competing reading, s / sqrt(R) as if exact: with R = 2 one SE covers about 50%, not
    68% (t_0.841(1) = 1.84): the factor is what makes the bar honest."""
    rng = np.random.default_rng(0)
    values = rng.standard_normal((2, EXPERIMENTS))
    result = replicate_mean(values)
    naive = float(np.mean(np.abs(result.value) <= result.seeds))
    assert naive < 0.55 and float(np.min(result.t_factor)) == pytest.approx(1.8373, abs=1e-3)


def test_one_replicate_has_no_spread_to_read():
    assert np.isinf(replicate_mean([[0.5, 0.6]], [[0.01, 0.01]]).stderr).all()


@pytest.mark.parametrize("bad", [dict(values=[]), dict(values=3.0), dict(values=[1.0], z=0.0)])
def test_bad_input_names_the_parameter(bad):
    with pytest.raises(ValueError, match=r"^(values|z) must"):
        replicate_mean(**bad)
