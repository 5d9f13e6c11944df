"""icl-verify: the theory of attention for in-context regression, checked against simulation.

The import package of the distribution. Its subpackages live in the repository's
top-level folders (pyproject.toml maps ``icl_verify.theory`` to ``theory/`` and so on),
so installed there is one top-level module, ``icl_verify``, and no generic names:

- `icl_verify.theory`: exact and symbolic mathematics (sympy, float64 numpy); no torch.
- `icl_verify.dynamics`: gradient-flow ODEs and minimisers of theory's losses (scipy).
- `icl_verify.numerics`: torch models, trainer, estimators, Monte Carlo; CPU or GPU.
- `icl_verify.validation`: the claims, the `icl-verify` command line, records, reports.
- `icl_verify.figures`: matplotlib figures drawn from stored numbers.

Imports point one way (DESIGN.md, "Layers"): numerics uses neither theory nor
dynamics, figures uses neither validation nor numerics, and nothing below
validation imports it.

Claims run from Python too: ``icl_verify.run("HE-P4.1", preset="quick", d=10)``,
``icl_verify.run_many(["HE-MAN", "HE-P4.1"])`` and ``icl_verify.sweep("HE-S2", {"d": [3, 5]})``
(`icl_verify.validation.api`, which ``icl-verify run`` calls too; loaded on first use, so
``import icl_verify`` stays light); ``icl_verify.testing.assert_claim`` for a
test suite.

>>> import icl_verify
>>> icl_verify.SUBPACKAGES
('theory', 'dynamics', 'numerics', 'validation', 'figures')
"""

from importlib import metadata as _metadata

from icl_verify.limits import MAX_PROMPT_LENGTH as MAX_PROMPT_LENGTH  # the longest prompt

#: The subpackages, lowest layer first.
SUBPACKAGES = ("theory", "dynamics", "numerics", "validation", "figures")

try:
    __version__ = _metadata.version("icl-verify")
except _metadata.PackageNotFoundError:  # imported from a source tree that is not installed
    __version__ = "0+unknown"

_API = ("run", "run_many", "sweep", "ClaimResult", "RunResult", "SweepResult")


def __getattr__(name: str):
    """`run`, `sweep` and their results from `icl_verify.validation.api`, imported on first use."""
    if name in _API:
        # imported by name, not by an import statement: the cache's code digest of every
        # producer reads this module's imports, and the facade computes no number
        # (`validation.cache.code_digest`)
        import importlib

        return getattr(importlib.import_module("icl_verify.validation.api"), name)
    raise AttributeError(f"module 'icl_verify' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *_API])
