"""CZZ-G-DENSE of Chen, Zhao, Zou (2024) App. G (Figure 10): with a dense w* (s = d = 16) more
heads bring no clear advantage, the negative control of the multi-head gain that their theory
ties to s << d.

The models: the encoders of `_encoders` trained with the same recipe at s = d (``s``, 16) and at
the sparse s of the main claims (``s_sparse``, 4; at the paper's size these are CZZ-HEADS's
trainings, read from the cache). ICL excess risk against n for each (h, L) beside OLS, tuned
ridge and Lasso (Figure 10, drawn as Figure 3).

The gain of more heads, in units of the null risk s (the risk of predicting 0, so the two
settings compare): G = (risk(h = 1) - risk(h_max)) / s, paired, mean over the n grid and the
noise levels (`numerics.head_gain`). "No clear advantage" as a rule that can fail either way,
with the margin the sparse setting's own gain sets: |G_dense| <= G_sparse / 2 (half the gain
that is the paper's positive finding), i.e.

    no_clear_gain:  G_sparse / 2 - G_dense >= 0    (fails if heads help as much at s = d)
    no_clear_loss:  G_sparse / 2 + G_dense >= 0    (fails if heads clearly hurt at s = d)

A negative control needs its positive effect: each depth is judged only where the sparse models
are in the paper's regime (their h_max beats tuned ridge at n = 10) and their gain is clear
(G_sparse >= 3 SE); elsewhere the values carry the range of G (two null risks) as uncertainty,
so they read inconclusive. (Ridge is Bayes-optimal for a dense Gaussian w*, so at s = d no
model can beat tuned ridge by more than the grid's tuning error: the sparse gate is the
informative one.)
"""

from __future__ import annotations

from dataclasses import dataclass

import icl_verify.figures.data.trained_encoders as fig_data
import numpy as np
from icl_verify.validation.claim import Check, Claim, FigureRef, Source
from icl_verify.validation.claims.chen2024 import PAPER
from icl_verify.validation.claims.chen2024._encoders import (
    MAX_Z,
    curves,
    regime,
    regime_line,
    risk_curves,
    widened,
)
from icl_verify.validation.claims.chen2024.trained_heads import (
    LASSO_TOL,
    HeadsParams,
    curve_table,
)
from icl_verify.validation.estimates import Estimate, Measurement, Prediction
from icl_verify.validation.paper_figures import PaperFigure
from icl_verify.validation.params import ParameterError, param
from icl_verify.validation.rules import Inequality

from icl_verify import numerics

GAIN_RANGE = 2.0  # G lies in [-1, 1] for models no worse than predicting 0; twice that


@dataclass(frozen=True, kw_only=True)
class DenseParams(HeadsParams):
    """CZZ-G-DENSE: CZZ-HEADS's curves at s = d, beside the sparse setting's gain."""

    s: int = param(
        16, help="support size of the dense setting (the paper: s = d = 16)", low=1, role="width"
    )
    s_sparse: int = param(
        4, help="support size of the sparse reference (the main claims)", low=1, role="width"
    )

    def validate(self) -> None:
        super().validate()
        if not self.s_sparse < self.s:
            raise ParameterError(
                f"s_sparse must be an integer in [1, s={self.s}) (the sparse reference), got "
                f"{self.s_sparse}"
            )

    def trainings(self) -> tuple:
        """Every (h, L) at s (dense), then at s_sparse."""
        return tuple(
            self.training(h, layers=L, s=s)
            for s in (self.s, self.s_sparse) for L in self.layers for h in self.heads
        )  # fmt: skip


def predict_dense(params: DenseParams) -> Prediction:
    """No clear advantage either way: both bounds ≥ 0, per depth."""
    zeros = np.zeros(len(params.layers))
    return Prediction(
        values={"no_clear_gain": zeros, "no_clear_loss": zeros},
        figure_data=fig_data.RiskScale(float(params.s)).to_record(),
    )


def measure_dense(params: DenseParams, runtime) -> Measurement:
    """Risk curves in both settings (Lasso in the dense one only, where it is drawn); per depth
    the gains G_dense, G_sparse and the two bounds, gated by the sparse setting."""
    trained = {
        s: {L: {h: runtime.trained(params.training(h, layers=L, s=s)) for h in params.heads}
            for L in params.layers}
        for s in (params.s, params.s_sparse)
    }  # fmt: skip
    dense = risk_curves(params, runtime, trained[params.s], LASSO_TOL)
    sparse = risk_curves(params, runtime, trained[params.s_sparse], None)
    one, top = min(params.heads), max(params.heads)
    bounds = {"no_clear_gain": [], "no_clear_loss": []}
    gains, gates, judged_depths = [], [], []
    for L in params.layers:
        g_d, se_d, g_s, se_s = (
            value for s, errors in ((params.s, dense), (params.s_sparse, sparse))
            for value in numerics.head_gain(errors.models[L, one], errors.models[L, top],
                                            params.replicates, float(s))
        )  # fmt: skip
        gate = regime(params, runtime, trained[params.s_sparse][L][top])
        judged = gate.reached and g_s >= MAX_Z * se_s  # the positive effect, clearly there
        gains.append(fig_data.Gain(g_d, se_d, g_s, se_s))
        gates.append(gate)
        judged_depths.append(bool(judged))
        se = float(np.hypot(se_s / 2, se_d))  # the two settings' models are independent
        for name, value in (("no_clear_gain", g_s / 2 - g_d), ("no_clear_loss", g_s / 2 + g_d)):
            estimate = Estimate(value, se)
            bounds[name].append(estimate if judged else widened(estimate, GAIN_RANGE))
    judged = fig_data.Judged(tuple(params.layers), tuple(judged_depths))
    data = fig_data.DenseData(curves(params, dense), tuple(gains), tuple(gates), judged)
    values = {
        name: Estimate([e.value for e in row], [e.error for e in row])
        for name, row in bounds.items()
    }
    return Measurement(values=values, figure_data=data.to_record())


def checks_dense(params: DenseParams) -> tuple[Check, ...]:
    why = (
        "Gains G = (risk(h = 1) − risk(h_max)) / s, paired on the same prompts within each "
        f"setting ({params.n_prompts} prompts per member and n), the two settings independent "
        "(SEs combined in quadrature); the margin is half the sparse setting's own gain, the "
        f"effect whose absence at s = d the paper reports; one-sided, {MAX_Z:g} SE. Judged only "
        "where the sparse models are in the paper's regime (beat tuned ridge at n = 10 by 3 "
        "SEs) and their gain is clear (≥ 3 SE): a negative control needs its positive effect; "
        "elsewhere the uncertainty is G's whole range, so the verdict is inconclusive."
    )
    return (
        Check("no_clear_gain", Inequality("at_least", why, max_z=MAX_Z),
              "G_sparse/2 − G_dense per depth ≥ 0 (heads help less at s = d)"),
        Check("no_clear_loss", Inequality("at_least", why, max_z=MAX_Z),
              "G_sparse/2 + G_dense per depth ≥ 0 (and do not clearly hurt)"),
    )  # fmt: skip


def dense_gain_beyond_range(params: DenseParams, prediction: Prediction) -> Prediction:
    """Wrong: the sparse half-gain exceeds the dense gain by three null risks (each gain lies in
    [-1, 1] for models no worse than predicting 0, so the bound is at most 1.5)."""
    return prediction.with_values(no_clear_gain=np.full(len(params.layers), 3.0))


def table_dense(params: DenseParams, prediction: Prediction, measurement: Measurement) -> str:
    data = fig_data.DenseData.from_record(measurement.figure_data, params.layers, params.heads)
    rows = [
        f"Gain of h = {max(params.heads)} over h = 1 in units of the null risk s, mean over n "
        "and σ, per depth (dense s = d against the sparse reference); judged where the sparse "
        "models beat tuned ridge at n = 10 and their gain is ≥ 3 SE:", "",
        f"| L | judged | G_sparse (s = {params.s_sparse}) | G_dense (s = {params.s}) |",
        "|---|---|---|---|",
    ]  # fmt: skip
    for L, gain in zip(params.layers, data.gains, strict=True):
        rows.append(
            f"| {L} | {'yes' if data.judged.at(L) else 'no'} | "
            f"{gain.sparse:+.3f} ± {gain.sparse_se:.3f} | {gain.dense:+.3f} ± {gain.dense_se:.3f} |"
        )
    rows.append("")
    rows += [regime_line(max(params.heads), gate, f" of the sparse models at L = {L}")
             for L, gate in zip(params.layers, data.sparse_gates, strict=True)]  # fmt: skip
    rows += ["", "Figure 10, the dense setting's curves:", "", curve_table(params, data.curves)]
    return "\n".join(rows)


DENSE_PRESETS = DenseParams.presets(
    smoke=dict(n_eval=(4, 10), n_tune=32, n_prompts=64),
    quick=dict(n_eval=(4, 10, 16, 24), n_tune=64, n_prompts=256),
    paper=dict(n_eval=tuple(range(1, 26)), n_tune=1024, n_prompts=2048),  # as CZZ-HEADS
)

CLAIM_DENSE = Claim(
    id="CZZ-G-DENSE",
    source=Source(PAPER, "App. G; Figure 10"),
    statement="With a dense w* (s = d = 16) trained encoders gain no clear advantage from more "
    "heads, unlike at s = 4 << d: the gain needs sparsity (a negative control).",
    params=DenseParams,
    presets=DENSE_PRESETS,
    predict=predict_dense,
    measure=measure_dense,
    checks=checks_dense,
    figure=FigureRef("icl_verify.figures.trained_encoders", "figure_heads"),
    table=table_dense,
    wrong=dense_gain_beyond_range,
    summary=(
        "risk against n at s = d for each h beside OLS, ridge, Lasso; the gain of h_max over "
        "h = 1 in null risks, G_dense, within ± G_sparse/2 of the sparse setting's (gated on "
        "the sparse models beating ridge with a clear gain)"
    ),
    catalogue=(2, 6),
    paper_figures=(
        PaperFigure(
            10,
            ("CZZ-G-DENSE",),
            FigureRef("icl_verify.figures.trained_encoders", "figure_heads"),
            "ICL curves as Figure 3 with s = d = 16 (y range 0-10)",
            "CZZ-G-DENSE's figure: rows σ, columns L, as Figure 3",
        ),
    ),
)

CLAIMS = (CLAIM_DENSE,)
