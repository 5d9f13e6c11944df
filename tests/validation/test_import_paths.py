"""Each function and class of `icl_verify.validation` has one import path: every import from a
validation module, anywhere in the repository, names one that module defines, not one it
imported itself (a name reachable two ways is one a reader and a tool must chase)."""

import ast
import importlib
import inspect
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FOLDERS = ("validation", "figures", "tests", "benchmarks", "docs")


def test_every_import_from_a_validation_module_names_what_that_module_defines():
    found, elsewhere = 0, []
    for path in sorted(p for folder in FOLDERS for p in (ROOT / folder).rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if not (isinstance(node, ast.ImportFrom)
                    and (node.module or "").startswith("icl_verify.validation.")):  # fmt: skip
                continue
            module = importlib.import_module(node.module)
            if hasattr(module, "__path__"):  # a package's own names (a paper's PAPER)
                continue
            for alias in node.names:
                value = getattr(module, alias.name)
                if inspect.isclass(value) or inspect.isfunction(value):
                    found += 1
                    if value.__module__ != node.module:
                        where = f"{path.relative_to(ROOT)}: {alias.name} from {node.module}"
                        elsewhere.append(f"{where}, defined in {value.__module__}")
    assert found > 500  # the claims' imports among them
    assert elsewhere == []
