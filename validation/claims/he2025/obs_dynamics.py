"""HE-OBS4 of He et al. (2025), Section 3, Observation 4: training dynamics (Figures 5 and 13).

HE-OBS4 (§3, Figures 5 and 13): |omega_h(t)| rises then falls, |mu_h(t)| grows nearly
monotonically, the pattern appears early and, once formed, persists, and it is the same across
initialisations (members of the same H end at the same (omega, mu) up to the valley's drift).

Read on the shared trained ensemble (terms and findings: `_observations`). Prediction: the
shape of the trajectories (`theory.manifold_mu` and the single-head optimum drawn). Measurement:
`numerics.pattern_dynamics` and `numerics.seed_spread` on the logged history. Figure:
`figures.observations`.

"Early" is read against the theory's order of events (Section 4, Appendix B): sign matching and
the zero-sum OV form in Stage I while |omega| grows, before its peak ends the growth (Phase II,
(B.16)); so a member's pattern must form no later than the step at which its mean |omega_h|
peaks. At quick, some paired members of H = 2 and H = 3 first grow as one same-sign head,
their mean |omega| peaking near the single head's 1/sqrt(d), and form the pattern only after
one head changes sign, after that peak: the transient form of HE-OBS2's same-sign trap. Where
their share of an H's runs exceeds `exception_rate` the claim disagrees, a finding; two or three
runs of an H that all form it early cannot confirm it (inconclusive). The paper preset logs
every 1000 steps from step 1000, and most heads' |omega| peaks by then: their rise, and the
order of formation and peak within a log, are undecided there, while a formation several logs
after the peak is resolved late, as at quick. Across seeds the final mean |omega_h| and the
group sums are judged against their allowances (the group sums still grow over the last quarter
of a quick run). The counts and spreads are in the claim's table.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from icl_verify.validation.claim import Check, Claim, FigureRef, Source, scaled
from icl_verify.validation.claims.he2025 import PAPER
from icl_verify.validation.claims.he2025._ensembles import (
    check_trained_heads,
)
from icl_verify.validation.claims.he2025._observations import (
    TypicalRunParams,
    exception_rule,
)
from icl_verify.validation.estimates import Estimate, Measurement, Prediction
from icl_verify.validation.paper_figures import PaperFigure
from icl_verify.validation.params import param
from icl_verify.validation.rules import Inequality, Tolerance

from icl_verify import numerics, theory


@dataclass(frozen=True, kw_only=True)
class Obs4Params(TypicalRunParams):
    """HE-OBS4: the trajectories ω_h(t), μ_h(t) of the paired members."""

    show_heads: tuple[int, ...] = param(
        (1, 2, 4), help="H of the members drawn (per H the lowest validation loss)", low=1,
        role="heads"
    )
    noise_margin: float = param(
        4.0,
        help="a logged rise or fall counts when it exceeds this many SDs of the Adam noise",
        low=0,
        low_open=True,
    )
    snapshots: int = param(
        6, help="logged steps whose KQ circuits are stored for Figure 5 (drawn only)", low=2,
        role="count"
    )

    def validate(self) -> None:
        super().validate()
        check_trained_heads(self, "show_heads")


PRESETS_OBS4 = Obs4Params.presets(
    smoke={}, quick={}, paper={})


def predict_obs4(params: Obs4Params) -> Prediction:
    setting = params.setting
    fine = np.geomspace(0.02, 2.0, 400)
    single = theory.single_head_optimum(setting)
    return Prediction(
        values={
            "omega_rise_fall": 1.0,
            "mu_largest_drop": 0.0,
            "group_sum_largest_drop": 0.0,
            "persistence": 1.0,
            "formed_early": 1.0,
            "seed_spread": 1.0,
        },
        figure_data={
            "omega_fine": fine,
            "mu_star_fine": theory.manifold_mu(fine, setting),
            "single_omega": single.omega,
            "single_mu": single.mu,
        },
    )


def measure_obs4(params: Obs4Params, runtime) -> Measurement:
    """`numerics.pattern_dynamics` of the paired members: per non-dummy head the rise and fall of
    |ω| and the largest drop of |μ|, per group the largest drop of its OV sum, per member the
    share of logs after the pattern first forms on which it holds and whether it formed by the
    peak of its mean |ω|; `numerics.seed_spread`: per H, the final spread across seeds over
    the valley's drift."""
    ensemble = runtime.trained(params.training())
    kinds = numerics.member_kinds(ensemble)
    dynamics = numerics.pattern_dynamics(
        ensemble, np.flatnonzero(kinds.paired), params.noise_margin
    )
    spread = numerics.seed_spread(ensemble, np.flatnonzero(kinds.paired), params.noise_margin)
    early = numerics.fractions_by_h(ensemble.heads[kinds.paired], dynamics.formed_by_peak)
    shown = [numerics.representative(ensemble, h) for h in params.show_heads]
    steps = ensemble.steps
    snapshots = np.unique([0, *numerics.logged_steps(steps, steps[-1], params.snapshots - 1)])
    return Measurement(
        values={
            "omega_rise_fall": Estimate(
                dynamics.rise_and_fall, dynamics.rise_and_fall_error, "bound"
            ),
            "mu_largest_drop": Estimate(dynamics.mu_drop, 0.0, "bound"),
            "group_sum_largest_drop": Estimate(dynamics.group_sum_drop, 0.0, "bound"),
            "persistence": Estimate(dynamics.persistence, 0.0, "bound"),
            "formed_early": Estimate(early.fraction, early.fraction_se),
            "seed_spread": _spread_ratio(spread),
        },
        figure_data={
            "steps": ensemble.steps.astype(float),
            "shown_heads": ensemble.heads[shown].astype(float),
            "omega": ensemble.omega[:, shown],
            "mu": ensemble.mu[:, shown],
            "formed_at": dynamics.formed_at,  # (paired members,)
            "peak_at": dynamics.peak_at,
            "paired_heads": ensemble.heads[kinds.paired].astype(float),
            "spread_heads": spread.heads.astype(float),  # rows of seed_spread (3 per H)
            # Figure 5: the shown members' circuits at the first logged step, then geometrically
            "snapshot_steps": steps[snapshots].astype(float),
            "snapshot_KQ": ensemble.KQ_history[snapshots][:, shown],  # (S, M, H, D, D)
            "snapshot_OV": ensemble.OV_history[snapshots][:, shown],
        },
    )


def _spread_ratio(spread) -> Estimate:
    """Spread over allowance per H and quantity; with no H holding two paired members there is
    nothing to compare: one value of unbounded error (inconclusive, never agrees)."""
    if spread.heads.size == 0:
        return Estimate(np.zeros(1), np.full(1, np.inf), "bound")
    return Estimate((spread.spread / spread.allowance).ravel(), 0.0, "bound")


def checks_obs4(params: Obs4Params) -> tuple[Check, ...]:
    return (
        Check(
            "omega_rise_fall",
            Tolerance(
                f"1 when |ω_h(t)| peaks strictly inside the run and the peak exceeds both "
                f"ends by {params.noise_margin:g} SDs of the Adam noise (residual SD about "
                f"a line over the last quarter of the logs), else 0; one head without the "
                f"peak contradicts the claim. Undecided (error 1, inconclusive) where the logs "
                f"cannot tell: a head peaking in the last quarter may still be rising, and "
                f"one peaking within a log of the first log, with no rise logged, rose (if "
                f"at all) before the logs began (the paper preset logs every 1000 steps).",
                atol=0.5,
            ),
            "|ω_h| rises then falls (per non-dummy head of paired members; 1 = yes)",
        ),
        Check(
            "mu_largest_drop",
            Tolerance(
                "'Nearly monotone' after the pattern forms: the largest fall of |μ_h(t)| "
                "(moving average over 1/20 of the logs, which removes the Adam noise) below "
                "its running maximum, relative to the final |μ_h|; 5% allowed for "
                "'nearly'.",
                atol=0.05,
            ),
            "largest drop of smoothed |μ_h| / final |μ_h| after formation (per head)",
        ),
        Check(
            "group_sum_largest_drop",
            Tolerance(
                "The same measure for the OV group sums Σ₊μ, Σ₋μ, which the theory "
                "determines (HE-MAN: heads sharing a KQ scale are interchangeable, only "
                "their sum is fixed), so a head can hand its share to a same-sign head "
                "while the sum grows monotonically.",
                atol=0.05,
            ),
            "largest drop of smoothed |Σ₊μ|, |Σ₋μ| / final (per group)",
        ),
        Check(
            "persistence",
            Tolerance(
                "'Preserved': the pattern (sign matching, both signs) must hold on the "
                "logs after it first forms; 5% of the logs are allowed for heads crossing "
                "the dummy threshold while they form.",
                atol=0.05,
            ),
            "share of logs after formation with the pattern (per paired member)",
        ),
        Check(
            "formed_early",
            exception_rule(
                params.exception_rate,
                "the pattern appearing early",
                evidence="'Early' is read against the theory's order of events: sign matching "
                "and zero-sum OV form in Stage I while |ω| grows, and the peak of |ω| ends that "
                "growth (Appendix B, Phase II, (B.16)); a member forms it early when its "
                "pattern first holds at least a log before the log at which the mean |ω_h| of "
                "its non-dummy heads peaks, late when at least two logs after; within a log "
                "the logs cannot tell (half a run either way, added to the error).",
            ),
            "share of paired members whose pattern formed by the peak of mean |ω_h| (per H)",
        ),
        Check(
            "seed_spread",
            Inequality(
                "at_most",
                f"'The same pattern across initialisations': members of one H differ only by "
                f"where they are along the valley of minima (HE-MAN), which they descend "
                f"slowly. Their final spread (max − min) of mean |ω_h|, Σ₊μ and −Σ₋μ, over the "
                f"allowance: the largest drift of a member over the last quarter of training "
                f"(more than the spread of formation times, up to 15% of training at quick) "
                f"plus {params.noise_margin:g}·√2 SDs of the Adam noise. Must be at most 1.",
            ),
            "seed spread / (drift + noise) per H with ≥ 2 paired members and per quantity",
        ),
    )


CLAIM_OBS4 = Claim(
    id="HE-OBS4",
    source=Source(PAPER, "3, Obs. 4; App. A.1", "Figures 5, 13"),
    statement="During training |ω_h| first rises and then falls, |μ_h| grows nearly "
    "monotonically, and the sign-matched ± pattern appears early (before |ω| peaks), once "
    "formed is preserved, and is the same across initialisations up to the valley's drift "
    "(paired members).",
    params=Obs4Params,
    presets=PRESETS_OBS4,
    predict=predict_obs4,
    measure=measure_obs4,
    checks=checks_obs4,
    figure=FigureRef("icl_verify.figures.observations", "figure_obs4"),
    wrong=scaled(
        "persistence",
        0.5,
        why="The pattern held on only half of the logs after it forms: 0.5 off, 10 times the "
        "absolute tolerance 0.05.",
    ),
    summary="|ω_h| rises then falls, |μ_h| grows, patterns appear early, persist and "
    "agree across seeds",
    catalogue=(2, 4),
    paper_figures=(
        PaperFigure(
            5,
            ("HE-OBS4",),
            FigureRef("icl_verify.figures.paper", "figure_5"),
            "training dynamics of the two-head model: KQ heat maps at selected steps and "
            "ω_h(t), μ_h(t) with ±0.13 / ±3.5 guides",
            "KQ heat maps of the shown two-head member at logged steps from the first to the "
            "last; ω_h(t), μ_h(t) with the paper's ±0.13 / ±3.45 and the manifold guide "
            "±μ*(ω(t))",
        ),
    ),
)

CLAIMS = (CLAIM_OBS4,)
