"""Training to a wall-clock deadline (``train(..., deadline=time.time() + seconds)``): at the
first step boundary past it the checkpoint of that step is written and `TrainingStopped` raised
(`loop`); a run with ``resume=True`` continues from there. Worker processes get the same
deadline, so every slice stops at its own boundary (`workers`)."""

from __future__ import annotations

import time
from pathlib import Path

from icl_verify.numerics._core._training.config import TrainingStopped


def reached(deadline: float | None, step: int, steps: int) -> bool:
    """Whether a run of ``steps`` steps stops after ``step``: it has a deadline, the run is
    not over, and the clock (``time.time()``) has passed the deadline.

    >>> reached(None, 3, 10), reached(0.0, 3, 10), reached(0.0, 10, 10)
    (False, True, False)
    """
    return deadline is not None and step < steps and time.time() >= deadline


def stopped(step: int, steps: int, checkpoint_path: Path | None) -> TrainingStopped:
    """The error of a run stopped after ``step``, saying where it can be resumed from.

    >>> print(stopped(3, 10, None))
    training stopped at its deadline after step 3 of 10; no checkpoint path, so the steps are lost
    """
    kept = (
        f"checkpoint at {str(checkpoint_path)!r}; resume to continue"
        if checkpoint_path is not None
        else "no checkpoint path, so the steps are lost"
    )
    return TrainingStopped(
        f"training stopped at its deadline after step {step} of {steps}; {kept}", step
    )
