"""Presets: named sizes for every claim (DESIGN.md, "Presets size every claim").

A preset is data (`validation.preset_sizes.PRESETS`), not a code path: the same
claim code runs at every size, reading its parameters from the preset.
"""

from __future__ import annotations

import copy
from typing import Any

from icl_verify.validation.preset_sizes import PRESETS

PRESET_NAMES = tuple(PRESETS)  # ("smoke", "quick", "paper")
DEFAULT_PRESET = "quick"


def claim_params(preset: str, claim_id: str) -> dict[str, Any]:
    """The parameters of `claim_id` under `preset` (a fresh copy; JSON-ready values).

    >>> claim_params("smoke", "HE-MAN")["d"]
    5
    >>> claim_params("tiny", "HE-MAN")
    Traceback (most recent call last):
    ...
    ValueError: preset must be one of smoke, quick, paper, got 'tiny'
    """
    if preset not in PRESETS:
        raise ValueError(f"preset must be one of {', '.join(PRESET_NAMES)}, got {preset!r}")
    sizes = PRESETS[preset]
    if claim_id not in sizes:
        raise ValueError(f"preset {preset!r} has no sizes for claim {claim_id!r}")
    return copy.deepcopy(sizes[claim_id])
