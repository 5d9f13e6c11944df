"""`icl_verify.numerics` exports its public names once, explicitly, in ``numerics/__init__.pyi``
(read by IDEs, type checkers and, at import, `icl_verify._lazy.attach_stub`): the stub is each
private module's ``__all__``, no more and no less; every name resolves to the object its module
defines; and code outside numerics reaches numerics only through those names (tests and
benchmarks may import a private helper from its private module)."""

import ast
import importlib
import pkgutil
import re
from pathlib import Path

import icl_verify.numerics as numerics

import icl_verify

ROOT = Path(__file__).resolve().parents[1]
STUB = Path(numerics.__file__).with_suffix(".pyi")
LAYERS = icl_verify.SUBPACKAGES


def _stub() -> dict[str, str]:
    """name -> the module (relative to the package) the stub imports it from."""
    tree = ast.parse(STUB.read_text())
    return {a.name: n.module for n in tree.body if isinstance(n, ast.ImportFrom) for a in n.names}


def _modules() -> list[str]:
    """Every module of numerics (relative names, e.g. ``_core.data``), packages left out."""
    return [info.name.removeprefix("icl_verify.numerics.")
            for info in pkgutil.walk_packages(numerics.__path__, "icl_verify.numerics.")
            if not info.ispkg]  # fmt: skip


def test_the_stub_is_each_modules_all_and_only_that():
    stub, expected = _stub(), {}
    for name in _modules():
        module = importlib.import_module(f"icl_verify.numerics.{name}")
        for public in getattr(module, "__all__", []):
            assert public not in expected, f"{public}: in the __all__ of {expected[public]}, {name}"
            expected[public] = name
    missing = sorted(set(expected) - set(stub))
    assert missing == [], "add to numerics/__init__.pyi: " + "; ".join(
        f"from .{expected[n]} import {n} as {n}" for n in missing)  # fmt: skip
    assert stub == expected
    assert sorted(stub) == numerics.__all__ == dir(numerics)


def test_every_public_name_resolves_to_what_its_module_defines():
    for name, module in _stub().items():
        defining = importlib.import_module(f"icl_verify.numerics.{module}")
        assert getattr(numerics, name) is getattr(defining, name), name


def test_every_numerics_module_is_private_and_holds_public_names_or_none():
    # a module with no __all__ is a private helper of its part (the trainer's parts)
    for name in _modules():
        assert name.startswith("_"), name  # in a private part
        module = importlib.import_module(f"icl_verify.numerics.{name}")
        assert hasattr(module, "__all__") or "._training." in f".{name}", name


def test_the_package_docstring_describes_every_module_with_public_names():
    missing = [name for name in _modules() if "._training." not in f".{name}"
               and f"`{name.rsplit('.', 1)[-1]}`" not in numerics.__doc__]  # fmt: skip
    assert missing == []


def _outside_numerics() -> list[Path]:
    folders = ("validation", "figures", "theory", "dynamics", "icl_verify", "tests", "benchmarks",
               "docs")  # fmt: skip
    return [p for folder in folders for p in (ROOT / folder).rglob("*.py")]


def test_code_outside_numerics_uses_only_exported_names():
    """``from icl_verify.numerics import X`` and ``numerics.X`` (after ``from icl_verify import
    numerics``) name exported names; private modules are imported only by tests and
    benchmarks."""
    exported, wrong = set(numerics.__all__), []
    for path in _outside_numerics():
        rel = path.relative_to(ROOT).as_posix()
        tree = ast.parse(path.read_text())
        aliases = {"numerics"} if "from icl_verify import" in path.read_text() else set()
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module == "icl_verify.numerics":
                wrong += [f"{rel}: {a.name}" for a in node.names if a.name not in exported]
            elif isinstance(node, ast.ImportFrom | ast.Import):
                names = [node.module or ""] if isinstance(node, ast.ImportFrom) else [
                    a.name for a in node.names]  # fmt: skip
                private = [n for n in names if n.startswith("icl_verify.numerics.")]
                if private and not rel.startswith(("tests/", "benchmarks/")):
                    wrong += [f"{rel}: imports {private}"]
            elif (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                    and node.value.id in aliases and not node.attr.startswith("_")):  # fmt: skip
                if node.attr not in exported:
                    wrong.append(f"{rel}: numerics.{node.attr}")
    assert wrong == []


def test_the_user_docs_name_numerics_by_its_public_names():
    private = re.compile(r"numerics\._\w")
    pages = [ROOT / "README.md", *(ROOT / "docs" / "site").rglob("*.md")]
    assert [p.name for p in pages if private.search(p.read_text())] == []


# `theory` (no torch: eager) the same way: private modules, re-exported as `X as X` in
# theory/__init__.py; `theory.symbolic` is a public subpackage of its own. A name defined below
# every layer, in a shared module of the root package (`Setting`, in `icl_verify.settings`, which
# numerics takes too), is re-exported from there.


def test_theory_exports_each_name_once_from_its_private_module():
    from icl_verify import theory

    path = Path(theory.__file__)
    assert [p.name for p in path.parent.glob("*.py") if not p.name.startswith("_")] == []
    imports = [n for n in ast.parse(path.read_text()).body if isinstance(n, ast.ImportFrom)]
    for node in imports:
        shared = node.module.count(".") == 1 and node.module.split(".")[1] not in LAYERS
        assert node.module.startswith("icl_verify.theory._") or shared, node.module
        assert all(a.asname == a.name for a in node.names), node.module
    names = [a.name for n in imports for a in n.names]
    assert sorted(names) == theory.__all__ == sorted(set(names))


def test_code_outside_theory_imports_no_private_theory_module():
    wrong = []
    for path in _outside_numerics() + list((ROOT / "numerics").rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel.startswith(("tests/", "benchmarks/", "theory/")):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            wrong += [f"{rel}: {n}" for n in names if n.startswith("icl_verify.theory._")]
    assert wrong == []
