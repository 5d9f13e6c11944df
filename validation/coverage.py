"""What of each paper its claims judge only in part, or not at all, and why: the site's
catalogue (the claims index) lists these beside the claims, so no item of a paper is silently
left out.

An item is a theorem part, a lemma, an observation, a table, a figure with content of its own or
a quantitative sentence of the paper. Every item a claim judges in full is that claim (the
registry); each paper package declares the others as ``OPEN_ITEMS``, one `OpenItem` each: the
claims that judge part of it (none for an item judged not at all), what they judge, and what is
left and why.
"""

from __future__ import annotations

from dataclasses import dataclass

#: Why an item is not judged yet when the reference catalogue lost its statement.
NOT_IN_CATALOGUE = (
    "not judged yet: the reference catalogue holds no statement of it (the paper's text lost "
    "its mathematics), so a claim needs it from the paper's appendix first"
)


@dataclass(frozen=True)
class OpenItem:
    """An item of a paper that no claim judges in full.

    >>> item = OpenItem("Lemma C.2", why="not judged yet")
    >>> item.status
    'not at all'
    """

    item: str  # as the paper names it ("Lemma C.2", "Table 1 and Figures 9-10")
    claims: tuple[str, ...] = ()  # the claims judging part of it
    judged: str = ""  # what of it they judge
    why: str = ""  # what is left, and why

    def __post_init__(self) -> None:
        if not self.why:
            raise ValueError(f"{self.item}: why must say what is left and why")
        if bool(self.claims) != bool(self.judged):
            raise ValueError(f"{self.item}: judged must say what the claims {self.claims} judge "
                             "(and is empty when no claim does)")  # fmt: skip

    @property
    def status(self) -> str:
        """"in part" or "not at all"."""
        return "in part" if self.claims else "not at all"


def open_items() -> dict[str, tuple[OpenItem, ...]]:
    """Paper (as its claims cite it, `Source.paper`) -> its ``OPEN_ITEMS``, read from the
    subpackage of its claims; a ValueError where an item names a claim of no such id in that
    paper.

    >>> [item.item for item in open_items()["He et al. 2025"] if item.item.startswith("Lemma")]
    ['Lemma C.3 (i)-(iii)', 'Lemma C.2', 'Lemmas E.1-E.3']
    """
    from icl_verify.validation.registry import all_claims, paper_of, paper_package

    claims = all_claims()
    result: dict[str, tuple[OpenItem, ...]] = {}
    for claim in claims:
        paper = claim.source.paper
        if not paper_of(claim) or paper in result:
            continue
        items = tuple(getattr(paper_package(paper_of(claim)), "OPEN_ITEMS", ()))
        ids = {c.id for c in claims if c.source.paper == paper}
        for item in items:
            if unknown := sorted(set(item.claims) - ids):
                raise ValueError(f"{item.item}: no claim {unknown[0]} in {paper}")
        result[paper] = items
    return result
