"""Solution-manifold claims of He et al. (2025), Section 4.2, eqs. (4.6)-(4.8).

HE-MAN part (i): for any number of heads H and any partition of the heads into
positive (omega_h = +omega), negative (-omega) and dummy (0) heads, the OV weights
that minimise Ltilde (4.1) have group sums +mu*(omega), -mu*(omega) and 0, with
mu*(omega) = omega / (2 [omega^2 + c sinh(d omega^2)]) (eq. (4.6); reference §HE-MAN).
Only the group sums are determined: heads sharing a scale are interchangeable.

Prediction: `theory.manifold_mu`. Measurement: `dynamics.minimise_over_mu`, a
trust-region Newton minimisation of Ltilde with its error bound. Figure:
`figures.manifold`. Part (ii), trained models read against the manifold, is the
"manifold_eta" check of HE-OBS2 (`validation.claims.he2025.obs_opposite_heads`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from icl_verify.validation.claim import Check, Claim, FigureRef, Source, scaled
from icl_verify.validation.claims.he2025 import PAPER
from icl_verify.validation.claims.he2025._reconstructed import MANIFOLD
from icl_verify.validation.designs import random_head_signs
from icl_verify.validation.estimates import Estimate, Measurement, Prediction
from icl_verify.validation.params import (
    ODE_SAVED_STATES,
    Footprint,
    SettingParams,
    check_order,
    param,
)
from icl_verify.validation.rules import Tolerance

from icl_verify import dynamics, theory


@dataclass(frozen=True, kw_only=True)
class ManifoldParams(SettingParams):
    """HE-MAN: random head partitions at log-uniform KQ scales, minimised over μ."""

    n_trials: int = param(help="random (H, ω, partition) trials", low=1, role="count")
    H_max: int = param(
        help="largest number of heads; H is uniform in [2, H_max]", low=2, role="heads"
    )
    omega_min: float = param(help="smallest KQ scale ω (log-uniform)", low=0, low_open=True)
    omega_max: float = param(help="largest KQ scale ω", low=0, low_open=True)
    design_seed: int = param(
        2025, help="seed of the trials (the setting, not --seed)", low=0, role="count"
    )
    gtol: float = param(1e-13, help="the optimiser's gradient-norm tolerance", low=0, low_open=True)
    rtol: float = param(
        1e-6, help="relative tolerance above the optimiser's error bounds", low=0, low_open=True
    )

    def validate(self) -> None:
        check_order(self, "omega_min", "omega_max")

    def footprint(self) -> Footprint:
        """An ODE in a few scalars per head: its saved states are what it holds."""
        return Footprint.of_tensor((ODE_SAVED_STATES, "saved states"), (16, "numbers"))


PRESETS = {
    "smoke": ManifoldParams(n_trials=4, H_max=5, omega_min=0.05, omega_max=0.6),
    "quick": ManifoldParams(n_trials=40, H_max=8, omega_min=0.05, omega_max=0.6),
    "paper": ManifoldParams(n_trials=200, H_max=8, omega_min=0.03, omega_max=0.6),
}


@dataclass(frozen=True)
class ManifoldTrials:
    """The random design: per trial a KQ scale and a sign pattern (+1, -1, 0 per head)."""

    omega: np.ndarray  # (n_trials,)
    signs: tuple[np.ndarray, ...]  # n_trials arrays of shape (H_t,)

    @property
    def has_dummy(self) -> np.ndarray:
        return np.array([np.any(s == 0) for s in self.signs])


def draw_trials(params: ManifoldParams) -> ManifoldTrials:
    """The trials: omega log-uniform, then a random +/-/0 partition with a dummy head when H >= 3.

    Drawn from `design_seed`, so the prediction and the measurement see the same trials.

    >>> trials = draw_trials(PRESETS["smoke"])
    >>> all(set(s) >= {1, -1} for s in trials.signs), trials.omega.shape
    (True, (4,))
    """
    rng = np.random.default_rng(params.design_seed)
    low, high = np.log(params.omega_min), np.log(params.omega_max)
    omega = np.exp(rng.uniform(low, high, size=params.n_trials))
    signs = tuple(random_head_signs(rng, params.H_max, dummy=True) for _ in omega)
    return ManifoldTrials(omega, signs)


def predict_manifold(params: ManifoldParams) -> Prediction:
    """Group sums +μ*(ω), -μ*(ω) per trial and zero dummy share (trials with dummies)."""
    trials = draw_trials(params)
    mu_star = theory.manifold_mu(trials.omega, params.setting)
    fine = np.geomspace(params.omega_min, params.omega_max, 200)
    return Prediction(
        values={
            "plus_sum": mu_star,
            "minus_sum": -mu_star,
            "dummy_share": np.zeros(int(trials.has_dummy.sum())),
        },
        figure_data={
            "omega": trials.omega,
            "omega_fine": fine,
            "mu_star_fine": theory.manifold_mu(fine, params.setting),
        },
    )


def measure_manifold(params: ManifoldParams, runtime) -> Measurement:
    """Minimise L̃ over μ for each trial (random start); group sums with their bounds."""
    trials = draw_trials(params)
    rng = runtime.rng("starts")
    sums, errors, heads = [], [], []
    for omega, signs in runtime.progress(
        zip(trials.omega, trials.signs, strict=True), "trials", len(trials.omega)
    ):
        start = rng.normal(size=signs.size)
        minimum = dynamics.minimise_over_mu(omega * signs, params.setting, start, params.gtol)
        sums.append(dynamics.group_sums(minimum.mu, signs))
        errors.append(dynamics.group_sum_errors(minimum.mu_error, signs))
        heads.append(signs.size)
    sums, errors = np.array(sums), np.array(errors)  # (n_trials, 3): +, -, dummy
    share, share_error = dynamics.dummy_share(sums, errors)
    dummy = trials.has_dummy
    return Measurement(
        values={
            "plus_sum": Estimate(sums[:, 0], errors[:, 0], "bound"),
            "minus_sum": Estimate(sums[:, 1], errors[:, 1], "bound"),
            "dummy_share": Estimate(share[dummy], share_error[dummy], "bound"),
        },
        figure_data={"heads": np.array(heads, dtype=float)},
    )


def checks_manifold(params: ManifoldParams) -> tuple[Check, ...]:
    why = dynamics.bound_justification(params.rtol)
    rule = Tolerance(why, rtol=params.rtol)
    return (
        Check("plus_sum", rule, "Σ μ over positive heads vs μ*(ω)"),
        Check("minus_sum", rule, "Σ μ over negative heads vs −μ*(ω)"),
        Check(
            "dummy_share",
            Tolerance(why, atol=params.rtol),
            "|Σ μ over dummy heads| / mean(|Σ₊|,|Σ₋|)",
        ),
    )


CLAIM_MANIFOLD = Claim(
    id="HE-MAN",
    source=Source(PAPER, "4.2", "(4.6)-(4.8)", MANIFOLD),
    statement="For any H and any split of the heads into KQ scales +ω, −ω and 0, the OV weights "
    "minimising L̃ sum to +μ*(ω), −μ*(ω) and 0 over the three groups, with "
    "μ*(ω) = ω / (2[ω² + c sinh(dω²)]).",
    params=ManifoldParams,
    presets=PRESETS,
    predict=predict_manifold,
    measure=measure_manifold,
    checks=checks_manifold,
    figure=FigureRef("icl_verify.figures.manifold", "figure_manifold"),
    wrong=scaled(
        "plus_sum", 1.001, why="The group sum off by 0.1%, 1000 times the relative tolerance."
    ),
    summary="OV group sums minimising L̃ are ±μ*(ω), 0",
    catalogue=(3, 5),
)

CLAIMS = (CLAIM_MANIFOLD,)
