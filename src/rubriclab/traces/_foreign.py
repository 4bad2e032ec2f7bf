"""Other tools' in-memory trace objects as plain records the span readers take.

Phoenix's ``get_spans_dataframe()`` (one row per span, ``context.*`` and ``attributes.*``
columns), MLflow's ``Trace`` objects and ``search_traces()`` frames. Nothing here imports
those packages: objects are recognised by their shape, and read through their own JSON.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from ..columns import is_missing_cell
from ._base import TraceError

__all__ = ["foreign_records"]


def _is_frame(value: Any) -> bool:
    return type(value).__name__ == "DataFrame" and type(value).__module__.startswith("pandas")


def _is_mlflow_trace(value: Any) -> bool:
    return (
        type(value).__module__.startswith("mlflow")
        and hasattr(value, "info")
        and hasattr(value, "data")
        and callable(getattr(value, "to_json", None))
    )


def _plain(value: Any) -> Any:
    """numpy arrays and scalars in a frame's cells as lists and Python numbers."""
    if hasattr(value, "tolist") and not isinstance(value, (str, bytes)):
        return value.tolist()
    return value


def _phoenix_rows(frame: Any) -> list[dict[str, Any]]:
    records: list[dict[str, Any]] = []
    columns = [str(c) for c in frame.columns]
    index_name = frame.index.name
    for label, row in zip(frame.index, frame.itertuples(index=False, name=None), strict=True):
        record: dict[str, Any] = {"context": {}, "attributes": {}}
        for column, cell in zip(columns, row, strict=True):
            if is_missing_cell(cell):
                continue
            value = _plain(cell)
            if column.startswith("context."):
                record["context"][column.removeprefix("context.")] = value
            elif column.startswith("attributes."):
                record["attributes"][column.removeprefix("attributes.")] = value
            else:
                record[column] = value
        if "span_id" not in record["context"] and index_name in ("span_id", "context.span_id"):
            record["context"]["span_id"] = str(label)
        for key in ("start_time", "end_time"):
            if key in record and hasattr(record[key], "isoformat"):
                record[key] = record[key].isoformat()
        if isinstance(record.get("events"), list):
            record["events"] = [dict(e) for e in record["events"] if isinstance(e, Mapping)]
        records.append(record)
    return records


def _mlflow_frame(frame: Any) -> list[Any]:
    columns = set(map(str, frame.columns))
    out: list[Any] = []
    if "trace" in columns:
        for cell in frame["trace"]:
            if _is_mlflow_trace(cell):
                out.append(json.loads(cell.to_json()))
            elif isinstance(cell, str):
                out.append(json.loads(cell))
            elif isinstance(cell, Mapping):
                out.append(dict(cell))
        if out:
            return out
    for cell in frame["spans"]:
        spans = _plain(cell)
        if isinstance(spans, str):
            spans = json.loads(spans)
        if isinstance(spans, Sequence):
            out.extend(dict(s) if isinstance(s, Mapping) else s for s in spans)
    return out


def foreign_records(source: Any) -> list[Any] | None:
    """Records for a DataFrame or MLflow trace object(s), or None when ``source`` is neither."""
    if _is_frame(source):
        columns = set(map(str, source.columns))
        if "context.span_id" in columns or "span_kind" in columns:
            return _phoenix_rows(source)
        if "spans" in columns or "trace" in columns:
            return _mlflow_frame(source)
        raise TraceError(
            "this DataFrame is not a span export: expected Phoenix's get_spans_dataframe() "
            "(context.span_id, span_kind ...) or MLflow's search_traces() (trace or spans "
            f"column); it has {', '.join(sorted(columns)[:8])}"
        )
    if _is_mlflow_trace(source):
        return [json.loads(source.to_json())]
    if (
        isinstance(source, Sequence)
        and not isinstance(source, (str, bytes))
        and source
        and all(_is_mlflow_trace(t) for t in source)
    ):
        return [json.loads(t.to_json()) for t in source]
    return None
