"""CZZ-PPROBE of Chen, Zhao, Zou (2024) §6, App. B (Figure 2b): P-probing, GD on the first
layer's query representations of a trained encoder, ends lower with more heads.

GD on the layer-1 query representations of n = 117, q = 11 prompts (the trained models of
`_encoders`), the learning rate from {1, ..., 1e-6} by lowest mean final risk on tuning prompts:
the final risk(h = 1) - risk(h) >= 0 for every trained h > 1, per sigma.

Judged only for models in the paper's regime (`_encoders.regime`); outside it the measurement
carries the null risk s as uncertainty, so it reads inconclusive, never a contradiction.
"""

from __future__ import annotations

from dataclasses import dataclass

import icl_verify.figures.data.trained_encoders as fig_data
import numpy as np
from icl_verify.validation.claim import Check, Claim, FigureRef, Source
from icl_verify.validation.claims.chen2024 import PAPER, PAPER_RATES
from icl_verify.validation.claims.chen2024._encoders import (
    DECIDING_SIZE,
    MAX_Z,
    REGIME_WHY,
    EncoderParams,
    gated,
    per_sigma_se,
    regime,
    regime_line,
    trained_ensembles,
)
from icl_verify.validation.estimates import Estimate, Measurement, Prediction
from icl_verify.validation.paper_figures import PaperFigure
from icl_verify.validation.params import ParameterError, param
from icl_verify.validation.rules import Inequality

from icl_verify import numerics
from icl_verify.statistics import mean_se


@dataclass(frozen=True, kw_only=True)
class PProbeParams(EncoderParams):
    """CZZ-PPROBE: the long prompts, GD steps, rates."""

    n_probe: int = param(
        117, help="labelled examples of the P-probing prompts", low=1, role="length"
    )
    q_probe: int = param(
        11, help="queries of the P-probing prompts (GD on q - 1)", low=2, role="length"
    )
    gd_steps: int = param(help="GD steps on the query representations", low=1, role="count")
    records: int = param(30, help="equally spaced recorded steps", low=1, role="count")
    rates: tuple[float, ...] = param(PAPER_RATES, help="learning-rate grid", low=0, low_open=True)
    n_tune: int = param(help="prompts per member choosing the rate", low=2, role="held")
    n_prompts: int = param(help="prompts per member where the paths are read", low=2, role="count")
    probe_depth: int = param(
        help="depth L of the models probed (one of layers; the paper does not say)", low=1,
        role="count"
    )

    EVALUATED = ("n_tune", "n_prompts")

    def probe_tokens(self) -> int:
        return self.n_probe + self.q_probe

    def validate(self) -> None:
        super().validate()
        if self.probe_depth not in self.layers:
            raise ParameterError(
                f"probe_depth must be one of layers {list(self.layers)}, got {self.probe_depth}"
            )

    def trainings(self) -> tuple:
        """Every h at the probed depth."""
        return tuple(self.training(h, layers=self.probe_depth) for h in self.heads)


def predict_pprobe(params: PProbeParams) -> Prediction:
    multi = [h for h in params.heads if h > 1]
    return Prediction(
        values={"gap": np.zeros((len(multi), len(params.sigmas)))},
        figure_data=fig_data.RiskScale(float(params.s)).to_record(),
    )


def measure_pprobe(params: PProbeParams, runtime) -> Measurement:
    """Layer-1 query states of the long prompts, GD on them per h, paired final gaps."""
    trained = trained_ensembles(params, runtime, params.probe_depth)
    gate = regime(params, runtime, trained[max(params.heads)])
    steps = np.unique(np.round(np.linspace(0, params.gd_steps, params.records + 1))).astype(int)
    finals, paths = {}, []
    for h, ensemble in trained.items():
        result = numerics.encoder_p_probe(
            ensemble, params.n_probe, params.q_probe, layer=1, rates=params.rates, steps=steps,
            n_tune=params.n_tune, n_read=params.n_prompts, tune_seed=runtime.seed_for("tune"),
            read_seed=runtime.seed_for("read"), device=runtime.device,
        )  # fmt: skip
        finals[h] = result.risks[:, -1]  # (E, prompts)
        paths.append((*per_sigma_se(*mean_se(result.risks), params), result.rate))
    multi = [h for h in params.heads if h > 1]
    gaps = [numerics.noise_level_gap(finals[1], finals[h], params.replicates) for h in multi]
    gap = Estimate([g[0] for g in gaps], [g[1] for g in gaps])
    mean, se, rate = (np.array(column) for column in zip(*paths, strict=True))
    data = fig_data.ProbePaths(gate, steps.astype(float), tuple(trained), mean, se, rate)
    return Measurement(values={"gap": gated(gap, gate, float(params.s))},
                       figure_data=data.to_record())  # fmt: skip


def checks_pprobe(params: PProbeParams) -> tuple[Check, ...]:
    why = (
        "Paired: the h = 1 and h models' representations of the same prompts (member e of each, "
        f"same σ), each rate chosen on {params.n_tune} separate prompts; SE over "
        f"{params.n_prompts} prompts per model; one-sided, {MAX_Z:g} SE. " + REGIME_WHY
    )
    return (
        Check("gap", Inequality("at_least", why, max_z=MAX_Z),
              "final risk(h = 1) − risk(h) per σ"),
    )  # fmt: skip


def pprobe_far_apart(params: PProbeParams, prediction: Prediction) -> Prediction:
    """Wrong: the gap exceeds three null risks (the tuned path never ends far above s)."""
    return prediction.with_values(gap=np.full_like(prediction.values["gap"], 3.0 * params.s))


def table_pprobe(params: PProbeParams, prediction: Prediction, measurement: Measurement) -> str:
    data = fig_data.ProbePaths.from_record(measurement.figure_data, params.heads)
    rows = [
        regime_line(max(params.heads), data.gate, what=f" at L = {params.probe_depth}")
        + ("" if data.gate.reached else " " + DECIDING_SIZE), "",
        f"Figure 2b, L = {params.probe_depth}: P-probing (n = {params.n_probe}, "
        f"q = {params.q_probe}, layer-1 query "
        f"states, {params.gd_steps} GD steps), final excess risk ± SE per σ; chosen rates per "
        "model in brackets.", "",
        "| σ | " + " | ".join(f"h = {h}" for h in params.heads) + " |",
        "|" + "---|" * (len(params.heads) + 1),
    ]  # fmt: skip
    k = len(params.sigmas)
    for i, sigma in enumerate(params.sigmas):
        cells = []
        for mean, se, rate in zip(data.mean, data.se, data.rate, strict=True):  # per h
            rates = ", ".join(f"{r:g}" for r in rate[i::k])
            cells.append(f"{mean[i][-1]:.3f} ± {se[i][-1]:.3f} [{rates}]")
        rows.append(f"| {sigma:g} | " + " | ".join(cells) + " |")
    return "\n".join(rows)


PPROBE_PRESETS = PProbeParams.presets(
    smoke=dict(gd_steps=100, records=5, n_tune=32, n_prompts=64, probe_depth=2),
    quick=dict(gd_steps=3000, n_tune=128, n_prompts=256, probe_depth=3),
    paper=dict(gd_steps=9000, n_tune=1024, n_prompts=1024, probe_depth=4),  # reference §2.5
)

CLAIM_PPROBE = Claim(
    id="CZZ-PPROBE",
    source=Source(PAPER, "6, App. B; Figure 2b"),
    statement="GD on the first layer's query representations (n = 117, q = 11 prompts, rate "
    "tuned over {1, …, 1e-6}) ends at a lower excess risk for h ∈ {4, 8} heads than for h = 1.",
    params=PProbeParams,
    presets=PPROBE_PRESETS,
    predict=predict_pprobe,
    measure=measure_pprobe,
    checks=checks_pprobe,
    figure=FigureRef("icl_verify.figures.trained_encoders", "figure_pprobe"),
    table=table_pprobe,
    wrong=pprobe_far_apart,
    summary=(
        "GD on the layer-1 query states of n = 117, q = 11 prompts, rate from the paper's "
        "grid: final risk(h = 1) − risk(h) ≥ 0"
    ),
    catalogue=(2, 4),
    paper_figures=(
        PaperFigure(
            2,
            ("CZZ-PPROBE", "CZZ-PREGD"),
            FigureRef("icl_verify.figures.trained_encoders", "figure_2"),
            "(a) schematic of P-probing; (b) last-query excess risk vs GD steps on the layer-1 "
            "states, h in {1, 4, 8}; (c) gd vs pre-gd vs GD steps, one panel per σ",
            "(b) CZZ-PPROBE's figure, (c) CZZ-PREGD's, side by side; (a) is a schematic",
        ),
    ),
)

CLAIMS = (CLAIM_PPROBE,)
