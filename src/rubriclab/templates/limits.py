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
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextvars import ContextVar
from types import BuiltinFunctionType, FunctionType, MethodType
from typing import Any

from jinja2.exceptions import SecurityError
from jinja2.runtime import LoopContext
from pydantic import BaseModel

from .values import SafeCall, View, text_lines, unwrap

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
    "check_work",
    "checked_iter",
    "data_size",
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
    """What one render has used so far, and its deadline.

    The budget is CPU time spent by the rendering thread, not wall time: a busy machine (a
    kernel sharing two cores with a 100k-row run) can stall a render for seconds that it never
    spent, and a built-in prompt must not fail its row for that. The wall-clock ``deadline`` is
    only the cheap trigger: when it passes, the thread's CPU clock decides, and moves the
    deadline on by the CPU time still unspent."""

    timeout: float = DEFAULT_RENDER_TIMEOUT
    steps: int = 0
    depth: int = 0
    built: int = 0
    deadline: float = dataclasses.field(default=0.0)
    cpu_start: float = dataclasses.field(default=0.0)

    def __post_init__(self) -> None:
        self.deadline = time.monotonic() + self.timeout
        self.cpu_start = time.thread_time()

    def spent(self) -> bool:
        """True once the render has used its CPU budget; otherwise re-arm the trigger."""
        left = self.timeout - (time.thread_time() - self.cpu_start)
        if left <= 0:
            return True
        self.deadline = time.monotonic() + left
        return False


BUDGET: ContextVar[Budget | None] = ContextVar("rubriclab_template_budget", default=None)


def tick() -> Budget | None:
    """Refuse the render once it is past its deadline."""
    budget = BUDGET.get()
    if budget is not None and time.monotonic() > budget.deadline and budget.spent():
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


def tree_units(value: Any, limit: int = MAX_TREE, *, views: bool = False) -> int:
    """Size of a value counted as if nothing were shared: characters of strings, one per item.

    Comparing, hashing, sorting or printing a value costs this much, so a small list that
    repeats a big one many times is refused on it. With ``views``, bound sequences and mappings
    (the caller's data) are counted through too: data read from YAML with aliases repeats its
    parts the same way. The answer is exact up to ``limit`` and some number past it beyond.
    """
    if isinstance(value, str):
        return len(value) + 1
    items, chars = _expanded(value, limit, deep=views)
    return items + chars


def data_size(value: Any, max_items: int, max_chars: int) -> tuple[int, int]:
    """(items, characters) of ``value`` counted as if nothing were shared, through bound views,
    pydantic models, dataclasses, mappings and sequences: what JSON of it would hold.

    Data read from YAML with aliases (or any structure that repeats a part) is counted at its
    full, repeated size: writing it out would cost that much, however little memory it takes.
    Past either limit the counts are only known to be over it.
    """
    return _expanded(value, max(max_items, max_chars), deep=True)


_HUGE = 1 << 62  # counts stop growing here (a chain of aliases can describe 10**100 items)


def _expanded(value: Any, limit: int, *, deep: bool) -> tuple[int, int]:
    """(items, characters) of ``value`` with every repeat counted, in time linear in the
    distinct containers it holds: each container is measured once and its size remembered, so
    a YAML alias bomb of a billion items is measured in a few dozen steps. A container that
    holds itself counts as over any limit. Stops early once the distinct parts alone are over
    ``limit``."""
    root = unwrap(value) if deep else value
    holds = _DEEP if deep else _SHALLOW
    if _kind(type(root)) not in holds:
        return 1, len(root) if isinstance(root, str) else 0
    if deep:  # most values a template is given are small: counted plainly, it costs less
        quick = _small(root, _QUICK_ITEMS)
        if quick is not None:
            return quick
    sizes: dict[int, tuple[int, int]] = {}
    open_: dict[int, list[Any]] = {}  # containers being measured: what each holds
    stack = [root]
    seen = 0
    while stack:
        obj = stack[-1]
        key = id(obj)
        if key in sizes:
            stack.pop()
            continue
        parts = open_.get(key)
        if parts is None:
            parts = _parts(obj, deep)
            open_[key] = parts
            seen += len(parts) + 1
            if seen > limit:
                return seen, 0
            if (len(open_) + len(sizes)) & 0x3FF == 0:
                tick()
            waiting = []
            for part in parts:
                if _kind(type(part)) in holds and id(part) not in sizes:
                    if id(part) in open_:
                        return _HUGE, 0  # it holds itself
                    waiting.append(part)
            if waiting:
                stack.extend(waiting)
                continue
        stack.pop()
        del open_[key]
        items, chars = 1, 0
        for part in parts:
            if type(part) is str:
                items += 1
                chars += len(part)
                continue
            measured = sizes.get(id(part))  # only containers are measured (and all of them)
            if measured is None:
                items += 1
                if isinstance(part, str):
                    chars += len(part)
            else:
                items += measured[0]
                chars += measured[1]
        sizes[key] = (min(items, _HUGE), min(chars, _HUGE))
    return sizes[id(root)]


_QUICK_ITEMS = 4_096


def _small(root: Any, budget: int) -> tuple[int, int] | None:
    """(items, characters) of ``root`` counted item by item, or None past ``budget`` items."""
    items = chars = 0
    stack = [root]
    kinds = _KINDS
    while stack:
        obj = stack.pop()
        items += 1
        kind_of = type(obj)
        if kind_of is str:
            chars += len(obj)
            continue
        kind = kinds.get(kind_of)
        if kind is None:
            kind = _kind(kind_of)
        if kind == _LEAF:
            if isinstance(obj, str):
                chars += len(obj)
            continue
        if items > budget:
            return None
        if kind == _VIEW:
            items -= 1
            stack.append(unwrap(obj))
        elif kind in (_SEQ, _SET):
            stack.extend(obj)
        elif kind in (_DICT, _MAPPING):
            stack.extend(obj.keys())
            stack.extend(obj.values())
        elif kind == _MODEL:
            stack.extend(obj.__dict__.values())
        else:
            stack.extend(getattr(obj, f.name) for f in dataclasses.fields(obj))
    return items, chars


# what a value is to the measure: its type's kind, worked out once per type
_LEAF, _SEQ, _DICT, _SET, _MAPPING, _MODEL, _DATACLASS, _VIEW = range(8)
_SHALLOW = frozenset({_SEQ, _DICT})  # what templates build
_DEEP = frozenset({_SEQ, _DICT, _SET, _MAPPING, _MODEL, _DATACLASS})  # and what they are given
_KINDS: dict[type, int] = {str: _LEAF, int: _LEAF, float: _LEAF, bool: _LEAF, list: _SEQ}
_KINDS[type(None)] = _LEAF


def _kind(kind: type) -> int:
    found = _KINDS.get(kind)
    if found is not None:
        return found
    if issubclass(kind, View):
        found = _VIEW
    elif issubclass(kind, (list, tuple)):
        found = _SEQ
    elif issubclass(kind, dict):
        found = _DICT
    elif issubclass(kind, (set, frozenset)):
        found = _SET
    elif issubclass(kind, Mapping):
        found = _MAPPING
    elif issubclass(kind, BaseModel):
        found = _MODEL
    elif dataclasses.is_dataclass(kind):
        found = _DATACLASS
    else:
        found = _LEAF
    if len(_KINDS) < 10_000:
        _KINDS[kind] = found
    return found


def _parts(obj: Any, deep: bool) -> list[Any]:
    """What a container holds (a mapping's keys and values), views unwrapped when ``deep``."""
    kind = _kind(type(obj))
    if kind in (_SEQ, _SET):
        parts = list(obj)
    elif kind in (_DICT, _MAPPING):
        parts = [*obj.keys(), *obj.values()]
    elif kind == _MODEL:
        parts = list(obj.__dict__.values())
    else:
        parts = [getattr(obj, f.name) for f in dataclasses.fields(obj)]
    if deep:
        return [unwrap(p) if isinstance(p, View) else p for p in parts]
    return parts


def check_work(value: Any, what: str) -> None:
    """Refuse to compare, sort or hash ``value`` when that would cost more than the budget.

    Sorting, ``unique``, ``max``, ``==`` and ``in`` cost up to the size of what they compare,
    counted with every repeat (a list holding one long string 100,000 times compares 100,000
    long strings); that size must stay under :data:`MAX_TREE` like any value a template builds.
    """
    if isinstance(value, (str, int, float, bool)) or value is None:
        if isinstance(value, str) and len(value) > MAX_TREE:
            raise refuse(
                f"{what} would compare a string of {len(value):,} characters; templates may "
                f"compare at most {MAX_TREE:,}"
            )
        return
    if tree_units(value, views=True) > MAX_TREE:
        raise refuse(
            f"{what} would compare a value of more than {MAX_TREE:,} characters and items "
            "counting what it repeats; templates must stay small"
        )


def checked_iter(items: Iterable[Any], what: str) -> Iterator[Any]:
    """A filter's lazy output (``batch``, ``map``, ``select``...), each item checked as it comes:
    ``batch(100000, s)`` fills rows with 100,000 references to ``s``, counted at full size."""
    for item in items:
        tick()
        yield check_result(item, what)


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
    if isinstance(value, (list, tuple, dict)) or (
        isinstance(value, View) and isinstance(unwrap(value), (list, tuple, dict))
    ):
        # bound data is written piece by piece too: YAML aliases can make it huge as text
        writer = _Writer(limit, what)
        _write_repr(unwrap(value), writer)
        return "".join(writer.parts)
    if isinstance(value, View):
        lines = text_lines(value)
        if lines is not None:  # a trace's outline: stopped as soon as it is too long
            writer = _Writer(limit, what)
            for n, line in enumerate(lines):
                if n:
                    writer.add("\n")
                writer.add(line)
                tick()
            return "".join(writer.parts)
    else:
        _refuse_unprintable(value)
    text = str(value)
    check_chars(len(text), what)
    return text


def _refuse_unprintable(value: Any) -> None:
    """Functions and lazy sequences print as Python's ``<... at 0x7f...>``: a memory address
    in a prompt, never what the author meant. Say what to write instead."""
    if isinstance(value, Iterator) and not isinstance(value, LoopContext):
        raise refuse(
            "a lazy sequence (the output of batch, map, select...) cannot be printed; "
            "add | list, or | join(', ')"
        )
    if isinstance(value, (FunctionType, BuiltinFunctionType, MethodType)):
        name = getattr(value, "__name__", "function").lstrip("_").removeprefix("bounded_")
        raise refuse(f"{name} is a function: call it, e.g. {name}(3), rather than print it")


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
            _refuse_unprintable(item)
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
