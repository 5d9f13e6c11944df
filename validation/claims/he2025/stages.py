"""Stage I / Stage II claims of He et al. (2025), Section 4.1-4.2 (reference §HE-S1, §HE-S2).

Gradient flow on Ltilde (4.1) from small random starts omega_h, mu_h ~ N(0, scale^2), for
several H and starts (drawn from `design_seed`, shared by both claims so the flows are
computed once), integrated by `dynamics.random_init_stages`:

- HE-S1 (Stage I): for every H, every run sign-matched from the end of Stage I
  (`dynamics.stage_one_end`) on, zero-sum at t_end, and mu^T omega approaching the optimality
  condition (4.3), 1/(1+kappa), from below within twice the valley-floor deficit
  (`dynamics.late_product_deficit`) at every saved time from the end of Stage I to t_end:
  the paper's Figure 7, which its text cites as "Figure (8)" (reference §HE-S1, §7). The
  median over runs is compared (one trapped run cannot move it); the fractions count the
  runs. Finding: the same-sign trap (below) keeps a fraction of the runs from ever becoming
  zero-sum; they end at mu^T omega = 1/(1+e kappa), about half the runs at H = 2, fewer at
  H = 3, rarely or never at H = 4 and 8 (the counts per H are in the claim's table), so the
  claim as stated for every H disagrees at H = 2.
- HE-S2 (Stage II): |omega_h| equal across non-dummy heads (homogeneous KQ scaling) and the
  end state on S_omega (4.7). Finding: from iid N(0, 1e-4) starts a fraction of H = 2 and
  H = 3 runs ends instead at the all-same-sign single-head optimum (omega_h = 1/sqrt(d) for
  every head, Ltilde = 1 + sigma2 - 1/(1 + e kappa), above the valley's), a critical point with a
  PSD Hessian; the claim as stated ("the flow reaches S_omega") is checked for every H and
  disagrees at H = 2, where the trapped runs are most frequent.

Dummy heads are those of `icl_verify.heads.head_types`. Rates of runs are fractions k/n with
the Agresti-Coull standard error (`icl_verify.statistics.proportion`), which stays honest at k = n.
Figures: `figures.dynamics.figure_stage_one`, `figure_stage_two`; HE-S1's table gives per H
the trapped runs and when the patterns appear.
"""

from __future__ import annotations

from dataclasses import dataclass

import icl_verify.figures.data.stages as fig_data
import numpy as np
from icl_verify.validation.claim import (
    Check,
    Claim,
    FigureRef,
    Reconstructed,
    Source,
    scaled,
    shifted,
)
from icl_verify.validation.claims.he2025 import PAPER
from icl_verify.validation.claims.he2025._reconstructed import MANIFOLD, STAGE_TWO_BOUND
from icl_verify.validation.claims.he2025._stages import (
    RandomStartParams,
    StageTwoParams,
    random_start_presets,
    random_start_stages,
)
from icl_verify.validation.estimates import Estimate, Measurement, Prediction
from icl_verify.validation.paper_figures import PaperFigure
from icl_verify.validation.params import ParameterError
from icl_verify.validation.rules import Inequality, ZScore

from icl_verify import dynamics, statistics, theory


@dataclass(frozen=True, kw_only=True)
class StageOneParams(RandomStartParams):
    """HE-S1: the flows, read from the end of Stage I (`stage_one_window`) to t_end."""

    def validate(self) -> None:
        super().validate()
        start = stage_one_start(self)
        if start >= self.t_end:
            raise ParameterError(
                f"t_end must exceed the end of Stage I at H = {self.heads[0]} "
                f"(dynamics.stage_one_end: {start:.3g}), got t_end={self.t_end:g}"
            )


def stage_one_start(params: RandomStartParams) -> float:
    """The latest end of Stage I over the H run (`dynamics.stage_one_end` at the smallest H).

    >>> round(stage_one_start(PRESETS_STAGE_ONE["quick"]), 1)  # H = 2: growth 2.3 + zero-sum 41.9
    44.1
    """
    return dynamics.stage_one_end(params.setting, params.heads[0], params.scale, params.tolerance)


def stage_one_window(params: RandomStartParams) -> np.ndarray:
    """Indices of the saved times from the end of Stage I (`stage_one_start`) to t_end."""
    t = dynamics.SaveAt.log_spaced((0.0, params.t_end), n=params.n_times).ts
    return np.flatnonzero(t >= stage_one_start(params))


def _rates(successes) -> Estimate:
    """Per H, the fraction of runs (booleans, one array per H) with its Agresti-Coull SE."""
    pairs = np.array([statistics.proportion(runs) for runs in successes])
    return Estimate(pairs[:, 0], pairs[:, 1], "se")


def _figure_data(params: RandomStartParams, stages) -> dict:
    """The runs per H as the figures draw them (`figures.data.stages.RandomStarts`)."""
    runs = {
        heads: fig_data.HeadRuns(
            p=run.mu_dot_omega, zero_sum=run.final_zero_sum_ratio,
            dispersion=run.final_dispersion, loss_gap=run.final_loss_gap,
            stage_one=run.stage_one_time, homogeneous=run.homogeneous_time,
            sign_time=run.sign_matching_time, zero_sum_time=run.zero_sum_time,
        )
        for heads, run in stages.items()
    }  # fmt: skip
    return fig_data.RandomStarts(stages[params.heads[0]].t, runs).to_record()


RATE = ZScore(
    "a fraction of independent runs: Agresti-Coull SE (module doc), |z| ≤ 4; inconclusive "
    "when 4 SE exceed 25 percentage points",
    max_z=4.0,
    abs_resolution=0.25,
)


# ---------------------------------------------------------------------------------------------
# HE-S1


def predict_stage_one(params: StageOneParams) -> Prediction:
    """Every run sign-matched and zero-sum (fractions 1); from the end of Stage I on, μᵀ ω
    at most 1/(1+κ) (4.3) and at least 1/(1+κ) - 2 `dynamics.late_product_deficit`(t)."""
    limit = 1.0 / (1.0 + params.setting.kappa)
    t = dynamics.SaveAt.log_spaced((0.0, params.t_end), n=params.n_times).ts
    window = stage_one_window(params)
    band = 2 * dynamics.late_product_deficit(params.setting, t[window])  # (W,)
    count = len(params.heads)
    return Prediction(
        values={
            "sign_matched": np.ones(count),
            "zero_sum": np.ones(count),
            "p_limit": np.full((count, window.size), limit),
            "p_approach": np.tile(limit - band, (count, 1)),
        },
        figure_data=fig_data.StageOneTheory(limit, t[window], band,
                                            stage_one_start(params)).to_record(),
    )  # fmt: skip


def measure_stage_one(params: StageOneParams, runtime) -> Measurement:
    """Per H: fractions of runs sign-matched at every saved time from the end of Stage I on and
    zero-sum at t_end; the median μᵀ ω over runs at each saved time of that window."""
    stages = random_start_stages(params, runtime)
    start, window = stage_one_start(params), stage_one_window(params)
    medians = np.array([
        [statistics.quantile_se(stages[h].mu_dot_omega[:, k], 0.5) for k in window]
        for h in params.heads
    ])  # (|H|, W, 2): value, SE  # fmt: skip
    median = Estimate(medians[..., 0], medians[..., 1], "se")
    return Measurement(
        values={
            "sign_matched": _rates(stages[h].sign_matching_time <= start for h in params.heads),
            "zero_sum": _rates(
                stages[h].final_zero_sum_ratio <= params.tolerance for h in params.heads
            ),
            "p_limit": median,
            "p_approach": median,
        },
        figure_data=_figure_data(params, stages),
    )


def checks_stage_one(params: StageOneParams) -> tuple[Check, ...]:
    start = stage_one_start(params)
    median = (
        "Measured: per H the median of μᵀω(t) over the runs at every saved time from the end "
        f"of Stage I, t ≥ {start:.3g} (`dynamics.stage_one_end` at H = {params.heads[0]}: "
        "growth of p at rate 4 plus relaxation of Σμ at rate 2cH, §HE-S1), to t_end; error "
        "bar its distribution-free SE (`statistics.quantile_se`), which holds the spread of "
        "the starts, and a median that one trapped start cannot move (a run in the same-sign "
        "trap ends at μᵀω = 1/(1+eκ), counted by the zero-sum check)."
    )
    return (
        Check("sign_matched", RATE, f"fraction of runs sign-matched at every saved t ≥ "
              f"{start:.3g} (end of Stage I), per H"),
        Check("zero_sum", RATE, "fraction with |Σμ|/Σ|μ| ≤ tol at t_end, per H"),
        Check("p_limit", Inequality(
            "at_most",
            "(4.3): the low-order part of L̃ is minimised at μᵀω = 1/(1+κ), and the flow "
            "approaches it from below: on the valley floor 2ωμ* = 1/(1+κ sinh(dω²)/(dω²)) "
            f"(4.8) < 1/(1+κ), and μ lags μ*(ω) from below. {median}",
        ), f"median μᵀω(t) ≤ 1/(1+κ) at every saved t ≥ {start:.3g}, per H"),
        Check("p_approach", Inequality(
            "at_least",
            "How far below 1/(1+κ) μᵀω may be at t: on the valley floor 2ωμ* lies below by "
            "κd²ω⁴/(6(1+κ)²) (4.8) and μ lags μ*(ω) by a relative 1/(24tω²(1+κ)), both at "
            "the two-head valley law ω = (8κd²t)^{−1/6} (`dynamics.late_product_deficit`, "
            "derived for the two-head flow; the H-head runs have |ω_h| within ~20% of it), "
            f"times 2 for that H-dependence. {median}",
        ), f"median μᵀω(t) ≥ 1/(1+κ) − 2·deficit(t) at every saved t ≥ {start:.3g}, per H"),
    )  # fmt: skip


def table_stage_one(
    params: StageOneParams, prediction: Prediction, measurement: Measurement
) -> str:
    """Per H: runs in the same-sign trap, when Stage I's patterns appear, μᵀω at t_end."""
    data = fig_data.RandomStarts.from_record(measurement.figure_data, params.heads)
    theory = fig_data.StageOneTheory.from_record(prediction.figure_data)
    limit = theory.limit
    rows = [
        f"Per H ({params.n_seeds} starts each): runs never zero-sum (the same-sign trap: every "
        f"ω_h of one sign, ending at μᵀω = 1/(1+eκ)), when sign matching and zero-sum appear "
        f"(median, range over the runs that reach them; predicted end of Stage I t = "
        f"{theory.stage_one_start:.3g} at H = {params.heads[0]}), and "
        f"1/(1+κ) − μᵀω at t_end ({limit:.4f} − median, range over the other runs):",
        "",
        "| H | never zero-sum | sign matching at t = | zero-sum at t = | 1/(1+κ) − μᵀω at t_end |",
        "|---|---|---|---|---|",
    ]
    for h in params.heads:
        runs = data.runs[h]
        zero_sum_time, sign_time = runs.zero_sum_time, runs.sign_time
        trapped = ~np.isfinite(zero_sum_time)
        deficit = limit - runs.p[~trapped, -1]
        rows.append(
            f"| {h} | {int(trapped.sum())} | {_spread(sign_time)} | {_spread(zero_sum_time)} | "
            + (f"{np.median(deficit):.2e} ({deficit.min():.2e}-{deficit.max():.2e})"
               if deficit.size else "—") + " |"
        )  # fmt: skip
    return "\n".join(rows)


def _spread(times: np.ndarray) -> str:
    """'median (min-max)' of the finite times, '—' when none."""
    finite = times[np.isfinite(times)]
    if not finite.size:
        return "—"
    return f"{np.median(finite):.3g} ({finite.min():.3g}-{finite.max():.3g})"


# ---------------------------------------------------------------------------------------------
# HE-S2


def predict_stage_two(params: StageTwoParams) -> Prediction:
    """Every run homogeneous (|ω_h| equal over active heads) and on S_omega (fractions 1)."""
    count, kappa = len(params.heads), params.setting.kappa
    return Prediction(
        values={"homogeneous": np.ones(count), "on_manifold": np.ones(count)},
        figure_data=fig_data.StageTwoTheory(
            trap_loss=theory.single_head_optimum(params.setting).loss,
            manifold_floor=params.sigma2 + kappa / (1 + kappa),  # inf of Ltilde on S_omega
        ).to_record(),
    )


def measure_stage_two(params: StageTwoParams, runtime) -> Measurement:
    """Fractions of runs with KQ dispersion ≤ tol, and with L̃ within tol of S_omega."""
    stages = random_start_stages(params, runtime)
    runs = [stages[h] for h in params.heads]
    return Measurement(
        values={
            "homogeneous": _rates(run.final_dispersion <= params.tolerance for run in runs),
            "on_manifold": _rates(run.final_loss_gap <= params.loss_gap_tolerance for run in runs),
        },
        figure_data=_figure_data(params, stages),
    )


def checks_stage_two(params: StageTwoParams) -> tuple[Check, ...]:
    return (
        Check("homogeneous", RATE, "fraction with std/mean |ω_h| ≤ tol at t_end, per H"),
        Check(
            "on_manifold",
            RATE,
            f"fraction ending on S_ω (L̃ − L̃_S(ω̄) ≤ {params.loss_gap_tolerance:g}), per H",
        ),
    )


PRESETS_STAGE_ONE = random_start_presets(StageOneParams)
PRESETS_STAGE_TWO = random_start_presets(StageTwoParams)

CLAIM_STAGE_ONE = Claim(
    id="HE-S1",
    source=Source(
        PAPER,
        "4.1",
        "(4.2)-(4.3), Fig. 7",
        Reconstructed("(4.3), the optimality condition μᵀω = 1/(1+κ)", "HE-S1", "RECON"),
    ),
    statement="Stage I of gradient flow on L̃ from small random starts, for every H: every head "
    "becomes sign-matched and stays so, the OV weights become zero-sum, and μᵀω approaches the "
    "optimality condition (4.3) μᵀω = 1/(1+κ) from below, within the valley-floor deficit at "
    "every time from the end of Stage I to t_end. Finding: a fraction of starts never becomes "
    "zero-sum (the same-sign trap, see HE-S2): about half at H = 2, a few at H = 3, 4.",
    params=StageOneParams,
    presets=PRESETS_STAGE_ONE,
    predict=predict_stage_one,
    measure=measure_stage_one,
    checks=checks_stage_one,
    figure=FigureRef("icl_verify.figures.dynamics", "figure_stage_one"),
    table=table_stage_one,
    wrong=shifted(
        "p_approach",
        lambda band: np.asarray(band) + 0.12,
        why="μᵀω → 1, the optimum without the finite-L correction κ: 0.12 above 1/(1+κ) at "
        "d = 5, L = 40, so the band's floor at t_end lies 0.12 above the measured medians, "
        "about 190 times the valley-floor deficit at the quick size (t_end = 1e4) and about "
        "18 times at the smoke size (t_end = 300).",
    ),
    summary="Stage I: sign matching, zero-sum OV, μᵀ ω → 1/(1+κ)",
    catalogue=(3, 2),
    paper_figures=(
        PaperFigure(
            7,
            ("HE-S1",),
            FigureRef("icl_verify.figures.dynamics", "figure_stage_one"),
            "Stage I: μᵀ ω against GD iterations on L̃ approaching 1/(1+κ) (the text's "
            '"Figure (8)"; the figure itself is not referenced)',
            "HE-S1's figure: μᵀω(t) of every start per H under gradient flow on L̃ (flow time t "
            "= learning rate × GD iterations) against (4.3)'s 1/(1+κ), and the fractions of "
            "sign-matched and zero-sum runs",
        ),
    ),
)

CLAIM_STAGE_TWO = Claim(
    id="HE-S2",
    source=Source(PAPER, "4.2", "(4.4)-(4.7)", (STAGE_TWO_BOUND, MANIFOLD)),
    statement="Stage II of gradient flow on L̃ from small random starts: |ω_h| becomes equal "
    "across non-dummy heads and the flow ends on the solution manifold S_ω, for every H. "
    "Finding: a fraction of H = 2 (and H = 3) starts ends at the same-sign single-head optimum "
    "(ω_h = 1/√d, L̃ = 0.372 vs 0.221 on S_ω), a local minimum, not on S_ω.",
    params=StageTwoParams,
    presets=PRESETS_STAGE_TWO,
    predict=predict_stage_two,
    measure=measure_stage_two,
    checks=checks_stage_two,
    figure=FigureRef("icl_verify.figures.dynamics", "figure_stage_two"),
    wrong=scaled(
        "homogeneous",
        0.0,
        why="No run equalising |ω_h| (the heads keep the spread of their start): a predicted "
        "fraction 0, 1 away from the measured fractions, beyond 4 Agresti-Coull standard errors "
        "(0.69 at the 3 starts of the smoke size).",
    ),
    summary="Stage II: homogeneous KQ, the flow ends on S_omega",
    catalogue=(3, 3),
)

CLAIMS = (CLAIM_STAGE_ONE, CLAIM_STAGE_TWO)
