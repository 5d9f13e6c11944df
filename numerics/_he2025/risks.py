"""Monte Carlo risks of one-step GD and of the Bayes predictor, He et al. (2025) §4.3, Thm 4.2(iii).

What the claims HE-4.3-RISK and HE-T4.2iii measure, in float64 on the data model of §2:

- `one_step_gd_risks`: the risks of one-step GD and debiased GD (4.11) at several steps,
  all on the same prompts; `debiasing_gap`, how far the two predictors lie apart;
- `proportional_limit`: the Bayes (posterior-mean) and tuned debiased GD risks at several d
  with d/L fixed, extrapolated to d -> inf (`extrapolate_in_dimension`), with their ratios.

Every predictor here is linear in the labels, so the Monte Carlo averages the exact
conditional risk given the covariates (`LinearInLabels`). The steps come as arguments:
nothing here imports `theory`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch
from icl_verify.numerics._core.estimators import bayes_prediction, gd_prediction
from icl_verify.numerics._core.montecarlo import (
    LinearInLabels,
    MonteCarloEstimate,
    monte_carlo_losses,
)

from icl_verify.settings import Setting

__all__ = [
    "OneStepRisks",
    "ProportionalLimit",
    "debiasing_gap",
    "extrapolate_in_dimension",
    "one_step_gd_risks",
    "proportional_limit",
]


@dataclass(frozen=True, eq=False)
class OneStepRisks:
    """Monte Carlo risks E(y_hat - y_q)^2 of one-step GD and debiased GD at steps `eta`.

    Attributes:
        eta: (K,) the steps.
        gd, gd_se: (K,) one-step GD risks and their standard errors.
        dgd, dgd_se: (K,) debiased GD (4.11) risks and their standard errors.
    """

    eta: np.ndarray
    gd: np.ndarray
    gd_se: np.ndarray
    dgd: np.ndarray
    dgd_se: np.ndarray


def one_step_gd_risks(
    steps, setting: Setting, n_prompts: int, *, seed: int, device=None
) -> OneStepRisks:
    """Risks of one-step GD and debiased GD (4.11) at every step, on the same prompts, float64.

    Args:
        steps: the steps eta, shape (K,).
        setting: d, L, sigma2 of the data model.
        n_prompts: prompts (>= 2); seed (>= 0) and device as in `monte_carlo_losses`.

    >>> from icl_verify.settings import Setting
    >>> risks = one_step_gd_risks([0.8], Setting(d=5, L=40, sigma2=0.1), 8192, seed=1)
    >>> exact = 1.1 - 2 * 0.8 + 0.8**2 * 46.5 / 40  # 1 + sigma2 - 2 eta + eta^2 (L+D+1)/L
    >>> bool(abs(risks.gd[0] - exact) < 4 * risks.gd_se[0]), bool(risks.dgd_se[0] < 0.002)
    (True, True)
    """
    steps = np.asarray(steps, dtype=float)
    predictors = {}
    for k, eta in enumerate(steps):
        for name, debiased in (("gd", False), ("dgd", True)):
            predictors[f"{name}_{k}"] = LinearInLabels(
                lambda p, eta=float(eta), debiased=debiased: gd_prediction(
                    p.X, p.y, p.x_query, eta, debiased=debiased
                )
            )
    joint = monte_carlo_losses(
        predictors, setting, n_prompts, seed=seed, device=device, dtype=torch.float64
    )
    means, errors = {}, {}
    for name in ("gd", "dgd"):
        estimates = [joint[f"{name}_{k}"] for k in range(steps.size)]
        means[name] = np.array([e.mean for e in estimates])
        errors[name] = np.array([e.stderr for e in estimates])
    return OneStepRisks(steps, means["gd"], errors["gd"], means["dgd"], errors["dgd"])


def debiasing_gap(
    eta: float, setting: Setting, n_prompts: int, *, seed: int, device=None
) -> MonteCarloEstimate:
    """Monte Carlo E(y_hat_dGD(eta) - y_hat_GD(eta))^2: the mean square of the difference of
    debiased GD (4.11) and one-step GD at the step ``eta`` (§HE-4.11: they coincide as
    d/L -> 0), float64. It is the loss (2.5) of the predictor ``y_q + y_hat_GD - y_hat_dGD``,
    so the shared Monte Carlo (`monte_carlo_losses`: blocks, seeds, SE) measures it.

    >>> gap = debiasing_gap(1.0, Setting(d=5, L=40, sigma2=0.1), 8192, seed=1)
    >>> bool(abs(gap.mean - 7.5 / 40**2) < 4 * gap.stderr)  # eta^2 (D + 2) / L^2, D = 5.5
    True
    """

    def shifted(p):  # (n,): the query's label plus the gap, whose loss is the gap squared
        gd = gd_prediction(p.X, p.y, p.x_query, eta)
        return p.y_query + gd - gd_prediction(p.X, p.y, p.x_query, eta, debiased=True)

    joint = monte_carlo_losses(
        {"gap": shifted}, setting, n_prompts, seed=seed, device=device, dtype=torch.float64
    )
    return joint["gap"]


def extrapolate_in_dimension(d_values, means, errors) -> tuple[float, float]:
    """Weighted least squares of risk(d) = R_inf + a/d; returns (R_inf, its standard error).

    Weights 1/SE^2; the SE of R_inf is sqrt of its entry of the inverse normal matrix.
    Needs at least two distinct d.

    >>> r, se = extrapolate_in_dimension([10, 20, 40], [1.1, 1.05, 1.025], [0.01, 0.01, 0.01])
    >>> round(r, 9), round(se, 4)
    (1.0, 0.0122)
    """
    design = np.stack([np.ones(len(d_values)), 1.0 / np.asarray(d_values, float)], axis=1)
    weights = 1.0 / np.asarray(errors, float) ** 2
    normal = design.T @ (weights[:, None] * design)
    covariance = np.linalg.inv(normal)
    coef = covariance @ design.T @ (weights * np.asarray(means, float))
    return float(coef[0]), float(math.sqrt(covariance[0, 0]))


@dataclass(frozen=True, eq=False)
class ProportionalLimit:
    """Bayes and tuned debiased GD risks at growing d with d/L fixed, and their d -> inf limits.

    Attributes:
        d: (n,) the dimensions.
        sigma2: the noise variance (the same at every d).
        bayes, bayes_se: (n,) Monte Carlo Bayes risks at each d and their SEs.
        gd, gd_se: (n,) Monte Carlo tuned debiased GD risks at each d and their SEs.
        bayes_limit, bayes_limit_se, gd_limit, gd_limit_se: the limits by
            `extrapolate_in_dimension` and their SEs.

    The ratios' SEs are a conservative delta method, |dr/dG| SE_G + |dr/dB| SE_B, valid
    whatever the correlation of the two limits.
    """

    d: np.ndarray
    sigma2: float
    bayes: np.ndarray
    bayes_se: np.ndarray
    gd: np.ndarray
    gd_se: np.ndarray
    bayes_limit: float
    bayes_limit_se: float
    gd_limit: float
    gd_limit_se: float

    @property
    def risk_ratio(self) -> tuple[float, float]:
        """R_GD / R_Bayes of the limits, and its SE."""
        gd, bayes = self.gd_limit, self.bayes_limit
        return gd / bayes, self.gd_limit_se / bayes + gd * self.bayes_limit_se / bayes**2

    @property
    def excess_ratio(self) -> tuple[float, float]:
        """(R_GD - sigma2) / (R_Bayes - sigma2) of the limits, and its SE."""
        gd, bayes, sigma2 = self.gd_limit, self.bayes_limit, self.sigma2
        se = (
            self.gd_limit_se / (bayes - sigma2)
            + (gd - sigma2) * self.bayes_limit_se / (bayes - sigma2) ** 2
        )
        return (gd - sigma2) / (bayes - sigma2), se


def proportional_limit(
    settings: Sequence[Setting], steps, n_prompts: int, *, seed: int, device=None
) -> ProportionalLimit:
    """Bayes and debiased GD risks at each setting, extrapolated to d -> inf (Thm 4.2(iii)).

    Args:
        settings: (d, L, sigma2) with one sigma2 and d/L fixed, d growing; at least two.
        steps: the debiased GD step at each setting (the tuned one), shape (n,).
        n_prompts: prompts per setting (>= 2).
        seed: setting j draws its prompts from seed (seed + j) mod 2^31.
        device: as in `monte_carlo_losses`.

    The Bayes predictor is the posterior mean, ridge with lambda = sigma2 d
    (`bayes_prediction`); both predictors of a setting see the same prompts.

    >>> from icl_verify.settings import Setting
    >>> settings = [Setting(d=d, L=4 * d, sigma2=0.5) for d in (4, 8)]
    >>> limit = proportional_limit(settings, [0.6, 0.6], 4096, seed=0)
    >>> bool(limit.bayes_limit < limit.gd_limit), bool(limit.risk_ratio[0] > 1)
    (True, True)
    """
    sigma2 = float(settings[0].sigma2)
    measured = {"bayes": ([], []), "gd": ([], [])}
    for j, (setting, eta) in enumerate(zip(settings, steps, strict=True)):
        predictors = {
            "bayes": LinearInLabels(
                lambda p, s=setting.sigma2: bayes_prediction(p.X, p.y, p.x_query, s)
            ),
            "gd": LinearInLabels(
                lambda p, eta=float(eta): gd_prediction(p.X, p.y, p.x_query, eta, debiased=True)
            ),
        }
        joint = monte_carlo_losses(
            predictors,
            setting,
            n_prompts,
            seed=(seed + j) % 2**31,
            device=device,
            dtype=torch.float64,
        )
        for name, (means, errors) in measured.items():
            means.append(joint[name].mean)
            errors.append(joint[name].stderr)
    d = np.array([s.d for s in settings])
    bayes, bayes_se = (np.array(v) for v in measured["bayes"])
    gd, gd_se = (np.array(v) for v in measured["gd"])
    return ProportionalLimit(
        d,
        sigma2,
        bayes,
        bayes_se,
        gd,
        gd_se,
        *extrapolate_in_dimension(d, bayes, bayes_se),
        *extrapolate_in_dimension(d, gd, gd_se),
    )
