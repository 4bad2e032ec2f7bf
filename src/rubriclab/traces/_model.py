"""The canonical span model: messages, content parts, tool calls, status, usage, ``Span``."""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any, Literal, NoReturn, cast

from jinja2.sandbox import unsafe
from pydantic import BaseModel, ConfigDict, Field, computed_field, field_validator, model_validator

from ..columns import preview
from ._base import (
    SpanKind,
    TraceWarning,
    _as_text,
    _maybe_json,
    _normalise_kind,
    _parse_time,
)


class _ReadOnlyModel(BaseModel):
    """Base for everything bound into templates: frozen, strict, and without pydantic's loaders.

    ``parse_file`` reads files and ``parse_raw`` can unpickle bytes; both are reachable as
    attributes of any pydantic instance, so here they refuse, and the sandbox refuses to call them.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    @classmethod
    @unsafe
    def parse_file(cls, *args: Any, **kwargs: Any) -> NoReturn:
        raise TypeError(f"{cls.__name__}.parse_file is disabled: use rubriclab.load_traces(path)")

    @classmethod
    @unsafe
    def parse_raw(cls, *args: Any, **kwargs: Any) -> NoReturn:
        raise TypeError(f"{cls.__name__}.parse_raw is disabled: use model_validate_json")


class ContentPart(_ReadOnlyModel):
    """One piece of a message: text, an image or file reference, a tool result, reasoning."""

    type: str = "text"
    text: str | None = None
    url: str | None = None
    mime_type: str | None = None


class ToolCall(_ReadOnlyModel):
    """A tool call: what was asked (name, arguments) and, once known, what came back.

    ``arguments`` and ``result`` are parsed when they are JSON objects or arrays, so a template
    can write ``call.arguments.city``; ``error`` holds the failure when the tool raised.
    """

    id: str | None = None
    name: str = ""
    arguments: Any = None
    result: Any = None
    error: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _accept_common_shapes(cls, data: Any) -> Any:
        if not isinstance(data, Mapping):
            return data
        d = dict(data)
        function = d.pop("function", None)
        if isinstance(function, Mapping):
            d.setdefault("name", function.get("name"))
            d.setdefault("arguments", function.get("arguments"))
        if d.get("type") in ("function", "tool_call", "function_call", "tool_use"):
            d.pop("type")
        if "input" in d and "arguments" not in d:  # Anthropic-style tool_use
            d["arguments"] = d.pop("input")
        if d.get("name") is None:
            d["name"] = ""
        if d.get("id") is not None:
            d["id"] = str(d["id"])
        return d

    @field_validator("arguments", "result")
    @classmethod
    def _parse_json(cls, value: Any) -> Any:
        return _maybe_json(value)


_MESSAGE_KEYS = ("role", "content", "tool_calls", "tool_call_id", "name", "finish_reason")


def _part(raw: Any) -> tuple[dict[str, Any] | None, dict[str, Any] | None, str | None]:
    """Split one foreign content part into (content part, tool call request, tool-call id)."""
    if isinstance(raw, str):
        return {"type": "text", "text": raw}, None, None
    if not isinstance(raw, Mapping):
        return {"type": "text", "text": _as_text(raw)}, None, None
    kind = str(raw.get("type") or raw.get("message_content.type") or "text")
    text = raw.get("text", raw.get("content"))
    if kind in ("tool_call", "function_call", "tool_use"):
        return None, dict(raw), None
    if kind in ("tool_call_response", "tool_result", "function_call_output"):
        result = next(
            (raw[k] for k in ("response", "result", "output", "content", "text") if k in raw), None
        )
        call_id = raw.get("id", raw.get("tool_call_id", raw.get("call_id")))
        part = {"type": "tool_call_response", "text": _as_text(result)}
        return part, None, None if call_id is None else str(call_id)
    if kind in ("text", "input_text", "output_text", "reasoning", "thinking"):
        return {"type": kind, "text": _as_text(text)}, None, None
    if kind == "image_url":
        image = raw.get("image_url")
        url = image.get("url") if isinstance(image, Mapping) else image
        return {"type": "image", "url": None if url is None else str(url)}, None, None
    # media (blob / uri / file / image / audio ...): keep the reference, never inline bytes
    url = raw.get("uri", raw.get("url", raw.get("file_id")))
    modality = raw.get("modality")
    media: dict[str, Any] = {
        "type": str(modality) if kind in ("blob", "uri", "file_data") and modality else kind,
        "url": None if url is None else str(url),
        "mime_type": raw.get("mime_type"),
        "text": text if isinstance(text, str) and kind not in ("blob",) else None,
    }
    return media, None, None


def _normalise_message(data: Mapping[str, Any]) -> dict[str, Any]:
    """Map OpenAI-style, GenAI ``parts`` and canonical message dicts onto Message's fields.

    Keys it does not know are kept, so a typo in canonical input still fails ``extra="forbid"``.
    """
    d = dict(data)
    if "content" in d or "parts" in d:
        d.pop("text", None)  # our own dumps carry the computed text next to the content
    elif "text" in d:
        d["content"] = d.pop("text")
    raw_parts: Any = d.pop("parts", None)
    if raw_parts is None:
        raw_parts = d.pop("content", None)
    if raw_parts is None:
        raw_parts = []
    elif isinstance(raw_parts, (str, Mapping)) or not isinstance(raw_parts, Sequence):
        raw_parts = [raw_parts]
    parts: list[dict[str, Any]] = []
    calls: list[Any] = list(d.pop("tool_calls", None) or [])
    for raw in raw_parts:
        if isinstance(raw, ContentPart):
            parts.append(raw.model_dump())
            continue
        part, call, call_id = _part(raw)
        if part is not None:
            parts.append(part)
        if call is not None:
            calls.append(call)
        if call_id is not None:
            d.setdefault("tool_call_id", call_id)
    if "id" in d and "tool_call_id" not in d and str(d.get("role", "")).lower() == "tool":
        d["tool_call_id"] = d.pop("id")  # GenAI gen_ai.tool.message body
    d["content"] = parts
    d["tool_calls"] = calls
    if isinstance(d.get("role"), str):
        d["role"] = d["role"].lower()
    return d


class Message(_ReadOnlyModel):
    """A chat message: role, content parts, the tool calls it requests, the call it answers."""

    role: str
    content: list[ContentPart] = Field(default_factory=list)
    tool_calls: list[ToolCall] = Field(default_factory=list)
    tool_call_id: str | None = None
    name: str | None = None
    finish_reason: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _accept_common_shapes(cls, data: Any) -> Any:
        return _normalise_message(data) if isinstance(data, Mapping) else data

    @computed_field  # type: ignore[prop-decorator]
    @property
    def text(self) -> str:
        """The message's visible text: its text and tool-result parts joined (reasoning left out)."""
        pieces = [
            p.text for p in self.content if p.text and p.type not in ("reasoning", "thinking")
        ]
        return "\n".join(pieces)


class SpanStatus(_ReadOnlyModel):
    """How a span ended: ``ok``, ``error`` (with the message), or ``unset`` when nobody said."""

    code: Literal["ok", "error", "unset"] = "unset"
    message: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _accept_common_shapes(cls, data: Any) -> Any:
        if isinstance(data, (str, int)) and not isinstance(data, bool):
            return {"code": _status_code(data)}
        if isinstance(data, Mapping):
            d = dict(data)
            if "status_code" in d:
                d["code"] = d.pop("status_code")
            if "description" in d:
                d["message"] = d.pop("description")
            if "code" in d:
                d["code"] = _status_code(d["code"])
            if d.get("message") == "":
                d["message"] = None
            return d
        return data


def _status_code(value: str | int) -> str:
    codes = {0: "unset", 1: "ok", 2: "error"}
    if isinstance(value, int):
        if value not in codes:
            raise ValueError(f"status code {value} is not 0 (unset), 1 (ok) or 2 (error)")
        return codes[value]
    text = value.strip().lower().removeprefix("status_code_").removeprefix("statuscode.")
    if text.isdigit():
        return _status_code(int(text))
    if text not in ("ok", "error", "unset"):
        raise ValueError(f"status {value!r} is not one of ok, error, unset")
    return text


class TokenUsage(_ReadOnlyModel):
    """Tokens a model call used, when the trace recorded them."""

    input_tokens: int | None = None
    output_tokens: int | None = None
    total_tokens: int | None = None

    @model_validator(mode="before")
    @classmethod
    def _fill_total(cls, data: Any) -> Any:
        if isinstance(data, Mapping) and data.get("total_tokens") is None:
            given = [data.get("input_tokens"), data.get("output_tokens")]
            if all(isinstance(n, int) for n in given):
                data = {**data, "total_tokens": sum(cast("list[int]", given))}
        return data


class SpanEvent(_ReadOnlyModel):
    """Something that happened during a span (an exception, a message event)."""

    name: str
    time: datetime | None = None
    attributes: dict[str, Any] = Field(default_factory=dict)

    @field_validator("time", mode="before")
    @classmethod
    def _aware_time(cls, value: Any) -> Any:
        return None if value is None else _parse_time(value)


class Span(_ReadOnlyModel):
    """One step of an agent run in canonical form, whatever format it was loaded from.

    ``tool_calls`` holds, on a TOOL span, the call it executed (arguments, result or error); on an
    LLM span, the calls the model requested, with results filled in from the matching tool span
    or tool message when the trace has them. ``attributes`` keeps every raw attribute.
    """

    trace_id: str
    span_id: str
    parent_id: str | None = None
    name: str
    kind: SpanKind = "UNKNOWN"
    start: datetime
    end: datetime
    status: SpanStatus = Field(default_factory=SpanStatus)
    attributes: dict[str, Any] = Field(default_factory=dict)
    events: list[SpanEvent] = Field(default_factory=list)
    input_messages: list[Message] = Field(default_factory=list)
    output_messages: list[Message] = Field(default_factory=list)
    tool_calls: list[ToolCall] = Field(default_factory=list)
    model: str | None = None
    usage: TokenUsage | None = None

    @model_validator(mode="before")
    @classmethod
    def _drop_computed(cls, data: Any) -> Any:
        if isinstance(data, Mapping) and "duration_ms" in data:  # present in our own dumps
            data = {k: v for k, v in data.items() if k != "duration_ms"}
        return data

    @field_validator("trace_id", "span_id", mode="before")
    @classmethod
    def _id_text(cls, value: Any) -> Any:
        if value is None or (isinstance(value, str) and not value.strip()):
            raise ValueError("is empty: every span needs a trace_id and a span_id")
        return str(value) if isinstance(value, int) else value

    @field_validator("parent_id", mode="before")
    @classmethod
    def _parent_text(cls, value: Any) -> Any:
        if value is None or value == "":
            return None
        return str(value) if isinstance(value, int) else value

    @field_validator("kind", mode="before")
    @classmethod
    def _kind(cls, value: Any) -> Any:
        return "UNKNOWN" if value is None else _normalise_kind(value)

    @field_validator("start", "end", mode="before")
    @classmethod
    def _aware(cls, value: Any) -> datetime:
        return _parse_time(value)

    @model_validator(mode="after")
    def _warn_time_backwards(self) -> Span:
        if self.end < self.start:
            warnings.warn(
                f"span {self.name!r} (id {self.span_id}) ends before it starts "
                f"({self.end.isoformat()} < {self.start.isoformat()}); its duration is negative",
                TraceWarning,
                stacklevel=2,
            )
        return self

    def __hash__(self) -> int:
        # ids identify a span (pydantic's frozen hash would choke on the attributes dict)
        return hash((self.trace_id, self.span_id))

    @property
    def duration(self) -> timedelta:
        """How long the span ran (negative if the trace recorded the end before the start)."""
        return self.end - self.start

    @computed_field  # type: ignore[prop-decorator]
    @property
    def duration_ms(self) -> float:
        """The duration in milliseconds."""
        return self.duration / timedelta(milliseconds=1)

    @property
    def is_error(self) -> bool:
        """True when the span ended in an error."""
        return self.status.code == "error"

    @property
    def input_text(self) -> str:
        """Text of the last input message that has any (usually the newest user turn)."""
        return _last_text(self.input_messages)

    @property
    def output_text(self) -> str:
        """Text of the last output message that has any."""
        return _last_text(self.output_messages)

    def summary(self, width: int = 60) -> str:
        """One line for people and judges: kind, name, status, time, model, tokens, in and out."""
        bits = [f"{self.kind} {self.name!r}", self.status.code, f"{self.duration_ms / 1000:.2f}s"]
        if self.model:
            bits.append(f"model={self.model}")
        if self.usage and self.usage.total_tokens is not None:
            bits.append(f"tokens={self.usage.input_tokens}/{self.usage.output_tokens}")
        line = " ".join(bits)
        shown_in, shown_out = _io_previews(self, width)
        if shown_in:
            line += f" | in: {shown_in}"
        if shown_out:
            line += f" | out: {shown_out}"
        if self.is_error and self.status.message and not shown_out.startswith("error:"):
            line += f" | error: {preview(self.status.message, width)}"
        return line


def _last_text(messages: Sequence[Message]) -> str:
    for message in reversed(messages):
        if message.text:
            return message.text
    return ""


def _call_preview(call: ToolCall) -> str:
    return f"{call.name}({_as_text(call.arguments) if call.arguments is not None else ''})"


def _io_previews(span: Span, width: int) -> tuple[str, str]:
    """Short input/output texts: message text, else tool arguments and results."""
    shown_in = span.input_text
    shown_out = span.output_text
    if span.kind == "TOOL" and span.tool_calls:
        call = span.tool_calls[0]
        shown_in = shown_in or _call_preview(call)
        shown_out = shown_out or (
            f"error: {call.error}" if call.error else _as_text(call.result) if call.result else ""
        )
    elif not shown_out and span.tool_calls:
        shown_out = "calls " + ", ".join(_call_preview(c) for c in span.tool_calls)
    return preview(shown_in, width), preview(shown_out, width)
