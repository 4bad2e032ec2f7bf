"""Limits on what one template render may build and how long it may run.

A render gets a :class:`Budget`: a wall-clock deadline, loop steps, call depth and the total size
of everything it builds. The sandbox checks it on every attribute read, call, operator, filter and
loop step (:func:`tick`), so a render either finishes quickly or fails with a security error.
Sizes are checked on what is produced, whatever produced it: every string, list and integer a
template builds is measured before or right after it exists (:func:`check_chars`,
:func:`check_tree`), and anything that turns values into text goes through :func:`bounded_str`.
The few ``str`` methods templates may call are in :data:`STR_METHODS`, each size-checked.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Iterable
from contextvars import ContextVar
from typing import Any

from jinja2.exceptions import SecurityError

from .values import SafeCall, View

__all__ = [
    "DEFAULT_RENDER_TIMEOUT",
    "MAX_BUILT_CHARS",
    "MAX_CALL_DEPTH",
    "MAX_INT_BITS",
    "MAX_ITEMS",
    "MAX_LOOP_STEPS",
    "MAX_RANGE",
    "MAX_RENDER_BUILT",
    "Budget",
    "bounded_str",
    "check_chars",
    "check_int",
    "check_items",
    "check_result",
    "check_tree",
    "refuse",
    "str_method",
    "tick",
]

MAX_RANGE = 10_000  # items a single range() may produce
MAX_ITEMS = 100_000  # items one list/tuple/dict built in a template may hold
MAX_BUILT_CHARS = 2_000_000  # characters one string (or one value's text) may hold
MAX_TREE = 2_000_000  # size of one built value counted with nesting (characters + items)
MAX_RENDER_BUILT = 20_000_000  # everything one render builds, added up (characters + items)
MAX_LOOP_STEPS = 1_000_000  # loop iterations per render, over all loops
MAX_CALL_DEPTH = 48  # nested calls (macros, loop(), methods) per render
MAX_INT_BITS = 100_000  # size of an integer a template may build
DEFAULT_RENDER_TIMEOUT = 2.0  # seconds of wall clock per render


def refuse(message: str) -> SecurityError:
    return SecurityError(message)


@dataclasses.dataclass
class Budget:
    """What one render has used so far, and its deadline."""

    timeout: float = DEFAULT_RENDER_TIMEOUT
    steps: int = 0
    depth: int = 0
    built: int = 0
    deadline: float = dataclasses.field(default=0.0)

    def __post_init__(self) -> None:
        self.deadline = time.monotonic() + self.timeout


BUDGET: ContextVar[Budget | None] = ContextVar("rubriclab_template_budget", default=None)


def tick() -> Budget | None:
    """Refuse the render once it is past its deadline."""
    budget = BUDGET.get()
    if budget is not None and time.monotonic() > budget.deadline:
        raise refuse(
            f"the render ran longer than its time budget of {budget.timeout:g} s "
            "(render_timeout); templates must render quickly"
        )
    return budget


def _spend(units: int) -> None:
    budget = BUDGET.get()
    if budget is not None:
        budget.built += units
        if budget.built > MAX_RENDER_BUILT:
            raise refuse(
                f"the render built more than {MAX_RENDER_BUILT:,} characters and items in "
                "all; templates must stay small"
            )


def check_chars(size: int, what: str) -> None:
    """Refuse a string of ``size`` characters before (or right after) it is built."""
    if size > MAX_BUILT_CHARS:
        raise refuse(
            f"{what} would build a string of about {size:,} characters; "
            f"templates may build at most {MAX_BUILT_CHARS:,}"
        )


def check_items(n: int, what: str) -> None:
    if n > MAX_ITEMS:
        raise refuse(
            f"{what} would build a list of {n:,} items; templates may build at most {MAX_ITEMS:,}"
        )


def check_int(value: int, what: str) -> None:
    bits = value.bit_length()
    if bits > MAX_INT_BITS:
        raise refuse(
            f"{what} would build an integer of about {bits:,} bits; the limit is {MAX_INT_BITS:,}"
        )


def tree_units(value: Any, limit: int = MAX_TREE) -> int:
    """Size of a value counted as if nothing were shared: characters of strings, one per item.

    Stops counting past ``limit``: comparing, hashing, sorting or printing a value costs at most
    this much, so a small list that repeats a big one many times is refused here.
    """
    total = 0
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            total += len(item) + 1
        elif isinstance(item, (list, tuple)):
            total += len(item) + 1
            stack.extend(item)
        elif isinstance(item, dict):
            total += 2 * len(item) + 1
            stack.extend(item.keys())
            stack.extend(item.values())
        else:
            total += 1
        if total > limit:
            return total
    return total


def check_tree(value: Any, what: str) -> Any:
    """Refuse a built list/tuple/dict that is too big once nesting is counted; count it."""
    if isinstance(value, (list, tuple, dict)):
        check_items(len(value), what)
        units = tree_units(value)
        if units > MAX_TREE:
            raise refuse(
                f"{what} would build a value of more than {MAX_TREE:,} characters and items "
                "counting what it repeats; templates must stay small"
            )
        _spend(units)
    return value


def check_result(value: Any, what: str) -> Any:
    """Check anything a call, filter or operator produced, by its kind."""
    if isinstance(value, str):
        check_chars(len(value), what)
        _spend(len(value))
    elif isinstance(value, bool):
        pass
    elif isinstance(value, int):
        check_int(value, what)
    elif isinstance(value, (bytes, bytearray, memoryview)):
        raise refuse(f"{what} produced bytes; templates work with text only")
    else:
        check_tree(value, what)
    return value


# --------------------------------------------------------------------------------------
# Text of any value, bounded
# --------------------------------------------------------------------------------------


class _Writer:
    def __init__(self, limit: int, what: str) -> None:
        self.parts: list[str] = []
        self.size = 0
        self.limit = limit
        self.what = what

    def add(self, text: str) -> None:
        self.size += len(text)
        if self.size > self.limit:
            raise refuse(
                f"{self.what} would build a string of more than {self.limit:,} characters; "
                f"templates may build at most {self.limit:,}"
            )
        self.parts.append(text)


def bounded_str(value: Any, what: str = "text of a value", limit: int = MAX_BUILT_CHARS) -> str:
    """``str(value)`` as Jinja would print it, refused past ``limit`` characters as it grows."""
    if isinstance(value, str):
        check_chars(len(value), what)
        return value
    if value is None or isinstance(value, (bool, int, float)):
        return str(value)
    if isinstance(value, (list, tuple, dict)):
        writer = _Writer(limit, what)
        _write_repr(value, writer)
        return "".join(writer.parts)
    text = str(value)
    check_chars(len(text), what)
    return text


def _write_repr(value: Any, out: _Writer) -> None:
    """Python's repr of nested lists/tuples/dicts, written piece by piece so it can stop early."""
    stack: list[Any] = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, _Lit):
            out.add(item.text)
            continue
        tick()
        if isinstance(item, list | tuple):
            close = "]" if isinstance(item, list) else (",)" if len(item) == 1 else ")")
            out.add("[" if isinstance(item, list) else "(")
            stack.append(_Lit(close))
            for i in range(len(item) - 1, -1, -1):
                stack.append(item[i])
                if i:
                    stack.append(_Lit(", "))
        elif isinstance(item, dict):
            out.add("{")
            stack.append(_Lit("}"))
            pairs = list(item.items())
            for i in range(len(pairs) - 1, -1, -1):
                key, val = pairs[i]
                stack.append(val)
                stack.append(_Lit(": "))
                stack.append(key)
                if i:
                    stack.append(_Lit(", "))
        elif isinstance(item, View):
            text = repr(item)
            out.add(text)
        else:
            out.add(repr(item))


class _Lit:
    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


# --------------------------------------------------------------------------------------
# str methods templates may call
# --------------------------------------------------------------------------------------


def replace_size(s: str, old: str, new: str, count: int | None) -> int:
    hits = len(s) + 1 if old == "" else s.count(old)
    if count is not None and count >= 0:
        hits = min(hits, count)
    return len(s) + hits * (len(new) - len(old))


def _replace(s: str, old: str, new: str, count: int = -1) -> str:
    if isinstance(old, str) and isinstance(new, str) and isinstance(count, int):
        check_chars(replace_size(s, old, new, count), "str.replace()")
    return s.replace(old, new, count)


def _pad(name: str) -> Callable[..., str]:
    def pad(s: str, width: int, *args: Any) -> str:
        if isinstance(width, int):
            check_chars(width, f"str.{name}()")
        method: Callable[..., str] = getattr(s, name)
        return method(width, *args)

    return pad


def _join(s: str, items: Iterable[Any]) -> str:
    parts = []
    size = 0
    for item in items:
        tick()
        if not isinstance(item, str):
            raise TypeError(f"str.join() takes text items, got {type(item).__name__}")
        size += len(item) + len(s)
        check_chars(size, "str.join()")
        parts.append(item)
    return s.join(parts)


def _split(name: str) -> Callable[..., list[str]]:
    def split(s: str, sep: str | None = None, maxsplit: int = -1) -> list[str]:
        if not isinstance(maxsplit, int) or maxsplit < 0 or maxsplit > MAX_ITEMS:
            maxsplit = MAX_ITEMS
        parts: list[str] = getattr(s, name)(sep, maxsplit)
        check_items(len(parts) - 1, f"str.{name}()")
        return parts

    return split


def _splitlines(s: str, keepends: bool = False) -> list[str]:
    check_items(s.count("\n") + s.count("\r"), "str.splitlines()")
    return s.splitlines(keepends)


def _plain(name: str) -> Callable[..., Any]:
    def call(s: str, *args: Any, **kwargs: Any) -> Any:
        return getattr(s, name)(*args, **kwargs)

    return call


_PLAIN_STR_METHODS = [
    "lower",
    "upper",
    "title",
    "capitalize",
    "casefold",
    "swapcase",
    "strip",
    "lstrip",
    "rstrip",
    "removeprefix",
    "removesuffix",
    "startswith",
    "endswith",
    "find",
    "rfind",
    "index",
    "rindex",
    "count",
    "partition",
    "rpartition",
    "isalnum",
    "isalpha",
    "isascii",
    "isdecimal",
    "isdigit",
    "isidentifier",
    "islower",
    "isnumeric",
    "isprintable",
    "isspace",
    "istitle",
    "isupper",
]

#: str methods a template may call; every other one (format, encode, translate...) is refused
STR_METHODS: dict[str, Callable[..., Any]] = {name: _plain(name) for name in _PLAIN_STR_METHODS}
STR_METHODS.update(
    {
        "replace": _replace,
        "join": _join,
        "split": _split("split"),
        "rsplit": _split("rsplit"),
        "splitlines": _splitlines,
        **{name: _pad(name) for name in ("center", "ljust", "rjust", "zfill")},
    }
)


def str_method(s: str, name: str) -> SafeCall | None:
    """The size-checked method ``name`` of ``s``, or None when templates may not call it."""
    impl = STR_METHODS.get(name)
    if impl is None:
        return None

    def call(*args: Any, **kwargs: Any) -> Any:
        return check_result(impl(s, *args, **kwargs), f"str.{name}()")

    return SafeCall(call, f"str.{name}")
