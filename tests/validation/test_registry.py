"""The registry finds every claim, subpackages included, in catalogue order; ids are unique."""

import pytest
from icl_verify.validation.claim import Claim
from icl_verify.validation.registry import CATALOGUE_ORDER, all_claims, select_claims


def test_claims_have_unique_catalogue_ids_in_catalogue_order():
    claims = all_claims()
    ids = [claim.id for claim in claims]
    assert len(ids) == len(set(ids)) and all(isinstance(c, Claim) for c in claims)
    catalogued = [i for i in ids if i in CATALOGUE_ORDER]
    assert catalogued == sorted(catalogued, key=CATALOGUE_ORDER.index)
    assert set(CATALOGUE_ORDER) <= set(ids)


def test_claims_are_grouped_per_paper():
    packages = {"HE": "he2025", "CZZ": "chen2024"}  # id prefix -> the paper's subpackage
    for claim in all_claims():
        package = packages[claim.id.split("-")[0]]
        module = claim.predict.__module__
        assert module.startswith(f"icl_verify.validation.claims.{package}."), (claim.id, module)


def test_select_claims_keeps_registry_order_and_refuses_unknown_ids():
    assert [c.id for c in select_claims(["HE-T4.2ii", "HE-MAN"])] == ["HE-MAN", "HE-T4.2ii"]
    assert len(select_claims()) == len(all_claims())
    with pytest.raises(ValueError, match="unknown claim id 'X'"):
        select_claims(["X"])
