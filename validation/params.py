"""Claim parameters: frozen dataclasses, validated on construction; presets are instances.

Every claim declares its parameters as a subclass of `Params` (shared physics from
`SettingParams`: d, L, sigma2), each field made with `param`, which records what the
field means and which values it allows. Its presets (`smoke`, `quick`, `paper`) are
instances of that class declared beside the claim. A user's `--set k=v` and
`--config FILE.toml` become `Params.with_overrides`, so the value is parsed by the
field's type and checked against its range before any work starts; a bad value is
one line that names the field, the value and what is allowed:

>>> @dataclass(frozen=True, kw_only=True)
... class Demo(SettingParams):
...     n_prompts: int = param(help="Monte Carlo prompts", low=1)
...     gap_L: tuple[int, ...] = param(help="prompt lengths of the gap fit", low=1)
>>> demo = Demo(n_prompts=100, gap_L=(20, 40))
>>> demo.with_overrides({"d": "10", "gap_L": "40,80,160"}).gap_L
(40, 80, 160)
>>> demo.with_overrides({"sigma2": "-1"})
Traceback (most recent call last):
...
icl_verify.validation.params.ParameterError: sigma2 must be a number in [0, 1e+12], got -1
>>> demo.with_overrides({"dd": "3"})  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
icl_verify.validation.params.ParameterError: unknown parameter 'dd'; known: L, d, gap_L, ..., sigma2
"""

from __future__ import annotations

import dataclasses
import json
import math
import typing
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

from icl_verify.limits import (
    MAX_COUNT,
    MAX_DIMENSION,
    MAX_PROMPT_LENGTH,
    MAX_VALUE,
    MONTE_CARLO_BLOCK,
    available_memory,
    gib,
)
from icl_verify.settings import Setting, SparseSetting


class ParameterError(ValueError):
    """A parameter's value is not allowed; the message is one line naming the field."""


@dataclass(frozen=True)
class Allowed:
    """The values a field allows: a closed or open interval (for every number in a tuple),
    or a list of choices.

    >>> Allowed(low=0, low_open=True).describe("a number")
    'a number > 0'
    >>> Allowed(low=1, high=8).describe("an integer")
    'an integer in [1, 8]'
    """

    low: float | None = None
    high: float | None = None
    low_open: bool = False
    high_open: bool = False
    choices: tuple[Any, ...] = ()

    def admits(self, value: Any) -> bool:
        if self.choices:
            return value in self.choices
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            if not math.isfinite(value):
                return False
            if self.low is not None and (value < self.low or (self.low_open and value == self.low)):
                return False
            if self.high is not None and (
                value > self.high or (self.high_open and value == self.high)
            ):
                return False
        return True

    def describe(self, kind: str) -> str:
        if self.choices:
            return "one of " + ", ".join(str(c) for c in self.choices)
        low, high = self.low, self.high
        if low is not None and high is not None:
            left, right = "(" if self.low_open else "[", ")" if self.high_open else "]"
            return f"{kind} in {left}{low:g}, {high:g}{right}"
        if low is not None:
            return f"{kind} {'>' if self.low_open else '>='} {low:g}"
        if high is not None:
            return f"{kind} {'<' if self.high_open else '<='} {high:g}"
        return kind


def param(
    default: Any = dataclasses.MISSING,
    *,
    help: str,
    low: float | None = None,
    high: float | None = None,
    low_open: bool = False,
    high_open: bool = False,
    choices: tuple[Any, ...] = (),
    role: str | None = None,
) -> Any:
    """A field of a `Params` class: its meaning (`help`), its allowed values and, for a size,
    its role in the shapes a measurement allocates (`role`, read by `Params.footprint`).

    `low`/`high` bound a number, or every number of a tuple (open with `low_open`,
    `high_open`); `choices` lists the allowed values. Without `default` the field
    must be given (every preset states it). `role` is one of `ROLES`: prompts or batches held
    at once ("held"), models trained side by side ("ensemble"), prompt lengths ("length"),
    token or hidden widths ("width"), heads ("heads"), or a "count" (steps, seeds, prompts
    streamed in blocks, grid points: time, not memory). Every integer field of every claim
    states one (tests/validation/test_params.py), so a new size is never left out.
    """
    if role is not None and role not in ROLES:
        raise ValueError(f"role must be one of {', '.join(ROLES)}, got {role!r}")
    allowed = Allowed(low, high, low_open, high_open, tuple(choices))
    return dataclasses.field(
        default=default, metadata={"help": help, "allowed": allowed, "role": role}
    )


#: The roles a size field can play in `Params.footprint` (`param`'s ``role``).
ROLES = ("held", "ensemble", "length", "width", "heads", "count")


@dataclass(frozen=True)
class FieldInfo:
    """What `icl-verify show` prints of one parameter."""

    name: str
    type: str
    help: str
    allowed: str


@dataclass(frozen=True, kw_only=True)
class Params:
    """Base of every claim's parameters: typed, frozen, validated on construction.

    Subclasses declare fields with `param` and may override `validate` for
    conditions that join several fields (e.g. ω_min < ω_max).
    """

    def __post_init__(self) -> None:
        for field in dataclasses.fields(self):
            hint, raw = _hints(type(self))[field.name], getattr(self, field.name)
            allowed = _allowed_values(field, hint)
            wrong = ParameterError(
                f"{field.name} must be {allowed.describe(_kind(hint))}, got {_show_raw(raw)}"
            )
            try:
                value = _coerce(field.name, raw, hint)
            except ParameterError:
                raise wrong from None
            if not all(allowed.admits(v) for v in _leaves(value)):
                raise wrong
            object.__setattr__(self, field.name, value)
        self.validate()

    def validate(self) -> None:
        """Conditions joining several fields; raise `ParameterError` naming them."""

    @classmethod
    def describe(cls) -> tuple[FieldInfo, ...]:
        """Each field's name, type, meaning and allowed values, in declaration order."""
        rows = []
        for field in dataclasses.fields(cls):
            hint = _hints(cls)[field.name]
            allowed = _allowed_values(field, hint)
            rows.append(
                FieldInfo(
                    field.name,
                    _type_name(hint),
                    field.metadata.get("help", ""),
                    allowed.describe(_kind(hint)),
                )
            )
        return tuple(rows)

    def with_overrides(self, values: Mapping[str, Any]) -> Params:
        """A copy with `values` replacing fields; strings are parsed by the field's type.

        Strings come from the command line: numbers as written (``1e-3``), tuples as
        comma-separated numbers (``20,40,80``) or JSON (``[[5,40],[2,3]]``), booleans
        as true/false. Values from a TOML file arrive typed.
        """
        names = [field.name for field in dataclasses.fields(self)]
        unknown = sorted(set(values) - set(names))
        if unknown:
            raise ParameterError(
                f"unknown parameter {unknown[0]!r}; known: {', '.join(sorted(names))}"
            )
        return dataclasses.replace(self, **self.parse_text(values))

    @classmethod
    def parse_text(cls, values: Mapping[str, Any]) -> dict[str, Any]:
        """``values`` with each string parsed by its field's type (the command line's text:
        ``"10"``, ``"1e-3"``, ``"20,40,80"``, JSON, true/false); other values as they are.

        >>> SettingParams.parse_text({"d": "10", "sigma2": 0.5})
        {'d': 10, 'sigma2': 0.5}
        """
        hints = _hints(cls)
        return {
            key: _parse(key, value, hints[key], cls._allowed(key))
            if isinstance(value, str) and key in hints
            else value
            for key, value in values.items()
        }

    @classmethod
    def check_python_values(cls, values: Mapping[str, Any]) -> None:
        """ParameterError (one line, worded as the command line words a bad value) unless each
        of ``values`` given from Python is of its field's type: a str only for a str field, an
        int (not a bool, a float or a str) for an int field, a list or tuple of them for a list
        field. The command line's strings are parsed by `with_overrides`; a Python value is not
        parsed, so ``d="5"`` or ``d=5.0`` is refused as ``--set d=five`` is. Unknown names are
        left to `with_overrides`.

        >>> try:
        ...     SettingParams.check_python_values({"d": "5"})
        ... except ParameterError as error:
        ...     print(error)
        d must be an integer in [1, 10000], got '5'
        """
        hints = _hints(cls)
        for key, value in values.items():
            if key in hints and not _typed(value, *_scalar_and_depth(hints[key])):
                raise ParameterError(f"{key} must be {cls._allowed(key)}, got {_show_raw(value)}")

    @classmethod
    def _allowed(cls, name: str) -> str:
        """What field `name` allows, in words (for error messages)."""
        field = cls.__dataclass_fields__[name]
        return _allowed_values(field, _hints(cls)[name]).describe(_kind(_hints(cls)[name]))

    #: Prompts a measurement of this class holds at the least (a Monte Carlo block, say).
    HELD_AT_LEAST = 1
    #: Fields whose role is "count" (streamed in blocks) but which this class's measurement
    #: draws at once: held (e.g. ``("n_prompts",)``; found by setting each count to 1e8).
    HELD = ()
    #: Whether the measurement trains models, so that its result depends on a training and not
    #: on Monte Carlo alone (`registry.trained_claims`): every `TrainedParams`, and a claim
    #: that trains inside its measurement, seeded by the run (HE-B-PHASE1, HE-C-TRUELOSS).
    TRAINS_MODELS = False

    def footprint(self) -> Footprint:
        """What these parameters hold in memory at once, estimated from the shapes they imply:
        the prompts (or models x batch) held together, times the longest prompt, the widest
        token and the most heads a field names (each field's `param` role), times a
        few temporaries, in float64. An estimate, not a measurement: it catches the settings
        that cannot fit (`check_fits`); a class whose measurement holds other shapes (an ODE,
        an encoder, several settings in turn) states its own.

        >>> SettingParams(d=5, L=40).footprint().describe()
        '4096 prompts x 41 tokens x 6 numbers x 1 heads, float64, 4 temporaries: 32.2 MB'
        """
        values = {role: [1] for role in ("held", "ensemble", "length", "width", "heads")}
        for field in dataclasses.fields(self):
            role = "held" if field.name in self.HELD else field.metadata.get("role")
            if role in values:
                value = getattr(self, field.name)
                values[role] += [v for v in _leaves(value) if isinstance(v, int)]
        ensemble = max(values["ensemble"])
        if isinstance(getattr(self, "heads", None), tuple):  # one model per listed H
            ensemble = max(ensemble, len(self.heads))
        held = max(self.HELD_AT_LEAST, max(values["held"]) * ensemble)
        return Footprint.of_tensor(
            (held, "prompts"), (max(values["length"]) + 1, "tokens"),
            (max(values["width"]) + 1, "numbers"), (max(values["heads"]), "heads"),
        )  # fmt: skip

    def as_json(self) -> dict[str, Any]:
        """The fields as JSON-ready values (tuples as lists); `from_json` inverts it."""
        return json.loads(json.dumps(dataclasses.asdict(self)))

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Params:
        """The parameters stored by `as_json` (lists become tuples again).

        Parameters stored by another version of the claim (a field added or removed since)
        raise `ParameterError` naming the field, never a TypeError.
        """
        fields = dataclasses.fields(cls)
        unknown = sorted(set(data) - {f.name for f in fields})
        missing = [
            f.name
            for f in fields
            if f.name not in data
            and f.default is dataclasses.MISSING
            and f.default_factory is dataclasses.MISSING
        ]
        if unknown or missing:
            what = f"unknown field {unknown[0]!r}" if unknown else f"no field {missing[0]!r}"
            raise ParameterError(
                f"the stored parameters do not fit {cls.__name__} ({what}): "
                "stored by another version of the claim"
            )
        return cls(**data)


@dataclass(frozen=True, kw_only=True)
class SettingParams(Params):
    """Parameters of the He et al. (2025) data model (Section 2): d, L, σ²."""

    d: int = param(5, help="covariate dimension d", low=1, high=MAX_DIMENSION, role="width")
    L: int = param(
        40, help="prompt length L: in-context examples per prompt", low=1, high=MAX_PROMPT_LENGTH,
        role="length"
    )

    HELD_AT_LEAST = MONTE_CARLO_BLOCK  # a Monte Carlo holds a block of prompts at once
    sigma2: float = param(0.1, help="label-noise variance σ²", low=0)

    @property
    def setting(self) -> Setting:
        """The `icl_verify.settings.Setting` (`theory.Setting`) of these parameters."""
        return Setting(d=self.d, L=self.L, sigma2=self.sigma2)


@dataclass(frozen=True, kw_only=True)
class SparseDesignParams(Params):
    """The sizes of the Chen, Zhao, Zou (2024) data model (§2): d and s, without the noise
    (`SparseSettingParams` adds one noise level; the trained claims take a grid of them).

    >>> SparseDesignParams(d=8, s=9)
    Traceback (most recent call last):
    ...
    icl_verify.validation.params.ParameterError: s must be an integer in [1, d=8], got 9
    """

    d: int = param(16, help="covariate dimension d", low=1, high=MAX_DIMENSION, role="width")
    s: int = param(4, help="sparsity s: non-zero coordinates of w*", low=1, role="width")

    def validate(self) -> None:
        if self.s > self.d:
            raise ParameterError(f"s must be an integer in [1, d={self.d}], got {self.s}")


@dataclass(frozen=True, kw_only=True)
class SparseSettingParams(SparseDesignParams):
    """Parameters of the Chen, Zhao, Zou (2024) data model (§2): d, s, σ."""

    sigma: float = param(
        0.1, help="label-noise standard deviation σ (the paper's grids are in std)", low=0
    )

    @property
    def setting(self) -> SparseSetting:
        """The `icl_verify.settings.SparseSetting` of these parameters.

        >>> SparseSettingParams(d=8, s=2, sigma=0.4).setting
        SparseSetting(d=8, s=2, sigma=0.4)
        """
        return SparseSetting(d=self.d, s=self.s, sigma=self.sigma)


@dataclass(frozen=True)
class Footprint:
    """An estimate of the memory a setting holds at once: ``bytes`` and what they are."""

    bytes: int
    shapes: str  # the shapes counted, in words

    @classmethod
    def of_tensor(cls, *sizes: tuple[int, str], temporaries: int = 4, itemsize: int = 8):
        """``temporaries`` tensors of the shape ``sizes`` ((size, what) pairs) of ``itemsize``
        bytes each (float64 by default).

        >>> Footprint.of_tensor((10, "prompts"), (3, "numbers")).bytes
        960
        """
        shape = " x ".join(f"{size} {what}" for size, what in sizes)
        kind = {8: "float64", 4: "float32"}.get(itemsize, f"{itemsize}-byte numbers")
        total = temporaries * itemsize * math.prod(size for size, _ in sizes)
        return cls(total, f"{shape}, {kind}, {temporaries} temporaries")

    def describe(self) -> str:
        return f"{self.shapes}: {self.bytes / 1e6:.3g} MB"


#: States an ODE of the claims saves (dense output of a long flow): its footprint.
ODE_SAVED_STATES = 100_000


def check_fits(params: Params, memory: int | None = None) -> None:
    """ParameterError (one line: the estimate, its shapes, the memory) unless what ``params``
    hold at once (`Params.footprint`) fits in ``memory`` bytes (default: what this machine has
    available, `icl_verify.limits.available_memory`).

    >>> try:
    ...     check_fits(SettingParams(L=100_000, d=10_000))
    ... except ParameterError as error:
    ...     print(str(error)[:80])
    the setting holds ~1.22e+05 GiB at once (4096 prompts x 100001 tokens x 10001 nu
    """
    footprint = params.footprint()
    memory = available_memory() if memory is None else memory
    if footprint.bytes > memory:
        raise ParameterError(
            f"the setting holds ~{gib(footprint.bytes)} at once ({footprint.shapes}; an "
            f"estimate); this machine has {gib(memory)} available: lower the sizes"
        )


def check_order(params: Params, low: str, high: str) -> None:
    """ParameterError unless params.low < params.high (e.g. ω_min < ω_max)."""
    a, b = getattr(params, low), getattr(params, high)
    if not a < b:
        raise ParameterError(f"{low} must be < {high}, got {low}={a:g}, {high}={b:g}")


# -- types: int, float, bool, str and (nested) tuples of them ---------------------------------


def _allowed_values(field: dataclasses.Field, hint: Any) -> Allowed:
    """The field's `Allowed`, with the stated caps of `icl_verify.limits` where it gives no
    upper limit of its own: `MAX_COUNT` for an integer, `MAX_VALUE` for a real number."""
    allowed: Allowed = field.metadata.get("allowed", Allowed())
    scalar, _ = _scalar_and_depth(hint)
    if allowed.choices or allowed.high is not None or scalar not in (int, float):
        return allowed
    return dataclasses.replace(allowed, high=MAX_COUNT if scalar is int else MAX_VALUE)


@cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def _scalar_and_depth(hint: Any) -> tuple[type, int]:
    depth = 0
    while typing.get_origin(hint) is tuple:
        hint = typing.get_args(hint)[0]
        depth += 1
    return hint, depth


def _typed(value: Any, scalar: type, depth: int) -> bool:
    """Whether a Python value is of the type (``scalar``, nested ``depth`` lists) as it is,
    without parsing or rounding (an int is a number; a bool is neither)."""
    if depth:
        return isinstance(value, (list, tuple)) and all(_typed(v, scalar, depth - 1) for v in value)
    if isinstance(value, bool):
        return scalar is bool
    if scalar is int:
        return isinstance(value, int)
    if scalar is float:
        return isinstance(value, (int, float))
    return isinstance(value, scalar)


def _kind(hint: Any) -> str:
    scalar, depth = _scalar_and_depth(hint)
    word = {int: "an integer", float: "a number", bool: "true or false", str: "a string"}[scalar]
    if depth == 0:
        return word
    plural = {int: "integers", float: "numbers", bool: "booleans", str: "strings"}[scalar]
    return f"a non-empty list of {plural}" if depth == 1 else f"a list of lists of {plural}"


def _type_name(hint: Any) -> str:
    scalar, depth = _scalar_and_depth(hint)
    return "list of " * depth + scalar.__name__


def _leaves(value: Any):
    if isinstance(value, tuple):
        for item in value:
            yield from _leaves(item)
    else:
        yield value


def _listify(value: Any) -> Any:
    return [_listify(v) for v in value] if isinstance(value, (tuple, list)) else value


def _coerce(name: str, value: Any, hint: Any) -> Any:
    """`value` as the field's type (lists as tuples, integral floats as int); or ParameterError."""
    scalar, depth = _scalar_and_depth(hint)
    return _coerce_level(name, value, scalar, depth, hint)


def _coerce_level(name: str, value: Any, scalar: type, depth: int, hint: Any) -> Any:
    fail = ParameterError(f"{name} must be {_kind(hint)}, got {_show_raw(value)}")
    if depth:
        if not isinstance(value, (tuple, list)) or len(value) == 0:
            raise fail
        return tuple(_coerce_level(name, v, scalar, depth - 1, hint) for v in value)
    if scalar is bool:
        if isinstance(value, bool):
            return value
        raise fail
    if scalar is str:
        if isinstance(value, str):
            return value
        raise fail
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise fail
    if scalar is int:
        if isinstance(value, float) and not (math.isfinite(value) and value.is_integer()):
            raise fail
        return int(value)
    value = float(value)
    if math.isnan(value):
        raise fail
    return value


def _show_raw(value: Any) -> str:
    """A value as the user wrote it: lists as JSON, scalars by repr."""
    if isinstance(value, (tuple, list)):
        try:
            return json.dumps(_listify(value))
        except (TypeError, ValueError):
            pass
    return repr(value)


def _parse(name: str, text: str, hint: Any, allowed: str) -> Any:
    """A command-line string as the field's type (checked again by `_coerce`)."""
    scalar, depth = _scalar_and_depth(hint)
    text = text.strip()
    if depth and text.startswith("["):
        try:
            return json.loads(text)
        except json.JSONDecodeError:
            raise ParameterError(f"{name} must be {allowed} (JSON), got {text!r}") from None
    if depth == 1:
        return [_parse_scalar(name, item, scalar, allowed) for item in text.split(",")]
    if depth:
        raise ParameterError(f"{name} must be {allowed}, written as JSON, got {text!r}")
    return _parse_scalar(name, text, scalar, allowed)


def _parse_scalar(name: str, text: str, scalar: type, allowed: str) -> Any:
    text = text.strip()
    if scalar is str:
        return text
    if scalar is bool:
        words = {"true": True, "1": True, "yes": True, "false": False, "0": False, "no": False}
        if text.lower() in words:
            return words[text.lower()]
        raise ParameterError(f"{name} must be true or false, got {text!r}")
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        raise ParameterError(f"{name} must be {allowed}, got {text!r}") from None
