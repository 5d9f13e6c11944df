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
    payload = data.encode() if isinstance(data, str) else data
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(
            dir=path.parent, prefix=f".{path.name}.", suffix=".tmp"
        )
    except OSError as error:  # the error names the file, not only the cause
        raise OSError(error.errno, error.strerror, str(path)) from None
    try:
        with os.fdopen(handle, "wb") as file:
            file.write(payload)
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, path)
    except OSError as error:  # a full disk: name the file that could not be written
        Path(temporary).unlink(missing_ok=True)
        raise OSError(error.errno, error.strerror, str(path)) from None
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
