"""The registry finds every claim, subpackages included, in catalogue order; ids are unique."""

import inspect

import pytest
from icl_verify.validation.claim import Claim
from icl_verify.validation.registry import all_claims, paper_of, select_claims


def test_every_claim_has_a_place_and_a_summary_and_the_registry_follows_the_places():
    claims = all_claims()
    ids = [claim.id for claim in claims]
    assert len(ids) == len(set(ids)) and all(isinstance(c, Claim) for c in claims)
    assert all(c.catalogue is not None and c.summary for c in claims), [
        c.id for c in claims if c.catalogue is None or not c.summary
    ]
    places = [(paper_of(c), c.catalogue) for c in claims]
    assert len(set(places)) == len(places)
    he, chen = ids.index("HE-OBS1"), ids.index("CZZ-IMPORTANCE")
    assert he < chen and ids.index("HE-MAN") < ids.index("HE-T4.2ii")  # papers, then sections
    for paper in {p for p, _ in places}:
        mine = [c.catalogue for c in claims if paper_of(c) == paper]
        assert mine == sorted(mine), paper


def test_every_claims_wrong_prediction_says_what_it_gets_wrong():
    """Its site page shows the docstring of `wrong` (else only the function's bare name)."""
    bare = [c.id for c in all_claims() if not (inspect.getdoc(c.wrong) or "").strip()]
    assert not bare, f"these claims' wrong predictions have no docstring: {', '.join(bare)}"


def test_two_claims_in_one_place_are_refused(monkeypatch):
    import dataclasses

    from icl_verify.validation.claims.he2025 import manifold

    twin = dataclasses.replace(manifold.CLAIMS[0], id="HE-MAN-TWIN")
    monkeypatch.setattr(manifold, "CLAIMS", (*manifold.CLAIMS, twin))
    with pytest.raises(ValueError, match="catalogue places must be unique within a paper"):
        all_claims()


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
