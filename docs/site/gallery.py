"""The site's gallery (`make docs`; docs/site/gen_pages.py writes its pages): the tutorial
(docs/tutorial.py) and the short examples of docs/gallery/, jupytext percent scripts, each
executed in a Jupyter kernel (nbclient) at the smoke preset when the site is built, as a reader
would run it as a notebook, and shown as a page with its printed output and figures.

tests/test_docs.py executes them with the same `execute`. An executed notebook is kept in
build/gallery/, keyed by the script, the preset and the package's code (`cache_key`), so a
rebuild that changed none of them does not run it again.
"""

from __future__ import annotations

import base64
import hashlib
import os
import tempfile
from pathlib import Path

import jupytext
import nbformat
from icl_verify.validation.site import PAGE_WIDE
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[2]
#: The preset the gallery runs at: the smallest, so the site builds in a minute.
PRESET = "smoke"
#: The package's folders whose code the executed outputs depend on (pyproject's package-dir).
CODE = ("icl_verify", "theory", "dynamics", "numerics", "validation", "figures")


def scripts(root: Path = ROOT) -> dict[str, Path]:
    """The gallery's scripts by page name: the tutorial first, then docs/gallery/*.py.

    >>> list(scripts())[0]
    'tutorial'
    """
    examples = sorted((root / "docs" / "gallery").glob("*.py"))
    return {"tutorial": root / "docs" / "tutorial.py"} | {p.stem: p for p in examples}


def execute(script: Path, out: Path, preset: str = PRESET, extra=()) -> nbformat.NotebookNode:
    """``script`` (a jupytext percent script) as a notebook executed in a fresh Jupyter kernel
    at ``preset``, with its runs written under ``out``; ``extra``: code cells appended after
    the script's own. The kernel sees the scripts' two settings as environment variables
    (TUTORIAL_PRESET, TUTORIAL_OUT) and no MPLBACKEND, as a reader's kernel; a cell that
    raises fails here (nbclient's CellExecutionError)."""
    notebook = jupytext.read(script)
    notebook.cells += [nbformat.v4.new_code_cell(source) for source in extra]
    env = {k: v for k, v in os.environ.items() if k != "MPLBACKEND"}
    env |= {"TUTORIAL_PRESET": preset, "TUTORIAL_OUT": str(out)}
    client = NotebookClient(notebook, timeout=600, kernel_name="python3",
                            resources={"metadata": {"path": str(out)}})  # fmt: skip
    client.execute(env=env)
    return notebook


def cache_key(script: Path, preset: str = PRESET, root: Path = ROOT) -> str:
    """SHA-256 of the script, the preset, the package version and every Python file of the
    package's code (`CODE`): what an executed notebook's outputs depend on."""
    import icl_verify

    digest = hashlib.sha256(f"{preset}\n{icl_verify.__version__}\n".encode())
    for path in [script, *(p for name in CODE for p in sorted((root / name).rglob("*.py")))]:
        digest.update(f"{path.relative_to(root)}\n".encode() + path.read_bytes())
    return digest.hexdigest()


def executed(script: Path, cache: Path = ROOT / "build" / "gallery") -> nbformat.NotebookNode:
    """``script`` executed at `PRESET` (`execute`), read from ``cache`` when it holds the
    notebook of the same `cache_key`."""
    path = cache / f"{script.stem}-{cache_key(script)[:16]}.ipynb"
    if path.is_file():
        return nbformat.read(path, as_version=4)
    with tempfile.TemporaryDirectory(prefix="icl-verify-gallery-") as out:
        notebook = execute(script, Path(out))
    cache.mkdir(parents=True, exist_ok=True)
    for stale in cache.glob(f"{script.stem}-*.ipynb"):
        stale.unlink()
    nbformat.write(notebook, path)
    return notebook


def page(name: str, notebook: nbformat.NotebookNode, preset: str = PRESET) -> dict[str, bytes]:
    """An executed notebook as the files of its page, ``gallery/<name>.md`` and its figures
    (``gallery/<name>-<k>.png``): markdown cells as text,
    code cells as Python blocks each followed by its outputs (printed text as a text block, a
    figure as an image, a result as the markdown or text it shows itself as; what went to
    stderr, warnings and progress bars, left out)."""
    files: dict[str, bytes] = {}
    lines: list[str] = list(PAGE_WIDE)
    for k, cell in enumerate(notebook.cells):
        if cell.cell_type == "markdown":
            lines += [cell.source, ""]
            if k == 0:  # below the title: how the page was made
                lines += [f"!!! note \"Executed when this site was built, at the {preset} "
                          "preset\"", "    The output below is this page's own run at the "
                          "smallest preset (seconds of simulation, so a verdict may differ "
                          "from the published one on the claim's page); run the script "
                          "yourself at `quick` or `paper` for the real thing.", ""]  # fmt: skip
            continue
        if cell.cell_type != "code" or not cell.source.strip():
            continue
        lines += ["```python", cell.source.strip(), "```", ""]
        for output in cell.outputs:
            lines += [*_output(output, name, files), ""]
    files[f"gallery/{name}.md"] = "\n".join(lines).encode()
    return files


def _output(output, name: str, files: dict[str, bytes]) -> list[str]:
    """One output of a code cell as lines of the page; a figure is added to ``files``."""
    if output.output_type == "stream":  # printed text; stderr's warnings and progress bars not
        return _printed(output.text) if output.name == "stdout" else []
    data = output.get("data", {})
    if "image/png" in data:
        image = f"{name}-{sum(p.endswith('.png') for p in files) + 1}.png"
        files[f"gallery/{image}"] = base64.b64decode(data["image/png"])
        return [f"![a figure of {name}]({image})"]
    if "text/markdown" in data:
        return [data["text/markdown"]]
    return _printed(data.get("text/plain", ""))


def _printed(text: str) -> list[str]:
    """Text a cell printed or showed, as a block set apart from code (assets/extra.css)."""
    return ["```{.text .output}", text.rstrip("\n"), "```"]


def gallery_pages(root: Path = ROOT) -> dict[str, bytes]:
    """Every page of the gallery (`page` of each executed script) and its index."""
    files: dict[str, bytes] = {}
    index = ["# Gallery", "",
             "What a run produces, as a notebook shows it: the tutorial and three short "
             f"examples, each executed when this site was built (at the {PRESET} preset), with "
             "its output and figures. Each is a jupytext script in the repository "
             "(`docs/tutorial.py`, `docs/gallery/`): open it as a notebook with "
             "`jupytext --to notebook`, or run it with `python`.", ""]  # fmt: skip
    for name, script in scripts(root).items():
        notebook = executed(script)
        files |= page(name, notebook)
        title = next(c.source for c in notebook.cells if c.cell_type == "markdown")
        index.append(f"- [{title.splitlines()[0].lstrip('# ')}]({name}.md)")
    files["gallery/index.md"] = ("\n".join(index) + "\n").encode()
    return files
