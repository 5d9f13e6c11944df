"""The claim, the unit of icl-verify: a paper's statement, its prediction, a measurement, a rule.

A `Claim` (DESIGN.md, "The claim") knows its `Source`, a one-sentence statement,

- `params`: its parameters, a frozen `validation.params.Params` subclass, with the
  `presets` smoke/quick/paper declared beside the claim as instances;
- `predict(params) -> Prediction`: the theory's numbers (from `theory` / `dynamics`);
- `measure(params, runtime) -> Measurement`: the simulation's numbers, each an
  `Estimate` (value with its standard error or error bound; `validation.estimates`);
- `checks(params) -> tuple[Check, ...]`: which quantity is compared by which
  agreement rule of `validation.rules` (`ZScore`, `LogLogSlope`, `Tolerance`, the one-sided
  `Inequality` and `BoundTrend`), each with its justification;
- `figure`: a function of `icl_verify.figures` drawing theory and measurement side
  by side from the stored numbers only, so that `icl-verify report` can redraw it
  without re-running, named by a `FigureRef` (imported only when drawn);
- `wrong(params, prediction)`: a deliberately wrong prediction, which its rules
  must call `disagrees` (the registry test feeds it to every claim; `scaled`, `shifted`).

`evaluate` applies a claim's checks to its prediction and measurement (`CheckResult`s); a
claim takes the worst verdict of its checks.
"""

from __future__ import annotations

import ast
import functools
import importlib
import importlib.util
import pkgutil
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from icl_verify.validation.estimates import Estimate, Judgement, Measurement, Prediction
from icl_verify.validation.params import ParameterError, Params
from icl_verify.validation.rules import Rule
from icl_verify.validation.training import TrainedParams

#: The reference catalogues' tags of a formula whose form the paper's text does not confirm, and
#: what each says: [RECON] a stripped formula reconstructed from the prose, [OPEN] one the
#: catalogue could not pin down (the claim checks the reference's own reading).
RECONSTRUCTION_TAGS = {"RECON": "reconstructed from the prose", "OPEN": "not pinned down"}


@dataclass(frozen=True)
class Reconstructed:
    """A formula a claim's prediction rests on that the paper's text does not confirm, as the
    paper's reference catalogue tags it (`RECONSTRUCTION_TAGS`): its entry there (a heading's id,
    e.g. "HE-MAN", or a section number, e.g. "5") and the tag, "RECON" or "OPEN". Where such a
    claim disagrees, the reconstruction may be what is wrong, not the paper.

    >>> print(Reconstructed("(4.7), the group sums of S_ω", "HE-MAN", "RECON"))
    (4.7), the group sums of S_ω: reconstructed from the prose (reference §HE-MAN [RECON])
    >>> Reconstructed("(4.7)", "HE-MAN", "GUESS")
    Traceback (most recent call last):
    ValueError: tag must be one of RECON, OPEN (the catalogue's tags), got 'GUESS'
    """

    formula: str  # what the prediction uses, e.g. "(4.7), the group sums of S_ω"
    entry: str  # where the catalogue tags it: "HE-MAN" (### HE-MAN ...) or "5" (## 5. ...)
    tag: str  # "RECON" or "OPEN"

    def __post_init__(self) -> None:
        if not isinstance(self.formula, str) or not self.formula.strip() or "\n" in self.formula:
            raise ValueError(f"formula must name the formula on one line, got {self.formula!r}")
        if not isinstance(self.entry, str) or not re.fullmatch(r"[A-Z][A-Za-z0-9.-]*|\d+",
                                                               self.entry):  # fmt: skip
            raise ValueError(f"entry must be a catalogue entry's id (e.g. HE-MAN) or a section "
                             f"number (e.g. 5), got {self.entry!r}")  # fmt: skip
        if self.tag not in RECONSTRUCTION_TAGS:
            raise ValueError(f"tag must be one of {', '.join(RECONSTRUCTION_TAGS)} (the "
                             f"catalogue's tags), got {self.tag!r}")  # fmt: skip

    def __str__(self) -> str:
        return (f"{self.formula}: {RECONSTRUCTION_TAGS[self.tag]} "
                f"(reference §{self.entry} [{self.tag}])")  # fmt: skip


@dataclass(frozen=True)
class Source:
    """Where a claim is stated: paper key, section and equation (or figure/table) labels, and
    the formulas its prediction rests on that the paper's text does not confirm
    (`Reconstructed`; one or a tuple).

    >>> source = Source("He et al. 2025", "4.2", "(4.6)-(4.8)",
    ...                 Reconstructed("(4.7)", "HE-MAN", "RECON"))
    >>> print(source); print(source.reconstruction)
    He et al. 2025, §4.2, eq. (4.6)-(4.8)
    (4.7): reconstructed from the prose (reference §HE-MAN [RECON])
    """

    paper: str  # e.g. "He et al. 2025"
    section: str  # e.g. "4.3, App. D.2"
    equation: str = ""  # e.g. "(4.13)"
    reconstructed: tuple[Reconstructed, ...] = ()  # unconfirmed formulas the prediction uses

    def __post_init__(self) -> None:
        flags = self.reconstructed
        flags = (flags,) if isinstance(flags, Reconstructed) else flags
        if not isinstance(flags, tuple) or not all(isinstance(f, Reconstructed) for f in flags):
            raise ValueError(f"reconstructed must be a Reconstructed or a tuple of them, got "
                             f"{self.reconstructed!r}")  # fmt: skip
        object.__setattr__(self, "reconstructed", flags)

    def __str__(self) -> str:
        parts = [self.paper, f"§{self.section}"] + (
            [f"eq. {self.equation}"] if self.equation else []
        )
        return ", ".join(parts)

    @property
    def reconstruction(self) -> str:
        """The unconfirmed formulas the prediction rests on, in one line ("" for none)."""
        return "; ".join(str(flag) for flag in self.reconstructed)


@dataclass(frozen=True)
class FigureRef:
    """A figure function named without importing it: the import path of its module and its name.

    ``FigureRef("icl_verify.figures.manifold", "figure_manifold")`` stands for the function
    `icl_verify.figures.manifold.figure_manifold`; `resolve` imports it (and matplotlib with it),
    so declaring a claim loads no plotting library and `icl-verify list` stays light. `problem`
    reads the module's source, not the module, to tell whether it defines the function: a
    `Claim` and a `validation.paper_figures.PaperFigure` ask it when declared. A claim package
    names a module of its own the same way (``FigureRef("my_package.figures", "draw")``).

    >>> ref = FigureRef("icl_verify.figures.manifold", "figure_manifold")
    >>> print(ref); ref.problem()
    icl_verify.figures.manifold.figure_manifold
    ''
    >>> print(FigureRef("icl_verify.figures.manifold", "figure_x").problem())
    icl_verify.figures.manifold has no function figure_x; its functions: figure_manifold
    """

    module: str  # e.g. "icl_verify.figures.manifold"
    function: str  # e.g. "figure_manifold"

    def __str__(self) -> str:
        return f"{self.module}.{self.function}"

    def problem(self) -> str:
        """What is wrong with the reference, in one line that says what is allowed instead;
        "" when the module defines the function."""
        if not re.fullmatch(r"\w+(\.\w+)*", self.module) or not self.function.isidentifier():
            return (f"must be FigureRef(module, function): a module's import path and a "
                    f"function's name, got {self.module!r}, {self.function!r}")  # fmt: skip
        names = _top_level_names(self.module)
        if names is None:
            package = self.module.rpartition(".")[0]
            modules = _modules_of(package) if package else ()
            return f"no module {self.module}" + (
                f"; {package} has {', '.join(modules)}" if modules else " can be imported")
        if self.function not in names:
            functions = ", ".join(sorted(n for n in names if names[n] and n[0] != "_"))
            return f"{self.module} has no function {self.function}; its functions: {functions}"
        return ""

    def resolve(self) -> Callable:
        """The function itself (its module imported, matplotlib with it)."""
        return getattr(importlib.import_module(self.module), self.function)


@functools.cache
def _top_level_names(module: str) -> dict[str, bool] | None:
    """The names ``module`` binds at its top level, read from its source, each with whether it
    is a function; None when there is no such module (its packages are imported, not it)."""
    try:
        spec = importlib.util.find_spec(module)
    except ImportError:  # a package on the way is missing
        spec = None
    if spec is None:
        return None
    source = spec.loader.get_source(module) if spec.loader else None
    if source is None:  # no source to read (a compiled module): the module itself
        return {n: callable(v) for n, v in vars(importlib.import_module(module)).items()}
    names = {}
    for node in ast.parse(source).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names[node.name] = not isinstance(node, ast.ClassDef)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {(a.asname or a.name).split(".")[0]: False for a in node.names}
        else:
            names |= {target.id: False for target in ast.walk(node)
                      if isinstance(target, ast.Name) and isinstance(target.ctx, ast.Store)}
    return names


def _modules_of(package: str) -> tuple[str, ...]:
    """The modules of ``package`` (its submodules' short names), () when it is no package."""
    try:
        spec = importlib.util.find_spec(package)
    except ImportError:
        return ()
    locations = spec.submodule_search_locations if spec else None
    return tuple(sorted(info.name for info in pkgutil.iter_modules(locations or [])))


@dataclass(frozen=True)
class Check:
    """One comparison of a claim: quantity name (in Prediction/Measurement values) and its rule."""

    quantity: str
    rule: Rule
    label: str = ""  # how the report names the quantity; defaults to `quantity`

    @property
    def title(self) -> str:
        return self.label or self.quantity


PRESET_NAMES = ("smoke", "quick", "paper")  # seconds (tests) / minutes on a CPU / the papers'
DEFAULT_PRESET = "quick"


@dataclass(frozen=True)
class Claim:
    """One checkable statement of a paper (see the module docstring for the parts).

    Attributes:
        id: as in the reference catalogues (e.g. "HE-T4.2ii").
        source, statement: where the paper says it, and what it says, in one sentence.
        params: the claim's parameter class (a `validation.params.Params` subclass).
        presets: "smoke", "quick" and "paper" instances of `params`.
        predict, measure, checks: the theory's numbers, the simulation's, and the rules
            comparing them; each takes the parameters (and `measure` a `Runtime`).
        figure: the `FigureRef` of a function of `icl_verify.figures` drawing (params,
            prediction, measurement), imported only when drawn (no matplotlib for `icl-verify
            list`); or a tuple of them when the claim reproduces several of the paper's figures
            (one PNG each). A claim from another package (`validation.registry`) names a module
            of its own (``FigureRef("my_package.figures", "draw")``).
        wrong: a deliberately wrong prediction made from the right one
            (`wrong(params, prediction)`); the claim's rules must call it `disagrees`.
        table: optional ``table(params, prediction, measurement) -> str``, a markdown table
            of the numbers a reader compares with the paper's own (e.g. He et al.'s Table 1),
            stored with the claim's record and printed in its report section.
        summary: what is checked, in one line (the claim tables of `icl-verify list
            --markdown` and the README).
        catalogue: its place in its paper's reference catalogue, (section, item): the
            registry's order (`validation.registry.all_claims`); None for a claim from
            outside the catalogue (after the catalogued ones, by id).
        paper_figures: the numbered figures of the paper that its records draw
            (`validation.paper_figures.PaperFigure`; a figure read from several claims is
            declared by the first of them): `icl-verify figures` gathers them.
    """

    id: str
    source: Source
    statement: str
    params: type[Params]
    presets: Mapping[str, Params]
    predict: Callable[[Any], Prediction]
    measure: Callable[[Any, Any], Measurement]
    checks: Callable[[Any], tuple[Check, ...]]
    figure: FigureRef | tuple[FigureRef, ...]
    wrong: Callable[[Any, Prediction], Prediction]
    table: Callable[[Any, Prediction, Measurement], str] | None = None
    summary: str = ""
    catalogue: tuple[int, int] | None = None
    paper_figures: tuple = ()

    def __post_init__(self) -> None:
        if not self.id or any(ch.isspace() for ch in self.id):
            raise ValueError(f"claim id must be non-empty without spaces, got {self.id!r}")
        if not self.statement.strip():
            raise ValueError(f"claim {self.id}: statement must not be empty")
        catalogue = self.catalogue
        if catalogue is not None and (
            not isinstance(catalogue, tuple) or len(catalogue) != 2
            or not all(isinstance(k, int) and k >= 0 for k in catalogue)
        ):  # fmt: skip
            raise ValueError(
                f"claim {self.id}: catalogue must be (section, item) of integers >= 0, "
                f"got {catalogue!r}"
            )
        if tuple(self.presets) != PRESET_NAMES:
            raise ValueError(
                f"claim {self.id}: presets must be {PRESET_NAMES}, got {tuple(self.presets)}"
            )
        for name, preset in self.presets.items():
            if type(preset) is not self.params:
                raise ValueError(
                    f"claim {self.id}: preset {name!r} is not a {self.params.__name__}"
                )
        if not self.figures or not all(isinstance(f, FigureRef) for f in self.figures):
            raise ValueError(f"claim {self.id}: figure must be a FigureRef(module, function) or "
                             f"a tuple of them, got {self.figure!r}")  # fmt: skip
        for figure in self.figures:
            if problem := figure.problem():
                raise ValueError(f"claim {self.id}: figure {problem}")

    def trainings(self, params: Params) -> tuple:
        """The trainings its measurement at ``params`` reads from the artefact cache, which
        other claims may read too (`TrainedParams.trainings`; none for parameters of another
        kind): a run schedules by them (`runner.schedule`) so that no worker waits on
        another's training.

        >>> from icl_verify.validation.registry import select_claims
        >>> obs1, p41 = select_claims(["HE-OBS1", "HE-P4.1"])
        >>> len(obs1.trainings(obs1.presets["smoke"])), p41.trainings(p41.presets["smoke"])
        (1, ())
        """
        return params.trainings() if isinstance(params, TrainedParams) else ()

    @property
    def figures(self) -> tuple[FigureRef, ...]:
        """The claim's figure functions."""
        return (self.figure,) if isinstance(self.figure, FigureRef) else tuple(self.figure)

    def parameters(self, preset: str = DEFAULT_PRESET, overrides: Mapping[str, Any] = {}) -> Params:
        """The preset's parameters with `overrides` applied (strings parsed by field type).

        Raises `validation.params.ParameterError` (one line) for an unknown preset, key or
        a value out of range.
        """
        if preset not in self.presets:
            raise ParameterError(f"preset must be one of {', '.join(PRESET_NAMES)}, got {preset!r}")
        return self.presets[preset].with_overrides(overrides) if overrides else self.presets[preset]

    def verdicts(self, params, prediction: Prediction, measurement: Measurement) -> dict[str, str]:
        """Each compared quantity's verdict under the claim's checks (see `evaluate`)."""
        results = evaluate(self.checks(params), prediction, measurement)
        return {r.check.quantity: r.judgement.verdict for r in results}

    def draw(self, params, prediction: Prediction, measurement: Measurement) -> list:
        """The claim's figures (matplotlib Figures, one per `figures` entry), drawn from the
        stored numbers alone, in the project's look (`figures.style.figure_style`)."""
        from icl_verify.figures.style import figure_style

        drawn = []
        with figure_style():
            for figure in self.figures:
                drawn.append(figure.resolve()(params, prediction, measurement))
        return drawn


def scaled(quantity: str, factor: float, *, why: str) -> Callable[[Any, Prediction], Prediction]:
    """A `Claim.wrong`: the prediction with `quantity` multiplied by `factor`.

    `why` says what the wrong prediction gets wrong and by how much it misses the rule; with a
    line naming the change it is the function's docstring, which the claim's page shows.

    >>> wrong = scaled("loss", 1.5, why="The loss 50% too high: 10 x the tolerance 0.05.")
    >>> wrong(None, Prediction({"loss": 2.0, "slope": 1.0})).values
    {'loss': 3.0, 'slope': 1.0}
    >>> print(wrong.__doc__)
    The loss 50% too high: 10 x the tolerance 0.05.
    <BLANKLINE>
    The prediction with `loss` multiplied by 1.5.
    """
    return _wrong(quantity, lambda value: factor * np.asarray(value, dtype=float), why,
                  f"multiplied by {factor:g}")  # fmt: skip


def shifted(
    quantity: str, change: Callable[[Any], Any], *, why: str
) -> Callable[[Any, Prediction], Prediction]:
    """A `Claim.wrong`: the prediction with `change` applied to `quantity` (others kept).

    `why` as for `scaled`.

    >>> wrong = shifted("slope", lambda slope: slope + 0.5, why="A slope 0.5 too steep.")
    >>> wrong(None, Prediction({"loss": 2.0, "slope": 1.0})).values
    {'loss': 2.0, 'slope': 1.5}
    >>> print(wrong.__doc__)
    A slope 0.5 too steep.
    <BLANKLINE>
    The prediction with `slope` changed.
    """
    return _wrong(quantity, change, why, "changed")


def _wrong(quantity: str, change: Callable[[Any], Any], why: str, how: str):
    """The wrong prediction of `scaled` and `shifted`: its docstring is ``why`` (required, not
    blank), then the line naming the change."""
    if not isinstance(why, str) or not why.strip():
        raise ValueError(f"a wrong prediction needs a why (what it gets wrong), got {why!r}")

    def wrong(params, prediction: Prediction) -> Prediction:
        value = change(prediction.values[quantity])
        return prediction.with_values(**{quantity: float(value) if np.ndim(value) == 0 else value})

    wrong.__doc__ = f"{why.strip()}\n\nThe prediction with `{quantity}` {how}."
    return wrong


@dataclass(frozen=True)
class CheckResult:
    """A check applied: what was compared, under which rule, and the judgement."""

    check: Check
    predicted: Any
    measured: Estimate
    judgement: Judgement


def evaluate(checks, prediction: Prediction, measurement: Measurement) -> tuple[CheckResult, ...]:
    """Apply every check to the prediction and measurement (missing quantities raise KeyError).

    >>> from icl_verify.validation.rules import ZScore
    >>> checks = (Check("loss", ZScore("MC error", rel_resolution=0.05)),)
    >>> [r.judgement.verdict for r in evaluate(checks, Prediction({"loss": 1.0}),
    ...                                         Measurement({"loss": Estimate(1.3, 0.01)}))]
    ['disagrees']
    """
    results = []
    for check in checks:
        predicted = prediction.values[check.quantity]
        measured = measurement.values[check.quantity]
        results.append(
            CheckResult(check, predicted, measured, check.rule.judge(predicted, measured))
        )
    return tuple(results)
