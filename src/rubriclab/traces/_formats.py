"""Span envelopes: OTLP JSON, span records (Phoenix / OTel-Python JSON), canonical dicts.

Each reader turns one raw span into a validated ``Span``; errors name the span and field.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from pydantic import ValidationError

from ._base import TraceError, _maybe_json, _time_from_unix_nano
from ._conventions import _derive, _error_message, _json_value
from ._model import Span, SpanEvent, SpanStatus
from ._sources import otlp_protobuf


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
    if span.kind == "TOOL" and span.tool_calls and not span.tool_calls[0].name:
        # MLflow and Langfuse name the tool only by the span's name
        named = span.tool_calls[0].model_copy(update={"name": span.name})
        span = span.model_copy(update={"tool_calls": [named, *span.tool_calls[1:]]})
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
    derived = _derive(attrs, events, base.get("kind"))
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


def otlp_span_key(raw: Mapping[str, Any]) -> tuple[str | None, str | None]:
    """The (trace id, span id) of one raw OTLP JSON span, as lowercase hex (either key style,
    hex or protobuf-JSON base64): how a span in a file is matched to the span loaded from it."""
    try:
        return (
            _otlp_id(_get(raw, "traceId", "trace_id"), 16, "traceId"),
            _otlp_id(_get(raw, "spanId", "span_id"), 8, "spanId"),
        )
    except ValueError:
        return None, None


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
        raise TraceError(f"{where}: traceId and spanId are required (missing, empty or all zeros)")
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
        "start": _record_time(raw.get("start_time"), "start_time", where),
        "end": _record_time(raw.get("end_time"), "end_time", where),
        "status": status,
    }
    return _from_fields(base, _flatten(raw.get("attributes") or {}), events, where)


def _record_time(value: Any, field: str, where: str) -> Any:
    """ISO text as it is; whole nanoseconds since the epoch (MLflow 2's span dicts) as a time."""
    if isinstance(value, int) and not isinstance(value, bool):
        try:
            return _time_from_unix_nano(value, field)
        except ValueError as exc:
            raise TraceError(f"{where}: {exc}") from None
    return value


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


def _record_kind(item: Any) -> str:
    if isinstance(item, Span):
        return "span"
    if not isinstance(item, Mapping):
        return "unknown"
    if _get(item, "resourceSpans", "resource_spans") is not None:
        return "otlp"
    if isinstance(item.get("spans"), list):
        return "trace"
    data = item.get("data")
    if isinstance(data, Mapping) and isinstance(data.get("spans"), list):
        return "mlflow"  # an MLflow trace's JSON (trace.to_json()): info and data.spans
    if "trace_id" in item and isinstance(item.get("trace"), (str, Mapping)):
        return "mlflow_row"  # a row of mlflow.search_traces(): the trace's JSON in 'trace'
    if "spanId" in item or "startTimeUnixNano" in item or "start_time_unix_nano" in item:
        return "otlp_span"
    if "context" in item or "start_time" in item:
        return "record"
    if "span_id" in item and "start" in item:
        return "canonical"
    return "unknown"


# --------------------------------------------------------------------------------------------
# OTLP log records: the GenAI instrumentations' message events, joined to spans by span id


def _is_log_export(item: Any) -> bool:
    return isinstance(item, Mapping) and _get(item, "resourceLogs", "resource_logs") is not None


def _log_events(export: Mapping[str, Any]) -> dict[tuple[str, str], list[SpanEvent]]:
    """Each log record that names a span, as an event of that span (its body as the event's
    ``gen_ai.event.content``, which is where the GenAI conventions' readers look)."""
    found: dict[tuple[str, str], list[SpanEvent]] = {}
    for resource_logs in _get(export, "resourceLogs", "resource_logs") or []:
        for scope_logs in _get(resource_logs, "scopeLogs", "scope_logs") or []:
            for number, record in enumerate(_get(scope_logs, "logRecords", "log_records") or []):
                where = f"log record #{number}"
                try:
                    trace_id = _otlp_id(_get(record, "traceId", "trace_id"), 16, "traceId")
                    span_id = _otlp_id(_get(record, "spanId", "span_id"), 8, "spanId")
                    attrs = _otlp_attributes(record.get("attributes"))
                    body = _any_value(record.get("body"))
                    raw_time = _get(record, "timeUnixNano", "time_unix_nano") or _get(
                        record, "observedTimeUnixNano", "observed_time_unix_nano"
                    )
                    time = _event_time({"timeUnixNano": raw_time})
                except ValueError as exc:
                    raise TraceError(f"{where}: {exc}") from None
                if trace_id is None or span_id is None:
                    continue  # a log that belongs to no span: nothing to join it to
                name = _get(record, "eventName", "event_name") or attrs.get("event.name") or ""
                if isinstance(body, Mapping):
                    attrs["gen_ai.event.content"] = json.dumps(body, default=str)
                elif body is not None:
                    attrs.setdefault("body", body)
                found.setdefault((trace_id, span_id), []).append(
                    SpanEvent(name=str(name), time=time, attributes=attrs)
                )
    return found


def _with_log_events(span: Span, extra: list[SpanEvent], where: str) -> Span:
    """The span again with its log records as events, and what they say read into it."""
    events = sorted([*span.events, *extra], key=lambda e: (e.time is None, e.time))
    derived = _derive(span.attributes, events, span.kind)
    fields = span.model_dump(exclude={"duration_ms"})
    fields["events"] = events
    for key in ("input_messages", "output_messages"):
        if not fields[key] and derived.get(key):
            fields[key] = derived[key]
    if span.kind != "TOOL":
        fields["tool_calls"] = []  # read again from the output messages the logs gave
    return _build_span(fields, where)


def spans_and_logs(payload: Any, fmt: str) -> list[Span]:
    """The spans in a payload, with any OTLP log records in it joined to them by span id."""
    items = payload if isinstance(payload, list) else [payload]
    logs = [item for item in items if _is_log_export(item)]
    spans = _spans_from_payload([item for item in items if not _is_log_export(item)], fmt)
    if not logs:
        return spans
    events: dict[tuple[str, str], list[SpanEvent]] = {}
    for export in logs:
        for key, found in _log_events(export).items():
            events.setdefault(key, []).extend(found)
    return [
        _with_log_events(s, events[(s.trace_id, s.span_id)], _span_label(s.name, s.span_id, i))
        if (s.trace_id, s.span_id) in events
        else s
        for i, s in enumerate(spans)
    ]


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
        if fmt == "spans" and kind not in ("canonical", "span", "trace", "mlflow", "mlflow_row"):
            raise TraceError(
                f"item #{len(spans)} is not a canonical span (expected trace_id, span_id, name, "
                f"start, end); pass format='auto' to detect the format"
            )
        if kind == "otlp":
            spans.extend(_spans_from_otlp_payload(item))
        elif kind == "trace":
            spans.extend(_spans_from_payload(item["spans"], fmt))
        elif kind == "mlflow":
            spans.extend(_spans_from_payload(item["data"]["spans"], fmt))
        elif kind == "mlflow_row":
            spans.extend(_spans_from_payload(_parsed(item["trace"], "load_traces"), fmt))
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


def _same_arguments(a: Any, b: Any) -> bool:
    return a is not None and b is not None and _maybe_json(a) == _maybe_json(b)


def _match_tool_spans(
    spans: list[Span],
) -> dict[tuple[int, int], tuple[int, int]]:
    """Which requested call each TOOL span executed: {(tool span, 0): (llm span, call index)}.

    By call id first; a tool span without a matching id (OpenInference records none) takes the
    earliest unclaimed request of the same name with equal arguments, else the earliest
    unclaimed request of the same name that started before it. Each request is claimed once.
    """
    requests = [
        (i, j, call)
        for i, span in enumerate(spans)
        if span.kind != "TOOL"
        for j, call in enumerate(span.tool_calls)
    ]
    by_id = {call.id: (i, j) for i, j, call in requests if call.id}
    claimed: set[tuple[int, int]] = set()
    matches: dict[tuple[int, int], tuple[int, int]] = {}
    tools = sorted(
        ((i, span) for i, span in enumerate(spans) if span.kind == "TOOL" and span.tool_calls),
        key=lambda pair: (pair[1].start, pair[0]),
    )
    pending = []
    for i, span in tools:
        call = span.tool_calls[0]
        if call.id and call.id in by_id and by_id[call.id] not in claimed:
            matches[(i, 0)] = by_id[call.id]
            claimed.add(by_id[call.id])
        else:
            pending.append((i, span, call))
    for exact in (True, False):
        still = []
        for i, span, call in pending:
            found = next(
                (
                    (ri, rj)
                    for ri, rj, asked in requests
                    if (ri, rj) not in claimed
                    and asked.name == call.name
                    and spans[ri].start <= span.start
                    and (_same_arguments(asked.arguments, call.arguments) or not exact)
                    and not (call.id and asked.id and call.id != asked.id)
                ),
                None,
            )
            if found is None:
                still.append((i, span, call))
            else:
                matches[(i, 0)] = found
                claimed.add(found)
        pending = still
    return matches


def _link_tool_calls(spans: list[Span]) -> list[Span]:
    """Share what one span knows about a tool call with the others that describe the same call.

    TOOL spans are matched to the calls the model requested (``_match_tool_spans``); a matched
    pair learns each other's id, arguments, result and error. Results also come from later
    tool messages (by tool call id) when no tool span holds one; a tool message's content is
    what the agent serialized for the model, so JSON in it is decoded (5 is the number 5).
    """
    matches = _match_tool_spans(spans)
    messages: dict[str, Any] = {}
    for span in spans:
        for message in span.input_messages:
            if message.role == "tool" and message.tool_call_id:
                messages.setdefault(message.tool_call_id, message.text)
    updates: dict[tuple[int, int], dict[str, Any]] = {}
    for (ti, tj), (ri, rj) in matches.items():
        executed, asked = spans[ti].tool_calls[tj], spans[ri].tool_calls[rj]
        tool_update: dict[str, Any] = {}
        if executed.id is None and asked.id is not None:
            tool_update["id"] = asked.id
        if executed.arguments is None and asked.arguments is not None:
            tool_update["arguments"] = asked.arguments
        call_id = executed.id or asked.id
        if executed.result is None and executed.error is None:
            if asked.result is not None or asked.error:
                tool_update.update(result=asked.result, error=asked.error)
            elif call_id in messages:
                tool_update["result"] = _json_value(messages[call_id])
        if tool_update:
            updates[(ti, tj)] = tool_update
        merged_result = tool_update.get("result", executed.result)
        merged_error = tool_update.get("error", executed.error)
        if (
            asked.result is None
            and asked.error is None
            and (merged_result is not None or merged_error)
        ):
            updates[(ri, rj)] = {"result": merged_result, "error": merged_error}
    for i, span in enumerate(spans):
        for j, call in enumerate(span.tool_calls):
            if (i, j) in updates or call.result is not None or call.error is not None:
                continue
            if call.id and call.id in messages:
                updates[(i, j)] = {"result": _json_value(messages[call.id])}
    linked = []
    for i, span in enumerate(spans):
        if not any((i, j) in updates for j in range(len(span.tool_calls))):
            linked.append(span)
            continue
        calls = [
            call.model_copy(update=updates[(i, j)]) if (i, j) in updates else call
            for j, call in enumerate(span.tool_calls)
        ]
        linked.append(span.model_copy(update={"tool_calls": calls}))
    return linked


def _parsed(value: Any, method: str) -> Any:
    if isinstance(value, (bytes, bytearray)):
        try:
            value = bytes(value).decode("utf-8")
        except UnicodeDecodeError:  # binary OTLP: the exporters' default encoding
            return otlp_protobuf(bytes(value), method)
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError as exc:
            raise TraceError(
                f"{method} takes parsed JSON or JSON text, and this is not JSON ({exc}); "
                f"to read a file use rubriclab.load_traces(path)"
            ) from None
    return value
