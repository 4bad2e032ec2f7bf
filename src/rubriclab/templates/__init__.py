"""Sandboxed Jinja2 rendering for every prompt rubriclab sends.

Built-in prompts and user-written templates go through the same sandbox, because templates come
from shared notebooks, run configs and ``%%rubric --template`` cells: every template is treated
as hostile. The sandbox is an allowlist, not a blocklist:

* what a template can reach is plain data. Every bound value becomes a read-only view first
  (:mod:`rubriclab.templates.values`): mappings, sequences, strings, numbers, and records exposing
  only data fields plus the few properties and methods declared safe for rubriclab's own
  classes. Any other attribute, item or call is refused with :class:`TemplateSecurityError`
  naming it, including through filters (``map(attribute=)``, ``sort(attribute=)``...);
* ``StrictUndefined``: a misspelt variable is an error naming the template and line, never
  an empty string in a prompt;
* an explicit filter allowlist (:data:`ALLOWED_FILTERS`), a short ``str`` method allowlist,
  and one global, a bounded ``range``;
* limits on what is produced, whatever produces it (:mod:`rubriclab.templates.limits`): every
  string, list and integer a template builds is size-checked, text of any value is built with
  a limit, and a render has a wall-clock budget (``render_timeout``, default 2 s) checked in
  loops, calls, filters and operators. A template that hits a limit fails fast on its own row.

A rendered prompt longer than ``max_prompt_chars`` raises :class:`PromptTooLong`; prompts
are never truncated. The one truncation allowed is ``tojson(max_chars=N)``, which caps a
single value the template author chose to cap, with a visible marker.

Built-in prompt texts live in ``rubriclab/templates/prompts/*.jinja`` (a data directory: a package
directory named ``templates`` would clash with this module) and load with
:func:`load_builtin`. They are compiled in the sandbox like any template, and once more in a
plain Jinja environment that renders them: their source ships inside this package, so whoever
could change it could change this module too, and what they print (the row's text, the
rubric's names and levels) is printed exactly as the sandbox prints it. That is a quarter of a
judge call's client CPU saved on every row; user templates never take that path.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import enum
import functools
import json
import operator
import re
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sized
from pathlib import Path
from typing import Any, TypeVar, cast

import jinja2
import jinja2.nodes
from jinja2 import filters as jfilters
from jinja2 import meta as jmeta
from jinja2 import tests as jtests
from jinja2.compiler import CodeGenerator, Frame
from jinja2.exceptions import SecurityError
from jinja2.runtime import BlockReference, Context, LoopContext, Macro, TemplateReference
from jinja2.sandbox import ImmutableSandboxedEnvironment
from pydantic import BaseModel

from .limits import (
    BUDGET,
    DEFAULT_RENDER_TIMEOUT,
    MAX_BUILT_CHARS,
    MAX_CALL_DEPTH,
    MAX_INT_BITS,
    MAX_ITEMS,
    MAX_LOOP_STEPS,
    MAX_RANGE,
    MAX_RENDER_BUILT,
    MAX_TREE,
    Budget,
    bounded_str,
    check_chars,
    check_items,
    check_result,
    check_tree,
    check_work,
    checked_iter,
    data_size,
    refuse,
    replace_size,
    str_method,
    tick,
    tree_units,
)
from .values import (
    MISSING,
    MapView,
    MemberRefused,
    SafeCall,
    SeqView,
    View,
    bind,
    member,
    refuse_member,
    unwrap,
)

__all__ = [
    "ALLOWED_FILTERS",
    "DEFAULT_MAX_PROMPT_CHARS",
    "DEFAULT_RENDER_TIMEOUT",
    "PROMPTS_DIR",
    "PromptLibrary",
    "PromptTooLong",
    "Template",
    "TemplateError",
    "TemplateSecurityError",
    "brace_placeholders",
    "builtin_names",
    "check_render_timeout",
    "compile_template",
    "format_braces",
    "load_builtin",
    "render",
    "tojson",
]

DEFAULT_MAX_PROMPT_CHARS = 100_000
PROMPTS_DIR = Path(__file__).with_name("prompts")


class TemplateError(Exception):
    """A template could not be compiled or rendered; the message names the template and line."""

    def __init__(self, reason: str, *, template: str | None = None, lineno: int | None = None):
        self.reason = reason
        self.template_name = template
        self.lineno = lineno
        where = ""
        if template is not None:
            where = f"template {template!r}"
            if lineno is not None:
                where += f" line {lineno}"
            where += ": "
        super().__init__(where + reason)


MAX_TOJSON_INDENT = 16
_MAX_ERROR_CHARS = 1_000  # of an unexpected error's message, in a row's error
MAX_WORDWRAP_CHARS = 200_000  # wrapping is slow per character
MAX_TEMPLATE_CHARS = 100_000  # source text of one template (text is cheap, tags are not)
MAX_TEMPLATE_CODE_CHARS = 20_000  # characters inside tags: parsing them is the slow part
MAX_TEMPLATE_NODES = 5_000  # expressions and tags in one template: compiling is not free
MAX_RENDER_TIMEOUT = 600.0  # the most a configured render budget may be, in seconds
_OVERFLOW_COUNT_LIMIT = 20_000_000  # stop measuring a too-long prompt past this size


class TemplateSecurityError(TemplateError):
    """The sandbox refused something: private attributes, a disallowed filter, a size limit."""


class PromptTooLong(TemplateError):
    """The rendered prompt is over ``max_prompt_chars``; it is refused, never truncated."""

    def __init__(self, chars: int, limit: int, *, template: str | None = None, exact: bool = True):
        self.chars = chars
        self.limit = limit
        size = f"{chars:,} characters" if exact else f"more than {chars:,} characters"
        super().__init__(
            f"the rendered prompt is {size}, over the limit of {limit:,} (max_prompt_chars). "
            "Prompts are never truncated: raise max_prompt_chars if the input really is this "
            "large, or cap a large value in the template with tojson(max_chars=N).",
            template=template,
        )


# --------------------------------------------------------------------------------------
# tojson: the one allowed truncation
# --------------------------------------------------------------------------------------


def _json_default(obj: Any) -> Any:
    """Turn the objects templates meet (pydantic models, dataclasses, dates...) into JSON."""
    if isinstance(obj, View):
        return unwrap(obj)
    if isinstance(obj, BaseModel):
        return obj.model_dump(mode="json")
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: getattr(obj, f.name) for f in dataclasses.fields(obj)}
    if isinstance(obj, Mapping):
        return {str(k): v for k, v in obj.items()}
    if isinstance(obj, (set, frozenset)):
        try:
            return sorted(obj)
        except TypeError:
            return list(obj)
    if isinstance(obj, (_dt.datetime, _dt.date, _dt.time)):
        return obj.isoformat()
    if isinstance(obj, enum.Enum):
        return obj.value
    if isinstance(obj, (bytes, bytearray)):
        return f"<{len(obj)} bytes>"
    if isinstance(obj, (tuple, list)) or (
        isinstance(obj, Iterable) and not isinstance(obj, (str, Mapping))
    ):
        return list(obj)
    return str(obj)


def tojson(value: Any, indent: int | None = None, max_chars: int | None = None) -> str:
    """JSON text of ``value``; with ``max_chars``, the text is cut there and marked as cut.

    Unlike Jinja's own ``tojson`` this does not HTML-escape: prompts are text. The text is
    written piece by piece, so a value whose JSON would be huge is refused (or, with
    ``max_chars``, cut) without ever being built whole.
    """
    if indent is not None and (
        not isinstance(indent, int)
        or isinstance(indent, bool)
        or not 0 <= indent <= MAX_TOJSON_INDENT
    ):
        raise ValueError(
            f"tojson indent must be an integer from 0 to {MAX_TOJSON_INDENT}, got {indent!r}"
        )
    if max_chars is not None and (
        not isinstance(max_chars, int) or isinstance(max_chars, bool) or max_chars < 1
    ):
        raise ValueError(f"tojson max_chars must be a positive integer, got {max_chars!r}")
    # measured first, counting what it repeats: data read from YAML with aliases is small in
    # memory and huge as JSON, and pydantic would write each model's JSON whole
    items, chars = data_size(value, MAX_TREE, MAX_RENDER_BUILT)
    big = items > MAX_TREE or chars > MAX_RENDER_BUILT
    if max_chars is None and (big or chars > MAX_BUILT_CHARS):
        raise refuse(
            f"tojson would write more than {MAX_BUILT_CHARS:,} characters (counting what the "
            "value repeats); templates may build at most that: cap it with tojson(max_chars=N)"
        )
    if not big and (
        isinstance(value, View) or value is None or isinstance(value, (str, int, float))
    ):
        # one bound value of bounded size: written whole, at the JSON encoder's speed
        text = json.dumps(value, indent=indent, ensure_ascii=False, default=_json_default)
        return _cut(text, len(text), max_chars)
    # written piece by piece, and stopped once the cut is known
    encoder = json.JSONEncoder(indent=indent, ensure_ascii=False, default=_streamed_default)
    keep = MAX_BUILT_CHARS if max_chars is None else min(max_chars, MAX_BUILT_CHARS)
    parts: list[str] = []
    kept = total = 0
    exact = True
    for n, chunk in enumerate(encoder.iterencode(value)):
        total += len(chunk)
        if kept <= keep:
            parts.append(chunk)
            kept += len(chunk)
        elif max_chars is None:
            check_chars(total, "tojson")
        elif big or total > _TOJSON_COUNT_LIMIT:  # enough to say how much was left out
            exact = False
            break
        if n % 64 == 0:
            tick()
    return _cut("".join(parts), total, max_chars, exact=exact)


def _streamed_default(obj: Any) -> Any:
    """:func:`_json_default` for a value written piece by piece: mappings and lists stream, but
    pydantic writes a model's JSON whole, so a model that repeats its parts is refused."""
    target = unwrap(obj)
    if isinstance(target, BaseModel):
        items, chars = data_size(target, MAX_TREE, MAX_RENDER_BUILT)
        if items > MAX_TREE or chars > MAX_RENDER_BUILT:
            raise refuse(
                f"tojson would write a {type(target).__name__} of more than {MAX_TREE:,} items "
                f"or {MAX_RENDER_BUILT:,} characters counting what it repeats"
            )
    return _json_default(obj)


_TOJSON_COUNT_LIMIT = 2 * MAX_BUILT_CHARS  # tojson(max_chars=) stops measuring what it omits here


def _cut(text: str, total: int, max_chars: int | None, *, exact: bool = True) -> str:
    """``text`` (the first part of ``total`` characters of JSON), cut at ``max_chars``."""
    if max_chars is not None and total > max_chars:
        omitted = (
            f"{total - max_chars:,} of {total:,} characters omitted"
            if exact
            else f"over {max(total, MAX_TREE):,} characters in all; the rest omitted"
        )
        return f"{text[:max_chars]} …[truncated by tojson(max_chars={max_chars}): {omitted}]"
    check_chars(total, "tojson")
    return text


# --------------------------------------------------------------------------------------
# Filters: an explicit allowlist, every one guarded (deadline, text of its input, its result)
# --------------------------------------------------------------------------------------


def _text(value: Any, what: str) -> str:
    return value if isinstance(value, str) else bounded_str(value, what)


def _filter_replace(s: Any, old: Any, new: Any, count: int | None = None) -> str:
    text = _text(s, "replace")
    old, new = str(old), str(new)
    if count is not None and count >= 0:
        check_chars(replace_size(text, old, new, count), "replace")
        return text.replace(old, new, count)
    check_chars(replace_size(text, old, new, None), "replace")
    return text.replace(old, new)


@jinja2.pass_environment
def _filter_join(
    environment: jinja2.Environment, value: Iterable[Any], d: Any = "", attribute: Any = None
) -> str:
    sep = _text(d, "join")
    if attribute is not None:
        value = map(jfilters.make_attrgetter(environment, attribute), value)
    parts: list[str] = []
    size = 0
    for item in value:
        tick()
        text = _text(item, "join")
        size += len(text) + (len(sep) if parts else 0)
        check_chars(size, "join")
        parts.append(text)
    return sep.join(parts)


def _filter_indent(s: Any, width: int | str = 4, first: bool = False, blank: bool = False) -> str:
    text = _text(s, "indent")
    pad_len = len(width) if isinstance(width, str) else int(width)
    check_chars(len(text) + (text.count("\n") + 1) * pad_len, "indent")
    return jfilters.do_indent(text, width, first, blank)


@jinja2.pass_environment
def _filter_wordwrap(
    environment: jinja2.Environment,
    s: Any,
    width: int = 79,
    break_long_words: bool = True,
    wrapstring: str | None = None,
    break_on_hyphens: bool = True,
) -> str:
    text = _text(s, "wordwrap")
    if len(text) > MAX_WORDWRAP_CHARS:
        raise refuse(
            f"wordwrap works on at most {MAX_WORDWRAP_CHARS:,} characters, got {len(text):,}"
        )
    sep = environment.newline_sequence if wrapstring is None else _text(wrapstring, "wordwrap")
    if not isinstance(width, int) or width < 1:
        raise ValueError(f"wordwrap width must be a positive integer, got {width!r}")
    _check_wrap_work(text, width)
    # every line but the last is at least width/2 characters long (or ends a paragraph)
    lines = 2 * len(text) // width + text.count("\n") + 2
    check_chars(len(text) + lines * len(sep), "wordwrap")
    return jfilters.do_wordwrap(environment, text, width, break_long_words, sep, break_on_hyphens)


MAX_WORDWRAP_WORK = 10_000_000_000  # character copies one wordwrap may cost (about 0.3 s)
_WRAP_SPACE_COST = 50  # textwrap re-strips a long run of spaces once per line it would fill


_LINE_BREAKS = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"  # where str.splitlines() cuts


@functools.lru_cache(maxsize=64)
def _long_runs(width: int) -> re.Pattern[str]:
    """Runs of spaces (within a line) or of other characters longer than ``width``."""
    n = width + 1
    return re.compile(rf"[^\S{_LINE_BREAKS}]{{{n},}}|\S{{{n},}}")


def _check_wrap_work(text: str, width: int) -> None:
    """Refuse a wrap that would take seconds: Python's textwrap cuts a run longer than
    ``width`` one line at a time, copying (and, for spaces, re-scanning) the rest of the run
    each time, so a run of length L costs about L * L / width."""
    if len(text) <= width:
        return
    work = 0
    for run in _long_runs(width).finditer(text):
        size = run.end() - run.start()
        weight = _WRAP_SPACE_COST if text[run.start()].isspace() else 1
        work += size * size // width * weight
    if work > MAX_WORDWRAP_WORK:
        raise refuse(
            f"wordwrap({width}) of this text would take too long: it has runs (of spaces or "
            "of other characters) without a break, much longer than the width; wrap at a "
            "larger width or shorten the runs"
        )


def _filter_batch(value: Iterable[Any], linecount: int, fill_with: Any = None) -> Any:
    if linecount > MAX_ITEMS:
        raise refuse(f"batch({linecount:,}) is over the limit of {MAX_ITEMS:,} items per batch")
    return jfilters.do_batch(value, linecount, fill_with)


def _filter_slice(value: Collection[Any], slices: int, fill_with: Any = None) -> Any:
    if slices > MAX_ITEMS:
        raise refuse(f"slice({slices:,}) is over the limit of {MAX_ITEMS:,} slices")
    return jfilters.sync_do_slice(value, slices, fill_with)


@jinja2.pass_environment
def _filter_sum(
    environment: jinja2.Environment, iterable: Iterable[Any], attribute: Any = None, start: Any = 0
) -> Any:
    """``sum`` of numbers only (``sum(start=[])`` would concatenate lists without a limit)."""
    if attribute is not None:
        iterable = map(jfilters.make_attrgetter(environment, attribute), iterable)

    def number(item: Any) -> Any:
        if isinstance(item, bool) or not isinstance(item, (int, float)):
            raise TypeError(f"sum adds numbers, not {type(item).__name__}")
        return item

    total = number(start)
    for item in iterable:
        tick()
        total = total + number(item)
    return total


MAX_ROUND_DIGITS = 30


def _filter_round(value: float, precision: int = 0, method: str = "common") -> float:
    """``round`` with a sane precision: rounding an int to -10**9 digits computes 10**(10**9)."""
    if isinstance(precision, bool) or not isinstance(precision, int):
        raise TypeError(f"round precision must be a whole number, got {precision!r}")
    if not -MAX_ROUND_DIGITS <= precision <= MAX_ROUND_DIGITS:
        raise ValueError(
            f"round precision must be between -{MAX_ROUND_DIGITS} and {MAX_ROUND_DIGITS}, "
            f"got {precision:,}"
        )
    return jfilters.do_round(value, precision, method)  # type: ignore[arg-type]


@jinja2.pass_eval_context
def _filter_list(eval_ctx: jinja2.nodes.EvalContext, value: Any) -> list[Any]:
    return _as_list(value)


def _as_list(value: Any) -> list[Any]:
    """The items of ``value`` in a list, refused past :data:`MAX_ITEMS` as it is read."""
    if isinstance(value, Sized):
        check_items(len(value), "list")
    out = []
    for item in value:
        tick()
        out.append(item)
        if len(out) > MAX_ITEMS:
            check_items(len(out), "list")
    return out


def _filter_string(value: Any) -> str:
    return _text(value, "string")


def _text_first(name: str) -> Callable[..., Any]:
    """Filters that read their input as text: the text is built with a limit first."""
    original = jfilters.FILTERS[name]

    @functools.wraps(original)
    def text_filter(*args: Any, **kwargs: Any) -> Any:
        given = list(args)
        at = 1 if getattr(original, "jinja_pass_arg", None) is not None else 0
        if len(given) > at:
            given[at] = _text(given[at], name)
        return original(*given, **kwargs)

    return text_filter


def _guarded(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    """Every filter checks the deadline before it runs and the size of what it returns; a lazy
    result (``batch``, ``map``, ``select``...) is checked item by item as it is read."""

    @functools.wraps(fn)
    def guarded(*args: Any, **kwargs: Any) -> Any:
        tick()
        result = fn(*args, **kwargs)
        if isinstance(result, Iterator):
            return checked_iter(result, name)
        return check_result(result, name)

    return guarded


def _comparing(name: str) -> Callable[..., Any]:
    """``sort``, ``unique``, ``min``, ``max``, ``groupby``, ``dictsort``: their input is measured
    first (counting repeats) and refused when comparing it would cost more than the budget. Each
    also lower-cases every text item it compares (``case_sensitive=False``): a list holding one
    long string 100,000 times would otherwise build 100,000 long strings."""
    original = jfilters.FILTERS[name]
    at = 1 if getattr(original, "jinja_pass_arg", None) is not None else 0

    @functools.wraps(original)
    def comparing(*args: Any, **kwargs: Any) -> Any:
        if len(args) > at:
            value = args[at]
            if not isinstance(value, (list, tuple, dict, View)):  # lazy: read it, checked
                value = _as_list(value)
                args = (*args[:at], value, *args[at + 1 :])
            check_work(value, name)
        return original(*args, **kwargs)

    return comparing


_PLAIN_FILTERS = [
    "abs",
    "count",
    "d",
    "default",
    "first",
    "float",
    "int",
    "items",
    "last",
    "length",
    "map",
    "reject",
    "rejectattr",
    "reverse",
    "select",
    "selectattr",
]
_COMPARING_FILTERS = ["dictsort", "groupby", "max", "min", "sort", "unique"]
_TEXT_FILTERS = ["capitalize", "lower", "title", "trim", "truncate", "upper", "wordcount"]

_RAW_FILTERS: dict[str, Callable[..., Any]] = {
    name: jfilters.FILTERS[name] for name in _PLAIN_FILTERS
}
_RAW_FILTERS.update({name: _text_first(name) for name in _TEXT_FILTERS})
_RAW_FILTERS.update({name: _comparing(name) for name in _COMPARING_FILTERS})
_RAW_FILTERS.update(
    {
        "replace": _filter_replace,
        "join": _filter_join,
        "indent": _filter_indent,
        "wordwrap": _filter_wordwrap,
        "batch": _filter_batch,
        "slice": _filter_slice,
        "sum": _filter_sum,
        "round": _filter_round,
        "list": _filter_list,
        "string": _filter_string,
        "tojson": tojson,
    }
)
_FILTERS: dict[str, Callable[..., Any]] = {
    name: _guarded(name, fn) for name, fn in _RAW_FILTERS.items()
}

#: The only filters templates may use; everything else is an error.
ALLOWED_FILTERS: frozenset[str] = frozenset(_FILTERS)


#: tests that compare their value with their argument (``is eq``, ``is in``, ``is lt``...)
_COMPARING_TESTS = frozenset(
    {"eq", "equalto", "==", "ne", "!=", "lt", "lessthan", "<", "le", "<=", "gt", "greaterthan"}
    | {">", "ge", ">=", "in", "sameas"}
)


def _guarded_test(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(fn)
    def guarded(value: Any, *args: Any) -> Any:
        tick()
        if fn in (jtests.test_lower, jtests.test_upper):
            value = _text(value, "a lower/upper test")
        if name in _COMPARING_TESTS and name != "sameas":
            check_work(value, f"the '{name}' test")
            for arg in args:
                check_work(arg, f"the '{name}' test")
        return fn(value, *args)

    return guarded


_TESTS: dict[str, Callable[..., Any]] = {
    name: _guarded_test(name, cast("Callable[..., Any]", fn)) for name, fn in jtests.TESTS.items()
}


# --------------------------------------------------------------------------------------
# The sandbox
# --------------------------------------------------------------------------------------


def _bounded_range(*args: int) -> range:
    """``range`` for templates: at most :data:`MAX_RANGE` items."""
    rng = range(*args)
    if len(rng) > MAX_RANGE:
        raise refuse(f"range() of {len(rng):,} items is over the limit of {MAX_RANGE:,}")
    return rng


class _GuardedCodeGenerator(CodeGenerator):
    """Routes ``~``, for-loop iteration and list/tuple/dict literals through the sandbox.

    Jinja allows no custom node types, so loop iterables are marked by identity and
    wrapped when the generator writes them.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._loop_iters: set[int] = set()

    def visit(self, node: jinja2.nodes.Node, *args: Any, **kwargs: Any) -> Any:
        if id(node) in self._loop_iters:
            self.write("environment.guarded_iter(")
            result = super().visit(node, *args, **kwargs)
            self.write(")")
            return result
        return super().visit(node, *args, **kwargs)

    def visit_For(self, node: jinja2.nodes.For, frame: Frame) -> None:
        self._loop_iters.add(id(node.iter))
        super().visit_For(node, frame)

    def visit_Concat(self, node: jinja2.nodes.Concat, frame: Frame) -> None:
        self.write("environment.guarded_concat((")
        for arg in node.nodes:
            self.visit(arg, frame)
            self.write(", ")
        self.write("))")

    def visit_List(self, node: jinja2.nodes.List, frame: Frame) -> None:
        self.write("environment.guarded_literal(")
        super().visit_List(node, frame)
        self.write(")")

    def visit_Dict(self, node: jinja2.nodes.Dict, frame: Frame) -> None:
        self.write("environment.guarded_literal(")
        super().visit_Dict(node, frame)
        self.write(")")

    def visit_Compare(self, node: jinja2.nodes.Compare, frame: Frame) -> None:
        """``a == b``, ``a in b``, ``a < b < c``: each comparison through the sandbox, which
        measures its operands first (a chain keeps Python's meaning: each operand once)."""
        ops = ", ".join(repr(op.op) for op in node.ops)
        self.write(f"environment.guarded_compare(({ops},), (")
        self.visit(node.expr, frame)
        self.write(", ")
        for op in node.ops:
            self.write("lambda: ")
            self.visit(op.expr, frame)
            self.write(", ")
        self.write("))")

    def visit_Tuple(self, node: jinja2.nodes.Tuple, frame: Frame) -> None:
        if node.ctx != "load":  # an unpacking target: ``{% for a, b in ... %}``
            super().visit_Tuple(node, frame)
            return
        self.write("environment.guarded_literal(")
        super().visit_Tuple(node, frame)
        self.write(")")


#: attributes of ``loop`` inside a for-loop that templates may read
_LOOP_MEMBERS = frozenset(
    [
        "index",
        "index0",
        "revindex",
        "revindex0",
        "first",
        "last",
        "length",
        "depth",
        "depth0",
        "previtem",
        "nextitem",
        "cycle",
        "changed",
    ]
)


class _Sandbox(ImmutableSandboxedEnvironment):
    """Jinja's sandbox with an allowlist: templates read bound views and plain data only.

    Every attribute read, item read, call, operator, filter and loop step passes a check
    here; what is not explicitly allowed is refused with :class:`TemplateSecurityError`.
    """

    intercepted_binops = frozenset({"*", "**", "+", "-", "%", "/", "//"})
    code_generator_class = _GuardedCodeGenerator

    @staticmethod
    def concat(parts: Iterable[str]) -> str:
        """The output of a macro, ``caller()``, ``{% set %}`` or ``{% filter %}`` block, bounded."""
        pieces = []
        size = 0
        for piece in parts:
            size += len(piece)
            check_chars(size, "a macro's or block's output")
            pieces.append(piece)
        tick()
        return "".join(pieces)

    # -- reading -----------------------------------------------------------------------
    def getattr(self, obj: Any, attribute: str) -> Any:
        tick()
        if isinstance(obj, jinja2.Undefined):  # name the missing variable, not its internals
            obj._fail_with_undefined_error()
        value = self._member(obj, attribute)
        if value is MISSING:
            return self.undefined(obj=unwrap(obj), name=attribute)
        return value

    def getitem(self, obj: Any, argument: Any) -> Any:
        tick()
        if isinstance(obj, jinja2.Undefined):
            obj._fail_with_undefined_error()
        if isinstance(obj, (str, list, tuple, range, SeqView)) and not isinstance(argument, str):
            try:
                return obj[argument]
            except (TypeError, LookupError):
                return self.undefined(obj=unwrap(obj), name=argument)
        if isinstance(obj, (dict, MapView)):
            try:
                return obj[argument]
            except (TypeError, LookupError):
                pass
        if isinstance(argument, str):
            return self.getattr(obj, argument)
        return self.undefined(obj=unwrap(obj), name=argument)

    def _member(self, obj: Any, name: str) -> Any:
        try:
            if isinstance(obj, str):
                method = str_method(obj, name)
                if method is not None:
                    return method
                if name.startswith("_"):
                    raise refuse_member(obj, name)
                if hasattr(str, name):
                    reason = (
                        "join text with ~ and use filters such as round, tojson or join"
                        if name in ("format", "format_map")
                        else "templates may call only the str methods on the allowlist"
                    )
                    raise refuse(f"str.{name}() is not available in templates; {reason}")
                return MISSING
            if isinstance(obj, LoopContext):
                if name in _LOOP_MEMBERS:
                    value = getattr(obj, name)
                    return SafeCall(value, f"loop.{name}") if callable(value) else value
                raise refuse_member(obj, name)
            if isinstance(obj, TemplateReference) and not name.startswith("_"):
                try:
                    return obj[name]  # self.<block>
                except KeyError:
                    return MISSING
            if isinstance(obj, (Macro, BlockReference, TemplateReference, SafeCall)):
                raise refuse_member(obj, name)
            return member(obj, name)
        except MemberRefused as exc:
            raise refuse(str(exc)) from None

    # -- calling -----------------------------------------------------------------------
    def call(__self, __context: Context, __obj: Any, *args: Any, **kwargs: Any) -> Any:
        budget = tick()
        if isinstance(__obj, jinja2.Undefined):
            __obj._fail_with_undefined_error()
        if not isinstance(__obj, __self._CALLABLE) and __obj is not _bounded_range:
            raise refuse(f"{_callable_name(__obj)} is not callable in templates")
        if budget is not None:
            if budget.depth >= MAX_CALL_DEPTH:
                raise refuse(
                    f"calls are nested more than {MAX_CALL_DEPTH} deep (a recursive macro?)"
                )
            budget.depth += 1
        try:
            result = __context.call(__obj, *args, **kwargs)
        finally:
            if budget is not None:
                budget.depth -= 1
        tick()
        return check_result(result, _callable_name(__obj))

    _CALLABLE = (SafeCall, Macro, LoopContext, BlockReference)

    # -- operators ---------------------------------------------------------------------
    def call_binop(self, context: Context, operator: str, left: Any, right: Any) -> Any:
        tick()
        if operator == "*":
            self._check_repeat(left, right)
            self._check_repeat(right, left)
            if _is_int(left) and _is_int(right):
                bits = left.bit_length() + right.bit_length()
                if bits > MAX_INT_BITS:
                    raise refuse(
                        f"'*' would build an integer of about {bits:,} bits; "
                        f"the limit is {MAX_INT_BITS:,}"
                    )
        elif operator == "+":
            if isinstance(left, str) and isinstance(right, str):
                check_chars(len(left) + len(right), "'+'")
            elif isinstance(left, (list, tuple)) and isinstance(right, (list, tuple)):
                check_items(len(left) + len(right), "'+'")
        elif operator == "%":
            if isinstance(left, (str, bytes)):
                raise refuse(
                    "the % operator on text (printf-style formatting) is not available in "
                    "templates; join text with ~ and format numbers with the round or int filters"
                )
        elif operator == "**" and _is_int(left) and _is_int(right) and right > 0 and abs(left) > 1:
            bits = abs(left).bit_length() * right
            if bits > MAX_INT_BITS:
                raise refuse(
                    f"'**' would build an integer of about {bits:,} bits; "
                    f"the limit is {MAX_INT_BITS:,}"
                )
        return check_result(super().call_binop(context, operator, left, right), f"'{operator}'")

    @staticmethod
    def _check_repeat(seq: Any, times: Any) -> None:
        if not _is_int(times):
            return
        if isinstance(seq, str):
            check_chars(len(seq) * times, "'*'")
        elif isinstance(seq, (list, tuple)):
            check_items(len(seq) * times, "'*'")
            if times > 0 and tree_units(seq) * times > MAX_TREE:
                raise refuse(
                    f"'*' would build a value of more than {MAX_TREE:,} characters and items "
                    "counting what it repeats; templates must stay small"
                )

    def wrap_str_format(self, value: Any) -> Callable[..., str] | None:
        return None  # str.format is never reachable: see _member

    # -- building ----------------------------------------------------------------------
    def guarded_concat(self, parts: tuple[Any, ...]) -> str:
        """``a ~ b``: every part's text is bounded, then the whole."""
        tick()
        texts = []
        size = 0
        for part in parts:
            text = _text(part, "'~'")
            size += len(text)
            check_chars(size, "'~'")
            texts.append(text)
        joined = "".join(texts)
        check_result(joined, "'~'")
        return joined

    def guarded_compare(self, ops: tuple[str, ...], operands: tuple[Any, ...]) -> Any:
        """A chain of comparisons, each refused when its operands are too big to compare.

        ``operands`` is the first value and then one thunk per comparison, so ``a < b < c``
        still reads ``c`` only when ``a < b`` holds, as Python and Jinja do."""
        tick()
        left = operands[0]
        result: Any = True
        for op, thunk in zip(ops, operands[1:], strict=True):
            right = thunk()
            for side in (left, right):
                if not isinstance(side, str):  # text compares in linear time
                    check_work(side, f"'{_COMPARE_SYMBOLS.get(op, op)}'")
            result = _COMPARE[op](left, right)
            if not result:
                return result
            left = right
        return result

    def guarded_literal(self, value: Any) -> Any:
        """A list, tuple or dict written in the template, counted like any built value."""
        tick()
        return check_tree(value, "a literal")

    def guarded_iter(self, iterable: Any) -> Iterator[Any]:
        """A for-loop's iterable, counted against the per-render step budget and deadline."""
        budget = BUDGET.get()
        if budget is None:
            yield from iterable
            return
        for item in iterable:
            budget.steps += 1
            if budget.steps > MAX_LOOP_STEPS:
                raise refuse(
                    f"loops ran more than {MAX_LOOP_STEPS:,} steps in one render; "
                    "templates must stay small"
                )
            tick()
            yield item


_COMPARE: dict[str, Callable[[Any, Any], Any]] = {
    "eq": operator.eq,
    "ne": operator.ne,
    "lt": operator.lt,
    "lteq": operator.le,
    "gt": operator.gt,
    "gteq": operator.ge,
    "in": lambda a, b: a in b,
    "notin": lambda a, b: a not in b,
}
_COMPARE_SYMBOLS = {
    "eq": "==",
    "ne": "!=",
    "lt": "<",
    "lteq": "<=",
    "gt": ">",
    "gteq": ">=",
    "in": "in",
    "notin": "not in",
}


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _callable_name(obj: Any) -> str:
    if isinstance(obj, SafeCall):
        return obj.label
    name = getattr(type(obj), "__name__", "object")
    return f"a {name} object"


def _finalize(value: Any) -> Any:
    """What ``{{ value }}`` prints: its text, bounded as it is built."""
    tick()
    return _text(value, "printing a value")


def _trusted_finalize(value: Any) -> Any:
    """The sandbox's printing of a value, on the built-in prompts' plain path."""
    return value if type(value) is str else _finalize(bind(value))


#: tags through which a template reads names it does not mention itself
_SHARING_NODES = (
    jinja2.nodes.Include,
    jinja2.nodes.Import,
    jinja2.nodes.FromImport,
    jinja2.nodes.Extends,
)
_ENV_TYPE = TypeVar("_ENV_TYPE", bound=jinja2.Environment)


def _configured(kind: type[_ENV_TYPE], prompts_dir: Path | None, finalize: Any) -> _ENV_TYPE:
    """An environment with the allowlisted filters, tests and globals, over ``prompts_dir``."""
    loader = jinja2.FileSystemLoader(str(prompts_dir)) if prompts_dir is not None else None
    env = kind(
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        loader=loader,
        auto_reload=False,
        finalize=finalize,
    )
    env.filters = dict(_FILTERS)
    env.tests = dict(_TESTS)
    env.globals = {"range": _bounded_range}
    return env


def _make_trusted_environment(prompts_dir: Path) -> jinja2.Environment:
    """Plain Jinja for rubriclab's own prompts (and only those: see the module docstring)."""
    return _configured(jinja2.Environment, prompts_dir, _trusted_finalize)


def _make_environment(prompts_dir: Path | None) -> _Sandbox:
    return _configured(_Sandbox, prompts_dir, _finalize)


# --------------------------------------------------------------------------------------
# Errors with template name and line
# --------------------------------------------------------------------------------------


def _template_location(exc: BaseException) -> tuple[str | None, int | None]:
    """Innermost template frame in the traceback: (template name, template line)."""
    name: str | None = None
    lineno: int | None = None
    tb = exc.__traceback__
    while tb is not None:
        tmpl = tb.tb_frame.f_globals.get("__jinja_template__")
        if isinstance(tmpl, jinja2.Template):
            name = tmpl.name
            lineno = tmpl.get_corresponding_lineno(tb.tb_lineno)
        tb = tb.tb_next
    return name, lineno


def _filter_message(message: str) -> tuple[str, bool] | None:
    match = re.match(r"No filter named '([^']*)'", message)
    if match is None:
        return None
    name = match.group(1)
    allowed = ", ".join(sorted(ALLOWED_FILTERS))
    if name in jfilters.FILTERS:
        return (
            f"filter '{name}' is not allowed in rubriclab templates; allowed filters: {allowed}",
            True,
        )
    return f"no filter named '{name}'; allowed filters: {allowed}", False


def _translate(exc: BaseException, default_name: str) -> TemplateError:
    """Turn any exception raised while compiling or rendering into our error types."""
    if isinstance(exc, TemplateError):
        return exc
    name, lineno = _template_location(exc)
    if isinstance(exc, jinja2.TemplateSyntaxError):
        name, lineno = exc.name or name, exc.lineno
        found = _filter_message(exc.message or "")
        if found is not None:
            text, security = found
            cls = TemplateSecurityError if security else TemplateError
            return cls(text, template=name or default_name, lineno=lineno)
        return TemplateError(
            f"syntax error: {exc.message}", template=name or default_name, lineno=lineno
        )
    name = name or default_name
    if isinstance(exc, SecurityError):
        return TemplateSecurityError(f"refused by the sandbox: {exc}", template=name, lineno=lineno)
    if isinstance(exc, MemoryError):
        return TemplateSecurityError(
            "refused by the sandbox: the render ran out of memory", template=name, lineno=lineno
        )
    if isinstance(exc, RecursionError):
        return TemplateSecurityError(
            "refused by the sandbox: recursion too deep (a recursive macro or a deeply nested "
            "expression?)",
            template=name,
            lineno=lineno,
        )
    if isinstance(exc, jinja2.UndefinedError):
        return TemplateError(str(exc), template=name, lineno=lineno)
    if isinstance(exc, jinja2.TemplateRuntimeError):
        found = _filter_message(str(exc))
        if found is not None:
            text, security = found
            cls = TemplateSecurityError if security else TemplateError
            return cls(text, template=name, lineno=lineno)
    if isinstance(exc, jinja2.TemplateNotFound):
        return TemplateError(
            f"no built-in template named {exc.name!r}", template=name, lineno=lineno
        )
    text = str(exc)
    if len(text) > _MAX_ERROR_CHARS:  # an error must not carry a template's huge value along
        text = text[:_MAX_ERROR_CHARS] + f" …[{len(text) - _MAX_ERROR_CHARS:,} characters more]"
    return TemplateError(f"{type(exc).__name__}: {text}", template=name, lineno=lineno)


# --------------------------------------------------------------------------------------
# Template: compiled once, rendered many times
# --------------------------------------------------------------------------------------


class Template:
    """A template compiled once in the sandbox and rendered many times.

    ``variables`` lists the names the template reads from its caller, so a metric can
    check its inputs before any judge call.
    """

    __slots__ = ("_jinja", "_plain", "_reads", "name", "source", "variables")

    def __init__(
        self,
        source: str,
        *,
        name: str | None = None,
        _environment: _Sandbox | None = None,
        _trusted: jinja2.Environment | None = None,
    ) -> None:
        if not isinstance(source, str):
            raise TypeError(f"template source must be a string, got {type(source).__name__}")
        self.name = name or "<inline>"
        self.source = source
        env = _environment if _environment is not None else _default_library().environment
        if len(source) > MAX_TEMPLATE_CHARS:
            raise TemplateSecurityError(
                f"the template is {len(source):,} characters; templates may be at most "
                f"{MAX_TEMPLATE_CHARS:,}",
                template=self.name,
            )
        code_chars = sum(len(m) for m in _TAG_RE.findall(source))
        if code_chars > MAX_TEMPLATE_CODE_CHARS:
            raise TemplateSecurityError(
                f"the template has {code_chars:,} characters inside {{{{ }}}} and {{% %}} tags; "
                f"templates may have at most {MAX_TEMPLATE_CODE_CHARS:,} (plain text is not "
                "limited this way)",
                template=self.name,
            )
        try:
            ast = env.parse(source, name=self.name)
            nodes = sum(1 for _ in ast.find_all(jinja2.nodes.Node))
            if nodes > MAX_TEMPLATE_NODES:
                raise TemplateSecurityError(
                    f"the template has {nodes:,} expressions and tags; templates may have at "
                    f"most {MAX_TEMPLATE_NODES:,}",
                    template=self.name,
                )
            # parsed and checked in the sandbox always; compiled for the plain environment
            # when it is one of rubriclab's own prompts (the module docstring says why)
            target: jinja2.Environment = env if _trusted is None else _trusted
            where = f"<template {self.name}>" if _trusted is None else f"<prompt {self.name}>"
            code = target.compile(ast, name=self.name, filename=where)
            # the globals are fixed when an environment is configured: a plain dict, not the
            # ChainMap Jinja would build, which every render's context copies (a third of a
            # built-in prompt's render)
            self._jinja = target.template_class.from_code(target, code, dict(target.globals), None)
            self._plain = _trusted is not None
            undeclared = jmeta.find_undeclared_variables(ast)
            # a template that includes or imports another may read names this one does not
            # mention: it gets every variable; any other only those it reads, bound
            shares = any(True for _ in ast.find_all(_SHARING_NODES))
        except Exception as exc:
            raise _translate(exc, self.name) from None
        self.variables: frozenset[str] = frozenset(undeclared - set(env.globals))
        self._reads: frozenset[str] | None = None if shares else frozenset(undeclared)

    def __repr__(self) -> str:
        return f"Template(name={self.name!r}, variables={sorted(self.variables)!r})"

    def render(
        self,
        variables: Mapping[str, Any] | None = None,
        *,
        max_prompt_chars: int = DEFAULT_MAX_PROMPT_CHARS,
        render_timeout: float = DEFAULT_RENDER_TIMEOUT,
    ) -> str:
        """Render with ``variables``; raises :class:`TemplateError` (never anything else).

        Every value is bound as a read-only view first (:func:`rubriclab.templates.values.bind`);
        a render that runs past ``render_timeout`` seconds is refused.
        """
        if (
            isinstance(max_prompt_chars, bool)
            or not isinstance(max_prompt_chars, int)
            or max_prompt_chars < 1
        ):
            raise ValueError(
                f"max_prompt_chars must be a positive integer, got {max_prompt_chars!r}"
            )
        check_render_timeout(render_timeout)
        if variables is not None and not isinstance(variables, Mapping):
            raise TypeError(
                f"variables for template {self.name!r} must be a mapping of name -> value, "
                f"got {type(variables).__name__}"
            )
        # rubriclab's own prompts loop over a rubric's criteria and print values whose size is
        # bounded as they print: no CPU budget to keep (reading a thread's CPU clock is a
        # system call, a tenth of such a render)
        budget = None if self._plain else Budget(timeout=float(render_timeout))
        token = BUDGET.set(budget)
        parts: list[str] = []
        size = 0
        try:
            jinja = self._jinja
            if self._plain:
                bound = {str(k): v for k, v in variables.items()} if variables else {}
            else:
                reads = self._reads
                bound = (
                    {}
                    if not variables
                    else {str(k): bind(v) for k, v in variables.items()}
                    if reads is None
                    else {str(k): bind(v) for k, v in variables.items() if str(k) in reads}
                )
            ctx = jinja.new_context(bound)
            chunks = jinja.root_render_func(ctx)
            if self._plain:  # bounded by the values it prints: measured whole, in one join
                text = "".join(chunks)
                if len(text) > max_prompt_chars:
                    raise PromptTooLong(len(text), max_prompt_chars, template=self.name)
                return text
            for chunk in chunks:
                size += len(chunk)
                if size > max_prompt_chars:
                    parts.clear()
                    exact = True
                    for rest in chunks:  # measure, without keeping, to report the real size
                        size += len(rest)
                        if size > _OVERFLOW_COUNT_LIMIT:
                            exact = False
                            break
                    raise PromptTooLong(size, max_prompt_chars, template=self.name, exact=exact)
                parts.append(chunk)
        except PromptTooLong:
            raise
        except Exception as exc:
            raise _translate(exc, self.name) from exc
        finally:
            BUDGET.reset(token)
        return "".join(parts)


def check_render_timeout(value: Any) -> float:
    """A render time budget must be a positive, finite number of seconds."""
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or not 0 < value <= MAX_RENDER_TIMEOUT
    ):
        raise ValueError(
            f"render_timeout must be a number of seconds above 0 and at most "
            f"{MAX_RENDER_TIMEOUT:g}, got {value!r}"
        )
    return float(value)


# --------------------------------------------------------------------------------------
# Built-in prompts
# --------------------------------------------------------------------------------------

_TAG_RE = re.compile(r"\{\{.*?\}\}|\{%.*?%\}", re.DOTALL)
_NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_\-]*")


class PromptLibrary:
    """A folder of ``*.jinja`` prompts, compiled on first use and kept.

    The built-in library is ``rubriclab/templates/prompts``; tests and users may point one at
    their own folder. Templates in a library may ``{% include %}`` each other.
    """

    def __init__(self, directory: Path | str, *, _builtin: bool = False) -> None:
        self.directory = Path(directory)
        self.environment = _make_environment(self.directory)
        # rubriclab's own folder only: a user's folder is rendered in the sandbox, always
        self._trusted = _make_trusted_environment(self.directory) if _builtin else None
        self._loaded: dict[str, Template] = {}

    def names(self) -> list[str]:
        """Names of the prompts in the folder (file stems), sorted."""
        if not self.directory.is_dir():
            return []
        return sorted(p.stem for p in self.directory.glob("*.jinja") if p.is_file())

    def has(self, name: str) -> bool:
        if name in self._loaded:
            return True
        if len(name) > 200 or _NAME_RE.fullmatch(name) is None:  # source text, not a name
            return False
        try:
            return (self.directory / f"{name}.jinja").is_file()
        except OSError:
            return False

    def load(self, name: str) -> Template:
        """The prompt ``name`` (with or without ``.jinja``), compiled once."""
        key = name[: -len(".jinja")] if name.endswith(".jinja") else name
        cached = self._loaded.get(key)
        if cached is not None:
            return cached
        path = self.directory / f"{key}.jinja"
        if not self.has(key):
            known = ", ".join(self.names()) or "(none yet)"
            raise TemplateError(
                f"no built-in template named {name[:80]!r} in {self.directory}; known: {known}"
            )
        template = Template(
            path.read_text(encoding="utf-8"),
            name=key,
            _environment=self.environment,
            _trusted=self._trusted,
        )
        self._loaded[key] = template
        return template


@functools.lru_cache(maxsize=1)
def _default_library() -> PromptLibrary:
    return PromptLibrary(PROMPTS_DIR, _builtin=True)


def builtin_names() -> list[str]:
    """Names of the built-in prompts shipped in ``rubriclab/templates/prompts``."""
    return _default_library().names()


def load_builtin(name: str) -> Template:
    """A built-in prompt by name (``"checklist_critique"``), compiled once per process."""
    return _default_library().load(name)


@functools.lru_cache(maxsize=512)
def compile_template(source: str, *, name: str | None = None) -> Template:
    """Compile ``source`` once; the same (source, name) returns the same :class:`Template`."""
    return Template(source, name=name)


def render(
    template_source_or_name: str | Template,
    variables: Mapping[str, Any] | None = None,
    *,
    max_prompt_chars: int = DEFAULT_MAX_PROMPT_CHARS,
    name: str | None = None,
    render_timeout: float = DEFAULT_RENDER_TIMEOUT,
) -> str:
    """Render a :class:`Template`, a built-in prompt name, or template source text.

    A string that is exactly the name of a built-in prompt loads that prompt; any other
    string is template source (compiled once and cached).
    """
    if isinstance(template_source_or_name, Template):
        template = template_source_or_name
    elif not isinstance(template_source_or_name, str):
        raise TypeError(
            "render() needs a Template, a built-in prompt name or template source text, "
            f"got {type(template_source_or_name).__name__}"
        )
    elif _default_library().has(template_source_or_name):
        template = load_builtin(template_source_or_name)
    else:
        template = compile_template(template_source_or_name, name=name)
    return template.render(
        variables, max_prompt_chars=max_prompt_chars, render_timeout=render_timeout
    )


# --------------------------------------------------------------------------------------
# Vertex-style {placeholder} templates
# --------------------------------------------------------------------------------------

_BRACE_TOKEN = re.compile(r"\{\{|\}\}|\{([^{}]*)\}|[{}]")
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _line_col(text: str, pos: int) -> tuple[int, int]:
    line = text.count("\n", 0, pos) + 1
    col = pos - (text.rfind("\n", 0, pos) + 1) + 1
    return line, col


def _scan_braces(template: str, name: str) -> Iterator[tuple[int, int, str | None]]:
    """Yield (start, end, placeholder or None for a literal brace pair)."""
    for match in _BRACE_TOKEN.finditer(template):
        token = match.group(0)
        if token in ("{{", "}}"):
            yield match.start(), match.end(), None
            continue
        inner = match.group(1)
        line, col = _line_col(template, match.start())
        if inner is None:
            raise TemplateError(
                f"unmatched {token!r} at column {col}; write {token * 2!r} for a literal brace",
                template=name,
                lineno=line,
            )
        if _IDENT.fullmatch(inner) is None:
            raise TemplateError(
                f"{token!r} at column {col} is not a placeholder: placeholders are plain "
                "names like {response}; write {{ and }} for literal braces",
                template=name,
                lineno=line,
            )
        yield match.start(), match.end(), inner


def brace_placeholders(template: str, *, name: str | None = None) -> list[str]:
    """Placeholder names of a ``{placeholder}`` template, in first-use order."""
    seen: dict[str, None] = {}
    for _, _, key in _scan_braces(template, name or "<inline>"):
        if key is not None:
            seen.setdefault(key)
    return list(seen)


def format_braces(
    template: str,
    variables: Mapping[str, Any],
    *,
    name: str | None = None,
    max_prompt_chars: int | None = DEFAULT_MAX_PROMPT_CHARS,
) -> str:
    """Fill a Vertex-style template: ``{name}`` is replaced, ``{{``/``}}`` are literal braces.

    No attribute or index access (``{x.y}``, ``{x[0]}``) and no format specs: values are
    inserted with ``str()``. Unknown placeholders are all named in one error.
    """
    label = name or "<inline>"
    out: list[str] = []
    missing: dict[str, int] = {}
    last = 0
    for start, end, key in _scan_braces(template, label):
        out.append(template[last:start])
        last = end
        if key is None:
            out.append(template[start])
        elif key in variables:
            out.append(str(variables[key]))
        else:
            missing.setdefault(key, _line_col(template, start)[0])
    out.append(template[last:])
    if missing:
        first_line = min(missing.values())
        names = ", ".join("{" + k + "}" for k in missing)
        given = ", ".join(sorted(map(str, variables))) or "(none)"
        verb = "has" if len(missing) == 1 else "have"
        raise TemplateError(
            f"placeholder {names} {verb} no value; the variables given are: {given}",
            template=label,
            lineno=first_line,
        )
    text = "".join(out)
    if max_prompt_chars is not None and len(text) > max_prompt_chars:
        raise PromptTooLong(len(text), max_prompt_chars, template=label)
    return text
