"""Solution-manifold claims of He et al. (2025), Section 4.2, eqs. (4.6)-(4.8).

HE-MAN part (i): for any number of heads H and any partition of the heads into
positive (omega_h = +omega), negative (-omega) and dummy (0) heads, the OV weights
that minimise Ltilde (4.1) have group sums +mu*(omega), -mu*(omega) and 0, with
mu*(omega) = omega / (2 [omega^2 + c sinh(d omega^2)]) (eq. (4.6); reference §HE-MAN).
Only the group sums are determined: heads sharing a scale are interchangeable.

Part (ii), trained models read against the manifold, is the "manifold_eta" check
of HE-OBS2 (`validation.claims.he2025.observations`), which reads the shared trained ensemble.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from icl_verify.figures.style import (
    MEASURED,
    PALETTE,
    REFERENCE,
    THEORY,
    log_ticks,
    new_figure,
    set_log_ticks,
)
from icl_verify.theory import Setting, manifold_mu
from icl_verify.validation.claim import (
    Check,
    Claim,
    Estimate,
    Measurement,
    Prediction,
    Source,
    Tolerance,
)
from icl_verify.validation.claims._mu_minimiser import (
    group_sum_errors,
    group_sums,
    minimise_over_mu,
    solver_justification,
)


@dataclass(frozen=True)
class ManifoldTrials:
    """The random design: per trial a KQ scale and a sign pattern (+1, -1, 0 per head)."""

    omega: np.ndarray  # (n_trials,)
    signs: tuple[np.ndarray, ...]  # n_trials arrays of shape (H_t,)

    @property
    def has_dummy(self) -> np.ndarray:
        return np.array([np.any(s == 0) for s in self.signs])


def draw_trials(params) -> ManifoldTrials:
    """The trials: H uniform in [2, H_max], omega log-uniform, a random +/-/0 partition.

    Every pattern holds a positive and a negative head, and a dummy head when H >= 3;
    the remaining heads are +, - or 0 at random, in shuffled order. Drawn from
    `design_seed`, so the prediction and the measurement see the same trials.

    >>> trials = draw_trials({"n_trials": 3, "H_max": 4, "omega_min": 0.1, "omega_max": 0.5,
    ...                       "design_seed": 1})
    >>> all(set(s) >= {1, -1} for s in trials.signs), trials.omega.shape
    (True, (3,))
    """
    count, heads_max = params["n_trials"], params["H_max"]
    low, high = params["omega_min"], params["omega_max"]
    if not (count >= 1 and heads_max >= 2 and 0 < low < high):
        raise ValueError(f"need n_trials >= 1, H_max >= 2, 0 < omega_min < omega_max, got {params}")
    rng = np.random.default_rng(params["design_seed"])
    omega = np.exp(rng.uniform(np.log(low), np.log(high), size=count))
    signs = []
    for _ in range(count):
        heads = int(rng.integers(2, heads_max + 1))
        fixed = [1, -1, 0][: min(heads, 3)]
        pattern = np.array(fixed + list(rng.choice([1, -1, 0], size=heads - len(fixed))))
        signs.append(rng.permutation(pattern))
    return ManifoldTrials(omega, tuple(signs))


def _setting(params) -> Setting:
    return Setting(d=params["d"], L=params["L"], sigma2=params["sigma2"])


def predict_manifold(params) -> Prediction:
    """Group sums +mu*(omega), -mu*(omega) per trial and zero dummy share (trials with dummies)."""
    setting, trials = _setting(params), draw_trials(params)
    mu_star = manifold_mu(trials.omega, setting)
    fine = np.geomspace(params["omega_min"], params["omega_max"], 200)
    return Prediction(
        values={
            "plus_sum": mu_star,
            "minus_sum": -mu_star,
            "dummy_share": np.zeros(int(trials.has_dummy.sum())),
        },
        figure_data={
            "omega": trials.omega,
            "omega_fine": fine,
            "mu_star_fine": manifold_mu(fine, setting),
        },
    )


def measure_manifold(params, runtime) -> Measurement:
    """Minimise Ltilde over mu for each trial (random start); group sums with their bounds."""
    setting, trials = _setting(params), draw_trials(params)
    rng = runtime.rng("starts")
    sums, errors, heads = [], [], []
    for omega, signs in runtime.progress(
        zip(trials.omega, trials.signs, strict=True), "trials", len(trials.omega)
    ):
        minimum = minimise_over_mu(
            omega * signs, setting, rng.normal(size=signs.size), params["gtol"]
        )
        sums.append(group_sums(minimum.mu, signs))
        errors.append(group_sum_errors(minimum.mu_error, signs))
        heads.append(signs.size)
    sums, errors = np.array(sums), np.array(errors)  # (n_trials, 3): +, -, dummy
    scale = (np.abs(sums[:, 0]) + np.abs(sums[:, 1])) / 2
    share = np.abs(sums[:, 2]) / scale
    share_error = (errors[:, 2] + share * (errors[:, 0] + errors[:, 1]) / 2) / scale
    dummy = trials.has_dummy
    return Measurement(
        values={
            "plus_sum": Estimate(sums[:, 0], errors[:, 0], "bound"),
            "minus_sum": Estimate(sums[:, 1], errors[:, 1], "bound"),
            "dummy_share": Estimate(share[dummy], share_error[dummy], "bound"),
        },
        figure_data={"heads": np.array(heads, dtype=float)},
    )


def checks_manifold(params) -> tuple[Check, ...]:
    why = solver_justification(params["rtol"])
    rule = Tolerance(why, rtol=params["rtol"])
    return (
        Check("plus_sum", rule, "Σ μ over positive heads vs μ*(ω)"),
        Check("minus_sum", rule, "Σ μ over negative heads vs −μ*(ω)"),
        Check(
            "dummy_share",
            Tolerance(why, atol=params["rtol"]),
            "|Σ μ over dummy heads| / mean(|Σ₊|,|Σ₋|)",
        ),
    )


def figure_manifold(params, prediction: Prediction, measurement: Measurement):
    """Left: each trial's group sums on the mu*(omega) curve; right: deviations vs tolerance."""
    figure, axes = new_figure(2, width=4.4)
    sums_axis, error_axis = axes[0]
    omega = prediction.figure_data["omega"]
    plus, minus = measurement.values["plus_sum"], measurement.values["minus_sum"]
    mu_star = prediction.values["plus_sum"]
    sums_axis.plot(
        prediction.figure_data["omega_fine"],
        prediction.figure_data["mu_star_fine"],
        color=THEORY,
        label=r"$\mu^*(\omega)$ of (4.6)",
    )
    sums_axis.plot(
        omega, plus.value, "o", color=MEASURED, ms=4, label=r"$\Sigma_+$: positive heads"
    )
    sums_axis.plot(
        omega, -minus.value, "x", color=PALETTE[2], ms=6, label=r"$-\Sigma_-$: negative heads"
    )
    sums_axis.set(
        xscale="log",
        yscale="log",
        xlabel=r"KQ scale $\omega$",
        ylabel=r"OV group sum at the minimiser of $\tilde L$",
        title=f"(a) {omega.size} random trials, H ≤ {params['H_max']}, "
        f"d={params['d']}, L={params['L']}, σ²={params['sigma2']}",
    )
    sums_axis.legend(loc="upper right")

    floor = 1e-17  # exact zeros drawn at the bottom of the log axis
    has_dummy = measurement.figure_data["heads"] >= 3  # the design gives these a dummy head
    deviations = (  # (x, y, plot style)
        (omega, np.abs(plus.value - mu_star) / mu_star,
         dict(marker="o", color=MEASURED, label=r"$|\Sigma_+ - \mu^*| / \mu^*$")),
        (omega, np.abs(minus.value + mu_star) / mu_star,
         dict(marker="x", color=PALETTE[2], label=r"$|\Sigma_- + \mu^*| / \mu^*$")),
        (omega[has_dummy], measurement.values["dummy_share"].value,
         dict(marker="s", mfc="none", color=THEORY,
              label=r"dummy share $|\Sigma_0|/|\Sigma_\pm|$")),
        (omega, plus.error / mu_star,
         dict(marker="_", ms=12, mew=1.5, color="black", zorder=4,
              label=r"optimiser's bound on $\Sigma_+$ (relative)")),
    )  # fmt: skip
    for x, y, style in deviations:
        error_axis.plot(x, np.maximum(y, floor), ls="none", **{"ms": 5, **style})
    error_axis.axhline(params["rtol"], color=REFERENCE, ls="--", lw=1, label="tolerance rtol")
    error_axis.set(
        xscale="log",
        yscale="log",
        xlabel=r"KQ scale $\omega$",
        ylabel="relative deviation (zeros drawn at 1e-17)",
        title="(b) deviations from (4.6) against the tolerance",
    )
    error_axis.set_ylim(floor / 3, 1e2)
    error_axis.legend(loc="upper left", fontsize=7, ncols=2)
    for axis in axes[0]:
        set_log_ticks(axis, log_ticks(params["omega_min"], params["omega_max"]))
    return figure


CLAIM_MANIFOLD = Claim(
    id="HE-MAN",
    source=Source("He et al. 2025", "4.2", "(4.6)-(4.8)"),
    statement="For any H and any split of the heads into KQ scales +ω, −ω and 0, the OV weights "
    "minimising L̃ sum to +μ*(ω), −μ*(ω) and 0 over the three groups, with "
    "μ*(ω) = ω / (2[ω² + c sinh(dω²)]).",
    predict=predict_manifold,
    measure=measure_manifold,
    checks=checks_manifold,
    figure=figure_manifold,
)

CLAIMS = (CLAIM_MANIFOLD,)
