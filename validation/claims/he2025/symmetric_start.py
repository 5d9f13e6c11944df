"""HE-B-INIT of He et al. (2025), Appendix B, Def. B.1: the symmetric start stays symmetric.

HE-B-INIT: the symmetric start of Def. B.1 stays symmetric under the full 4-D flow of
Ltilde (4.1) and equals the reduced 2-D system (B.4); asymmetric starts end at opposite heads.

Prediction: exact symmetry. Measurement: the full flow from Def. B.1 and from perturbed starts
(`dynamics.symmetric_start_flows`, `dynamics.perturbed_flow_ends`). Time is the paper
convention (`_two_head`). Figure: `figures.dynamics`.
"""

from __future__ import annotations

from dataclasses import dataclass

from icl_verify.validation.claim import Check, Claim, FigureRef, Reconstructed, Source, scaled
from icl_verify.validation.claims.he2025 import PAPER
from icl_verify.validation.claims.he2025._two_head import (
    SymmetricStartParams,
)
from icl_verify.validation.estimates import Estimate, Measurement, Prediction
from icl_verify.validation.params import param
from icl_verify.validation.rules import Tolerance

from icl_verify import dynamics


@dataclass(frozen=True, kw_only=True)
class InitParams(SymmetricStartParams):
    """HE-B-INIT: the full 4-D flow from Def. B.1, and from starts perturbed entrywise."""

    init_t_end: float = param(
        50.0, help="horizon of the symmetric full-vs-reduced comparison", low=0, low_open=True
    )
    n_asymmetric: int = param(help="perturbed starts", low=1, role="count")
    asymmetry: float = param(
        0.1,
        help="each coordinate of Def. B.1 scaled by 1 + U(-a, a): the perturbation a",
        low=0,
        high=1,
        high_open=True,
    )
    asym_t_end: float = param(help="flow time of the perturbed starts", low=0, low_open=True)
    design_seed: int = param(
        22, help="seed of the perturbations (the setting, not --seed)", low=0, role="count"
    )


def predict_init(params: InitParams) -> Prediction:
    """Exact symmetry: zero asymmetry and zero full-vs-reduced gap; every asymmetric start ends
    with opposite heads (fraction 1)."""
    return Prediction({"asymmetry": 0.0, "reduced_gap": 0.0, "opposite_fraction": 1.0})


def measure_init(params: InitParams, runtime) -> Measurement:
    """Full 4-D flow from Def. B.1 against (B.4); full flows from perturbed starts."""
    flows = dynamics.symmetric_start_flows(params.setting, params.eps, params.init_t_end,
                                           params.rtol)  # fmt: skip
    full, reduced = flows.full, flows.reduced
    starts = dynamics.perturbed_starts(params.eps, params.asymmetry, params.n_asymmetric,
                                       params.design_seed)  # fmt: skip
    ends = dynamics.perturbed_flow_ends(starts, params.setting, params.asym_t_end)  # (n, 4)
    return Measurement(
        values={
            "asymmetry": Estimate(flows.asymmetry, 0.0, "bound"),
            "reduced_gap": Estimate(flows.reduced_gap, 0.0, "bound"),
            "opposite_fraction": Estimate(dynamics.opposite_heads(ends).mean(), 0.0, "bound"),
        },
        figure_data={
            "t": full.t, "omega_sum": full.omega.sum(axis=1), "mu_sum": full.mu.sum(axis=1),
            "omega": full.omega[:, 0], "mu": full.mu[:, 0],
            "reduced_omega": reduced.omega[:, 0], "reduced_mu": reduced.mu[:, 0],
            "asym_start": starts, "asym_end": ends,
        },
    )  # fmt: skip


def checks_init(params: InitParams) -> tuple[Check, ...]:
    tol = 10 * params.rtol
    return (
        Check("asymmetry", Tolerance(
            "L̃ is invariant under (ω, μ) → (-P ω, -P μ), P the head swap, so the "
            "flow keeps ω_1 + ω_2 = μ_1 + μ_2 = 0 exactly; only round-off (~1e-16, "
            "amplified by the Phase I growth) can break it. Tolerance 10 x solver rtol.",
            atol=tol), "max_t max(|ω₁+ω₂|, |μ₁+μ₂|), symmetric start"),
        Check("reduced_gap", Tolerance(
            "(B.4) is the 4-D field restricted to the symmetric set, so both solves integrate the "
            "same curve; they differ by the solvers' error only. Tolerance 10 x rtol (relative "
            "to max |ω|, |μ| on the path).", atol=tol),
            "max |full − reduced| / max |θ|"),
        Check("opposite_fraction", Tolerance(
            "Appendix B: perturbed symmetric starts end with one positive and one negative head "
            "(ω₁ω₂ < 0, μ₁μ₂ < 0). A fraction; any start ending otherwise is a counterexample.",
            atol=1e-9), "fraction of perturbed starts ending with opposite heads"),
    )  # fmt: skip


PRESETS_INIT = {
    "smoke": InitParams(n_asymmetric=2, asym_t_end=300.0),
    "quick": InitParams(n_asymmetric=10, asym_t_end=1e3),
    "paper": InitParams(n_asymmetric=50, asym_t_end=1e4),
}

CLAIM_INIT = Claim(
    id="HE-B-INIT",
    source=Source(PAPER, "App. B, Def. B.1", "(B.1)-(B.4)", Reconstructed(
        "Def. B.1's start ω₁ = −ω₂ = μ₁ = −μ₂ = ε", "HE-B-INIT", "RECON")),
    statement="From the symmetric start ω₁ = −ω₂ = μ₁ = −μ₂ = ε the gradient flow of L̃ keeps "
    "ω₂ = −ω₁, μ₂ = −μ₁ and equals the reduced 2-D system (B.4); starts perturbed by up to "
    "10% also end with one positive and one negative head.",
    params=InitParams, presets=PRESETS_INIT,
    predict=predict_init, measure=measure_init, checks=checks_init,
    figure=FigureRef("icl_verify.figures.dynamics", "figure_init"),
    wrong=scaled("opposite_fraction", 0.5,
                 why="Half the starts end same-sign (a fraction 0.5 of opposite-head ends "
                 "instead of 1), where the rule allows 1e-9."),
    summary="symmetric init is preserved; reduced 2-D system",
    catalogue=(5, 1),
)  # fmt: skip

CLAIMS = (CLAIM_INIT,)
