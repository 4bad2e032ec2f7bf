"""The rubric model: criteria x levels x descriptors, weights, critical minimums.

One model covers the three styles people use:

* checklist (Vertex style): yes/no questions, score = weighted share of YES;
* analytic (lesson style): criteria with described levels, weighted and normalised;
* points (HealthBench style): a negative weight marks an undesirable behaviour.

The negative-weight rule (one meaning, everywhere a rubric is built: code, YAML, ``%%rubric``,
the editor): only a yes/no criterion may carry a negative weight, and it is a penalty: "Does
the response recommend a dangerous dose?" with ``weight: -2`` takes two points off when the
answer is YES. Scores stay in [0, 1] (points met / positive points, clipped) and monotone. A
criterion with levels cannot take a negative weight (that would turn "better" into "worse");
reverse its levels instead. A penalty cannot be critical.

Two common mistakes (the lesson's) are warned about with :class:`RubricWarning`: levels
without descriptors (``levels: 3``) and scales of more than five levels.

Scoring itself lives in :mod:`rubriclab.scoring`; ``Rubric.score`` is a shortcut.
"""

from __future__ import annotations

import contextlib
import contextvars
import json
import math
import os
import re
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    field_serializer,
    field_validator,
    model_validator,
)

from . import checks as _checks_mod
from .checks import CHECK_KINDS, Checked, CheckError
from .files import YamlError, atomic_write_text, load_yaml, short_repr
from .plain_errors import did_you_mean, explain
from .scale import parse_fraction
from .scoring import Score
from .scoring import score as score_levels

__all__ = [
    "CHECK_KINDS",
    "MAX_LEVELS",
    "YES_NO_LEVELS",
    "CheckError",
    "Checked",
    "CodeCheck",
    "Criterion",
    "Level",
    "Rubric",
    "RubricError",
    "RubricWarning",
]

#: more levels than this and judges stop telling neighbours apart (the lesson: 3-5 levels)
MAX_LEVELS = 5


class RubricError(ValueError):
    """A rubric (code, mapping, file) is not valid; one line that says where and why.

    Where the model's validation found it, the line names the key path inside the rubric
    (``criteria.accuracy.weight``) and :meth:`retold` puts it under an outer path (a run
    config's ``metrics[0].rubric``); no pydantic wording reaches the user.
    """

    def __init__(
        self,
        message: str,
        *,
        source: tuple[ValidationError, type[BaseModel], str] | None = None,
    ) -> None:
        super().__init__(message)
        self._source = source

    def retold(self, prefix: str) -> str:
        """The message with its key paths under ``prefix`` (``metrics[0].rubric``)."""
        if self._source is None:
            return f"{prefix}: {self}" if prefix else str(self)
        exc, model, inner = self._source
        where = ".".join(p for p in (prefix, inner) if p)
        return explain(exc, model, prefix=where, top="rubric")


@contextlib.contextmanager
def _told(model: type[BaseModel], where: str = "") -> Iterator[None]:
    """A pydantic ValidationError as a :class:`RubricError` in the user's terms."""
    try:
        yield
    except ValidationError as exc:
        message = explain(exc, model, prefix=where, top="rubric")
        raise RubricError(message, source=(exc, model, where)) from None


class _Told(BaseModel):
    """Constructing or assigning raises a :class:`RubricError` in the user's terms, never
    pydantic's text (``model_validate`` keeps pydantic's error, for the editor's locations)."""

    def __init__(self, **data: Any) -> None:
        with _told(type(self)):
            super().__init__(**data)

    # pydantic calls a model's own __init__ for nested values too, unless it is marked as the
    # base one; nested criteria must stay pydantic's, so errors keep their key paths
    __init__.__pydantic_base_init__ = True  # type: ignore[attr-defined]

    def __setattr__(self, name: str, value: Any) -> None:
        with _told(type(self)):
            super().__setattr__(name, value)


class RubricWarning(UserWarning):
    """A rubric that works but is likely to judge badly (no descriptors, too many levels)."""


_Strict = ConfigDict(extra="forbid", validate_assignment=True)


class Level(_Told):
    """One level of a criterion: an integer score and what an output at that level looks like."""

    model_config = _Strict

    score: int
    descriptor: str

    @field_validator("descriptor")
    @classmethod
    def _descriptor_not_empty(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("descriptor is empty: say what an output at this level looks like")
        return value


YES_NO_LEVELS: tuple[Level, Level] = (
    Level(score=0, descriptor="NO"),
    Level(score=1, descriptor="YES"),
)


class CodeCheck(BaseModel):
    """How a criterion is checked by code: a built-in ``kind`` with its ``arg``, or a Python
    ``function`` (kind ``"python"``; code the user runs in their own kernel, never read from
    a file). See :mod:`rubriclab.checks` for the kinds and what a function may return."""

    model_config = ConfigDict(extra="forbid", frozen=True, arbitrary_types_allowed=True)

    kind: str
    arg: Any = None
    function: Callable[..., Any] | None = Field(default=None, exclude=True, repr=False)
    _with_row: bool = PrivateAttr(default=False)
    _ready: Callable[[str], Checked] | None = PrivateAttr(default=None)

    @model_validator(mode="after")
    def _check_kind(self) -> CodeCheck:
        if self.function is not None:
            if self.kind != _checks_mod.PYTHON:
                raise ValueError("a check with a function has kind 'python'")
            self._with_row = _checks_mod.takes_row(self.function)
            return self
        if self.kind == _checks_mod.PYTHON:  # read back from a saved result: described only
            object.__setattr__(self, "arg", str(self.arg))
            return self
        object.__setattr__(self, "arg", _checks_mod.validate_arg(self.kind, self.arg))
        return self

    @property
    def label(self) -> str:
        """How views name the check: ``regex /\\b30 days\\b/``, ``python my_check``."""
        if self.kind == _checks_mod.PYTHON:
            return f"python {self.arg}"
        if self.kind == "is_json":
            return "is_json"
        if self.kind == "json_schema":
            return "json_schema"
        if self.kind == "regex":
            return f"regex /{self.arg}/"
        return f"{self.kind} {self.arg!r}"

    def run(self, criterion: Criterion, response: str, row: Mapping[str, Any]) -> Checked:
        """This check on one response: its level and reason, or :class:`CheckError`."""
        if self.function is not None:
            return _checks_mod.run_function(
                self.function,
                self._with_row,
                response,
                row,
                frozenset(criterion.scores),
                criterion.is_yes_no,
            )
        return self.runner(criterion)(response, row)

    def runner(
        self,
        criterion: Criterion,
        parse: Callable[[str], tuple[Any, str | None]] | None = None,
    ) -> Callable[[str, Mapping[str, Any] | None], Checked]:
        """This check made ready once for ``criterion``: ``run(response, row)`` per row (a
        built-in kind never reads ``row``; see :attr:`wants_row`). ``parse`` is the rubric's
        shared JSON reader (:class:`rubriclab.checks.ParsedJson`) for the JSON kinds."""
        if self.function is not None:
            fn, with_row = self.function, self._with_row
            scores, yes_no = frozenset(criterion.scores), criterion.is_yes_no

            def call(response: str, row: Mapping[str, Any] | None) -> Checked:
                return _checks_mod.run_function(fn, with_row, response, row or {}, scores, yes_no)

            return call
        if self.kind == _checks_mod.PYTHON:
            name = self.arg

            def absent(response: str, row: Mapping[str, Any] | None) -> Checked:
                raise CheckError(
                    f"the function {name} is not here: a rubric read back from a saved result "
                    "names it but cannot run it; build the criterion with Criterion.check(fn)"
                )

            return absent
        if parse is not None and self.kind in _checks_mod.JSON_KINDS:
            ready = _checks_mod.builtin_runner(self.kind, self.arg, parse)
            return lambda response, _row: ready(response)
        if self._ready is None:
            self._ready = _checks_mod.builtin_runner(self.kind, self.arg)
        ready = self._ready
        return lambda response, _row: ready(response)

    @property
    def wants_row(self) -> bool:
        """Whether the check reads the row's fields (a function taking two arguments)."""
        return self.function is not None and self._with_row


#: set while a saved result's rubric is read back (:meth:`Rubric.from_saved`)
_READING_SAVED: contextvars.ContextVar[bool] = contextvars.ContextVar("saved", default=False)


def _code_check_from(value: Any) -> Any:
    """``{regex: '...'}`` (the file form: one built-in kind and its argument) as a CodeCheck."""
    if value is None or isinstance(value, CodeCheck):
        return value
    if (
        _READING_SAVED.get()
        and isinstance(value, Mapping)
        and len(value) == 1
        and _checks_mod.PYTHON in value
    ):
        # a saved result names the function that checked it; it is shown, never looked up
        return CodeCheck(kind=_checks_mod.PYTHON, arg=str(value[_checks_mod.PYTHON])[:200])
    if isinstance(value, str) and value == "is_json":
        return CodeCheck(kind="is_json")
    if not isinstance(value, Mapping) or len(value) != 1:
        raise ValueError(
            "a code check is one built-in kind and its argument, e.g. {regex: '\\b30 days\\b'}"
            f" or {{max_words: 120}} (kinds: {', '.join(CHECK_KINDS)})"
        )
    ((kind, arg),) = value.items()
    if kind not in CHECK_KINDS:
        raise ValueError(
            f"{kind!r} is not a built-in check (kinds: {', '.join(CHECK_KINDS)}); a file never "
            "names a Python function: give one in code with Criterion.check(fn)"
        )
    return CodeCheck(kind=str(kind), arg=arg)


class Criterion(_Told):
    """One thing the judge checks: a yes/no question or a criterion with described levels.

    ``critical`` is the minimum acceptable level: below it the case fails whatever its total.
    ``name`` is the criterion's id; verdicts from a judge are matched to it, never to the text.
    """

    model_config = _Strict

    name: str = ""
    description: str = ""
    levels: list[Level] = Field(default_factory=lambda: list(YES_NO_LEVELS))
    weight: float = 1.0
    critical: int | None = None
    category: str | None = None
    code: CodeCheck | None = None
    """Set when the criterion is checked by code on the response instead of by the judge."""

    @field_validator("code", mode="before")
    @classmethod
    def _code_form(cls, value: Any) -> Any:
        return _code_check_from(value)

    @field_serializer("code")
    def _code_out(self, code: CodeCheck | None) -> dict[str, Any] | None:
        """The file form, ``{regex: '...'}``; a function is written as its name only
        (``{python: 'my_check'}``), which a file cannot load back: functions live in code."""
        if code is None:
            return None
        return {code.kind: code.arg}

    @field_validator("weight")
    @classmethod
    def _finite_weight(cls, value: float) -> float:
        if not math.isfinite(value):
            raise ValueError(f"weight must be a finite number, got {value!r}")
        return value

    @model_validator(mode="after")
    def _check_levels(self) -> Criterion:
        label = f"criterion {self.name!r}" if self.name else "criterion"
        if len(self.levels) < 2:
            raise ValueError(f"{label}: needs at least two levels, has {len(self.levels)}")
        seen: set[int] = set()
        for level in self.levels:
            if level.score in seen:
                raise ValueError(f"{label}: level score {level.score} appears twice")
            seen.add(level.score)
        if self.levels != sorted(self.levels, key=lambda lv: lv.score):
            # keep the model canonical (ascending) without re-entering validation
            object.__setattr__(self, "levels", sorted(self.levels, key=lambda lv: lv.score))
        if self.critical is not None and self.critical not in seen:
            allowed = ", ".join(str(s) for s in sorted(seen))
            raise ValueError(
                f"{label}: critical level {self.critical} is not one of its levels ({allowed})"
            )
        if self.weight < 0 and not self.is_yes_no:
            raise ValueError(
                f"{label}: weight {self.weight:g} is negative, but only a yes/no criterion may "
                "be a penalty (points off when YES); for a criterion with levels give a "
                "positive weight and reverse its levels if lower is better"
            )
        if self.weight < 0 and self.critical is not None:
            raise ValueError(
                f"{label}: a penalty (negative weight) cannot also be critical; ask the "
                "opposite yes/no question and make that critical"
            )
        if len(self.levels) > MAX_LEVELS:
            warnings.warn(
                f"{label} has {len(self.levels)} levels: judges rarely tell more than "
                f"{MAX_LEVELS} apart reliably; use 3-5 levels, each with a descriptor",
                RubricWarning,
                stacklevel=2,
            )
        return self

    # -- constructors ---------------------------------------------------------------------------
    @classmethod
    def yes_no(
        cls,
        question: str,
        *,
        name: str = "",
        weight: float = 1.0,
        critical: bool = False,
        category: str | None = None,
    ) -> Criterion:
        """A checklist item: levels NO=0 / YES=1; ``critical=True`` means it must be YES."""
        if not isinstance(question, str) or not question.strip():
            raise RubricError("a yes/no criterion needs a question (text)")
        return cls(
            name=name,
            description=question,
            levels=list(YES_NO_LEVELS),
            weight=weight,
            critical=1 if critical else None,
            category=category,
        )

    @classmethod
    def check(
        cls,
        kind: str | Callable[..., Any],
        arg: Any = None,
        *,
        name: str = "",
        description: str = "",
        levels: Any = None,
        weight: float = 1.0,
        critical: bool | int = False,
        category: str | None = None,
    ) -> Criterion:
        """A criterion checked by code, never sent to the judge.

        ``Criterion.check("regex", r"\\b30 days\\b", name="window")``; kinds: ``regex``,
        ``contains``, ``not_contains``, ``is_json``, ``json_schema``, ``max_words``. Or a Python
        function: ``Criterion.check(cites_a_source, name="sources")`` returning a bool, a level
        (give ``levels``), or either with a reason. It counts in the score, weights, critical
        levels and pass mark like any judged criterion. ``critical=True`` means it must be met
        (the top level); an int is the minimum level.
        """
        if callable(kind):
            label = getattr(kind, "__qualname__", None) or getattr(kind, "__name__", "check")
            code = CodeCheck(kind=_checks_mod.PYTHON, arg=str(label), function=kind)
            question = description or _first_line(getattr(kind, "__doc__", None)) or str(label)
            default_name = _slug(str(label))
        elif isinstance(kind, str):
            try:
                code = _code_check_from({kind: arg})
            except ValueError as exc:
                raise RubricError(str(exc)) from None
            question = description or _checks_mod.describe(code.kind, code.arg)
            default_name = _slug(kind)
        else:
            raise RubricError(
                f"Criterion.check takes a kind ({', '.join(CHECK_KINDS)}) or a function, got "
                f"{type(kind).__name__}"
            )
        built = list(YES_NO_LEVELS) if levels is None else _levels_from(name or "check", levels)
        top = max(lv.score for lv in built)
        floor = (top if critical else None) if isinstance(critical, bool) else critical
        return cls(
            name=name or default_name,
            description=question,
            levels=built,
            weight=weight,
            critical=floor,
            category=category,
            code=code,
        )

    # -- derived views ---------------------------------------------------------------------------
    @property
    def checked_by_code(self) -> bool:
        return self.code is not None

    def run_check(self, response: str, row: Mapping[str, Any] | None = None) -> Checked:
        """Run this criterion's code check on one response (:class:`CheckError` if it cannot)."""
        if self.code is None:
            raise CheckError(f"criterion {self.name!r} is judged, not checked by code")
        return self.code.run(self, response, row or {})

    @property
    def is_yes_no(self) -> bool:
        levels = self.levels  # asked per answer read: no list built
        return len(levels) == 2 and levels[0].score == 0 and levels[1].score == 1

    @property
    def question(self) -> str:
        """The text a judge reads: the description, or the name when there is none."""
        return self.description or self.name

    @property
    def min_score(self) -> int:
        return self.levels[0].score

    @property
    def max_score(self) -> int:
        return self.levels[-1].score

    @property
    def scores(self) -> list[int]:
        return [lv.score for lv in self.levels]

    def descriptor(self, score: int) -> str:
        for level in self.levels:
            if level.score == score:
                return level.descriptor
        raise KeyError(score)

    def normalise(self, score: int) -> float:
        """Map a level onto [0, 1]: (s - min) / (max - min)."""
        return (score - self.min_score) / (self.max_score - self.min_score)


def _first_line(text: str | None) -> str:
    return text.strip().splitlines()[0].strip() if text and text.strip() else ""


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")


class Rubric(_Told):
    """A set of criteria with an optional pass mark (a fraction of the maximum, 0.7 = 70%)."""

    model_config = _Strict

    criteria: list[Criterion]
    pass_mark: float | None = None
    name: str | None = None
    description: str | None = None

    @field_validator("pass_mark", mode="before")
    @classmethod
    def _pass_mark_fraction(cls, value: Any) -> Any:
        """0.7, "70%" and 70 all read as 70% (one rule: :func:`rubriclab.scale.parse_fraction`)."""
        return None if value is None else parse_fraction(value, "pass_mark")

    @model_validator(mode="before")
    @classmethod
    def _name_criteria(cls, data: Any) -> Any:
        """Criteria without a name get positional ids q1, q2, ... (checklist style)."""
        if isinstance(data, Mapping) and isinstance(data.get("criteria"), list):
            criteria = []
            for i, item in enumerate(data["criteria"], start=1):
                if isinstance(item, Criterion) and not item.name:
                    item = item.model_copy(update={"name": f"q{i}"})
                elif isinstance(item, Mapping) and not item.get("name"):
                    item = {**item, "name": f"q{i}"}
                criteria.append(item)
            data = {**data, "criteria": criteria}
        return data

    @model_validator(mode="after")
    def _check_criteria(self) -> Rubric:
        if not self.criteria:
            raise ValueError("a rubric needs at least one criterion")
        seen: set[str] = set()
        for criterion in self.criteria:
            if criterion.name in seen:
                raise ValueError(
                    f"criterion {criterion.name!r} appears twice: names must be unique"
                )
            seen.add(criterion.name)
        if not any(c.weight > 0 for c in self.criteria):
            raise ValueError(
                "at least one criterion needs a positive weight (negative weights are "
                "penalties taken off the positive points)"
            )
        return self

    # -- constructors ---------------------------------------------------------------------------
    @classmethod
    def checklist(
        cls,
        questions: Iterable[str | Criterion | Mapping[str, Any]],
        *,
        pass_mark: float | None = None,
        name: str | None = None,
    ) -> Rubric:
        """Yes/no questions; ids q1, q2, ... unless a criterion names itself."""
        criteria: list[Criterion] = []
        for item in questions:
            if isinstance(item, Criterion):
                criteria.append(item)
            elif isinstance(item, str):
                criteria.append(Criterion.yes_no(item))
            elif isinstance(item, Mapping):
                spec = dict(item)
                question = spec.pop("question", None) or spec.pop("description", "")
                _no_unknown_keys(spec, _YES_NO_KEYS, f"criteria[{len(criteria)}]")
                criteria.append(Criterion.yes_no(str(question), **spec))
            else:
                raise RubricError(
                    f"checklist items are questions (text) or criteria, got {type(item).__name__}"
                )
        return cls(criteria=criteria, pass_mark=pass_mark, name=name)

    @classmethod
    def analytic(
        cls,
        criteria: Mapping[str, Mapping[str, Any]],
        *,
        pass_mark: float | None = None,
        critical: Mapping[str, int] | None = None,
        name: str | None = None,
    ) -> Rubric:
        """Criteria by name, each with ``levels`` ({score: descriptor}, a list, or a count).

        ``{"accuracy": {"weight": 0.4, "levels": {1: "...", 2: "...", 3: "..."}, "critical": 2}}``
        """
        built: list[Criterion] = []
        for crit_name, spec in criteria.items():
            where = f"criteria.{crit_name}"
            if not isinstance(spec, Mapping):
                raise RubricError(
                    f"{where}: expected a mapping (weight, levels, critical ...), got "
                    f"{_shown(spec)}"
                )
            spec = dict(spec)
            levels = _levels_from(crit_name, spec.pop("levels", None), where=where)
            if critical and crit_name in critical:
                spec.setdefault("critical", critical[crit_name])
            if isinstance(spec.get("critical"), bool):
                spec["critical"] = 1 if spec["critical"] else None
            with _told(Criterion, where):
                built.append(
                    Criterion.model_validate({"name": crit_name, "levels": levels, **spec})
                )
        if critical:
            unknown = sorted(set(critical) - set(criteria))
            if unknown:
                raise RubricError(f"critical names criteria the rubric lacks: {', '.join(unknown)}")
        return cls(criteria=built, pass_mark=pass_mark, name=name)

    # -- serialisation ----------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        return self.model_dump(exclude_defaults=False)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Rubric:
        if not isinstance(data, Mapping):
            raise RubricError(f"a rubric is a mapping with 'criteria', got {_shown(data)}")
        data = dict(data)
        crits = data.get("criteria")
        if isinstance(crits, Mapping):
            # the analytic mapping form also reads from files: {accuracy: {weight: .., levels: ..}}
            _no_unknown_keys(data, [*cls.model_fields, "critical"], "")
            pass_mark = data.pop("pass_mark", None)
            critical = data.pop("critical", None)
            rubric_name = data.pop("name", None)
            rubric = cls.analytic(crits, pass_mark=pass_mark, critical=critical, name=rubric_name)
            return rubric.model_copy(update={"description": data.get("description")})
        if isinstance(crits, list):
            data["criteria"] = [_criterion_from_item(i, c) for i, c in enumerate(crits, start=1)]
        with _told(cls):
            return cls.model_validate(data)

    @classmethod
    def from_saved(cls, data: Mapping[str, Any]) -> Rubric:
        """A rubric from a saved result (our own ``to_dict``): like :meth:`from_dict`, except a
        criterion that a Python function checked comes back described by the function's name,
        to be shown; it cannot run (a file never names code to call)."""
        with cls.reading_saved():
            return cls.from_dict(data)

    @staticmethod
    @contextlib.contextmanager
    def reading_saved() -> Iterator[None]:
        """Inside: ``{python: name}`` checks read back as described-only (see :meth:`from_saved`)."""
        token = _READING_SAVED.set(True)
        try:
            yield
        finally:
            _READING_SAVED.reset(token)

    def with_functions_from(self, other: Rubric) -> Rubric:
        """This rubric with the check functions of ``other`` put back where a criterion of the
        same name names the same function (an edited copy of a rubric keeps its functions)."""
        found = {
            c.name: c.code
            for c in other.criteria
            if c.code is not None and c.code.function is not None
        }
        criteria = []
        changed = False
        for c in self.criteria:
            code = found.get(c.name)
            if (
                code is not None
                and c.code is not None
                and c.code.function is None
                and c.code.kind == code.kind
                and c.code.arg == code.arg
            ):
                c = c.model_copy(update={"code": code})
                changed = True
            criteria.append(c)
        return self.model_copy(update={"criteria": criteria}) if changed else self

    def to_json(self, *, indent: int | None = 2) -> str:
        return self.model_dump_json(indent=indent)

    @classmethod
    def from_json(cls, text: str) -> Rubric:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise RubricError(f"rubric JSON is not valid: line {exc.lineno}: {exc.msg}") from None
        if not isinstance(data, Mapping):
            raise RubricError("rubric JSON must be an object with 'criteria'")
        return cls.from_dict(data)

    def to_yaml(self) -> str:
        return yaml.safe_dump(self.to_dict(), sort_keys=False, allow_unicode=True)

    @classmethod
    def from_yaml(cls, source: str | os.PathLike[str]) -> Rubric:
        """Parse YAML (or JSON) rubric text; a :class:`~pathlib.Path` is read as a file.

        Text is always text: ``Rubric.from_yaml("support.yaml")`` parses those characters (and
        says so, pointing at :meth:`load`), it never opens a file. Read a file with
        :meth:`load` (``Rubric.load("rubrics/support.yaml")``) or pass a ``Path``."""
        if isinstance(source, os.PathLike):
            return cls.load(source)
        return cls.from_yaml_text(source)

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Rubric:
        """Read a rubric file (``.yaml``, ``.yml`` or ``.json``); errors name the file."""
        path = Path(path)
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise FileNotFoundError(f"no rubric file at {path}") from None
        except (OSError, UnicodeDecodeError) as exc:
            raise RubricError(f"{path}: cannot be read ({exc})") from None
        try:
            return cls.from_yaml_text(text)
        except RubricError as exc:
            raise RubricError(f"{path}: {exc}", source=exc._source) from None

    @classmethod
    def from_yaml_text(cls, text: str) -> Rubric:
        """Parse YAML (or JSON) rubric text; never reads a file, whatever the text looks like."""
        if not isinstance(text, str):
            raise RubricError(f"rubric YAML must be text, got {type(text).__name__}")
        try:
            data = load_yaml(text)
        except YamlError as exc:
            raise RubricError(f"rubric YAML is not valid: {exc}") from None
        if isinstance(data, list):
            data = {"criteria": data}
        if not isinstance(data, Mapping):
            hint = ""
            if isinstance(data, str) and _looks_like_a_path(text):
                hint = (
                    f": {text.strip()!r} looks like a file name; read files with Rubric.load(path)"
                )
            raise RubricError(
                f"rubric YAML must be a mapping with 'criteria' (or a list of criteria){hint}"
            )
        return cls.from_dict(data)

    def save(self, path: str | Path) -> None:
        path = Path(path)
        text = self.to_json() if path.suffix == ".json" else self.to_yaml()
        atomic_write_text(path, text)  # a failed save keeps the previous file whole

    # -- behaviour ---------------------------------------------------------------------------------
    def __getitem__(self, name: str) -> Criterion:
        for criterion in self.criteria:
            if criterion.name == name:
                return criterion
        raise KeyError(f"rubric has no criterion {name!r} (has: {', '.join(self.names)})")

    def __len__(self) -> int:
        return len(self.criteria)

    @property
    def names(self) -> list[str]:
        return [c.name for c in self.criteria]

    @property
    def is_checklist(self) -> bool:
        return all(c.is_yes_no for c in self.criteria)

    @property
    def coded(self) -> list[Criterion]:
        """The criteria checked by code (never sent to the judge)."""
        return [c for c in self.criteria if c.code is not None]

    @property
    def judged(self) -> list[Criterion]:
        """The criteria the judge is asked about."""
        return [c for c in self.criteria if c.code is None]

    @property
    def has_negative_weights(self) -> bool:
        return any(c.weight < 0 for c in self.criteria)

    def score(self, levels: Mapping[str, Any]) -> Score:
        """Validate per-criterion levels and combine them: see :func:`rubriclab.scoring.score`."""
        return score_levels(self, levels)


_YES_NO_KEYS = ("name", "weight", "critical", "category", "code")


def _shown(value: Any) -> str:
    """A value as an error shows it: short, and never a whole untrusted document."""
    if isinstance(value, Mapping):
        return "a mapping"
    if isinstance(value, list | tuple):
        return "a list"
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _no_unknown_keys(data: Mapping[str, Any], known: Iterable[str], where: str) -> None:
    known = list(known)
    for key in data:
        if key not in known:
            at = f" at {where}" if where else ""
            raise RubricError(f"unknown key {key!r}{at}{did_you_mean(str(key), known)}")


def _looks_like_a_path(text: str) -> bool:
    one = text.strip()
    return "\n" not in one and one.endswith((".yaml", ".yml", ".json"))


def _levels_from(crit_name: str, levels: Any, where: str | None = None) -> list[Level]:
    if levels is None:
        return list(YES_NO_LEVELS)
    if isinstance(levels, bool):
        raise RubricError(f"criterion {crit_name!r}: levels must be a count, list or mapping")
    if isinstance(levels, int):
        if levels < 2:
            raise RubricError(f"criterion {crit_name!r}: needs at least two levels, got {levels}")
        warnings.warn(
            f"criterion {crit_name!r}: 'levels: {levels}' gives levels without descriptors "
            f"('level 1 of {levels}'), so the judge guesses what each level means; describe "
            "each level (levels: {1: ..., 2: ...})",
            RubricWarning,
            stacklevel=2,
        )
        return [Level(score=i, descriptor=f"level {i} of {levels}") for i in range(1, levels + 1)]
    if isinstance(levels, Mapping):
        out = []
        for key, descriptor in levels.items():
            try:
                score = int(key)
            except (TypeError, ValueError):
                raise RubricError(
                    f"criterion {crit_name!r}: level key {short_repr(key)} is not an integer score"
                ) from None
            out.append(Level(score=score, descriptor=str(descriptor)))
        return out
    if isinstance(levels, Sequence) and not isinstance(levels, str):
        out = []
        for item in levels:
            if isinstance(item, Level):
                out.append(item)
            elif isinstance(item, Mapping):
                at = f"{where or f'criterion {crit_name!r}'}.levels[{len(out)}]"
                with _told(Level, at):
                    out.append(Level.model_validate(item))
            else:
                raise RubricError(
                    f"criterion {crit_name!r}: each level needs a score and a descriptor, "
                    f"got {short_repr(item)}"
                )
        return out
    raise RubricError(f"criterion {crit_name!r}: levels must be a count, list or mapping")


def _criterion_from_item(index: int, item: Any) -> Any:
    """Accept the short forms people write in YAML: a bare question, or levels as a mapping."""
    if isinstance(item, str):
        return Criterion.yes_no(item, name=f"q{index}")
    if isinstance(item, Mapping):
        item = dict(item)
        if "question" in item and "description" not in item:
            item["description"] = item.pop("question")
        if "levels" in item and not _is_level_list(item["levels"]):
            name = item.get("name", f"q{index}")
            label = name if isinstance(name, str) else short_repr(name)
            item["levels"] = _levels_from(label, item["levels"])
        if isinstance(item.get("critical"), bool):
            item["critical"] = 1 if item["critical"] else None
    return item


def _is_level_list(levels: Any) -> bool:
    return isinstance(levels, list) and all(isinstance(x, Mapping | Level) for x in levels)


def slug(text: str) -> str:
    """A stable identifier from free text (used for generated criterion names)."""
    return _slug(text)
