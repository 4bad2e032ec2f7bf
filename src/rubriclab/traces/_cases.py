"""Traces as cases: the data adapter that turns agent traces into rows ``evaluate`` judges.

``rl.evaluate(traces, metrics, partition="span" | "trace")`` reads the traces here into a table
(one row per span, or per trace) and its cases, then judges them through the same metric loop
as any table. Each row keeps its trace id, span id, name, kind, short input/output previews
and the trace's tree, so the usual table, summary and views work on agent runs. Each case
binds its raw span (``input_span``) or trace (``input_trace``) for template metrics, and
carries the step's input as the prompt and its output (or final answer) as the response for
rubric metrics.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from ..columns import preview
from ..data import Case
from ._content import missing_text
from ._load import load_traces
from ._model import Span
from ._rows import span_row, trace_tree
from ._tree import Trace

__all__ = [
    "PARTITIONS",
    "PREVIEW_CHARS",
    "TraceCases",
    "check_partition",
    "default_partition",
    "is_traces",
    "span_io",
    "trace_cases",
    "trace_io",
]

PARTITIONS = ("span", "trace")
PREVIEW_CHARS = 120


@dataclass
class TraceCases:
    """Traces read for judging: the table (one row per span or trace), its cases, and what
    the result keeps about the run (the partition and the trace ids)."""

    table: pd.DataFrame
    cases: list[Case]
    meta: dict[str, Any]


def is_traces(data: Any) -> bool:
    """Whether ``data`` is a trace or a non-empty list of them (judged per partition)."""
    if isinstance(data, Trace):
        return True
    return isinstance(data, list | tuple) and bool(data) and all(isinstance(t, Trace) for t in data)


def default_partition(metrics: Sequence[Any]) -> str:
    """Spans when every metric that binds a partition binds spans; otherwise whole traces."""
    wanted = {getattr(m, "partition", None) for m in metrics} - {None}
    return "span" if wanted == {"span"} else "trace"


def check_partition(metrics: Sequence[Any], partition: str) -> None:
    """Before any call: a metric that binds one span (or one trace) per row needs that
    partition. Metrics that bind none (rubric metrics) judge either."""
    if partition not in PARTITIONS:
        raise ValueError(f"partition must be 'span' or 'trace', got {partition!r}")
    for metric in metrics:
        wants = getattr(metric, "partition", None)
        if wants is not None and wants != partition:
            variable = f"input_{wants}"
            raise ValueError(
                f"metric {metric.name!r} binds {variable!r} (one {wants} per row) but "
                f"partition={partition!r} gives one {partition} per row: pass "
                f"partition={wants!r}, or set expected_variables=['input_{partition}'] and read "
                f"the {partition} in the template"
            )


def trace_cases(data: Any, partition: str) -> TraceCases:
    """Read ``data`` (Trace objects, a list of them, or a trace file/export) into rows."""
    if partition not in PARTITIONS:
        raise ValueError(f"partition must be 'span' or 'trace', got {partition!r}")
    traces = _load(data)
    rows = _rows(traces, partition)
    table, cases = _table(rows, partition)
    meta = {"partition": partition, "traces": [t.trace_id for t in traces]}
    return TraceCases(table, cases, meta)


# -- rows from traces ----------------------------------------------------------------------------


@dataclass(frozen=True)
class _Row:
    id: str
    trace: Trace
    span: Span | None  # None: the whole trace is the row

    @property
    def target(self) -> Span | Trace:
        return self.trace if self.span is None else self.span


def _json_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, default=str)


def _call_text(span: Span) -> str:
    return ", ".join(f"{c.name}({_json_text(c.arguments)})" for c in span.tool_calls)


def span_io(span: Span) -> tuple[str, str]:
    """What a span was given and what it produced, as text: messages first, else the tool
    call's arguments and result (or error), else the calls an LLM asked for."""
    given = span.input_text
    made = span.output_text
    if span.kind == "TOOL" and span.tool_calls:
        call = span.tool_calls[0]
        given = given or _call_text(span)
        if not made:
            made = f"error: {call.error}" if call.error else _json_text(call.result)
    elif not made and span.tool_calls:
        made = "calls " + _call_text(span)
    if not made and span.is_error and span.status.message:
        made = f"error: {span.status.message}"
    return given, made


def trace_io(trace: Trace) -> tuple[str, str]:
    """A run's question (the first input text, roots first) and its final answer."""
    given = next((s.input_text for s in trace.roots() if s.input_text), "")
    if not given:
        given = next((s.input_text for s in trace.walk() if s.input_text), "")
    return given, trace.final_answer or ""


def _load(data: Any) -> list[Trace]:
    if isinstance(data, pd.DataFrame):
        raise TypeError(
            "partition= judges traces, and this is a DataFrame: pass Trace objects, a list of "
            "them, or a trace file/export (rubriclab.load_traces reads OTLP and OpenInference)"
        )
    traces = [data] if isinstance(data, Trace) else load_traces(data)
    seen: set[str] = set()
    for t in traces:
        if t.trace_id in seen:
            raise ValueError(
                f"trace {t.trace_id} is given twice; each trace must appear once so every "
                "result row has its own id"
            )
        seen.add(t.trace_id)
    return traces


def _rows(traces: Sequence[Trace], partition: str) -> list[_Row]:
    if partition == "trace":
        return [_Row(t.trace_id, t, None) for t in traces]
    return [_Row(f"{t.trace_id}/{s.span_id}", t, s) for t in traces for s in t.walk()]


def _table(rows: Sequence[_Row], partition: str) -> tuple[pd.DataFrame, list[Case]]:
    trees: dict[str, list[dict[str, Any]]] = {}
    records: list[dict[str, Any]] = []
    cases: list[Case] = []
    for row in rows:
        tree = trees.setdefault(row.trace.trace_id, trace_tree(row.trace))
        if row.span is None:
            head = row.trace.roots()[0]
            given, made = trace_io(row.trace)
            record: dict[str, Any] = {
                "trace_id": row.trace.trace_id,
                "span_id": None,
                "name": head.name,
                "kind": head.kind,
                "status": head.status.code,
                "duration_ms": round(row.trace.duration.total_seconds() * 1000, 3),
                "spans": len(row.trace.spans),
                "error_spans": len(row.trace.errors),
            }
        else:
            span = row.span
            given, made = span_io(span)
            record = {"trace_id": span.trace_id, **span_row(row.trace, span)}
        # views show the first few columns: what the step was, what went in, what came out
        shown = {
            "name": record.pop("name"),
            "input_preview": preview(given, PREVIEW_CHARS),
            "output_preview": preview(made, PREVIEW_CHARS),
        }
        records.append({**shown, **record, "trace_tree": tree})
        bound = {"input_span" if row.span is not None else "input_trace": row.target}
        # a row whose trace recorded no content is an error, never a judgment over nothing
        cases.append(
            Case(
                id=row.id,
                index=row.id,
                prompt=given,
                response=made or None,
                bound=bound,
                error=missing_text(row.target),
            )
        )
    table = pd.DataFrame.from_records(records, index=[r.id for r in rows])
    table.index.name = f"{partition}_row"
    return table, cases
