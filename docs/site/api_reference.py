"""The site's API reference (`make docs`; docs/site/gen_pages.py writes its pages): a page per
module of `API_MODULES`, every public name of it rendered from its docstring under the path
users type. Documentation tooling, not a layer of the package: it reads every layer, the
facade (`icl_verify.run`, `icl_verify.testing`) included.
"""

from __future__ import annotations

import ast
import functools
import importlib
import inspect
import pkgutil
from types import ModuleType

#: The modules whose public names the API reference documents, as users import them, with
#: their page and title: the package's functions (run, sweep, ...), each layer's flat exports,
#: and what adding a claim of one's own uses.
API_MODULES = (
    ("icl_verify", "index", "Running claims: icl_verify"),
    ("icl_verify.testing", "testing", "Claims in a test suite: icl_verify.testing"),
    ("icl_verify.theory", "theory", "Closed forms: icl_verify.theory"),
    ("icl_verify.dynamics", "dynamics", "Gradient flows: icl_verify.dynamics"),
    ("icl_verify.numerics", "numerics", "Simulation: icl_verify.numerics"),
    ("icl_verify.settings", "settings", "Data models: icl_verify.settings"),
    ("icl_verify.statistics", "statistics", "Statistics: icl_verify.statistics"),
    ("icl_verify.validation.claim", "claim", "A claim of one's own: icl_verify.validation.claim"),
    ("icl_verify.validation.estimates", "estimates",
     "Predictions, measurements, verdicts: icl_verify.validation.estimates"),
    ("icl_verify.validation.rules", "rules", "Agreement rules: icl_verify.validation.rules"),
    ("icl_verify.validation.params", "params", "Claim parameters: icl_verify.validation.params"),
    ("icl_verify.validation.training", "training",
     "Trained claims' parameters: icl_verify.validation.training"),
    ("icl_verify.figures.style", "figures", "Figures: icl_verify.figures.style"),
)


def public_names(module: str) -> list[str]:
    """The public names of ``module`` as users import them: its ``__all__`` where it has one;
    else every name not starting with ``_`` that it defines (not a module, not an import).

    >>> "run" in public_names("icl_verify") and "gd_path" in public_names("icl_verify.numerics")
    True
    """
    mod = importlib.import_module(module)
    if module == "icl_verify":  # the package: its functions and constants, not its modules
        names = [n for n in dir(mod) if not n.startswith("_")]
        return sorted(n for n in names if not isinstance(getattr(mod, n), ModuleType))
    if hasattr(mod, "__all__"):
        return sorted(mod.__all__)
    return sorted(n for n in vars(mod) if not n.startswith("_") and _defined_in(mod, n))


def _defined_in(mod: ModuleType, name: str) -> bool:
    value = getattr(mod, name)
    if isinstance(value, ModuleType):
        return False
    if inspect.isclass(value) or inspect.isfunction(value):
        return value.__module__ == mod.__name__
    return name in _assigned(mod)


@functools.cache  # each module's source parsed once, however many names ask
def _assigned(mod: ModuleType) -> frozenset[str]:
    """The names a module assigns at its top level (its constants), from its source."""
    tree = ast.parse(inspect.getsource(mod))
    names = set()
    for node in tree.body:
        targets = (
            node.targets
            if isinstance(node, ast.Assign)
            else ([node.target] if isinstance(node, ast.AnnAssign) else [])
        )
        for target in targets:
            names |= {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}
    return frozenset(names)


def _defining_module(module: str, name: str) -> str:
    """The module assigning the constant ``module.name``: ``module`` itself, else the package's
    submodule or the `icl_verify` module that assigns it (an exported constant is imported
    from there)."""
    mod = importlib.import_module(module)
    if name in _assigned(mod):
        return module
    root = importlib.import_module("icl_verify")
    candidates = [*(pkgutil.walk_packages(mod.__path__, f"{module}.")
                    if hasattr(mod, "__path__") else ()),
                  *pkgutil.iter_modules(root.__path__, "icl_verify.")]  # fmt: skip
    for info in candidates:
        try:
            sub = importlib.import_module(info.name)
        except ImportError:  # a module needing what this machine lacks: not the definer
            continue
        if name in _assigned(sub) and getattr(sub, name, None) is getattr(mod, name):
            return info.name
    return module


def _kind(value) -> int:
    """The order of a page: functions first, then classes, then constants."""
    return 0 if inspect.isfunction(value) else 1 if inspect.isclass(value) else 2


def _shown(value) -> str:
    """A constant's value in one short line."""
    text = " ".join(repr(value).split())
    return text if len(text) <= 120 else text[:117] + "..."


def api_pages() -> dict[str, bytes]:
    """The API reference: a page per module of `API_MODULES`, each public name (`public_names`;
    functions, then classes, then constants) rendered from its docstring under the path users
    type (``icl_verify.numerics.gd_path``, not where it is defined), with its signature and
    defaults; private bases hidden; a constant as its value and the module defining it.

    >>> sorted(api_pages())[:3]
    ['api/claim.md', 'api/dynamics.md', 'api/figures.md']
    """
    pages = {}
    for module, page, title in API_MODULES:
        mod = importlib.import_module(module)
        summary = " ".join((inspect.getdoc(mod) or "").split("\n\n")[0].split())
        lines = [f"# {title}", "", summary, ""]
        if page == "index":
            lines += [
                "The other pages: "
                + ", ".join(f"[{m}]({p}.md)" for m, p, _ in API_MODULES if p != "index")
                + ".",
                "",
            ]
        for name in sorted(public_names(module), key=lambda n: (_kind(getattr(mod, n)), n)):
            value = getattr(mod, name)
            if not (inspect.isclass(value) or inspect.isfunction(value)):  # a constant
                lines += [
                    f'## {module}.{name} {{ data-toc-label="{name}" }}',
                    "",
                    f"`{_shown(value)}` (defined in `{_defining_module(module, name)}`)",
                    "",
                ]
                continue
            lines += [
                f"::: {value.__module__}.{value.__qualname__}",
                "    options:",
                f'      heading: "{module}.{name}"',
                "      show_root_heading: true",
                "      show_root_toc_entry: true",
                "      heading_level: 2",
                "      show_bases: false",
                "      show_signature: true",
                "      separate_signature: true",
                "      show_signature_annotations: false",
                "      members_order: source",
                '      filters: ["!^_"]',
                "",
            ]  # fmt: skip
        pages[f"api/{page}.md"] = "\n".join(lines).encode()
    return pages
