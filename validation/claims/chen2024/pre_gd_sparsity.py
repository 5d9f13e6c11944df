"""CZZ-T5.1-S: Theorem 5.1's dependence on the sparsity s (Chen, Zhao, Zou 2024 §5, the remark
after the theorem: the bound "improves as s shrinks"; reference `chen2024.md` §4.1).

The setting of CZZ-T5.1 (`_tuned_gd`: flat diagonal Sigma, the ``±1/sqrt(s)`` prior, so
||w*|| = 1 at every s and only the support's size changes) at one sample size, n = the largest
of ``n_grid``, over ``s_grid``. Measured: the oracle-tuned excess risk of pre-gd
(`numerics.tuned_gd`) per s. Predicted: Theorem 5.1's full bound (log t / beta) sqrt(A) per s,
with the prior's constants (beta = 1/(kappa sqrt(s)), `theory.sparse_gd.sign_prior_constants`),
and its s-exponent (the least-squares slope of log bound on log s).

Two rules, each able to fail:

- smaller s, lower risk: the slope of log(risk) on log(s) is >= 0;
- the improvement the bound promises is realised: that slope is >= the bound's s-exponent (a
  risk flatter in s than the bound would gain less from a smaller s than the theorem says).

Both one-sided at 3 SE, the slope's SE propagated from the per-s Monte Carlo SEs. Not a rule:
a trend of risk/bound over s. Unlike n, s is bounded (by d, and by the theorem's condition
n >~ s^2 t^2 ... once beta = 1/(kappa sqrt(s)) is put in), so a risk rising towards a loose
bound as s grows contradicts nothing; the ratio is drawn.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np
from icl_verify.theory.sparse_gd import sign_prior_constants, theorem_5_1_bound
from icl_verify.validation.claim import (
    Check,
    Claim,
    Inequality,
    Measurement,
    Prediction,
    Source,
    fit_loglog_slope,
    propagated_loglog_slope,
)
from icl_verify.validation.claims.chen2024._tuned_gd import (
    PRESETS,
    TunedGDParams,
    risk_estimate,
    tuning_data,
)
from icl_verify.validation.params import ParameterError, param

from icl_verify import numerics


@dataclass(frozen=True, kw_only=True)
class SparsityParams(TunedGDParams):
    """CZZ-T5.1-S: CZZ-T5.1's setting, the sparsities read at n = max(n_grid) (s, CZZ-T5.1's,
    among them)."""

    s_grid: tuple[int, ...] = param(help="sparsities s (>= 3 distinct, each <= d; s among them)",
                                    low=1)  # fmt: skip

    def validate(self) -> None:
        super().validate()
        if len(set(self.s_grid)) < 3 or max(self.s_grid) > self.d or self.s not in self.s_grid:
            raise ParameterError(
                f"s_grid must hold >= 3 distinct sparsities in [1, d={self.d}], s = {self.s} "
                f"among them, got {list(self.s_grid)}"
            )

    @property
    def n(self) -> int:
        return int(max(self.n_grid))

    @property
    def s_values(self) -> np.ndarray:
        return np.array(sorted(set(self.s_grid)), dtype=float)


def _bound(params: SparsityParams) -> np.ndarray:
    """Theorem 5.1's bound at n, one value per s (the prior's constants at each s)."""
    return np.array([
        float(theorem_5_1_bound(
            params.n, d=params.d, s=int(s), sigma=params.sigma,
            trace_sigma=float(params.spectrum.sum()), delta=params.delta,
            **sign_prior_constants(params.spectrum, int(s)),
        ).value)
        for s in params.s_values
    ])  # fmt: skip


def predict_sparsity(params: SparsityParams) -> Prediction:
    """The risk's s-exponent at least 0, and at least the bound's; the bound per s (drawn)."""
    bound = _bound(params)
    exponent = fit_loglog_slope(params.s_values, bound).slope.value
    return Prediction(
        values={"risk_slope": 0.0, "rate_in_s": exponent}, figure_data={"bound": bound}
    )


def measure_sparsity(params: SparsityParams, runtime) -> Measurement:
    """Tuned pre-gd at n for every s (fresh prompts per s)."""
    tuned = [
        numerics.tuned_gd(
            params.n, spectrum=params.spectrum, s=int(s), sigma=params.sigma, reps=params.reps,
            etas=params.etas, steps=params.steps, seed=runtime.seed_for(f"s-{int(s)}"),
            methods=("pre_gd",),
        ).pre_gd
        for s in runtime.progress(params.s_values, "sparsities")
    ]  # fmt: skip
    risk = risk_estimate(tuned)
    slope = propagated_loglog_slope(params.s_values, risk)
    return Measurement(
        values={"risk_slope": slope, "rate_in_s": slope},
        figure_data=tuning_data(params, tuned, _bound(params), over="s")
        | {"risk": risk.value, "risk_se": risk.error},
    )


def checks_sparsity(params: SparsityParams) -> tuple[Check, ...]:
    why = (
        "least-squares slope of log(tuned risk) on log s, its SE propagated from the per-s "
        f"Monte Carlo SEs ({params.reps} evaluation prompts per s, tuned on separate ones); "
        "one-sided at 3 SE"
    )
    return (
        Check("risk_slope", Inequality("at_least", "the remark after Theorem 5.1 read on the "
                                       "risk (smaller s, lower risk): " + why, max_z=3),
              "slope of log(tuned pre-gd risk) vs log s ≥ 0"),
        Check("rate_in_s", Inequality("at_least", "the bound's improvement with a smaller s "
                                      "realised by the risk: " + why, max_z=3),
              "that slope ≥ the bound's s-exponent"),
    )  # fmt: skip


def steeper_in_s(params: SparsityParams, prediction: Prediction) -> Prediction:
    """Wrong: the bound's s-exponent plus 2 (the risk would have to grow like s^2.5 and more,
    faster than the oracle-support rate s/n that pre-gd cannot beat by much)."""
    return prediction.with_values(rate_in_s=prediction.values["rate_in_s"] + 2.0)


SPARSITY_PRESETS = {
    name: SparsityParams(
        **{f.name: getattr(preset, f.name) for f in dataclasses.fields(TunedGDParams)},
        s_grid=(1, 2, 4, 8) if name == "smoke" else (1, 2, 4, 8, 16),
    )
    for name, preset in PRESETS.items()
}

CLAIM_T51_S = Claim(
    id="CZZ-T5.1-S",
    source=Source("Chen et al. 2024", "5, Thm 5.1 and the remark after it"),
    statement="Theorem 5.1's bound improves as s shrinks: at fixed n, the tuned excess risk of "
    "GD on Algorithm 1's preprocessed data falls with the sparsity s, at least as fast as the "
    "bound (log t/β)√A, β = 1/(κ√s), does.",
    params=SparsityParams,
    presets=SPARSITY_PRESETS,
    predict=predict_sparsity,
    measure=measure_sparsity,
    checks=checks_sparsity,
    figure="sparse_bounds:figure_sparsity",
    wrong=steeper_in_s,
    summary=(
        "tuned pre-gd at n = max(n_grid) over s (||w*|| = 1 at every s): slope of log risk on "
        "log s ≥ 0 and ≥ the bound's s-exponent; risk/bound drawn"
    ),
    catalogue=(4, 8),
)

CLAIMS = (CLAIM_T51_S,)
