"""The registry of claims: every `CLAIMS` tuple of the modules under `validation.claims`.

Modules are discovered, subpackages included (one subpackage per paper, one module
per claim family; see `validation.claims`), so adding a claim never edits this file.
Modules and packages whose name starts with "_" are helpers and are not scanned.
Claims are listed in the reference
catalogue's order (`CATALOGUE_ORDER`); ids not in it follow, sorted.
"""

from __future__ import annotations

import importlib
import pkgutil

from icl_verify.validation.claim import Claim

# The catalogue order: He et al. (2025) (reference/he2025.md, sections 2-5), then
# Chen, Zhao, Zou (2024) (reference/chen2024.md, sections 3-4).
CATALOGUE_ORDER = (
    "HE-OBS1", "HE-OBS2", "HE-OBS3", "HE-OBS4",
    "HE-P4.1", "HE-S1", "HE-S2", "HE-MAN",
    "HE-4.9", "HE-4.12", "HE-T4.2i", "HE-T4.2ii", "HE-4.3-RISK", "HE-T4.2iii",
    "HE-B-INIT", "HE-B-PHASE1", "HE-B-PHASE2", "HE-B-PHASE3",
    "HE-5.1-LIN", "HE-5.1-SM2LIN", "HE-5.1-LENGTH", "HE-5.2-ACT",
    "HE-5.3-KMS", "HE-5.4-MT", "HE-A-HEADS", "HE-C-TRUELOSS", "HE-C-SOFTMAXNORM",
    "CZZ-P4.1", "CZZ-P4.2", "CZZ-PREGD", "CZZ-D1", "CZZ-D2", "CZZ-T5.1", "CZZ-T5.2", "CZZ-4.3",
    "CZZ-T5.3", "CZZ-IMPORTANCE", "CZZ-HEADS", "CZZ-PRUNE", "CZZ-PPROBE",
)  # fmt: skip


# Claims that train models but declare no ``Claim.trains``: their training is seeded by the
# run's seed, so it is not a function of their parameters alone (tests/validation/
# test_registry.py checks that no other claim module calls a trainer undeclared).
TRAINED_BY_RUN_SEED = ("HE-B-PHASE1", "HE-C-TRUELOSS")


def _order(claim: Claim) -> tuple[int, str]:
    if claim.id in CATALOGUE_ORDER:
        return CATALOGUE_ORDER.index(claim.id), ""
    return len(CATALOGUE_ORDER), claim.id


def all_claims() -> tuple[Claim, ...]:
    """Every registered claim, in catalogue order; duplicate ids raise ValueError.

    >>> ids = [c.id for c in all_claims()]
    >>> ids.index("HE-MAN") < ids.index("HE-T4.2ii")  # §3 before §4
    True
    """
    import icl_verify.validation.claims as package

    claims: dict[str, Claim] = {}
    for module_info in pkgutil.walk_packages(package.__path__, f"{package.__name__}."):
        if any(part.startswith("_") for part in module_info.name.split(".")):
            continue
        module = importlib.import_module(module_info.name)
        for claim in getattr(module, "CLAIMS", ()):
            if claim.id in claims:
                raise ValueError(f"claim id {claim.id!r} is registered twice")
            claims[claim.id] = claim
    return tuple(sorted(claims.values(), key=_order))


def select_claims(ids: list[str] | tuple[str, ...] = ()) -> tuple[Claim, ...]:
    """The claims with the given ids (all when empty), in registry order; unknown ids raise.

    >>> [c.id for c in select_claims(["HE-T4.2ii"])]
    ['HE-T4.2ii']
    >>> select_claims(["HE-NOPE"])
    Traceback (most recent call last):
    ...
    ValueError: unknown claim id 'HE-NOPE' (see `icl-verify list`)
    """
    claims = all_claims()
    known = {claim.id for claim in claims}
    for claim_id in ids:
        if claim_id not in known:
            raise ValueError(f"unknown claim id {claim_id!r} (see `icl-verify list`)")
    wanted = set(ids)
    return tuple(claim for claim in claims if not wanted or claim.id in wanted)


def trained_claims(paper: str = "") -> tuple[Claim, ...]:
    """The claims whose measurement trains models (``Claim.trains``, and `TRAINED_BY_RUN_SEED`),
    in registry order; with ``paper``, those of the papers whose key starts with it.

    >>> [c.id for c in trained_claims("Chen")]
    ['CZZ-IMPORTANCE', 'CZZ-HEADS', 'CZZ-PRUNE', 'CZZ-PPROBE']
    """
    return tuple(
        claim
        for claim in all_claims()
        if (claim.trains or claim.id in TRAINED_BY_RUN_SEED)
        and claim.source.paper.startswith(paper)
    )
