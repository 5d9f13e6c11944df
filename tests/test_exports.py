"""The lazy export table of `icl_verify.numerics` is each submodule's ``__all__``, no more and no
less, and every submodule with public names is in it: adding a name or a module never needs a
second list kept by hand in step."""

import ast
import importlib
import pkgutil
from pathlib import Path

import icl_verify.numerics as numerics


def _table() -> dict[str, set[str]]:
    """The module -> names dict given to `attach` in numerics/__init__.py, read from its source."""
    tree = ast.parse(Path(numerics.__file__).read_text())
    call = next(
        n
        for n in ast.walk(tree)
        if isinstance(n, ast.Call) and getattr(n.func, "id", "") == "attach"
    )
    table = call.args[1]
    return {
        k.value: {e.value for e in v.elts} for k, v in zip(table.keys, table.values, strict=True)
    }


def test_every_numerics_module_exports_its_all_and_only_that():
    table = _table()
    modules = [
        m.name for m in pkgutil.iter_modules(numerics.__path__) if not m.name.startswith("_")
    ]
    for name in modules:
        module = importlib.import_module(f"icl_verify.numerics.{name}")
        assert hasattr(module, "__all__"), f"numerics.{name} has no __all__"
        assert table.get(name) == set(module.__all__), name
    assert set(table) == set(modules)


def test_the_package_docstring_describes_every_numerics_module():
    modules = [
        m.name for m in pkgutil.iter_modules(numerics.__path__) if not m.name.startswith("_")
    ]
    missing = [name for name in modules if f"`{name}`" not in numerics.__doc__]
    assert missing == []
