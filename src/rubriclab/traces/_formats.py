"""Span envelopes: OTLP JSON, span records (Phoenix / OTel-Python JSON), canonical dicts.

Each reader turns one raw span into a validated ``Span``; errors name the span and field.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from pydantic import ValidationError

from ._base import TraceError, _time_from_unix_nano
from ._conventions import _derive, _error_message
from ._model import Span, SpanEvent, SpanStatus


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
