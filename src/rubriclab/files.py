"""The user's files, handled safely: where we may read them, how we write them, how YAML reads.

**Paths stay inside their folder.** Run configs and notebook cells are shared like templates
are, so a path in one is treated as hostile too: ``..``, absolute paths and symbolic links that
lead out of the base folder (the config's folder; the working folder for magics) are refused
unless the user explicitly allows it (``--allow-outside`` / ``allow_outside=True``). The error
names the key or flag the path came from.

**Writes are whole or absent.** A run that fails (or is interrupted) half-way through writing
must not leave a 0-byte or half-written results file or report where the previous good one
was: we write a temp file in the target's folder (so the rename never crosses a filesystem),
then ``os.replace`` it over the target.

**YAML reads by the 1.2 rules.** PyYAML follows YAML 1.1, where ``no``, ``yes``, ``on`` and
``off`` are booleans, ``1:30`` is the number 90 and ``010`` is 8. In a rubric those are words
and labels: ``levels: {1: no, 2: partly, 3: yes}`` must keep ``'no'`` and ``'yes'`` as
descriptors. :func:`load_yaml` keeps PyYAML's safe constructors and swaps the implicit
resolvers for YAML 1.2's core schema: only ``true``/``false`` are booleans and integers are
decimal (or ``0x``/``0o``). Rubric files, ``%%rubric`` cell bodies and run configs all load
through it.
"""

from __future__ import annotations

import contextlib
import os
import re
import reprlib
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import yaml
from pydantic import ValidationError

__all__ = [
    "PathOutsideError",
    "YamlError",
    "atomic_path",
    "atomic_write_text",
    "atomic_writer",
    "defused",
    "error_text",
    "load_yaml",
    "resolve_inside",
    "short_repr",
]

#: what a spreadsheet runs as a formula when a cell starts with it
CSV_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def defused(text: str) -> str:
    """A CSV cell as a spreadsheet shows it, never runs it: text someone else wrote (model
    output, column names, reviewers' comments) that starts like a formula gets an apostrophe."""
    return "'" + text if text.startswith(CSV_FORMULA_STARTS) else text


# -- paths confined to a folder ---------------------------------------------------------------


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


# -- atomic writes ------------------------------------------------------------------------------


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


# -- YAML 1.2 -----------------------------------------------------------------------------------


class YamlError(ValueError):
    """YAML text that does not parse; ``line`` is 1-based when the parser knows it."""

    def __init__(self, problem: str, line: int | None) -> None:
        self.problem = problem
        self.line = line
        super().__init__(f"line {line}: {problem}" if line is not None else problem)


class _Loader(yaml.SafeLoader):
    """SafeLoader with YAML 1.2 core-schema resolvers for booleans, integers and floats."""


_REPLACED = frozenset(
    {"tag:yaml.org,2002:bool", "tag:yaml.org,2002:int", "tag:yaml.org,2002:float"}
)
_Loader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag not in _REPLACED]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}

_BOOL = re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$")
_INT = re.compile(r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$")
_FLOAT = re.compile(
    r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
    r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$"
)
_Loader.add_implicit_resolver("tag:yaml.org,2002:bool", _BOOL, list("tTfF"))
_Loader.add_implicit_resolver("tag:yaml.org,2002:int", _INT, list("-+0123456789"))
_Loader.add_implicit_resolver("tag:yaml.org,2002:float", _FLOAT, list("-+.0123456789"))


def _construct_int(loader: yaml.SafeLoader, node: yaml.Node) -> int:
    """Decimal, ``0o`` octal or ``0x`` hex: ``010`` is ten, as YAML 1.2 reads it."""
    text = str(loader.construct_scalar(node))  # type: ignore[arg-type]
    if text.startswith("0o"):
        return int(text[2:], 8)
    if text.startswith("0x"):
        return int(text[2:], 16)
    return int(text, 10)


_Loader.add_constructor("tag:yaml.org,2002:int", _construct_int)


#: what aliases may add to a YAML text's own size, in items and characters
MAX_YAML_EXPANSION = 100_000


def load_yaml(text: str) -> Any:
    """Parse ``text`` (one document) safely with YAML 1.2 scalars; errors name the line.

    Aliases are measured before anything is built: a few lines of ``&a`` / ``*a`` can stand
    for a billion items (the "billion laughs"), which costs nothing to load but everything to
    validate, print or write out. Text whose aliases would expand it past its own size plus
    :data:`MAX_YAML_EXPANSION` items and characters, or that refers to itself, is refused.
    """
    loader = _Loader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        _check_expansion(node, 2 * len(text) + MAX_YAML_EXPANSION)
        return loader.construct_document(node)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        problem = getattr(exc, "problem", None) or str(exc)
        raise YamlError(str(problem), line) from None
    finally:
        loader.dispose()


def _check_expansion(root: yaml.Node, limit: int) -> None:
    """Refuse a document whose aliases expand it past ``limit`` items and characters.

    Each node is measured once (its size remembered), so the check costs the size of the text,
    not of what it stands for."""
    sizes: dict[int, int] = {}
    open_: set[int] = set()
    stack: list[yaml.Node] = [root]
    while stack:
        node = stack[-1]
        key = id(node)
        if key in sizes:
            stack.pop()
            continue
        parts = _node_parts(node)
        if key not in open_:
            open_.add(key)
            waiting = [p for p in parts if id(p) not in sizes]
            for part in waiting:
                if id(part) in open_:
                    raise YamlError(
                        f"an alias refers to the list or mapping that holds it (line "
                        f"{part.start_mark.line + 1}); rubriclab reads no self-referring YAML",
                        node.start_mark.line + 1,
                    )
            if waiting:
                stack.extend(waiting)
                continue
        stack.pop()
        open_.discard(key)
        size = 1 + (len(node.value) if isinstance(node, yaml.ScalarNode) else 0)
        size += sum(sizes[id(p)] for p in parts)
        if size > limit:
            raise YamlError(
                f"aliases (*name) expand this YAML to more than {limit:,} items and characters; "
                "write the repeated parts out, or repeat less",
                node.start_mark.line + 1,
            )
        sizes[key] = size


def _node_parts(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    return []


# -- error messages about someone else's data ---------------------------------------------------

_SHORT = reprlib.Repr()
_SHORT.maxlevel = 2
_SHORT.maxdict = _SHORT.maxlist = _SHORT.maxtuple = _SHORT.maxset = _SHORT.maxfrozenset = 4
_SHORT.maxstring = _SHORT.maxother = 60
_SHORT.maxlong = 40

MAX_ERROR_ITEMS = 5  # problems one error message lists before "and N more"


def short_repr(value: Any, limit: int = 80) -> str:
    """``repr(value)`` for an error message: a few items, a few levels, at most ``limit``
    characters, built without ever writing the whole value out (a value read from YAML with
    aliases can stand for a billion items)."""
    text = _SHORT.repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def error_text(exc: BaseException, limit: int = 1_000) -> str:
    """One line saying why data did not validate, never repeating the data itself.

    ``str()`` of a pydantic ``ValidationError`` writes the repr of every bad input in full
    before it shortens it (and names pydantic's types and URLs); this says where and what, one
    problem after another. Any other error's text is cut at ``limit`` characters."""
    if isinstance(exc, ValidationError):
        errors = exc.errors(include_url=False, include_input=False, include_context=False)
        lines = []
        for error in errors[:MAX_ERROR_ITEMS]:
            where = ".".join(str(part) for part in error["loc"])
            message = str(error["msg"]).removeprefix("Value error, ")
            lines.append(f"{where}: {message}" if where else message)
        if len(errors) > MAX_ERROR_ITEMS:
            lines.append(f"and {len(errors) - MAX_ERROR_ITEMS:,} more problems")
        text = "; ".join(lines)
    else:
        text = str(exc)
    return text if len(text) <= limit else text[: limit - 1] + "…"
