"""The documentation site's generated pages and the tutorial: every claim has a page, the
committed verdicts cover the registry, derivations render as mathematics, and the tutorial
(a jupytext percent script) runs as a notebook in a Jupyter kernel at the smoke preset, so
none of them can rot."""

import json
import re
from pathlib import Path

import pytest
from icl_verify.validation import site
from icl_verify.validation.registry import all_claims

ROOT = Path(__file__).resolve().parents[1]
SUMMARY = ROOT / "docs" / "verdicts-quick.json"
pytestmark = pytest.mark.heavy  # the gallery: four notebooks, each in a kernel of its own


def test_the_committed_verdicts_cover_every_claim_with_the_figures_of_their_run():
    # regenerate after `icl-verify stability`: site.write_verdict_summary(SET0, SUMMARY, STABILITY)
    stored = json.loads(SUMMARY.read_text())["claims"]
    assert set(stored) == {claim.id for claim in all_claims()}
    named = [ROOT / "docs" / path for entry in stored.values() for path in entry["figures"]]
    assert sorted(named) == sorted((ROOT / "docs" / "verdicts-quick" / "figures").iterdir())


def test_every_claim_has_a_page_with_its_rules_parameters_and_verdict():
    latest = site.Verdicts.from_summary(SUMMARY)
    for claim in all_claims():
        page = site.claim_page(claim, latest, {claim.id: ["figures/x.png"]})
        assert f"\n# {claim.id}\n" in page and "## Rules" in page
        assert "| parameter | type | smoke | quick | paper |" in page
        assert f"**{latest.claims[claim.id]['verdict']}**" in page
        assert "![" in page and ("*Why this rule:*" in page or "*Why these rules:*" in page)
    index = site.claims_index(latest)
    assert all(f"[{claim.id}]({claim.id}.md)" in index for claim in all_claims())


def test_every_verdict_table_links_the_glossary_which_explains_each_column_and_rule_in_use():
    page = site.glossary_page()
    used = {type(check.rule).__name__ for claim in all_claims()
            for check in claim.checks(claim.presets["quick"])}  # fmt: skip
    assert used and all(f"({name}): " in page for name in used)
    for column in ("check", "rule", "score", "verdict", "verdict turns at"):
        assert f"- **{column}**" in page
    latest = site.Verdicts.from_summary(SUMMARY)
    claim = all_claims()[0]
    assert f"]({site.GLOSSARY_LINK})" in site.claim_page(claim, latest, {claim.id: []})


def test_a_paper_size_verdict_shows_under_the_quick_one_with_its_own_figure():
    latest = site.Verdicts.from_summary(SUMMARY)
    claim = all_claims()[0]
    paper = site.Verdicts("paper", "run paper-x", {claim.id: latest.claims[claim.id]})
    page = site.claim_page(claim, latest, {claim.id: ["figures/q.png"]}, (paper,),
                           {claim.id: ["figures/paper/p.png"]})  # fmt: skip
    quick, at_paper = page.index("at the quick preset"), page.index("at the paper preset (run")
    assert quick < page.index("(figures/q.png)") < at_paper < page.index("(figures/paper/p.png)")


def test_a_claims_tables_show_under_its_verdict():
    # Table 1 of HE-5.2-ACT, Table 2 of HE-5.4-MT ...: on the page with the checks they belong to
    latest = site.Verdicts.from_summary(SUMMARY)
    with_tables = [c for c in all_claims() if c.table is not None]
    assert with_tables
    for claim in with_tables:
        tables = latest.claims[claim.id]["tables"]
        assert tables, f"{claim.id}: no table in {SUMMARY.name}; regenerate it"
        page = site.claim_page(claim, latest, {})
        at_quick = page.index("### At the quick preset")
        assert all(page.index(table.rstrip("\n")) > at_quick for table in tables), claim.id


def test_the_findings_page_lists_exactly_the_claims_that_disagree():
    latest = site.Verdicts.from_summary(SUMMARY)
    page = site.findings_page(latest)
    disagree = {i for i, entry in latest.claims.items() if entry["verdict"] == "disagrees"}
    listed = set(__import__("re").findall(r"^## \[([A-Z0-9.\-]+)\]", page, flags=8))
    assert listed == disagree and disagree


def test_a_derivation_page_is_mathematics():
    page = site.derivation_page("manifold")
    assert page.count("$$") >= 2 * 5 and "\\sinh" in page


@pytest.fixture
def gallery(monkeypatch):
    """docs/site/gallery.py, the site's executor of the tutorial and the gallery's examples
    (docs tooling, not the package)."""
    monkeypatch.syspath_prepend(str(ROOT / "docs" / "site"))
    import gallery

    return gallery


def test_the_tutorial_runs_as_a_notebook_at_smoke(tmp_path, gallery):
    # The percent script becomes a notebook (jupytext) and runs in a Jupyter kernel
    # (nbclient), as a reader would run it and as the site's build does; after the tutorial,
    # the reader's own pyplot figure: importing the toolkit left it alone
    notebook = gallery.execute(ROOT / "docs" / "tutorial.py", tmp_path, "smoke",
                               extra=["import matplotlib.pyplot as plt\nplt.plot([1, 2])\n"
                                      "plt.show()"])  # fmt: skip
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    outputs = [out for cell in code for out in cell.outputs]
    assert not [out for out in outputs if out.output_type == "error"]

    def images(cell):
        return sum("image/png" in out.get("data", {}) for out in cell.outputs)

    # what a reader sees: the checks as a table, and every figure cell's figure inline, once
    assert any(out.output_type == "execute_result" for out in outputs)
    figure_cells = [
        cell
        for cell in code
        if "figure()" in cell.source
        or any(line.startswith("show(") for line in cell.source.splitlines())
    ]
    assert figure_cells and all(images(cell) == 1 for cell in figure_cells), [
        (cell.source[:40], images(cell)) for cell in figure_cells
    ]
    assert images(code[-1]) == 1  # plt.plot(); plt.show() still shows
    assert (tmp_path / "two-head-portrait.png").is_file()
    assert list(tmp_path.glob("api-sweep-HE-T4.2i-*/figures/HE-T4.2i-validity-map.png"))
    # and its page on the site shows every figure
    files = gallery.page("tutorial", notebook)
    assert _images(files["gallery/tutorial.md"].decode()) == sorted(
        name.removeprefix("gallery/") for name in files if name.endswith(".png")
    )
    assert len(files) - 1 == sum(images(cell) for cell in code)


def _images(page: str) -> list[str]:
    """The images a page (markdown) shows."""
    return sorted(re.findall(r"!\[[^\]]*\]\(([^)\s]+)\)", page))


@pytest.mark.parametrize("name", sorted(p.stem for p in (ROOT / "docs" / "gallery").glob("*.py")))
def test_each_gallery_example_runs_and_its_page_shows_what_it_printed_and_drew(
    name, tmp_path, gallery
):
    nav = (ROOT / "mkdocs.yml").read_text()
    assert all(f": gallery/{page}.md\n" in nav for page in gallery.scripts())  # on the menu
    notebook = gallery.execute(gallery.scripts()[name], tmp_path, "smoke")
    files = gallery.page(name, notebook)
    page = files[f"gallery/{name}.md"].decode()
    outputs = [out for cell in notebook.cells if cell.cell_type == "code" for out in cell.outputs]
    printed = [out.text.strip() for out in outputs
               if out.output_type == "stream" and out.name == "stdout"]  # fmt: skip
    shown = [out["data"].get("text/markdown") for out in outputs if "data" in out]
    assert printed or any(shown)
    assert all(text in page for text in printed + [s for s in shown if s])
    images = [out for out in outputs if "image/png" in out.get("data", {})]
    assert len(_images(page)) == len(images) == len(files) - 1
    assert "Executed when this site was built, at the smoke preset" in page


def test_every_claim_page_shows_each_of_its_quick_figures_each_a_link_to_full_size(monkeypatch):
    """Each claim's figures (`Claim.figures`: every claim declares at least one) are on its
    page, from the quick run whose verdicts the page gives (docs/verdicts-quick/figures/); a
    paper-size report's figures likewise; on the site each is a link to the PNG at full size
    (docs/site/hooks.py, mkdocs.yml's hooks)."""
    import markdown
    from icl_verify.validation.site_pages import record_pages

    monkeypatch.syspath_prepend(str(ROOT / "docs" / "site"))
    from hooks import linked_images

    files = record_pages(ROOT)
    for claim in all_claims():
        page = files[f"claims/{claim.id}.md"].decode()
        quick = page[page.index("### At the quick preset"):].split("### At the paper's size")[0]
        assert len(_images(quick)) == len(claim.figures), (claim.id, _images(quick))
        assert all(f"claims/{path}" in files for path in _images(page)), claim.id
        html = linked_images(markdown.markdown(page, extensions=["tables"]))
        shown = re.findall(r'<img [^>]*src="([^"]+)"', html)
        linked = re.findall(r'<a href="([^"]+)"[^>]*><img [^>]*src="([^"]+)"', html)
        assert sorted(shown) == _images(page) == sorted(a for a, b in linked if a == b), claim.id
    mkdocs = (ROOT / "mkdocs.yml").read_text()
    assert "- docs/site/hooks.py" in mkdocs and "- assets/extra.css" in mkdocs
    assert "hide: [toc]" in files["claims/HE-P4.1.md"].decode()  # figures at the page's width


def test_a_local_run_changes_no_page_of_the_site(tmp_path):
    """The site shows what was published (the committed quick verdicts and docs/paper/), never
    what lies in a local results/: a checkout holding a quick run of HE-P4.1 at d = 10 (as a
    reader's `icl-verify run HE-P4.1 --preset quick --set d=10` leaves) builds the same files."""
    import shutil

    from icl_verify.validation import api
    from icl_verify.validation.site_pages import record_pages

    checkout = tmp_path / "checkout"
    (checkout / "docs").mkdir(parents=True)
    for name in ("verdicts-quick.json", "verdicts-quick", "paper", "figures"):
        (checkout / "docs" / name).symlink_to(ROOT / "docs" / name)
    clean = record_pages(checkout)
    run = api.run_many(["HE-P4.1"], "smoke", tables={"HE-P4.1": {"d": 10}},
                       out=checkout / "results", run_id="quick-20990101-000000")  # fmt: skip
    assert (run.run_dir / "results.json").is_file()
    shutil.copytree(run.run_dir / "figures", checkout / "results" / "figures")
    assert record_pages(checkout) == clean



def test_every_public_name_of_every_layer_has_a_reference_entry_where_users_import_it(
    monkeypatch,
):
    """The API reference (docs/site/api_reference.py) renders each exported name under the
    path users type; a name exported and left out of it fails here, as does a page missing
    from the site's navigation (mkdocs.yml)."""
    monkeypatch.syspath_prepend(str(ROOT / "docs" / "site"))  # docs tooling, not the package
    from api_reference import API_MODULES, api_pages

    import icl_verify
    from icl_verify import dynamics, numerics, theory

    text = b"".join(api_pages().values()).decode()
    exported = {f"icl_verify.{n}" for n in icl_verify._API} | {
        f"{layer.__name__}.{n}" for layer in (theory, dynamics, numerics) for n in layer.__all__
    }
    lines = [line.strip() for line in text.splitlines()]
    documented = {line.split('"')[1] for line in lines if line.startswith('heading: "')} | {
        line[3:].split(" {")[0] for line in lines if line.startswith("## ")
    }
    missing = sorted(exported - documented)
    assert missing == []
    nav = (ROOT / "mkdocs.yml").read_text()
    assert all(f"- api/{page}.md" in nav for _, page, _ in API_MODULES)


def test_the_link_check_finds_a_link_or_image_to_a_missing_file(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT / "docs"))  # docs/check_site.py (make docs-check)
    from check_site import broken_links

    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "index.html").write_text("<p>b</p>")
    (tmp_path / "index.html").write_text(
        '<a href="b/">b</a> <a href="#top">top</a> <a href="https://example.org/x">x</a> '
        '<a href="c/">c</a> <img src="b/index.html"> <img src="missing.png">'
    )
    assert broken_links(tmp_path) == ["index.html: c/", "index.html: missing.png"]
