"""Lemmas D.1 and D.2 of Chen, Zhao, Zou (2024), App. D (reference `chen2024.md` §4.1, §4.5):
how well Algorithm 1's correlations ``r_hat = X^T y / n`` estimate ``r = Sigma w*``.

Setting as in `_tuned_gd` (CZZ-T5.1, -T5.2, -4.3): diagonal Sigma evenly spread in
``[1/kappa, 1]`` and the ``±1/sqrt(s)`` prior on a support drawn afresh per prompt, so that
every prompt has ``beta = min_S |r_i| >= 1/(kappa sqrt(s))`` (the prior's guaranteed margin,
used below).

- CZZ-D1: ``||R_hat - R||_2 = max_j |r_hat_j - r_j|`` (R diagonal) against Lemma D.1's
  ``K sqrt(s log(d/delta)/n)``, ``K = max_i Sigma_ii + sigma^2``, over an n grid: the ratio must
  show no upward trend (`BoundTrend`), i.e. ``||R_hat - R|| sqrt(n/(s log d))`` stays bounded.
- CZZ-D2: the fraction of prompts on which some ``|r_hat_i| < |r_i|/2`` on S (Algorithm 1
  loses a support coordinate), at ``n = c s log(d/delta)/beta^2`` over a grid of c. Lemma D.2
  says it is <= delta beyond some constant c; the constant is unstated, so the check uses
  the explicit one derived from the Gaussian tail of ``r_hat_i``
  (`theory.support_retention_sample_size`, ``n* = 8 V log(s/delta)/beta^2``): the
  failure fraction must be <= delta at every c with ``c s log(d/delta)/beta^2 >= n*``. The
  figure and record give the smallest c of the grid where the data already reach delta.
  Below n* the lemma's content is its proof: a tail per coordinate and a union bound over S,
  i.e. the expected number of support coordinates lost, ``E sum_{i in S} P(|r_hat_i| <
  |r_i|/2)`` (the union bound, exact as an expectation), falls exponentially in n. Its rate
  is checked over the grid points with at least `MIN_EVENTS` lost coordinates (the binomial's
  normal approximation, under which the delta method's SE of the log holds): the slope of its
  log on n (`validation.rules.weighted_log_slope`) lies between the smallest and the largest secant
  slope of a coordinate's exact loss probability between neighbouring grid points
  (`theory.support_loss_rates`, re-derived: a mixture's log-secants, and any
  least-squares slope over grid points, lie between its components'). As n grows the secants
  tend to Cramér's exponent of the tail (figure). The wrong prediction reads the derived
  Gaussian-tail bound ``s exp(-n beta^2/(8V))`` as the law (rate ``beta^2/(8V)``, 2.7 and 2.2 x
  below the slowest secant at quick and paper size) and takes delta at every c.

- CZZ-D3: Lemma D.3 (Bartlett et al. 2020, Thm 9), the sample covariance's error
  ``||Sigma_hat - Sigma||_2 <~ ||Sigma|| max(sqrt(r/n), r/n, sqrt(log(1/delta)/n),
  log(1/delta)/n)`` with the effective rank ``r = Tr(Sigma)/||Sigma||``, over an n grid that
  spans both regimes (n < r, where r/n leads, and n > r): as for CZZ-D1 the ratio of the mean
  error to the bound must show no upward trend (`BoundTrend`). Sigma is diagonal with the
  decaying spectrum ``j^{-decay}``, so that r is well below d (the rate is r's, not d's).
  The wrong prediction keeps only the linear terms ``||Sigma|| max(r, log(1/delta))/n`` (the
  rate of a variance, not of a deviation), whose ratio grows like sqrt(n/r) beyond n = r.

Measurements: `numerics.sample_correlations`, `numerics.covariance_errors`. Figures:
`figures.sparse_bounds`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from icl_verify.theory import (
    lemma_d1_bound,
    lemma_d2_sample_size,
    lemma_d3_bound,
    support_loss_rates,
    support_retention_sample_size,
)
from icl_verify.validation.claim import Check, Claim, FigureRef, Source
from icl_verify.validation.claims.chen2024 import PAPER
from icl_verify.validation.estimates import Estimate, Measurement, Prediction
from icl_verify.validation.params import (
    MAX_DIMENSION,
    ParameterError,
    Params,
    SparseSettingParams,
    param,
)
from icl_verify.validation.rules import BoundTrend, Inequality, weighted_log_slope

from icl_verify import numerics, statistics


@dataclass(frozen=True, kw_only=True)
class LemmaParams(SparseSettingParams):
    """Shared by CZZ-D1 and CZZ-D2: the flat spectrum, δ, repetitions."""

    kappa: float = param(2.0, help="spectrum spread: Σ_jj evenly in [1/κ, 1]", low=1)
    delta: float = param(
        0.05, help="failure probability δ", low=0, high=1, low_open=True, high_open=True
    )
    reps: int = param(help="independent prompts per grid point", low=2, role="ensemble")

    @property
    def spectrum(self) -> np.ndarray:
        """Σ's diagonal, evenly spaced in [1/κ, 1]; (d,)."""
        return np.linspace(1.0 / self.kappa, 1.0, self.d)

    @property
    def beta(self) -> float:
        """The prior's guaranteed margin ``min_S |r_i| >= min_j Sigma_jj / sqrt(s)``."""
        return float(self.spectrum.min()) / math.sqrt(self.s)


def _correlations(params: LemmaParams, n: int, seed: int):
    """Algorithm 1's r_hat beside r = Σ w* on `reps` prompts of size n
    (`numerics.sample_correlations`)."""
    return numerics.sample_correlations(
        params.reps,
        params.setting,
        n,
        seed=seed,
        covariance=np.diag(params.spectrum),  # (d, d)
    )


@dataclass(frozen=True, kw_only=True)
class SampleSizeGrid(Params):
    """A bound judged by its trend over sample sizes (CZZ-D1, CZZ-D3): the grid of n and the
    largest slope allowed to log(mean error / bound) against log n."""

    n_grid: tuple[int, ...] = param(help="sample sizes n (≥ 3 distinct)", low=1, role="length")
    margin: float = param(0.1, help="largest allowed slope of log(error/bound) vs log n", low=0)

    def validate(self) -> None:
        super().validate()
        if len(set(self.n_grid)) < 3:
            raise ParameterError(
                f"n_grid must hold >= 3 distinct sample sizes, got {list(self.n_grid)}"
            )

    @property
    def n_values(self) -> np.ndarray:
        return np.array(sorted(set(self.n_grid)), dtype=float)

    def flat_ratio(self, justification: str) -> BoundTrend:
        """The rule: the ratio of the mean error to the bound trends up by at most
        ``margin`` over the grid (`validation.rules.BoundTrend`)."""
        return BoundTrend("at_most", x=tuple(self.n_values), margin=self.margin,
                          justification=justification)  # fmt: skip


# ---------------------------------------------------------------------------------------------
# CZZ-D1: ||R_hat - R||_2 <~ K sqrt(s log(d/delta) / n)


@dataclass(frozen=True, kw_only=True)
class CorrelationErrorParams(SampleSizeGrid, LemmaParams):
    """CZZ-D1: the sample sizes and the allowed trend of the ratio."""


D1_PRESETS = {
    "smoke": CorrelationErrorParams(d=16, s=2, sigma=0.5, n_grid=(32, 128, 512), reps=60),
    "quick": CorrelationErrorParams(
        d=64, s=4, sigma=0.5, n_grid=(64, 128, 256, 512, 1024, 2048, 4096), reps=200
    ),
    "paper": CorrelationErrorParams(
        d=64, s=4, sigma=1.0, n_grid=(64, 128, 256, 512, 1024, 2048, 4096, 8192), reps=1000
    ),
}


def predict_d1(params: CorrelationErrorParams) -> Prediction:
    """Lemma D.1's bound with K = max Σ_ii + σ² (the lemma's C = 1)."""
    K = float(params.spectrum.max()) + params.sigma**2
    bound = lemma_d1_bound(params.n_values, d=params.d, s=params.s, delta=params.delta, K=K)
    return Prediction(values={"sup_error": bound}, figure_data={"K": K})


def measure_d1(params: CorrelationErrorParams, runtime) -> Measurement:
    """Mean ``max_j |r_hat_j - r_j|`` per n over independent prompts, with its SE."""
    means, ses = np.array(
        [
            statistics.mean_se(_correlations(params, int(n), runtime.seed_for(f"d1-{k}")).sup_error)
            for k, n in enumerate(runtime.progress(params.n_values.astype(int), "sample sizes"))
        ]
    ).T
    scale = np.sqrt(params.n_values / (params.s * math.log(params.d)))
    return Measurement(
        values={"sup_error": Estimate(means, ses)},
        figure_data={
            "n": params.n_values,
            "normalised": means * scale,
            "normalised_se": ses * scale,
        },
    )


def checks_d1(params: CorrelationErrorParams) -> tuple[Check, ...]:
    why = (
        "Lemma D.1 bounds ‖R_hat - R‖_2 up to a constant; its n-dependence n^{−1/2} is exact "
        "(a maximum of d centred means), so the ratio to the bound should be flat: slope of "
        f"log(mean error / bound) vs log n ≤ {params.margin:g} (reference §4.5), SE from "
        f"{params.reps} independent prompts per n."
    )
    return (Check("sup_error", params.flat_ratio(why), "mean ‖R̂ − R‖₂ vs K√(s log(d/δ)/n)"),)


def d1_faster(params: CorrelationErrorParams, prediction: Prediction) -> Prediction:
    """The bound with the wrong exponent, n^{−3/2} (times n_0/n)."""
    n = params.n_values
    return prediction.with_values(sup_error=np.asarray(prediction.values["sup_error"]) * n[0] / n)


CLAIM_D1 = Claim(
    id="CZZ-D1",
    source=Source(PAPER, "App. D, Lemma D.1"),
    statement="Algorithm 1's correlations satisfy ‖R̂ − R‖₂ ≲ K√(s log(d/δ)/n), K = max Σᵢᵢ + σ².",
    params=CorrelationErrorParams,
    presets=D1_PRESETS,
    predict=predict_d1,
    measure=measure_d1,
    checks=checks_d1,
    figure=FigureRef("icl_verify.figures.sparse_bounds", "figure_lemma_d1"),
    wrong=d1_faster,
    summary="‖R̂ − R‖₂ √(n/(s log d)) bounded over n",
    catalogue=(4, 1),
)


# ---------------------------------------------------------------------------------------------
# CZZ-D2: |r_hat_i| >= |r_i|/2 on S once n >~ s log(d/delta) / beta^2


@dataclass(frozen=True, kw_only=True)
class SupportRetentionParams(LemmaParams):
    """CZZ-D2: multiples c of Lemma D.2's sample size s log(d/δ)/β²."""

    c_grid: tuple[float, ...] = param(
        help="multiples c: n = ceil(c s log(d/δ) / β²)", low=0, low_open=True
    )

    @property
    def c_values(self) -> np.ndarray:
        return np.array(sorted(set(self.c_grid)), dtype=float)

    @property
    def variance(self) -> float:
        """``V >= max_i Var(x_i y) = Sigma_ii (w*^T Sigma w* + sigma^2) + r_i^2`` under the prior
        (``w*^T Sigma w* <= max Sigma_jj``, ``r_i^2 <= max Sigma_jj^2 / s``)."""
        top = float(self.spectrum.max())
        return top * (top + self.sigma**2) + top**2 / self.s

    @property
    def n_values(self) -> np.ndarray:
        base = lemma_d2_sample_size(d=self.d, s=self.s, delta=self.delta, beta=self.beta)
        return np.ceil(self.c_values * base)


D2_PRESETS = {
    "smoke": SupportRetentionParams(d=16, s=2, sigma=0.5, c_grid=(0.125, 0.5, 2.0), reps=300),
    "quick": SupportRetentionParams(
        d=64, s=4, sigma=0.5, c_grid=(0.0625, 0.125, 0.25, 0.5, 1.0, 2.0, 4.0), reps=400
    ),
    "paper": SupportRetentionParams(
        d=64,
        s=4,
        sigma=1.0,
        c_grid=(0.03125, 0.0625, 0.125, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0),
        reps=4000,
    ),
}


def retention_threshold(params: SupportRetentionParams) -> float:
    """The derived constant c* = n* / (s log(d/delta) / beta^2) (module docstring).

    >>> round(retention_threshold(D2_PRESETS["quick"]), 2)
    1.84
    """
    n_star = support_retention_sample_size(
        s=params.s, delta=params.delta, beta=params.beta, variance=params.variance
    )
    return n_star / lemma_d2_sample_size(
        d=params.d, s=params.s, delta=params.delta, beta=params.beta
    )


MIN_EVENTS = 5  # lost coordinates a grid point needs to enter the rate's fit


@lru_cache(maxsize=4)
def _loss_rates(params: SupportRetentionParams):
    """`theory.support_loss_rates` on the claim's spectrum and grid (one quadrature
    per coordinate, support extreme and n: cached for the prediction and the checks)."""
    return support_loss_rates(params.spectrum, s=params.s, sigma=params.sigma, n=params.n_values)


def predict_d2(params: SupportRetentionParams) -> Prediction:
    """The largest failure fraction allowed per c: δ from c* on, 1 (no claim) below; and the
    range of the exponential rate at which the expected number of lost coordinates falls."""
    c_star = retention_threshold(params)
    level = np.where(params.c_values >= c_star, params.delta, 1.0)
    rates = _loss_rates(params)
    return Prediction(
        values={"failure": level, "loss_rate": rates.slowest, "loss_rate_sharp": rates.fastest},
        figure_data={"c_star": c_star, "rate_exponent": rates.exponent,
                     "rate_bound": params.beta**2 / (8 * params.variance)},
    )  # fmt: skip


def _loss_rate(n, lost, lost_se, events) -> tuple[Estimate, np.ndarray]:
    """-d log(E lost)/dn fitted over the points with ≥ MIN_EVENTS lost coordinates (their
    mask returned beside it); with fewer than two such points no rate (SE inf: inconclusive)."""
    fitted = events >= MIN_EVENTS
    if fitted.sum() < 2:
        return Estimate(0.0, math.inf), fitted
    slope = weighted_log_slope(n[fitted], Estimate(lost[fitted], lost_se[fitted]))
    return Estimate(-slope.value, slope.error), fitted


def measure_d2(params: SupportRetentionParams, runtime) -> Measurement:
    """Per c: the fraction of prompts losing a support coordinate (Agresti-Coull SE) and the
    mean number of coordinates lost (SE over prompts); the rate at which the latter falls."""
    rows = []
    for k, n in enumerate(runtime.progress(params.n_values.astype(int), "multiples c")):
        lost = _correlations(params, int(n), runtime.seed_for(f"d2-{k}")).support_lost  # (reps,)
        rows.append((*statistics.proportion(lost > 0), *statistics.mean_se(lost.astype(float)),
                     lost.sum()))  # fmt: skip
    fractions, ses, lost, lost_se, events = np.array(rows).T
    rate, fitted = _loss_rate(params.n_values, lost, lost_se, events)
    reached = params.c_values[fractions <= params.delta]
    return Measurement(
        values={"failure": Estimate(fractions, ses), "loss_rate": rate, "loss_rate_sharp": rate},
        figure_data={
            "c": params.c_values,
            "n": params.n_values,
            "c_reached": float(reached.min()) if reached.size else math.nan,
            "lost": lost, "lost_se": lost_se, "fitted": fitted.astype(float),
        },
    )  # fmt: skip


def checks_d2(params: SupportRetentionParams) -> tuple[Check, ...]:
    why = (
        "Lemma D.2: beyond a constant multiple of s log(d/δ)/β² the support is kept with "
        f"probability ≥ 1 - δ = {1 - params.delta:g}; the constant is the derived "
        "Gaussian-tail one (8 V log(s/δ)/β²). Below it the lemma says nothing (level 1). "
        f"Binomial SE (Agresti-Coull, {params.reps} prompts per c), 4 SE."
    )
    rates = _loss_rates(params)
    proof = (
        "Lemma D.2's proof, a tail per coordinate and a union bound over S: the expected number "
        "of support coordinates lost, E Σ_S P(|r̂ᵢ| < |rᵢ|/2) (the union bound, exact as an "
        "expectation), is a positive mixture of the coordinates' loss probabilities, so the "
        "least-squares slope of its log on n over grid points (a positively weighted mean of "
        "secants) lies between the smallest and largest secant slope of log Pᵢ between "
        "neighbouring grid points over the coordinates and supports, "
        f"{rates.slowest:.4g} and {rates.fastest:.4g} (Pᵢ exact: r̂ᵢ is a mean of Gaussian "
        "products xᵢy, one quadrature over Σₖxₖᵢ², `theory.support_loss_rates`, "
        "re-derived; as n → ∞ the rate tends to Cramér's exponent, at slowest "
        f"{rates.exponent:.4g}). Fitted by inverse-variance weighted least squares over the grid "
        f"points with ≥ {MIN_EVENTS} lost coordinates (the binomial's normal approximation), "
        "SE propagated from the points' (over prompts), 4 SE."
    )
    return (
        Check("failure", Inequality("at_most", why), "P(some |r̂ᵢ| < |rᵢ|/2 on S) per c"),
        Check("loss_rate", Inequality("at_least", proof),
              "−d ln E[#lost]/dn ≥ the slowest coordinate's secant"),
        Check("loss_rate_sharp", Inequality("at_most", proof),
              "−d ln E[#lost]/dn ≤ the fastest coordinate's secant"),
    )  # fmt: skip


def d2_at_every_c(params: SupportRetentionParams, prediction: Prediction) -> Prediction:
    """The derived Gaussian-tail bound read as the law: failure ~ s exp(-n β²/(8V)), i.e.
    the support kept w.p. 1 - δ at every c of the grid (the lemma's constant taken as the
    grid's smallest c) and the lost coordinates falling at rate β²/(8V): wrong where the
    small-n failure fraction is far above δ, and where they fall faster."""
    failure = np.asarray(prediction.values["failure"])
    bound = prediction.figure_data["rate_bound"]
    return prediction.with_values(failure=np.full_like(failure, params.delta), loss_rate=bound,
                                  loss_rate_sharp=bound)  # fmt: skip


CLAIM_D2 = Claim(
    id="CZZ-D2",
    source=Source(PAPER, "App. D, Lemma D.2"),
    statement="Once n ≳ s log(d/δ)/β², |r̂ᵢ| ≥ |rᵢ|/2 for every i in S with probability ≥ 1 − δ "
    "(tested with the derived constant n ≥ 8V log(s/δ)/β²); below it, as its proof's tail "
    "and union bound say, the expected number of coordinates lost falls with n at the rates of "
    "the coordinates' tails.",
    params=SupportRetentionParams,
    presets=D2_PRESETS,
    predict=predict_d2,
    measure=measure_d2,
    checks=checks_d2,
    figure=FigureRef("icl_verify.figures.sparse_bounds", "figure_lemma_d2"),
    wrong=d2_at_every_c,
    summary="R̂ keeps the support once n ≳ s log d / β²",
    catalogue=(4, 2),
)

# ---------------------------------------------------------------------------------------------
# CZZ-D3: ||Sigma_hat - Sigma||_2 <~ ||Sigma|| max(sqrt(r/n), r/n, sqrt(log(1/delta)/n), ...)


@dataclass(frozen=True, kw_only=True)
class CovarianceErrorParams(SampleSizeGrid):
    """CZZ-D3: Σ = diag(j^{−decay}), the sample sizes, δ, repetitions, the allowed trend."""

    d: int = param(help="covariate dimension d", low=1, high=MAX_DIMENSION, role="width")
    decay: float = param(0.5, help="Σ's eigenvalues j^{−decay}, j = 1..d", low=0)
    delta: float = param(
        0.05, help="failure probability δ", low=0, high=1, low_open=True, high_open=True
    )
    reps: int = param(help="independent draws per n (drawn in chunks)", low=2, role="count")

    @property
    def spectrum(self) -> np.ndarray:
        """Σ's diagonal j^{−decay}; (d,)."""
        return np.arange(1, self.d + 1, dtype=float) ** -self.decay


D3_PRESETS = {  # effective ranks r = 6.5, 21.2, 30.5: the n grids start below r
    "smoke": CovarianceErrorParams(d=32, reps=60, n_grid=(4, 16, 64, 256, 1024)),
    "quick": CovarianceErrorParams(
        d=128, reps=200, n_grid=(4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096)
    ),
    "paper": CovarianceErrorParams(
        d=256, reps=400, n_grid=(4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192)
    ),
}


def predict_d3(params: CovarianceErrorParams) -> Prediction:
    """Lemma D.3's bound with the lemma's c = 1, and the effective rank r."""
    bound = lemma_d3_bound(params.n_values, spectrum=params.spectrum, delta=params.delta)
    rank = float(params.spectrum.sum() / params.spectrum.max())
    return Prediction(values={"covariance_error": bound}, figure_data={"rank": rank})


def measure_d3(params: CovarianceErrorParams, runtime) -> Measurement:
    """Mean ``||Σ̂ − Σ||₂`` per n over independent draws, with its SE."""
    means, ses = np.array(
        [
            statistics.mean_se(
                numerics.covariance_errors(
                    params.reps, int(n), params.spectrum, seed=runtime.seed_for(f"d3-{k}")
                )
            )
            for k, n in enumerate(runtime.progress(params.n_values.astype(int), "sample sizes"))
        ]
    ).T
    return Measurement(
        values={"covariance_error": Estimate(means, ses)}, figure_data={"n": params.n_values}
    )


def checks_d3(params: CovarianceErrorParams) -> tuple[Check, ...]:
    why = (
        "Lemma D.3 bounds ‖Σ̂ − Σ‖₂ up to a constant c; the mean error is of the bound's order "
        "on both sides of n = r (r/n below, √(r/n) above), so the ratio to the bound should be "
        f"flat across the kink: slope of log(mean error / bound) vs log n ≤ {params.margin:g} "
        f"(reference §4.5), SE from {params.reps} independent draws per n."
    )
    label = "mean ‖Σ̂ − Σ‖₂ vs ‖Σ‖ max(√(r/n), r/n, …)"
    return (Check("covariance_error", params.flat_ratio(why), label),)


def d3_linear_only(params: CovarianceErrorParams, prediction: Prediction) -> Prediction:
    """The bound without its square roots, ‖Σ‖ max(r, log(1/δ))/n (a variance's rate): the
    error's ratio to it grows like √(n/r) beyond n = r, a trend of about 0.4 over the grid."""
    spectrum, n = params.spectrum, params.n_values
    linear = spectrum.max() * np.maximum(spectrum.sum() / spectrum.max(), -math.log(params.delta))
    return prediction.with_values(covariance_error=linear / n)


CLAIM_D3 = Claim(
    id="CZZ-D3",
    source=Source(PAPER, "App. D, Lemma D.3"),
    statement="The sample covariance satisfies ‖Σ̂ − Σ‖₂ ≲ ‖Σ‖ max(√(r/n), r/n, √(log(1/δ)/n), "
    "log(1/δ)/n) with probability ≥ 1 − δ, r = Tr(Σ)/‖Σ‖ (Bartlett et al. 2020, Thm 9).",
    params=CovarianceErrorParams,
    presets=D3_PRESETS,
    predict=predict_d3,
    measure=measure_d3,
    checks=checks_d3,
    figure=FigureRef("icl_verify.figures.sparse_bounds", "figure_lemma_d3"),
    wrong=d3_linear_only,
    summary="‖Σ̂ − Σ‖₂ / (‖Σ‖ max(√(r/n), r/n)) bounded over n, across n = r",
    catalogue=(4, 13),  # the next free place of §4 (reading order would renumber 4.3-4.12)
)

CLAIMS = (CLAIM_D1, CLAIM_D2, CLAIM_D3)
