"""Finding the spans in whatever was passed, grouping them into traces, reading files."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from importlib import resources
from os import PathLike
from pathlib import Path
from typing import Any, Literal, cast

from ._base import TraceError, _maybe_json
from ._formats import (
    _get,
    _span_from_canonical,
    _span_from_otlp,
    _span_from_record,
    _spans_from_otlp_payload,
)
from ._model import Span, ToolCall
from ._tree import Trace

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
