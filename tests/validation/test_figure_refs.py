"""Figures are named by a typed handle (`validation.claim.FigureRef`): every claim's and every
paper figure's handle resolves to a function of `icl_verify.figures` taking what its caller
passes, and a handle that names no function is refused when the claim is declared."""

import dataclasses
import inspect

import pytest
from icl_verify.validation.claim import FigureRef
from icl_verify.validation.paper_figures import PaperFigure, papers
from icl_verify.validation.registry import all_claims, select_claims

CLAIM_FIGURE = ["params", "prediction", "measurement"]  # Claim.draw's call


def _drawn_by(ref: FigureRef) -> list[str]:
    """The parameters the function the handle resolves to needs (those without a default),
    which must be a function of `icl_verify.figures`."""
    function = ref.resolve()
    assert inspect.isfunction(function), ref
    assert function.__module__.startswith("icl_verify.figures."), ref
    parameters = inspect.signature(function).parameters.values()
    return [p.name for p in parameters if p.default is inspect.Parameter.empty]


def test_every_claim_figure_resolves_to_a_figure_function_of_params_prediction_measurement():
    refs = {ref for claim in all_claims() for ref in claim.figures}
    assert len(refs) > 50  # every claim draws at least one
    assert {str(ref): _drawn_by(ref) for ref in refs} == {str(ref): CLAIM_FIGURE for ref in refs}


def test_every_paper_figure_resolves_to_a_function_of_its_claims_records():
    """One claim: the claim figure's signature; several: ``function(records)``
    (`validation.paper_figures`)."""
    for drawn, _ in papers().values():
        for figure in drawn:
            expected = CLAIM_FIGURE if len(figure.claims) == 1 else ["records"]
            assert _drawn_by(figure.figure) == expected, figure.number


@pytest.mark.parametrize(
    "figure, message",
    [
        (FigureRef("icl_verify.figures.manifolds", "figure_manifold"),
         "claim HE-MAN: figure no module icl_verify.figures.manifolds; icl_verify.figures has "
         "activations, circuits, "),
        (FigureRef("icl_verify.figures.manifold", "figure_x"),
         "claim HE-MAN: figure icl_verify.figures.manifold has no function figure_x; its "
         "functions: figure_manifold"),
        (FigureRef("no_such_package.figures", "draw"),
         "claim HE-MAN: figure no module no_such_package.figures can be imported"),
        (FigureRef("icl_verify.figures:manifold", "figure_manifold"),
         "claim HE-MAN: figure must be FigureRef(module, function): a module's import path"),
        ("manifold:figure_manifold",
         "claim HE-MAN: figure must be a FigureRef(module, function) or a tuple of them, got "
         "'manifold:figure_manifold'"),
    ],
    ids=["unknown module", "unknown function", "unknown package", "colon", "string"],
)  # fmt: skip
def test_a_figure_that_names_no_function_is_refused_in_one_line_naming_the_claim(figure, message):
    claim = select_claims(["HE-MAN"])[0]
    with pytest.raises(ValueError) as error:
        dataclasses.replace(claim, figure=figure)
    assert str(error.value).startswith(message) and "\n" not in str(error.value)


def test_a_paper_figure_that_names_no_function_is_refused_naming_its_number():
    expected = r"^figure 7: figure icl_verify.figures.paper has no function figure_7; its "
    with pytest.raises(ValueError, match=expected + "functions: figure_1, "):
        PaperFigure(7, ("HE-MAN",), FigureRef("icl_verify.figures.paper", "figure_7"), "s", "c")
