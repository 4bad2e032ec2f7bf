"""Confining user-given paths to a folder: a run config's paths stay in the config's folder.

Run configs and notebook cells are shared like templates are, so a path in one is treated as
hostile too: ``..``, absolute paths and symbolic links that lead out of the base folder are
refused unless the user explicitly allows it (``--allow-outside`` / ``allow_outside=True``).
The error names the key or flag the path came from.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["PathOutsideError", "resolve_inside"]


class PathOutsideError(ValueError):
    """A path leads out of the folder it must stay in; the message says how to allow it."""


def resolve_inside(
    path: str | Path,
    base: str | Path,
    *,
    key: str,
    allow_outside: bool = False,
    allow_hint: str = "allow_outside=True",
) -> Path:
    """``path`` read relative to ``base``; refused if it leaves ``base`` (unless allowed).

    ``key`` names where the path came from (a YAML key such as ``metrics[0].template``, or a
    flag); ``allow_hint`` is what the user passes to allow paths outside (``--allow-outside``).
    The path need not exist yet (output folders), but any part of it that does exist is
    resolved, so a symbolic link inside the folder cannot point out of it.
    """
    base_dir = Path(base)
    given = Path(path)
    joined = given if given.is_absolute() else base_dir / given
    if allow_outside:
        return joined
    where = f"{key}: {str(path)!r}"
    hint = f"pass {allow_hint} to read or write outside it"
    if given.is_absolute():
        raise PathOutsideError(
            f"{where} is an absolute path; paths here are relative to {base_dir.resolve()} "
            f"and stay inside it ({hint})"
        )
    if ".." in given.parts:
        raise PathOutsideError(
            f"{where} goes up with '..' out of {base_dir.resolve()}; paths here stay inside "
            f"that folder ({hint})"
        )
    root = base_dir.resolve()
    if not joined.resolve().is_relative_to(root):
        raise PathOutsideError(
            f"{where} leads out of {root} through a symbolic link; paths here stay inside that "
            f"folder ({hint})"
        )
    return joined
