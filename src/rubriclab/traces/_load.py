"""Finding the spans in whatever was passed, grouping them into traces, reading files."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from importlib import resources
from os import PathLike
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, cast

from ._base import TraceError
from ._content import warn_missing_content
from ._foreign import foreign_records
from ._formats import spans_and_logs
from ._sources import json_records, otlp_protobuf, read_trace_path
from ._tree import Trace, _group

if TYPE_CHECKING:
    import pandas as pd

TraceFormat = Literal["auto", "otlp", "openinference", "spans"]
_FORMATS = ("auto", "otlp", "openinference", "spans")


def _is_path_list(source: Any) -> bool:
    return (
        isinstance(source, Sequence)
        and not isinstance(source, (str, bytes))
        and bool(source)
        and all(
            isinstance(item, PathLike)
            or (isinstance(item, str) and item.lstrip()[:1] not in ("{", "["))
            for item in source
        )
    )


def load_traces(
    source: str | PathLike[str] | bytes | Mapping[str, Any] | Sequence[Any] | Trace | pd.DataFrame,
    format: TraceFormat = "auto",
) -> list[Trace]:
    """Read every trace in a file, a folder, several files, or an already-parsed export, split
    by trace id.

    Files may be JSON, JSONL, the OpenTelemetry SDK's ``ConsoleSpanExporter`` output (JSON
    objects back to back) or binary OTLP protobuf (``.pb``; needs ``rubriclab[traces]``); a
    folder is read file by file. OTLP log records (the GenAI instrumentations' message events)
    given alongside the spans are joined to their spans by span id. Also read: Phoenix span
    records and ``get_spans_dataframe()`` frames, MLflow traces (``trace.to_json()``, the
    ``Trace`` objects, ``search_traces()`` frames).

    ``format`` is ``"auto"`` (detected per record), ``"otlp"`` (OTLP JSON: resourceSpans),
    ``"openinference"`` (span records such as Phoenix exports, or OTLP carrying OpenInference
    attributes) or ``"spans"`` (dicts in our canonical Span shape). Attribute conventions (GenAI,
    OpenInference, MLflow, Langfuse, LangSmith) are read from each span whatever the envelope.
    A trace whose model calls carry no message content loads with a ``TraceWarning`` saying how
    to turn content capture on.
    """
    if format not in _FORMATS:
        raise TraceError(f"format {format!r} is not one of {', '.join(_FORMATS)}")
    if isinstance(source, Trace):
        return [source]
    if isinstance(source, Sequence) and source and all(isinstance(t, Trace) for t in source):
        return list(cast("Sequence[Trace]", source))
    payload: Any
    if isinstance(source, PathLike):
        payload = read_trace_path(Path(source))
    elif isinstance(source, (bytes, bytearray)):
        try:
            payload = json_records(bytes(source).decode("utf-8"), "load_traces")
        except UnicodeDecodeError:
            payload = otlp_protobuf(bytes(source), "load_traces (bytes)")
    elif isinstance(source, str):
        stripped = source.lstrip()
        if stripped[:1] in ("{", "["):
            payload = json_records(source, "load_traces")
        else:
            payload = read_trace_path(Path(source))
    elif _is_path_list(source):
        payload = [
            item for path in cast("Sequence[Any]", source) for item in read_trace_path(Path(path))
        ]
    else:
        payload = foreign_records(source)
        if payload is None:
            payload = list(source) if isinstance(source, Sequence) else source
    fmt = "auto" if format == "openinference" else format
    spans = spans_and_logs(payload, fmt)
    if not spans:
        raise TraceError("no spans found in the trace source")
    traces = _group(spans)
    warn_missing_content(traces)
    return traces


def example_trace() -> Trace:
    """A small multi-step agent run (OTLP JSON, GenAI conventions) for notebooks and docs."""
    data = (
        resources.files("rubriclab.examples").joinpath("agent_trace_otlp.json").read_text("utf-8")
    )
    return Trace.from_otlp(json.loads(data))
