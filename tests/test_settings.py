"""icl_verify.settings: the typed data models, validated when made (one place for d, L, sigma2,
s, sigma); `Setting`'s own checks are tests/theory/test_setting.py (theory.Setting is it)."""

import dataclasses
import math

import numpy as np
import pytest

from icl_verify import theory
from icl_verify.settings import Setting, SparseSetting

VALID = {"d": 16, "s": 4, "sigma": 0.1}


def test_theory_setting_is_the_one_setting():
    assert theory.Setting is Setting


@pytest.mark.parametrize("field", ["d", "s"])
@pytest.mark.parametrize("value", [0, -1, 2.5, True, "5", 5.0, None])
def test_sparse_sizes_reject_non_positive_integers(field, value):
    with pytest.raises(ValueError) as info:
        SparseSetting(**{**VALID, field: value})
    message = str(info.value)
    assert "\n" not in message and message.startswith(f"{field} ")
    assert repr(value) in message and ">= 1" in message and "integer" in message


@pytest.mark.parametrize(("d", "s"), [(8, 9), (1, 2)])
def test_support_larger_than_the_dimension_is_refused(d, s):
    with pytest.raises(ValueError, match=rf"^s must be an integer in \[1, d={d}\], got {s}$"):
        SparseSetting(d=d, s=s, sigma=0.1)


@pytest.mark.parametrize("value", [-0.1, math.nan, math.inf, "0.1", None, True])
def test_sigma_rejects_negative_or_non_finite(value):
    with pytest.raises(ValueError) as info:
        SparseSetting(**{**VALID, "sigma": value})
    message = str(info.value)
    assert "\n" not in message and message.startswith("sigma ")
    assert repr(value) in message and ">= 0" in message and "finite" in message


def test_sparse_setting_normalises_types_and_is_frozen():
    setting = SparseSetting(np.int64(8), np.int32(8), np.float32(0.5))  # s = d is allowed
    assert (setting.d, setting.s, setting.sigma) == (8, 8, 0.5)
    assert type(setting.d) is int and type(setting.s) is int and type(setting.sigma) is float
    with pytest.raises(dataclasses.FrozenInstanceError):
        setting.s = 2  # type: ignore[misc]


def test_a_new_length_is_validated_too():
    setting = Setting(d=5, L=40, sigma2=0.1)
    assert dataclasses.replace(setting, L=80) == Setting(5, 80, 0.1)
    with pytest.raises(ValueError, match="^L must be a positive integer"):
        dataclasses.replace(setting, L=0)
