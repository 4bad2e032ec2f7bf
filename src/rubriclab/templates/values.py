"""What a template may see: bound values turned into read-only views with an allowlist.

Everything a caller binds into a template passes :func:`bind` first. Plain data (strings,
numbers, ``None``, booleans) passes as it is; mappings and sequences become read-only views whose
items are bound in turn; a pydantic model or dataclass becomes a :class:`RecordView` exposing only
its data fields, plus the properties and methods listed for rubriclab's own classes in
:func:`_declared_members`. Nothing else of the original object is reachable: no pydantic
loaders/dumpers (``parse_raw``, ``model_dump_json``), no file access, no dunders. The sandbox in
:mod:`rubriclab.templates` asks :func:`member` for every attribute a template reads.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import enum
import functools
import inspect
import numbers
from collections.abc import Callable, Iterator, Mapping, Sequence, Set
from typing import Any

from pydantic import BaseModel

__all__ = [
    "MISSING",
    "MapView",
    "MemberRefused",
    "OpaqueView",
    "RecordView",
    "SafeCall",
    "SeqView",
    "View",
    "bind",
    "member",
    "refuse_member",
    "text_lines",
    "unwrap",
]


class _Missing:
    """Returned by :func:`member` when the object has no such attribute at all."""

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()


class MemberRefused(Exception):
    """The attribute exists but templates may not read it; the message names it."""


class SafeCall:
    """A callable a template may call: a vetted method whose arguments and result are checked.

    The sandbox calls only these (plus its own macros and loops); ``check`` sees the arguments
    before the call and :func:`bind` the result after it.
    """

    __slots__ = ("_fn", "label")

    def __init__(self, fn: Callable[..., Any], label: str) -> None:
        self._fn = fn
        self.label = label

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._fn(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<method {self.label}>"


class View:
    """Base of every read-only view: equal and hashed by the identity of what it wraps."""

    __slots__ = ("_obj",)

    def __init__(self, obj: Any) -> None:
        self._obj = obj

    def __eq__(self, other: object) -> bool:
        return isinstance(other, View) and other._obj is self._obj

    def __hash__(self) -> int:
        return id(self._obj)

    def __str__(self) -> str:
        return str(self._obj)

    def __repr__(self) -> str:
        return repr(self._obj)


class MapView(View, Mapping[Any, Any]):
    """A read-only mapping; items are bound on the way out."""

    __slots__ = ()

    def __getitem__(self, key: Any) -> Any:
        return bind(self._obj[key])

    def __iter__(self) -> Iterator[Any]:
        return (bind(k) for k in self._obj)

    def __len__(self) -> int:
        return len(self._obj)

    def __contains__(self, key: object) -> bool:
        try:
            return key in self._obj
        except TypeError:
            return False

    __eq__ = View.__eq__
    __hash__ = View.__hash__


class SeqView(View, Sequence[Any]):
    """A read-only sequence (lists, tuples, sets in their iteration order); items are bound."""

    __slots__ = ()

    def __init__(self, obj: Any) -> None:
        super().__init__(obj if isinstance(obj, Sequence) else list(obj))

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return SeqView(self._obj[index])
        return bind(self._obj[index])

    def __iter__(self) -> Iterator[Any]:
        return (bind(x) for x in self._obj)

    def __len__(self) -> int:
        return len(self._obj)

    __eq__ = View.__eq__
    __hash__ = View.__hash__


class RecordView(View):
    """A pydantic model or dataclass: its data fields and its declared safe members only."""

    __slots__ = ()


class OpaqueView(View):
    """Any other object (dates, decimals, a user's class): printable and JSON-able, no members."""

    __slots__ = ()


_PLAIN = (str, int, float, bool, type(None))


def bind(value: Any) -> Any:
    """``value`` as templates may see it (see the module docstring)."""
    if type(value) in _PLAIN:
        return value
    if isinstance(value, View):
        return value
    if isinstance(value, enum.Enum):
        return bind(value.value)
    if isinstance(value, str):
        return str.__str__(value)  # a plain copy: a subclass's methods are not reachable
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        return float(value)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return f"<{len(value)} bytes>"  # bytes are never handed to templates
    if isinstance(value, (BaseModel,)) or (
        dataclasses.is_dataclass(value) and not isinstance(value, type)
    ):
        return RecordView(value)
    if isinstance(value, Mapping):
        return MapView(value)
    if isinstance(value, (list, tuple, range, Set, frozenset)):
        return SeqView(value)
    if type(value).__module__.split(".")[0] in ("numpy", "pandas") and hasattr(value, "tolist"):
        return bind(value.tolist())  # an array cell (parquet list columns) or a Series
    return OpaqueView(value)


def text_lines(view: View) -> Iterator[str] | None:
    """The printed text of a view whose text is long enough to build line by line (a trace's
    outline), or None when ``str()`` of it is as small as the value itself."""
    obj = view._obj
    trace = _trace_type()
    if isinstance(obj, trace):
        lines: Iterator[str] = obj.outline()
        return lines
    return None


@functools.cache
def _trace_type() -> Any:
    from ..traces import Trace

    return Trace


def unwrap(value: Any) -> Any:
    """The object behind a view (for rubriclab's own methods and for ``tojson``)."""
    return value._obj if isinstance(value, View) else value


# --------------------------------------------------------------------------------------
# Members a template may read
# --------------------------------------------------------------------------------------


@functools.cache
def _declared_members() -> tuple[tuple[type, frozenset[str]], ...]:
    """Properties and methods of rubriclab's own classes that templates may use.

    Each one only reads the object (no files, no network, no pydantic dumpers) and its result is
    bound again, so what it returns is as safe as what was bound.
    """
    from ..rubric import Criterion, Rubric
    from ..traces import Span, Trace

    return (
        (Rubric, frozenset({"names", "is_checklist", "has_negative_weights"})),
        (
            Criterion,
            frozenset({"is_yes_no", "question", "min_score", "max_score", "scores", "descriptor"}),
        ),
        (Span, frozenset({"duration", "is_error", "input_text", "output_text", "summary"})),
        (
            Trace,
            frozenset(
                {
                    "get",
                    "roots",
                    "children",
                    "parent",
                    "depth",
                    "walk",
                    "find",
                    "tool_calls",
                    "start",
                    "end",
                    "duration",
                    "final_answer",
                    "errors",
                    "summary",
                    "tree",
                }
            ),
        ),
    )


def _record_members(obj: Any) -> frozenset[str]:
    cls: Any = type(obj)
    return _members_of(cls)


@functools.lru_cache(maxsize=256)
def _members_of(cls: Any) -> frozenset[str]:
    """Data fields of a model or dataclass type, plus its declared safe members."""
    names: set[str] = set()
    if issubclass(cls, BaseModel):
        names.update(cls.model_fields)
        names.update(cls.model_computed_fields)
    else:
        names.update(f.name for f in dataclasses.fields(cls))
    for base, declared in _declared_members():
        if issubclass(cls, base):
            names.update(declared)
    return frozenset(n for n in names if not n.startswith("_"))


MAX_ARG_CHARS = 10_000  # text a template may pass to a declared method


def _argument(value: Any, label: str) -> Any:
    """An argument for one of rubriclab's declared methods: a bound object or a small scalar."""
    if isinstance(value, View):
        return value._obj
    if type(value) in _PLAIN:
        if isinstance(value, str) and len(value) > MAX_ARG_CHARS:
            raise TypeError(f"{label}() takes text of at most {MAX_ARG_CHARS:,} characters")
        return value
    raise TypeError(
        f"{label}() takes text, numbers or objects the template was given, "
        f"not a {type(value).__name__}"
    )


def _bound_method(method: Any, label: str) -> SafeCall:
    def call(*args: Any, **kwargs: Any) -> Any:
        given = tuple(_argument(a, label) for a in args)
        named = {k: _argument(v, label) for k, v in kwargs.items()}
        return bind(method(*given, **named))

    return SafeCall(call, label)


def _type_name(obj: Any) -> str:
    return type(unwrap(obj)).__name__


def refuse_member(obj: Any, name: str) -> MemberRefused:
    return MemberRefused(
        f"access to attribute {name!r} of {_type_name(obj)!r} object is unsafe: "
        "templates may read data fields, not internals or methods that are not on the allowlist"
    )


def _has(obj: Any, name: str) -> bool:
    return inspect.getattr_static(obj, name, MISSING) is not MISSING


def view_member(view: View, name: str) -> Any:
    """``view.name`` for a template: a field, a declared member, MISSING, or a refusal."""
    obj = view._obj
    if name.startswith("_"):
        raise refuse_member(view, name)
    if isinstance(view, RecordView):
        if name in _record_members(obj):
            value = getattr(obj, name)
            if inspect.ismethod(value):
                return _bound_method(value, f"{type(obj).__name__}.{name}")
            return bind(value)
    elif isinstance(view, OpaqueView) and isinstance(obj, _TIMES) and name in _TIME_MEMBERS:
        value = getattr(obj, name)
        if callable(value):  # isoformat() and total_seconds(): no arguments
            return SafeCall(lambda: bind(value()), f"{type(obj).__name__}.{name}")
        return bind(value)
    elif isinstance(view, MapView):
        if name in _MAP_METHODS:
            return _map_method(view, name)
        try:
            if name in obj:
                return bind(obj[name])
        except TypeError:
            pass
    if _has(obj, name) or _has(view, name):
        raise refuse_member(view, name)
    return MISSING


_TIMES = (_dt.date, _dt.time, _dt.timedelta)
#: what a template may read of a date, time or duration (no strftime: its format is code)
_TIME_MEMBERS = frozenset(
    [
        "year",
        "month",
        "day",
        "hour",
        "minute",
        "second",
        "microsecond",
        "isoformat",
        "days",
        "seconds",
        "total_seconds",
    ]
)
_MAP_METHODS = frozenset({"items", "keys", "values", "get"})


def _map_method(mapping: Mapping[Any, Any], name: str) -> SafeCall:
    """``items``/``keys``/``values``/``get`` of a mapping, answering plain lists."""
    label = f"dict.{name}"
    if name == "items":
        return SafeCall(lambda: [(k, mapping[k]) for k in mapping], label)
    if name == "keys":
        return SafeCall(lambda: list(mapping), label)
    if name == "values":
        return SafeCall(lambda: [mapping[k] for k in mapping], label)

    def get(key: Any, default: Any = None) -> Any:
        try:
            return mapping.get(key, default)
        except TypeError:
            return default

    return SafeCall(get, label)


def dict_member(obj: Mapping[Any, Any], name: str) -> Any:
    """``d.name`` on a mapping the template built: its key, one of four readers, or refused."""
    if name.startswith("_"):
        raise refuse_member(obj, name)
    if name in _MAP_METHODS:
        return _map_method(obj, name)
    if name in obj:
        return obj[name]
    if _has(obj, name):
        raise refuse_member(obj, name)
    return MISSING


def member(obj: Any, name: str) -> Any:
    """``obj.name`` for values that are not strings or Jinja's own objects (see the sandbox)."""
    if isinstance(obj, View):
        return view_member(obj, name)
    if isinstance(obj, dict):
        return dict_member(obj, name)
    if name.startswith("_"):
        raise refuse_member(obj, name)
    if isinstance(obj, tuple) and name in getattr(type(obj), "_fields", ()):
        return getattr(obj, name)  # a named tuple, e.g. groupby's (grouper, list)
    if _has(obj, name):
        raise refuse_member(obj, name)
    return MISSING
