"""The Stage II lower bound of He et al. (2025), Section 4.2, eq. (4.5) (reference §HE-S2).

HE-S2-BOUND: at any sign-matched point (sign mu_h = sign omega_h, or mu_h = 0),

    Ltilde >= 1 + sigma2 - 2p + (1+kappa) p^2 + c ||mu||_1^2 (sinh x - x),   x = d p^2/||mu||_1^2

(`theory.stage_two_lower_bound`), with equality exactly on zero-sum OV weights and homogeneous
KQ scales: the paper's route from Stage I to the solution manifold S_omega. Checked three ways:

- at random sign-matched points (any H, any scales) Ltilde is at or above the bound;
- at random homogeneous zero-sum points (dummy heads included) it equals the bound;
- at the end of the HE-S2 flows (`_stages.random_start_stages`, the same runs) the gap
  Ltilde - bound is below HE-S2's tolerance for the runs that end on S_omega, and above it
  for the runs caught in the same-sign trap (H = 2, 3): the bound is tight only on S_omega.

Prediction: the bound. Measurement: Ltilde (4.1) itself (`theory.approximate_loss`, checked
against the Monte Carlo loss by HE-P4.1) at the designed points and the flows' end states.
Figure: `figures.dynamics.figure_stage_two_bound`.
"""

from __future__ import annotations

from dataclasses import dataclass

import icl_verify.figures.data.stages as fig_data
import numpy as np
from icl_verify.validation.claim import Check, Claim, FigureRef, Source
from icl_verify.validation.claims.he2025 import PAPER
from icl_verify.validation.claims.he2025._reconstructed import STAGE_TWO_BOUND
from icl_verify.validation.claims.he2025._stages import (
    StageTwoParams,
    random_start_presets,
    random_start_stages,
)
from icl_verify.validation.designs import random_head_signs
from icl_verify.validation.estimates import Estimate, Measurement, Prediction
from icl_verify.validation.params import Footprint, check_order, param
from icl_verify.validation.rules import Inequality, Tolerance

from icl_verify import theory

#: float64 rounding of a sum of n terms: at most n * 2^-52 times the sum of their magnitudes
#: (Higham, Accuracy and Stability, §4.2), times 4 for the products and exponentials in a term.
ROUNDING = 4 * np.finfo(float).eps


@dataclass(frozen=True, kw_only=True)
class BoundParams(StageTwoParams):
    """HE-S2-BOUND: designed sign-matched and S_omega points, and the HE-S2 flows' end states."""

    n_points: int = param(
        help="random sign-matched points, and as many points on S_omega", low=1, role="held"
    )
    H_max: int = param(
        8, help="largest number of heads of a designed point (H uniform)", low=2, role="heads"
    )
    omega_min: float = param(0.02, help="smallest |ω_h| (log-uniform)", low=0, low_open=True)
    omega_max: float = param(0.6, help="largest |ω_h|", low=0, low_open=True)
    mu_max: float = param(10.0, help="largest |μ_h| (log-uniform from μ_max/100)", low=0,
                          low_open=True)  # fmt: skip
    points_seed: int = param(45, help="seed of the designed points (the setting, not --seed)",
                             low=0, role="count")  # fmt: skip
    def validate(self) -> None:
        super().validate()
        check_order(self, "omega_min", "omega_max")

    def footprint(self) -> Footprint:
        """The flows' saved states, or the designed points (n_points x H_max, a few arrays of
        each), whichever is larger."""
        points = Footprint.of_tensor((self.n_points, "points"), (self.H_max, "heads"),
                                     temporaries=16)  # fmt: skip
        return max(super().footprint(), points, key=lambda footprint: footprint.bytes)


PRESETS = random_start_presets(BoundParams, n_points=(50, 400, 2000))


@dataclass(frozen=True)
class BoundPoints:
    """Designed heads, one row per point, padded with heads of ω = μ = 0 (which change
    neither L̃ nor the bound): random sign-matched points and points on S_omega."""

    omega: np.ndarray  # (n_points, H_max)
    mu: np.ndarray  # (n_points, H_max)
    manifold_omega: np.ndarray  # (n_points, H_max): +-omega or 0 (dummy) per head
    manifold_mu: np.ndarray  # (n_points, H_max): group sums +-m, dummies 0


def draw_points(params: BoundParams) -> BoundPoints:
    """The points, from `points_seed`: sign-matched ones with log-uniform |omega_h|, |mu_h| and
    random signs; on S_omega, a random +/-/0 split (`random_head_signs`) at one log-uniform
    omega, the group weights random shares of group sums +-m, m log-uniform.

    >>> points = draw_points(PRESETS["smoke"])
    >>> points.omega.shape, bool(np.all(points.omega * points.mu >= 0))
    ((50, 8), True)
    """
    rng = np.random.default_rng(params.points_seed)
    n, width = params.n_points, params.H_max

    def log_uniform(low, high, size):
        return np.exp(rng.uniform(np.log(low), np.log(high), size))

    heads = rng.integers(1, width + 1, size=n)
    active = np.arange(width) < heads[:, None]  # (n, H_max)
    signs = rng.choice([-1.0, 1.0], size=(n, width))
    omega = active * signs * log_uniform(params.omega_min, params.omega_max, (n, width))
    mu = active * signs * log_uniform(params.mu_max / 100, params.mu_max, (n, width))
    manifold_omega, manifold_mu = np.zeros((n, width)), np.zeros((n, width))
    for i in range(n):
        split = random_head_signs(rng, width, dummy=True)  # (H,) in {+1, -1, 0}
        scale = log_uniform(params.omega_min, params.omega_max, 1)[0]
        total = log_uniform(params.mu_max / 100, params.mu_max, 1)[0]
        shares = rng.uniform(0.1, 1.0, split.size) * (split != 0)
        for sign in (1, -1):
            group = split == sign
            shares[group] /= shares[group].sum()
        manifold_omega[i, : split.size] = scale * split
        manifold_mu[i, : split.size] = total * split * shares
    return BoundPoints(omega, mu, manifold_omega, manifold_mu)


def rounding(omega, mu, setting) -> np.ndarray:
    """The float64 rounding bound of Ltilde (4.1) at each point: (H^2 + 5) terms, their
    magnitudes summed (mu^T exp(d omega omega^T) mu at most ||mu||_1^2 exp(d max omega_h^2)).

    >>> float(rounding(np.zeros((1, 2)), np.zeros((1, 2)), PRESETS["smoke"].setting)[0]) < 1e-14
    True
    """
    p = np.abs(np.sum(mu * omega, axis=-1))
    l1 = np.sum(np.abs(mu), axis=-1)
    largest = np.exp(setting.d * np.max(omega * omega, axis=-1))
    kappa, c = setting.kappa, setting.c
    magnitude = 1 + setting.sigma2 + 2 * p + (1 + kappa) * p * p + c * l1 * l1 * largest
    return ROUNDING * (omega.shape[-1] ** 2 + 5) * magnitude


def _loss(omega, mu, setting) -> Estimate:
    """L̃ (4.1) with its float64 rounding bound."""
    return Estimate(theory.approximate_loss(omega, mu, setting), rounding(omega, mu, setting),
                    "bound")  # fmt: skip


def _end_gaps(params: BoundParams, runtime) -> dict[int, tuple[np.ndarray, np.ndarray]]:
    """Per H, the flows' L̃ - bound at t_end and whether each run ended on S_omega."""
    gaps = {}
    for heads, run in random_start_stages(params, runtime).items():
        gap = _loss(run.final_omega, run.final_mu, params.setting).value - (
            theory.stage_two_lower_bound(run.final_omega, run.final_mu, params.setting)
        )
        gaps[heads] = (gap, run.final_loss_gap <= params.loss_gap_tolerance)
    return gaps


def predict_bound(params: BoundParams) -> Prediction:
    """The bound (4.5) at the designed points; the gap of the flows' end states against HE-S2's
    tolerance (below it on S_omega, above it off S_omega)."""
    points, setting = draw_points(params), params.setting
    return Prediction(
        values={
            "above_bound": theory.stage_two_lower_bound(points.omega, points.mu, setting),
            "on_manifold": theory.stage_two_lower_bound(
                points.manifold_omega, points.manifold_mu, setting
            ),
            "gap_on_manifold": np.full((), params.loss_gap_tolerance),
            "gap_trapped": np.full((), params.loss_gap_tolerance),
        },
        figure_data=fig_data.BoundTheory(params.loss_gap_tolerance).to_record(),
    )


def measure_bound(params: BoundParams, runtime) -> Measurement:
    """L̃ at the designed points; the largest gap of the runs ending on S_omega and the
    smallest of the others (all flows of HE-S2's sizes)."""
    points, setting = draw_points(params), params.setting
    gaps = _end_gaps(params, runtime)
    on = np.concatenate([gap[ends] for gap, ends in gaps.values()])
    off = np.concatenate([gap[~ends] for gap, ends in gaps.values()])
    above = _loss(points.omega, points.mu, setting)
    manifold = _loss(points.manifold_omega, points.manifold_mu, setting)
    return Measurement(
        values={
            "above_bound": above,
            "on_manifold": manifold,
            "gap_on_manifold": Estimate(on.max(), 0.0, "bound") if on.size
            else Estimate(params.loss_gap_tolerance, np.inf, "bound"),
            # no run off S_omega (a setting without the trap): nothing to test, inconclusive
            "gap_trapped": Estimate(off.min(), 0.0, "bound") if off.size
            else Estimate(params.loss_gap_tolerance, np.inf, "bound"),
        },
        figure_data=fig_data.BoundPoints(
            random_loss=above.value,
            random_gap=above.value
            - theory.stage_two_lower_bound(points.omega, points.mu, setting),
            manifold_loss=manifold.value,
            manifold_gap=manifold.value
            - theory.stage_two_lower_bound(points.manifold_omega, points.manifold_mu, setting),
            end_gap={h: gap for h, (gap, _) in gaps.items()},
            ends_on={h: ends for h, (_, ends) in gaps.items()},
        ).to_record(),
    )


def checks_bound(params: BoundParams) -> tuple[Check, ...]:
    points = draw_points(params)
    allowance = 2 * float(rounding(points.manifold_omega, points.manifold_mu, params.setting).max())
    why = (
        "(4.5) is exact arithmetic; L̃ and the bound are evaluated in float64, each rounded by "
        "at most (H² + 5)·4·2⁻⁵² times the sum of the terms' magnitudes (the measurement's "
        f"error bound); on S_ω both roundings: {allowance:.2g} over the designed points"
    )
    threshold = (
        f"HE-S2 counts a run as ending on S_ω when L̃ is within {params.loss_gap_tolerance:g} of "
        "L̃ on S_ω; the bound, tight exactly on S_ω, must be as close there and farther off it"
    )
    return (
        Check("above_bound", Inequality("at_least", why, max_z=1.0),
              "L̃ vs the bound at random sign-matched points"),
        Check("on_manifold", Tolerance(why, atol=allowance),
              "L̃ vs the bound on S_ω (homogeneous, zero-sum; dummies)"),
        Check("gap_on_manifold", Inequality("at_most", threshold, max_z=1.0, margin=0.0),
              "largest L̃ − bound at t_end, runs ending on S_ω"),
        Check("gap_trapped", Inequality("at_least", threshold, max_z=1.0),
              "smallest L̃ − bound at t_end, runs off S_ω (the same-sign trap)"),
    )  # fmt: skip


def bound_without_its_x_term(params: BoundParams, prediction: Prediction) -> Prediction:
    """The bound without its −x term, c‖μ‖₁² sinh x (the k = 1 order counted twice): κp² above
    L̃ on S_ω (0.07 at ω = 0.1, μ* = 4.4), about 1e14 times the rounding allowance."""
    points = draw_points(params)
    p = np.sum(points.manifold_mu * points.manifold_omega, axis=-1)
    on_manifold = prediction.values["on_manifold"] + params.setting.kappa * p**2
    return Prediction({**prediction.values, "on_manifold": on_manifold}, prediction.figure_data)


CLAIM_STAGE_TWO_BOUND = Claim(
    id="HE-S2-BOUND",
    source=Source(PAPER, "4.2", "(4.5)", STAGE_TWO_BOUND),
    statement="At every sign-matched point L̃ ≥ 1 + σ² − 2p + (1+κ)p² + c‖μ‖₁²(sinh x − x), "
    "x = dp²/‖μ‖₁², with equality exactly on zero-sum, homogeneous points (S_ω): along the "
    "random-start flows the gap to the bound closes for the runs that reach S_ω and stays "
    "open for those caught in the same-sign trap.",
    params=BoundParams,
    presets=PRESETS,
    predict=predict_bound,
    measure=measure_bound,
    checks=checks_bound,
    figure=FigureRef("icl_verify.figures.dynamics", "figure_stage_two_bound"),
    wrong=bound_without_its_x_term,
    summary="Stage II bound (4.5) on L̃: tight exactly on S_omega, open in the trap",
    catalogue=(3, 4),
)

CLAIMS = (CLAIM_STAGE_TWO_BOUND,)
