"""Code checks: a criterion answered by code on the response, never sent to the judge.

Built-in kinds (the only ones a YAML or JSON rubric may name; a file never names a function):

* ``regex``: YES when the pattern is found in the response (``re.search`` semantics);
* ``contains`` / ``not_contains``: YES when the text is (is not) in the response;
* ``is_json``: YES when the whole response parses as JSON;
* ``json_schema``: YES when the response parses as JSON and validates against the schema
  (needs ``jsonschema``: ``pip install 'rubriclab[checks]'``);
* ``max_words``: YES when the response has at most that many words.

A Python callable (code the user runs in their own kernel) returns a bool (NO/YES), a level
of the criterion, or either with a reason: ``(True, "cites 3 sources")``. It is called with
the response, or with the response and the row's fields (a dict) when it takes two arguments.

Regular expressions are user-supplied and may backtrack catastrophically (``(a+)+$``): when
the ``regex`` package is installed (it is in ``rubriclab[checks]``) each search runs with a
time limit (:data:`REGEX_TIMEOUT` seconds) and a search that runs out is that row's error;
with only the standard library's ``re`` there is no limit.
"""

from __future__ import annotations

import inspect
import json
import re
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

__all__ = [
    "CHECK_KINDS",
    "JSON_KINDS",
    "PYTHON",
    "REGEX_TIMEOUT",
    "CheckError",
    "Checked",
    "ParsedJson",
    "builtin_runner",
    "describe",
    "run_builtin",
    "run_function",
    "takes_row",
    "validate_arg",
]

#: the built-in kinds, the only ones a rubric file may name
CHECK_KINDS: tuple[str, ...] = (
    "regex",
    "contains",
    "not_contains",
    "is_json",
    "json_schema",
    "max_words",
)

#: the kinds that read the response as JSON (a row parses it once for all of them)
JSON_KINDS = frozenset({"is_json", "json_schema"})

#: seconds one regex search may take (with the ``regex`` package) before it is the row's error
REGEX_TIMEOUT = 1.0

#: how a criterion checked by a Python function is written out (never read back from a file)
PYTHON = "python"


class CheckError(ValueError):
    """A check that could not run on a row (it raised, timed out, or returned no level)."""


class Checked(NamedTuple):
    """One check's answer on one response: a level of its criterion and why."""

    level: int
    reason: str


try:  # the guarded engine when installed; the standard library's otherwise
    import regex as _regex_engine

    _HAS_REGEX_TIMEOUT = True
except ImportError:  # pragma: no cover - exercised where `regex` is absent
    _regex_engine = re
    _HAS_REGEX_TIMEOUT = False


def validate_arg(kind: str, arg: Any) -> Any:
    """The argument of a built-in kind, checked (a ValueError in the user's terms otherwise)."""
    if kind in ("regex", "contains", "not_contains"):
        if not isinstance(arg, str) or not arg:
            what = "a pattern" if kind == "regex" else "the text to look for"
            raise ValueError(f"a {kind!r} check needs {what} (non-empty text)")
        if kind == "regex":
            try:
                _regex_engine.compile(arg)
            except Exception as exc:  # re.error / regex.error
                raise ValueError(f"regex {arg!r} does not compile: {exc}") from None
        return arg
    if kind == "is_json":
        if arg not in (None, True):
            raise ValueError("an 'is_json' check takes no argument (write is_json: true)")
        return True
    if kind == "json_schema":
        if not isinstance(arg, Mapping):
            raise ValueError("a 'json_schema' check needs a JSON schema (a mapping)")
        _schema_validator(dict(arg))  # refused now when the schema itself is not valid
        return dict(arg)
    if kind == "max_words":
        if isinstance(arg, bool) or not isinstance(arg, int) or arg < 1:
            raise ValueError(f"a 'max_words' check needs a whole number of words >= 1, got {arg!r}")
        return arg
    raise ValueError(
        f"{kind!r} is not a built-in check; use one of {', '.join(CHECK_KINDS)} "
        "(a Python function is given in code: Criterion.check(fn), never in a file)"
    )


def describe(kind: str, arg: Any) -> str:
    """The question a code-checked criterion reads as, when none is given."""
    if kind == "regex":
        return f"matches the pattern /{arg}/"
    if kind == "contains":
        return f"contains {arg!r}"
    if kind == "not_contains":
        return f"does not contain {arg!r}"
    if kind == "is_json":
        return "is valid JSON"
    if kind == "json_schema":
        return "is JSON that matches the schema"
    if kind == "max_words":
        return f"has at most {arg} words"
    return str(arg)


def _schema_validator(schema: dict[str, Any]) -> Any:
    try:
        import jsonschema
    except ImportError:
        raise ValueError(
            "a 'json_schema' check needs the jsonschema package: pip install 'rubriclab[checks]'"
        ) from None
    cls = jsonschema.validators.validator_for(schema)
    try:
        cls.check_schema(schema)
    except jsonschema.SchemaError as exc:
        raise ValueError(f"the JSON schema is not valid: {exc.message}") from None
    return cls(schema)


def _short(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


class ParsedJson:
    """A response read as JSON once for every JSON check of a row: ``is_json`` and
    ``json_schema`` on the same response share one parse. It remembers the last text it was
    given (the checks of a row run one after another on the same string)."""

    __slots__ = ("_result", "_text")

    def __init__(self) -> None:
        self._text: str | None = None
        self._result: tuple[Any, str | None] = (None, None)

    def __call__(self, text: str) -> tuple[Any, str | None]:
        """``(data, None)``, or ``(None, why)`` when the text is not JSON."""
        if text is not self._text:
            try:
                self._result = (json.loads(text), None)
            except ValueError as exc:
                self._result = (None, f"not JSON ({exc})")
            self._text = text
        return self._result


def _parse_json(text: str) -> tuple[Any, str | None]:
    try:
        return json.loads(text), None
    except ValueError as exc:
        return None, f"not JSON ({exc})"


def run_builtin(kind: str, arg: Any, response: str, cache: dict[str, Any]) -> Checked:
    """One built-in check on one response (``cache`` keeps a compiled pattern or validator)."""
    return builtin_runner(kind, arg)(response)


def builtin_runner(
    kind: str, arg: Any, parse: Callable[[str], tuple[Any, str | None]] | None = None
) -> Callable[[str], Checked]:
    """A built-in check made ready once (pattern compiled, schema validator built): a run
    checks thousands of responses with it. ``parse`` (a :class:`ParsedJson`) is shared by the
    JSON checks of one rubric so a row's response is parsed once for all of them."""
    if kind == "regex":
        pattern = _regex_engine.compile(arg)
        no_match = Checked(0, f"no match for /{arg}/")

        def regex_check(response: str) -> Checked:
            try:
                if _HAS_REGEX_TIMEOUT:
                    found = pattern.search(response, timeout=REGEX_TIMEOUT)
                else:  # pragma: no cover
                    found = pattern.search(response)
            except TimeoutError:
                raise CheckError(
                    f"regex /{arg}/ ran over {REGEX_TIMEOUT:g} s on this response "
                    "(the pattern backtracks too much; simplify it)"
                ) from None
            return Checked(1, f"matched {_short(found.group(0))!r}") if found else no_match

        return regex_check
    if kind in ("contains", "not_contains"):
        there, absent = Checked(1, f"contains {arg!r}"), Checked(0, f"no {arg!r}")
        if kind == "not_contains":
            there, absent = Checked(0, there.reason), Checked(1, absent.reason)
        return lambda response: there if arg in response else absent
    if kind == "max_words":

        def words_check(response: str) -> Checked:
            words = len(response.split())
            if words <= arg:
                return Checked(1, f"{words} words (at most {arg})")
            return Checked(0, f"{words} words, over {arg}")

        return words_check
    if kind in ("is_json", "json_schema"):
        validator = _schema_validator(arg) if kind == "json_schema" else None
        valid = Checked(1, "valid JSON" if validator is None else "JSON that matches the schema")
        read = parse or _parse_json

        def json_check(response: str) -> Checked:
            data, not_json = read(response)
            if not_json is not None:
                return Checked(0, not_json)
            if validator is None:
                return valid
            first = next(iter(validator.iter_errors(data)), None)
            if first is None:
                return valid
            where = "/".join(str(p) for p in first.absolute_path) or "the top"
            return Checked(0, f"schema: {_short(first.message, 120)} (at {where})")

        return json_check
    raise CheckError(f"{kind!r} is not a built-in check")


def takes_row(fn: Callable[..., Any]) -> bool:
    """Whether a check function wants the row's fields too (it takes two arguments)."""
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):  # builtins without a signature: response only
        return False
    positional = [
        p
        for p in params
        if p.kind in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    ]
    varargs = any(p.kind is inspect.Parameter.VAR_POSITIONAL for p in params)
    return varargs or len(positional) >= 2


def run_function(
    fn: Callable[..., Any],
    with_row: bool,
    response: str,
    row: Mapping[str, Any],
    scores: frozenset[int],
    yes_no: bool,
) -> Checked:
    """A user's check function on one response, its answer read as a level and a reason."""
    try:
        answer = fn(response, dict(row)) if with_row else fn(response)
    except Exception as exc:
        raise CheckError(f"the check raised {type(exc).__name__}: {exc}") from None
    reason = ""
    if isinstance(answer, tuple):
        if len(answer) != 2 or not isinstance(answer[1], str):
            raise CheckError("the check returned a tuple that is not (level or bool, reason text)")
        answer, reason = answer
    if isinstance(answer, bool):
        if not yes_no:
            raise CheckError(
                "the check returned True/False for a criterion with levels; return a level"
            )
        level = int(answer)
    elif isinstance(answer, int) or (isinstance(answer, float) and answer.is_integer()):
        level = int(answer)
    else:
        raise CheckError(f"the check returned {_short(repr(answer))}, not a bool or a level")
    if level not in scores:
        allowed = ", ".join(str(s) for s in sorted(scores))
        raise CheckError(f"the check returned level {level}, not one of {allowed}")
    if not reason:
        reason = ("YES" if level else "NO") if yes_no else f"level {level}"
    return Checked(level, reason)
