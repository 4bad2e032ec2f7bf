"""The data Vertex's GenAI evaluation client reads: contents, eval cases, datasets, rubrics.

Same class and field names as ``vertexai._genai.types`` (``EvaluationDataset.eval_dataset_df``,
``EvalCase.rubric_groups`` ...), as pydantic models that refuse unknown fields. ``Content``
and ``Part`` are the small text-and-file subset of ``google.genai.types`` the evaluation
client needs; anywhere a ``Content`` is expected a plain string is accepted too.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextvars import ContextVar
from typing import Any, Self

import pandas as pd
from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from ....plain_errors import explain

__all__ = [
    "Content",
    "EvalCase",
    "EvaluationDataset",
    "Message",
    "Part",
    "ResponseCandidate",
    "Rubric",
    "RubricContent",
    "RubricContentProperty",
    "RubricGroup",
    "RubricVerdict",
    "as_content",
    "cases_frame",
    "content_text",
    "show_table",
]


class Model(BaseModel):
    """Vertex's models refuse unknown fields; ours too, so a typo is an error, not ignored.

    Bad input is a one-line ``ValueError`` naming the type and the field
    (``types.EvalCase: unknown key 'promt' (did you mean 'prompt'?)``), never pydantic's text.
    """

    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)

    def __init__(self, **data: Any) -> None:
        nested = _depth.get() > 0
        token = _depth.set(_depth.get() + 1)
        try:
            super().__init__(**data)
        except ValidationError as exc:
            if nested:  # inside another model's validation: the outermost one explains
                raise
            raise ValueError(f"types.{type(self).__name__}: {explain(exc, type(self))}") from None
        finally:
            _depth.reset(token)

    @classmethod
    def model_validate(cls, *args: Any, **kwargs: Any) -> Self:
        nested = _depth.get() > 0
        token = _depth.set(_depth.get() + 1)
        try:
            return super().model_validate(*args, **kwargs)
        except ValidationError as exc:
            if nested:
                raise
            raise ValueError(f"types.{cls.__name__}: {explain(exc, cls)}") from None
        finally:
            _depth.reset(token)


#: how deep in model construction we are (pydantic calls a custom __init__ for nested models)
_depth: ContextVar[int] = ContextVar("vertex_genai_model_depth", default=0)


class Part(Model):
    """One part of a message: text, or a file by URI / inline data (passed on as is)."""

    text: str | None = None
    file_data: dict[str, Any] | None = None
    inline_data: dict[str, Any] | None = None


class Content(Model):
    """A message: a role and its parts."""

    parts: list[Part] | None = None
    role: str | None = None


def as_content(value: Any) -> Content | None:
    """A ``Content`` from a Content, a dict of one, or plain text."""
    if value is None or isinstance(value, Content):
        return value
    if isinstance(value, str):
        return Content(parts=[Part(text=value)])
    if isinstance(value, dict):
        return Content.model_validate(value)
    raise ValueError(f"expected text or a Content, got {type(value).__name__}")


def content_text(value: Any) -> str | None:
    """The text of a Content (parts joined), a string as is, None for nothing."""
    content = as_content(value)
    if content is None:
        return None
    texts = [p.text for p in content.parts or [] if p.text]
    return "\n".join(texts)


class ResponseCandidate(Model):
    """One candidate's response to an eval case."""

    response: Content | None = None

    @field_validator("response", mode="before")
    @classmethod
    def _text(cls, value: Any) -> Any:
        return as_content(value)


class Message(Model):
    """A turn of conversation history."""

    turn_id: str | None = None
    content: Content | None = None
    author: str | None = None

    @field_validator("content", mode="before")
    @classmethod
    def _text(cls, value: Any) -> Any:
        return as_content(value)


class RubricContentProperty(Model):
    """What a rubric checks, in words."""

    description: str | None = None


class RubricContent(Model):
    """A rubric's content: a property to check."""

    property: RubricContentProperty | None = None


class Rubric(Model):
    """One rubric (a yes/no check) of a rubric group."""

    rubric_id: str | None = None
    content: RubricContent | None = None
    type: str | None = None
    importance: str | None = None

    @classmethod
    def of(cls, description: str, rubric_id: str | None = None, **fields: Any) -> Rubric:
        """A rubric from its text (a shortcut; Vertex builds the nested form)."""
        return cls(
            rubric_id=rubric_id,
            content=RubricContent(property=RubricContentProperty(description=description)),
            **fields,
        )

    @property
    def text(self) -> str:
        prop = self.content.property if self.content else None
        return (prop.description if prop else None) or ""


class RubricVerdict(Model):
    """The judge's verdict on one rubric for one response."""

    evaluated_rubric: Rubric | None = None
    verdict: bool | None = None
    reasoning: str | None = None


class RubricGroup(Model):
    """Named rubrics (``EvalCase.rubric_groups`` maps a group name to one)."""

    group_id: str | None = None
    display_name: str | None = None
    rubrics: list[Rubric] | None = None


class EvalCase(Model):
    """One case: a prompt, candidates' responses, a reference, its rubric groups.

    The agent fields (``intermediate_events``, ``agent_info``, ``agent_data``,
    ``user_scenario``) are accepted so Vertex data loads, but evaluating them is not offered
    here (``evaluate`` says so and names the alternative).
    """

    prompt: Content | None = None
    responses: list[ResponseCandidate] | None = None
    reference: ResponseCandidate | None = None
    system_instruction: Content | None = None
    conversation_history: list[Message] | None = None
    rubric_groups: dict[str, RubricGroup] | None = None
    eval_case_id: str | None = None
    intermediate_events: list[Any] | None = None
    agent_info: Any | None = None
    agent_data: Any | None = None
    user_scenario: Any | None = None

    @field_validator("prompt", "system_instruction", mode="before")
    @classmethod
    def _contents(cls, value: Any) -> Any:
        return as_content(value)

    @field_validator("reference", mode="before")
    @classmethod
    def _reference(cls, value: Any) -> Any:
        if isinstance(value, str):
            return ResponseCandidate(response=as_content(value))
        return value

    @field_validator("responses", mode="before")
    @classmethod
    def _responses(cls, value: Any) -> Any:
        if isinstance(value, list):
            return [
                ResponseCandidate(response=as_content(v)) if isinstance(v, str) else v
                for v in value
            ]
        return value


class EvaluationDataset(Model):
    """A dataset to evaluate: a DataFrame (``eval_dataset_df``) or a list of ``eval_cases``.

    ``candidate_name`` names the model that wrote its responses (``run_inference`` sets it).
    ``gcs_source`` / ``bigquery_source`` are accepted but not read here (no cloud access):
    load the data into a DataFrame first.
    """

    eval_cases: list[EvalCase] | None = None
    eval_dataset_df: pd.DataFrame | None = None
    candidate_name: str | None = None
    gcs_source: Any | None = None
    bigquery_source: Any | None = None

    @field_validator("eval_dataset_df", mode="before")
    @classmethod
    def _frame(cls, value: Any) -> Any:
        if value is not None and not isinstance(value, pd.DataFrame):
            raise ValueError(
                f"eval_dataset_df must be a pandas DataFrame, got {type(value).__name__}"
            )
        return value

    def show(self) -> None:
        """Show the dataset's table (pandas escapes every cell, so model text stays text)."""
        frame = self.eval_dataset_df
        if frame is None:
            frame = cases_frame(self.eval_cases or [])
        show_table(frame)


_AGENT_FIELDS = ("intermediate_events", "agent_info", "agent_data", "user_scenario")


def cases_frame(cases: Sequence[EvalCase]) -> pd.DataFrame:
    """Eval cases as rows: prompt, response (the first candidate's), reference, rubric groups."""
    rows: list[dict[str, Any]] = []
    for i, case in enumerate(cases):
        used = [f for f in _AGENT_FIELDS if getattr(case, f) is not None]
        if used:
            raise NotImplementedError(
                f"eval case {i}: {', '.join(used)} (agent evaluation) is not offered by "
                "rubriclab's Vertex GenAI client; judge agent runs with "
                "rubriclab.compat.vertex's EvalTask(runnable=...) or rl.evaluate over traces"
            )
        row: dict[str, Any] = {"prompt": content_text(case.prompt)}
        if case.responses:
            row["response"] = content_text(case.responses[0].response)
        if case.reference is not None:
            row["reference"] = content_text(case.reference.response)
        if case.system_instruction is not None:
            row["system_instruction"] = content_text(case.system_instruction)
        if case.conversation_history:
            row["conversation_history"] = "\n".join(
                f"{m.author or 'user'}: {content_text(m.content) or ''}"
                for m in case.conversation_history
            )
        if case.rubric_groups:
            row["rubric_groups"] = dict(case.rubric_groups)
        if case.eval_case_id is not None:
            row["eval_case_id"] = case.eval_case_id
        rows.append(row)
    return pd.DataFrame(rows)


def show_table(obj: Any) -> None:
    try:
        from IPython.display import display
    except ImportError:  # a script without IPython: print the table
        print(obj)
        return
    display(obj)  # type: ignore[no-untyped-call]
