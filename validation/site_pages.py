"""Every file of the documentation site that is generated (`make docs`; ``docs/site/gen_pages.py``
writes them at build time), by its path in the site: the claim pages, the claims' index, the
findings, the paper-size index with its reports and figures, the derivations and the static
figures (the gallery is docs/site/gallery.py's: it needs a Jupyter kernel).

The site shows what was published, never what happens to lie in a local ``results/``: the
committed quick verdicts (``docs/verdicts-quick.json``, the figures of their run in
``docs/verdicts-quick/figures/``) and the paper-size publications (``docs/paper/<name>/``,
`validation.published`). A run of one's own is read with `icl-verify report`, not by
rebuilding the site.
"""

from __future__ import annotations

from pathlib import Path

from icl_verify.validation import published, site
from icl_verify.validation.registry import all_claims

__all__ = ["about_page", "derivation_pages", "record_pages", "site_pages"]


def site_pages(root: Path) -> dict[str, bytes]:
    """The generated files of the site built from the checkout at ``root``: site path ->
    content (pages as UTF-8 markdown, figures as PNG bytes): `record_pages` and
    `derivation_pages`, and the page saying what the site was built from (`about_page`); the
    API reference is docs/site/api_reference.py's."""
    return record_pages(root) | derivation_pages() | {"about.md": about_page().encode()}


#: The papers checked, as their publishers cite them (BibTeX).
PAPERS_BIBTEX = """\
@inproceedings{he2025incontext,
  title     = {In-Context Linear Regression Demystified: Training Dynamics and Mechanistic
               Interpretability of Multi-Head Softmax Attention},
  author    = {He, Jianliang and Pan, Xintian and Chen, Siyu and Yang, Zhuoran},
  booktitle = {Proceedings of the 42nd International Conference on Machine Learning},
  series    = {Proceedings of Machine Learning Research},
  volume    = {267},
  pages     = {22686--22742},
  year      = {2025},
  note      = {arXiv:2503.12734}
}

@inproceedings{chen2024transformers,
  title     = {How Transformers Utilize Multi-Head Attention in In-Context Learning?
               A Case Study on Sparse Linear Regression},
  author    = {Chen, Xingwu and Zhao, Lei and Zou, Difan},
  booktitle = {Advances in Neural Information Processing Systems 37 (NeurIPS 2024)},
  year      = {2024},
  doi       = {10.52202/079017-3799},
  note      = {arXiv:2408.04532}
}
"""


def about_page() -> str:
    """What the site was built from (the package version and the git commit of the checkout)
    and how to cite the papers and the toolkit.

    >>> about_page().startswith("# About and citing")
    True
    """
    from icl_verify.validation.records import environment

    built = environment()
    version = built["package_version"] or "unknown"
    commit = built["git_commit"] or "not a git checkout"
    return "\n".join([
        "# About and citing", "",
        f"This site was built from icl-verify {version}, commit `{commit}`; every verdict on it "
        "is a published record of that checkout (the committed quick verdicts and the "
        "paper-size runs under `docs/paper/`).", "",
        "## The papers", "",
        "- Jianliang He, Xintian Pan, Siyu Chen, Zhuoran Yang. *In-Context Linear Regression "
        "Demystified: Training Dynamics and Mechanistic Interpretability of Multi-Head Softmax "
        "Attention.* ICML 2025, PMLR 267:22686-22742 "
        "([arXiv:2503.12734](https://arxiv.org/abs/2503.12734)); the authors' code: "
        "[XintianPan/ICL_linear](https://github.com/XintianPan/ICL_linear).",
        "- Xingwu Chen, Lei Zhao, Difan Zou. *How Transformers Utilize Multi-Head Attention in "
        "In-Context Learning? A Case Study on Sparse Linear Regression.* NeurIPS 2024 "
        "([arXiv:2408.04532](https://arxiv.org/abs/2408.04532)).", "",
        "## Citing", "",
        "A verdict of this toolkit is cited with the paper whose claim it checks, the claim's id "
        "(e.g. HE-OBS2), the preset and the version and commit above (each report states its "
        "own). The papers:", "",
        "```bibtex", PAPERS_BIBTEX.rstrip(), "```", "",
    ])  # fmt: skip


def record_pages(root: Path) -> dict[str, bytes]:
    """The files the published records make: a page per claim, the indexes, the findings, the
    paper-size reports and figures and the README's figures.

    >>> pages = record_pages(Path(__file__).resolve().parents[1])
    >>> "claims/HE-P4.1.md" in pages and "paper/index.md" in pages
    True
    """
    root = Path(root)
    docs = root / "docs"
    files: dict[str, bytes] = {}
    latest = site.Verdicts.from_summary(docs / "verdicts-quick.json")
    # the paper-size reports (`icl-verify publish`: docs/paper/<name>/); a claim's page shows
    # the newest that finished it, as the index docs/paper/README.md does
    publications = published.publications(docs / "paper")
    reports = {name: site.Verdicts.from_record(pub.record, pub.folder)
               for name, pub in publications.items()}  # fmt: skip
    figures = {}
    for claim in all_claims():
        # the quick run's figures, committed with its verdicts (docs/verdicts-quick/figures/)
        paths = [Path(f) for f in latest.claims.get(claim.id, {}).get("figures", [])]
        for path in paths:
            files[f"claims/figures/{path.name}"] = path.read_bytes()
        figures[claim.id] = [f"figures/{path.name}" for path in paths]
        pub = published.newest(claim.id, publications)
        paper = (reports[pub.name],) if pub else ()
        paper_figures = {}  # the paper-size report's figures (docs/paper/<name>/figures/)
        for report in paper:
            for path in map(Path, report.claims[claim.id]["figures"]):
                files[f"claims/figures/paper/{path.name}"] = path.read_bytes()
                paper_figures.setdefault(claim.id, []).append(f"figures/paper/{path.name}")
        page = site.claim_page(claim, latest, figures, paper, paper_figures)
        files[f"claims/{claim.id}.md"] = page.encode()
    # every claim at the papers' size: the index of docs/paper/ with the reports and figures
    files["paper/index.md"] = published.paper_index(
        latest, publications, findings="../findings-explained.md", notes=False,
        claim_link="../claims/{id}.md",
    ).encode()  # fmt: skip
    for pub in publications.values():
        for path in [pub.folder / "report.md", *sorted((pub.folder / "figures").glob("*.png"))]:
            files[f"paper/{path.relative_to(pub.folder.parent)}"] = path.read_bytes()
    files["claims/index.md"] = site.claims_index(latest).encode()
    files["findings.md"] = site.findings_page(latest).encode()
    files["glossary.md"] = site.glossary_page().encode()
    for path in sorted((docs / "figures").glob("*.png")):  # the README's figures
        files[f"assets/{path.name}"] = path.read_bytes()
    return files


def derivation_pages() -> dict[str, bytes]:
    """A page per sympy derivation of `icl_verify.theory.symbolic` and their index (each
    derivation is run: most of the site's build time)."""
    from icl_verify.theory.symbolic import DERIVATIONS

    files = {}
    files["derivations/index.md"] = (
        "# Derivations\n\nThe sympy derivations behind the closed forms of He et al. (2025), as "
        "`icl-verify derive NAME` prints them, here as mathematics. Each checks its identities "
        "on the way (residual 0 = exact).\n\n"
        + "".join(f"- [{name}]({name}.md): {item.summary}\n" for name, item in DERIVATIONS.items())
    ).encode()
    for name in DERIVATIONS:
        files[f"derivations/{name}.md"] = site.derivation_page(name).encode()
    return files

