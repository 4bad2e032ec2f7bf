"""Write files whole or not at all: a temp file in the same folder, then ``os.replace``.

A run that fails (or is interrupted) half-way through writing must not leave a 0-byte or
half-written results file or report where the previous good one was. The temp file sits in
the target's folder so the final rename never crosses a filesystem, which is what makes it
atomic.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO

__all__ = ["atomic_path", "atomic_write_text", "atomic_writer"]


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike[str]) -> Iterator[Path]:
    """A temp path to write to; it replaces ``path`` only if the block ends without error."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    os.close(fd)
    temp = Path(name)
    try:
        yield temp
        with contextlib.suppress(OSError):  # keep the usual permissions, not mkstemp's 0600
            mask = os.umask(0)
            os.umask(mask)
            os.chmod(temp, 0o666 & ~mask)
        os.replace(temp, target)
    finally:
        with contextlib.suppress(FileNotFoundError):
            temp.unlink()


@contextlib.contextmanager
def atomic_writer(path: str | os.PathLike[str]) -> Iterator[IO[str]]:
    """An open UTF-8 text file whose content lands at ``path`` only when the block succeeds."""
    with atomic_path(path) as temp, temp.open("w", encoding="utf-8", newline="") as fh:
        yield fh


def atomic_write_text(path: str | os.PathLike[str], text: str) -> Path:
    """Write ``text`` (UTF-8) to ``path`` atomically; returns the path."""
    with atomic_writer(path) as fh:
        fh.write(text)
    return Path(path)
