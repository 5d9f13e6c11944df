"""Run records: the versioned schema of `results/<run-id>/results.json`.

One `RunRecord` per run: schema version, package/python/numpy/torch versions, git
commit (when available), device, seed, preset, start/finish times, and one
`ClaimRecord` per finished claim (id, source, statement, parameters, predicted and
measured values with errors, every check with its rule, justification and verdict,
seconds, figure paths, and the figure data, so figures can be redrawn from the
file alone). The runner rewrites the file atomically after each claim.

A sweep (`icl-verify sweep`) stores one `ClaimRecord` per grid point of its one claim
(the point's swept values in `params` and `overrides`) and a `sweep` field, a
`SweepSpec`; plain runs have no `sweep` field, so their files are as before.

Schema history: 1 - first version; 2 - typed claim parameters: `params` holds every
field of the claim's parameter class as used, `overrides` the fields set by the user
(--set, --config) that differ from the preset. A run stopped at its budget (`run --budget`)
adds an `unfinished` field (claim id -> why), absent from a finished run's file.
"""

from __future__ import annotations

import json
import platform
import subprocess
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, replace
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path, PurePosixPath
from typing import Any

import numpy as np
from icl_verify.validation.claim import CheckResult, Claim
from icl_verify.validation.estimates import (
    VERDICTS,
    Estimate,
    Measurement,
    Prediction,
    worst_verdict,
)
from icl_verify.validation.params import Params

from icl_verify._files import write_atomic

SCHEMA_VERSION = 2
RESULTS_FILE = "results.json"


def to_json(value):
    """Numbers and arrays (nested in dicts/lists) as JSON-ready Python objects; NaN/inf kept.

    >>> to_json({"a": np.array([1.0, 2.0]), "b": np.float64(3.0)})
    {'a': [1.0, 2.0], 'b': 3.0}
    """
    if isinstance(value, Mapping):
        return {str(k): to_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_json(v) for v in value]
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    return value


def estimate_json(estimate: Estimate) -> dict:
    """An `Estimate` as results.json stores it (`estimate_from_json` reads it back); the
    measured values of a `ClaimRecord`.

    >>> estimate_json(Estimate(0.25, 0.01))
    {'value': 0.25, 'error': 0.01, 'error_kind': 'se'}
    """
    return {"value": to_json(estimate.value), "error": to_json(estimate.error),
            "error_kind": estimate.error_kind}  # fmt: skip


def estimate_from_json(data: Mapping) -> Estimate:
    """The `Estimate` that `estimate_json` stored (a file without "error_kind": a standard error).

    >>> estimate_from_json({"value": [1.0, 2.0], "error": 0.5}).error
    array([0.5, 0.5])
    """
    return Estimate(data["value"], data["error"], data.get("error_kind", "se"))


class DamagedRunError(ValueError):
    """results.json exists but is no run record this version reads: truncated, not JSON, of
    another schema version or another program's file. The message is one line: the file,
    what is wrong with it and (from `load_run`) what to do."""


@dataclass(frozen=True)
class CheckRecord:
    """One check as stored: quantity, numbers, rule text, justification, verdict, score."""

    quantity: str
    label: str
    predicted: Any
    measured: Any
    error: Any
    error_kind: str
    rule: str
    justification: str
    verdict: str
    score: float
    statistic: str = ""  # what the rule judged, when it is not the values (`BoundTrend`'s slope)
    changes_at: str = ""  # the rule's tolerance at which the verdict would turn (`Rule.changes_at`)

    @classmethod
    def from_result(cls, result: CheckResult) -> CheckRecord:
        statistic = getattr(result.check.rule, "statistic", None)
        changes_at = getattr(result.check.rule, "changes_at", None)  # a plug-in's rule may lack it
        return cls(
            quantity=result.check.quantity,
            label=result.check.title,
            predicted=to_json(np.asarray(result.predicted, dtype=float)),
            measured=to_json(result.measured.value),
            error=to_json(result.measured.error),
            error_kind=result.measured.error_kind,
            rule=result.check.rule.describe(),
            justification=result.check.rule.justification,
            verdict=result.judgement.verdict,
            score=result.judgement.score,
            statistic=statistic(result.predicted, result.measured) if statistic else "",
            changes_at=changes_at(result.predicted, result.measured) if changes_at else "",
        )


@dataclass(frozen=True)
class ClaimRecord:
    """One finished claim as stored in results.json."""

    id: str
    source: str
    statement: str
    params: dict  # every parameter as used (`Params.as_json`)
    prediction: dict  # {"values": {...}, "figure_data": {...}}
    measurement: dict  # {"values": {name: {"value", "error", "error_kind"}}, "figure_data": {...}}
    checks: tuple[CheckRecord, ...]
    verdict: str
    seconds: float
    figures: tuple[str, ...]  # paths relative to the run folder
    device: str  # where it ran (a resumed run may finish on another device)
    overrides: dict = field(default_factory=dict)  # parameters the user changed from the preset
    tables: tuple[str, ...] = ()  # markdown tables of the claim (`Claim.table`)
    reconstructed: str = ""  # unconfirmed formulas it rests on (`Source.reconstruction`)

    @classmethod
    def build(
        cls,
        claim: Claim,
        params: Params,
        prediction: Prediction,
        measurement: Measurement,
        results: tuple[CheckResult, ...],
        seconds: float,
        figures: tuple[str, ...],
        device: str,
        preset: Params,
    ) -> ClaimRecord:
        used, base = params.as_json(), preset.as_json()
        return cls(
            id=claim.id,
            source=str(claim.source),
            statement=claim.statement,
            params=used,
            prediction={
                "values": to_json(dict(prediction.values)),
                "figure_data": to_json(dict(prediction.figure_data)),
            },
            measurement={
                "values": {k: estimate_json(v) for k, v in measurement.values.items()},
                "figure_data": to_json(dict(measurement.figure_data)),
            },
            checks=tuple(CheckRecord.from_result(r) for r in results),
            verdict=worst_verdict(r.judgement.verdict for r in results),
            seconds=seconds,
            figures=figures,
            device=device,
            overrides={k: v for k, v in used.items() if base.get(k) != v},
            tables=(claim.table(params, prediction, measurement),) if claim.table else (),
            reconstructed=claim.source.reconstruction,
        )

    def restored_params(self, claim: Claim) -> Params:
        """The stored parameters as the claim's parameter class (for redrawing figures)."""
        return claim.params.from_json(self.params)

    def restored_prediction(self) -> Prediction:
        """The stored prediction with lists back as float arrays (for redrawing figures)."""
        return Prediction(
            _arrays(self.prediction["values"]), _arrays(self.prediction["figure_data"])
        )

    def restored_measurement(self) -> Measurement:
        values = {k: estimate_from_json(v) for k, v in self.measurement["values"].items()}
        return Measurement(values, _arrays(self.measurement["figure_data"]))

    @classmethod
    def from_json(cls, data: dict) -> ClaimRecord:
        checks = tuple(CheckRecord(**check) for check in data["checks"])
        return cls(
            **{
                **data,
                "checks": checks,
                "figures": tuple(data["figures"]),
                "tables": tuple(data.get("tables", ())),
            }
        )


def _arrays(values: dict) -> dict:
    return {
        k: (np.asarray(v, dtype=float) if isinstance(v, list) else v) for k, v in values.items()
    }


@dataclass(frozen=True)
class SweepSpec:
    """What a sweep covers: its claim, the swept parameters and every grid point.

    `points` holds each point's swept values as JSON (`Params.as_json` form), in grid
    order; `mode` is "product" (every combination of the `--grid` lists) or "zip" (the
    lists paired element by element). A point's record is the `ClaimRecord` whose
    `params` carry these values.

    >>> spec = SweepSpec("HE-MAN", ("d",), "product", ({"d": 3}, {"d": 5}))
    >>> spec.index({"d": 5, "L": 40})
    1
    """

    claim: str
    keys: tuple[str, ...]
    mode: str  # "product" or "zip"
    points: tuple[dict, ...]

    def index(self, params: dict) -> int | None:
        """The grid index of the point whose swept values `params` (JSON form) has; None if none."""
        values = {key: params.get(key) for key in self.keys}
        return next((i for i, point in enumerate(self.points) if point == values), None)

    @classmethod
    def from_json(cls, data: dict) -> SweepSpec:
        return cls(data["claim"], tuple(data["keys"]), data["mode"], tuple(data["points"]))


@dataclass(frozen=True)
class RunRecord:
    """One run of `icl-verify run`: its metadata and the records of its finished claims."""

    run_id: str
    preset: str
    seed: int
    device: str
    started: str
    finished: str | None = None
    schema_version: int = SCHEMA_VERSION
    environment: dict = field(default_factory=dict)
    claims: tuple[ClaimRecord, ...] = ()
    sweep: SweepSpec | None = None  # set for `icl-verify sweep` runs only
    # claim id -> why it is not finished: a run stopped at its budget (`run --budget`); its
    # trainings are checkpointed, so running the same run id again continues them
    unfinished: dict[str, str] = field(default_factory=dict)

    @classmethod
    def start(cls, run_id: str, preset: str, seed: int, device: str) -> RunRecord:
        return cls(run_id, preset, seed, device, started=now(), environment=environment())

    def with_claim(self, record: ClaimRecord) -> RunRecord:
        kept = tuple(c for c in self.claims if c.id != record.id)
        unfinished = {k: v for k, v in self.unfinished.items() if k != record.id}
        return replace(self, claims=kept + (record,), finished=None, unfinished=unfinished)

    def with_point(self, record: ClaimRecord) -> RunRecord:
        """This sweep's record with `record` added, replacing a point of the same parameters."""
        kept = tuple(c for c in self.claims if c.params != record.params)
        return replace(self, claims=kept + (record,), finished=None)

    def finished_ids(self) -> set[str]:
        return {c.id for c in self.claims}

    def claim(self, claim_id: str) -> ClaimRecord | None:
        """The record of the finished claim ``claim_id``, or None."""
        return next((c for c in self.claims if c.id == claim_id), None)

    def verdict(self) -> str:
        return worst_verdict(c.verdict for c in self.claims)

    def to_json(self) -> str:
        data = asdict(self)
        if self.sweep is None:  # a plain run's file is as it was before sweeps existed
            del data["sweep"]
        if not self.unfinished:  # and a finished run's as before budgets existed
            del data["unfinished"]
        return json.dumps(to_json(data), indent=1, allow_nan=True)

    @classmethod
    def from_json(cls, text: str, where: str = RESULTS_FILE) -> RunRecord:
        """The record in `text`; `DamagedRunError` (one line, naming `where`) when it is none.

        Every field is checked for presence and JSON type before use, so a foreign or
        damaged file fails here and not later with a traceback.
        """
        try:
            data = json.loads(text)
        except ValueError as error:
            raise DamagedRunError(f"{where}: not valid JSON ({error})") from None
        except RecursionError:
            raise DamagedRunError(f"{where}: not valid JSON (nested too deeply)") from None
        if not isinstance(data, dict) or "schema_version" not in data:
            raise DamagedRunError(
                f"{where}: not an icl-verify results file (a JSON object with a schema_version)"
            )
        version = data["schema_version"]
        if version != SCHEMA_VERSION:
            raise DamagedRunError(
                f"{where}: schema_version must be {SCHEMA_VERSION}, got {_short(version)} "
                "(written by another version of icl-verify)"
            )
        problem = _run_problem(data)
        if problem is not None:
            raise DamagedRunError(
                f"{where}: not a run record of schema {SCHEMA_VERSION} ({problem})"
            )
        claims = tuple(ClaimRecord.from_json(c) for c in data["claims"])
        sweep = SweepSpec.from_json(data["sweep"]) if data.get("sweep") is not None else None
        return cls(**{**data, "claims": claims, "sweep": sweep})

    def save(self, run_dir: Path) -> None:
        """Write `<run_dir>/results.json` atomically."""
        write_atomic(Path(run_dir) / RESULTS_FILE, self.to_json())


#: What to do with a damaged results.json where it is only read (report, publish): nothing of
#: it can be recovered.
UNRECOVERABLE = "its numbers cannot be read back: run the claims again into a new folder"


def load_run(run_dir: Path | str, advice: str | None = None) -> RunRecord:
    """Read `<run_dir>/results.json`.

    Raises ValueError (one line) when there is none, and its subclass `DamagedRunError`
    (one line: the file, what is wrong, what to do) when it cannot be read as a run record
    of this schema. ``advice`` is what to do, for the command that reads it (default: that of
    a run resuming it, to delete the folder or choose another --run-id).
    """
    run_dir = Path(run_dir)
    path = run_dir / RESULTS_FILE
    if not path.exists():
        raise ValueError(f"results directory must contain {RESULTS_FILE}, none at {path}")
    if advice is None:
        advice = f"delete the folder {run_dir} or choose another --run-id"
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise DamagedRunError(f"{path}: not a text file (not UTF-8); {advice}") from None
    except OSError as error:
        reason = error.strerror or type(error).__name__
        raise DamagedRunError(f"{path}: cannot be read ({reason}); {advice}") from None
    try:
        return RunRecord.from_json(text, where=str(path))
    except DamagedRunError as error:
        raise DamagedRunError(f"{error}; {advice}") from None


# The JSON shape of schema 2: field -> JSON type(s) (object: any); fields that may be absent.
_NUMBER = (int, float)
_RUN_FIELDS = {
    "run_id": str, "preset": str, "seed": int, "device": str, "started": str,
    "finished": (str, type(None)), "schema_version": int, "environment": dict, "claims": list,
    "sweep": (dict, type(None)), "unfinished": dict,
}  # fmt: skip
_RUN_OPTIONAL = {"finished", "environment", "sweep", "unfinished"}
_SWEEP_FIELDS = {"claim": str, "keys": list, "mode": str, "points": list}
_SWEEP_MODES = ("product", "zip")
_CLAIM_FIELDS = {
    "id": str, "source": str, "statement": str, "params": dict, "prediction": dict,
    "measurement": dict, "checks": list, "verdict": str, "seconds": _NUMBER, "figures": list,
    "device": str, "overrides": dict, "tables": list, "reconstructed": str,
}  # fmt: skip
_CLAIM_OPTIONAL = {"overrides", "tables", "reconstructed"}
_CHECK_FIELDS = {
    "quantity": str, "label": str, "predicted": object, "measured": object, "error": object,
    "error_kind": str, "rule": str, "justification": str, "verdict": str, "score": _NUMBER,
    "statistic": str, "changes_at": str,
}  # fmt: skip
_CHECK_OPTIONAL = {"statistic", "changes_at"}


def value_text(value: Any) -> str:
    """A stored number, or the first three values of a stored list (nested lists read as one
    flat list; one value, or every value equal, printed once), for one line of text.

    >>> value_text([0.123456, 2.0, 3.0, 4.0]), value_text(1e-7), value_text("agrees")
    ('[0.1235, 2, 3, …]', '1e-07', 'agrees')
    >>> value_text([[[0.0]]]), value_text([[1.5, 1.5], [1.5, 1.5]])
    ('0', '1.5 (each of 4)')
    """
    if isinstance(value, list):
        flat = list(_flattened(value))
        if flat and all(v == flat[0] for v in flat):
            return value_text(flat[0]) + (f" (each of {len(flat)})" if len(flat) > 1 else "")
        shown = ", ".join(value_text(v) for v in flat[:3])
        return f"[{shown}{', …' if len(flat) > 3 else ''}]"
    return f"{value:.4g}" if isinstance(value, float) else str(value)


def _flattened(value: Any):
    """The leaves of nested lists, in order."""
    for item in value:
        yield from _flattened(item) if isinstance(item, list) else (item,)


def _short(value: Any) -> str:
    """repr of a value from a file, cut to 60 characters (one line: repr escapes newlines)."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _shape_problem(data: Any, fields: dict, optional: set, what: str) -> str | None:
    """What is wrong with the JSON object `data` against `fields`, or None."""
    if not isinstance(data, dict):
        return f"{what} must be an object, got {type(data).__name__}"
    unknown = sorted(set(data) - set(fields))
    if unknown:
        return f"{what} has an unknown field {_short(unknown[0])}"
    missing = sorted(set(fields) - set(data) - optional)
    if missing:
        return f"{what} lacks the field {missing[0]!r}"
    for name, kind in fields.items():
        value = data.get(name)
        if name in data and kind is not object:
            if not isinstance(value, kind) or isinstance(value, bool):
                return f"{what}.{name} has the wrong type ({type(value).__name__})"
    return None


def _run_problem(data: dict) -> str | None:
    """What is wrong with a parsed results.json of the current schema version, or None."""
    problem = _shape_problem(data, _RUN_FIELDS, _RUN_OPTIONAL, "the run")
    if problem is None and data.get("sweep") is not None:
        problem = _sweep_problem(data["sweep"])
    for i, claim in enumerate(data.get("claims", []) if problem is None else ()):
        problem = _claim_problem(claim, f"claims[{i}]")
        if problem is not None:
            break
    return problem


def _sweep_problem(sweep: dict) -> str | None:
    """What is wrong with a stored `SweepSpec`, or None."""
    problem = _shape_problem(sweep, _SWEEP_FIELDS, set(), "the sweep")
    if problem is not None:
        return problem
    if sweep["mode"] not in _SWEEP_MODES:
        return f"the sweep's mode must be product or zip, got {_short(sweep['mode'])}"
    if not all(isinstance(key, str) for key in sweep["keys"]):
        return "the sweep's keys must be strings"
    for point in sweep["points"]:
        if not isinstance(point, dict) or set(point) != set(sweep["keys"]):
            return f"the sweep's points must be objects of its keys, got {_short(point)}"
    return None


def _claim_problem(claim: Any, what: str) -> str | None:
    problem = _shape_problem(claim, _CLAIM_FIELDS, _CLAIM_OPTIONAL, what)
    if problem is not None:
        return problem
    if claim["verdict"] not in VERDICTS:
        return (
            f"{what}.verdict must be one of {', '.join(VERDICTS)}, got {_short(claim['verdict'])}"
        )
    for part in ("prediction", "measurement"):
        if set(claim[part]) != {"values", "figure_data"} or not all(
            isinstance(v, dict) for v in claim[part].values()
        ):
            return f"{what}.{part} must be an object of 'values' and 'figure_data' objects"
    for name, estimate in claim["measurement"]["values"].items():
        try:
            estimate_from_json(estimate)
        except (KeyError, TypeError, ValueError, AttributeError):
            return f"{what}.measurement value {_short(name)} is not an estimate"
    for j, check in enumerate(claim["checks"]):
        problem = _shape_problem(check, _CHECK_FIELDS, _CHECK_OPTIONAL, f"{what}.checks[{j}]")
        if problem is not None:
            return problem
        if check["verdict"] not in VERDICTS:
            return f"{what}.checks[{j}].verdict is not a verdict: {_short(check['verdict'])}"
    for figure in claim["figures"]:
        path = PurePosixPath(figure) if isinstance(figure, str) else None
        if path is None or not figure or path.is_absolute() or ".." in path.parts:
            return f"{what}.figures must be paths inside the run folder, got {_short(figure)}"
    return None


def now() -> str:
    """The current UTC time, ISO 8601 to the second."""
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def environment() -> dict[str, str | None]:
    """Versions of the package, python, numpy, torch (if installed) and the git commit (if any)."""

    def version(package: str) -> str | None:
        try:
            return metadata.version(package)
        except metadata.PackageNotFoundError:
            return None

    return {
        "package_version": version("icl-verify"),
        "git_commit": _git_commit(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "torch": version("torch"),
        "platform": platform.platform(),
    }


def _git_commit() -> str | None:
    """HEAD's hash, with " (modified)" when tracked files differ from it; None outside git."""

    def git(*args: str) -> str | None:
        try:
            result = subprocess.run(
                ["git", *args],
                cwd=Path(__file__).resolve().parent,
                capture_output=True,
                text=True,
                timeout=5,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired):
            return None
        return result.stdout.strip() if result.returncode == 0 else None

    commit = git("rev-parse", "HEAD")
    if not commit:
        return None
    return commit + (" (modified)" if git("status", "--porcelain", "--untracked-files=no") else "")
