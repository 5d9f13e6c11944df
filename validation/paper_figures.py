"""The figures of each paper, and the claims whose stored records draw them (`icl-verify figures`).

One `PaperFigure` per numbered figure of a paper: the claim(s) it is drawn from, the function of
`icl_verify.figures` that draws it, what the paper's figure shows (one line of the reference
catalogue's §7, `reference/he2025.md`) and a caption of what this toolkit draws. Figures without
content (a schematic, a number the text never uses) are `OmittedFigure`s, listed with the reason.

A figure function draws from stored numbers only (the `figure_data` of each claim's record in
results.json), with one of two signatures:

- one claim: ``function(params, prediction, measurement)``, the signature of every claim figure,
  so a paper figure that a claim already draws names that claim's own figure function;
- several claims: ``function(records)``, ``records`` mapping each claim id of the entry to its
  `StoredClaim` (params, prediction, measurement).
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple


class StoredClaim(NamedTuple):
    """A finished claim as its figure functions read it: typed parameters and stored numbers."""

    params: Any
    prediction: Any  # validation.claim.Prediction
    measurement: Any  # validation.claim.Measurement


@dataclass(frozen=True)
class PaperFigure:
    """A figure of a paper drawn from the records of `claims` by `figure` ("module:function")."""

    number: int
    claims: tuple[str, ...]
    figure: str  # in icl_verify.figures; signature by len(claims), see the module docstring
    shows: str  # what the paper's figure shows (reference §7)
    caption: str  # what is drawn here

    def __post_init__(self) -> None:
        if not self.claims or self.figure.count(":") != 1:
            raise ValueError(
                f"figure {self.number}: claims must be non-empty and figure 'module:function', "
                f"got {self.claims!r}, {self.figure!r}"
            )

    @property
    def file_name(self) -> str:
        """``figure-01.png`` for Figure 1 (two digits, so that the files sort by number)."""
        return f"figure-{self.number:02d}.png"

    def draw(self, records: Mapping[str, StoredClaim]):
        """The matplotlib Figure, drawn from the stored records of this figure's claims."""
        module, name = self.figure.split(":")
        function = getattr(importlib.import_module(f"icl_verify.figures.{module}"), name)
        if len(self.claims) == 1:
            return function(*records[self.claims[0]])
        return function({claim_id: records[claim_id] for claim_id in self.claims})


@dataclass(frozen=True)
class OmittedFigure:
    """A numbered figure of a paper that has no content to reproduce, and why."""

    number: int
    reason: str


# He et al. (2025): reference/he2025.md §7; the claims' sections say what each compares.
HE2025 = (
    PaperFigure(
        1,
        ("HE-OBS1", "HE-OBS4"),
        "paper:figure_1",
        "two-head model: trained KQ (full (d+1)² heat map) and OV last row per head, diagonal / "
        "last-entry patterns and opposite heads; plus their early-training evolution (sign "
        "matching, zero sum)",
        "(a) KQ and OV last row of the trained two-head member (lowest validation loss); (b) the "
        "same circuits at early logged steps; (c) ω_h(t), μ_h(t) and μ₁+μ₂ over the early steps",
    ),
    PaperFigure(
        3,
        ("HE-OBS1",),
        "paper:figure_3",
        "the same heat maps for H = 1 (one head, ω ≈ 1/√d) and H = 4 (positive, negative and "
        "dummy heads)",
        "KQ and OV last row per head of the trained H = 1 and H = 4 members (lowest validation "
        "loss per H)",
    ),
    PaperFigure(
        4,
        ("HE-OBS3",),
        "paper:figure_4",
        "test MSE vs L' (10..100): left, trained H = 1, 2, 4, 8; right, the two-head TF at "
        "(ω, μ) = (0.13, 3.45), the single-head kernel (1/√d, μ*), GD, dGD and ridge",
        "left: Monte Carlo test MSE of one trained member per H (no +0.1 offset); right: Monte "
        "Carlo of the fixed ± pair and single-head kernel, GD and dGD at the training-L optimal "
        "steps (exact risks as lines, Monte Carlo as markers) and ridge λ = σ²d (Bayes)",
    ),
    PaperFigure(
        5,
        ("HE-OBS4",),
        "paper:figure_5",
        "training dynamics of the two-head model: KQ heat maps at selected steps and ω_h(t), "
        "μ_h(t) with ±0.13 / ±3.5 guides",
        "KQ heat maps of the shown two-head member at logged steps from the first to the last; "
        "ω_h(t), μ_h(t) with the paper's ±0.13 / ±3.45 and the manifold guide ±μ*(ω(t))",
    ),
    PaperFigure(
        6,
        ("HE-P4.1",),
        "landscape:figure_landscape",
        "true loss vs the approximate loss L̃ over (ω, μ) and their gap near small ω, μ "
        "(the flat river valley of minima)",
        "HE-P4.1's figure: Monte Carlo true loss and L̃ of the ± pair over (ω, μ), and the gap "
        "on the manifold against L",
    ),
    PaperFigure(
        8,
        ("HE-5.1-LENGTH",),
        "linear_attention:figure_length",
        "length generalisation, train L = 40, test L' in [10, 100]: one- and multi-head softmax "
        "vs linear attention",
        "HE-5.1-LENGTH's figure: trained softmax and linear attention against the frozen "
        "linear-attention risk",
    ),
    PaperFigure(
        9,
        ("HE-5.2-ACT",),
        "activations:figure_9",
        "trained two-head KQ / OV with alternative normalised activations (Table 1 models)",
        "HE-5.2-ACT's Figure 9: circuits of one paired member per activation",
    ),
    PaperFigure(
        10,
        ("HE-5.2-ACT",),
        "activations:figure_10",
        "ω(t), μ(t) for those activations",
        "HE-5.2-ACT's Figure 10: ω_h(t), μ_h(t) per activation",
    ),
    PaperFigure(
        11,
        ("HE-5.2-ACT",),
        "activations:figure_11",
        "test error vs L' of those models with the dGD curve at each model's η_eff",
        "HE-5.2-ACT's Figure 11: test MSE vs L' against debiased GD at each fitted step",
    ),
    PaperFigure(
        12,
        ("HE-5.3-KMS",),
        "preconditioning:figure_12",
        "non-isotropic (KMS) covariates: KQ11 of both heads (±ω Γ); Γ_learned vs Σ⁻¹ and Γ*",
        "HE-5.3-KMS's Figure 12",
    ),
    PaperFigure(
        13,
        ("HE-A-HEADS",),
        "head_count:figure_13",
        "ω_h(t), μ_h(t) for several H: the same limiting ω and group sums across H",
        "HE-A-HEADS's Figure 13",
    ),
    PaperFigure(
        14,
        ("HE-A-HEADS",),
        "head_count:figure_14",
        "four-head run with a dummy head: KQ heat-map evolution (the dummy head → 0) and "
        "its dynamics",
        "HE-A-HEADS's Figure 14",
    ),
    PaperFigure(
        15,
        ("HE-5.3-KMS",),
        "preconditioning:figure_15",
        "inverse of the learned KQ11 vs Σ and (Γ*)⁻¹",
        "HE-5.3-KMS's Figure 15",
    ),
    *(
        PaperFigure(
            number,
            ("HE-5.4-MT",),
            f"multitask:figure_{number}",
            f"multi-task ICL, H = {heads} ({mode}): KQ11 = diag(ω^h) and the OV K x K blocks",
            f"HE-5.4-MT's Figure {number}",
        )
        for number, heads, mode in (
            (16, 1, "Mode I"),
            (17, 2, "Mode II"),
            (18, 4, "Mode III"),
            (19, 3, "Mode IV, superposition"),
        )
    ),
    PaperFigure(
        20,
        ("HE-C-SOFTMAXNORM",),
        "softmax_norm:figure_20",
        "histograms of the softmax-vector norm ‖softmax(ω Xᵀx_q)‖₂ for fixed d and growing L, "
        "for d ∝ L, and with ω ∝ d^{-1/2}",
        "HE-C-SOFTMAXNORM's Figure 20",
    ),
    PaperFigure(
        21,
        ("HE-C-TRUELOSS",),
        "true_loss:figure_21",
        "four-head training dynamics under the true loss vs under L̃",
        "HE-C-TRUELOSS's Figure 21",
    ),
    PaperFigure(
        22,
        ("HE-B-PHASE3",),
        "paper:figure_22",
        "two-head ODE (B.4): (a) ω(t), μ(t) full run; (b) early phase with ω ≈ μ; (c) loss and "
        "μ/ω; (d) ω·μ with the μ*(ω) overlay",
        "(B.4) integrated from Def. B.1 (HE-B-PHASE3): (a) ω, μ with the late law; (b) the "
        "early phase against ε e^{2t}; (c) L̃ and μ/ω; (d) ωμ against ω μ*(ω)",
    ),
)

HE2025_OMITTED = (
    OmittedFigure(2, "an architecture schematic (KQ / OV circuits, read-out): no numbers"),
    OmittedFigure(7, "not referenced in the paper's text (reference §7)"),
)

#: Paper key (the `icl-verify figures PAPER` argument) -> (its drawn figures, omitted figures).
PAPERS: dict[str, tuple[tuple[PaperFigure, ...], tuple[OmittedFigure, ...]]] = {
    "he2025": (HE2025, HE2025_OMITTED),
}


def paper_claims(figures: tuple[PaperFigure, ...]) -> tuple[str, ...]:
    """Every claim id the figures read, each once, in the order of first use.

    >>> paper_claims(HE2025)[:3]
    ('HE-OBS1', 'HE-OBS4', 'HE-OBS3')
    """
    return tuple(dict.fromkeys(claim for figure in figures for claim in figure.claims))
