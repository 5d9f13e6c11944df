"""Claims of He, Pan, Chen, Yang (ICML 2025), *In-Context Linear Regression Demystified*.

One module per claim (what claims of a family share in a module whose name starts with "_"); ids
and sections as in `shared/reference/he2025.md`. Each claim
gives its place in that catalogue (``Claim.catalogue``) and the paper's figures it draws.
"""

from icl_verify.validation.coverage import NOT_IN_CATALOGUE, OpenItem
from icl_verify.validation.paper_figures import OmittedFigure

#: The paper as its claims cite it (`Source.paper`): one definition for the package.
PAPER = "He et al. 2025"

#: The test lengths L' of the paper's length-generalisation figures (Figures 4 and 8).
TEST_LENGTHS = tuple(range(10, 101, 5))

#: The paper's place in the registry (the catalogue's order of the papers).
PAPER_ORDER = 1

#: Figures of the paper with nothing to reproduce, and why (`icl-verify figures he2025`).
OMITTED_FIGURES = (
    OmittedFigure(2, "an architecture schematic (KQ / OV circuits, read-out): no numbers"),
)

#: The items of the paper that no claim judges in full, and why (`validation.coverage`; the
#: site's claims index lists them).
OPEN_ITEMS = (
    OpenItem(
        "§3, robustness of the learned pattern", ("HE-ROBUST",),
        judged="the pattern of two-head members over optimisers, batch sizes and learning "
        "rates, at one (d, L, σ²)",
        why="the 'river valley' sentence (the learned ω depends on the training settings) and "
        "other (d, L, σ²): not judged yet",
    ),
    OpenItem(
        "Figure 6, the landscape of (4.1)", ("HE-P4.1",),
        judged="drawn, and the loss judged at one point",
        why="its shape elsewhere: not judged yet",
    ),
    OpenItem(
        "Table 1 and Figures 9-10, other activations", ("HE-5.2-ACT",),
        judged="Table 1's quantities measured and printed beside the paper's",
        why="the table is not held against the paper's values; Figure 9's diagonal and "
        "last-entry pattern is not judged; Figure 10 is drawn only",
    ),
    OpenItem(
        "Table 2 and (A.2)-(A.4), multi-task", ("HE-5.4-MT",),
        judged="measured and printed beside the paper's",
        why="the table is not held against the paper's values: not judged yet",
    ),
    OpenItem(
        "Lemma C.3 (i)-(iii)", ("HE-C-SOFTMAXNORM",),
        judged="L‖p‖² only",
        why="the lemma's other statements: not judged yet",
    ),
    OpenItem(
        "App. D.3, the uniform-convergence step", ("HE-T4.2iii",),
        judged="its finite formulas",
        why="the uniform convergence itself is a proof step: not judged yet",
    ),
    OpenItem("Phase II, the loss drops as ωμ rises", why="not judged yet"),
    OpenItem("Lemma C.2", why=NOT_IN_CATALOGUE),
    OpenItem("Lemmas E.1-E.3", why=NOT_IN_CATALOGUE),
)
