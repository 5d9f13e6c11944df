"""Claims of Chen, Zhao, Zou (NeurIPS 2024), *How Transformers Utilize Multi-Head Attention in
In-Context Learning? A Case Study on Sparse Linear Regression*.

One module per claim (what claims of a family share in a module whose name starts with "_"); ids
(``CZZ-...``) and sections as in `shared/reference/chen2024.md`.
Each claim gives its place in that catalogue (``Claim.catalogue``).
"""

#: The paper as its claims cite it (`Source.paper`): one definition for the package.
PAPER = "Chen et al. 2024"

#: The paper's place in the registry (the catalogue's order of the papers).
PAPER_ORDER = 2

#: Figures of the paper not drawn, and why: none (the schematics 1a and 2a are named in the
#: captions of Figures 1 and 2, whose other panels are drawn).
OMITTED_FIGURES = ()
