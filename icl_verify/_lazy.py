"""Lazy package namespaces (the pattern of Scientific Python SPEC 1).

`numerics` (torch) and `figures` (matplotlib) are heavy to import. Their packages
export names flat, but import the submodule that defines a name only when the name
is first used, so `icl-verify list` and a claim module's declarations load neither
torch nor matplotlib. Submodules are reachable as attributes too
(`icl_verify.numerics.montecarlo`).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping


def attach(
    package: str, exports: Mapping[str, tuple[str, ...]]
) -> tuple[Callable[[str], object], Callable[[], list[str]], list[str]]:
    """`(__getattr__, __dir__, __all__)` for `package`, exporting submodule -> names lazily.

    Args:
        package: the package's `__name__`.
        exports: submodule name -> the names it exports at package level (may be empty).

    >>> getattr_, dir_, all_ = attach("json", {"decoder": ("JSONDecodeError",)})
    >>> getattr_("JSONDecodeError").__name__, all_
    ('JSONDecodeError', ['JSONDecodeError'])
    """
    owner = {name: module for module, names in exports.items() for name in names}

    def __getattr__(name: str) -> object:
        if name in exports:
            return importlib.import_module(f"{package}.{name}")
        if name in owner:
            return getattr(importlib.import_module(f"{package}.{owner[name]}"), name)
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def __dir__() -> list[str]:
        return sorted([*exports, *owner])

    return __getattr__, __dir__, sorted(owner)
