"""Claims of Chen, Zhao, Zou (NeurIPS 2024), *How Transformers Utilize Multi-Head Attention in
In-Context Learning? A Case Study on Sparse Linear Regression*.

One module per claim (what claims of a family share in a module whose name starts with "_"); ids
(``CZZ-...``) and sections as in `shared/reference/chen2024.md`.
Each claim gives its place in that catalogue (``Claim.catalogue``).
"""

from icl_verify.validation.paper_figures import OmittedFigure

#: The paper's place in the registry (the catalogue's order of the papers).
PAPER_ORDER = 2

_DEPTHS = (
    "the trained-encoder claims read one depth, the preset's (paper 4, quick 3), drawn as "
    "Figures 3, 4 and 6; the paper's depth grid is open"
)
_APPENDIX_G = "Appendix G (decoder-only, s = d, correlated design) is not yet a claim"

#: Figures of the paper not drawn, and why (no content, or not yet reproduced).
OMITTED_FIGURES = (
    OmittedFigure(5, f"pruning and probing at L = 3: {_DEPTHS}"),
    OmittedFigure(7, f"pruning and probing at L = 5: {_DEPTHS}"),
    OmittedFigure(8, f"pruning and probing at L = 6: {_DEPTHS}"),
    OmittedFigure(9, f"decoder-only head maps: {_APPENDIX_G}"),
    OmittedFigure(10, f"ICL curves with s = d = 16: {_APPENDIX_G}"),
    OmittedFigure(11, f"head maps, correlated design: {_APPENDIX_G}"),
)
