"""Steps of the proof of Theorem 5.3's upper bound in Chen, Zhao, Zou (2024), App. F.1 (the
section; Lemma F.1 is CZZ-F1, `lemma_f1`), reference `chen2024.md` §4.4, §7 item 11. Each is a
claim of its own, apart from the theorem's conclusion (CZZ-T5.3, `isotropic`):

- CZZ-F-STEPS: the bias and variance bounds of App. F.1;
- CZZ-F-CROSS: the excess as bias + variance in expectation, E[cross] / E[excess] = 0, the
  split App. F takes over from (D.2)-(D.3), where CZZ-D-CROSS finds the cross term nonzero
  because R_hat reuses the labels; here at F.1's step, in Theorem 5.3's setting.

Setting of Theorem 5.3: Sigma = I, ``w* = ±1/sqrt(s)`` on a random support (beta^2 = 1/s,
||w*||_1^2 = s), noise sigma. GD on Algorithm 1's preprocessed data at F.1's own prescription,
not tuned: the absolute step eta = c s (eta beta^2 = c; F.1 needs eta <~ 1/||R Sigma R||
= s) and t = ceil(budget / eta) steps, the budget of its bias step
(`theory.app_f1_step_count`, in the ``step_reading`` of §7 item 11). On
fresh prompts at each n (`numerics.sign_prior_parts`), the excess risk's parts by iterating GD
on the noiseless labels and on the noise (R_hat from the prompt's own labels):

- bias <= s (1 - eta beta^2 / 2)^{2t} (F.1's first inequality), and <= sigma^2 / n (its second,
  which the step count is chosen for);
- variance <= C eta t log t (sigma^2 log(d/delta)/n + sigma^2 ||w*||_1^2 d log^2(d/delta)/n^2)
  for one C over the n grid (`BoundTrend`, reference §4.5);
- (CZZ-F-CROSS) E[cross] / E[excess] = 0.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from icl_verify.theory import (
    STEP_READINGS,
    app_f1_bias_bound,
    app_f1_step_count,
    app_f1_variance_bound,
)
from icl_verify.validation.claim import Check, Claim, FigureRef, Source, shifted
from icl_verify.validation.claims.chen2024 import PAPER
from icl_verify.validation.estimates import Estimate, Measurement, Prediction
from icl_verify.validation.params import ParameterError, SparseSettingParams, param
from icl_verify.validation.rules import BoundTrend, Inequality, ZScore

from icl_verify import numerics, statistics


@dataclass(frozen=True, kw_only=True)
class AppFStepParams(SparseSettingParams):
    """CZZ-F-STEPS and CZZ-F-CROSS: Theorem 5.3's setting, F.1's step, the n grid."""

    n_grid: tuple[int, ...] = param(help="sample sizes n (≥ 3 distinct)", low=2, role="length")
    tasks: int = param(help="fresh prompts per n", low=2, role="count")
    chunk: int = param(64, help="prompts drawn at once (memory)", low=1, role="held")
    step_beta2: float = param(
        0.5, help="η β²: the absolute step in units of 1/β² = s", low=0, high=2,
        low_open=True, high_open=True,
    )  # fmt: skip
    step_reading: str = param(
        "beta", help="reading of F.1's condition on t (reference §7 item 11)",
        choices=STEP_READINGS,
    )  # fmt: skip
    delta: float = param(0.1, help="δ in log(d/δ)", low=0, high=1, low_open=True,
                         high_open=True)  # fmt: skip
    margin: float = param(
        0.1, help="largest allowed slope of log(variance/bound) vs log n (reference §4.5)", low=0
    )

    def validate(self) -> None:
        super().validate()
        if self.sigma == 0:
            raise ParameterError("sigma must be a number > 0 (the bounds scale with sigma), got 0")
        if len(set(self.n_grid)) < 3:
            raise ParameterError(f"n_grid must hold >= 3 distinct sizes, got {list(self.n_grid)}")

    @property
    def n_values(self) -> np.ndarray:
        return np.array(sorted(set(self.n_grid)), dtype=float)

    @property
    def eta(self) -> float:
        """The absolute step: η β² / β², β² = 1/s."""
        return self.step_beta2 * self.s

    @property
    def t(self) -> np.ndarray:
        return app_f1_step_count(self.n_values, self.s, self.sigma, self.eta,
                                 reading=self.step_reading)  # fmt: skip


PRESETS = {
    "smoke": AppFStepParams(d=16, s=2, sigma=1.0, n_grid=(64, 256, 1024), tasks=32),
    "quick": AppFStepParams(d=64, s=4, sigma=1.0, n_grid=(256, 512, 1024, 2048, 4096),
                            tasks=640, chunk=20),  # fmt: skip
    "paper": AppFStepParams(d=64, s=4, sigma=1.0, n_grid=(256, 512, 1024, 2048, 4096, 8192),
                            tasks=800, chunk=20),  # fmt: skip
}


def _parts(params: AppFStepParams, runtime) -> list:
    """The parts at F.1's step on fresh prompts per n (`numerics.sign_prior_parts`)."""
    return [
        numerics.sign_prior_parts(
            int(n), setting=params.setting, tasks=params.tasks,
            step=params.eta, t=int(t), seed=runtime.seed_for(f"n-{int(n)}"), chunk=params.chunk,
        )  # fmt: skip
        for n, t in runtime.progress(list(zip(params.n_values, params.t, strict=True)), "n")
    ]


# ---------------------------------------------------------------------------------------------
# CZZ-F-STEPS: F.1's bias and variance bounds


def predict_steps(params: AppFStepParams) -> Prediction:
    """F.1's bounds per n at its step."""
    n, t = params.n_values, params.t
    return Prediction(
        values={
            "bias": app_f1_bias_bound(params.s, params.eta, t),
            "bias_vs_noise": params.sigma**2 / n,
            "variance": app_f1_variance_bound(n, params.d, params.s, params.sigma, params.eta,
                                              t, delta=params.delta),  # fmt: skip
        },
        figure_data={"t": t.astype(float), "eta": params.eta},
    )


def measure_steps(params: AppFStepParams, runtime) -> Measurement:
    """Mean bias and variance per n at F.1's step, with their SEs."""
    parts = _parts(params, runtime)
    bias = Estimate(*np.array([statistics.mean_se(p.bias) for p in parts]).T)
    variance = Estimate(*np.array([statistics.mean_se(p.variance) for p in parts]).T)
    return Measurement(
        values={"bias": bias, "bias_vs_noise": bias, "variance": variance},
        figure_data={"n": params.n_values},
    )


def checks_steps(params: AppFStepParams) -> tuple[Check, ...]:
    mc = f"mean over {params.tasks} fresh prompts per n, its SE; one-sided at 3 SE"
    return (
        Check("bias", Inequality("at_most", "F.1's first inequality, explicit (no constant): "
                                 + mc, max_z=3),
              "bias ≤ s(1 − ηβ²/2)^{2t}"),
        Check("bias_vs_noise", Inequality("at_most", "F.1's second inequality, which its step "
                                          "count t is chosen for: " + mc, max_z=3),
              "bias ≤ σ²/n at F.1's t"),
        Check("variance", BoundTrend("at_most", x=tuple(params.n_values), margin=params.margin,
                                     justification="F.1's variance bound up to one constant "
                                     "(reference §4.5): slope of log(variance/bound) vs log n "
                                     f"≤ {params.margin:g}; SE from the fresh prompts per n"),
              "variance ≤ C·ηt log t (σ²log(d/δ)/n + σ²s d log²(d/δ)/n²)"),
    )  # fmt: skip


def noise_free_bias(params: AppFStepParams, prediction: Prediction) -> Prediction:
    """Wrong: a bias bound 1e-6 times F.1's σ²/n (the bias cannot be that small at n's
    step count: it falls like (1 - η β²)^{2t} with t ~ 2 log(n s / σ²))."""
    return prediction.with_values(bias_vs_noise=1e-6 * prediction.values["bias_vs_noise"])


CLAIM_F_STEPS = Claim(
    id="CZZ-F-STEPS",
    source=Source(PAPER, "App. F.1 (the proof of Theorem 5.3's upper bound)"),
    statement="At the step η = cs (ηβ² = c) and t ≳ log(ns/σ²)/(ηβ²) steps, pre-gd's bias is "
    "≤ s(1 − ηβ²/2)^{2t} ≤ σ²/n and its variance ≲ ηt log t (σ²log(d/δ)/n + "
    "σ²‖w*‖₁²d log²(d/δ)/n²).",
    params=AppFStepParams,
    presets=PRESETS,
    predict=predict_steps,
    measure=measure_steps,
    checks=checks_steps,
    figure=FigureRef("icl_verify.figures.sparse_bounds", "figure_app_f_steps"),
    wrong=noise_free_bias,
    summary=(
        "GD on preprocessed isotropic prompts at F.1's step (η = s/2, t from its bias step): "
        "bias ≤ s(1 − ηβ²/2)^{2t} and ≤ σ²/n; variance ≤ C·bound over n"
    ),
    catalogue=(4, 9),
)


# ---------------------------------------------------------------------------------------------
# CZZ-F-CROSS: excess = bias + variance in expectation at F.1's step


def predict_f_cross(params: AppFStepParams) -> Prediction:
    """The cross term's share 0 at every n."""
    return Prediction(values={"cross_share": np.zeros(params.n_values.size)})


def measure_f_cross(params: AppFStepParams, runtime) -> Measurement:
    """E[cross] / E[excess] per n at F.1's step (delta-method SE)."""
    parts = _parts(params, runtime)
    share = np.array([statistics.ratio_of_means(p.cross, p.excess) for p in parts])
    return Measurement(
        values={"cross_share": Estimate(share[:, 0], share[:, 1])},
        figure_data={
            "n": params.n_values,
            "mean_excess": np.array([p.excess.mean() for p in parts]),
            "mean_cross": np.array([p.cross.mean() for p in parts]),
        },
    )


def checks_f_cross(params: AppFStepParams) -> tuple[Check, ...]:
    why = (
        "App. F splits the excess as bias + variance, as (D.2)-(D.3) do; the cross term is "
        "linear in the noise given (R_hat, X), but R_hat reuses the labels, so test "
        f"E[cross]/E[excess] = 0 at 4 SE (delta method, {params.tasks} fresh prompts per n), "
        "resolving 10% of the excess"
    )
    return (
        Check("cross_share", ZScore(why, abs_resolution=0.1),
              "E[cross]/E[excess] = 0 at F.1's step"),
    )  # fmt: skip


CLAIM_F_CROSS = Claim(
    id="CZZ-F-CROSS",
    source=Source(PAPER, "App. F.1 (the proof of Theorem 5.3's upper bound)",
                  "(D.2)-(D.3)"),  # fmt: skip
    statement="At F.1's step (η = cs, t ≳ log(ns/σ²)/(ηβ²)), the excess risk of pre-gd is "
    "bias + variance in expectation: the cross term, linear in the noise, has mean 0.",
    params=AppFStepParams,
    presets=PRESETS,
    predict=predict_f_cross,
    measure=measure_f_cross,
    checks=checks_f_cross,
    figure=FigureRef("icl_verify.figures.sparse_bounds", "figure_app_f_cross"),
    wrong=shifted(
        "cross_share",
        lambda share: np.asarray(share) - 0.1,
        why="A negative cross term, -0.1 of the excess at every n (reusing the labels read as "
        "deflating the noise): the measured share is positive, more than the resolution 0.1 "
        "plus 4 SE away.",
    ),
    summary="GD on preprocessed isotropic prompts at F.1's step: E[cross]/E[excess] = 0",
    catalogue=(4, 11),
)

CLAIMS = (CLAIM_F_STEPS, CLAIM_F_CROSS)
