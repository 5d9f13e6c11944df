"""CZZ-G-DECODER of Chen, Zhao, Zou (2024) App. G (Figure 9): a decoder-only transformer uses
its heads as the encoder does, every head in layer 1 and one in each later layer.

The model (`numerics._core.decoder`, reference §2.7): a GPT-2-style causal decoder on interleaved
prompts (x_1, y_1, ..., x_n, y_n), y zero-padded to d, trained through the encoders' trainer
(`numerics.EncoderTraining` with ``architecture="decoder"``) with the loss (G.1) on the
predictions of examples k..n (n = 24, k = 8), fresh s-sparse prompts, one model per sigma.
Head importance assessed with 10 examples, as for the encoder: `_importance`'s measurement,
rules (share of heads used 1 ± 1/2 in layer 1, 0 ± 1/2 later) and regime gate (the
decoder beats tuned ridge at n = 10), one setting per depth L.

The paper's footnote (smaller h or L failed to train despite tuning) is reported, not assumed:
``footnote_layers`` and ``footnote_heads`` train a shallower and a narrower decoder with the same
recipe, and the report gives their excess risk at n = 10 against tuned ridge and the null
risk s (a model that predicts 0); they are not judged.
"""

from __future__ import annotations

from dataclasses import dataclass

import icl_verify.figures.data.trained_encoders as fig_data
from icl_verify.validation.claim import Claim, FigureRef, Source
from icl_verify.validation.claims.chen2024 import PAPER, _importance
from icl_verify.validation.claims.chen2024._encoders import (
    EVAL_N,
    SparseTrainedParams,
    regime,
)
from icl_verify.validation.estimates import Measurement, Prediction
from icl_verify.validation.paper_figures import PaperFigure
from icl_verify.validation.params import ParameterError, param


@dataclass(frozen=True, kw_only=True)
class DecoderParams(SparseTrainedParams):
    """CZZ-G-DECODER: the decoder's prompts and architecture, the masking prompts, the
    footnote's smaller models."""

    n_train: int = param(24, help="examples per training prompt (n of (G.1))", low=2, role="length")
    k: int = param(8, help="(G.1) sums the errors of examples k..n_train", low=1, role="length")
    heads: int = param(help="heads h per layer", low=1, role="heads")
    layers: tuple[int, ...] = param(
        help="depths L trained and judged, one ensemble each", low=1, role="count"
    )
    footnote_layers: int = param(
        0, help="a smaller depth trained with h heads, reported, not judged (0: none)", low=0,
        role="count"
    )
    footnote_heads: int = param(
        0, help="a smaller h trained at the smallest depth, reported, not judged (0: none)", low=0,
        role="heads"
    )
    n_prompts: int = param(
        help="prompts per member (n = 10, q = 1; the paper: 8192)", low=2, role="count"
    )
    bootstrap: int = param(2000, help="bootstrap resamples of the models", low=10, role="count")

    EVALUATED = ("n_prompts",)

    def validate(self) -> None:
        super().validate()
        if self.k > self.n_train:
            raise ParameterError(
                f"k must be an integer in [1, n_train={self.n_train}], got {self.k}"
            )
        if self.n_train < EVAL_N + 1:
            raise ParameterError(
                f"n_train must be >= {EVAL_N + 1} (the assessment's {EVAL_N} examples and a "
                f"query use positions the decoder was trained on), got {self.n_train}"
            )
        for h in (self.heads, self.footnote_heads or self.heads):
            if self.d_hid % h:
                raise ParameterError(f"heads must divide d_hid = {self.d_hid}, got {h}")

    def judged(self) -> tuple:
        """The trainings judged: h heads at every depth."""
        return tuple(self._training(self.heads, L) for L in self.layers)

    def footnote(self) -> tuple:
        """The footnote's smaller models (reported only)."""
        smaller = []
        if self.footnote_layers:
            smaller.append(self._training(self.heads, self.footnote_layers))
        if self.footnote_heads:
            smaller.append(self._training(self.footnote_heads, min(self.layers)))
        return tuple(smaller)

    def trainings(self) -> tuple:
        return self.judged() + self.footnote()

    def _training(self, heads: int, layers: int):
        # the loss (G.1) on examples k..n: n = k - 1 context-only examples, q = n - k + 1
        return self.training(heads, layers=layers, architecture="decoder", n=self.k - 1,
                        q=self.n_train - self.k + 1)  # fmt: skip


def predict_decoder(params: DecoderParams) -> Prediction:
    """As the encoder: share of heads used 1 in layer 1, 0 later, per depth."""
    return _importance.predict_importance(params.judged())


def measure_decoder(params: DecoderParams, runtime) -> Measurement:
    """`_importance.measure_importance` per depth, and the footnote models against ridge."""
    measurement = _importance.measure_importance(params, runtime, params.judged())
    data = dict(measurement.figure_data)
    for i, t in enumerate(params.footnote()):
        gate = regime(params, runtime, runtime.trained(t))
        footnote = fig_data.Footnote(t.heads, t.layers, gate.risk, gate.ridge, gate.gap_se)
        data |= footnote.to_record(i)
    return Measurement(measurement.values, data)


def table_decoder(params: DecoderParams, prediction: Prediction, measurement: Measurement) -> str:
    footnotes = [fig_data.Footnote.from_record(measurement.figure_data, i)
                 for i in range(len(params.footnote()))]  # fmt: skip
    rows = [
        f"Decoder (d={params.d}, s={params.s}, d_hid={params.d_hid}, h={params.heads}, trained "
        f"on n={params.n_train} examples with (G.1) from k={params.k}, {params.steps} steps).",
        "", _importance.table_importance(params, prediction, measurement),
    ]  # fmt: skip
    if footnotes:
        rows += [
            "The paper's footnote (smaller h or L failed to train), reported: excess risk at "
            f"n = {EVAL_N} against tuned ridge and the null risk s = {params.s} (predicting 0).",
            "", "| h | L | excess risk | tuned ridge | gap SE |", "|---|---|---|---|---|",
        ]  # fmt: skip
        rows += [f"| {f.heads} | {f.layers} | {f.risk:.3f} | {f.ridge:.3f} | {f.gap_se:.3f} |"
                 for f in footnotes]  # fmt: skip
    return "\n".join(rows)


# The quick decoder (d_hid 32, h = 4, 3 layers, 48 tokens, 60 steps) exercises the path only,
# as the encoders' quick size does; the paper's size is a GPU's (the GPU issue's command).
DECODER_PRESETS = DecoderParams.presets(
    smoke=dict(n_train=12, k=4, heads=2, steps=40, checkpoint_every=20, n_prompts=128,
               bootstrap=100),
    quick=dict(heads=4, steps=60, checkpoint_every=60, n_prompts=512),
    paper=dict(heads=8, layers=(4, 5, 6), footnote_layers=3, footnote_heads=4, n_prompts=8192),
)  # fmt: skip

CLAIM_DECODER = Claim(
    id="CZZ-G-DECODER",
    source=Source(PAPER, "App. G", "(G.1); Figure 9"),
    statement="A GPT-2-style decoder trained on interleaved sparse-regression prompts with the "
    "loss (G.1) uses heads as the encoder does: every head in layer 1 (effective number 1/ΣW² "
    "near h), one head in each later layer.",
    params=DecoderParams,
    presets=DECODER_PRESETS,
    predict=predict_decoder,
    measure=measure_decoder,
    checks=_importance.checks_importance,
    figure=FigureRef("icl_verify.figures.trained_encoders", "figure_importance"),
    table=table_decoder,
    wrong=_importance.one_head_everywhere,
    summary=(
        "causal decoder on (x_1, y_1, ..., x_n, y_n), loss (G.1) from k = 8 of n = 24; W (3.1) "
        "by masking at n = 10 per depth: share of heads used 1 ± ½ in layer 1, 0 ± ½ "
        "later; the footnote's smaller models reported against ridge"
    ),
    catalogue=(2, 5),
    paper_figures=(
        PaperFigure(
            9,
            ("CZZ-G-DECODER",),
            FigureRef("icl_verify.figures.trained_encoders", "figure_importance"),
            "decoder-only head maps, h = 8, L in {4, 5, 6}, averaged over σ",
            "CZZ-G-DECODER's figure: one panel per depth of the preset",
        ),
    ),
)

CLAIMS = (CLAIM_DECODER,)

