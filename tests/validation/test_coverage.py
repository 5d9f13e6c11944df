"""The site's catalogue lists every item of both papers that no claim judges in full, with the
claims judging part of it, or why none (issue 40 item 2)."""

import importlib

import pytest
from icl_verify.validation.coverage import OpenItem, open_items
from icl_verify.validation.site import claims_index


def test_the_claims_index_lists_every_open_item_with_the_claims_judging_part_of_it():
    page = claims_index(None)
    items = [item for paper in open_items().values() for item in paper]
    assert items and any(item.status == "not at all" for item in items)
    for item in items:
        row = next(line for line in page.splitlines() if line.startswith("| ") and
                   item.why.split(":")[0][:40] in line and item.item[:12] in line)  # fmt: skip
        assert all(f"[{c}]({c}.md)" in row for c in item.claims)
        assert ("no claim" in row) == (not item.claims)


def test_an_open_item_naming_a_claim_of_another_paper_or_none_is_refused(monkeypatch):
    package = importlib.import_module("icl_verify.validation.claims.chen2024")
    wrong = OpenItem("Figure 4", ("HE-OBS1",), judged="something", why="a test")
    monkeypatch.setattr(package, "OPEN_ITEMS", (wrong,))
    with pytest.raises(ValueError, match="Figure 4: no claim HE-OBS1 in Chen et al. 2024"):
        open_items()


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(claims=("HE-OBS1",), why="left"), "judged must say what the claims"),
        (dict(judged="half", why="left"), "judged must say what the claims"),
        (dict(claims=("HE-OBS1",), judged="half"), "why must say what is left"),
    ],
)
def test_an_open_item_says_what_is_judged_by_whom_and_what_is_left(kwargs, message):
    with pytest.raises(ValueError, match=message):
        OpenItem("Lemma X", **kwargs)
