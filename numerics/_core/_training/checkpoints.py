"""Checkpoints: what must match for one to be resumed (`fingerprint`), what one holds
(`Checkpoint`), its atomic write (`save`), a damaged file read as none (`load`), and a whole
ensemble's checkpoint cut into member slices (`cut`) and merged back from them (`merged`) for
`workers`.

A checkpoint is ``torch.save`` of a `Checkpoint` dict, written atomically (temporary file then
``os.replace``): a killed run leaves the old file or the new one. ``resume=True`` reads it back
(`restore`) and reaches the same weights, bit for bit on the CPU, as an uninterrupted run.
"""

from __future__ import annotations

import dataclasses
import hashlib
import io
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TypedDict

import numpy as np
import torch
from icl_verify.numerics._core._training.config import (
    ForeignCheckpointError,
    ModelConfig,
    TrainConfig,
)
from icl_verify.numerics._core._training.graph import device_options
from icl_verify.numerics._core.data import drawing_on_cpu

from icl_verify._files import write_atomic

# ---------------------------------------------------------------------------------------------
# which run a checkpoint belongs to


def callable_name(f: Callable) -> str:
    """A callable attention f as the same text in every process: its qualified name and, for a
    Python function, a digest of its code, constants and closure (a lambda's repr holds its
    address, which differs between processes).

    >>> callable_name(abs)
    'builtins.abs'
    """
    name = f"{getattr(f, '__module__', None)}.{getattr(f, '__qualname__', type(f).__qualname__)}"
    code = getattr(f, "__code__", None)
    if code is None:
        return name
    cells = tuple(repr(cell.cell_contents) for cell in f.__closure__ or ())
    content = repr((code.co_code, code.co_consts, code.co_names, cells)).encode()
    return f"{name}#{hashlib.sha256(content).hexdigest()[:16]}"


def fingerprint(
    model_config: ModelConfig, tasks, config: TrainConfig, initial: dict | None = None
) -> str:
    """What must match for a checkpoint to be resumed (everything but the length of the run).

    The model part is the config's dataclass repr, with a callable attention by `callable_name`;
    initial weights (a fine-tuning run) enter by a digest of their bytes; a run inside
    `numerics.draw_on_cpu` (another random stream on CUDA) says so at the end.

    >>> from icl_verify.numerics import AttentionConfig
    >>> from icl_verify.numerics._core._training.tasks import LinearRegressionTask
    >>> fingerprint(AttentionConfig(d=2), (LinearRegressionTask(2, 8),), TrainConfig())[:25]
    '(AttentionConfig(d=2, hea'
    """
    fields = dataclasses.fields(model_config)
    values = {f.name: getattr(model_config, f.name) for f in fields if f.repr}
    if callable(values.get("attention")):
        values["attention"] = callable_name(values["attention"])
    described = ", ".join(f"{name}={value!r}" for name, value in values.items())
    model_part = f"{type(model_config).__qualname__}({described})"  # as repr(model_config)
    train_part = dataclasses.replace(config, steps=1, checkpoint_every=0)  # workers: repr=False
    text = f"({model_part}, {tasks!r}, {train_part!r})"  # as repr of the tuple
    if initial is not None:
        digest = hashlib.sha256()
        for name in sorted(initial):
            digest.update(name.encode() + initial[name].detach().cpu().numpy().tobytes())
        text += f" from {digest.hexdigest()[:16]}"
    if drawing_on_cpu():  # another random stream on CUDA; nothing added by default
        text += " drawn on the CPU"
    return text


# ---------------------------------------------------------------------------------------------
# what a checkpoint holds; FORMAT changes when its layout does (2: circuits and seconds in it)

FORMAT = 2


class Checkpoint(TypedDict):
    """What a checkpoint file holds, E members (a slice's checkpoint: its members)."""

    format: int  # FORMAT
    fingerprint: str  # the run's `fingerprint`
    step: int  # optimizer steps taken
    seconds: float  # training time so far, summed over every resumed part of the run
    model: dict  # the model's state_dict: member-stacked (E, ...) tensors
    optimizer: dict  # the optimizer's state_dict: per-parameter (E, ...) state, shared step
    generators: list  # each training generator's state (a CPU byte tensor): E, or 1 shared
    records: dict  # the history so far (`config.RECORD_KEYS`)
    train_loss_sum: torch.Tensor  # (E,) float64: training losses summed since the last record


KEYS = frozenset(Checkpoint.__annotations__)


def load(path: Path, device: torch.device) -> dict | None:
    """The checkpoint at `path`; None when there is none, or when it cannot be read whole.

    A damaged checkpoint (truncated, garbage, not a checkpoint of this trainer, or one of an
    older layout) is reported in one line on stderr, and training starts over from step 0 (it
    overwrites the file at its first checkpoint).

    >>> load(Path("no-such-checkpoint.pt"), torch.device("cpu")) is None
    True
    """
    try:
        state = torch.load(path, map_location=device, weights_only=False)
        if not isinstance(state, dict) or not KEYS <= state.keys():
            raise ValueError("not a checkpoint of this trainer")
        if state["format"] != FORMAT:
            raise ValueError(f"checkpoint format {state['format']}, this trainer reads "
                             f"{FORMAT}")  # fmt: skip
    except FileNotFoundError:
        return None
    except Exception as error:  # any failure to load it: the file is damaged
        reason = " ".join(f"{type(error).__name__}: {error}".split())[:200]
        print(
            f"icl-verify: warning: checkpoint {str(path)!r} is damaged ({reason}); "
            "training from step 0",
            file=sys.stderr,
        )
        return None
    return state


def load_run(path: Path, device: torch.device, fingerprint: str) -> dict | None:
    """`load`, and ForeignCheckpointError when the checkpoint is another run's (by its
    fingerprint): it is neither resumed nor overwritten."""
    state = load(path, device)
    if state is not None and state["fingerprint"] != fingerprint:
        raise ForeignCheckpointError(
            f"checkpoint_path {str(path)!r} holds a different run; not resuming"
        )
    return state


def save(state: Checkpoint, path: Path) -> None:
    """Write ``state`` to ``path`` atomically (`icl_verify._files.write_atomic`)."""
    buffer = io.BytesIO()
    torch.save(state, buffer)
    write_atomic(path, buffer.getvalue())


def restore(
    state: Checkpoint,
    model: torch.nn.Module,
    optimizer: torch.optim.Optimizer,
    generators: list[torch.Generator],
    config: TrainConfig,
    device: torch.device,
) -> None:
    """Load a checkpoint's weights, optimizer state and generator states into a run's own."""
    model.load_state_dict(state["model"])
    optimizer.load_state_dict(state["optimizer"])
    if config.optimizer != "sgd":  # a checkpoint's param groups carry the options they had
        for group in optimizer.param_groups:
            group.update(device_options(device))
    for g, s in zip(generators, state["generators"], strict=True):
        g.set_state(s.cpu())  # a generator's state is a CPU byte tensor, whatever its device


# ---------------------------------------------------------------------------------------------
# a whole ensemble's checkpoint and its member slices' (`workers`)


def _pad_heads(value: torch.Tensor, H: int | None) -> torch.Tensor:
    """A member-stacked (E, H_slice, ...) tensor padded with zeros to H heads (inactive heads
    are zero, with zero Adam moments: they never get a gradient); as it is when H is None."""
    if H is None:
        return value
    pad = torch.zeros((value.shape[0], H - value.shape[1], *value.shape[2:]), dtype=value.dtype)
    return torch.cat([value, pad.to(value.device)], dim=1)  # (E, H, ...)


def _merged_records(parts: list[dict], H: int | None) -> dict[str, list]:
    """The slices' records as one run's: per record, the members in order (omega, mu and the
    circuits padded to H heads)."""

    def member_rows(key: str) -> list[list]:  # per record: members in order (omega, mu padded)
        pad = (
            (lambda m: [*m, *[0.0] * ((H or 0) - len(m))])
            if key in ("omega", "mu")
            else (lambda m: m)
        )
        return [
            [pad(member) for record in per_part for member in record]
            for per_part in zip(*(p["records"][key] for p in parts), strict=True)
        ]

    def member_circuits(key: str) -> list[np.ndarray]:  # per record: (E, H, D, D), padded
        return [
            torch.cat([_pad_heads(torch.from_numpy(c), H) for c in per_part]).numpy()
            for per_part in zip(*(p["records"][key] for p in parts), strict=True)
        ]

    records = {"steps": parts[0]["records"]["steps"]}
    records.update({key: member_rows(key) for key in ("train", "test", "omega", "mu")})
    records.update({key: member_circuits(key) for key in ("KQ", "OV")})
    return records


def merged(parts: list[dict], fingerprint: str, H: int | None) -> Checkpoint:
    """One checkpoint of the whole ensemble from its slices' checkpoints (members in order)."""
    steps = {part["step"] for part in parts}
    if len(steps) != 1:
        raise ValueError(f"checkpoint parts are at different steps {sorted(steps)}")

    def cat(values: list) -> torch.Tensor:  # per-member tensors; a scalar (Adam's step) is shared
        if values[0].dim() == 0:
            return values[0]
        if values[0].dim() == 1:
            return torch.cat(values)
        return torch.cat([_pad_heads(v, H) for v in values])

    first = parts[0]
    optimizer_state = {
        index: {key: cat([p["optimizer"]["state"][index][key] for p in parts]) for key in entry}
        for index, entry in first["optimizer"]["state"].items()
    }
    return Checkpoint(
        format=FORMAT,
        fingerprint=fingerprint,
        step=first["step"],
        seconds=max(part["seconds"] for part in parts),  # the slices train side by side
        model={k: cat([p["model"][k] for p in parts]) for k in first["model"]},
        optimizer={"state": optimizer_state, "param_groups": first["optimizer"]["param_groups"]},
        generators=[g for p in parts for g in p["generators"]],
        records=_merged_records(parts, H),
        train_loss_sum=torch.cat([p["train_loss_sum"] for p in parts]),
    )


def cut(state: dict, lo: int, hi: int, H: int | None, fingerprint: str) -> Checkpoint:
    """The checkpoint of members lo..hi-1 (with H heads; all when None) cut from a whole
    ensemble's."""

    def cut_tensor(value: torch.Tensor) -> torch.Tensor:
        if value.dim() == 0:
            return value
        return value[lo:hi].clone() if value.dim() == 1 else value[lo:hi, :H].clone()

    records = state["records"]
    return Checkpoint(
        format=FORMAT,
        fingerprint=fingerprint,
        step=state["step"],
        seconds=state["seconds"],
        model={k: cut_tensor(v) for k, v in state["model"].items()},
        optimizer={
            "state": {
                index: {key: cut_tensor(value) for key, value in entry.items()}
                for index, entry in state["optimizer"]["state"].items()
            },
            "param_groups": state["optimizer"]["param_groups"],
        },
        generators=state["generators"][lo:hi],
        records={
            "steps": records["steps"],
            **{key: [r[lo:hi] for r in records[key]] for key in ("train", "test")},
            **{key: [[m[:H] for m in r[lo:hi]] for r in records[key]] for key in ("omega", "mu")},
            **{key: [r[lo:hi, :H].copy() for r in records[key]] for key in ("KQ", "OV")},
        },
        train_loss_sum=state["train_loss_sum"][lo:hi].clone(),
    )
