"""Agent traces as one canonical model: ``Span`` and ``Trace``, and loaders for what agents emit.

Agents are traced in several dialects: OpenTelemetry OTLP JSON following the GenAI semantic
conventions (``gen_ai.*`` attributes, message events, ``gen_ai.input.messages``), OpenInference
(``llm.input_messages.*``, ``tool.*``, ``input.value``), and plain span dicts. A judge template
should not care which: every loader lands on the same ``Span``/``Trace``, so
``{{ input_trace.roots()[0].output_messages[-1].text }}`` reads the same run whatever emitted it.

The models are bound raw into user-written Jinja2 templates, so everything a template can reach
is read-only: plain fields, properties and pure methods. The few methods that build objects from
outside data or hand back objects with writing methods (a DataFrame) are marked
``jinja2.sandbox.unsafe`` so the sandbox refuses them; files are read only by the module-level
:func:`load_traces` and :func:`example_trace`, which templates never see.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
import warnings
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime, timedelta, timezone
from importlib import resources
from os import PathLike
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, NoReturn, cast

from jinja2.sandbox import unsafe
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    computed_field,
    field_validator,
    model_validator,
)

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "SPAN_KINDS",
    "ContentPart",
    "Message",
    "Span",
    "SpanEvent",
    "SpanStatus",
    "TokenUsage",
    "ToolCall",
    "Trace",
    "TraceError",
    "TraceWarning",
    "example_trace",
    "load_traces",
]


class TraceError(ValueError):
    """A trace could not be read or is not a tree; the message names the span and what to fix."""


class TraceWarning(UserWarning):
    """A trace was loaded, but part of it looks wrong (a missing parent, time running backwards)."""


SpanKind = Literal[
    "AGENT",
    "LLM",
    "TOOL",
    "CHAIN",
    "RETRIEVER",
    "EMBEDDING",
    "RERANKER",
    "GUARDRAIL",
    "EVALUATOR",
    "PROMPT",
    "UNKNOWN",
]
SPAN_KINDS: tuple[str, ...] = (
    "AGENT",
    "LLM",
    "TOOL",
    "CHAIN",
    "RETRIEVER",
    "EMBEDDING",
    "RERANKER",
    "GUARDRAIL",
    "EVALUATOR",
    "PROMPT",
    "UNKNOWN",
)

# Names other conventions give the same kinds (GenAI ``gen_ai.operation.name`` values included).
_KIND_ALIASES: dict[str, str] = {
    "chat": "LLM",
    "text_completion": "LLM",
    "generate_content": "LLM",
    "completion": "LLM",
    "generation": "LLM",
    "execute_tool": "TOOL",
    "function": "TOOL",
    "tool_call": "TOOL",
    "invoke_agent": "AGENT",
    "create_agent": "AGENT",
    "embeddings": "EMBEDDING",
    "retrieval": "RETRIEVER",
    "retrieve": "RETRIEVER",
    "rerank": "RERANKER",
    "workflow": "CHAIN",
    "task": "CHAIN",
}


def _normalise_kind(value: object) -> str:
    text = str(value).strip()
    if text.upper() in SPAN_KINDS:
        return text.upper()
    alias = _KIND_ALIASES.get(text.lower())
    if alias is None:
        raise ValueError(
            f"unknown span kind {text!r}: use one of {', '.join(SPAN_KINDS)} "
            f"(or a GenAI operation name such as 'chat', 'execute_tool', 'invoke_agent')"
        )
    return alias


# --------------------------------------------------------------------------------------------
# small value helpers


def _maybe_json(value: Any) -> Any:
    """Parse a string holding a JSON object or array; leave everything else as it is.

    Only objects and arrays are parsed, so a tool result like ``"2024"`` stays text.
    """
    if isinstance(value, str):
        stripped = value.strip()
        if stripped[:1] in ("{", "["):
            try:
                return json.loads(stripped)
            except ValueError:
                return value
    return value


def _as_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return str(value)


def _preview(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


_ISO_RE = re.compile(
    r"^(?P<date>\d{4}-\d{2}-\d{2})[T ](?P<time>\d{2}:\d{2}(?::\d{2})?)"
    r"(?:[.,](?P<frac>\d+))?(?P<tz>Z|z|[+-]\d{2}:?\d{2})?$"
)


def _parse_time(value: Any) -> datetime:
    """An aware datetime from a datetime or an ISO 8601 string with an offset.

    Naive times are refused rather than guessed: a trace mixing zones would silently reorder.
    """
    if isinstance(value, datetime):
        if value.tzinfo is None or value.utcoffset() is None:
            raise ValueError(
                "time has no timezone: give an aware datetime or an ISO string ending in Z or +HH:MM"
            )
        return value
    if not isinstance(value, str):
        raise ValueError(
            f"expected an ISO 8601 time such as '2025-06-12T09:30:00Z', got {value!r} "
            f"({type(value).__name__})"
        )
    match = _ISO_RE.match(value.strip())
    if match is None:
        raise ValueError(f"{value!r} is not an ISO 8601 time such as '2025-06-12T09:30:00Z'")
    if match["tz"] is None:
        raise ValueError(f"time {value!r} has no UTC offset: end it with Z or +HH:MM")
    frac = (match["frac"] or "")[:6].ljust(6, "0")
    tz = match["tz"].upper().replace("Z", "+00:00")
    if ":" not in tz:
        tz = tz[:3] + ":" + tz[3:]
    time = match["time"] if match["time"].count(":") == 2 else match["time"] + ":00"
    try:
        return datetime.fromisoformat(f"{match['date']}T{time}.{frac}{tz}")
    except ValueError as exc:
        raise ValueError(f"{value!r} is not a valid time: {exc}") from None


def _time_from_unix_nano(value: Any, field: str) -> datetime:
    if isinstance(value, bool) or value is None or value == "":
        raise ValueError(f"{field} is missing")
    try:
        nanos = int(value)
    except (TypeError, ValueError):
        raise ValueError(
            f"{field} {value!r} is not a whole number of nanoseconds since the Unix epoch"
        ) from None
    if nanos <= 0:
        raise ValueError(f"{field} {value!r} is not a time (0 means unset in OTLP)")
    try:
        seconds, rest = divmod(nanos, 1_000_000_000)
        return datetime.fromtimestamp(seconds, tz=timezone.utc) + timedelta(
            microseconds=rest // 1000
        )
    except (OverflowError, OSError, ValueError):
        raise ValueError(f"{field} {value!r} is out of range for a date") from None


# --------------------------------------------------------------------------------------------
# the canonical model


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
            line += f" | error: {_preview(self.status.message, width)}"
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
    return _preview(shown_in, width), _preview(shown_out, width)


# --------------------------------------------------------------------------------------------
# the tree


class Trace(_ReadOnlyModel):
    """One agent run: its spans and the tree they form.

    Building a Trace checks the tree: duplicate span ids and parent cycles are errors naming the
    spans; a parent that is not in the trace is a warning, and that span is treated as a root.
    """

    trace_id: str
    spans: list[Span]

    _by_id: dict[str, Span] = PrivateAttr(default_factory=dict)
    _children: dict[str | None, list[Span]] = PrivateAttr(default_factory=dict)
    _depth: dict[str, int] = PrivateAttr(default_factory=dict)
    _order: list[Span] = PrivateAttr(default_factory=list)
    _problem: str | None = PrivateAttr(default=None)

    def __init__(self, spans: Iterable[Span], trace_id: str | None = None) -> None:
        span_list = list(spans)
        if trace_id is None:
            if not span_list:
                raise TraceError("a trace needs at least one span")
            trace_id = span_list[0].trace_id
        fields: dict[str, Any] = {"trace_id": trace_id, "spans": span_list}
        super().__init__(**fields)
        if self._problem is not None:
            raise TraceError(self._problem)

    def model_post_init(self, context: Any, /) -> None:
        # pydantic would wrap a raise here in a ValidationError; record it for __init__ instead
        self._problem = self._index()

    def _index(self) -> str | None:
        by_id: dict[str, Span] = {}
        for span in self.spans:
            if span.trace_id != self.trace_id:
                return (
                    f"span {span.name!r} (id {span.span_id}) belongs to trace {span.trace_id}, "
                    f"not {self.trace_id}: load several traces with rubriclab.load_traces"
                )
            if span.span_id in by_id:
                first = by_id[span.span_id]
                return (
                    f"trace {self.trace_id}: span id {span.span_id} is used twice (spans "
                    f"{first.name!r} and {span.name!r}); span ids must be unique in a trace"
                )
            by_id[span.span_id] = span
        position = {span.span_id: i for i, span in enumerate(self.spans)}
        children: dict[str | None, list[Span]] = {}
        for span in self.spans:
            parent = span.parent_id if span.parent_id in by_id else None
            if span.parent_id is not None and parent is None:
                warnings.warn(
                    f"trace {self.trace_id}: span {span.name!r} (id {span.span_id}) names parent "
                    f"{span.parent_id}, which is not in the trace; treating it as a root",
                    TraceWarning,
                    stacklevel=4,
                )
            children.setdefault(parent, []).append(span)
        for kids in children.values():
            kids.sort(key=lambda s: (s.start, position[s.span_id]))
        order: list[Span] = []
        depth: dict[str, int] = {}
        stack = [(root, 0) for root in reversed(children.get(None, []))]
        while stack:
            span, level = stack.pop()
            order.append(span)
            depth[span.span_id] = level
            stack.extend((kid, level + 1) for kid in reversed(children.get(span.span_id, [])))
        if len(order) < len(self.spans):
            return _describe_cycle(self.trace_id, by_id, depth)
        self._by_id, self._children, self._depth, self._order = by_id, children, depth, order
        return None

    def _checked(self) -> None:
        if self._problem is not None:
            raise TraceError(self._problem)

    def _resolve(self, span: Span | str) -> Span:
        self._checked()
        span_id = span if isinstance(span, str) else span.span_id
        found = self._by_id.get(span_id)
        if found is None:
            raise TraceError(f"span {span_id} is not in trace {self.trace_id}")
        return found

    def __repr__(self) -> str:
        roots = ", ".join(repr(r.name) for r in self.roots()) if self._problem is None else "?"
        return f"Trace({self.trace_id!r}, {len(self.spans)} spans, roots=[{roots}])"

    def __str__(self) -> str:
        return self.tree()

    def get(self, span_id: str) -> Span | None:
        """The span with this id, or None."""
        self._checked()
        return self._by_id.get(span_id)

    def roots(self) -> list[Span]:
        """Spans without a parent in this trace, earliest first."""
        self._checked()
        return list(self._children.get(None, []))

    def children(self, span: Span | str) -> list[Span]:
        """A span's direct children (given the span or its id), earliest first."""
        return list(self._children.get(self._resolve(span).span_id, []))

    def parent(self, span: Span | str) -> Span | None:
        """A span's parent, or None for a root (including one whose parent is missing)."""
        found = self._resolve(span)
        return None if found.parent_id is None else self._by_id.get(found.parent_id)

    def depth(self, span: Span | str) -> int:
        """How deep a span sits: 0 for a root."""
        return self._depth[self._resolve(span).span_id]

    def walk(self) -> list[Span]:
        """Every span depth-first, siblings in start-time order (a parent before its children)."""
        self._checked()
        return list(self._order)

    def find(
        self, name: str | None = None, kind: str | None = None, status: str | None = None
    ) -> list[Span]:
        """Spans matching every filter given, in walk order (``kind`` accepts 'llm', 'chat', ...)."""
        wanted_kind = None if kind is None else _normalise_kind(kind)
        return [
            s
            for s in self.walk()
            if (name is None or s.name == name)
            and (wanted_kind is None or s.kind == wanted_kind)
            and (status is None or s.status.code == status.lower())
        ]

    def tool_calls(self) -> list[ToolCall]:
        """Every tool call in the run once, in walk order; executed calls (TOOL spans) win."""
        executed = {c.id: c for s in self.walk() if s.kind == "TOOL" for c in s.tool_calls if c.id}
        seen: set[str] = set()
        calls: list[ToolCall] = []
        for span in self.walk():
            for call in span.tool_calls:
                if call.id is None:
                    if span.kind == "TOOL":
                        calls.append(call)
                    continue
                if call.id not in seen:
                    seen.add(call.id)
                    calls.append(executed.get(call.id, call))
        return calls

    @property
    def start(self) -> datetime:
        """When the earliest span started."""
        return min(s.start for s in self.spans)

    @property
    def end(self) -> datetime:
        """When the last span ended."""
        return max(s.end for s in self.spans)

    @property
    def duration(self) -> timedelta:
        """Wall time from the first start to the last end."""
        return self.end - self.start

    @property
    def final_answer(self) -> str | None:
        """The run's answer: the root's last output text, else the last LLM span's (or None)."""
        for root in self.roots():
            if root.output_text:
                return root.output_text
        llm_spans = [s for s in self.walk() if s.kind == "LLM" and s.output_text]
        if not llm_spans:
            return None
        return max(enumerate(llm_spans), key=lambda pair: (pair[1].end, pair[0]))[1].output_text

    @property
    def errors(self) -> list[Span]:
        """Spans that ended in an error, in walk order."""
        return [s for s in self.walk() if s.is_error]

    def summary(self, width: int = 80) -> str:
        """One line about the run: spans, time, errors and the final answer."""
        answer = self.final_answer
        line = (
            f"trace {self.trace_id}: {len(self.spans)} spans, "
            f"{self.duration / timedelta(seconds=1):.2f}s, {len(self.errors)} error(s)"
        )
        return line + (f" | answer: {_preview(answer, width)}" if answer else "")

    def tree(self, width: int = 60) -> str:
        """The run as an indented outline, one ``Span.summary`` per line."""
        return "\n".join("  " * self.depth(s) + s.summary(width) for s in self.walk())

    @unsafe
    def to_dataframe(self) -> pd.DataFrame:
        """One row per span in walk order: ids, depth, name, kind, timing, status, model, tokens,
        and input/output previews. (Not callable from templates: a DataFrame can write files.)"""
        import pandas as pd

        rows = []
        for span in self.walk():
            shown_in, shown_out = _io_previews(span, 120)
            usage = span.usage or TokenUsage()
            rows.append(
                {
                    "trace_id": span.trace_id,
                    "span_id": span.span_id,
                    "parent_id": span.parent_id,
                    "depth": self.depth(span),
                    "name": span.name,
                    "kind": span.kind,
                    "start": span.start,
                    "duration_ms": span.duration_ms,
                    "status": span.status.code,
                    "status_message": span.status.message,
                    "model": span.model,
                    "input_tokens": usage.input_tokens,
                    "output_tokens": usage.output_tokens,
                    "total_tokens": usage.total_tokens,
                    "input_preview": shown_in,
                    "output_preview": shown_out,
                }
            )
        frame: pd.DataFrame = pd.DataFrame(rows)
        for column in ("input_tokens", "output_tokens", "total_tokens", "depth"):
            frame[column] = frame[column].astype("Int64")
        return frame

    @classmethod
    @unsafe
    def from_otlp(cls, export: Mapping[str, Any] | Sequence[Any] | str) -> Trace:
        """The trace in an OTLP JSON export (parsed, or as JSON text; files: ``load_traces``)."""
        return _single(_spans_from_otlp_payload(_parsed(export, "Trace.from_otlp")), "from_otlp")

    @classmethod
    @unsafe
    def from_openinference(cls, spans: Mapping[str, Any] | Sequence[Any] | str) -> Trace:
        """The trace in OpenInference span records (Phoenix-style JSON) or an OTLP export."""
        payload = _parsed(spans, "Trace.from_openinference")
        return _single(_spans_from_payload(payload, "auto"), "from_openinference")

    @classmethod
    @unsafe
    def from_spans(cls, spans: Iterable[Mapping[str, Any] | Span]) -> Trace:
        """A trace from spans in our canonical shape (dicts with Span's fields, or Spans)."""
        built = [
            s if isinstance(s, Span) else _span_from_canonical(s, i) for i, s in enumerate(spans)
        ]
        return _single(built, "from_spans")


def _describe_cycle(trace_id: str, by_id: Mapping[str, Span], reached: Mapping[str, int]) -> str:
    start = next(s for s in by_id.values() if s.span_id not in reached)
    path: list[Span] = []
    seen: dict[str, int] = {}
    current: Span | None = start
    while current is not None and current.span_id not in seen:
        seen[current.span_id] = len(path)
        path.append(current)
        current = by_id.get(current.parent_id) if current.parent_id else None
    loop = path[seen[current.span_id] :] if current is not None else path
    loop.append(loop[0])
    chain = " -> ".join(f"{s.name!r} (id {s.span_id})" for s in loop)
    return (
        f"trace {trace_id}: spans form a parent cycle, so the trace has no root: {chain} "
        f"(each arrow points to the parent); fix the parent id of one of them"
    )


# --------------------------------------------------------------------------------------------
# reading attribute conventions (GenAI semantic conventions and OpenInference)


def _first(attrs: Mapping[str, Any], *keys: str) -> Any:
    for key in keys:
        value = attrs.get(key)
        if value is not None and value != "":
            return value
    return None


def _int_or_none(value: Any) -> int | None:
    if value is None or isinstance(value, bool):
        return None
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def _indexed(flat: Mapping[str, Any], prefix: str) -> list[dict[str, Any]]:
    """Regroup flattened ``prefix.{i}.rest`` attributes into a list of ``{rest: value}``."""
    groups: dict[int, dict[str, Any]] = {}
    lead = prefix + "."
    for key, value in flat.items():
        if not key.startswith(lead):
            continue
        index, _, rest = key[len(lead) :].partition(".")
        if index.isdigit() and rest:
            groups.setdefault(int(index), {})[rest] = value
    return [groups[i] for i in sorted(groups)]


def _openinference_message(flat: Mapping[str, Any], default_role: str) -> dict[str, Any]:
    contents: list[dict[str, Any]] = []
    for c in _indexed(flat, "message.contents"):
        url = _first(c, "message_content.image.image.url", "message_content.image.url")
        contents.append(
            {
                "type": c.get("message_content.type", "image" if url else "text"),
                "text": c.get("message_content.text"),
                "url": url,
            }
        )
    if not contents and flat.get("message.content") is not None:
        contents = [{"type": "text", "text": _as_text(flat["message.content"])}]
    calls = [
        {
            "id": c.get("tool_call.id"),
            "name": c.get("tool_call.function.name"),
            "arguments": c.get("tool_call.function.arguments"),
        }
        for c in _indexed(flat, "message.tool_calls")
    ]
    if flat.get("message.function_call_name"):
        calls.append(
            {
                "name": flat["message.function_call_name"],
                "arguments": flat.get("message.function_call_arguments_json"),
            }
        )
    return {
        "role": flat.get("message.role") or default_role,
        "content": contents,
        "tool_calls": calls,
        "tool_call_id": flat.get("message.tool_call_id"),
        "name": flat.get("message.name"),
    }


def _legacy_genai_message(flat: Mapping[str, Any], default_role: str) -> dict[str, Any]:
    # the flattened ``gen_ai.prompt.{i}.*`` / ``gen_ai.completion.{i}.*`` form (OpenLLMetry)
    calls = [
        {"id": c.get("id"), "name": c.get("name"), "arguments": c.get("arguments")}
        for c in _indexed(flat, "tool_calls")
    ]
    return {
        "role": flat.get("role") or default_role,
        "content": _as_text(flat.get("content")) if flat.get("content") is not None else [],
        "tool_calls": calls,
        "tool_call_id": flat.get("tool_call_id"),
        "finish_reason": flat.get("finish_reason"),
    }


def _message_list(value: Any, default_role: str) -> list[dict[str, Any]]:
    """Messages from a GenAI JSON attribute (string or structured) or an already-built list."""
    value = _maybe_json(value)
    if isinstance(value, Mapping):
        value = [value]
    if not isinstance(value, Sequence) or isinstance(value, str):
        return [] if value in (None, "") else [{"role": default_role, "content": _as_text(value)}]
    out = []
    for item in value:
        if isinstance(item, Mapping):
            d = {k: item[k] for k in (*_MESSAGE_KEYS, "parts", "text", "id") if k in item}
            d.setdefault("role", default_role)
            out.append(d)
        elif item is not None:
            out.append({"role": default_role, "content": _as_text(item)})
    return out


_GENAI_EVENT_ROLES = {
    "gen_ai.system.message": "system",
    "gen_ai.user.message": "user",
    "gen_ai.assistant.message": "assistant",
    "gen_ai.tool.message": "tool",
}


def _event_body(event: SpanEvent) -> dict[str, Any]:
    """A GenAI event's body: from ``gen_ai.event.content`` JSON, else its plain attributes."""
    body = _maybe_json(event.attributes.get("gen_ai.event.content"))
    if isinstance(body, Mapping):
        return dict(body)
    return {k: _maybe_json(v) for k, v in event.attributes.items() if not k.startswith("gen_ai.")}


def _messages_from_events(events: Sequence[SpanEvent]) -> tuple[list[Any], list[Any]]:
    inputs: list[Any] = []
    outputs: list[Any] = []
    for event in events:
        if event.name in _GENAI_EVENT_ROLES:
            body = _event_body(event)
            body.setdefault("role", _GENAI_EVENT_ROLES[event.name])
            inputs.extend(_message_list(body, _GENAI_EVENT_ROLES[event.name]))
        elif event.name == "gen_ai.choice":
            body = _event_body(event)
            message = body.get("message")
            message = dict(message) if isinstance(message, Mapping) else {}
            message.setdefault("role", "assistant")
            if body.get("finish_reason") is not None:
                message.setdefault("finish_reason", str(body["finish_reason"]))
            outputs.extend(_message_list(message, "assistant"))
        elif event.name in ("gen_ai.client.inference.operation.details", "gen_ai.content.prompt"):
            attrs = event.attributes
            inputs.extend(
                _message_list(_first(attrs, "gen_ai.input.messages", "gen_ai.prompt"), "user")
            )
            outputs.extend(_message_list(attrs.get("gen_ai.output.messages"), "assistant"))
        elif event.name == "gen_ai.content.completion":
            outputs.extend(_message_list(event.attributes.get("gen_ai.completion"), "assistant"))
    return inputs, outputs


def _derive(attrs: Mapping[str, Any], events: Sequence[SpanEvent]) -> dict[str, Any]:
    """Canonical fields read from a span's attributes and events, whichever convention they use."""
    out: dict[str, Any] = {}
    kind_value = _first(attrs, "openinference.span.kind", "gen_ai.operation.name")
    kind: str | None = None
    if kind_value is not None:
        try:
            kind = _normalise_kind(kind_value)
        except ValueError:
            kind = None
    if kind is None and _first(attrs, "gen_ai.tool.name") is not None:
        kind = "TOOL"
    elif kind is None and _first(attrs, "gen_ai.request.model", "llm.model_name") is not None:
        kind = "LLM"
    if kind is not None:
        out["kind"] = kind

    model = _first(
        attrs,
        "gen_ai.response.model",
        "gen_ai.request.model",
        "llm.model_name",
        "llm.response.model_name",
        "llm.request.model_name",
        "embedding.model_name",
    )
    if model is not None:
        out["model"] = str(model)

    tokens_in = _int_or_none(
        _first(
            attrs,
            "gen_ai.usage.input_tokens",
            "gen_ai.usage.prompt_tokens",
            "llm.token_count.prompt",
        )
    )
    tokens_out = _int_or_none(
        _first(
            attrs,
            "gen_ai.usage.output_tokens",
            "gen_ai.usage.completion_tokens",
            "llm.token_count.completion",
        )
    )
    tokens_total = _int_or_none(_first(attrs, "gen_ai.usage.total_tokens", "llm.token_count.total"))
    if (tokens_in, tokens_out, tokens_total) != (None, None, None):
        out["usage"] = {
            "input_tokens": tokens_in,
            "output_tokens": tokens_out,
            "total_tokens": tokens_total,
        }

    inputs = _message_list(attrs.get("gen_ai.input.messages"), "user")
    outputs = _message_list(attrs.get("gen_ai.output.messages"), "assistant")
    if not inputs:
        inputs = [_openinference_message(m, "user") for m in _indexed(attrs, "llm.input_messages")]
    if not outputs:
        outputs = [
            _openinference_message(m, "assistant") for m in _indexed(attrs, "llm.output_messages")
        ]
    if not inputs and not outputs:
        inputs, outputs = _messages_from_events(events)
    if not inputs:
        inputs = [_legacy_genai_message(m, "user") for m in _indexed(attrs, "gen_ai.prompt")]
    if not outputs:
        outputs = [
            _legacy_genai_message(m, "assistant") for m in _indexed(attrs, "gen_ai.completion")
        ]
    system = attrs.get("gen_ai.system_instructions")
    if system is not None:
        system = _maybe_json(system)
        inputs.insert(
            0,
            {"role": "system", "content": system if isinstance(system, list) else _as_text(system)},
        )

    if kind == "TOOL":
        call = {
            "id": _first(attrs, "gen_ai.tool.call.id", "tool.id", "tool_call.id"),
            "name": _first(attrs, "gen_ai.tool.name", "tool.name") or "",
            "arguments": _first(attrs, "gen_ai.tool.call.arguments", "input.value"),
            "result": _first(attrs, "gen_ai.tool.call.result", "output.value"),
        }
        out["tool_calls"] = [call]
    else:
        # OpenInference agent/chain spans carry their input and answer as plain values
        if not inputs and attrs.get("input.value") is not None:
            inputs = [{"role": "user", "content": _as_text(attrs["input.value"])}]
        if not outputs and attrs.get("output.value") is not None:
            outputs = [{"role": "assistant", "content": _as_text(attrs["output.value"])}]
    if inputs:
        out["input_messages"] = inputs
    if outputs:
        out["output_messages"] = outputs
    return out


def _code_or_none(code: Any) -> str | None:
    try:
        return _status_code(code) if isinstance(code, (str, int)) else None
    except ValueError:
        return None  # left for SpanStatus to report with the span's name


def _error_message(
    status: dict[str, Any], attrs: Mapping[str, Any], events: Sequence[SpanEvent]
) -> dict[str, Any]:
    """Fill in an error status's message from exception events or ``error.type``.

    A span with ``error.type`` but no status is an error too: the GenAI conventions set one
    without the other in some instrumentations.
    """
    code = _code_or_none(status.get("code"))
    if (
        code in (None, "unset")
        and status.get("code") in (None, "", 0, "unset", "UNSET")
        and attrs.get("error.type")
    ):
        status = {**status, "code": "error"}
        code = "error"
    if code == "error" and not status.get("message"):
        for event in events:
            if event.name == "exception":
                kind = event.attributes.get("exception.type")
                text = event.attributes.get("exception.message")
                message = ": ".join(str(x) for x in (kind, text) if x)
                if message:
                    return {**status, "message": message}
        if attrs.get("error.type"):
            return {**status, "message": str(attrs["error.type"])}
    return status


def _build_span(fields: dict[str, Any], where: str) -> Span:
    """Validate one span, turning pydantic's report into a TraceError that names the span."""
    try:
        span = Span.model_validate(fields)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or 'span'}: {err['msg']}"
            for err in exc.errors()
        )
        raise TraceError(f"{where}: {problems}") from None
    if span.kind == "TOOL" and span.is_error and span.tool_calls:
        calls = [
            c.model_copy(update={"error": c.error or span.status.message or "error"})
            for c in span.tool_calls
        ]
        span = span.model_copy(update={"tool_calls": calls})
    elif span.kind != "TOOL" and not span.tool_calls:
        requested = [c for m in span.output_messages for c in m.tool_calls]
        if requested:
            span = span.model_copy(update={"tool_calls": requested})
    return span


def _span_label(name: Any, span_id: Any, index: int) -> str:
    if name is None and span_id is None:
        return f"span #{index}"
    return f"span {name!r} (id {span_id})" if span_id is not None else f"span {name!r} (#{index})"


def _from_fields(
    base: dict[str, Any],
    attrs: dict[str, Any],
    events: list[SpanEvent],
    where: str,
    explicit: Mapping[str, Any] | None = None,
) -> Span:
    derived = _derive(attrs, events)
    fields = {**base, **derived, "attributes": attrs, "events": events}
    if explicit:
        fields.update({k: v for k, v in explicit.items() if v is not None})
    if "kind" in base and base["kind"] is not None:
        fields["kind"] = base["kind"]
    status: Any = fields.get("status")
    if isinstance(status, SpanStatus):
        status = status.model_dump()
    elif isinstance(status, Mapping):
        status = dict(status)
    else:
        status = {} if status is None else {"code": status}
    fields["status"] = _error_message(status, attrs, events)
    return _build_span(fields, where)


# --------------------------------------------------------------------------------------------
# OTLP JSON


def _get(obj: Mapping[str, Any], *keys: str) -> Any:
    for key in keys:
        if key in obj:
            return obj[key]
    return None


def _any_value(value: Any) -> Any:
    """Decode an OTLP ``AnyValue`` (camelCase or snake_case keys) into a plain Python value."""
    if not isinstance(value, Mapping):
        return value
    for key in ("stringValue", "string_value"):
        if key in value:
            return value[key]
    for key in ("boolValue", "bool_value"):
        if key in value:
            return bool(value[key])
    for key in ("intValue", "int_value"):
        if key in value:
            return int(value[key])
    for key in ("doubleValue", "double_value"):
        if key in value:
            return float(value[key])
    for key in ("arrayValue", "array_value"):
        if key in value:
            return [_any_value(v) for v in (value[key] or {}).get("values", [])]
    for key in ("kvlistValue", "kvlist_value"):
        if key in value:
            return _otlp_attributes((value[key] or {}).get("values", []))
    for key in ("bytesValue", "bytes_value"):
        if key in value:
            return value[key]
    return None


def _otlp_attributes(raw: Any) -> dict[str, Any]:
    if raw is None:
        return {}
    if isinstance(raw, Mapping):
        return dict(raw)
    return {
        str(kv.get("key")): _any_value(kv.get("value")) for kv in raw if isinstance(kv, Mapping)
    }


_HEX = re.compile(r"^[0-9a-fA-F]+$")


def _otlp_id(value: Any, size: int, field: str) -> str | None:
    """OTLP ids as lowercase hex: the OTLP/JSON hex form, or protobuf-JSON base64 bytes."""
    if value is None or value == "":
        return None
    text = str(value).strip().removeprefix("0x")
    if len(text) == size * 2 and _HEX.match(text):
        hex_id = text.lower()
    else:
        try:
            raw = base64.b64decode(text, validate=True)
        except (binascii.Error, ValueError):
            raw = b""
        if len(raw) != size:
            raise ValueError(
                f"{field} {value!r} is neither {size * 2} hex digits nor base64 of {size} bytes"
            )
        hex_id = raw.hex()
    return None if set(hex_id) == {"0"} else hex_id


def _event_time(raw: Mapping[str, Any]) -> datetime | None:
    value = _get(raw, "timeUnixNano", "time_unix_nano")
    if value in (None, "", 0, "0"):
        return None
    return _time_from_unix_nano(value, "events.timeUnixNano")


def _span_from_otlp(raw: Mapping[str, Any], index: int) -> Span:
    name = raw.get("name")
    where = _span_label(name, _get(raw, "spanId", "span_id"), index)
    try:
        trace_id = _otlp_id(_get(raw, "traceId", "trace_id"), 16, "traceId")
        span_id = _otlp_id(_get(raw, "spanId", "span_id"), 8, "spanId")
        parent_id = _otlp_id(_get(raw, "parentSpanId", "parent_span_id"), 8, "parentSpanId")
        start_raw = _get(raw, "startTimeUnixNano", "start_time_unix_nano")
        start = _time_from_unix_nano(start_raw, "startTimeUnixNano")
        end_raw = _get(raw, "endTimeUnixNano", "end_time_unix_nano")
        end = _time_from_unix_nano(end_raw, "endTimeUnixNano")
        attrs = _otlp_attributes(raw.get("attributes"))
        events = [
            SpanEvent(
                name=str(e.get("name", "")),
                time=_event_time(e),
                attributes=_otlp_attributes(e.get("attributes")),
            )
            for e in raw.get("events") or []
        ]
    except ValueError as exc:  # ValidationError is a ValueError too
        raise TraceError(f"{where}: {exc}") from None
    if trace_id is None or span_id is None:
        raise TraceError(f"{where}: traceId and spanId are required")
    status = raw.get("status") or {}
    base = {
        "trace_id": trace_id,
        "span_id": span_id,
        "parent_id": parent_id,
        "name": name if name is not None else "",
        "start": start,
        "end": end,
        "status": {"code": status.get("code", 0), "message": status.get("message")},
    }
    return _from_fields(base, attrs, events, _span_label(name, span_id, index))


def _spans_from_otlp_payload(payload: Any) -> list[Span]:
    exports = payload if isinstance(payload, list) else [payload]
    spans: list[Span] = []
    for export in exports:
        if (
            not isinstance(export, Mapping)
            or _get(export, "resourceSpans", "resource_spans") is None
        ):
            raise TraceError(
                "not an OTLP JSON export: expected an object with 'resourceSpans' "
                "(resourceSpans -> scopeSpans -> spans)"
            )
        for resource_spans in _get(export, "resourceSpans", "resource_spans") or []:
            scopes = _get(
                resource_spans, "scopeSpans", "scope_spans", "instrumentationLibrarySpans"
            )
            for scope_spans in scopes or []:
                for raw in scope_spans.get("spans") or []:
                    spans.append(_span_from_otlp(raw, len(spans)))
    return spans


# --------------------------------------------------------------------------------------------
# span records: OpenInference / Phoenix JSON and OpenTelemetry-Python console JSON


def _flatten(attrs: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """Flatten nested attribute dicts (Phoenix exports nest them) into dotted keys.

    Lists of objects are indexed (``llm.input_messages.0.message.role``), except structured GenAI
    values such as ``gen_ai.input.messages``, which are one attribute each.
    """
    flat: dict[str, Any] = {}
    for key, value in attrs.items():
        path = f"{prefix}{key}"
        if isinstance(value, Mapping) and not path.startswith("gen_ai."):
            flat.update(_flatten(value, path + "."))
        elif (
            isinstance(value, list)
            and value
            and all(isinstance(v, Mapping) for v in value)
            and not path.startswith("gen_ai.")
        ):
            for i, item in enumerate(value):
                flat.update(_flatten(item, f"{path}.{i}."))
        else:
            flat[path] = value
    return flat


def _span_from_record(raw: Mapping[str, Any], index: int) -> Span:
    context: Mapping[str, Any] = raw["context"] if isinstance(raw.get("context"), Mapping) else {}
    name = raw.get("name")
    span_id_raw = _get(context, "span_id", "spanId") or raw.get("span_id")
    where = _span_label(name, span_id_raw, index)
    trace_id = _get(context, "trace_id", "traceId") or raw.get("trace_id")
    status_raw = raw.get("status")
    if isinstance(status_raw, Mapping):
        status = {
            "code": _get(status_raw, "status_code", "code") or "unset",
            "message": _get(status_raw, "description", "message"),
        }
    else:
        status = {
            "code": raw.get("status_code") or status_raw or "unset",
            "message": raw.get("status_message"),
        }
    events: list[SpanEvent] = []
    for i, e in enumerate(raw.get("events") or []):
        try:
            events.append(
                SpanEvent(
                    name=str(e.get("name", "")),
                    time=_get(e, "timestamp", "time"),
                    attributes=_flatten(e.get("attributes") or {}),
                )
            )
        except ValidationError as exc:
            raise TraceError(f"{where}: events.{i}.timestamp: {exc.errors()[0]['msg']}") from None
    base = {
        "trace_id": _strip_0x(trace_id),
        "span_id": _strip_0x(span_id_raw),
        "parent_id": _strip_0x(raw.get("parent_id")),
        "name": name if name is not None else "",
        "kind": raw.get("span_kind"),
        "start": raw.get("start_time"),
        "end": raw.get("end_time"),
        "status": status,
    }
    return _from_fields(base, _flatten(raw.get("attributes") or {}), events, where)


def _strip_0x(value: Any) -> Any:
    if isinstance(value, str) and value.startswith("0x"):
        return value[2:]
    return value


# --------------------------------------------------------------------------------------------
# canonical span dicts


_SPAN_FIELDS = set(Span.model_fields) | {"duration_ms"}


def _span_from_canonical(raw: Mapping[str, Any], index: int) -> Span:
    if not isinstance(raw, Mapping):
        raise TraceError(
            f"span #{index}: expected a dict with Span fields, got {type(raw).__name__}"
        )
    where = _span_label(raw.get("name"), raw.get("span_id"), index)
    unknown = sorted(set(raw) - _SPAN_FIELDS)
    if unknown:
        raise TraceError(
            f"{where}: unknown field(s) {', '.join(map(repr, unknown))}; "
            f"a span has {', '.join(sorted(Span.model_fields))}"
        )
    attrs = dict(raw.get("attributes") or {})
    try:
        events = [
            e if isinstance(e, SpanEvent) else SpanEvent.model_validate(e)
            for e in raw.get("events") or []
        ]
    except ValidationError as exc:
        raise TraceError(f"{where}: events: {exc.errors()[0]['msg']}") from None
    explicit = {k: v for k, v in raw.items() if k not in ("attributes", "events", "duration_ms")}
    base: dict[str, Any] = {
        k: explicit[k]
        for k in ("trace_id", "span_id", "parent_id", "name", "start", "end")
        if k in explicit
    }
    return _from_fields(base, attrs, events, where, explicit=explicit)


# --------------------------------------------------------------------------------------------
# format detection, grouping, public loaders

TraceFormat = Literal["auto", "otlp", "openinference", "spans"]
_FORMATS = ("auto", "otlp", "openinference", "spans")


def _record_kind(item: Any) -> str:
    if isinstance(item, Span):
        return "span"
    if not isinstance(item, Mapping):
        return "unknown"
    if _get(item, "resourceSpans", "resource_spans") is not None:
        return "otlp"
    if isinstance(item.get("spans"), list):
        return "trace"
    if "spanId" in item or "startTimeUnixNano" in item:
        return "otlp_span"
    if "context" in item or "start_time" in item:
        return "record"
    if "span_id" in item and "start" in item:
        return "canonical"
    return "unknown"


def _spans_from_payload(payload: Any, fmt: str) -> list[Span]:
    items = payload if isinstance(payload, list) else [payload]
    spans: list[Span] = []
    for item in items:
        kind = _record_kind(item)
        if fmt == "otlp" and kind not in ("otlp", "otlp_span"):
            raise TraceError(
                f"item #{len(spans)} is not OTLP JSON (expected 'resourceSpans' or OTLP spans); "
                f"pass format='auto' to detect the format"
            )
        if fmt == "spans" and kind not in ("canonical", "span", "trace"):
            raise TraceError(
                f"item #{len(spans)} is not a canonical span (expected trace_id, span_id, name, "
                f"start, end); pass format='auto' to detect the format"
            )
        if kind == "otlp":
            spans.extend(_spans_from_otlp_payload(item))
        elif kind == "trace":
            spans.extend(_spans_from_payload(item["spans"], fmt))
        elif kind == "otlp_span":
            spans.append(_span_from_otlp(item, len(spans)))
        elif kind == "record":
            spans.append(_span_from_record(item, len(spans)))
        elif kind == "canonical":
            spans.append(_span_from_canonical(item, len(spans)))
        elif kind == "span":
            spans.append(item)
        else:
            keys = sorted(item)[:8] if isinstance(item, Mapping) else type(item).__name__
            raise TraceError(
                f"item #{len(spans)} is not a span or trace export (got {keys}); expected an OTLP "
                f"export (resourceSpans), OpenInference span records (context, start_time) or "
                f"canonical spans (trace_id, span_id, name, start, end)"
            )
    return spans


def _link_tool_calls(spans: list[Span]) -> list[Span]:
    """Share what one span knows about a tool call with the others that mention the same id.

    LLM spans learn results from TOOL spans or from later tool messages; TOOL spans learn
    arguments from the LLM request (GenAI execute_tool spans record them only on opt-in).
    """
    results: dict[str, ToolCall] = {}
    requests: dict[str, ToolCall] = {}
    messages: dict[str, str] = {}
    for span in spans:
        for call in span.tool_calls:
            if call.id:
                (results if span.kind == "TOOL" else requests).setdefault(call.id, call)
        for message in span.input_messages:
            if message.role == "tool" and message.tool_call_id:
                messages.setdefault(message.tool_call_id, message.text)
    linked = []
    for span in spans:
        calls = []
        for call in span.tool_calls:
            update: dict[str, Any] = {}
            if call.id and span.kind == "TOOL" and call.arguments is None and call.id in requests:
                update["arguments"] = requests[call.id].arguments
            if call.id and span.kind != "TOOL" and call.result is None and call.error is None:
                executed = results.get(call.id)
                if executed is not None and (executed.result is not None or executed.error):
                    update.update(result=executed.result, error=executed.error)
                elif call.id in messages:
                    update["result"] = _maybe_json(messages[call.id])
            calls.append(call.model_copy(update=update) if update else call)
        changed = any(a is not b for a, b in zip(calls, span.tool_calls, strict=True))
        linked.append(span.model_copy(update={"tool_calls": calls}) if changed else span)
    return linked


def _group(spans: list[Span]) -> list[Trace]:
    by_trace: dict[str, list[Span]] = {}
    for span in spans:
        by_trace.setdefault(span.trace_id, []).append(span)
    return [Trace(_link_tool_calls(group), trace_id=tid) for tid, group in by_trace.items()]


def _single(spans: list[Span], method: str) -> Trace:
    traces = _group(spans)
    if not traces:
        raise TraceError(f"Trace.{method}: no spans found")
    if len(traces) > 1:
        ids = ", ".join(t.trace_id for t in traces[:5])
        raise TraceError(
            f"Trace.{method}: the input holds {len(traces)} traces ({ids}); "
            f"use rubriclab.load_traces to get them all"
        )
    return traces[0]


def _parsed(value: Any, method: str) -> Any:
    if isinstance(value, (bytes, bytearray)):
        value = value.decode("utf-8")
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError as exc:
            raise TraceError(
                f"{method} takes parsed JSON or JSON text, and this is not JSON ({exc}); "
                f"to read a file use rubriclab.load_traces(path)"
            ) from None
    return value


def _read_json_file(path: Path) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise TraceError(f"no trace file at {path}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise TraceError(f"could not read trace file {path}: {exc}") from None
    if path.suffix.lower() != ".jsonl":
        try:
            return json.loads(text)
        except ValueError as exc:
            if "Extra data" not in str(exc):
                raise TraceError(f"{path} is not valid JSON: {exc}") from None
    items: list[Any] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if line.strip():
            try:
                items.append(json.loads(line))
            except ValueError as exc:
                raise TraceError(f"{path}, line {number}: not valid JSON: {exc}") from None
    return items


def load_traces(
    source: str | PathLike[str] | Mapping[str, Any] | Sequence[Any] | Trace,
    format: TraceFormat = "auto",
) -> list[Trace]:
    """Read every trace in a file (JSON or JSONL) or an already-parsed export, split by trace id.

    ``format`` is ``"auto"`` (detected per record), ``"otlp"`` (OTLP JSON: resourceSpans),
    ``"openinference"`` (span records such as Phoenix exports, or OTLP carrying OpenInference
    attributes) or ``"spans"`` (dicts in our canonical Span shape). Attribute conventions (GenAI
    or OpenInference) are read from each span whatever the envelope.
    """
    if format not in _FORMATS:
        raise TraceError(f"format {format!r} is not one of {', '.join(_FORMATS)}")
    if isinstance(source, Trace):
        return [source]
    if isinstance(source, Sequence) and source and all(isinstance(t, Trace) for t in source):
        return list(cast("Sequence[Trace]", source))
    payload: Any
    if isinstance(source, PathLike):
        payload = _read_json_file(Path(source))
    elif isinstance(source, str):
        stripped = source.lstrip()
        if stripped[:1] in ("{", "["):
            payload = _parsed(source, "load_traces")
        else:
            payload = _read_json_file(Path(source))
    else:
        payload = list(source) if isinstance(source, Sequence) else source
    fmt = "auto" if format == "openinference" else format
    spans = _spans_from_payload(payload, fmt)
    if not spans:
        raise TraceError("no spans found in the trace source")
    return _group(spans)


def example_trace() -> Trace:
    """A small multi-step agent run (OTLP JSON, GenAI conventions) for notebooks and docs."""
    data = (
        resources.files("rubriclab.examples").joinpath("agent_trace_otlp.json").read_text("utf-8")
    )
    return Trace.from_otlp(json.loads(data))
