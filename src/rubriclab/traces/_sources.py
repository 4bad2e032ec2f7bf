"""Reading what tracing SDKs write to disk: JSON, JSONL, concatenated JSON objects (the
OpenTelemetry SDK's ``ConsoleSpanExporter``), binary OTLP protobuf, and folders of such files.

Protobuf goes through ``opentelemetry-proto`` (the OTLP exporters' own message classes), never
a hand-written decoder; without it, a protobuf file is refused with the install line.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ._base import TraceError

_PROTO_SUFFIXES = (".pb", ".bin", ".protobuf", ".binpb")
_FOLDER_SUFFIXES = (".json", ".jsonl", ".ndjson", ".txt", ".log", *_PROTO_SUFFIXES)


def read_trace_path(path: Path) -> list[Any]:
    """Every export record in a file, or in the trace files of a folder (sorted by name)."""
    if path.is_dir():
        files = sorted(
            p for p in path.iterdir() if p.is_file() and p.suffix.lower() in _FOLDER_SUFFIXES
        )
        if not files:
            raise TraceError(
                f"no trace files in folder {path} (looked for {', '.join(_FOLDER_SUFFIXES)})"
            )
        items: list[Any] = []
        for file in files:
            items.extend(read_trace_file(file))
        return items
    return read_trace_file(path)


def read_trace_file(path: Path) -> list[Any]:
    """The export records in one file: JSON, JSONL, concatenated JSON, or OTLP protobuf."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise TraceError(f"no trace file at {path}") from None
    except OSError as exc:
        raise TraceError(f"could not read trace file {path}: {exc}") from None
    if path.suffix.lower() in _PROTO_SUFFIXES:
        return [otlp_protobuf(data, str(path))]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        # the OTLP exporters' default encoding is binary protobuf, whatever the file is called
        return [otlp_protobuf(data, str(path))]
    return json_records(text, str(path))


def json_records(text: str, where: str) -> list[Any]:
    """JSON values one after another: one document, JSON Lines, or indented objects back to
    back (what ``ConsoleSpanExporter`` prints, one object per span)."""
    decoder = json.JSONDecoder()
    items: list[Any] = []
    position = 0
    length = len(text)
    while True:
        while position < length and text[position] in " \t\r\n,":
            position += 1
        if position >= length:
            break
        try:
            value, position = decoder.raw_decode(text, position)
        except ValueError as exc:
            line = text.count("\n", 0, position) + 1
            raise TraceError(f"{where} is not valid JSON (line {line}): {exc}") from None
        except RecursionError:
            line = text.count("\n", 0, position) + 1
            raise TraceError(
                f"{where} (line {line}) nests JSON too deeply to be a trace export"
            ) from None
        items.append(value)
    if len(items) == 1 and isinstance(items[0], list):
        return list(items[0])
    return items


def otlp_protobuf(data: bytes, where: str) -> dict[str, Any]:
    """A binary OTLP export (traces or logs) as the OTLP JSON dict the other readers take."""
    try:
        from google.protobuf.json_format import MessageToDict
        from google.protobuf.message import DecodeError
        from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import (
            ExportLogsServiceRequest,
        )
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
            ExportTraceServiceRequest,
        )
    except ImportError:
        raise TraceError(
            f"{where} is binary OTLP protobuf, which needs the opentelemetry-proto package: "
            f"pip install 'rubriclab[traces]'"
        ) from None
    hint_logs = "log" in Path(where).name.lower()
    order = (ExportLogsServiceRequest, ExportTraceServiceRequest)
    for message_class in order if hint_logs else reversed(order):
        message = message_class()
        try:
            message.ParseFromString(data)
        except (DecodeError, ValueError, RuntimeError):
            continue
        as_dict: dict[str, Any] = MessageToDict(message)
        if _plausible(as_dict):
            return as_dict
    raise TraceError(
        f"{where} is neither JSON nor an OTLP protobuf export (ExportTraceServiceRequest or "
        f"ExportLogsServiceRequest)"
    )


def _plausible(export: Mapping[str, Any]) -> bool:
    """Whether a parse looks like what it claims: every span has its ids, every log record a
    time or an event name (the two messages share field numbers, so either may 'parse')."""
    if "resourceSpans" in export:
        spans = [
            span
            for rs in export["resourceSpans"]
            for ss in rs.get("scopeSpans", [])
            for span in ss.get("spans", [])
        ]
        return bool(spans) and all(
            len(str(s.get("traceId", ""))) == 24 and len(str(s.get("spanId", ""))) == 12
            for s in spans
        )
    if "resourceLogs" in export:
        records = [
            r
            for rl in export["resourceLogs"]
            for sl in rl.get("scopeLogs", [])
            for r in sl.get("logRecords", [])
        ]
        return bool(records) and all(
            r.get("timeUnixNano") or r.get("observedTimeUnixNano") or r.get("eventName")
            for r in records
        )
    return False
