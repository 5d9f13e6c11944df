"""HE-OBS1 of He et al. (2025), Section 3, Observation 1: the circuit pattern (3.1) of the heads.

HE-OBS1 (§3, (3.1)): each non-dummy head has ``KQ11 = omega_h I_d``, ``kq21 = 0``,
``ov21 = 0``, ``ov22 = mu_h`` and ``sign(omega_h) = sign(mu_h)``.

Read on the shared trained ensemble (terms and findings: `_observations`). Prediction: the
pattern. Measurement: `numerics.head_patterns` (the pattern read off the logged history, with
error bars from its noise and drift). Figures: `figures.observations` (Figures 1 and 3).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from icl_verify.validation.claim import Check, Claim, FigureRef, Reconstructed, Source, shifted
from icl_verify.validation.claims.he2025 import PAPER
from icl_verify.validation.claims.he2025._ensembles import (
    SharedEnsembleParams,
    check_trained_heads,
)
from icl_verify.validation.claims.he2025._observations import CIRCUIT_PATTERN
from icl_verify.validation.estimates import Estimate, Measurement, Prediction
from icl_verify.validation.paper_figures import PaperFigure
from icl_verify.validation.params import param
from icl_verify.validation.rules import Tolerance

from icl_verify import numerics


@dataclass(frozen=True, kw_only=True)
class Obs1Params(SharedEnsembleParams):
    """HE-OBS1: the circuit pattern (3.1) of every non-dummy head of the trained ensemble."""

    pattern_atol: float = param(
        help="allowed deviation of each head's circuit measures from the pattern (3.1)",
        low=0,
        low_open=True,
    )
    show_heads: tuple[int, ...] = param(
        (1, 2, 4), help="H of the members drawn (per H the lowest validation loss)", low=1,
        role="heads"
    )

    def validate(self) -> None:
        super().validate()
        check_trained_heads(self, "show_heads")


PRESETS_OBS1 = Obs1Params.presets(
    smoke=dict(pattern_atol=0.05),
    quick=dict(pattern_atol=0.05),
    paper=dict(pattern_atol=0.01),  # the reference's ~1% after 500k steps
)


def predict_obs1(params: Obs1Params) -> Prediction:
    """The pattern (3.1): diagonal KQ11 with equal entries, zero off-pattern blocks, signs match."""
    return Prediction(values={**CIRCUIT_PATTERN, "sign_product": 1.0})


def measure_obs1(params: Obs1Params, runtime) -> Measurement:
    """`numerics.head_patterns` of every non-dummy head of single-head and paired members.

    Each circuit measure is its end value with the error of `numerics.settled_value` toward the
    pattern's value (plus Adam's noise floor on the RMS-type measures); the sign product is
    exact.
    """
    ensemble = runtime.trained(params.training())
    kinds = numerics.member_kinds(ensemble)
    heads = numerics.head_patterns(ensemble, np.flatnonzero(kinds.pattern), toward=CIRCUIT_PATTERN)
    values = {
        name: Estimate(heads.value[name], heads.error[name], "bound") for name in CIRCUIT_PATTERN
    }
    values["sign_product"] = Estimate(heads.sign_product, 0.0, "bound")
    shown = [numerics.representative(ensemble, h) for h in params.show_heads]
    KQ, OV = ensemble.circuits()
    steps = ensemble.steps
    early = numerics.logged_steps(steps, steps[-1] / 10, 4)
    return Measurement(
        values=values,
        figure_data={
            "KQ": KQ[shown],
            "OV": OV[shown],
            # Figure 1 (b): the shown members' circuits at early logged steps (up to T/10)
            "early_steps": steps[early].astype(float),
            "early_KQ": ensemble.KQ_history[early][:, shown],  # (k, M, H, D, D)
            "early_OV": ensemble.OV_history[early][:, shown],
            "shown_heads": ensemble.heads[shown].astype(float),
            "shown_members": np.array(shown, dtype=float),
            "head_member": heads.member.astype(float),
            "heads": ensemble.heads.astype(float),
            "excluded_trapped": kinds.trapped.astype(float),
            "steps": float(ensemble.steps[-1]),
        },
    )


def checks_obs1(params: Obs1Params) -> tuple[Check, ...]:
    atol = params.pattern_atol
    why = (
        f"The reference's rule (§HE-OBS1) is about 1% after the authors' 500k Adam steps (their "
        f"H=2 model: diagonal energy 0.99926, last-entry OV energy 0.99994). The off-pattern "
        f"entries change the loss only at second order near the pattern, so Adam removes them "
        f"slowly, and Adam's noise floor on them grows with the learning rate; this preset "
        f"trains {params.steps} steps at lr {params.lr:g} and holds every non-dummy head to "
        f"{atol:g} (the paper preset: 0.01). Error bar (settled_value): the drift plus noise "
        f"over the last quarter of the logs; a head still converging toward the pattern reads "
        f"inconclusive, not contradicted. The spread and off-pattern RMS also carry Adam's "
        f"noise floor √d·SD(ω_h)/|ω_h|."
    )
    rule = Tolerance(why, atol=atol)
    return (
        Check("diagonality", rule, "‖diag KQ11‖² / ‖KQ11‖²_F (per head)"),
        Check("diagonal_spread", rule, "std(diag KQ11) / |ω_h| (per head)"),
        Check("kq_off_pattern", rule, "RMS(off-diag KQ11, kq21) / RMS(diag KQ11) (per head)"),
        Check("ov_off_pattern", rule, "RMS(ov21) / |ov22| (per head)"),
        Check(
            "sign_product",
            Tolerance(
                "A sign: +1 when sign(ω_h) = sign(μ_h), −1 otherwise; one mismatched "
                "head (discrepancy 2) contradicts the claim.",
                atol=0.5,
            ),
            "sign(ω_h) sign(μ_h) (per head)",
        ),
    )


CLAIM_OBS1 = Claim(
    id="HE-OBS1",
    source=Source(
        PAPER,
        "3, Obs. 1",
        "(3.1)-(3.2)",
        Reconstructed(
            "(3.1), the pattern KQ11 = ω_h I_d, kq21 = 0, ov21 = 0, ov22 = μ_h", "HE-OBS1", "RECON"
        ),
    ),
    statement="After training, every non-dummy head of single-head and paired members has "
    "KQ11 = ω_h I_d, kq21 = 0, ov21 = 0, ov22 = μ_h and sign(ω_h) = sign(μ_h) (members trapped "
    "with same-sign heads are counted in HE-OBS2).",
    params=Obs1Params,
    presets=PRESETS_OBS1,
    predict=predict_obs1,
    measure=measure_obs1,
    checks=checks_obs1,
    figure=FigureRef("icl_verify.figures.observations", "figure_obs1"),
    wrong=shifted(
        "sign_product",
        lambda sign: -sign,
        why="Anti-matched signs, sign(ω_h) = −sign(μ_h): a discrepancy of 2 per head, 4 times "
        "the absolute tolerance 0.5.",
    ),
    summary="trained KQ is diagonal, OV reads the last entry, heads sign-matched",
    catalogue=(2, 1),
    paper_figures=(
        PaperFigure(
            1,
            ("HE-OBS1", "HE-OBS4"),
            FigureRef("icl_verify.figures.paper", "figure_1"),
            "two-head model: trained KQ (full (d+1)² heat map) and OV last row per head, "
            "diagonal / last-entry patterns and opposite heads; plus their early-training "
            "evolution (sign matching, zero sum)",
            "(a) KQ and OV last row of the trained two-head member (lowest validation loss); "
            "(b) the same circuits at early logged steps; (c) ω_h(t), μ_h(t) and μ₁+μ₂ over "
            "the early steps",
        ),
        PaperFigure(
            3,
            ("HE-OBS1",),
            FigureRef("icl_verify.figures.paper", "figure_3"),
            "the same heat maps for H = 1 (one head, ω ≈ 1/√d) and H = 4 (positive, negative "
            "and dummy heads)",
            "KQ and OV last row per head of the trained H = 1 and H = 4 members (lowest "
            "validation loss per H)",
        ),
    ),
)

CLAIMS = (CLAIM_OBS1,)
