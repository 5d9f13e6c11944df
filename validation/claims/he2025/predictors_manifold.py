"""HE-4.9 of He et al. (2025), Section 4.3, eq. (4.9): every point of the manifold predicts alike.

HE-4.9: on the solution manifold S_omega (4.7), any H >= 2 heads with any split of the OV
weights inside the + and - groups (dummy heads carry mu = 0) predict exactly what the
two-head model (omega, mu*), (-omega, -mu*) predicts (eq. (4.9); reference §HE-4.9).
Measured: `numerics.relative_prediction_gaps` on random points of S_omega.

Figure: `figures.predictors`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from icl_verify.validation.claim import Check, Claim, FigureRef, Reconstructed, Source, shifted
from icl_verify.validation.claims.he2025 import PAPER
from icl_verify.validation.claims.he2025._reconstructed import MANIFOLD
from icl_verify.validation.designs import random_head_signs
from icl_verify.validation.estimates import Estimate, Measurement, Prediction
from icl_verify.validation.params import SettingParams, check_order, param
from icl_verify.validation.rules import Tolerance

from icl_verify import numerics, theory

FLOAT64_EPS = float(np.finfo(np.float64).eps)


@dataclass(frozen=True, kw_only=True)
class ManifoldPredictionParams(SettingParams):
    """HE-4.9: random points of S_omega at log-uniform ω, on shared prompts."""

    HELD = ("n_prompts",)  # drawn at once, not in blocks

    n_trials: int = param(help="random (ω, H, split) points of S_omega", low=1, role="count")
    H_max: int = param(
        help="largest number of heads; H is uniform in [2, H_max]", low=2, role="heads"
    )
    omega_min: float = param(
        0.02, help="smallest KQ scale ω (log-uniform)", low=0, low_open=True
    )
    omega_max: float = param(0.6, help="largest KQ scale ω", low=0, low_open=True)
    design_seed: int = param(
        2025, help="seed of the trials (the setting, not --seed)", low=0, role="count"
    )
    n_prompts: int = param(
        help="prompts on which every trial's predictions are compared", low=1, role="count"
    )

    def validate(self) -> None:
        check_order(self, "omega_min", "omega_max")


PRESETS_49 = {
    "smoke": ManifoldPredictionParams(n_trials=6, H_max=5, n_prompts=512),
    "quick": ManifoldPredictionParams(n_trials=40, H_max=8, n_prompts=4096),
    "paper": ManifoldPredictionParams(n_trials=200, H_max=8, n_prompts=20_000),
}


def draw_manifold_heads(
    heads_max: int, omega: float, mu_star: float, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """A random point of S_omega: H in [2, heads_max] heads, each +omega, -omega or 0 (dummy).

    The signs are `validation.designs.random_head_signs` (a positive and a negative head at
    least); the group sums +-mu_star are split at random (Dirichlet) inside each group, with the
    sign of the group; dummy heads get mu = 0. Returns (omega_h, mu_h), each of shape (H,).

    >>> w, m = draw_manifold_heads(6, 0.1, 4.0, np.random.default_rng(0))
    >>> bool(np.isclose(m[w > 0].sum(), 4.0) and np.isclose(m[w < 0].sum(), -4.0))
    True
    """
    signs = random_head_signs(rng, heads_max, dummy=False)
    mu = np.zeros(signs.size)
    for sign in (1, -1):
        group = signs == sign
        mu[group] = sign * mu_star * rng.dirichlet(np.ones(group.sum()))
    return omega * signs.astype(float), mu


@dataclass(frozen=True)
class ManifoldPoints:
    """The design of HE-4.9: per trial ω, μ*(ω) and H heads (ω_h, μ_h) on S_omega."""

    omega: np.ndarray  # (n_trials,)
    mu: np.ndarray  # (n_trials,)
    omega_heads: tuple[np.ndarray, ...]  # n_trials arrays of shape (H_t,)
    mu_heads: tuple[np.ndarray, ...]


def draw_manifold_points(params: ManifoldPredictionParams) -> ManifoldPoints:
    """The trials: omega log-uniform, then a random point of S_omega (`draw_manifold_heads`).

    Drawn from `design_seed`, so the prediction and the measurement see the same trials.

    >>> points = draw_manifold_points(PRESETS_49["smoke"])
    >>> points.omega.shape, all(w.size == m.size for w, m in zip(points.omega_heads,
    ...                                                          points.mu_heads))
    ((6,), True)
    """
    rng = np.random.default_rng(params.design_seed)
    low, high = np.log(params.omega_min), np.log(params.omega_max)
    omega = np.exp(rng.uniform(low, high, params.n_trials))
    mu = [float(theory.manifold_mu(w, params.setting)) for w in omega]
    heads = [draw_manifold_heads(params.H_max, w, m, rng) for w, m in zip(omega, mu, strict=True)]
    return ManifoldPoints(
        omega, np.array(mu), *(tuple(column) for column in zip(*heads, strict=True))
    )


def _rounding_tolerance(params: ManifoldPredictionParams) -> float:
    return 4.0 * (params.H_max + 2) * FLOAT64_EPS


def predict_49(params: ManifoldPredictionParams) -> Prediction:
    """Zero difference for every trial (the predictions are identical)."""
    return Prediction(
        values={"prediction_gap": np.zeros(params.n_trials)},
        figure_data={"tolerance": _rounding_tolerance(params)},
    )


def measure_49(params: ManifoldPredictionParams, runtime) -> Measurement:
    """Per trial the largest relative gap between the H-head and the two-head predictions."""
    points = draw_manifold_points(params)
    gaps = numerics.relative_prediction_gaps(
        points.omega_heads,
        points.mu_heads,
        points.omega,
        points.mu,
        params.setting,
        params.n_prompts,
        seed=runtime.seed_for("prompts"),
    )
    return Measurement(
        values={"prediction_gap": Estimate(gaps, 0.0, "bound")},
        figure_data={
            "omega": points.omega,
            "heads": np.array([w.size for w in points.omega_heads], float),
        },
    )


def checks_49(params: ManifoldPredictionParams) -> tuple[Check, ...]:
    why = (
        "Exact identity: heads sharing a scale compute the same softmax average, so only float64 "
        "rounding of the sum over H + 2 terms remains, at most (H + 2) ε in units of the summed "
        f"magnitudes; allowed 4 (H_max + 2) ε = {_rounding_tolerance(params):.2g}."
    )
    return (
        Check(
            "prediction_gap",
            Tolerance(why, atol=_rounding_tolerance(params)),
            "max |y_H − y_2| / scale over prompts, per trial",
        ),
    )


CLAIM_49 = Claim(
    id="HE-4.9",
    source=Source(
        PAPER,
        "4.3",
        "(4.9)",
        (Reconstructed("(4.9), the predictor of a point of S_ω", "HE-4.9", "RECON"), MANIFOLD),
    ),
    statement="On S_ω, any H ≥ 2 heads with any split of the OV weights inside the ± groups "
    "predict exactly what the two-head model (ω, μ*), (−ω, −μ*) predicts.",
    params=ManifoldPredictionParams,
    presets=PRESETS_49,
    predict=predict_49,
    measure=measure_49,
    checks=checks_49,
    figure=FigureRef("icl_verify.figures.predictors", "figure_manifold_predictions"),
    wrong=shifted(
        "prediction_gap",
        lambda gap: gap + 1e-3,
        why="Predictions apart by 1e-3 of the summed magnitudes (as a 0.1% error in a group sum "
        "gives): about 1e11 times the rounding tolerance.",
    ),
    summary="any H on S_omega predicts exactly as the two-head model",
    catalogue=(4, 1),
)

CLAIMS = (CLAIM_49,)
