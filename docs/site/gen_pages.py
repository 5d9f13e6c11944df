"""Write the generated pages of the site at build time (mkdocs-gen-files): a page per claim,
the claims' index, the findings and a page per derivation (`icl_verify.validation.site`).

Verdicts: the newest quick run under ``results/`` when there is one (its figures copied into
the site), else the committed summary ``docs/verdicts-quick.json``.
"""

from pathlib import Path

import mkdocs_gen_files
from icl_verify.theory.symbolic import DERIVATIONS
from icl_verify.validation import published, site
from icl_verify.validation.registry import all_claims

ROOT = Path(__file__).resolve().parents[2]

runs = sorted((ROOT / "results").glob("quick-*/results.json"), key=lambda p: p.stat().st_mtime)
latest = site.Verdicts.from_summary(ROOT / "docs" / "verdicts-quick.json")
if runs:  # a local run's verdicts and figures, the committed ones for claims it did not run
    latest = site.Verdicts.from_run(runs[-1].parent).completed(latest)

# the paper-size reports (`icl-verify publish`: docs/paper/<name>/); a claim's page shows the
# newest that finished it, as the index docs/paper/README.md does
publications = published.publications(ROOT / "docs" / "paper")
reports = {name: site.Verdicts.from_record(pub.record, pub.folder)
           for name, pub in publications.items()}  # fmt: skip

figures = {}
for claim in all_claims():
    entry = latest.claims.get(claim.id, {})
    paths = [Path(p) for p in entry.get("figures", []) if Path(p).is_file()]
    paths = paths or sorted((ROOT / "docs" / "figures").glob(f"{claim.id}.png"))
    for path in paths:
        with mkdocs_gen_files.open(f"claims/figures/{path.name}", "wb") as out:
            out.write(path.read_bytes())
    figures[claim.id] = [f"figures/{path.name}" for path in paths]
    pub = published.newest(claim.id, publications)
    paper = (reports[pub.name],) if pub else ()
    paper_figures = {}  # the paper-size report's figures (docs/paper/<name>/figures/)
    for report in paper:
        for path in map(Path, report.claims[claim.id]["figures"]):
            with mkdocs_gen_files.open(f"claims/figures/paper/{path.name}", "wb") as out:
                out.write(path.read_bytes())
            paper_figures.setdefault(claim.id, []).append(f"figures/paper/{path.name}")
    with mkdocs_gen_files.open(f"claims/{claim.id}.md", "w") as page:
        page.write(site.claim_page(claim, latest, figures, paper, paper_figures))

# every claim at the papers' size: the index of docs/paper/ with the reports and figures
with mkdocs_gen_files.open("paper/index.md", "w") as page:
    page.write(published.paper_index(
        site.Verdicts.from_summary(ROOT / "docs" / "verdicts-quick.json"), publications,
        findings="../findings-explained.md", notes=False,
        claim_link="../claims/{id}.md"))  # fmt: skip
for pub in publications.values():
    for path in [pub.folder / "report.md", *sorted((pub.folder / "figures").glob("*.png"))]:
        with mkdocs_gen_files.open(f"paper/{path.relative_to(pub.folder.parent)}", "wb") as out:
            out.write(path.read_bytes())

with mkdocs_gen_files.open("claims/index.md", "w") as page:
    page.write(site.claims_index(latest))
with mkdocs_gen_files.open("findings.md", "w") as page:
    page.write(site.findings_page(latest))
with mkdocs_gen_files.open("derivations/index.md", "w") as page:
    page.write("# Derivations\n\nThe sympy derivations behind the closed forms of He et al. "
               "(2025), as `icl-verify derive NAME` prints them, here as mathematics. Each "
               "checks its identities on the way (residual 0 = exact).\n\n")
    page.write("\n".join(f"- [{name}]({name}.md): {entry.summary}"
                         for name, entry in DERIVATIONS.items()) + "\n")
for name in DERIVATIONS:
    with mkdocs_gen_files.open(f"derivations/{name}.md", "w") as page:
        page.write(site.derivation_page(name))

# the tutorial (a jupytext percent script) as a page: markdown cells as text, code as code
with mkdocs_gen_files.open("tutorial.md", "w") as page:
    page.write(site.percent_script_page((ROOT / "docs" / "tutorial.py").read_text()))

# static assets: the README's figures, and KaTeX from npm (`make docs` installs it)
for path in sorted((ROOT / "docs" / "figures").glob("*.png")):
    with mkdocs_gen_files.open(f"assets/{path.name}", "wb") as out:
        out.write(path.read_bytes())
katex = ROOT / "build" / "katex" / "node_modules" / "katex" / "dist"
for path in sorted(katex.rglob("*")):
    if path.is_file() and path.suffix in (".js", ".css", ".woff2"):
        with mkdocs_gen_files.open(f"assets/katex/{path.relative_to(katex)}", "wb") as out:
            out.write(path.read_bytes())
