"""Sandboxed Jinja2 rendering for every prompt rubriclab sends.

Built-in prompts and user-written templates go through the same sandbox, because user
templates bind raw objects (spans, traces, cases) and may be shared between people:

* ``ImmutableSandboxedEnvironment``: no ``_private`` / ``__dunder__`` access, no mutation of
  lists and dicts, no ``str.format`` tricks;
* ``StrictUndefined``: a misspelt variable is an error naming the template and line, never
  an empty string in a prompt;
* an explicit filter allowlist (:data:`ALLOWED_FILTERS`) and one global, a bounded ``range``;
* limits on what a template can build: string/list repetition and concatenation, padding,
  loop steps, call depth, big powers. A template that hits one fails fast with
  :class:`TemplateSecurityError` instead of eating the machine.

A rendered prompt longer than ``max_prompt_chars`` raises :class:`PromptTooLong`; prompts
are never truncated. The one truncation allowed is ``tojson(max_chars=N)``, which caps a
single value the template author chose to cap, with a visible marker.

Built-in prompt texts live in ``rubriclab/prompts/*.jinja`` (a data directory: a package
directory named ``templates`` would clash with this module) and load with
:func:`load_builtin`.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import enum
import functools
import json
import re
import types
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from contextvars import ContextVar
from pathlib import Path
from typing import Any

import jinja2
import jinja2.nodes
from jinja2 import filters as jfilters
from jinja2 import meta as jmeta
from jinja2.compiler import CodeGenerator, Frame
from jinja2.exceptions import SecurityError
from jinja2.runtime import Context
from jinja2.sandbox import ImmutableSandboxedEnvironment
from pydantic import BaseModel

__all__ = [
    "ALLOWED_FILTERS",
    "DEFAULT_MAX_PROMPT_CHARS",
    "PROMPTS_DIR",
    "PromptLibrary",
    "PromptTooLong",
    "Template",
    "TemplateError",
    "TemplateSecurityError",
    "brace_placeholders",
    "builtin_names",
    "compile_template",
    "format_braces",
    "load_builtin",
    "render",
    "tojson",
]

DEFAULT_MAX_PROMPT_CHARS = 100_000
PROMPTS_DIR = Path(__file__).with_name("prompts")

# Limits on what a template may build. Generous for prompts, small enough to fail fast.
MAX_RANGE = 10_000  # items a single range() may produce
MAX_ITEMS = 100_000  # items a list/tuple built by * or + may hold
MAX_BUILT_CHARS = 2_000_000  # characters a single string built in the template may hold
MAX_LOOP_STEPS = 1_000_000  # loop iterations per render, over all loops
MAX_CALL_DEPTH = 48  # nested calls (macros, loop(), methods) per render
MAX_POW_BITS = 100_000  # size of an integer a ** may build
MAX_TOJSON_INDENT = 16
_OVERFLOW_COUNT_LIMIT = 20_000_000  # stop measuring a too-long prompt past this size


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

    Unlike Jinja's own ``tojson`` this does not HTML-escape: prompts are text.
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
    text = json.dumps(value, indent=indent, ensure_ascii=False, default=_json_default)
    if max_chars is not None and len(text) > max_chars:
        return (
            f"{text[:max_chars]} …[truncated by tojson(max_chars={max_chars}): "
            f"{len(text) - max_chars:,} of {len(text):,} characters omitted]"
        )
    return text


# --------------------------------------------------------------------------------------
# Filters: an explicit allowlist; the ones that can grow text are size-checked
# --------------------------------------------------------------------------------------


def _refuse(message: str) -> SecurityError:
    return SecurityError(message)


def _check_chars(size: int, what: str) -> None:
    if size > MAX_BUILT_CHARS:
        raise _refuse(
            f"{what} would build a string of about {size:,} characters; "
            f"templates may build at most {MAX_BUILT_CHARS:,}"
        )


def _replace_size(s: str, old: str, new: str, count: int | None) -> int:
    hits = len(s) + 1 if old == "" else s.count(old)
    if count is not None and count >= 0:
        hits = min(hits, count)
    return len(s) + hits * (len(new) - len(old))


@jinja2.pass_eval_context
def _filter_replace(
    eval_ctx: jinja2.nodes.EvalContext, s: str, old: str, new: str, count: int | None = None
) -> str:
    _check_chars(_replace_size(str(s), str(old), str(new), count), "replace")
    return jfilters.do_replace(eval_ctx, s, old, new, count)


@jinja2.pass_eval_context
def _filter_join(
    eval_ctx: jinja2.nodes.EvalContext, value: Iterable[Any], d: str = "", attribute: Any = None
) -> str:
    items = list(value)
    _check_chars(len(str(d)) * max(len(items) - 1, 0), "join")
    return jfilters.sync_do_join(eval_ctx, items, d, attribute)


def _filter_indent(s: str, width: int | str = 4, first: bool = False, blank: bool = False) -> str:
    pad_len = len(width) if isinstance(width, str) else int(width)
    _check_chars(len(str(s)) + (str(s).count("\n") + 1) * pad_len, "indent")
    return jfilters.do_indent(s, width, first, blank)


def _filter_batch(value: Iterable[Any], linecount: int, fill_with: Any = None) -> Any:
    if linecount > MAX_ITEMS:
        raise _refuse(f"batch({linecount:,}) is over the limit of {MAX_ITEMS:,} items per batch")
    return jfilters.do_batch(value, linecount, fill_with)


def _filter_slice(value: Collection[Any], slices: int, fill_with: Any = None) -> Any:
    if slices > MAX_ITEMS:
        raise _refuse(f"slice({slices:,}) is over the limit of {MAX_ITEMS:,} slices")
    return jfilters.sync_do_slice(value, slices, fill_with)


_PLAIN_FILTERS = [
    "abs",
    "capitalize",
    "count",
    "d",
    "default",
    "dictsort",
    "first",
    "float",
    "groupby",
    "int",
    "items",
    "last",
    "length",
    "list",
    "lower",
    "map",
    "max",
    "min",
    "reject",
    "rejectattr",
    "reverse",
    "round",
    "select",
    "selectattr",
    "sort",
    "string",
    "sum",
    "title",
    "trim",
    "truncate",
    "unique",
    "upper",
    "wordcount",
    "wordwrap",
]

_FILTERS: dict[str, Callable[..., Any]] = {name: jfilters.FILTERS[name] for name in _PLAIN_FILTERS}
_FILTERS.update(
    {
        "replace": _filter_replace,
        "join": _filter_join,
        "indent": _filter_indent,
        "batch": _filter_batch,
        "slice": _filter_slice,
        "tojson": tojson,
    }
)

#: The only filters templates may use; everything else is an error.
ALLOWED_FILTERS: frozenset[str] = frozenset(_FILTERS)


# --------------------------------------------------------------------------------------
# The sandbox
# --------------------------------------------------------------------------------------


@dataclasses.dataclass
class _Budget:
    steps: int = 0
    depth: int = 0


_BUDGET: ContextVar[_Budget | None] = ContextVar("rubriclab_template_budget", default=None)


def _bounded_range(*args: int) -> range:
    """``range`` for templates: at most :data:`MAX_RANGE` items."""
    rng = range(*args)
    if len(rng) > MAX_RANGE:
        raise _refuse(f"range() of {len(rng):,} items is over the limit of {MAX_RANGE:,}")
    return rng


class _GuardedCodeGenerator(CodeGenerator):
    """Routes ``~`` and for-loop iteration through the sandbox's size and step checks.

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


_PADDING_METHODS = frozenset({"center", "ljust", "rjust", "zfill"})
_SEQUENCES = (list, tuple)


class _Sandbox(ImmutableSandboxedEnvironment):
    """Jinja's immutable sandbox plus limits on size, steps and depth."""

    intercepted_binops = frozenset({"*", "**", "+", "%"})
    code_generator_class = _GuardedCodeGenerator

    def call_binop(self, context: Context, operator: str, left: Any, right: Any) -> Any:
        if operator == "*":
            self._check_repeat(left, right)
            self._check_repeat(right, left)
        elif operator == "+":
            if isinstance(left, str) and isinstance(right, str):
                _check_chars(len(left) + len(right), "'+'")
            elif isinstance(left, _SEQUENCES) and isinstance(right, _SEQUENCES):
                self._check_items(len(left) + len(right), "'+'")
        elif operator == "%":
            if isinstance(left, (str, bytes)):
                raise _refuse(
                    "the % operator on text (printf-style formatting) is not available in "
                    "templates; join text with ~ and format numbers with the round or int filters"
                )
        elif (
            operator == "**"
            and isinstance(left, int)
            and isinstance(right, int)
            and right > 0
            and abs(left) > 1
        ):
            bits = abs(left).bit_length() * right
            if bits > MAX_POW_BITS:
                raise _refuse(
                    f"'**' would build an integer of about {bits:,} bits; "
                    f"the limit is {MAX_POW_BITS:,}"
                )
        return super().call_binop(context, operator, left, right)

    @staticmethod
    def _check_items(n: int, what: str) -> None:
        if n > MAX_ITEMS:
            raise _refuse(
                f"{what} would build a list of {n:,} items; templates may build at most {MAX_ITEMS:,}"
            )

    def _check_repeat(self, seq: Any, times: Any) -> None:
        if not isinstance(times, int) or isinstance(times, bool):
            return
        if isinstance(seq, str):
            _check_chars(len(seq) * times, "'*'")
        elif isinstance(seq, _SEQUENCES):
            self._check_items(len(seq) * times, "'*'")

    def getattr(self, obj: Any, attribute: str) -> Any:
        if isinstance(obj, jinja2.Undefined):  # name the missing variable, not its internals
            obj._fail_with_undefined_error()
        return super().getattr(obj, attribute)

    def getitem(self, obj: Any, argument: Any) -> Any:
        if isinstance(obj, jinja2.Undefined):
            obj._fail_with_undefined_error()
        return super().getitem(obj, argument)

    def wrap_str_format(self, value: Any) -> Callable[..., str] | None:
        """Refuse ``str.format`` / ``format_map``: they reach attributes and pad without limit."""
        if (
            isinstance(value, (types.MethodType, types.BuiltinMethodType))
            and value.__name__ in ("format", "format_map")
            and isinstance(getattr(value, "__self__", None), str)
        ):
            method = value.__name__

            def refused(*args: Any, **kwargs: Any) -> str:
                raise _refuse(
                    f"str.{method}() is not available in templates; "
                    "join text with ~ and use filters such as round, tojson or join"
                )

            return refused
        return None

    def call(__self, __context: Context, __obj: Any, *args: Any, **kwargs: Any) -> Any:
        budget = _BUDGET.get()
        if budget is not None:
            if budget.depth >= MAX_CALL_DEPTH:
                raise _refuse(
                    f"calls are nested more than {MAX_CALL_DEPTH} deep (a recursive macro?)"
                )
            budget.depth += 1
        try:
            if isinstance(__obj, types.BuiltinMethodType) and isinstance(
                getattr(__obj, "__self__", None), str
            ):
                args = __self._check_str_method(__obj, args, kwargs)
            return super().call(__context, __obj, *args, **kwargs)
        finally:
            if budget is not None:
                budget.depth -= 1

    @staticmethod
    def _check_str_method(
        method: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> tuple[Any, ...]:
        s: str = method.__self__
        name = method.__name__
        if name in _PADDING_METHODS and args and isinstance(args[0], int):
            _check_chars(args[0], f"str.{name}()")
        elif name == "expandtabs":
            tab = args[0] if args else kwargs.get("tabsize", 8)
            if isinstance(tab, int):
                _check_chars(len(s) + s.count("\t") * tab, "str.expandtabs()")
        elif name == "replace" and len(args) >= 2 and all(isinstance(a, str) for a in args[:2]):
            count = args[2] if len(args) > 2 and isinstance(args[2], int) else None
            _check_chars(_replace_size(s, args[0], args[1], count), "str.replace()")
        elif name == "join" and args:
            items = list(args[0])
            size = sum(len(x) for x in items if isinstance(x, str))
            _check_chars(size + len(s) * max(len(items) - 1, 0), "str.join()")
            return (items, *args[1:])
        return args

    def guarded_concat(self, parts: tuple[Any, ...]) -> str:
        """``a ~ b``: joined like Jinja does, refused when the result would be huge."""
        texts = [str(p) for p in parts]
        _check_chars(sum(map(len, texts)), "'~'")
        return "".join(texts)

    def guarded_iter(self, iterable: Any) -> Iterator[Any]:
        """A for-loop's iterable, counted against the per-render step budget."""
        budget = _BUDGET.get()
        if budget is None:
            yield from iterable
            return
        for item in iterable:
            budget.steps += 1
            if budget.steps > MAX_LOOP_STEPS:
                raise _refuse(
                    f"loops ran more than {MAX_LOOP_STEPS:,} steps in one render; "
                    "templates must stay small"
                )
            yield item


def _make_environment(prompts_dir: Path | None) -> _Sandbox:
    loader = jinja2.FileSystemLoader(str(prompts_dir)) if prompts_dir is not None else None
    env = _Sandbox(
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        loader=loader,
        auto_reload=False,
    )
    env.filters = dict(_FILTERS)
    env.globals = {"range": _bounded_range}
    return env


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
    if isinstance(exc, RecursionError):
        return TemplateSecurityError(
            "refused by the sandbox: recursion too deep (a recursive macro?)",
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
    return TemplateError(f"{type(exc).__name__}: {exc}", template=name, lineno=lineno)


# --------------------------------------------------------------------------------------
# Template: compiled once, rendered many times
# --------------------------------------------------------------------------------------


class Template:
    """A template compiled once in the sandbox and rendered many times.

    ``variables`` lists the names the template reads from its caller, so a metric can
    check its inputs before any judge call.
    """

    __slots__ = ("_jinja", "name", "source", "variables")

    def __init__(
        self, source: str, *, name: str | None = None, _environment: _Sandbox | None = None
    ) -> None:
        if not isinstance(source, str):
            raise TypeError(f"template source must be a string, got {type(source).__name__}")
        self.name = name or "<inline>"
        self.source = source
        env = _environment if _environment is not None else _default_library().environment
        try:
            ast = env.parse(source, name=self.name)
            code = env.compile(ast, name=self.name, filename=f"<template {self.name}>")
            self._jinja = env.template_class.from_code(env, code, env.make_globals(None), None)
            undeclared = jmeta.find_undeclared_variables(ast)
        except Exception as exc:
            raise _translate(exc, self.name) from None
        self.variables: frozenset[str] = frozenset(undeclared - set(env.globals))

    def __repr__(self) -> str:
        return f"Template(name={self.name!r}, variables={sorted(self.variables)!r})"

    def render(
        self,
        variables: Mapping[str, Any] | None = None,
        *,
        max_prompt_chars: int = DEFAULT_MAX_PROMPT_CHARS,
    ) -> str:
        """Render with ``variables``; raises :class:`TemplateError` (never anything else)."""
        if (
            isinstance(max_prompt_chars, bool)
            or not isinstance(max_prompt_chars, int)
            or max_prompt_chars < 1
        ):
            raise ValueError(
                f"max_prompt_chars must be a positive integer, got {max_prompt_chars!r}"
            )
        if variables is not None and not isinstance(variables, Mapping):
            raise TypeError(
                f"variables for template {self.name!r} must be a mapping of name -> value, "
                f"got {type(variables).__name__}"
            )
        token = _BUDGET.set(_Budget())
        parts: list[str] = []
        size = 0
        try:
            ctx = self._jinja.new_context(dict(variables) if variables else {})
            chunks = self._jinja.root_render_func(ctx)
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
            _BUDGET.reset(token)
        return "".join(parts)


# --------------------------------------------------------------------------------------
# Built-in prompts
# --------------------------------------------------------------------------------------

_NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_\-]*")


class PromptLibrary:
    """A folder of ``*.jinja`` prompts, compiled on first use and kept.

    The built-in library is ``rubriclab/prompts``; tests and users may point one at
    their own folder. Templates in a library may ``{% include %}`` each other.
    """

    def __init__(self, directory: Path | str) -> None:
        self.directory = Path(directory)
        self.environment = _make_environment(self.directory)
        self._loaded: dict[str, Template] = {}

    def names(self) -> list[str]:
        """Names of the prompts in the folder (file stems), sorted."""
        if not self.directory.is_dir():
            return []
        return sorted(p.stem for p in self.directory.glob("*.jinja") if p.is_file())

    def has(self, name: str) -> bool:
        return name in self._loaded or (
            _NAME_RE.fullmatch(name) is not None and (self.directory / f"{name}.jinja").is_file()
        )

    def load(self, name: str) -> Template:
        """The prompt ``name`` (with or without ``.jinja``), compiled once."""
        key = name[: -len(".jinja")] if name.endswith(".jinja") else name
        cached = self._loaded.get(key)
        if cached is not None:
            return cached
        path = self.directory / f"{key}.jinja"
        if _NAME_RE.fullmatch(key) is None or not path.is_file():
            known = ", ".join(self.names()) or "(none yet)"
            raise TemplateError(
                f"no built-in template named {name!r} in {self.directory}; known: {known}"
            )
        template = Template(
            path.read_text(encoding="utf-8"), name=key, _environment=self.environment
        )
        self._loaded[key] = template
        return template


@functools.lru_cache(maxsize=1)
def _default_library() -> PromptLibrary:
    return PromptLibrary(PROMPTS_DIR)


def builtin_names() -> list[str]:
    """Names of the built-in prompts shipped in ``rubriclab/prompts``."""
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
    return template.render(variables, max_prompt_chars=max_prompt_chars)


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
