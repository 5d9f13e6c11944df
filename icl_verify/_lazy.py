"""Lazy package namespaces from a stub (the pattern of Scientific Python SPEC 1).

`numerics` (torch) is heavy to import. Its public names are written out once, explicitly, in
its ``__init__.pyi`` (``from ._core.data import Prompts as Prompts``, diffrax's style), which
IDEs and type checkers read; `attach_stub` reads the same stub at import and loads the private
module that defines a name only when the name is first used, so `icl-verify list` and a claim
module's declarations do not load torch. Our own twenty lines rather than `lazy_loader`'s
`attach_stub`: the same idea, without a dependency, and a stub line that is not ``X as X``
(a second name, or a private module reached by its path) is refused instead of exported.
"""

from __future__ import annotations

import ast
import importlib
from collections.abc import Callable
from pathlib import Path


def attach_stub(
    package: str, init_file: str
) -> tuple[Callable[[str], object], Callable[[], list[str]], list[str]]:
    """`(__getattr__, __dir__, __all__)` of ``package``, from the ``from .mod import X as X``
    lines of the stub beside its ``__init__.py`` (``init_file``).

    >>> import icl_verify.numerics as numerics
    >>> getattr_, dir_, all_ = attach_stub(numerics.__name__, numerics.__file__)
    >>> getattr_("single_thread").__module__, "Prompts" in all_
    ('icl_verify.numerics._core.threads', True)
    """
    stub = Path(init_file).with_suffix(".pyi")
    owner = {}
    for node in ast.parse(stub.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.ImportFrom):
            for alias in node.names:
                if node.level != 1 or alias.asname != alias.name:
                    wanted = f"from .module import {alias.name} as {alias.name}"
                    raise ValueError(f"{stub}: line {node.lineno} must read '{wanted}'")
                owner[alias.name] = node.module

    def __getattr__(name: str) -> object:
        if name in owner:
            return getattr(importlib.import_module(f".{owner[name]}", package), name)
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def __dir__() -> list[str]:
        return sorted(owner)

    return __getattr__, __dir__, sorted(owner)
