"""``TemplateMetric``: a judge prompt written entirely by the user, over a span or a whole trace.

The config keeps the custom-judge-rubric contract (seed 002): the template is the whole rubric,
the raw ``Span``/``Trace`` is bound under the one name ``expected_variables`` declares, and we
append the output-format instruction ourselves, so the judge always answers
``{"rationale": ..., "score": 0.0-1.0}`` whatever the template says. Unknown keys are errors
(a typo'd parameter must not silently do nothing) and every field has a default, so
``TemplateMetric()`` is a usable config and ``config_schema()`` leaves nothing default-less.
"""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from .. import schemas
from ..ask import Ask, InvalidAnswer, ask_all
from ..critique import Outcome
from ..parse import extract_json
from ..templates import (
    DEFAULT_RENDER_TIMEOUT,
    TemplateError,
    check_render_timeout,
    compile_template,
)
from .base import Judged, Rows, judged

if TYPE_CHECKING:
    from ..judges import Judge
    from ..rubric import Rubric

__all__ = [
    "DEFAULT_PROMPT_TEMPLATE",
    "OUTPUT_FORMAT_INSTRUCTION",
    "PROMPT_VARIABLES",
    "SCORE_SCHEMA",
    "TemplateMetric",
]

#: the names a raw partition can be bound under: one span, or one whole trace
PROMPT_VARIABLES: tuple[str, ...] = ("input_span", "input_trace")

#: re-asks after an unreadable or invalid answer (the contract has no knob for it)
TEMPLATE_REASK = 1
#: appended to every rendered template: the template defines the rubric, we define the answer
OUTPUT_FORMAT_INSTRUCTION = (
    "\n\n---\n"
    "Answer with one JSON object and nothing else, in exactly this shape:\n"
    '{"rationale": "<your reasoning, in a few sentences>", "score": <a number from 0.0 to 1.0>}\n'
    "Write the rationale first, then the score. The score must be a plain number between 0.0 "
    "and 1.0 inclusive (not text, not a percentage), where higher is better as the instructions "
    "above define it."
)

#: the judge's answer: reasoning first, so the score follows from it
SCORE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "rationale": {
            "type": "string",
            "description": "Why the score: what in the input supports or contradicts it.",
        },
        "score": {
            "type": "number",
            "minimum": 0,
            "maximum": 1,
            "description": "0.0 (worst) to 1.0 (best), as the instructions define it.",
        },
    },
    "required": ["rationale", "score"],
    "additionalProperties": False,
}

_SHAPE = '{"rationale": "...", "score": <number from 0.0 to 1.0>}'


DEFAULT_PROMPT_TEMPLATE = (
    "You are a strict evaluator assessing a single step (span) from an AI agent's execution "
    "trace.\n"
    "\n"
    "Judge the overall quality of this step:\n"
    "  - Was the action appropriate for the agent's apparent goal?\n"
    "  - Were any tool inputs well-formed and sensible?\n"
    "  - Is the output correct, relevant, and free of errors or hallucination?\n"
    "\n"
    "Step (raw canonical span):\n"
    "{{ input_span | tojson(2, max_chars=12000) }}\n"
    "\n"
    "Score 1.0 if the step was fully correct and useful, 0.0 if it was wrong, harmful, or "
    "entirely\n"
    "unproductive, and a value in between for partial quality.\n"
)


def _role(role: str) -> dict[str, Any]:
    return {"x-aip-param-role": role}


class TemplateMetric(BaseModel):
    """Judge each span or trace with a user-written Jinja2 prompt and a 0-1 score.

    The template defines only the rubric: rendering runs in rubriclab's sandbox with the raw
    partition bound under its variable name, and rubriclab appends the response-format
    instruction. A rendered prompt over ``max_prompt_chars`` is refused on its row, never
    truncated. ``model``/``judge_temperature``/``timeout_seconds``/``concurrency_limit`` apply
    to this metric's judge calls; connection details (URL, key) come from the judge it runs on.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, validate_default=True)

    #: the contract's name for this config, used as the title of :meth:`config_schema`
    schema_title: ClassVar[str] = "CustomJudgeRubricConfig"

    kind: ClassVar[Literal["template"]] = "template"
    #: a template metric's rubric is its template: no Rubric to show
    rubric: ClassVar[Rubric | None] = None

    name: str = Field(
        default="custom_judge_rubric",
        description="Metric name: the prefix of its result columns ('{name}/score'); no '/'",
    )
    prompt_template: str = Field(
        default=DEFAULT_PROMPT_TEMPLATE, json_schema_extra=_role("prompt_slots")
    )
    expected_variables: list[str] = Field(
        default=["input_span"], json_schema_extra=_role("prompt_slots")
    )
    model: str | None = Field(
        default=None,
        description="Judge model id; falls back to the evaluator_system model if unset",
    )
    judge_temperature: float = Field(
        default=0.0, description="Sampling temperature for the judge model"
    )
    timeout_seconds: float = Field(
        default=60.0,
        description="Timeout per judge API call, in seconds",
        json_schema_extra=_role("operational"),
    )
    concurrency_limit: int = Field(
        default=10,
        description="Max concurrent judge API calls",
        json_schema_extra=_role("operational"),
    )
    max_prompt_chars: int = Field(
        default=100_000,
        ge=1_000,
        le=1_000_000,
        description=(
            "Max chars the rendered prompt may reach before the occurrence is refused. Raise it "
            "for traces that are genuinely large; the prompt is never silently truncated to fit."
        ),
    )
    render_timeout: float = Field(
        default=DEFAULT_RENDER_TIMEOUT,
        description=(
            "Seconds one render of the template may take; a render that runs longer is refused "
            "on its row (the template sandbox's time budget)"
        ),
        json_schema_extra=_role("operational"),
    )
    version: str = Field(
        default="1.0.0",
        min_length=1,
        max_length=64,
        json_schema_extra=_role("scoring_metadata"),
    )

    @model_validator(mode="before")
    @classmethod
    def _name_unknown_keys(cls, data: Any) -> Any:
        """Say which key is unknown and what was probably meant, before pydantic's generic error."""
        if isinstance(data, Mapping):
            known = list(cls.model_fields)
            for key in data:
                if key not in cls.model_fields:
                    close = difflib.get_close_matches(str(key), known, n=1)
                    hint = f" (did you mean {close[0]!r}?)" if close else ""
                    raise ValueError(
                        f"unknown TemplateMetric parameter {key!r}{hint}; "
                        f"the parameters are: {', '.join(known)}"
                    )
        return data

    # -- checks the schema cannot express (kept out of it so the contract stays as written) ----
    @field_validator("name")
    @classmethod
    def _check_name(cls, value: str) -> str:
        if not value or "/" in value:
            raise ValueError(
                f"metric name {value!r} must be non-empty and contain no '/' "
                "(it prefixes the result columns, e.g. 'custom_judge_rubric/score')"
            )
        return value

    @field_validator("expected_variables")
    @classmethod
    def _check_variables(cls, value: list[str]) -> list[str]:
        allowed = " or ".join(repr(v) for v in PROMPT_VARIABLES)
        if len(value) != 1:
            raise ValueError(
                f"give exactly one variable, {allowed}: the template reads one span or one "
                f"trace per row (got {value!r})"
            )
        if value[0] not in PROMPT_VARIABLES:
            raise ValueError(f"{value[0]!r} is not a variable rubriclab binds; use {allowed}")
        return value

    @field_validator(
        "judge_temperature",
        "timeout_seconds",
        "concurrency_limit",
        "max_prompt_chars",
        "render_timeout",
        mode="before",
    )
    @classmethod
    def _no_bools(cls, value: Any) -> Any:
        if isinstance(value, bool):  # True would pass as 1 and hide a mistake
            raise ValueError(f"expected a number, got {value!r}")
        return value

    @field_validator("judge_temperature")
    @classmethod
    def _check_temperature(cls, value: float) -> float:
        if not math.isfinite(value) or not 0.0 <= value <= 2.0:
            raise ValueError(f"judge_temperature must be between 0 and 2, got {value!r}")
        return value

    @field_validator("timeout_seconds")
    @classmethod
    def _check_timeout(cls, value: float) -> float:
        if not math.isfinite(value) or value <= 0:
            raise ValueError(f"timeout_seconds must be a positive number, got {value!r}")
        return value

    @field_validator("render_timeout")
    @classmethod
    def _check_render_timeout(cls, value: float) -> float:
        return check_render_timeout(value)

    @field_validator("concurrency_limit")
    @classmethod
    def _check_concurrency(cls, value: int) -> int:
        if value < 1:
            raise ValueError(f"concurrency_limit must be at least 1, got {value!r}")
        return value

    @field_validator("model")
    @classmethod
    def _check_model(cls, value: str | None) -> str | None:
        if value is not None and not value.strip():
            raise ValueError("model must be a model id, or None to use the judge's model")
        return value

    # -- reading -----------------------------------------------------------------------------
    @property
    def variable(self) -> str:
        """The name the raw span or trace is bound under in the template."""
        return self.expected_variables[0]

    @property
    def partition(self) -> Literal["span", "trace"]:
        """Which partition this metric judges: 'span' for input_span, 'trace' for input_trace."""
        return "trace" if self.variable == "input_trace" else "span"

    @property
    def description(self) -> str:
        return f"custom template judge over each {self.partition} (version {self.version})"

    def with_options(self, **changes: Any) -> TemplateMetric:
        """A validated copy with some fields changed (unknown keys are errors here too)."""
        return type(self).model_validate({**self.model_dump(), **changes})

    @classmethod
    def config_schema(cls) -> dict[str, Any]:
        """The JSON schema of the config (every property has a default)."""
        schema = cls.model_json_schema()
        schema["title"] = cls.schema_title
        return schema

    async def judge_rows(self, rows: Rows) -> Judged:
        """Render the template per row (the bound span or trace, else the row's fields), ask,
        and read a score in [0, 1]; a row whose prompt cannot be rendered is that row's error."""
        variables = [dict(c.bound) if c.bound is not None else c.variables() for c in rows.cases]
        judge = rows.judge()  # the metric's judge, even when no row renders (the result names it)
        # a trace row whose trace recorded no content is that row's error (a table row's own
        # problems are the rubric metrics' concern: a template may not read the failing column)
        errors = [c.error if c.bound is not None else None for c in rows.cases]
        outcomes = await _judge_template(self, variables, judge, errors)
        return judged(self.name, outcomes, [judge])


@dataclass(frozen=True)
class _Score:
    value: float
    rationale: str


def _read_score(text: str) -> _Score:
    """The judge's score and rationale; anything but a number in [0, 1] is refused."""
    data = extract_json(text, expect=dict)
    if not isinstance(data, Mapping):
        raise InvalidAnswer(f"the answer is not a JSON object; answer {_SHAPE}")
    if "score" not in data:
        raise InvalidAnswer(f"the answer has no 'score'; answer {_SHAPE}")
    raw = data["score"]
    if isinstance(raw, bool) or not isinstance(raw, int | float) or not math.isfinite(raw):
        raise InvalidAnswer(f"score {raw!r} is not a number; answer {_SHAPE}")
    if not 0.0 <= float(raw) <= 1.0:
        raise InvalidAnswer(f"score {raw!r} is outside 0.0-1.0; answer {_SHAPE}")
    rationale = data.get("rationale")
    if rationale is not None and not isinstance(rationale, str):
        raise InvalidAnswer(f"rationale {rationale!r} is not text; answer {_SHAPE}")
    return _Score(float(raw), rationale or "")


def _format_name(metric_name: str) -> str:
    # OpenAI names a response format with [A-Za-z0-9_-]{1,64}
    return (re.sub(r"[^A-Za-z0-9_-]", "_", metric_name)[:58] or "metric") + "_score"


def _metric_judge(metric: TemplateMetric, judge: Judge) -> Judge:
    """The judge with the metric's call settings applied (the same judge when they match)."""
    changes: dict[str, Any] = {}
    if metric.model is not None and metric.model != judge.model:
        changes["model"] = metric.model
    if judge.temperature != metric.judge_temperature:
        changes["temperature"] = metric.judge_temperature
    if judge.timeout != metric.timeout_seconds:
        changes["timeout"] = metric.timeout_seconds
    if judge.max_concurrency != metric.concurrency_limit:
        changes["max_concurrency"] = metric.concurrency_limit
    return judge.with_options(**changes) if changes else judge


def _template_outcome(ask: Ask) -> Outcome:
    out = Outcome()
    out.account(ask.replies)
    out.raw_output = ask.raw
    if ask.error is not None or not isinstance(ask.parsed, _Score):
        out.error = ask.error or "the judge gave no usable answer"
        return out
    out.score, out.rationale = ask.parsed.value, ask.parsed.rationale
    return out


def _render_error(exc: TemplateError, template_vars: frozenset[str], row: Mapping[str, Any]) -> str:
    missing = sorted(template_vars - set(row))
    if not missing:
        return str(exc)
    given = ", ".join(sorted(map(str, row))) or "(none)"
    return f"{exc} (the template reads {', '.join(missing)}; this row binds: {given})"


async def _judge_template(
    metric: TemplateMetric,
    variables_list: list[dict[str, Any]],
    judge: Judge,
    errors: Sequence[str | None] | None = None,
) -> list[Outcome]:
    """Render, ask and read ``metric`` over rows of template variables.

    A template that fails to compile or render (sandbox refusal, undefined name, prompt over
    ``max_prompt_chars``) fails only its rows, with no judge call; the other rows still score.
    """
    outcomes: list[Outcome | None] = [None] * len(variables_list)
    try:
        template = compile_template(metric.prompt_template, name=f"{metric.name} prompt_template")
    except TemplateError as exc:
        return [Outcome(error=str(exc)) for _ in variables_list]
    response_format = schemas.response_format(_format_name(metric.name), SCORE_SCHEMA)
    asks: list[tuple[int, Ask]] = []
    for i, variables in enumerate(variables_list):
        if errors is not None and errors[i]:  # the row's own content is missing (no call)
            outcomes[i] = Outcome(error=errors[i])
            continue
        try:
            text = template.render(
                variables,
                max_prompt_chars=metric.max_prompt_chars,
                render_timeout=metric.render_timeout,
            )
        except TemplateError as exc:
            outcomes[i] = Outcome(error=_render_error(exc, template.variables, variables))
            continue
        if not text.strip():
            outcomes[i] = Outcome(
                error="the template rendered an empty prompt for this row; nothing to judge"
            )
            continue
        messages = [{"role": "user", "content": text + OUTPUT_FORMAT_INSTRUCTION}]
        asks.append((i, Ask(messages, response_format, 0, _read_score)))
    if asks:
        m_judge = _metric_judge(metric, judge)
        try:
            await ask_all(
                [a for _, a in asks], m_judge, TEMPLATE_REASK, desc=f"{metric.name}: judging"
            )
        finally:
            if m_judge is not judge:
                await m_judge.aclose()
    for i, ask in asks:
        outcomes[i] = _template_outcome(ask)
    return [o if o is not None else Outcome(error="not judged") for o in outcomes]
