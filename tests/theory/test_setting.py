"""theory.Setting (He et al. 2025, Section 2): validation of d, L, sigma2; constants of §0.1."""

import dataclasses
import math
import re

import numpy as np
import pytest
from icl_verify.theory import Setting

VALID = {"d": 5, "L": 40, "sigma2": 0.1}


@pytest.mark.parametrize("field", ["d", "L"])
@pytest.mark.parametrize("value", [0, -1, 2.5, True, "5", 5.0, None])
def test_dimension_rejects_non_positive_integers(field, value):
    with pytest.raises(ValueError) as info:
        Setting(**{**VALID, field: value})
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith(f"{field} ")  # names the field ...
    assert repr(value) in message  # ... the value ...
    assert ">= 1" in message and "integer" in message  # ... and the allowed range


@pytest.mark.parametrize("value", [-0.1, math.nan, math.inf, -math.inf, "0.1", None, True])
def test_sigma2_rejects_negative_or_non_finite(value):
    with pytest.raises(ValueError) as info:
        Setting(**{**VALID, "sigma2": value})
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith("sigma2 ")
    assert repr(value) in message
    assert ">= 0" in message and "finite" in message


@pytest.mark.parametrize(
    "d, L, sigma2",
    [(1, 1, 0), (5, 40, 0.1), (np.int64(7), np.int32(3), np.float32(0.5)), (2, 3, 3)],
)
def test_accepts_valid_values_and_normalises_types(d, L, sigma2):
    s = Setting(d, L, sigma2)
    assert (s.d, s.L, s.sigma2) == (int(d), int(L), float(sigma2))
    assert type(s.d) is int and type(s.L) is int and type(s.sigma2) is float


def test_derived_constants_follow_their_definitions():
    # reference §0.1: c = (1 + sigma2)/L, kappa = c d, D = d (1 + sigma2); here with exact rationals
    s = Setting(d=5, L=40, sigma2=0.25)
    assert s.c == pytest.approx(1.25 / 40, rel=1e-15)
    assert s.kappa == pytest.approx(1.25 * 5 / 40, rel=1e-15)
    assert s.D == pytest.approx(6.25, rel=1e-15)


def test_setting_is_frozen_and_hashable():
    s = Setting(**VALID)
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.d = 6  # type: ignore[misc]
    assert s == Setting(**VALID) and len({s, Setting(**VALID)}) == 1
    assert re.fullmatch(r"Setting\(d=5, L=40, sigma2=0\.1\)", repr(s))
