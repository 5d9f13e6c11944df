"""Files written whole or not at all: the one atomic writer of every layer.

A killed process, a full disk or two processes writing the same path leave either
the old file or the new one, never a torn one: the bytes go to a temporary file in
the same folder, are flushed to disk, and `os.replace` renames it over the target
(atomic on POSIX and Windows for paths on one file system).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def write_atomic(path: Path | str, data: bytes | str) -> None:
    """Write `data` (bytes, or text as UTF-8) to `path` atomically; parent folders are created.

    >>> import tempfile, pathlib
    >>> target = pathlib.Path(tempfile.mkdtemp()) / "sub" / "a.txt"
    >>> write_atomic(target, "whole")
    >>> target.read_text()
    'whole'
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = data.encode() if isinstance(data, str) else data
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as file:
            file.write(payload)
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
