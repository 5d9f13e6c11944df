"""The faster arithmetic of Chen et al.'s encoders proven harmless, claim by claim (issue 36,
item 4; DESIGN "Numerics conventions": it earns its place only once it gives the float32 path's
verdicts and values within error bars).

Each trained Chen claim runs with ``precision`` float32 and with a faster one, at training seeds
0 and 1, on the same prompts (the same run seed); every check's verdict must be the same, and
every measured value with a standard error (the checks' values and the figure data's
``X``/``X_mean`` beside ``X_se``: risk curves, head-importance deltas, the regime gate's gap)
must agree within the combined error bars, ``|a - b| <= z sqrt(se_a^2 + se_b^2)``, z the
two-sided Bonferroni bound at family-wise level 1% over the values compared for the claim.
Both runs read the same prompts, so their sampling noise is shared and the combined SE
overstates the noise of the difference: the bound is conservative, and a difference beyond it
is the arithmetic's.

- CPU (in ``make test``): bf16 against float32 at the smoke preset, the four main claims and
  App. G's decoder (the decoder path), ~1 min on one core;
- CUDA (marker ``cuda``; the GPU stage): tf32 and bf16 against float32 at the quick preset,
  all seven trained claims; prints a table per claim, precision and seed:

    pytest -m cuda -s tests/validation/test_encoder_precision_claims.py
"""

import dataclasses
import math
from statistics import NormalDist

import numpy as np
import pytest
from icl_verify.numerics._core import encoder as numerics_encoder
from icl_verify.validation.cache import ArtefactCache
from icl_verify.validation.claims.chen2024 import _encoders as encoders
from icl_verify.validation.params import ParameterError
from icl_verify.validation.registry import select_claims
from icl_verify.validation.runner import measure_claim
from icl_verify.validation.runtime import Runtime, derived_seed

MAIN = ("CZZ-HEADS", "CZZ-IMPORTANCE", "CZZ-PRUNE", "CZZ-PPROBE")
APP_G = ("CZZ-G-DECODER", "CZZ-G-DENSE", "CZZ-G-CORRELATED")
SEEDS = (0, 1)  # train_seed: two independent trainings per precision
FAMILY_LEVEL = 0.01  # family-wise level of the Bonferroni bound, per claim


def _with_se(record) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """name -> (values, SEs) of everything the record measured with a standard error."""
    pairs = {}
    for check in record.checks:
        if check.error_kind == "se":
            pairs[f"check {check.quantity}"] = (check.measured, check.error)
    data = record.measurement["figure_data"]
    for key in data:
        if key.endswith("_se"):
            base = key[: -len("_se")]
            value = base if base in data else f"{base}_mean"
            if value in data:
                pairs[value] = (data[value], data[key])
    return {
        name: (np.asarray(v, dtype=float).ravel(), np.asarray(s, dtype=float).ravel())
        for name, (v, s) in pairs.items()
    }


@dataclasses.dataclass(frozen=True)
class Comparison:
    """One claim at one precision and training seed against float32."""

    claim: str
    precision: str
    seed: int
    verdicts_equal: bool
    ratios: np.ndarray  # |a - b| / sqrt(se_a^2 + se_b^2) per value compared
    worst: str  # the value of the largest ratio

    def row(self) -> str:
        largest = float(self.ratios.max())
        return (f"{self.claim:18} {self.precision:6} {self.seed:4}  "
                f"{'yes' if self.verdicts_equal else 'NO':14} {largest:9.2f}  "
                f"{len(self.ratios):5}  {self.worst}")  # fmt: skip


HEADER = (f"{'claim':18} {'prec.':6} {'seed':>4}  {'verdicts equal':14} {'max Δ/SE':>9}  "
          f"{'n':>5}  worst")  # fmt: skip


def compare(exact, fast, precision: str, seed: int) -> Comparison:
    """The records of one claim at float32 (``exact``) and at ``precision`` (``fast``)."""
    verdicts = [c.verdict for c in exact.checks] == [c.verdict for c in fast.checks]
    a, b = _with_se(exact), _with_se(fast)
    assert a.keys() == b.keys()
    ratios, names = [], []
    for name, (value_a, se_a) in a.items():
        value_b, se_b = b[name]
        assert np.array_equal(np.isfinite(value_a), np.isfinite(value_b)), name
        delta, se = np.abs(value_a - value_b), np.hypot(se_a, se_b)
        finite = np.isfinite(value_a) & np.isfinite(se)
        with np.errstate(divide="ignore", invalid="ignore"):  # a change with SE 0 is infinite
            ratio = np.where(delta == 0, 0.0, delta / se)
        ratios.append(ratio[finite])
        names += [name] * int(finite.sum())
    ratios = np.concatenate(ratios)
    return Comparison(exact.id, precision, seed, verdicts, ratios, names[int(ratios.argmax())])


def bonferroni_z(count: int) -> float:
    """Two-sided z of family-wise level `FAMILY_LEVEL` over ``count`` comparisons."""
    return NormalDist().inv_cdf(1 - FAMILY_LEVEL / (2 * count))


@pytest.fixture(scope="module")
def claim_record(tmp_path_factory):
    """``claim_record(id, preset, precision, train_seed, device)``: the claim's record, with
    one artefact cache for the module (the claims share their trainings) and the run seed the
    runner gives the claim at seed 0 (the same prompts at every precision)."""
    cache = ArtefactCache(tmp_path_factory.mktemp("cache"))
    done = {}

    def record(claim_id: str, preset: str, precision: str, seed: int, device: str):
        key = (claim_id, preset, precision, seed, device)
        if key not in done:
            (claim,) = select_claims([claim_id])
            params = dataclasses.replace(claim.presets[preset], precision=precision,
                                         train_seed=seed)  # fmt: skip
            runtime = Runtime(device, derived_seed(0, claim_id), cache)
            done[key] = measure_claim(claim, params, runtime, preset)
        return done[key]

    return record


def _compared(claim_record, claim_id, preset, precision, device) -> list[Comparison]:
    return [
        compare(claim_record(claim_id, preset, "float32", seed, device),
                claim_record(claim_id, preset, precision, seed, device), precision, seed)
        for seed in SEEDS
    ]  # fmt: skip


def _assert_harmless(comparisons: list[Comparison]) -> None:
    z = bonferroni_z(sum(len(c.ratios) for c in comparisons))
    print("", HEADER, *(c.row() for c in comparisons), f"z = {z:.2f}", sep="\n")
    for c in comparisons:
        assert c.verdicts_equal, f"{c.claim} seed {c.seed}: verdicts differ at {c.precision}"
        assert c.ratios.max() <= z, (
            f"{c.claim} seed {c.seed} at {c.precision}: {c.worst} differs by "
            f"{c.ratios.max():.2f} combined SEs (z = {z:.2f})"
        )


def test_the_claims_offer_the_precisions_of_the_encoder():
    assert encoders.PRECISIONS == numerics_encoder.PRECISIONS
    params = select_claims(["CZZ-HEADS"])[0].presets["smoke"]
    assert params.precision == "float32"
    with pytest.raises(ParameterError, match=r"^precision must be one of float32, tf32, bf16, "
                                             r"got 'fp16'$"):  # fmt: skip
        dataclasses.replace(params, precision="fp16")


@pytest.mark.parametrize("claim_id", [*MAIN, "CZZ-G-DECODER"])
def test_bf16_gives_the_float32_verdicts_and_values_on_the_cpu(claim_record, claim_id):
    comparisons = _compared(claim_record, claim_id, "smoke", "bf16", "cpu")
    assert all(len(c.ratios) > 0 for c in comparisons)
    _assert_harmless(comparisons)


def test_the_comparison_sees_a_difference_beyond_the_error_bars():
    # a record against itself with one value moved by 5 combined SEs: the ratio says so
    class Check:
        def __init__(self, measured):
            self.quantity, self.verdict, self.error_kind = "x", "agrees", "se"
            self.measured, self.error = measured, [0.1, 0.1]

    class Record:
        id = "X"

        def __init__(self, measured):
            self.checks = [Check(measured)]
            self.measurement = {"figure_data": {"curve_mean": [1.0], "curve_se": [0.0]}}

    moved = compare(Record([1.0, 2.0]), Record([1.0, 2.0 + 5 * math.hypot(0.1, 0.1)]), "bf16", 0)
    assert moved.ratios.tolist() == pytest.approx([0.0, 5.0, 0.0])
    assert moved.worst == "check x" and bonferroni_z(3) < 5


@pytest.mark.cuda
@pytest.mark.parametrize("precision", ["tf32", "bf16"])
def test_the_matrix_units_give_the_float32_verdicts_and_values_on_cuda(claim_record, precision):
    comparisons = []
    for claim_id in (*MAIN, *APP_G):
        comparisons += _compared(claim_record, claim_id, "quick", precision, "cuda")
    print(f"\n{precision} against float32 at the quick preset on CUDA, per claim:")
    for claim_id in (*MAIN, *APP_G):
        _assert_harmless([c for c in comparisons if c.claim == claim_id])
