"""The registry finds every claim; every preset sizes every claim; ids follow the catalogue."""

import pytest
from icl_verify.validation.claim import Claim
from icl_verify.validation.preset_sizes import PRESETS
from icl_verify.validation.presets import PRESET_NAMES, claim_params
from icl_verify.validation.registry import CATALOGUE_ORDER, all_claims, select_claims


def test_presets_are_smoke_quick_paper():
    assert PRESET_NAMES == ("smoke", "quick", "paper")


@pytest.mark.parametrize("preset", ["smoke", "quick", "paper"])
def test_every_registered_claim_has_sizes_in_every_preset(preset):
    for claim in all_claims():
        params = claim_params(preset, claim.id)
        assert isinstance(params, dict) and params
        params["mutated"] = True  # a copy: the preset data stays unchanged
        assert "mutated" not in PRESETS[preset][claim.id]


def test_presets_hold_no_unknown_claims():
    known = {claim.id for claim in all_claims()}
    for preset, sizes in PRESETS.items():
        assert set(sizes) <= known, preset


def test_claims_have_unique_catalogue_ids_in_catalogue_order():
    claims = all_claims()
    ids = [claim.id for claim in claims]
    assert len(ids) == len(set(ids)) and all(isinstance(c, Claim) for c in claims)
    catalogued = [i for i in ids if i in CATALOGUE_ORDER]
    assert catalogued == sorted(catalogued, key=CATALOGUE_ORDER.index)
    assert {"HE-T4.2ii", "HE-MAN"} <= set(ids)


def test_select_claims_keeps_registry_order_and_refuses_unknown_ids():
    assert [c.id for c in select_claims(["HE-T4.2ii", "HE-MAN"])] == ["HE-MAN", "HE-T4.2ii"]
    assert len(select_claims()) == len(all_claims())
    with pytest.raises(ValueError, match="unknown claim id 'X'"):
        select_claims(["X"])


def test_unknown_preset_or_claim_sizes_are_refused():
    with pytest.raises(ValueError, match="preset must be one of"):
        claim_params("huge", "HE-MAN")
    with pytest.raises(ValueError, match="has no sizes for claim"):
        claim_params("smoke", "HE-NOPE")
