"""Sweeps: one claim run at every point of a parameter grid, kept in one results.json.

`parse_grid` turns `--grid KEY=...` arguments into a `Grid` of typed points: every
value is parsed and range-checked by the claim's parameter class (`Params.with_overrides`)
before any work, so a bad grid is one line naming the key and the point. `run_sweep` runs
the claim at each point by the path of `icl-verify run` (`runner.measure_claim`), on
every core or a Dask cluster (`executors.execute`), rewrites results.json atomically after
each point, and on a rerun of the same run id redoes only the points not finished (a
point is identified by its parameters).

Grid syntax, per `--grid` (several give their product, or with `--zip` their pairing):

- ``KEY=v1,v2,...``: the values as written (``d=5,10,20``);
- ``KEY=logspace:START:STOP:COUNT``: COUNT values from START to STOP, geometrically spaced;
- ``KEY=linspace:START:STOP:COUNT``: COUNT values, evenly spaced;
- ``KEY=[v1, v2, ...]``: a JSON list, the form for list parameters (``L_values=[[80,160],[40]]``).

Ranges of an integer parameter are rounded to integers and repeated values dropped; the
`Grid`'s notes say so (the command prints them):

>>> from icl_verify.validation.registry import select_claims
>>> claim = select_claims(["HE-MAN"])[0]
>>> grid = parse_grid(claim.presets["smoke"], ["d=logspace:2:8:4", "sigma2=0,0.5"])
>>> [point.label() for point in grid.points[:3]], len(grid.points)
(['d=2, sigma2=0', 'd=2, sigma2=0.5', 'd=3, sigma2=0'], 8)
>>> grid.notes
('--grid d=logspace:2:8:4: rounded to integers 2, 3, 5, 8',)
>>> try:
...     parse_grid(claim.presets["smoke"], ["d=3,0"])
... except ParameterError as error:
...     print(error)
--grid point 2 of 2 (d=0): d must be an integer in [1, 10000], got 0
"""

from __future__ import annotations

import itertools
import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
from icl_verify.validation.claim import Claim
from icl_verify.validation.executors import execute, in_process
from icl_verify.validation.params import ParameterError, Params, check_fits
from icl_verify.validation.records import RunRecord, SweepSpec, now
from icl_verify.validation.report import describe_values, draw_validity_map, write_report
from icl_verify.validation.runner import (
    ClaimTask,
    RunMismatchError,
    draw_missing_figures,
    open_run,
    progress_bar,
    run_task,
    store_as_finished,
)
from icl_verify.validation.runtime import derived_seed

MAX_POINTS = 10_000  # a grid larger than this is a typo (logspace:1:1e6:1e6), not a sweep
_RANGE = re.compile(r"(logspace|linspace):([^:]*):([^:]*):([^:]*)")


@dataclass(frozen=True)
class Axis:
    """One `--grid KEY=...`: the parameter and its values in order, as strings written on the
    command line, JSON values, or numbers of a range (parsed and checked by `parse_grid`)."""

    key: str
    values: tuple[Any, ...]
    note: str = ""  # what rounding changed in a range, "" when nothing


@dataclass(frozen=True)
class SweepPoint:
    """One grid point: the swept parameters' typed values and the claim's parameters there."""

    values: dict[str, Any]
    params: Params

    def label(self) -> str:
        """The swept values as ``key=value, ...``."""
        return describe_values(self.params.as_json(), tuple(self.values))


@dataclass(frozen=True)
class Grid:
    """The points of a sweep, in order: the product of the axes (first key slowest) or,
    with mode "zip", the axes paired element by element."""

    keys: tuple[str, ...]
    points: tuple[SweepPoint, ...]
    mode: str = "product"
    notes: tuple[str, ...] = ()  # what rounding did to integer ranges

    def spec(self, claim_id: str) -> SweepSpec:
        """The sweep's stored description (`records.SweepSpec`)."""
        points = tuple({k: p.params.as_json()[k] for k in self.keys} for p in self.points)
        return SweepSpec(claim_id, self.keys, self.mode, points)


def parse_axis(params: type[Params], text: str) -> Axis:
    """One `--grid` argument as an `Axis` of `params`'s field; ParameterError (one line) when
    the key is unknown or the values are empty or malformed.

    >>> from icl_verify.validation.params import SettingParams
    >>> parse_axis(SettingParams, "L=logspace:40:640:5").values
    (40, 80, 160, 320, 640)
    >>> parse_axis(SettingParams, "sigma2=linspace:0:1:3").values
    (0.0, 0.5, 1.0)
    >>> parse_axis(SettingParams, "d=5,,10")
    Traceback (most recent call last):
    ...
    icl_verify.validation.params.ParameterError: --grid d=5,,10: an empty value; write KEY=v1,v2,...
    """
    key, equals, spec = (part.strip() for part in text.partition("="))
    if not equals or not key or not spec:
        raise ParameterError(
            f"--grid must be KEY=VALUES, e.g. d=5,10,20 or L=logspace:40:640:5, got {text!r}"
        )
    kinds = {field.name: field.type for field in params.describe()}
    if key not in kinds:
        raise ParameterError(
            f"--grid {key}: no parameter {key!r}; known: {', '.join(sorted(kinds))} "
            "(see `icl-verify show ID`)"
        )
    if spec.startswith("["):
        try:
            values = json.loads(spec)
        except json.JSONDecodeError:
            values = None
        if not isinstance(values, list) or not values:
            raise ParameterError(f"--grid {key}: not a non-empty JSON list of values: {spec!r}")
        return Axis(key, tuple(values))
    match = _RANGE.fullmatch(spec)
    if match or spec.startswith(("logspace", "linspace")):
        return _range_axis(key, kinds[key], spec, match)
    if kinds[key].startswith("list of"):
        raise ParameterError(
            f"--grid {key}: {key} is a list parameter; write its values as a JSON list of "
            f"lists, e.g. {key}=[[80,160],[160,320]]"
        )
    items = tuple(item.strip() for item in spec.split(","))
    if not all(items):
        raise ParameterError(f"--grid {key}={spec}: an empty value; write KEY=v1,v2,...")
    return Axis(key, items)


def _range_axis(key: str, kind: str, spec: str, match: re.Match | None) -> Axis:
    """`logspace:a:b:n` / `linspace:a:b:n` of a number field; integers rounded, repeats dropped."""
    space = spec.split(":")[0]
    usage = f"--grid {key}={spec}: write {space}:START:STOP:COUNT, e.g. {key}={space}:40:640:5"
    try:
        start, stop, count = float(match[2]), float(match[3]), int(match[4])  # type: ignore[index]
    except (TypeError, ValueError):
        raise ParameterError(usage) from None
    if not (math.isfinite(start) and math.isfinite(stop)) or not 2 <= count <= MAX_POINTS:
        raise ParameterError(f"{usage} (finite START and STOP, COUNT in [2, {MAX_POINTS}])")
    if kind not in ("int", "float"):
        raise ParameterError(f"--grid {key}={spec}: {key} is {kind}; ranges need a number")
    if space == "logspace" and not (start > 0 and stop > 0):
        raise ParameterError(f"--grid {key}={spec}: logspace needs START > 0 and STOP > 0")
    raw = (np.geomspace if space == "logspace" else np.linspace)(start, stop, count)
    if kind == "float":
        return Axis(key, tuple(float(v) for v in raw))
    values = tuple(dict.fromkeys(math.floor(v + 0.5) for v in raw))
    dropped = count - len(values)
    note = f"--grid {key}={spec}: rounded to integers {', '.join(map(str, values))}" + (
        f" ({dropped} repeated value{'s' * (dropped > 1)} dropped)" if dropped else ""
    )
    return Axis(key, values, note)


def parse_grid(base: Params, texts: Sequence[str], zipped: bool = False) -> Grid:
    """The sweep's points: `base` (the preset with `--set` applied) at each combination of the
    `--grid` arguments `texts` (their product, or with `zipped` their pairing).

    Raises ParameterError, one line naming the key (and the point, for a value the claim's
    parameters refuse), before any work.
    """
    if not texts:
        raise ParameterError("--grid: give at least one, e.g. --grid d=5,10,20")
    axes = [parse_axis(type(base), text) for text in texts]
    keys = tuple(axis.key for axis in axes)
    for i, key in enumerate(keys):
        if key in keys[:i]:
            raise ParameterError(f"--grid {key}: given twice; one --grid per parameter")
    lengths = [len(axis.values) for axis in axes]
    if zipped and len(set(lengths)) > 1:
        given = ", ".join(f"{axis.key}: {n}" for axis, n in zip(axes, lengths, strict=True))
        raise ParameterError(f"--zip needs grids of equal lengths, got {given}")
    count = lengths[0] if zipped else math.prod(lengths)
    if count > MAX_POINTS:
        raise ParameterError(f"--grid: {count} points; a sweep has at most {MAX_POINTS}")
    columns = [axis.values for axis in axes]
    combinations = zip(*columns, strict=True) if zipped else itertools.product(*columns)
    points, seen = [], {}
    for i, combination in enumerate(combinations):
        written = dict(zip(keys, combination, strict=True))
        try:
            params = base.with_overrides(written)
            check_fits(params)
        except ParameterError as error:
            shown = ", ".join(f"{k}={v}" for k, v in written.items())
            raise ParameterError(f"--grid point {i + 1} of {count} ({shown}): {error}") from None
        point = SweepPoint({key: getattr(params, key) for key in keys}, params)
        identity = json.dumps(params.as_json(), sort_keys=True)
        if identity in seen:
            raise ParameterError(
                f"--grid points {seen[identity] + 1} and {i + 1} are the same ({point.label()}); "
                "list each value once"
            )
        seen[identity] = i
        points.append(point)
    notes = tuple(axis.note for axis in axes if axis.note)
    return Grid(keys, tuple(points), "zip" if zipped else "product", notes)


def point_seed(run_seed: int, claim_id: str, values: dict) -> int:
    """The measurement seed of one grid point, from the run seed, the claim id and the point's
    swept values (JSON form): the same point gets the same numbers in any sweep that holds it.

    >>> point_seed(0, "HE-MAN", {"d": 5}) == point_seed(0, "HE-MAN", {"d": 5})
    True
    >>> point_seed(0, "HE-MAN", {"d": 5}) != point_seed(0, "HE-MAN", {"d": 6})
    True
    """
    return derived_seed(run_seed, f"{claim_id}@{json.dumps(values, sort_keys=True)}")


def run_sweep(
    claim: Claim,
    grid: Grid,
    *,
    preset: str,
    out: Path,
    run_id: str,
    seed: int,
    device: str,
    show_progress: bool = False,
    workers: int | None = None,
    scheduler: str | None = None,
    cache: Path | None = None,
) -> RunRecord:
    """Run `claim` at every point of `grid` into `<out>/<run_id>/`; returns the sweep's record.

    A stored sweep of that run id must have the same claim, grid, preset and seed (and its
    finished points the same parameters: `RunMismatchError` otherwise); its finished points
    are kept, the others run through `executors.execute` (`workers` local processes, default
    one per core, or the Dask `scheduler`; the artefact cache `cache`, default
    `<out>/cache`). This process writes every file: each finished point's figures and
    results.json after it; at the end the points in grid order, the validity map and
    report.md.
    """
    run_dir = Path(out) / run_id
    spec = grid.spec(claim.id)
    record = open_run(run_dir, preset, seed, device)
    if record.sweep is None and not record.claims:
        record = replace(record, sweep=spec)
    elif record.sweep != spec:
        held = (
            f"a sweep of {record.sweep.claim} over another grid"
            if record.sweep
            else "a run of `icl-verify run`"
        )
        raise RunMismatchError(
            f"run-id {run_id!r} holds {held}; resume it with its own command or choose another "
            "--run-id"
        )
    wanted = {_identity(point.params.as_json()) for point in grid.points}
    for stored in record.claims:
        if _identity(stored.params) not in wanted:
            raise RunMismatchError(
                f"run-id {run_id!r} finished the point {describe_values(stored.params, spec.keys)} "
                "with other parameters; resume it with the same --set or choose another --run-id"
            )
    draw_missing_figures(record, run_dir)
    done = {_identity(stored.params) for stored in record.claims}
    todo = [
        (i, point, swept)
        for i, (point, swept) in enumerate(zip(grid.points, spec.points, strict=True))
        if _identity(point.params.as_json()) not in done
    ]
    nested = show_progress and in_process(len(todo), workers, scheduler)
    tasks = [
        ClaimTask(
            claim.id,
            point.params,
            preset,
            point_seed(seed, claim.id, swept),
            device,
            Path(cache or Path(out) / "cache"),
            nested,
            point=i,
            swept=swept,
        )
        for i, point, swept in todo
    ]
    results = execute(run_task, tasks, workers=workers, scheduler=scheduler)  # connects first
    record.save(run_dir)
    total = len(grid.points)
    bar = progress_bar(total, total - len(tasks), f"{claim.id} points", "point", show_progress)

    record, _ = store_as_finished(results, record, RunRecord.with_point, run_dir, bar)
    in_order = sorted(record.claims, key=lambda stored: spec.index(stored.params))
    record = replace(record, claims=tuple(in_order), finished=now())
    record.save(run_dir)
    draw_validity_map(record, run_dir)
    write_report(record, run_dir)
    return record


def _identity(params: dict) -> str:
    return json.dumps(params, sort_keys=True)
