"""HE-OBS2 of He et al. (2025), Section 3, Observation 2, with HE-MAN part (ii): opposite heads.

HE-OBS2 (§3, (4.4)-(4.7)): two-head runs end at opposite heads; paired members have
homogeneous ``|omega_h|`` and zero-sum OV; and (HE-MAN part (ii), placed here because it reads
the same models) their group sums lie on the manifold: ``2 omega sum_+ mu = 2 omega |sum_- mu|
= 2 omega mu*(omega)``, which (4.8) puts at ``1/(1 + kappa)`` up to ``O(kappa d^2 omega^4)``.

Read on the shared trained ensemble (terms and findings: `_observations`). Prediction:
`theory.manifold_mu`. Measurements: `numerics.fractions_by_h` and `numerics.group_patterns`
(end values with error bars from the logs' noise and drift). Figure and tables (runs per H
with same-sign heads; paired members beside the paper's Table 1): `figures.observations`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from icl_verify.validation.claim import Check, Claim, FigureRef, Source, scaled
from icl_verify.validation.claims.he2025 import PAPER
from icl_verify.validation.claims.he2025._ensembles import (
    SharedEnsembleParams,
)
from icl_verify.validation.claims.he2025._observations import (
    ZERO_LIMITS,
    TypicalRunParams,
    exception_rule,
    opposite_head_checks,
)
from icl_verify.validation.claims.he2025._reconstructed import MANIFOLD
from icl_verify.validation.estimates import Estimate, Measurement, Prediction
from icl_verify.validation.params import ParameterError, param

from icl_verify import numerics, theory


def _multi_head_groups(params: SharedEnsembleParams) -> list[int]:
    """The trained H ≥ 2; ParameterError when there is none."""
    multi = sorted({h for h in params.heads if h >= 2})
    if not multi:
        raise ParameterError(f"heads must include a member with >= 2 heads, got {params.heads}")
    return multi


@dataclass(frozen=True, kw_only=True)
class Obs2Params(TypicalRunParams):
    """HE-OBS2 and HE-MAN (ii): the opposite-head pattern of the multi-head members."""

    omega_max: float = param(
        0.3,
        help="largest common KQ scale ω of a paired member: the manifold check allows "
        "the O(κ d² ω⁴) curvature term of (4.8) up to it",
        low=0,
        low_open=True,
    )

    def validate(self) -> None:
        super().validate()
        _multi_head_groups(self)


PRESETS_OBS2 = Obs2Params.presets(
    smoke={}, quick={}, paper={})


def predict_obs2(params: Obs2Params) -> Prediction:
    setting = params.setting
    fine = np.geomspace(0.03, 1.0, 300)
    return Prediction(
        values={"paired_fraction": 1.0, **ZERO_LIMITS, "manifold_eta": 1.0 / (1.0 + setting.kappa)},
        figure_data={"omega_fine": fine, "mu_star_fine": theory.manifold_mu(fine, setting)},
    )


def measure_obs2(params: Obs2Params, runtime) -> Measurement:
    """Fractions of paired members per H; per paired member the end values and their Adam noise.

    The error bar of an end-of-training value is its `numerics.settled_value` error (drift still
    under way plus the Adam noise), from `numerics.group_patterns`.
    """
    ensemble = runtime.trained(params.training())
    kinds = numerics.member_kinds(ensemble)
    fractions = numerics.fractions_by_h(ensemble.heads, kinds.paired)
    groups = numerics.group_patterns(ensemble, np.flatnonzero(kinds.paired), toward=ZERO_LIMITS)
    value, error = groups.value, groups.error
    return Measurement(
        values={
            "paired_fraction": Estimate(fractions.fraction, fractions.fraction_se),
            "homogeneity": Estimate(value["homogeneity"], error["homogeneity"]),
            "zero_sum": Estimate(value["zero_sum"], error["zero_sum"]),
            "manifold_eta": Estimate(
                np.concatenate([value["eta_plus"], value["eta_minus"]]),
                np.concatenate([error["eta_plus"], error["eta_minus"]]),
            ),
        },
        figure_data={
            "multi_heads": fractions.heads.astype(float),
            "counts": fractions.counts,
            "paired_counts": fractions.successes.astype(float),
            "binomial_se": fractions.fraction_se,  # Agresti-Coull: not 0 at 0/n or n/n
            "paired_heads": ensemble.heads[kinds.paired].astype(float),
            "dummy_heads": groups.dummy_heads.astype(float),
            "omega": value["omega"],
            "omega_error": error["omega"],
            "sum_plus": value["sum_plus"],
            "sum_minus": value["sum_minus"],
            "sum_plus_error": error["sum_plus"],
            "sum_minus_error": error["sum_minus"],
            "steps": float(ensemble.steps[-1]),
        },
    )


def table_obs2(params: Obs2Params, prediction: Prediction, measurement: Measurement) -> str:
    """Runs per H with opposite and with same-sign heads; each paired member's ω and group
    sums beside μ*(ω) (`theory.manifold_mu`) and Table 1's softmax column
    (`theory.PAPER_TABLE_1`), rendered by `figures.observations.table_obs2`."""
    from icl_verify.figures.observations import table_obs2 as render  # matplotlib: when recorded

    paper = theory.PAPER_TABLE_1["softmax"]
    omega = np.append(measurement.figure_data["omega"], paper[0])
    mu_star = theory.manifold_mu(omega, params.setting)
    return render(measurement, mu_star, paper, float(prediction.values["manifold_eta"]))


def checks_obs2(params: Obs2Params) -> tuple[Check, ...]:
    setting = params.setting
    return (
        Check(
            "paired_fraction",
            exception_rule(
                params.exception_rate,
                "runs with H ≥ 2 reaching opposite heads (4.7)",
                evidence="How often runs end trapped (same-sign heads acting as one head) is "
                "the finding (figure (a): fraction ± binomial SE): from random init the "
                "gradient flow on L̃ (dynamics side) ends trapped for 10 of 20 two-head seeds "
                "and none with H ≥ 4; Adam at lr 3e-3 left two-head seeds 3, 4 and 7 of 0..7 "
                "trapped after 20k steps (numerics side).",
            ),
            "fraction of members reaching opposite heads (per H ≥ 2)",
        ),
        *opposite_head_checks(setting, params.omega_max),
    )


CLAIM_OBS2 = Claim(
    id="HE-OBS2",
    source=Source(PAPER, "3, Obs. 2; 4.2", "(4.4)-(4.8)", MANIFOLD),
    statement="Runs with H ≥ 2 reach opposite heads (two-head runs: (ω, μ), (−ω, −μ)); their "
    "non-dummy heads share |ω_h|, their OV weights sum to zero, and (HE-MAN (ii)) the group sums "
    "lie on the manifold: 2ωΣ₊μ = −2ωΣ₋μ = 2ωμ*(ω) ≈ 1/(1+κ).",
    params=Obs2Params,
    presets=PRESETS_OBS2,
    predict=predict_obs2,
    measure=measure_obs2,
    checks=checks_obs2,
    figure=FigureRef("icl_verify.figures.observations", "figure_obs2"),
    table=table_obs2,
    wrong=scaled(
        "manifold_eta",
        2.0,
        why="2ωμ* doubled, a factor-2 slip between μ* and the group sum ‖μ‖₁ = 2μ*: 0.88 off, "
        "20 times the tolerance 1/L + curvature.",
    ),
    summary="H ≥ 2: homogeneous KQ, zero-sum OV, opposite heads; group sums at ±μ*(ω)",
    catalogue=(2, 2),
)

CLAIMS = (CLAIM_OBS2,)
