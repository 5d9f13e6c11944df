"""Monte Carlo risks of one-step GD and the Bayes predictor (numerics._he2025.risks) against
formulas written out here from (4.11) of He et al. (2025), never through `theory`.

Exact risks at finite (d, L), D = d (1 + sigma2):
  GD   1 + sigma2 - 2 eta + eta^2 (L + D + 1)/L,
  dGD  1 + sigma2 - 2 eta (L - 1)/L + eta^2 (L - 1)(L + D)/L^2,
so debiased GD at its optimal step L/(L + D) has risk sigma2 + (D + 1)/(L + D): with d/L = xi
fixed that is the limit sigma2 + kappa/(1 + kappa) plus exactly a/d, the form the
extrapolation fits.
"""

import numpy as np
import pytest
from icl_verify.numerics import extrapolate_in_dimension, one_step_gd_risks, proportional_limit

from icl_verify.settings import Setting


def test_extrapolation_is_exact_for_a_limit_plus_a_over_d():
    d = np.array([8.0, 16.0, 32.0])
    limit, se = extrapolate_in_dimension(d, 0.25 + 0.7 / d, [1e-3, 2e-3, 4e-3])
    assert limit == pytest.approx(0.25, abs=1e-14)
    assert 1e-3 < se < 1e-2  # an SE of the intercept, larger than the best point's own


@pytest.mark.parametrize("d, L", [(5, 40), (2, 3)])
def test_one_step_risks_match_the_exact_finite_size_risks(d, L):
    sigma2, steps = 0.1, np.array([0.3, 0.8])
    D = d * (1 + sigma2)
    gd = 1 + sigma2 - 2 * steps + steps**2 * (L + D + 1) / L
    dgd = 1 + sigma2 - 2 * steps * (L - 1) / L + steps**2 * (L - 1) * (L + D) / L**2
    risks = one_step_gd_risks(steps, Setting(d=d, L=L, sigma2=sigma2), 16_384, seed=3)
    assert np.all(np.abs(risks.gd - gd) < 4 * risks.gd_se), (risks.gd, gd)
    assert np.all(np.abs(risks.dgd - dgd) < 4 * risks.dgd_se), (risks.dgd, dgd)


def test_proportional_limit_of_tuned_debiased_gd_is_its_exact_limit():
    xi, sigma2 = 0.25, 0.5
    settings = [Setting(d=d, L=round(d / xi), sigma2=sigma2) for d in (4, 8, 16)]
    steps = [s.L / (s.L + s.d * (1 + sigma2)) for s in settings]
    limit = proportional_limit(settings, steps, 4096, seed=0)
    for s, risk, se in zip(settings, limit.gd, limit.gd_se, strict=True):
        D = s.d * (1 + sigma2)
        assert abs(risk - (sigma2 + (D + 1) / (s.L + D))) < 4 * se
    kappa = xi * (1 + sigma2)
    assert abs(limit.gd_limit - (sigma2 + kappa / (1 + kappa))) < 4 * limit.gd_limit_se
    ratio, ratio_se = limit.risk_ratio
    assert ratio == pytest.approx(limit.gd_limit / limit.bayes_limit)
    assert ratio > 1 + 4 * ratio_se  # the Bayes predictor is strictly better
