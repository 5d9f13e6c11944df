"""What the upper-bound claims of Chen, Zhao, Zou (2024) §4.3, §5 share (CZZ-T5.1 in
`pre_gd_bound`, CZZ-T5.2 in `gd_bound`, CZZ-4.3 in `preprocessing_wins`, and the claims on
Theorem 5.1's proof, CZZ-D-CROSS in `pre_gd_cross` and CZZ-D4-7 in `proof_lemmas`; reference
`chen2024.md` §4.1, §4.2, §4.5): the setting and its parameters, the bounds on the n grid, the
tuned draws.

Setting: diagonal Sigma with a flat spectrum, ``Sigma_jj`` evenly spaced in ``[1/kappa, 1]``,
s << d, and the ``±1/sqrt(s)`` prior of their §4.3 on a support drawn afresh per prompt. That
prior keeps ``beta = min_S |r_i| = min_S Sigma_ii / sqrt(s) >= 1/(kappa sqrt(s))`` away from 0
for every prompt (a Gaussian w* has coordinates near 0, where beta and the bound blow up).

The bounds hold per prompt with constants; the prompts' beta and Tr(R Sigma R) vary with the
drawn support, so the bound is evaluated at the prior's guaranteed margin
``beta = 1/(kappa sqrt(s))``, its largest ``||R Sigma R|| = 1/s`` and its mean
``Tr(R Sigma R) = (1/d) sum_j Sigma_jj^3`` (`theory.sign_prior_constants`): constants
only, which the rule's one fitted C absorbs.
"Tuned" = oracle over relative step sizes (units of 1/lambda_max of each prompt's Gram) and
step counts 1, 2, 4, ..., t_max, chosen on tuning prompts and read on independent ones
(`numerics.tuned_gd`). Figures: `figures.sparse_bounds`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from icl_verify.theory import sign_prior_constants, theorem_5_1_bound, theorem_5_2_bound
from icl_verify.validation.estimates import Estimate, Prediction
from icl_verify.validation.params import ParameterError, SparseSettingParams, param
from icl_verify.validation.rules import BoundTrend, fit_loglog_slope

from icl_verify import numerics, statistics


@dataclass(frozen=True, kw_only=True)
class TunedGDParams(SparseSettingParams):
    """CZZ-4.3 (and the base of CZZ-T5.1 / T5.2): flat diagonal spectrum, sample sizes, tuning
    grids, repetitions."""

    kappa: float = param(2.0, help="spectrum spread: Σ_jj evenly in [1/κ, 1]", low=1)
    n_grid: tuple[int, ...] = param(
        help="sample sizes n (≥ 3 distinct; fresh prompts per n)", low=1, role="length"
    )
    reps: int = param(
        help="prompts per n, for tuning and again for evaluation", low=2, role="ensemble"
    )
    etas: tuple[float, ...] = param(
        (0.1, 0.3, 1.0, 1.9),
        help="step sizes in units of 1/λ_max of each prompt's Gram (GD converges below 2)",
        low=0,
        high=2,
        low_open=True,
        high_open=True,
    )
    t_max: int = param(
        1024, help="largest step count of the grid 1, 2, 4, ..., t_max", low=1, role="length"
    )
    delta: float = param(
        0.05,
        help="failure probability δ in log(d/δ)",
        low=0,
        high=1,
        low_open=True,
        high_open=True,
    )

    def validate(self) -> None:
        super().validate()
        if self.sigma == 0:
            raise ParameterError("sigma must be a number > 0 (the bounds scale with sigma), got 0")
        if len(set(self.n_grid)) < 3:
            raise ParameterError(
                f"n_grid must hold >= 3 distinct sample sizes, got {list(self.n_grid)}"
            )

    @property
    def spectrum(self) -> np.ndarray:
        """Σ's diagonal, evenly spaced in [1/κ, 1]; (d,)."""
        return np.linspace(1.0 / self.kappa, 1.0, self.d)

    @property
    def steps(self) -> list[int]:
        """The step counts 1, 2, 4, ..., up to t_max (t_max included)."""
        powers = [2**k for k in range(int(np.log2(self.t_max)) + 1)]
        return sorted(set(powers) | {self.t_max})

    @property
    def n_values(self) -> np.ndarray:
        return np.array(sorted(set(self.n_grid)), dtype=float)


@dataclass(frozen=True, kw_only=True)
class UpperBoundParams(TunedGDParams):
    """CZZ-T5.1 / CZZ-T5.2 / CZZ-D4-7: `TunedGDParams` and the bound-trend rule's margin."""

    margin: float = param(
        0.1, help="largest allowed slope of log(risk/bound) vs log n (reference §4.5)", low=0
    )


SIZES = {  # shared by CZZ-T5.1, T5.2 and 4.3
    "smoke": dict(d=16, s=2, sigma=1.0, n_grid=(32, 128, 512), reps=16, t_max=128),
    "quick": dict(
        d=64, s=4, sigma=1.0, n_grid=(128, 256, 512, 1024, 2048, 4096), reps=20, t_max=1024
    ),
    "paper": dict(  # the reference's pilot sizes (§4.5)
        d=64, s=4, sigma=1.0, n_grid=(256, 512, 1024, 2048, 4096, 8192), reps=40, t_max=4096
    ),
}
PRESETS = {name: UpperBoundParams(**size) for name, size in SIZES.items()}


def bound_5_1(params: TunedGDParams):
    """Theorem 5.1's bound on `n_grid` with the prior's constants.

    >>> bound = bound_5_1(PRESETS["smoke"])
    >>> bound.value.shape, bool(np.all(np.diff(bound.value) < 0))
    ((3,), True)
    """
    return theorem_5_1_bound(
        params.n_values,
        d=params.d,
        s=params.s,
        sigma=params.sigma,
        trace_sigma=float(params.spectrum.sum()),
        delta=params.delta,
        **sign_prior_constants(params.spectrum, params.s),
    )


def bound_5_2(params: TunedGDParams):
    """Theorem 5.2's bound on `n_grid`."""
    return theorem_5_2_bound(
        params.n_values,
        d=params.d,
        sigma=params.sigma,
        trace_sigma=float(params.spectrum.sum()),
        norm_sigma=float(params.spectrum.max()),
        delta=params.delta,
    )


def bound_prediction(bound) -> Prediction:
    return Prediction(
        values={"risk": bound.value},
        figure_data={"bound_A": bound.A, "bound_t": bound.t, "bound_eta": bound.eta},
    )


def tuned_draws(params: TunedGDParams, runtime, stream: str, methods) -> list:
    """`numerics.tuned_gd` at every n: GD and/or pre-gd tuned on prompts of the named stream."""
    return [
        numerics.tuned_gd(
            int(n),
            spectrum=params.spectrum,
            s=params.s,
            sigma=params.sigma,
            reps=params.reps,
            etas=params.etas,
            steps=params.steps,
            seed=runtime.seed_for(f"{stream}-{k}"),
            methods=methods,
        )
        for k, n in enumerate(runtime.progress(params.n_values.astype(int), "sample sizes"))
    ]


def risk_estimate(tuned: list) -> Estimate:
    """The mean tuned risk per n over the evaluation prompts, with its SE."""
    return Estimate(*np.array([statistics.mean_se(r.risks) for r in tuned]).T)


def tuning_data(params: TunedGDParams, tuned: list, bound, over: str = "n") -> dict:
    """What the figure and the reply quote: chosen η and t, C = max(risk/bound), slopes;
    over the n grid, or (``over="s"``) over `s_values` of a sparsity sweep."""
    risk = risk_estimate(tuned)
    ratio = risk.value / np.asarray(getattr(bound, "value", bound))
    x = params.n_values if over == "n" else params.s_values
    fit = fit_loglog_slope(x, risk.value)
    return {
        over: x,
        "chosen_eta": np.array([r.eta for r in tuned]),
        "chosen_t": np.array([r.t for r in tuned], dtype=float),
        "t_at_edge": np.array([r.at_edge for r in tuned], dtype=float),
        "ratio": ratio,
        "constant_C": float(ratio.max()),
        "risk_slope": fit.slope.value,
        "risk_slope_se": fit.slope.error,
        "risk_intercept": fit.intercept,
    }


def trend_rule(
    params: UpperBoundParams, theorem: str, quantity: str = "tuned risk"
) -> BoundTrend:
    why = (
        f"{theorem} bounds the {quantity} up to one constant and logs (reference §4.5): the "
        f"slope of log({quantity} / full bound, logs included) vs log n must be ≤ "
        f"{params.margin:g}, since a log^k factor moves a local slope by ~k/ln n, and the "
        "bound is not tight, so decaying faster than it is consistent. SE: independent "
        f"evaluation prompts per n ({params.reps}), tuned on separate prompts (no selection bias)."
    )
    return BoundTrend("at_most", x=tuple(params.n_values), margin=params.margin, justification=why)


def faster_bound(params: UpperBoundParams, prediction: Prediction) -> Prediction:
    """The bound with the wrong exponent: times (n_0/n)^{3/2}, i.e. ~n^{−2} instead of n^{−1/2}."""
    n = params.n_values
    return prediction.with_values(risk=np.asarray(prediction.values["risk"]) * (n[0] / n) ** 1.5)
