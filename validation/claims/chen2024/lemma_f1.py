"""CZZ-F1: Lemma F.1 of Chen, Zhao, Zou (2024), App. F: with high probability
``||X^T eps / n||^2 >~ sigma^2 d / n``, the noise's correlations that the lower bounds of
Theorem 5.3 for OLS, ridge and GD in the regime n >~ d rest on (reference `chen2024.md` §4.4).

Setting of Theorem 5.3: X (n, d) with N(0, I_d) rows, eps ~ N(0, sigma^2 I_n). Measured
(`numerics.noise_correlation_norms`): ``||X^T eps / n||^2`` on independent draws at every
point of a product grid of (n, d), and its delta-quantile (`statistics.quantile_se`): the
value it exceeds with probability 1 - delta, which the lemma bounds from below. Predicted:
``sigma^2 d / n`` (`theory.lemma_f1_noise_bound`), up to the lemma's constant.
The reference catalogue does not restate the lemma's conditions; the grids keep n >= 4 d (the
regime n >~ d of the lower bound that uses it) and d >= 8 > log(1/delta).

The rule fits the scaling, not one point: "one constant c serves the whole grid" is a
`BoundTrend` (lower bound) in each direction, the least-squares slope of log(quantile /
(sigma^2 d / n)) on log d and on log n, each >= -margin. On a full product grid log d and
log n are orthogonal regressors, so each slope, fitted over all the grid's points, is the
coefficient of a joint fit in (log d, log n). It fails against the plausible competitors: a
quantity of order sigma^2 / n (no d) leaves a slope -1 in d, one of order sigma^2 d / n^2 a
slope -1 in n, ten times the margin (`tests/validation/test_claim_app_f.py`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from icl_verify.theory import lemma_f1_noise_bound
from icl_verify.validation.claim import Check, Claim, FigureRef, Source
from icl_verify.validation.claims.chen2024 import PAPER
from icl_verify.validation.estimates import Estimate, Measurement, Prediction
from icl_verify.validation.params import ParameterError, Params, param
from icl_verify.validation.rules import BoundTrend, propagated_loglog_slope

from icl_verify import numerics, statistics


@dataclass(frozen=True, kw_only=True)
class NoiseLemmaParams(Params):
    """CZZ-F1: the (n, d) grid, σ, the probability level, the draws per point."""

    n_grid: tuple[int, ...] = param(help="sample sizes n (≥ 3 distinct)", low=2, role="length")
    d_values: tuple[int, ...] = param(
        help="dimensions d (≥ 3 distinct)", low=1, high=4096, role="width"
    )
    sigma: float = param(1.0, help="label-noise standard deviation σ", low=0, low_open=True)
    delta: float = param(
        0.05, help="the lemma's failure probability: the δ-quantile is read", low=0, high=0.5,
        low_open=True, high_open=True,
    )  # fmt: skip
    tasks: int = param(help="independent draws of (X, ε) per (n, d)", low=20, role="count")
    margin: float = param(
        0.1, help="largest allowed fall of log(quantile/bound) per unit log d or log n", low=0
    )

    def validate(self) -> None:
        for name in ("n_grid", "d_values"):
            if len(set(getattr(self, name))) < 3:
                raise ParameterError(
                    f"{name} must hold >= 3 distinct values, got {list(getattr(self, name))}"
                )

    @property
    def n_values(self) -> np.ndarray:
        return np.array(sorted(set(self.n_grid)), dtype=float)

    @property
    def d_array(self) -> np.ndarray:
        return np.array(sorted(set(self.d_values)), dtype=float)

    @property
    def grid(self) -> tuple[np.ndarray, np.ndarray]:
        """The product grid flattened, n-major: (n of each point, d of each point)."""
        n, d = np.meshgrid(self.n_values, self.d_array, indexing="ij")
        return n.ravel(), d.ravel()


PRESETS = {
    "smoke": NoiseLemmaParams(n_grid=(64, 128, 256), d_values=(4, 8, 16), tasks=400),
    "quick": NoiseLemmaParams(n_grid=(256, 512, 1024, 2048), d_values=(8, 16, 32, 64),
                              tasks=2000),  # fmt: skip
    "paper": NoiseLemmaParams(n_grid=(512, 1024, 2048, 4096, 8192),
                              d_values=(8, 16, 32, 64, 128), tasks=4000),  # fmt: skip
}


def predict_f1(params: NoiseLemmaParams) -> Prediction:
    """σ² d / n at every grid point, read along d and along n."""
    bound = lemma_f1_noise_bound(*params.grid, params.sigma)
    return Prediction(values={"quantile_by_d": bound, "quantile_by_n": bound})


def measure_f1(params: NoiseLemmaParams, runtime) -> Measurement:
    """The δ-quantile of ‖Xᵀ ε / n‖² (its order-statistic SE) and the mean (its SE) at
    every grid point, from fresh draws per point; the fitted exponents of the quantile."""
    n, d = params.grid
    quantiles, means = [], []
    for k, (size, width) in enumerate(runtime.progress(list(zip(n, d, strict=True)), "(n, d)")):
        norms = numerics.noise_correlation_norms(
            params.tasks, int(size), int(width), params.sigma, seed=runtime.seed_for(f"nd-{k}")
        )
        quantiles.append(statistics.quantile_se(norms, params.delta))
        means.append(statistics.mean_se(norms))
    quantile = Estimate(*np.array(quantiles).T)
    mean = np.array(means, dtype=float)  # (points, 2)
    in_d, in_n = (propagated_loglog_slope(x, quantile) for x in (d, n))
    return Measurement(
        values={"quantile_by_d": quantile, "quantile_by_n": quantile},
        figure_data={
            "n": n, "d": d, "mean": mean[:, 0], "mean_se": mean[:, 1],
            "exponent_d": in_d.value, "exponent_d_se": in_d.error,
            "exponent_n": in_n.value, "exponent_n_se": in_n.error,
        },  # fmt: skip
    )


def checks_f1(params: NoiseLemmaParams) -> tuple[Check, ...]:
    n, d = params.grid
    why = (
        f"Lemma F.1 bounds ‖Xᵀ ε/n‖² from below w.p. ≥ 1 - δ = {1 - params.delta:g} "
        "up to one constant c: its δ-quantile (order-statistic SE, "
        f"{params.tasks} draws per point) over σ² d / n must not fall along {{axis}} "
        "(the slope of the log ratio on log {axis} over the whole product grid ≥ "
        f"-{params.margin:g}, the margin of reference §4.5 for curvature; a competitor of "
        "order σ²/n or "
        "σ² d/n² falls with slope -1)"
    )
    return tuple(
        Check(f"quantile_by_{axis}",
              BoundTrend("at_least", x=tuple(x), margin=params.margin,
                         justification=why.format(axis=axis)),
              f"δ-quantile of ‖Xᵀε/n‖² vs σ²d/n, trend in {axis}")
        for axis, x in (("d", d), ("n", n))
    )  # fmt: skip


def lost_normalisation(params: NoiseLemmaParams, prediction: Prediction) -> Prediction:
    """Wrong: the normalisation misread as ‖Xᵀ ε‖² / n ≳ σ² d (one 1/n lost): the
    bound n times larger, so the quantile over it falls like 1/n, a slope -1 in n, ten times
    the margin 0.1."""
    n, _ = params.grid
    return prediction.with_values(quantile_by_n=np.asarray(prediction.values["quantile_by_n"]) * n)


CLAIM_F1 = Claim(
    id="CZZ-F1",
    source=Source(PAPER, "App. F, Lemma F.1 (Theorem 5.3's lower bounds)"),
    statement="For X with N(0, I_d) rows and ε ~ N(0, σ²I_n), ‖Xᵀε/n‖² ≳ σ²d/n with "
    "probability ≥ 1 − δ.",
    params=NoiseLemmaParams,
    presets=PRESETS,
    predict=predict_f1,
    measure=measure_f1,
    checks=checks_f1,
    figure=FigureRef("icl_verify.figures.sparse_bounds", "figure_lemma_f1"),
    wrong=lost_normalisation,
    summary="δ-quantile of ‖Xᵀε/n‖² over an (n, d) grid: one c with quantile ≥ c σ²d/n (slopes "
    "of log(quantile/(σ²d/n)) on log d and on log n ≥ −margin)",
    catalogue=(4, 12),
)

CLAIMS = (CLAIM_F1,)
