"""Content-addressed cache of expensive artefacts (trained models, Monte Carlo arrays).

An artefact lives under `<root>/<key>/`, where key is the SHA-256 of the canonical
JSON of its name, its full configuration (keys sorted, no whitespace) and the version of
the code that makes it: the producer's version, declared beside it (`producers`; bumped
whenever a change can alter what it returns; `tests/validation/test_cache_versions.py` fails
when the code a producer runs changes and its version does not) and the package's version.
Any change of configuration or of that code gives a new directory, so a cached result is
never stale; the same configuration finds the finished result (rerun) or the trainer's
checkpoint (a killed training resumes). Files are written atomically (temporary file, then
`os.replace`), so a killed process leaves either the old file or the new one, and a
reader (which reads a file whole through one open handle) sees one or the other.

Damage and concurrency. A stored result that cannot be loaded (truncated, garbage, a
file of another program) is reported on stderr in one line, deleted and recomputed.
Processes sharing a cache (the workers of `icl-verify run` and `sweep`) compute an entry
once: `cached` holds an exclusive lock on `<root>/<key>.lock` (`fcntl.flock`) while it
computes, so a second process asking for the same key waits, then reads the stored
result. The lock is the kernel's: a killed holder releases it.
"""

from __future__ import annotations

import ast
import fcntl
import functools
import hashlib
import importlib.util
import inspect
import io
import json
import os
import pkgutil
import shutil
import sys
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

import numpy as np
from icl_verify.validation.records import to_json

import icl_verify
from icl_verify._files import write_atomic


def canonical_json(value: Any) -> str:
    """The canonical JSON text of a configuration: sorted keys, no spaces, arrays as lists.

    >>> canonical_json({"b": 1, "a": [0.5, 2]})
    '{"a":[0.5,2],"b":1}'
    """
    return json.dumps(to_json(value), sort_keys=True, separators=(",", ":"), allow_nan=False)


@dataclass(frozen=True)
class Producer:
    """What makes one kind of cached artefact: the version of its code, and the module whose
    code (with every `icl_verify` module it imports, transitively) makes it (the test of the
    versions watches that code)."""

    version: int  # bump when a change can alter what the producer returns
    module: str  # e.g. "icl_verify.numerics._core.ensemble"


#: The packages whose modules declare the kinds of cached artefact (`producers`).
PRODUCING_PACKAGES = ("icl_verify.numerics", "icl_verify.dynamics")


@functools.cache
def producers() -> Mapping[str, Producer]:
    """Every kind of cached artefact, by its cache name, as the code declares it: beside what
    makes it, as ``ARTEFACT`` (the name) and ``ARTEFACT_VERSION`` (the version), on a class a
    module of `PRODUCING_PACKAGES` (at any depth) defines (a training spec, e.g.
    `numerics.EnsembleTraining`) or at a module's top level (a function's arrays, e.g.
    `numerics._chen2024.isotropic`). A name not here cannot be cached; one declared twice is an
    error. Imports those packages' modules (torch among them) on first use.

    >>> producers()["trained-ensemble"]
    Producer(version=1, module='icl_verify.numerics._core.ensemble')
    """
    found: dict[str, Producer] = {}
    for package in PRODUCING_PACKAGES:
        for info in pkgutil.walk_packages(importlib.import_module(package).__path__, f"{package}."):
            module = importlib.import_module(info.name)
            owners = [module, *(value for value in vars(module).values()
                                if inspect.isclass(value) and value.__module__ == module.__name__
                                and "ARTEFACT" in vars(value))]  # fmt: skip
            for owner in owners:
                name = vars(owner).get("ARTEFACT")
                if name is None:
                    continue
                if name in found:
                    raise RuntimeError(f"cache name {name!r} declared twice: in "
                                       f"{found[name].module} and {module.__name__}")  # fmt: skip
                found[name] = Producer(vars(owner)["ARTEFACT_VERSION"], module.__name__)
    return MappingProxyType(dict(sorted(found.items())))


def config_key(name: str, config: Mapping[str, Any]) -> str:
    """SHA-256 hex digest of the canonical JSON of the name, the configuration and the code's
    version (the producer's and the package's).

    >>> len(config_key("trained-ensemble", {"d": 5}))
    64
    >>> config_key("trained-ensemble", {"d": 5}) == config_key("trained-ensemble", {"d": 6})
    False
    >>> config_key("model", {"d": 5})
    Traceback (most recent call last):
    ...
    ValueError: name must be a producer of validation.cache.producers(), got 'model'
    """
    text = canonical_json(_described(name, config))
    return hashlib.sha256(text.encode()).hexdigest()


def _described(name: str, config: Mapping[str, Any]) -> dict:
    """What a key is made of: the name, the configuration and the code's versions."""
    known = producers()
    if name not in known:
        raise ValueError(f"name must be a producer of validation.cache.producers(), got {name!r}")
    code = {"producer": known[name].version, "package": icl_verify.__version__}
    return {"name": name, "config": config, "code": code}


def _defining_module(module: str, name: str) -> str:
    """The module whose code ``from module import name`` runs: ``module.name`` for a submodule
    (found by its spec, so the answer does not depend on what this process imported before),
    else the module that defines the object (a package only re-exports it), else ``module``."""
    try:
        if importlib.util.find_spec(f"{module}.{name}") is not None:
            return f"{module}.{name}"
    except (ImportError, AttributeError, ValueError):  # ``module`` is no package
        pass
    try:
        found = getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError):
        return module
    defining = found.__name__ if isinstance(found, type(ast)) else getattr(found, "__module__", "")
    return defining if (defining or "").startswith("icl_verify") else module


def code_digest(module: str) -> str:
    """SHA-256 of the code of ``module`` and of every `icl_verify` module it imports,
    transitively: each module's syntax tree without docstrings (comments are not in it), so
    a change of documentation leaves it unchanged and a change of code does not.

    >>> len(code_digest("icl_verify.statistics"))
    64
    """
    seen, todo = {}, [module]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, AttributeError):  # a name imported from a module, not a module
            continue
        if spec is None or spec.origin is None or not spec.origin.endswith(".py"):
            continue
        tree = ast.parse(Path(spec.origin).read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            body = getattr(node, "body", None)
            if (isinstance(body, list) and body and isinstance(body[0], ast.Expr)
                    and isinstance(body[0].value, ast.Constant)
                    and isinstance(body[0].value.value, str)):  # fmt: skip
                body[0] = ast.Pass()  # the docstring
            if isinstance(node, ast.Import):
                todo += [alias.name for alias in node.names if alias.name.startswith("icl_verify")]
            elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("icl_verify"):
                todo += [_defining_module(node.module, alias.name) for alias in node.names]
        seen[name] = ast.dump(tree)
    text = "\n".join(f"{name}\n{seen[name]}" for name in sorted(seen))
    return hashlib.sha256(text.encode()).hexdigest()


class ArtefactCache:
    """Directories and cached results keyed by (name, configuration) under one root.

    >>> import tempfile
    >>> cache = ArtefactCache(tempfile.mkdtemp())
    >>> calls = []
    >>> def compute():
    ...     calls.append(1)
    ...     return {"x": np.arange(3.0)}
    >>> first = cache.cached("isotropic-setting", {"n": 3}, compute)
    >>> second = cache.cached("isotropic-setting", {"n": 3}, compute)
    >>> second["x"].tolist(), len(calls)
    ([0.0, 1.0, 2.0], 1)
    """

    def __init__(self, root: Path | str) -> None:
        self.root = Path(root)

    def directory(self, name: str, config: Mapping[str, Any]) -> Path:
        """The artefact's folder `<root>/<key>/` (created, with its config.json for inspection).

        Hand it to a trainer as its checkpoint directory: a rerun with the same
        configuration finds the checkpoint there and resumes.
        """
        folder = self.root / config_key(name, config)
        record = folder / "config.json"
        text = json.dumps(to_json(_described(name, config)), indent=1)
        try:
            current = record.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):  # missing, unreadable or garbage: write it anew
            current = None
            _remove_non_file(record)  # e.g. a folder in its place, which no rename replaces
        if current != text:  # concurrent writers write the same text, each atomically
            write_atomic(record, text)
        return folder

    def cached(self, name: str, config: Mapping[str, Any], compute: Callable[[], Any]) -> Any:
        """`compute()` once per configuration; later calls load the stored result.

        A result that is a mapping of names to numpy arrays is stored as `result.npz`
        (loaded back as a dict of arrays); anything else must be JSON-serialisable
        and is stored as `result.json`. Either holds the entry's key beside the result, so a
        file copied from another entry is not this entry's. A stored result that fails to load,
        or holds another key, is reported (one line on stderr), deleted and computed again.
        """
        folder = self.directory(name, config)
        with _locked(folder.with_name(folder.name + ".lock")):  # one process computes it
            stored = _load_stored(folder, name)
            if stored is not _MISSING:
                return stored
            result = compute()
            if isinstance(result, Mapping) and all(
                isinstance(v, np.ndarray) for v in result.values()
            ):
                keyed = {**result, KEY_FIELD: np.asarray(folder.name)}
                write_atomic(folder / "result.npz", _npz_bytes(keyed))
            else:
                document = {KEY_FIELD: folder.name, "result": to_json(result)}
                write_atomic(folder / "result.json", json.dumps(document))
            return result


_MISSING = object()
KEY_FIELD = "__entry_key__"  # the entry's key, stored in its result file


class ForeignEntryError(ValueError):
    """A stored result that belongs to another entry (its key is not this entry's)."""


def _load_stored(folder: Path, name: str) -> Any:
    """The entry's stored result, or `_MISSING` when there is none or it was damaged (then
    reported and deleted)."""
    parsers = (("result.npz", _parse_arrays), ("result.json", _parse_document))
    for file, parse in parsers:
        path = folder / file
        try:
            data, identity = _read_whole(path)
        except FileNotFoundError:
            continue
        except OSError as error:  # e.g. a folder in its place, or unreadable
            _discard_damaged(path, None, name, error)
            continue
        try:
            return parse(data, folder.name)
        except Exception as error:  # any failure to load means a damaged or foreign entry
            _discard_damaged(path, identity, name, error)
    return _MISSING


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    """Hold an exclusive `flock` on `path` (created if missing) for the body; another process
    asking for it waits. Released when the body ends or the process dies."""
    with open(path, "a") as handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


def _npz_bytes(arrays: Mapping[str, np.ndarray]) -> bytes:
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    return buffer.getvalue()


def _read_whole(path: Path) -> tuple[bytes, tuple[int, int]]:
    """The file's bytes, read through one handle, and its identity (device, inode).

    One handle sees one version of the file even when another process replaces it meanwhile.
    """
    with open(path, "rb") as file:
        status = os.fstat(file.fileno())
        return file.read(), (status.st_dev, status.st_ino)


def _parse_arrays(data: bytes, key: str) -> dict[str, np.ndarray]:
    with np.load(io.BytesIO(data), allow_pickle=False) as stored:
        arrays = {name: stored[name] for name in stored.files}  # every array read: CRCs checked
    _check_key(str(arrays.pop(KEY_FIELD, "")), key)
    return arrays


def _parse_document(data: bytes, key: str) -> Any:
    document = json.loads(data.decode("utf-8"))
    if not isinstance(document, dict) or "result" not in document:
        raise ValueError("not a result of this cache")
    _check_key(str(document.get(KEY_FIELD, "")), key)
    return document["result"]


def _check_key(stored: str, key: str) -> None:
    if stored != key:
        raise ForeignEntryError(
            f"it holds the result of entry {stored[:12] or '(none)'}, not of this one"
        )


def _discard_damaged(
    path: Path, identity: tuple[int, int] | None, name: str, error: Exception
) -> None:
    """Report a damaged stored result in one line on stderr and delete it.

    It is deleted only if it is still the file that was read (`identity`; None when it could
    not be read): another process may have replaced it by a good one in the meantime.
    """
    reason = " ".join(f"{type(error).__name__}: {error}".split())[:200]
    print(
        f"icl-verify: warning: cache entry {path.parent.name} ({name}) is damaged "
        f"({path.name}: {reason}); recomputing",
        file=sys.stderr,
    )
    if identity is None:  # it could not be read: a folder or another non-file in its place
        _remove_non_file(path)
    try:
        status = os.stat(path)
        if identity is None or (status.st_dev, status.st_ino) == identity:
            path.unlink()
    except OSError:  # gone already
        pass


def _remove_non_file(path: Path) -> None:
    """Remove a folder (or another thing that is not a plain file) found where an entry keeps a
    file, so that the atomic write can put the file there; a plain file or nothing: left."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    elif path.exists() and not path.is_file():
        path.unlink(missing_ok=True)
