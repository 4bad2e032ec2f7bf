"""Pydantic validation errors retold in the user's own terms: key paths, never pydantic text.

A config or rubric file is written by a person, so an error names the key as they wrote it
(``metrics[0].samples``), says what was expected in plain words, and suggests the key they
probably meant when one is misspelled. No pydantic wording or errors.pydantic.dev links leak.
"""

from __future__ import annotations

import difflib
import types
import typing
from collections.abc import Iterable, Sequence
from typing import Any

from pydantic import BaseModel, ValidationError

from .files import short_repr

__all__ = ["did_you_mean", "explain", "key_path", "problems"]

#: pydantic error types -> what a person is told ({input} is the value they wrote)
_PLAIN: dict[str, str] = {
    "int_parsing": "expected a whole number, got {input}",
    "int_type": "expected a whole number, got {input}",
    "int_from_float": "expected a whole number, got {input}",
    "float_parsing": "expected a number, got {input}",
    "float_type": "expected a number, got {input}",
    "bool_parsing": "expected true or false, got {input}",
    "bool_type": "expected true or false, got {input}",
    "string_type": "expected text, got {input}",
    "dict_type": "expected a mapping (key: value lines), got {input}",
    "model_type": "expected a mapping (key: value lines), got {input}",
    "model_attributes_type": "expected a mapping (key: value lines), got {input}",
    "list_type": "expected a list (- item lines), got {input}",
    "too_short": "needs at least {min_length} item(s)",
    "too_long": "takes at most {max_length} item(s)",
    "greater_than_equal": "must be at least {ge}, got {input}",
    "greater_than": "must be more than {gt}, got {input}",
    "less_than_equal": "must be at most {le}, got {input}",
    "less_than": "must be less than {lt}, got {input}",
    "literal_error": "must be one of {expected}, got {input}",
    "enum": "must be one of {expected}, got {input}",
    "string_too_short": "must not be empty",
}


def key_path(loc: Sequence[int | str]) -> str:
    """``('metrics', 0, 'rubric')`` -> ``metrics[0].rubric``."""
    out = ""
    for part in loc:
        if isinstance(part, int) or (isinstance(part, str) and part.isdigit()):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """`` (did you mean 'metrics'?)`` when a choice is close to ``word``, else ``''``."""
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def problems(
    exc: ValidationError,
    model: type[BaseModel] | None = None,
    prefix: str = "",
    top: str = "top level",
) -> list[str]:
    """One line per error: ``key.path: what is wrong`` (``top`` names the whole document)."""
    lines: list[str] = []
    for error in exc.errors(include_url=False):
        loc = [p for p in error["loc"] if not _is_union_tag(p)]
        where = key_path([*([prefix] if prefix else []), *loc])
        kind = error["type"]
        if kind == "extra_forbidden" and loc:
            hint = did_you_mean(str(loc[-1]), _fields_at(model, loc[:-1]))
            at = f" at {where}" if len(loc) > 1 or prefix else ""
            lines.append(f"unknown key {loc[-1]!r}{at}{hint}")
        elif kind == "missing":
            lines.append(f"missing key {where!r}")
        else:
            message = _plain_message(error)
            if loc and message.startswith(f"{loc[-1]} "):  # not "pass_mark: pass_mark must ..."
                lines.append(f"{where} {message[len(str(loc[-1])) + 1 :]}")
            else:
                lines.append(f"{where or top}: {message}")
    return _merge_alternatives(lines)


def _merge_alternatives(lines: list[str]) -> list[str]:
    """A value that fits none of a union's forms: one line, ``expected text or a list, got 3``."""
    merged: dict[str, list[str]] = {}
    for line in lines:
        where, sep, message = line.partition(": ")
        key = where if sep else line
        merged.setdefault(key, []).append(message if sep else "")
    out: list[str] = []
    for where, messages in merged.items():
        if len(messages) == 1 or not all(m.startswith("expected ") for m in messages):
            out.extend(f"{where}: {m}" if m else where for m in dict.fromkeys(messages))
            continue
        got = messages[0].rpartition(", got ")[2]
        wanted = [m.removeprefix("expected ").rpartition(", got ")[0] for m in messages]
        out.append(f"{where}: expected {' or '.join(wanted)}, got {got}")
    return out


def explain(
    exc: ValidationError,
    model: type[BaseModel] | None = None,
    prefix: str = "",
    top: str = "top level",
) -> str:
    """All of :func:`problems` in one line."""
    return "; ".join(problems(exc, model, prefix, top))


def _plain_message(error: Any) -> str:
    ctx = dict(error.get("ctx") or {})
    value = error.get("input")
    shown = (
        "nothing"
        if value is None
        else short_repr(value)
        if not isinstance(value, dict)
        else "a mapping"
    )
    if isinstance(value, list):
        shown = "a list"
    template = _PLAIN.get(error["type"])
    if template is not None:
        try:
            return template.format(input=shown, **ctx)
        except (KeyError, IndexError):
            pass
    msg = str(error.get("msg", "is not valid"))
    # our own validators raise ValueError("...") whose text is already written for people
    return msg.removeprefix("Value error, ").removeprefix("Assertion failed, ")


def _is_union_tag(part: int | str) -> bool:
    """pydantic adds the union member tried (``str``, ``dict[str,any]``) to a location."""
    return isinstance(part, str) and (
        part in {"str", "int", "float", "bool", "list", "dict", "none"}
        or "[" in part
        or part.startswith(("function-", "lax-", "json-"))
    )


def _fields_at(model: type[BaseModel] | None, loc: Sequence[int | str]) -> list[str]:
    """The keys allowed at ``loc`` under ``model``, for "did you mean"."""
    current: Any = model
    for part in loc:
        if current is None:
            return []
        if isinstance(part, int) or (isinstance(part, str) and part.isdigit()):
            current = _inner_model(current, item=True)
            continue
        if not (isinstance(current, type) and issubclass(current, BaseModel)):
            return []
        field = current.model_fields.get(str(part))
        current = None if field is None else _inner_model(field.annotation, item=False)
    if isinstance(current, type) and issubclass(current, BaseModel):
        return list(current.model_fields)
    return []


def _inner_model(annotation: Any, *, item: bool) -> Any:
    """The BaseModel inside ``X | None``, ``list[X]`` (``item``) or ``X`` itself."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin in (typing.Union, types.UnionType):
        for arg in args:
            found = _inner_model(arg, item=item)
            if found is not None:
                return found
        return None
    if item and origin in (list, tuple) and args:
        return _inner_model(args[0], item=False)
    if not item and origin in (list, tuple) and args:
        return annotation  # resolved at the next (index) step
    return None
