"""Claims of Chen, Zhao, Zou (NeurIPS 2024), *How Transformers Utilize Multi-Head Attention in
In-Context Learning? A Case Study on Sparse Linear Regression*.

One module per claim (what claims of a family share in a module whose name starts with "_"); ids
(``CZZ-...``) and sections as in `shared/reference/chen2024.md`.
Each claim gives its place in that catalogue (``Claim.catalogue``).
"""

from icl_verify.validation.coverage import NOT_IN_CATALOGUE, OpenItem

#: The paper as its claims cite it (`Source.paper`): one definition for the package.
PAPER = "Chen et al. 2024"

#: The paper's noise grid: label-noise standard deviations, one model (or panel) each
#: (reference §2.1).
PAPER_SIGMAS = (0.0, 0.1, 0.2, 0.4, 0.8)

#: The paper's learning-rate grid of P-probing and of Figure 2c's GD (reference §2.5).
PAPER_RATES = (1.0, 1e-1, 1e-2, 1e-3, 1e-4, 1e-5, 1e-6)

#: The paper's penalty grid: ridge's λ and the Lasso's α (reference §2.2).
PAPER_PENALTIES = (1.0, 1e-1, 1e-2, 1e-3, 1e-4)

#: The paper's place in the registry (the catalogue's order of the papers).
PAPER_ORDER = 2

#: Figures of the paper not drawn, and why: none (the schematics 1a and 2a are named in the
#: captions of Figures 1 and 2, whose other panels are drawn).
OMITTED_FIGURES = ()

#: The items of the paper that no claim judges in full, and why (`validation.coverage`; the
#: site's claims index lists them).
OPEN_ITEMS = (
    OpenItem(
        "Figure 4, the sorted average W_avg", ("CZZ-IMPORTANCE",),
        judged="reported beside the judged effective numbers of heads",
        why="the sorted average itself is not judged",
    ),
    OpenItem(
        "Figures 5-8, pruning", ("CZZ-PRUNE",),
        judged="the pruned model is closer to the full one than the one-head model is",
        why="'almost the same' (the pruned model's risk equal to the full one's within the "
        "error): not judged yet",
    ),
    OpenItem(
        "App. F.2-F.4, the λ- and ηt-dependent forms", ("CZZ-T5.3",),
        judged="the oracle-tuned headline bounds",
        why="the forms at other λ and ηt: not judged yet",
    ),
    OpenItem(
        "App. G, the decoder's footnote (smaller h or L fail to train)", ("CZZ-G-DECODER",),
        judged="the smaller decoders' excess risk reported against ridge",
        why="reported, not judged",
    ),
    OpenItem("Lemmas E.1-E.3", why=NOT_IN_CATALOGUE),
    OpenItem(
        "Lemma F.1", why="not judged yet: CZZ-F1 checks App. F's steps, not the lemma itself"
    ),
)
