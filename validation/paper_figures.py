"""The figures of each paper, and the claims whose stored records draw them (`icl-verify figures`).

One `PaperFigure` per numbered figure of a paper: the claim(s) it is drawn from, the function of
`icl_verify.figures` that draws it (a `validation.claim.FigureRef`), what the paper's figure
shows (one line of the reference catalogue's §7, `reference/he2025.md`) and a caption of what
this toolkit draws. Figures without content (a schematic, a number the text never uses), or not
reproduced yet, are `OmittedFigure`s, listed with the reason.

A figure function draws from stored numbers only (the `figure_data` of each claim's record in
results.json), with one of two signatures:

- one claim: ``function(params, prediction, measurement)``, the signature of every claim figure,
  so a paper figure that a claim already draws names that claim's own figure function;
- several claims: ``function(records)``, ``records`` mapping each claim id of the entry to its
  `StoredClaim` (params, prediction, measurement).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

from icl_verify.validation.claim import FigureRef


class StoredClaim(NamedTuple):
    """A finished claim as its figure functions read it: typed parameters and stored numbers."""

    params: Any
    prediction: Any  # validation.estimates.Prediction
    measurement: Any  # validation.estimates.Measurement


@dataclass(frozen=True)
class PaperFigure:
    """A figure of a paper drawn from the records of `claims` by the function `figure`."""

    number: int
    claims: tuple[str, ...]
    figure: FigureRef  # in icl_verify.figures; signature by len(claims), see the module docstring
    shows: str  # what the paper's figure shows (reference §7)
    caption: str  # what is drawn here

    def __post_init__(self) -> None:
        if not self.claims:
            raise ValueError(f"figure {self.number}: claims must name at least one claim, got "
                             f"{self.claims!r}")  # fmt: skip
        if not isinstance(self.figure, FigureRef):
            raise ValueError(f"figure {self.number}: figure must be a FigureRef(module, "
                             f"function), got {self.figure!r}")  # fmt: skip
        if problem := self.figure.problem():
            raise ValueError(f"figure {self.number}: figure {problem}")

    @property
    def file_name(self) -> str:
        """``figure-01.png`` for Figure 1 (two digits, so that the files sort by number)."""
        return f"figure-{self.number:02d}.png"

    def draw(self, records: Mapping[str, StoredClaim]):
        """The matplotlib Figure, drawn from the stored records of this figure's claims."""
        from icl_verify.figures.style import figure_style

        function = self.figure.resolve()
        with figure_style():
            if len(self.claims) == 1:
                return function(*records[self.claims[0]])
            return function({claim_id: records[claim_id] for claim_id in self.claims})


@dataclass(frozen=True)
class OmittedFigure:
    """A numbered figure of a paper that is not drawn (no content to reproduce, or not yet
    reproduced), and why."""

    number: int
    reason: str


def papers() -> dict[str, tuple[tuple[PaperFigure, ...], tuple[OmittedFigure, ...]]]:
    """Paper key (its claims' subpackage, the `icl-verify figures PAPER` argument) -> its drawn
    figures in number order, gathered from its claims' ``paper_figures``, and its omitted ones
    (the subpackage's ``OMITTED_FIGURES``); a paper none of whose claims draws a figure of it
    is left out.

    >>> drawn, omitted = papers()["he2025"]
    >>> [f.number for f in drawn][:4], [f.number for f in omitted]
    ([1, 3, 4, 5], [2])
    """
    from icl_verify.validation.registry import all_claims, paper_of, paper_package

    drawn: dict[str, list[PaperFigure]] = {}
    for claim in all_claims():
        drawn.setdefault(paper_of(claim), []).extend(claim.paper_figures)
    result = {}
    for paper, figures in drawn.items():
        if not paper or not figures:
            continue
        package = paper_package(paper)
        numbers = [f.number for f in figures]
        if len(set(numbers)) != len(numbers):
            raise ValueError(f"{paper}: a figure number is declared twice, got {sorted(numbers)}")
        omitted = tuple(getattr(package, "OMITTED_FIGURES", ()))
        result[paper] = (tuple(sorted(figures, key=lambda f: f.number)), omitted)
    return result


def paper_claims(figures: tuple[PaperFigure, ...]) -> tuple[str, ...]:
    """Every claim id the figures read, each once, in the order of first use.

    >>> paper_claims(papers()["he2025"][0])[:3]
    ('HE-OBS1', 'HE-OBS4', 'HE-OBS3')
    """
    return tuple(dict.fromkeys(claim for figure in figures for claim in figure.claims))
