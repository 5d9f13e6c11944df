"""The registry of claims: every `CLAIMS` tuple of the modules under `validation.claims`, and of
the modules other installed packages name in the entry-point group ``icl_verify.claims``.

Modules are discovered, subpackages included (one subpackage per paper, one module
per claim family; see `validation.claims`), so adding a claim never edits this file.
Modules and packages whose name starts with "_" are helpers and are not scanned.
A researcher's own claims live in their own package, which declares, in its pyproject.toml,

    [project.entry-points."icl_verify.claims"]
    my_claims = "my_package.claims"     # a module with a CLAIMS tuple

and once it is installed `icl-verify list/run/sweep` and `icl_verify.run` find them (after
this package's claims, by id). An entry point that fails to load is left out with a warning
naming it.
Claims are listed in the reference catalogue's order, which they carry: the papers by their
subpackage's ``PAPER_ORDER``, then each claim's ``Claim.catalogue`` (section, item); claims
without a place follow, by id.
"""

from __future__ import annotations

import difflib
import importlib
import math
import pkgutil
import warnings
from importlib import metadata

from icl_verify.validation.claim import Claim


def paper_of(claim: Claim) -> str:
    """The key of the paper subpackage that declares ``claim`` (``"he2025"``), read from the
    module of its ``measure``; "" for a claim declared elsewhere.

    >>> paper_of(select_claims(["HE-MAN"])[0])
    'he2025'
    """
    parts = claim.measure.__module__.split(".")
    prefix = ["icl_verify", "validation", "claims"]
    return parts[3] if parts[:3] == prefix and len(parts) > 4 else ""


def paper_package(paper: str):
    """The subpackage of the paper key ``paper`` (`paper_of`), which declares what the paper's
    claims share (``PAPER``, ``PAPER_ORDER``, ``OMITTED_FIGURES``, ``OPEN_ITEMS``); None for "".

    >>> paper_package("chen2024").PAPER
    'Chen et al. 2024'
    """
    return importlib.import_module(f"icl_verify.validation.claims.{paper}") if paper else None


def _order(claim: Claim) -> tuple:
    rank = getattr(paper_package(paper_of(claim)), "PAPER_ORDER", math.inf)
    return (rank, claim.catalogue or (math.inf, math.inf), claim.id)


def all_claims() -> tuple[Claim, ...]:
    """Every registered claim, in catalogue order; duplicate ids or places raise ValueError.

    >>> ids = [c.id for c in all_claims()]
    >>> ids.index("HE-MAN") < ids.index("HE-T4.2ii")  # §3 before §4
    True
    """
    import icl_verify.validation.claims as package

    modules = [
        importlib.import_module(info.name)
        for info in pkgutil.walk_packages(package.__path__, f"{package.__name__}.")
        if not any(part.startswith("_") for part in info.name.split("."))
    ]
    claims: dict[str, Claim] = {}
    for module in modules + plugin_modules():
        for claim in getattr(module, "CLAIMS", ()):
            if claim.id in claims:
                raise ValueError(f"claim id {claim.id!r} is registered twice")
            claims[claim.id] = claim
    places = [(paper_of(c), c.catalogue) for c in claims.values() if c.catalogue is not None]
    if len(set(places)) != len(places):
        twice = sorted({p for p in places if places.count(p) > 1})
        raise ValueError(f"catalogue places must be unique within a paper, got twice: {twice}")
    return tuple(sorted(claims.values(), key=_order))


ENTRY_POINT_GROUP = "icl_verify.claims"


def plugin_modules() -> list:
    """The modules that installed packages register in the entry-point group
    ``icl_verify.claims`` (module docstring); one that fails to import is left out with a
    warning naming it."""
    modules = []
    for entry in metadata.entry_points(group=ENTRY_POINT_GROUP):
        try:
            modules.append(entry.load())
        except Exception as error:  # a broken plugin must not take the toolkit down
            warnings.warn(
                f"claims entry point {entry.name!r} ({entry.value}) failed to load: "
                f"{type(error).__name__}: {error}",
                stacklevel=2,
            )
    return modules


def select_claims(ids: list[str] | tuple[str, ...] = ()) -> tuple[Claim, ...]:
    """The claims with the given ids (all when empty), in registry order; unknown ids raise.

    >>> [c.id for c in select_claims(["HE-T4.2ii"])]
    ['HE-T4.2ii']
    >>> select_claims(["HE-NOPE"])
    Traceback (most recent call last):
    ...
    ValueError: unknown claim id 'HE-NOPE' (see `icl-verify list`)
    >>> select_claims(["HE-OBS9"])
    Traceback (most recent call last):
    ...
    ValueError: unknown claim id 'HE-OBS9'; did you mean HE-OBS4, HE-OBS3, HE-OBS2?
    """
    claims = all_claims()
    known = {claim.id for claim in claims}
    for claim_id in ids:
        if claim_id not in known:
            close = difflib.get_close_matches(str(claim_id), sorted(known), n=3, cutoff=0.75)
            hint = f"; did you mean {', '.join(close)}?" if close else " (see `icl-verify list`)"
            raise ValueError(f"unknown claim id {claim_id!r}{hint}")
    wanted = set(ids)
    return tuple(claim for claim in claims if not wanted or claim.id in wanted)


def trained_claims(paper: str = "") -> tuple[Claim, ...]:
    """The claims whose measurement trains models (`Params.TRAINS_MODELS`), in registry order;
    with ``paper``, those of the papers whose key starts with it.

    >>> [c.id for c in trained_claims("Chen")]  # doctest: +NORMALIZE_WHITESPACE
    ['CZZ-IMPORTANCE', 'CZZ-HEADS', 'CZZ-PRUNE', 'CZZ-PPROBE', 'CZZ-G-DECODER', 'CZZ-G-DENSE',
     'CZZ-G-CORRELATED']
    """
    return tuple(
        claim
        for claim in all_claims()
        if claim.params.TRAINS_MODELS
        and claim.source.paper.startswith(paper)
    )
