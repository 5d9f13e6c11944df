"""The one definition of a device name: ``auto``, ``cpu``, ``cuda`` or ``cuda:N``.

`resolve_device` turns a name into the torch device string a run uses (``auto``: CUDA when
present, else the CPU) and refuses, in one line, a name that is malformed or names a card this
machine does not have. The trainer (`numerics._core.trainer`) and every command (`--device`) use it;
torch is imported only when a CUDA name must be checked, so a CPU run's start stays light.
"""

from __future__ import annotations

import re

__all__ = ["DEVICE_PATTERN", "resolve_device"]

DEVICE_PATTERN = re.compile(r"auto|cpu|cuda(:\d+)?")


def resolve_device(name: str) -> str:
    """The device string for ``name``; ValueError (one line, naming the device) otherwise.

    >>> resolve_device("cpu")
    'cpu'
    >>> resolve_device("tpu")
    Traceback (most recent call last):
    ...
    ValueError: device must be auto, cpu, cuda or cuda:N, got 'tpu'
    """
    if not isinstance(name, str) or not DEVICE_PATTERN.fullmatch(name):
        raise ValueError(f"device must be auto, cpu, cuda or cuda:N, got {name!r}")
    if name == "cpu":
        return name
    import torch

    if name == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if not torch.cuda.is_available():
        raise ValueError(f"device {name}: CUDA is not available here; use auto or cpu")
    index, count = int(name.partition(":")[2] or 0), torch.cuda.device_count()
    if index >= count:
        raise ValueError(f"device {name}: the CUDA device index must be in [0, {count - 1}]")
    return name
