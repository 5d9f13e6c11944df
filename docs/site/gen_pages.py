"""Write the generated files of the site at build time (mkdocs-gen-files): what
`icl_verify.validation.site_pages.site_pages` makes from the published records (the committed
quick verdicts and docs/paper/, never a local results/), the API reference
(`api_reference.api_pages`), the gallery executed (`gallery.gallery_pages`) and KaTeX's
files."""

import sys
from pathlib import Path

import mkdocs_gen_files
from icl_verify.validation.site_pages import site_pages

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(Path(__file__).resolve().parent))  # api_reference.py beside this file
from api_reference import api_pages  # noqa: E402
from gallery import gallery_pages  # noqa: E402

for name, content in (site_pages(ROOT) | api_pages() | gallery_pages()).items():
    with mkdocs_gen_files.open(name, "wb") as out:
        out.write(content)

# static assets: KaTeX from npm (`make docs` installs it)
katex = ROOT / "build" / "katex" / "node_modules" / "katex" / "dist"
for path in sorted(katex.rglob("*")):
    if path.is_file() and path.suffix in (".js", ".css", ".woff2"):
        with mkdocs_gen_files.open(f"assets/katex/{path.relative_to(katex)}", "wb") as out:
            out.write(path.read_bytes())
