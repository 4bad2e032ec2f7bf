"""Finding the spans in whatever was passed, grouping them into traces, reading files."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from importlib import resources
from os import PathLike
from pathlib import Path
from typing import Any, Literal, cast

from ._base import TraceError
from ._formats import _parsed, _spans_from_payload
from ._tree import Trace, _group

TraceFormat = Literal["auto", "otlp", "openinference", "spans"]
_FORMATS = ("auto", "otlp", "openinference", "spans")


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
