"""Every module's doctests, imported under its installed name (`icl_verify.<layer>...`).

The examples in the docstrings are part of the documentation; each module is one test.
"""

import doctest
import importlib
import pkgutil

import pytest

import icl_verify


def _module_names() -> list[str]:
    names = ["icl_verify"]
    names += [f"icl_verify.{m.name}" for m in pkgutil.iter_modules(icl_verify.__path__)]
    for layer in icl_verify.SUBPACKAGES:
        package = importlib.import_module(f"icl_verify.{layer}")
        names.append(package.__name__)
        names += [m.name for m in pkgutil.walk_packages(package.__path__, f"{package.__name__}.")]
    return sorted(names)


@pytest.mark.parametrize("name", _module_names())
def test_doctests(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0, f"{result.failed} of {result.attempted} doctest examples failed"
