"""Claims of He, Pan, Chen, Yang (ICML 2025), *In-Context Linear Regression Demystified*.

One module per claim (what claims of a family share in a module whose name starts with "_"); ids
and sections as in `shared/reference/he2025.md`. Each claim
gives its place in that catalogue (``Claim.catalogue``) and the paper's figures it draws.
"""

from icl_verify.validation.paper_figures import OmittedFigure

#: The paper as its claims cite it (`Source.paper`): one definition for the package.
PAPER = "He et al. 2025"

#: The paper's place in the registry (the catalogue's order of the papers).
PAPER_ORDER = 1

#: Figures of the paper with nothing to reproduce, and why (`icl-verify figures he2025`).
OMITTED_FIGURES = (
    OmittedFigure(2, "an architecture schematic (KQ / OV circuits, read-out): no numbers"),
)
