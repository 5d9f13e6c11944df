"""Claims from Python: `run`, `run_many` and `sweep`, for notebooks and test suites (also as
``icl_verify.run``, ``icl_verify.run_many`` and ``icl_verify.sweep``).

``icl-verify run`` and ``icl-verify sweep`` are front ends of `run_many` and `sweep` (they
parse the command line, then call them), through the same cache and records: a run folder
``OUT/RUN_ID/`` with results.json, report.md and the figures, the trained models in
``OUT/cache``. Parameters are keyword arguments in Python types (``d=10``,
``gap_L=(40, 80, 160)``), validated as the command line validates them: a bad value raises one
`ValueError` (`validation.params.ParameterError`) naming the claim and the parameter. They
return typed results: `ClaimResult` (the stored `ClaimRecord` with ``table()`` and
``figure()``) and `SweepResult` (a `ClaimResult` per point).

>>> import tempfile
>>> result = run("HE-T4.2ii", preset="smoke", out=tempfile.mkdtemp())
>>> result.verdict, result.id
('agrees', 'HE-T4.2ii')
>>> run("HE-T4.2ii", preset="smoke", d=0)  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
icl_verify.validation.params.ParameterError: HE-T4.2ii: d must be an integer in [1, ...], got 0
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np
from icl_verify.validation.claim import DEFAULT_PRESET, PRESET_NAMES
from icl_verify.validation.params import ParameterError
from icl_verify.validation.records import ClaimRecord, RunRecord
from icl_verify.validation.registry import select_claims
from icl_verify.validation.runner import claim_parameters, reserve_run_folder, run_claims
from icl_verify.validation.sweep import parse_grid, run_sweep

from icl_verify import devices

__all__ = ["ClaimResult", "RunResult", "SweepResult", "run", "run_many", "sweep"]


@dataclass(frozen=True)
class ClaimResult:
    """One claim's record as results.json stores it, and where its run folder is.

    Attributes:
        record: the `ClaimRecord` (statement, source, parameters, prediction, measurement,
            checks with predicted/measured/error/rule/verdict, seconds, device).
        run_dir: the run folder (report.md, results.json, figures/).
    """

    record: ClaimRecord
    run_dir: Path

    @property
    def id(self) -> str:
        return self.record.id

    @property
    def verdict(self) -> str:
        return self.record.verdict

    @property
    def params(self) -> dict:
        return dict(self.record.params)

    @property
    def checks(self) -> tuple:
        return self.record.checks

    @property
    def figures(self) -> tuple[Path, ...]:
        """The figure files, as drawn into the run folder."""
        return tuple(self.run_dir / path for path in self.record.figures)

    def table(self):
        """The checks as rows (quantity, predicted, measured, error, rule, verdict, score): a
        pandas DataFrame when pandas is installed, else a list of dicts."""
        rows = [
            {"quantity": c.label, "predicted": c.predicted, "measured": c.measured,
             "error": c.error, "error_kind": c.error_kind, "rule": c.rule,
             "verdict": c.verdict, "score": c.score}
            for c in self.record.checks
        ]  # fmt: skip
        return _frame(rows)

    def figure(self, index: int = 0):
        """The claim's ``index``-th figure (a matplotlib Figure), drawn from the stored record."""
        (claim,) = select_claims([self.id])
        figures = claim.draw(self.record.restored_params(claim), self.record.restored_prediction(),
                             self.record.restored_measurement())  # fmt: skip
        return figures[index]

    def __repr__(self) -> str:
        """A short summary; the numbers are in ``record`` (and ``table()``)."""
        verdicts = ", ".join(f"{n} {v}" for v, n in _counts(c.verdict for c in self.checks))
        return f"<ClaimResult {self.id}: {self.verdict} ({verdicts}); {self.run_dir}>"

    def _repr_markdown_(self) -> str:  # a notebook shows the verdict and the checks
        rows = [f"**{self.id}: {self.verdict}** — {self.record.statement}", "",
                "| quantity | rule | verdict |", "|---|---|---|"]  # fmt: skip

        def cell(text: str) -> str:
            return text.replace("|", "\\|")

        rows += [f"| {cell(c.label)} | `{cell(c.rule)}` | {c.verdict} |"
                 for c in self.record.checks]  # fmt: skip
        return "\n".join(rows)


@dataclass(frozen=True)
class _Stored:
    """A run folder's record (results.json) and where the folder is."""

    record: RunRecord
    run_dir: Path

    def _results(self) -> tuple[ClaimResult, ...]:
        return tuple(ClaimResult(claim, self.run_dir) for claim in self.record.claims)

    def __repr__(self) -> str:
        """A short summary: how many claims (points) and their verdicts; the rest in
        ``record``."""
        verdicts = ", ".join(f"{n} {v}" for v, n in _counts(c.verdict for c in self.record.claims))
        unfinished = f", {len(self.record.unfinished)} unfinished" if self.record.unfinished else ""
        return (f"<{type(self).__name__} {len(self.record.claims)} records ({verdicts}"
                f"{unfinished}); {self.run_dir}>")  # fmt: skip


@dataclass(frozen=True, repr=False)  # `_Stored.__repr__`
class RunResult(_Stored):
    """A run of several claims: its record (results.json) and a `ClaimResult` per claim."""

    @property
    def claims(self) -> tuple[ClaimResult, ...]:
        return self._results()

    def __getitem__(self, claim_id: str) -> ClaimResult:
        record = self.record.claim(claim_id)
        if record is None:
            raise KeyError(claim_id)
        return ClaimResult(record, self.run_dir)

    def table(self):
        """One row per claim: id, verdict, seconds (a DataFrame with pandas)."""
        rows = [{"claim": c.id, "verdict": c.verdict, "seconds": c.record.seconds}
                for c in self.claims]  # fmt: skip
        return _frame(rows)


@dataclass(frozen=True, repr=False)  # `_Stored.__repr__`
class SweepResult(_Stored):
    """A sweep's record: its points in grid order, each a `ClaimResult`."""

    @property
    def points(self) -> tuple[ClaimResult, ...]:
        return self._results()

    @property
    def keys(self) -> tuple[str, ...]:
        return self.record.sweep.keys

    def table(self):
        """One row per point: the swept values and the verdict (a DataFrame with pandas)."""
        rows = [
            {**{k: point.params[k] for k in self.keys}, "verdict": point.verdict}
            for point in self.points
        ]
        return _frame(rows)

    @property
    def validity_map(self) -> Path:
        from icl_verify.validation.report import validity_map_path

        return self.run_dir / validity_map_path(self.record.sweep)


def _counts(verdicts) -> list[tuple[str, int]]:
    """How many of each verdict, in the order agrees, disagrees, inconclusive."""
    verdicts = list(verdicts)
    order = ("agrees", "disagrees", "inconclusive")
    return [(v, verdicts.count(v)) for v in order if v in verdicts]


def _frame(rows: list[dict]):
    """Rows as a pandas DataFrame when pandas is installed (optional), else as they are."""
    try:
        import pandas
    except ModuleNotFoundError:
        return rows
    return pandas.DataFrame(rows)


def _values(params: Mapping[str, Any]) -> dict[str, Any]:
    """Python values as the parameters take them: lists as tuples, at any depth."""

    def tupled(value):
        return tuple(tupled(v) for v in value) if isinstance(value, list | tuple) else value

    return {key: tupled(value) for key, value in params.items()}


#: The largest run seed (a signed 64-bit integer, as the command line's --seed).
MAX_SEED = 2**63 - 1


def _checked_arguments(preset, out, run_id, seed, workers, budget=None) -> None:
    """ParameterError (one line, naming the argument and what is allowed, as the command line
    words its options) unless the run's arguments are of the kinds the functions take;
    checked before anything is made, so bad input leaves no run folder behind.

    >>> try:
    ...     _checked_arguments("smoke", "results", None, 0, "2")
    ... except ParameterError as error:
    ...     print(error)
    workers must be an integer >= 1 or None (one per core), got '2'
    """

    def integer(value) -> bool:
        return isinstance(value, int) and not isinstance(value, bool)

    if not isinstance(preset, str) or preset not in PRESET_NAMES:
        raise ParameterError(f"preset must be one of {', '.join(PRESET_NAMES)}, got {preset!r}")
    if not isinstance(out, str | os.PathLike):
        raise ParameterError(f"out must be a folder path (a str or a Path), got {out!r}")
    if run_id is not None and not isinstance(run_id, str):
        raise ParameterError(f"run_id must be a folder name (a str) or None, got {run_id!r}")
    if not (integer(seed) and 0 <= seed <= MAX_SEED):
        raise ParameterError(f"seed must be an integer in [0, {MAX_SEED}], got {seed!r}")
    if workers is not None and not (integer(workers) and workers >= 1):
        raise ParameterError(
            f"workers must be an integer >= 1 or None (one per core), got {workers!r}"
        )
    if budget is not None and not (
        isinstance(budget, int | float) and not isinstance(budget, bool)
        and math.isfinite(budget) and budget > 0
    ):  # fmt: skip
        raise ParameterError(f"budget must be a number of seconds > 0 or None, got {budget!r}")


def _checked_values(claim, values: Mapping[str, Any]) -> None:
    """ParameterError ("<id>: <key> must be ..., got ...") unless the Python values of a
    claim's parameters are of their fields' types (`Params.check_python_values`)."""
    try:
        claim.params.check_python_values(_values(values))
    except ParameterError as error:
        raise ParameterError(f"{claim.id}: {error}") from None


def _target(preset: str, device: str, out, run_id: str | None, default: str):
    device = devices.resolve_device(device)
    out = Path(out)
    run_id = run_id or reserve_run_folder(out, f"{default}-{datetime.now():%Y%m%d-%H%M%S}")
    return device, out, run_id


def run_many(
    ids: Sequence[str] = (),
    preset: str = DEFAULT_PRESET,
    *,
    sets: Mapping[str, Any] | None = None,
    tables: Mapping[str, Mapping[str, Any]] | None = None,
    device: str = "cpu",
    seed: int = 0,
    out: str | Path = "results",
    run_id: str | None = None,
    workers: int | None = 1,
    scheduler: str | None = None,
    cache: str | Path | None = None,
    budget: float | None = None,
    show_progress: bool = False,
) -> RunResult:
    """Run the claims ``ids`` (all when empty) as ``icl-verify run`` does (the command is this
    function's front end): ``sets`` changes a parameter of every claim that has it,
    ``tables`` the parameters of one claim each (claim id -> parameters); ``workers`` local
    processes (None: one per core) or the Dask ``scheduler``; ``budget`` seconds of wall
    time (`RunResult.record.unfinished` lists what it stopped). The same ``run_id``
    resumes."""
    return _run_many(ids, preset, sets, tables, device, seed, out, run_id, workers, scheduler,
                     cache, budget, show_progress, default=preset)  # fmt: skip


def _run_many(ids, preset, sets, tables, device, seed, out, run_id, workers, scheduler, cache,
              budget, show_progress, default: str) -> RunResult:  # fmt: skip
    """`run_many`, its run id defaulting to ``default``-<time> (checked input first, so that
    bad input leaves no folder behind)."""
    _checked_arguments(preset, out, run_id, seed, workers, budget)
    claims = select_claims(list(ids))
    for claim in claims:
        _checked_values(claim, {**(tables or {}).get(claim.id, {}), **(sets or {})})
    parameters = claim_parameters(
        claims, preset, _values(sets or {}),
        {claim_id: _values(values) for claim_id, values in (tables or {}).items()},
    )  # fmt: skip
    device, out, run_id = _target(preset, device, out, run_id, default)
    record = run_claims(claims, preset=preset, out=out, run_id=run_id, seed=seed, device=device,
                        parameters=parameters, show_progress=show_progress, workers=workers,
                        scheduler=scheduler, cache=cache, budget=budget)  # fmt: skip
    return RunResult(record, out / run_id)


def run(
    claim_id: str,
    preset: str = DEFAULT_PRESET,
    *,
    device: str = "cpu",
    seed: int = 0,
    out: str | Path = "results",
    run_id: str | None = None,
    workers: int = 1,
    **params,
) -> ClaimResult:
    """Run one claim at ``preset`` with ``params`` changed (as ``icl-verify run ID --preset P
    --set KEY=VALUE``) into ``out/run_id`` (default ``api-ID-PRESET-<time>``); ``workers``
    processes (1: here); the same ``run_id`` resumes. Returns its `ClaimResult`."""
    (claim,) = select_claims([claim_id])
    result = _run_many([claim_id], preset, None, {claim.id: params}, device, seed, out, run_id,
                       workers, None, None, None, False,
                       default=f"api-{claim_id}-{preset}")  # fmt: skip
    return result[claim.id]


def sweep(
    claim_id: str,
    grid: Mapping[str, Sequence] | Sequence[str],
    preset: str = DEFAULT_PRESET,
    *,
    zipped: bool = False,
    device: str = "cpu",
    seed: int = 0,
    out: str | Path = "results",
    run_id: str | None = None,
    workers: int | None = 1,
    scheduler: str | None = None,
    cache: str | Path | None = None,
    show_progress: bool = False,
    **params,
) -> SweepResult:
    """Run one claim at every point of ``grid`` (parameter -> values; their product, or with
    ``zipped`` their pairing), the other ``params`` changed at every point (as ``icl-verify
    sweep ID --grid KEY=VALUES --set KEY=VALUE``, whose front end this is: ``grid`` may also
    be its ``KEY=VALUES`` texts, e.g. ``["L=logspace:40:640:5"]``); its records and validity
    map. ``workers`` local processes (None: one per core) or the Dask ``scheduler``.

    >>> import tempfile
    >>> result = sweep("HE-T4.2ii", {"d": [3, 5]}, preset="smoke", out=tempfile.mkdtemp())
    >>> [(p.params["d"], p.verdict) for p in result.points]
    [(3, 'agrees'), (5, 'agrees')]
    """
    _checked_arguments(preset, out, run_id, seed, workers)
    (claim,) = select_claims([claim_id])
    _checked_values(claim, params)
    if isinstance(grid, Mapping):
        for key, values in grid.items():
            if isinstance(values, str) or not isinstance(values, Sequence | np.ndarray) or (
                len(values) == 0
            ):
                raise ParameterError(
                    f"{claim_id}: grid[{key!r}] must be a non-empty list of the values to "
                    f"sweep, got {values!r}"
                )
        texts = [f"{key}={json.dumps(list(_values({key: values})[key]))}"
                 for key, values in grid.items()]  # fmt: skip
    else:
        texts = list(grid)
    for key in (text.partition("=")[0].strip() for text in texts):
        if key in params:
            raise ParameterError(f"{claim_id}: {key} is both swept and set; sweep it or set it")
    base = claim_parameters([claim], preset, tables={claim.id: _values(params)})[claim.id]
    points = parse_grid(base, texts, zipped=zipped)
    device, out, run_id = _target(preset, device, out, run_id, f"api-sweep-{claim_id}")
    record = run_sweep(claim, points, preset=preset, out=out, run_id=run_id, seed=seed,
                       device=device, show_progress=show_progress, workers=workers,
                       scheduler=scheduler, cache=cache)  # fmt: skip
    return SweepResult(record, out / run_id)
