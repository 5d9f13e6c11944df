"""Figure data of Chen, Zhao, Zou (2024)'s trained encoders (`figures.trained_encoders`): what
CZZ-HEADS, -IMPORTANCE, -PRUNE, -PPROBE and App. G's -G-DECODER, -G-DENSE, -G-CORRELATED
(`validation.claims.chen2024.trained_*`) measure for their figures, one class per figure.

A claim builds the class and stores ``to_record()``; the figure and the claim's table read it
back with ``from_record()``, passing what the claim's parameters already say (depths L, heads
h, (h, L) settings), so the record holds numbers only. The records keep the flat keys results.json
has always had (``L3_h4_mean``, ``h4_L3_pruned_se``, ``s0_weights``, ...), so every stored run
still renders; the keys are spelled here and nowhere else.

>>> gate = Regime(risk=1.9, ridge=1.5, gap=-0.4, gap_se=0.1, reached=False)
>>> record = DepthGates((3,), (gate,)).to_record()
>>> record["regime_reached"], record["L3_regime_risk"]
(0.0, 1.9)
>>> DepthGates.from_record(record, (3,)).at(3) == gate
True
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from icl_verify.figures.data import RiskScale as RiskScale  # the prediction side
from icl_verify.figures.data import fields_record, floats, read_fields

#: The baselines drawn beside the encoders' curves: minimum-norm OLS, tuned ridge, tuned Lasso.
BASELINES = ("ols", "ridge", "lasso")
#: The three models CZZ-PRUNE probes: the pruned and unpruned h-head models and the 1-head one.
PROBED = ("pruned", "unpruned", "one_head")


def _depth(L: int) -> str:
    """The record prefix of depth L's numbers."""
    return f"L{L}_"


def _model(L: int, h: int) -> str:
    """The record name of the (L, h) ensemble's curve."""
    return f"{_depth(L)}h{h}"


@dataclass(frozen=True)
class Regime:
    """Whether an ensemble is in the paper's regime: its models' excess risk at n = 10 against
    tuned ridge on the same prompts (`validation.claims.chen2024._encoders.regime`), the gate
    of the claims' checks. Stored as ``{prefix}regime_{field}``."""

    risk: float  # the models' mean excess risk at n = 10
    ridge: float  # tuned ridge on the same prompts
    gap: float  # ridge - risk, paired mean over members and prompts
    gap_se: float
    reached: bool  # the gap at least MAX_Z paired SEs

    @staticmethod
    def key(field: str, prefix: str = "") -> str:
        return f"{prefix}regime_{field}"

    def to_record(self, prefix: str = "") -> dict:
        return fields_record(self, self.key("", prefix))

    @classmethod
    def from_record(cls, data: Mapping, prefix: str = "") -> Regime:
        return read_fields(cls, data, cls.key("", prefix))


@dataclass(frozen=True)
class Judged:
    """Per depth L, whether its checks are judged (its models in the paper's regime; for
    CZZ-G-DENSE also a clear sparse gain), as the panels of Figures 1b, 3, 5-8, 10 say, and
    whether every depth is (``regime_reached``)."""

    layers: tuple[int, ...]
    reached: tuple[bool, ...]  # per depth

    @property
    def every(self) -> bool:
        return all(self.reached)

    def at(self, L: int) -> bool:
        return self.reached[self.layers.index(L)]

    def to_record(self) -> dict:
        record = {Regime.key("reached", _depth(L)): float(r)
                  for L, r in zip(self.layers, self.reached, strict=True)}  # fmt: skip
        return record | {Regime.key("reached"): float(self.every)}

    @classmethod
    def from_record(cls, data: Mapping, layers: Sequence[int]) -> Judged:
        return cls(tuple(layers), tuple(bool(data[Regime.key("reached", _depth(L))])
                                        for L in layers))  # fmt: skip


@dataclass(frozen=True)
class DepthGates:
    """One `Regime` per depth L (its h_max models): CZZ-HEADS's and CZZ-PRUNE's gates."""

    layers: tuple[int, ...]
    gates: tuple[Regime, ...]

    def at(self, L: int) -> Regime:
        return self.gates[self.layers.index(L)]

    @property
    def judged(self) -> Judged:
        return Judged(self.layers, tuple(g.reached for g in self.gates))

    def to_record(self) -> dict:
        record = {Regime.key("reached"): float(self.judged.every)}
        for L, gate in zip(self.layers, self.gates, strict=True):
            record |= gate.to_record(_depth(L))
        return record

    @classmethod
    def from_record(cls, data: Mapping, layers: Sequence[int]) -> DepthGates:
        return cls(tuple(layers), tuple(Regime.from_record(data, _depth(L)) for L in layers))


@dataclass(frozen=True)
class RiskCurves:
    """Figures 1b, 3, 10: ICL excess risk against n of every (L, h) ensemble and of the
    `BASELINES` on the same prompts, mean over replicates and prompts per noise level σ, with
    its SE.

    >>> zeros = np.zeros((1, 2, 1, 3))  # (depths, heads, σ, n)
    >>> curves = RiskCurves(np.array([4.0, 10.0, 16.0]), (3,), (1, 4), zeros, zeros,
    ...                     np.zeros((3, 1, 3)), np.zeros((3, 1, 3)))
    >>> sorted(curves.to_record())[:4]
    ['L3_h1_mean', 'L3_h1_se', 'L3_h4_mean', 'L3_h4_se']
    """

    n: np.ndarray  # (N,) in-context examples
    layers: tuple[int, ...]
    heads: tuple[int, ...]
    mean: np.ndarray  # (len(layers), len(heads), σ, N) the encoders' excess risk
    se: np.ndarray  # its SE, the same shape
    baseline_mean: np.ndarray  # (len(BASELINES), σ, N)
    baseline_se: np.ndarray

    def model(self, L: int, h: int) -> tuple[np.ndarray, np.ndarray]:
        """The (L, h) ensemble's mean and SE, (σ, N) each."""
        i, j = self.layers.index(L), self.heads.index(h)
        return self.mean[i, j], self.se[i, j]

    def baseline(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        """The baseline ``name`` (one of `BASELINES`): mean and SE, (σ, N) each."""
        k = BASELINES.index(name)
        return self.baseline_mean[k], self.baseline_se[k]

    def to_record(self) -> dict:
        record = {"n": self.n}
        names = [_model(L, h) for L in self.layers for h in self.heads] + list(BASELINES)
        means = [*self.mean.reshape(-1, *self.mean.shape[2:]), *self.baseline_mean]
        ses = [*self.se.reshape(-1, *self.se.shape[2:]), *self.baseline_se]
        for name, mean, se in zip(names, means, ses, strict=True):
            record |= {f"{name}_mean": mean, f"{name}_se": se}
        return record

    @classmethod
    def from_record(cls, data: Mapping, layers: Sequence[int], heads: Sequence[int]) -> RiskCurves:
        def stack(names, stat):
            return np.stack([floats(data[f"{name}_{stat}"]) for name in names])

        models = [_model(L, h) for L in layers for h in heads]
        shape = (len(layers), len(heads))
        return cls(
            floats(data["n"]), tuple(layers), tuple(heads),
            stack(models, "mean").reshape(*shape, -1, len(data["n"])),
            stack(models, "se").reshape(*shape, -1, len(data["n"])),
            stack(BASELINES, "mean"), stack(BASELINES, "se"),
        )  # fmt: skip


@dataclass(frozen=True)
class HeadsData:
    """CZZ-HEADS (Figures 1b, 3): the gate per depth and the risk curves."""

    gates: DepthGates
    curves: RiskCurves

    def to_record(self) -> dict:
        return self.gates.to_record() | self.curves.to_record()

    @classmethod
    def from_record(cls, data: Mapping, layers: Sequence[int], heads: Sequence[int]) -> HeadsData:
        gates = DepthGates.from_record(data, layers)
        return cls(gates, RiskCurves.from_record(data, layers, heads))


@dataclass(frozen=True)
class Gain:
    """CZZ-G-DENSE at one depth: the gain of h_max over h = 1 in null risks,
    G = (risk(h = 1) − risk(h_max)) / s, at s = d (dense) and at the sparse s, with SEs."""

    dense: float
    dense_se: float
    sparse: float
    sparse_se: float


@dataclass(frozen=True)
class DenseData:
    """CZZ-G-DENSE (Figure 10): the dense setting's curves, per depth the gains and the sparse
    models' gate, and which depths are judged (sparse models in the regime with a clear gain)."""

    curves: RiskCurves
    gains: tuple[Gain, ...]  # per depth
    sparse_gates: tuple[Regime, ...]  # per depth
    judged: Judged

    def to_record(self) -> dict:
        record = self.curves.to_record()
        for L, gain, gate in zip(self.judged.layers, self.gains, self.sparse_gates, strict=True):
            record |= fields_record(gain, f"{_depth(L)}gain_")
            record |= gate.to_record(f"{_depth(L)}sparse_")
        return record | self.judged.to_record()

    @classmethod
    def from_record(cls, data: Mapping, layers: Sequence[int], heads: Sequence[int]) -> DenseData:
        return cls(
            RiskCurves.from_record(data, layers, heads),
            tuple(read_fields(Gain, data, f"{_depth(L)}gain_") for L in layers),
            tuple(Regime.from_record(data, f"{_depth(L)}sparse_") for L in layers),
            Judged.from_record(data, layers),
        )


@dataclass(frozen=True)
class Probes:
    """One model's ridge-probe excess risk per representation (the embedding, then after each
    of its L layers): the mean over all models with its SE, (L + 1,) each, and per σ."""

    mean: np.ndarray  # (L + 1,)
    se: np.ndarray  # (L + 1,)
    per_sigma: np.ndarray  # (σ, L + 1)


@dataclass(frozen=True)
class PrunedSetting:
    """CZZ-PRUNE at one (h, L) (Figures 1d, 5-8): the heads each model kept and the `PROBED`
    models' probes."""

    heads: int
    layers: int
    kept: np.ndarray  # (E, L, heads kept) per model: every head of layer 1, one per later layer
    probes: tuple[Probes, ...]  # in the order of PROBED

    def probe(self, name: str) -> Probes:
        return self.probes[PROBED.index(name)]

    @staticmethod
    def _prefix(h: int, L: int) -> str:
        return f"h{h}_L{L}_"

    def to_record(self) -> dict:
        prefix = self._prefix(self.heads, self.layers)
        record = {f"{prefix}kept": self.kept}
        for name, probes in zip(PROBED, self.probes, strict=True):
            record |= fields_record(probes, f"{prefix}{name}_")
        return record

    @classmethod
    def from_record(cls, data: Mapping, heads: int, layers: int) -> PrunedSetting:
        prefix = cls._prefix(heads, layers)
        probes = tuple(read_fields(Probes, data, f"{prefix}{name}_") for name in PROBED)
        return cls(heads, layers, np.asarray(data[f"{prefix}kept"]), probes)


@dataclass(frozen=True)
class PruneData:
    """CZZ-PRUNE: the gate per depth and each pruned (h, L)."""

    gates: DepthGates
    settings: tuple[PrunedSetting, ...]

    def at(self, h: int, L: int) -> PrunedSetting:
        return next(s for s in self.settings if (s.heads, s.layers) == (h, L))

    def to_record(self) -> dict:
        record = self.gates.to_record()
        for setting in self.settings:
            record |= setting.to_record()
        return record

    @classmethod
    def from_record(cls, data: Mapping, settings: Sequence[tuple[int, int]]) -> PruneData:
        layers = tuple(dict.fromkeys(L for _, L in settings))
        return cls(DepthGates.from_record(data, layers),
                   tuple(PrunedSetting.from_record(data, h, L) for h, L in settings))  # fmt: skip


@dataclass(frozen=True)
class ProbePaths:
    """CZZ-PPROBE (Figure 2b): the gate, and per h the last query's excess risk along GD on
    the layer-1 states (mean and SE per σ and recorded step) and each model's chosen rate."""

    gate: Regime
    steps: np.ndarray  # (T,) recorded GD steps
    heads: tuple[int, ...]
    mean: np.ndarray  # (len(heads), σ, T)
    se: np.ndarray  # (len(heads), σ, T)
    rate: np.ndarray  # (len(heads), E)

    def to_record(self) -> dict:
        record = self.gate.to_record() | {"steps": self.steps}
        for h, mean, se, rate in zip(self.heads, self.mean, self.se, self.rate, strict=True):
            record |= {f"h{h}_mean": mean, f"h{h}_se": se, f"h{h}_rate": rate}
        return record

    @classmethod
    def from_record(cls, data: Mapping, heads: Sequence[int]) -> ProbePaths:
        def stack(stat):
            return np.stack([floats(data[f"h{h}_{stat}"]) for h in heads])

        return cls(Regime.from_record(data), floats(data["steps"]), tuple(heads), stack("mean"),
                   stack("se"), stack("rate"))  # fmt: skip


@dataclass(frozen=True)
class Settings:
    """The settings of a head-importance claim (CZZ-IMPORTANCE, -G-DECODER, -G-CORRELATED; the
    prediction side), one per training read: its design ζ, heads h and depth L.

    >>> settings = Settings(zeta=np.array([0.0, 0.4]), heads=np.array([4.0, 4.0]),
    ...                     layers=np.array([3.0, 3.0]))
    >>> settings.labels()
    ['ζ = 0', 'ζ = 0.4']
    >>> sorted(settings.to_record())
    ['setting_heads', 'setting_layers', 'setting_zeta']
    """

    zeta: np.ndarray  # (S,)
    heads: np.ndarray  # (S,)
    layers: np.ndarray  # (S,)

    @classmethod
    def of(cls, trainings: Sequence) -> Settings:
        """The settings of ``trainings`` (anything with ``zeta``, ``heads``, ``layers``)."""
        return cls(*(np.array([getattr(t, f.name) for t in trainings], dtype=float)
                     for f in dataclasses.fields(cls)))  # fmt: skip

    def __len__(self) -> int:
        return len(self.heads)

    def labels(self) -> list[str]:
        """A label per setting naming the fields that vary across the settings (h when none
        does), e.g. "ζ = 0.4, h = 4"."""
        symbols = {"zeta": "ζ", "heads": "h", "layers": "L"}
        columns = {name: getattr(self, name) for name in symbols}
        varying = [n for n in symbols if len(set(columns[n].tolist())) > 1] or ["heads"]
        return [", ".join(f"{symbols[n]} = {columns[n][i]:g}" for n in varying)
                for i in range(len(self))]  # fmt: skip

    def to_record(self) -> dict:
        return fields_record(self, "setting_")

    @classmethod
    def from_record(cls, data: Mapping) -> Settings:
        return read_fields(cls, data, "setting_")


@dataclass(frozen=True)
class HeadMap:
    """Head importance of one setting's models (Figures 1c, 4, 9, 11): W (3.1), the risk
    increases on masking with SEs, the intact risk, effective heads, App. B's sorted average
    and the share of models showing the paper's pattern."""

    weights: np.ndarray  # (E, L, h) W (3.1), rows summing to 1
    delta: np.ndarray  # (E, L, h) risk increase on masking each head
    delta_se: np.ndarray  # (E, L, h)
    intact: np.ndarray  # (E,) the intact model's excess risk
    effective: np.ndarray  # (E, L) effective heads 1/ΣW²
    sorted: np.ndarray  # (L, h) rows sorted, averaged over the models
    pattern_share: float


@dataclass(frozen=True)
class ImportanceData:
    """A head-importance claim's measurement: per setting its `HeadMap` and its gate."""

    maps: tuple[HeadMap, ...]
    gates: tuple[Regime, ...]

    @property
    def reached(self) -> bool:
        return all(g.reached for g in self.gates)

    def to_record(self) -> dict:
        record = {}
        for i, (head_map, gate) in enumerate(zip(self.maps, self.gates, strict=True)):
            record |= fields_record(head_map, f"s{i}_") | gate.to_record(f"s{i}_")
        return record | {Regime.key("reached"): float(self.reached)}

    @classmethod
    def from_record(cls, data: Mapping, count: int) -> ImportanceData:
        return cls(tuple(read_fields(HeadMap, data, f"s{i}_") for i in range(count)),
                   tuple(Regime.from_record(data, f"s{i}_") for i in range(count)))  # fmt: skip


@dataclass(frozen=True)
class Footnote:
    """CZZ-G-DECODER's footnote model (a smaller h or L, reported only): its excess risk at
    n = 10 against tuned ridge."""

    heads: int
    layers: int
    risk: float
    ridge: float
    gap_se: float

    def to_record(self, i: int) -> dict:
        return fields_record(self, f"footnote{i}_")

    @classmethod
    def from_record(cls, data: Mapping, i: int) -> Footnote:
        return read_fields(cls, data, f"footnote{i}_")
