"""Lay out the import package as installed (icl_verify/ with its subpackages inside), as links
under build/docs-package, for mkdocstrings to read the API from (mkdocs.yml: paths): the
repository keeps the subpackages in top-level folders (pyproject's package-dir). `make docs`
runs it before mkdocs, whose API reader looks at its search paths once, when it starts.
"""

from pathlib import Path

import icl_verify

ROOT = Path(__file__).resolve().parents[2]
package = ROOT / "build" / "docs-package" / "icl_verify"
package.mkdir(parents=True, exist_ok=True)
for source in [*(ROOT / "icl_verify").iterdir(), *(ROOT / name for name in icl_verify.SUBPACKAGES)]:
    link = package / source.name
    if source.name != "__pycache__" and not link.is_symlink():
        link.symlink_to(source)
