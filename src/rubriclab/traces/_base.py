"""What every trace module shares: the errors, span kinds, and text/JSON/time helpers."""

from __future__ import annotations

import json
import re
from datetime import datetime, timedelta, timezone
from typing import Any, Literal, get_args


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
SPAN_KINDS: tuple[str, ...] = get_args(SpanKind)

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
    # MLflow span types, Langfuse observation types, LangSmith run types
    "chat_model": "LLM",
    "parser": "CHAIN",
    "span": "CHAIN",
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
