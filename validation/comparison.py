"""Two runs of the same claims on the same prompts, check by check: do their verdicts agree, and
do their measured values differ by no more than floating-point rounding allows?

`compare_runs` is how a CUDA run is held to a CPU run of the same claims, both drawing the CPU's
random streams (`run_claims(..., draw_on_cpu=True)`; `tests/validation/test_cuda_claims.py`):
on the same prompts the two devices compute the same float32 arithmetic in other summation
orders, so every measured value may move only by that rounding, carried through training.

The tolerance of a measured element v with error bar sigma (its `Estimate.error`, of the first
run) is

    tol = ROUNDING |v| + ERROR_BAR sigma + FLOOR,

and the comparison reports max |delta| / tol per check. Where it comes from:

- ROUNDING = 1e-3, float32 summation order carried through training. A sum of N float32 terms
  is exact to N u relative in the worst case (u = 2^-24, Higham, *Accuracy and Stability*,
  Thm 3.1) and to about sqrt(N) u in practice (rounding errors add like a random walk, ibid.
  §2.8); an Adam step is a ratio of such sums, so two orders of summation move a weight by about
  2 lr sqrt(N) u per step and by 2 S lr sqrt(N) u after S steps, to first order (the argument of
  `tests/numerics/test_cuda.py`, there in float64 with the worst case N u). With N = B (L + 1)
  D^2 products in a gradient entry, the smoke trainings give at most 8.3e-4 (HE-ROBUST: S = 320,
  lr = 0.1, B = 32, L = 40, D = 6), about 1.6e-4 for the others (S = 300, lr = 0.01, B = 128).
- ERROR_BAR = 0.5: where training amplifies differences (a head escaping a saddle, SGD at lr 0.1
  with momentum 0.9) the first-order argument fails; there the value may move by half its own
  error bar, the scale on which its verdict reads it (a value with an infinite error bar, which
  no verdict reads, is not bounded).
- FLOOR = 1e-6: a value that is itself the difference of two O(1) float32 numbers that cancel
  (CZZ-HEADS's ``more_heads``, 7.5e-8 +- 1.2e-7) carries their rounding, 16 u of O(1).

How far below this tolerance a run of the same prompts in another summation order falls is
measured beside the test that uses it (`tests/validation/test_cuda_claims.py`). What fails the
comparison: other prompts (another run seed exceeds it in many checks; the claims that train
with their setting's ``train_seed`` keep it; where the error bar dwarfs the value, as for the
Chen et al. claims at smoke, another draw can stay within it), another initialisation, a kernel
that computes something else, or a device that silently rounds coarser (TF32's u = 2^-11 moves
the values the first-order bound covers 8000 times more than float32).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from icl_verify.validation.records import RunRecord

ROUNDING = 1e-3  # relative: float32 summation order through training (module docstring)
ERROR_BAR = 0.5  # in units of the value's error bar, where training amplifies differences
FLOOR = 1e-6  # absolute: the rounding of O(1) float32 numbers whose difference a value is


@dataclass(frozen=True)
class CheckDifference:
    """One check of one claim in two runs.

    Attributes:
        claim: the claim's id; check: the check's label.
        verdicts: the check's verdict in the first and in the second run.
        delta: the largest |difference| of the measured values over their elements (inf when
            their shapes differ or one is NaN where the other is not).
        ratio: the largest |difference| / tolerance over the elements (module docstring).
    """

    claim: str
    check: str
    verdicts: tuple[str, str]
    delta: float
    ratio: float

    @property
    def matches(self) -> bool:
        """The same verdict, and every element within its tolerance."""
        return self.verdicts[0] == self.verdicts[1] and self.ratio <= 1


@dataclass(frozen=True)
class RunComparison:
    """Two runs check by check (`compare_runs`).

    Attributes:
        checks: every check of the claims both runs finished, in the first run's order.
        verdicts: claim id -> (verdict in the first run, in the second), for those claims.
        missing: the claims only one of the runs finished.
    """

    checks: tuple[CheckDifference, ...]
    verdicts: dict[str, tuple[str, str]]
    missing: tuple[str, ...]

    @property
    def matches(self) -> bool:
        """Both runs finished the same claims, with the same verdicts, every check matching."""
        return (
            not self.missing
            and all(first == second for first, second in self.verdicts.values())
            and all(check.matches for check in self.checks)
        )

    def failures(self) -> list[str]:
        """One line per claim or check that does not match, and per missing claim."""
        lines = [f"{claim}: finished in one run only" for claim in self.missing]
        lines += [
            f"{claim}: verdict {first} against {second}"
            for claim, (first, second) in self.verdicts.items()
            if first != second
        ]
        lines += [
            f"{c.claim} {c.check}: verdict {c.verdicts[0]} against {c.verdicts[1]}, "
            f"max |delta| {c.delta:.3g} = {c.ratio:.3g} tolerances"
            for c in self.checks
            if not c.matches
        ]
        return lines

    def table(self, names: Sequence[str] = ("first", "second")) -> str:
        """A plain-text table, one row per check: verdicts, max |delta|, max |delta| / tol."""
        header = (f"{'claim':18} {'check':24} {names[0]:>13} {names[1]:>13} "
                  f"{'max |delta|':>11} {'/ tol':>9}")  # fmt: skip
        rows = [
            f"{c.claim:18} {c.check[:24]:24} {c.verdicts[0]:>13} {c.verdicts[1]:>13} "
            f"{c.delta:11.3g} {c.ratio:9.3g}" + ("" if c.matches else "  <-")
            for c in self.checks
        ]
        return "\n".join([header, *rows])


def _array(value) -> np.ndarray:
    return np.asarray(np.nan if value is None else value, dtype=float)


def difference(first, second, error) -> tuple[float, float]:
    """(max |second - first|, max |second - first| / tol) over the elements of two measured
    values, tol = ROUNDING |first| + ERROR_BAR error + FLOOR; equal NaNs do not differ.

    >>> [round(x, 4) for x in difference(1.0, 1.0005, 0.0)]  # rounding through training
    [0.0005, 0.4995]
    >>> difference([1.0, 2.0], [1.1, 2.0], 0.01)[1] > 1  # another draw would do this
    True
    """
    first, second, error = _array(first), _array(second), _array(error)
    if first.shape != second.shape or (np.isnan(first) != np.isnan(second)).any():
        return math.inf, math.inf
    delta = np.where(np.isnan(first), 0.0, np.abs(second - first))
    tolerance = ROUNDING * np.abs(first) + ERROR_BAR * np.broadcast_to(error, first.shape) + FLOOR
    with np.errstate(invalid="ignore"):
        ratio = np.where(delta == 0, 0.0, delta / tolerance)  # an infinite error bar: 0
    return float(delta.max(initial=0.0)), float(ratio.max(initial=0.0))


def compare_runs(first: RunRecord, second: RunRecord) -> RunComparison:
    """The two runs' claims check by check (`RunComparison`), the tolerance from the first
    run's values and error bars (module docstring).

    >>> import tempfile
    >>> from pathlib import Path
    >>> from icl_verify.validation.registry import select_claims
    >>> from icl_verify.validation.runner import run_claims
    >>> out = Path(tempfile.mkdtemp())
    >>> runs = [run_claims(select_claims(["HE-T4.2ii"]), preset="smoke", out=out, run_id=name,
    ...                    seed=0, device="cpu", workers=1) for name in ("a", "b")]
    >>> comparison = compare_runs(*runs)
    >>> comparison.matches, comparison.checks[0].ratio
    (True, 0.0)
    """
    theirs = {claim.id: claim for claim in second.claims}
    ours = {claim.id for claim in first.claims}
    checks, verdicts = [], {}
    for claim in first.claims:
        other = theirs.get(claim.id)
        if other is None:
            continue
        verdicts[claim.id] = (claim.verdict, other.verdict)
        labels = {check.label: check for check in other.checks}
        for check in claim.checks:
            match = labels.get(check.label)
            if match is None:
                checks.append(CheckDifference(claim.id, check.label, (check.verdict, "missing"),
                                              math.inf, math.inf))  # fmt: skip
                continue
            delta, ratio = difference(check.measured, match.measured, check.error)
            checks.append(
                CheckDifference(claim.id, check.label, (check.verdict, match.verdict), delta, ratio)
            )
    missing = tuple(sorted(ours.symmetric_difference(theirs)))
    return RunComparison(tuple(checks), verdicts, missing)
