"""HE-5.1-LIN of He et al. (2025) §5.1: trained linear attention is one step of GD at its optimum.

HE-5.1-LIN (5.1): one-head linear attention, trained online at length L, reaches the
one-step GD optimum: KQ11 = omega I, OV last row (0, ..., 0, mu), and the step it applies,
gamma = omega mu (its predictor is (gamma/L) sum_i y_i x_i^T x_q), equals eta_GD*(L) =
L/(L+D+1) (reference §HE-4.3-RISK); its test risk is the optimal GD risk.

Prediction: `theory.optimal_gd`. Measurement: `numerics.read_linear_members` on the trained
linear members (`_linear_attention`, shared with HE-5.1-LENGTH). Figure:
`figures.linear_attention`.
"""

from __future__ import annotations

from dataclasses import dataclass

from icl_verify.validation.claim import Check, Claim, FigureRef, Source, shifted
from icl_verify.validation.claims.he2025 import PAPER
from icl_verify.validation.claims.he2025._ensembles import (
    EnsembleParams,
)
from icl_verify.validation.claims.he2025._linear_attention import (
    LinearMembers,
    linear_training,
)
from icl_verify.validation.claims.he2025._reconstructed import LINEAR_ATTENTION
from icl_verify.validation.estimates import Estimate, Measurement, Prediction
from icl_verify.validation.params import param
from icl_verify.validation.rules import Tolerance, ZScore

from icl_verify import numerics, theory


@dataclass(frozen=True, kw_only=True)
class LinearParams(LinearMembers, EnsembleParams):
    """HE-5.1-LIN: one-head linear-attention members trained online, read at the end."""

    n_prompts: int = param(help="Monte Carlo prompts of the test risk at L", low=2, role="count")

    def trainings(self) -> tuple[numerics.EnsembleTraining]:
        return (linear_training(self),)


LINEAR_OWN = dict(
    smoke=dict(linear_members=2, n_prompts=4096),
    quick=dict(linear_members=3, n_prompts=65_536),
    paper=dict(linear_members=4, n_prompts=200_000),
)
PRESETS_LIN = LinearParams.presets(**LINEAR_OWN)


def predict_lin(params: LinearParams) -> Prediction:
    optimum = theory.optimal_gd(params.setting)
    return Prediction(
        values={
            "step": optimum.eta,
            "kq_off_pattern": 0.0,
            "ov_off_pattern": 0.0,
            "risk": optimum.risk,
        },
        figure_data={"eta_gd": optimum.eta, "risk_gd": optimum.risk},
    )


def measure_lin(params: LinearParams, runtime) -> Measurement:
    """The learned step and pattern and the Monte Carlo test risk (`numerics.read_linear_members`).

    γ = ω μ (ω = mean diag KQ11, μ = the OV entry (D, D)), where training
    settles: `numerics.settled_mean`, the last-quarter mean of the logs with its drift plus
    batch-means SE (the final snapshot fluctuates around it with Adam's noise, SD ~0.014 at
    lr 3e-3, which the test risk at L barely feels: +2e-4). The
    pattern measures are `numerics.summarize_circuits`' off-pattern RMS ratios at the end.
    """
    ensemble = runtime.trained(*params.trainings())
    members = numerics.read_linear_members(
        ensemble,
        n_prompts=params.n_prompts,
        seed=runtime.seed_for("prompts"),
        device=runtime.device,
        progress=runtime.show_progress,
    )
    return Measurement(
        values={
            "step": Estimate(members.step, members.step_error),
            "kq_off_pattern": Estimate(members.kq_off_pattern, 0.0, "bound"),
            "ov_off_pattern": Estimate(members.ov_off_pattern, 0.0, "bound"),
            "risk": Estimate(members.risk, members.risk_se),
        },
        figure_data={
            "log_steps": ensemble.steps.astype(float),
            "step_history": members.step_history,
            "KQ": members.KQ,
            "OV": members.OV,
        },
    )


def checks_lin(params: LinearParams) -> tuple[Check, ...]:
    pattern = (
        "Structural limit 0: the one-step GD optimum is Γ = η I with OV last row "
        "(0, ..., 0, 1) up to the scale split, and every other KQ/OV entry only adds variance. "
        "atol 0.05 is the reference's 5% agreement rule of the trained patterns (§HE-OBS1)."
    )
    return (
        Check(
            "step",
            Tolerance(
                f"The loss of (5.1) as a function of Γ = γ I is exactly the vanilla-GD "
                f"risk (§HE-4.3-RISK), minimised at η_GD* = L/(L+D+1): no approximation, so "
                f"only the optimiser's stopping point is allowed: step_atol = "
                f"{params.step_atol:g} (the risk is flat there: +1e-4 at 0.01 off), plus the "
                f"error bar: the drift and batch-means SE of the last-quarter mean.",
                atol=params.step_atol,
            ),
            "learned step γ = ω μ vs η_GD*(L) (per member)",
        ),
        Check("kq_off_pattern", Tolerance(pattern, atol=0.05), "KQ off-pattern RMS / diagonal"),
        Check("ov_off_pattern", Tolerance(pattern, atol=0.05), "OV off-pattern RMS / |μ|"),
        Check(
            "risk",
            ZScore(
                "Exact optimal GD risk against the Monte Carlo test risk of each trained member: "
                "Monte Carlo error, plus the optimiser's excess ((γ − η*)² (L+D+1)/L ≤ 1.2e-4 "
                "at step_atol 0.01, under 0.1 SE). Resolution 5% of the risk.",
                max_z=4.0,
                rel_resolution=0.05,
            ),
            "test MSE at L vs R_GD* (per member)",
        ),
    )


CLAIM_LIN = Claim(
    id="HE-5.1-LIN",
    source=Source(PAPER, "5.1", "(5.1)", LINEAR_ATTENTION),
    statement="One-head linear attention trained at prompt length L learns KQ11 = ω I and OV last "
    "row (0, ..., 0, μ) with step γ = ω μ = η_GD*(L) = L/(L+D+1): one step of GD at its optimum, "
    "with the optimal GD test risk.",
    params=LinearParams,
    presets=PRESETS_LIN,
    predict=predict_lin,
    measure=measure_lin,
    checks=checks_lin,
    figure=FigureRef("icl_verify.figures.linear_attention", "figure_lin"),
    wrong=shifted(
        "step",
        lambda eta: eta + 0.02,
        why="The debiased step L/(L+D) in place of the vanilla one: 0.019 off, twice the step "
        "tolerance step_atol.",
    ),
    summary=(
        "trained one-head linear attention: KQ11 = ω I, step ω μ = L/(L+D+1), optimal "
        "GD risk"
    ),
    catalogue=(6, 1),
)

CLAIMS = (CLAIM_LIN,)
