"""Verdicts across seed sets: whether a verdict is the claim's or the draw's.

A *seed set* k is one complete choice of randomness: the run seed ``seed + k`` (every claim's
Monte Carlo and training streams derive from it, `runtime.derived_seed`) and every parameter
of a claim that names a seed of its setting (``train_seed``, ``design_seed``, ``points_seed``:
fields ending in ``_seed``) moved by ``k * SEED_SET_STRIDE``, so that no member, start or
prompt of one set is drawn again in another (an ensemble's member e has seed ``train_seed +
e``, and no ensemble has `SEED_SET_STRIDE` members). Set 0 is the plain run.

`run_seed_sets` runs claims under K sets, each an ordinary resumable run
(``<out>/<run_id>-set<k>``); `compare` reads them into a `Stability`: per claim its verdict in
every set, per check its verdict and measurement in every set, and what moved. A check
*flips* when one set says agrees and another disagrees: its error bar left out the variation
of the draw. A claim whose verdict differs between sets is *seed-dependent*.

>>> from icl_verify.validation.registry import select_claims
>>> params = select_claims(["HE-OBS1"])[0].parameters("quick")
>>> seed_set_overrides(params, 2) == {"train_seed": params.train_seed + 2 * SEED_SET_STRIDE}
True
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from icl_verify.validation.claim import Claim
from icl_verify.validation.estimates import AGREES, DISAGREES
from icl_verify.validation.params import Params
from icl_verify.validation.records import RunRecord, load_run
from icl_verify.validation.report import format_measured
from icl_verify.validation.runner import claim_parameters, run_claims

from icl_verify._files import write_atomic

__all__ = ["SEED_SET_STRIDE", "CheckAcrossSets", "ClaimAcrossSets", "Stability", "compare",
           "run_seed_sets", "seed_set_overrides", "STABILITY_FILE"]  # fmt: skip

#: How far set k moves each seed of a setting: a prime above any ensemble's member count.
SEED_SET_STRIDE = 10_007
STABILITY_FILE = "stability.json"


def _seed_fields(params: Params) -> list[str]:
    return [f.name for f in dataclasses.fields(params) if f.name.endswith("_seed")]


def seed_set_overrides(params: Params, k: int) -> dict[str, int]:
    """The seed parameters of ``params`` (a claim's) moved to seed set ``k``: every field
    ending in ``_seed``, plus ``k * SEED_SET_STRIDE`` (none for a setting that names no seed)."""
    return {name: getattr(params, name) + k * SEED_SET_STRIDE for name in _seed_fields(params)}


def run_seed_sets(
    claims: Sequence[Claim],
    *,
    sets: int,
    preset: str,
    out: Path,
    run_id: str,
    seed: int,
    device: str,
    parameters: Mapping[str, Params] | None = None,
    budget: float | None = None,
    **options,
) -> list[RunRecord]:
    """Run ``claims`` under seed sets 0..``sets``-1 (`seed_set_overrides`), each into
    ``<out>/<run_id>-set<k>`` with `runner.run_claims` (``options``: its workers, cache,
    progress...); a set already finished is read back, an unfinished one continues. ``budget``
    (seconds) bounds all sets together: a set the deadline stops is returned unfinished and
    later sets are not started. Returns the records of the sets run, in order."""
    deadline = None if budget is None else time.time() + budget
    base = dict(parameters or claim_parameters(claims, preset))
    records = []
    for k in range(sets):
        moved = {claim_id: dataclasses.replace(params, **seed_set_overrides(params, k))
                 for claim_id, params in base.items()}  # fmt: skip
        left = None if deadline is None else deadline - time.time()
        record = run_claims(claims, preset=preset, out=out, run_id=f"{run_id}-set{k}",
                            seed=seed + k, device=device, parameters=moved,
                            budget=left if left is None or left > 0 else 1e-3,
                            **options)  # fmt: skip
        records.append(record)
        if record.unfinished:
            break
    return records


@dataclass(frozen=True)
class CheckAcrossSets:
    """One check in every seed set: its verdicts and measurements (`report.format_measured`)."""

    label: str
    verdicts: tuple[str, ...]
    measured: tuple[str, ...]

    @property
    def flips(self) -> bool:
        """One set agrees and another disagrees."""
        return AGREES in self.verdicts and DISAGREES in self.verdicts

    @property
    def stable(self) -> bool:
        return len(set(self.verdicts)) == 1


@dataclass(frozen=True)
class ClaimAcrossSets:
    """One claim in every seed set."""

    id: str
    verdicts: tuple[str, ...]
    checks: tuple[CheckAcrossSets, ...]

    @property
    def stable(self) -> bool:
        return len(set(self.verdicts)) == 1

    @property
    def counts(self) -> dict[str, int]:
        """How many sets gave each verdict, e.g. {"agrees": 1, "inconclusive": 1}."""
        return {v: self.verdicts.count(v) for v in sorted(set(self.verdicts))}

    @property
    def stability(self) -> str:
        """The claim's stability in a few words: "stable over 2 seed sets", or the counts."""
        if self.stable:
            return f"stable over {len(self.verdicts)} seed sets"
        counts = ", ".join(f"{n} {verdict}" for verdict, n in self.counts.items())
        return f"seed-dependent: {counts}"


@dataclass(frozen=True)
class Stability:
    """Claims across seed sets: ``runs`` the sets' run ids, in order."""

    preset: str
    runs: tuple[str, ...]
    claims: tuple[ClaimAcrossSets, ...]

    def flipping(self) -> list[tuple[str, CheckAcrossSets]]:
        """Every check that agrees in one set and disagrees in another, with its claim."""
        return [(c.id, check) for c in self.claims for check in c.checks if check.flips]

    def as_json(self) -> dict:
        return {"preset": self.preset, "runs": list(self.runs),
                "claims": {c.id: {"verdicts": list(c.verdicts), "stability": c.stability,
                                  "checks": [dataclasses.asdict(k) for k in c.checks]}
                           for c in self.claims}}  # fmt: skip

    def save(self, path: Path) -> None:
        write_atomic(Path(path), json.dumps(self.as_json(), indent=1) + "\n")

    def markdown(self) -> str:
        """A table per claim of its verdict per set, then each check that is not stable."""
        head = " | ".join(f"set {k}" for k in range(len(self.runs)))
        lines = [f"# Verdicts across {len(self.runs)} seed sets ({self.preset})", "",
                 f"Runs: {', '.join(self.runs)}. A check *flips* when one set agrees and "
                 "another disagrees.", "", f"| claim | {head} | stability |",
                 "|---" * (len(self.runs) + 2) + "|"]  # fmt: skip
        for c in self.claims:
            lines.append(f"| {c.id} | {' | '.join(c.verdicts)} | {c.stability} |")
        moved = [(c.id, k) for c in self.claims for k in c.checks if not k.stable]
        lines += ["", "## Checks whose verdict differs between sets", ""]
        for cid, k in moved:
            sets = enumerate(zip(k.verdicts, k.measured, strict=True))
            lines.append(f"- {'**flips** ' if k.flips else ''}{cid}, {k.label}: "
                         + "; ".join(f"set {i}: {m} ({v})" for i, (v, m) in sets))
        if not moved:
            lines.append("None.")
        return "\n".join(lines) + "\n"


def compare(records: Sequence[RunRecord] | Sequence[Path]) -> Stability:
    """The claims finished in every one of ``records`` (run records or run folders), across
    them; a check is matched by its label."""
    runs = [load_run(r) if isinstance(r, str | Path) else r for r in records]
    common = [c.id for c in runs[0].claims if all(r.claim(c.id) is not None for r in runs)]
    claims = []
    for claim_id in common:
        per_set = [r.claim(claim_id) for r in runs]
        labels = [c.label for c in per_set[0].checks
                  if all(any(k.label == c.label for k in s.checks) for s in per_set)]  # fmt: skip
        checks = []
        for label in labels:
            found = [next(k for k in s.checks if k.label == label) for s in per_set]
            checks.append(CheckAcrossSets(label, tuple(k.verdict for k in found),
                                          tuple(format_measured(k) for k in found)))  # fmt: skip
        claims.append(ClaimAcrossSets(claim_id, tuple(s.verdict for s in per_set),
                                      tuple(checks)))  # fmt: skip
    return Stability(runs[0].preset, tuple(r.run_id for r in runs), tuple(claims))
