"""HE-5.1-SM2LIN of He et al. (2025) §5.1: a softmax head pair emulates a linear head.

HE-5.1-SM2LIN (5.2): two softmax heads (eps KQ, OV/(2 eps)), (-eps KQ, -OV/(2 eps)) equal one
linear head (KQ, OV) minus the centring term OV zbar zbar^T KQ z_q, up to O(eps^2).

Prediction: `theory.softmax_pair_expansion`. Measurement: `numerics.pair_gap_expansion` (the
pair's output gaps read as an expansion in eps). Figure: `figures.linear_attention`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from icl_verify.validation.claim import Check, Claim, FigureRef, Source, shifted
from icl_verify.validation.claims.he2025 import PAPER
from icl_verify.validation.claims.he2025._reconstructed import LINEAR_ATTENTION
from icl_verify.validation.designs import linear_head_and_prompts
from icl_verify.validation.estimates import Estimate, Measurement, Prediction
from icl_verify.validation.params import Params, check_order, param
from icl_verify.validation.rules import LogLogSlope, Tolerance

from icl_verify import MAX_PROMPT_LENGTH, numerics, theory


@dataclass(frozen=True, kw_only=True)
class PairParams(Params):
    """HE-5.1-SM2LIN: one random linear head and random prompts, ε on a geometric grid."""

    HELD = ("n_prompts",)  # drawn at once, not in blocks

    D: int = param(6, help="token dimension (d + 1)", low=2, role="width")
    L: int = param(
        40, help="context tokens per prompt", low=2, high=MAX_PROMPT_LENGTH, role="length"
    )
    n_prompts: int = param(
        help="random prompts per set (centred and uncentred)", low=1, role="count"
    )
    eps_min: float = param(3e-4, help="smallest ε", low=0, low_open=True)
    eps_max: float = param(1e-2, help="largest ε", low=0, low_open=True)
    n_eps: int = param(help="ε values, log-spaced", low=3, role="count")
    design_seed: int = param(
        51, help="seed of the head and the prompts (not --seed)", low=0, role="count"
    )

    def validate(self) -> None:
        check_order(self, "eps_min", "eps_max")


PRESETS_PAIR = {
    "smoke": PairParams(n_prompts=8, n_eps=6),
    "quick": PairParams(n_prompts=64, n_eps=8),
    "paper": PairParams(n_prompts=256, n_eps=10),
}


def _pair_design(params: PairParams):
    rng = np.random.default_rng(params.design_seed)
    return linear_head_and_prompts(rng, params.D, params.L, params.n_prompts)


def _eps(params: PairParams) -> np.ndarray:
    return np.geomspace(params.eps_max, params.eps_min, params.n_eps)  # decreasing


def predict_pair(params: PairParams) -> Prediction:
    """The expansion (`theory.softmax_pair_expansion`) on the design's prompts."""
    KQ, OV, centred, uncentred = _pair_design(params)
    expansions = [theory.softmax_pair_expansion(KQ, OV, Z) for Z in (centred, uncentred)]
    return Prediction(
        values={
            "slope": np.array([2.0, 2.0]),
            "limit": np.concatenate([-e.centring.ravel() for e in expansions]),
            "next_term": np.concatenate([e.next_term.ravel() for e in expansions]),
        },
        figure_data={
            "centring_norm": np.array([np.abs(e.centring).max() for e in expansions], dtype=float),
        },
    )


def measure_pair(params: PairParams, runtime) -> Measurement:
    """The pair's output minus the linear head's, float64, read as an expansion in ε
    (`numerics.pair_gap_expansion`, per prompt set: centred, uncentred):

    - ``limit``: the gap's ε → 0 limit, by Richardson extrapolation of the measured gaps
      (`icl_verify.statistics.richardson`, with its error bound);
    - ``slope``: log-log slope in ε of the largest |gap − limit| (the residual after the
      measured limit), per set;
    - ``next_term``: the ε → 0 limit of that residual / ε² (Richardson again).

    Nothing here uses the theory's centring term: the ``limit`` check compares it with the
    measured limit (so a wrong centring term fails there), and the slope checks the order.
    """
    KQ, OV, centred, uncentred = _pair_design(params)
    eps = _eps(params)
    sets = [numerics.pair_gap_expansion(KQ, OV, Z, eps) for Z in (centred, uncentred)]

    def joined(value: str, bound: str) -> Estimate:
        return Estimate(
            np.concatenate([getattr(e, value).ravel() for e in sets]),
            np.concatenate([getattr(e, bound).ravel() for e in sets]),
            "bound",
        )

    return Measurement(
        values={
            "slope": Estimate([e.slope for e in sets], [e.slope_se for e in sets]),
            "limit": joined("limit", "limit_bound"),
            "next_term": joined("next_term", "next_bound"),
        },
        figure_data={
            "eps": eps,
            "residual_centred": sets[0].residual,
            "residual_uncentred": sets[1].residual,
            "gap_uncentred": sets[1].gap,
        },
    )


def checks_pair(params: PairParams) -> tuple[Check, ...]:
    _, OV, *prompts = _pair_design(params)  # the allowances: float64 roundoff bounds
    limit_allowed, next_allowed = numerics.pair_roundoff_bounds(OV, prompts, _eps(params))
    roundoff = (
        "Allowed: the float64 roundoff bound of the extrapolated value "
        "(`numerics.pair_roundoff_bounds`: "
        "(L + D) u ‖OV‖ max‖z‖ / ε per gap, through Richardson's weights), plus the "
        "extrapolation's error bound (its distance to the extrapolation from the next pair of "
        "ε, an O(ε⁴) term)."
    )
    return (
        Check(
            "slope",
            LogLogSlope(
                f"The expansion's next term is ε² N (theory.softmax_pair_expansion) and the one "
                f"after is O(ε⁴): over ε ≤ {params.eps_max:g} the fitted slope is biased by "
                f"about ε_max² |N4/N|, well below atol 0.05. Roundoff (at most "
                f"{limit_allowed:.1g} in the limit) is far below the residuals (≥ 1e-6).",
                atol=0.05,
            ),
            "slope of max |pair − linear − limit| in ε (centred, uncentred)",
        ),
        Check(
            "limit",
            Tolerance(
                f"The ε → 0 limit of pair − linear is −OV zbar zbarᵀ KQ z_q (0 on the centred "
                f"set). {roundoff} Here {limit_allowed:.2g}.",
                atol=limit_allowed,
            ),
            "lim pair − linear vs −centring term (every prompt and output entry)",
        ),
        Check(
            "next_term",
            Tolerance(
                f"The ε² coefficient N of the expansion, against the ε → 0 limit of the "
                f"measured (gap − its limit) / ε² (Richardson). {roundoff} Here "
                f"{next_allowed:.2g}.",
                atol=next_allowed,
            ),
            "ε² coefficient of the gap vs the derived next term",
        ),
    )


CLAIM_SM2LIN = Claim(
    id="HE-5.1-SM2LIN",
    source=Source(PAPER, "5.1", "(5.2)", LINEAR_ATTENTION),
    statement="Two softmax heads (ε KQ, OV/(2ε)) and (−ε KQ, −OV/(2ε)) equal the linear head "
    "(KQ, OV) minus the centring term OV z̄ z̄ᵀ KQ z_q, with an error of order ε²; on centred "
    "prompts they equal the linear head.",
    params=PairParams,
    presets=PRESETS_PAIR,
    predict=predict_pair,
    measure=measure_pair,
    checks=checks_pair,
    figure=FigureRef("icl_verify.figures.linear_attention", "figure_pair"),
    wrong=shifted(
        "limit",
        np.zeros_like,
        why="The centring term forgotten (the pair's ε → 0 limit taken as the linear head "
        "itself): the uncentred residual is O(1), slope 0, where the limit check allows only "
        "float64 roundoff.",
    ),
    summary=(
        "softmax pair (ε KQ, OV/(2ε)), (−ε KQ, −OV/(2ε)) = linear head − centring term + "
        "O(ε²)"
    ),
    catalogue=(6, 2),
)

CLAIMS = (CLAIM_SM2LIN,)
