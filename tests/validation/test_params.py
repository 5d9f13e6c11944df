"""Typed claim parameters: parsed by field type, validated with one line naming the field."""

import dataclasses
import math
import re
from dataclasses import FrozenInstanceError, dataclass

import pytest
from icl_verify.validation.params import (
    ParameterError,
    Params,
    SettingParams,
    check_order,
    param,
)
from icl_verify.validation.registry import all_claims


@dataclass(frozen=True, kw_only=True)
class Example(SettingParams):
    n_prompts: int = param(help="prompts", low=1)
    omega_min: float = param(0.1, help="smallest omega", low=0, low_open=True)
    omega_max: float = param(0.6, help="largest omega", low=0, low_open=True)
    lengths: tuple[int, ...] = param((10, 40), help="test lengths", low=1)
    cases: tuple[tuple[float, float], ...] = param(((0.1, 0.5),), help="(xi, sigma2)", low=0)
    optimizer: str = param("adam", help="optimiser", choices=("adam", "sgd"))
    symmetric: bool = param(False, help="symmetric start")

    def validate(self):
        check_order(self, "omega_min", "omega_max")


BASE = Example(n_prompts=100)


def test_strings_are_parsed_by_the_field_type():
    changed = BASE.with_overrides(
        {"d": "10", "sigma2": "1e-3", "lengths": "20, 40,80", "cases": "[[0.2, 1]]",
         "optimizer": "sgd", "symmetric": "true", "n_prompts": "2e4"}
    )  # fmt: skip
    assert (changed.d, changed.sigma2, changed.lengths) == (10, 1e-3, (20, 40, 80))
    assert changed.cases == ((0.2, 1.0),) and changed.optimizer == "sgd" and changed.symmetric
    assert changed.n_prompts == 20_000 and isinstance(changed.n_prompts, int)
    assert BASE.with_overrides({"lengths": [5, 6]}).lengths == (5, 6)  # typed values (TOML)


@pytest.mark.parametrize(
    "key, value, message",
    [
        ("sigma2", "-1", "sigma2 must be a number in [0, 1e+12], got -1"),
        ("sigma2", "nan", "sigma2 must be a number in [0, 1e+12], got nan"),
        ("d", "0", "d must be an integer in [1, 10000], got 0"),
        ("d", "2.5", "d must be an integer in [1, 10000], got 2.5"),
        ("L", "many", "L must be an integer in [1, 100000], got 'many'"),
        ("n_prompts", "inf", "n_prompts must be an integer in [1, 1e+09], got inf"),
        ("lengths", "10,0",
         "lengths must be a non-empty list of integers in [1, 1e+09], got [10, 0]"),
        ("cases", "1,2",
         "cases must be a list of lists of numbers in [0, 1e+12], written as JSON, got '1,2'"),
        ("optimizer", "lbfgs", "optimizer must be one of adam, sgd, got 'lbfgs'"),
        ("symmetric", "maybe", "symmetric must be true or false, got 'maybe'"),
        ("omega_min", "0.7", "omega_min must be < omega_max, got omega_min=0.7, omega_max=0.6"),
        ("dd", "3", "unknown parameter 'dd'; known: L, cases, d, lengths, n_prompts, omega_max"),
    ],
)
def test_a_bad_value_is_one_line_naming_the_field_the_value_and_what_is_allowed(
    key, value, message
):
    with pytest.raises(ParameterError) as error:
        BASE.with_overrides({key: value})
    assert str(error.value).startswith(message) and "\n" not in str(error.value)


def test_construction_validates_and_the_result_is_frozen():
    message = "n_prompts must be an integer in [1, 1e+09], got True"
    with pytest.raises(ParameterError, match=re.escape(message)):
        Example(n_prompts=True)
    with pytest.raises(ParameterError, match=re.escape("sigma2 must be a number in [0, 1e+12]")):
        Example(n_prompts=1, sigma2=-math.inf)
    with pytest.raises(FrozenInstanceError):
        BASE.d = 3  # type: ignore[misc]
    with pytest.raises(TypeError):
        Example()  # n_prompts has no default: every preset states it


def test_every_claim_preset_round_trips_through_json_and_is_described():
    for claim in all_claims():
        assert issubclass(claim.params, Params)
        for preset in claim.presets.values():
            assert claim.params.from_json(preset.as_json()) == preset
        for info in claim.params.describe():
            assert info.help, f"{claim.id}.{info.name} has no meaning"


def test_parameters_stored_by_another_version_are_one_line_not_a_type_error():
    stored = Example(n_prompts=5).as_json()
    assert Example.from_json(stored) == Example(n_prompts=5)
    without = {k: v for k, v in stored.items() if k != "n_prompts"}  # a field added since
    with pytest.raises(ParameterError, match=r"^the stored parameters do not fit Example \(no "
                       r"field 'n_prompts'\)"):  # fmt: skip
        Example.from_json(without)
    with pytest.raises(ParameterError, match=r"\(unknown field 'gone'\)"):  # a field removed
        Example.from_json({**stored, "gone": 1})
    defaulted = {k: v for k, v in stored.items() if k != "symmetric"}  # has a default: fine
    assert Example.from_json(defaulted).symmetric is False


def test_every_integer_parameter_of_every_claim_has_a_shape_role():
    """`Params.footprint` reads the fields by their role in the shapes a measurement allocates:
    a new size field must say its role, or its memory would be left out of the estimate."""
    import typing

    from icl_verify.validation.registry import all_claims

    missing = set()
    for claim in all_claims():
        for field in dataclasses.fields(claim.params):
            if "int" in str(typing.get_type_hints(claim.params)[field.name]):
                if field.metadata.get("role") is None:
                    missing.add((claim.id, field.name))
    assert missing == set()


@pytest.mark.parametrize("claim_id", ["HE-P4.1", "HE-OBS1", "CZZ-T5.3", "CZZ-HEADS"])
def test_every_preset_fits_a_machine_of_64_gib(claim_id):
    """The presets' estimated footprints: a paper preset fits a workstation (the estimate is
    conservative: a few tensors of the largest shape, float64)."""
    from icl_verify.validation.params import check_fits
    from icl_verify.validation.registry import select_claims

    claim = select_claims([claim_id])[0]
    for preset in claim.presets.values():
        check_fits(preset, memory=64 * 2**30)


def test_sizes_that_cannot_fit_are_refused_with_the_estimate():
    from icl_verify.validation.params import ParameterError, SettingParams, check_fits

    with pytest.raises(ParameterError, match=r"holds ~.* GiB at once .* this machine has 1 GiB"):
        check_fits(SettingParams(d=5, L=100_000), memory=2**30)
    check_fits(SettingParams(d=5, L=40), memory=2**30)  # 32 MB


def test_a_class_holds_only_counts_it_has():
    """`Params.HELD` names count fields of its class, and a trained Chen claim's `EVALUATED`
    names fields of its class (a misspelt name would hold nothing, or fail)."""
    from icl_verify.validation.registry import all_claims

    for claim in all_claims():
        fields = dataclasses.fields(claim.params)
        roles = {field.name: field.metadata.get("role") for field in fields}
        for name in claim.params.HELD:
            assert roles.get(name) == "count", (claim.id, name)
        for name in getattr(claim.params, "EVALUATED", ()):  # Chen et al.'s trained claims
            assert name in roles, (claim.id, name)


# The counts measured as held at once (each count of every claim set to 1e8 under a 12 GiB
# address-space limit: these failed to allocate; the others ran on, streaming in blocks).
HELD_COUNTS = ["CZZ-HEADS", "CZZ-IMPORTANCE", "CZZ-PPROBE", "CZZ-PRUNE", "CZZ-PREGD", "HE-4.9",
               "HE-5.1-SM2LIN"]  # fmt: skip


@pytest.mark.parametrize("claim_id", HELD_COUNTS)
def test_prompts_a_measurement_draws_at_once_count_in_its_footprint(claim_id):
    from icl_verify.validation.params import ParameterError, check_fits
    from icl_verify.validation.registry import select_claims

    claim = select_claims([claim_id])[0]
    smoke = claim.presets["smoke"]
    check_fits(smoke, memory=8 * 2**30)
    with pytest.raises(ParameterError, match="holds ~"):
        check_fits(dataclasses.replace(smoke, n_prompts=10**8), memory=8 * 2**30)
