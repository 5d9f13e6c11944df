"""Content-addressed cache of expensive artefacts (trained models, Monte Carlo arrays).

An artefact lives under `<root>/<key>/`, where key is the SHA-256 of the canonical
JSON of its name and full configuration (keys sorted, no whitespace). Any change
of configuration gives a new directory, so a cached result is never stale; the
same configuration finds the finished result (rerun) or the trainer's checkpoint
(a killed training resumes). Files are written atomically (temporary file, then
`os.replace`), so a killed process leaves either the old file or the new one.
"""

from __future__ import annotations

import hashlib
import io
import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
from icl_verify.validation.claim import to_json

from icl_verify._files import write_atomic


def canonical_json(value: Any) -> str:
    """The canonical JSON text of a configuration: sorted keys, no spaces, arrays as lists.

    >>> canonical_json({"b": 1, "a": [0.5, 2]})
    '{"a":[0.5,2],"b":1}'
    """
    return json.dumps(to_json(value), sort_keys=True, separators=(",", ":"), allow_nan=False)


def config_key(name: str, config: Mapping[str, Any]) -> str:
    """SHA-256 hex digest of the canonical JSON of {"name": name, "config": config}.

    >>> len(config_key("model", {"d": 5}))
    64
    >>> config_key("model", {"d": 5}) == config_key("model", {"d": 6})
    False
    """
    text = canonical_json({"name": name, "config": config})
    return hashlib.sha256(text.encode()).hexdigest()


class ArtefactCache:
    """Directories and cached results keyed by (name, configuration) under one root.

    >>> import tempfile
    >>> cache = ArtefactCache(tempfile.mkdtemp())
    >>> calls = []
    >>> def compute():
    ...     calls.append(1)
    ...     return {"x": np.arange(3.0)}
    >>> first = cache.cached("grid", {"n": 3}, compute)
    >>> second = cache.cached("grid", {"n": 3}, compute)
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
        if not record.exists():
            write_atomic(record, json.dumps({"name": name, "config": to_json(config)}, indent=1))
        return folder

    def cached(self, name: str, config: Mapping[str, Any], compute: Callable[[], Any]) -> Any:
        """`compute()` once per configuration; later calls load the stored result.

        A result that is a mapping of names to numpy arrays is stored as `result.npz`
        (loaded back as a dict of arrays); anything else must be JSON-serialisable
        and is stored as `result.json`.
        """
        folder = self.directory(name, config)
        arrays, document = folder / "result.npz", folder / "result.json"
        if arrays.exists():
            with np.load(arrays) as stored:
                return {key: stored[key] for key in stored.files}
        if document.exists():
            return json.loads(document.read_text())
        result = compute()
        if isinstance(result, Mapping) and all(isinstance(v, np.ndarray) for v in result.values()):
            write_atomic(arrays, _npz_bytes(result))
        else:
            write_atomic(document, json.dumps(to_json(result)))
        return result


def _npz_bytes(arrays: Mapping[str, np.ndarray]) -> bytes:
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    return buffer.getvalue()
