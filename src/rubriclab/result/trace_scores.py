"""Scores back where traces live: an evaluation over traces written onto the spans it judged.

``result.write_trace_scores(traces, path)`` writes the traces as OTLP JSON with each judged span
(the root span for ``partition="trace"`` rows) carrying one ``gen_ai.evaluation.result`` span
event per metric, following the OpenTelemetry GenAI evaluation conventions
(``gen_ai.evaluation.name``, ``gen_ai.evaluation.score.value`` / ``.score.label``,
``gen_ai.evaluation.explanation``, ``error.type``), and the same figures as span attributes
(``rubriclab.evaluation.<metric>.score`` ...) for tools that filter on attributes.
When ``traces`` is the OTLP JSON file (or parsed export) the traces were loaded from, the output
is a copy of it (one document, a JSON array or JSON lines, as it came): resources, scopes, spans,
links, status and every attribute are kept as they were, and only the judged spans gain their
events and attributes; a rerun replaces a metric's earlier events instead of adding copies.
Other sources (span records, Trace objects) are written as a new OTLP export.
``result.log_feedback_to_mlflow(traces)`` writes each score as an MLflow assessment
(``mlflow.log_feedback``) on the traces that came from MLflow.

A judge's explanation is model text: it is written as a string value, never interpreted.
"""

from __future__ import annotations

import copy
import json
import math
import numbers
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..traces import (
    EVALUATION_EVENT,
    Span,
    Trace,
    load_traces,
    otlp_span_key,
    read_trace_path,
)

if TYPE_CHECKING:
    from . import EvalResult

__all__ = [
    "EVENT_NAME",
    "TraceScore",
    "log_mlflow_feedback",
    "otlp_export",
    "scored_otlp_records",
    "trace_scores",
    "write_otlp_scores",
]

EVENT_NAME = EVALUATION_EVENT
ATTRIBUTE_PREFIX = "rubriclab.evaluation"
_OPENINFERENCE_KINDS = {
    "LLM",
    "CHAIN",
    "TOOL",
    "AGENT",
    "RETRIEVER",
    "EMBEDDING",
    "RERANKER",
    "GUARDRAIL",
    "EVALUATOR",
}
_STATUS = {"unset": 0, "ok": 1, "error": 2}


@dataclass(frozen=True)
class TraceScore:
    """One metric's outcome on one judged span (``span_id`` None: the whole trace)."""

    trace_id: str
    span_id: str | None
    metric: str
    score: float | None
    label: str | None
    explanation: str | None
    error: str | None


def _text(value: Any) -> str | None:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    return value if isinstance(value, str) else str(value)


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return None
    number = float(value)
    return number if math.isfinite(number) else None


def _label(row: Mapping[Any, Any], metric: str) -> str | None:
    verdict = _text(row.get(f"{metric}/verdict"))
    if verdict:
        return verdict
    passed = row.get(f"{metric}/passed")
    if isinstance(passed, bool):
        return "pass" if passed else "fail"
    return None


def trace_scores(result: EvalResult) -> list[TraceScore]:
    """Every (row, metric) outcome of an evaluation over traces, errors included."""
    partition = result.meta.get("partition")
    if partition not in ("span", "trace") or not result.has_column("trace_id"):
        raise ValueError(
            "this result was not judged over traces: scores go back onto traces only from "
            "rl.evaluate(traces, metrics, partition='span' or 'trace')"
        )
    out: list[TraceScore] = []
    for row in result.table.to_dict("records"):
        span_id = _text(row.get("span_id")) if partition == "span" else None
        for metric in result.metric_names:
            out.append(
                TraceScore(
                    trace_id=str(row["trace_id"]),
                    span_id=span_id,
                    metric=metric,
                    score=_number(row.get(f"{metric}/score")),
                    label=_label(row, metric),
                    explanation=_text(row.get(f"{metric}/rationale")),
                    error=_text(row.get(f"{metric}/error")),
                )
            )
    return out


def _traces(traces: Any) -> list[Trace]:
    return [traces] if isinstance(traces, Trace) else load_traces(traces)


def _targets(result: EvalResult, traces: list[Trace]) -> dict[tuple[str, str], list[TraceScore]]:
    """Scores by the (trace id, span id) they go on; a trace row goes on its first root."""
    by_id = {t.trace_id: t for t in traces}
    out: dict[tuple[str, str], list[TraceScore]] = {}
    for score in trace_scores(result):
        trace = by_id.get(score.trace_id)
        if trace is None:
            raise ValueError(
                f"trace {score.trace_id} was judged but is not in the traces given: pass the "
                "same traces the evaluation read"
            )
        span_id = score.span_id or trace.roots()[0].span_id
        if score.span_id is not None and all(s.span_id != span_id for s in trace.spans):
            raise ValueError(f"span {span_id} of trace {score.trace_id} is not in the traces given")
        out.setdefault((score.trace_id, span_id), []).append(score)
    return out


# -- OTLP JSON ---------------------------------------------------------------------------------


def _value(value: Any) -> dict[str, Any] | None:
    """A Python value as an OTLP ``AnyValue``; None for nothing."""
    if value is None:
        return None
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    if isinstance(value, float):
        return {"doubleValue": value} if math.isfinite(value) else {"stringValue": str(value)}
    if isinstance(value, str):
        return {"stringValue": value}
    if isinstance(value, Mapping):
        return {"kvlistValue": {"values": _attributes(value)}}
    if isinstance(value, list | tuple):
        values = [v for v in (_value(x) for x in value) if v is not None]
        return {"arrayValue": {"values": values}}
    return {"stringValue": json.dumps(value, default=str, ensure_ascii=False)}


def _attributes(attrs: Mapping[str, Any]) -> list[dict[str, Any]]:
    out = []
    for key, raw in attrs.items():
        value = _value(raw)
        if value is not None:
            out.append({"key": str(key), "value": value})
    return out


def _nanos(moment: datetime | None) -> str:
    if moment is None:
        return "0"
    return str(int(moment.timestamp()) * 1_000_000_000 + moment.microsecond * 1000)


def _score_event(span: Span, score: TraceScore, judge: str | None) -> dict[str, Any]:
    return _score_event_at(_nanos(span.end), score, judge)


def _score_event_at(stamp: str, score: TraceScore, judge: str | None) -> dict[str, Any]:
    attrs: dict[str, Any] = {"gen_ai.evaluation.name": score.metric}
    if score.score is not None:
        attrs["gen_ai.evaluation.score.value"] = score.score
    if score.label is not None:
        attrs["gen_ai.evaluation.score.label"] = score.label
    if score.error is not None:
        attrs["error.type"] = "rubriclab.judge_error"
        attrs["gen_ai.evaluation.explanation"] = score.error
    elif score.explanation is not None:
        attrs["gen_ai.evaluation.explanation"] = score.explanation
    if judge:
        attrs["rubriclab.judge"] = judge
    return {"name": EVENT_NAME, "timeUnixNano": stamp, "attributes": _attributes(attrs)}


def _score_attributes(scores: list[TraceScore]) -> dict[str, Any]:
    attrs: dict[str, Any] = {}
    for score in scores:
        key = f"{ATTRIBUTE_PREFIX}.{score.metric}"
        if score.score is not None:
            attrs[f"{key}.score"] = score.score
        if score.label is not None:
            attrs[f"{key}.label"] = score.label
        if score.error is not None:
            attrs[f"{key}.error"] = score.error
    return attrs


def _otlp_span(span: Span, scores: list[TraceScore], judge: str | None) -> dict[str, Any]:
    attrs = dict(span.attributes)
    if span.kind in _OPENINFERENCE_KINDS and "openinference.span.kind" not in attrs:
        attrs["openinference.span.kind"] = span.kind
    attrs.update(_score_attributes(scores))
    events = [
        {
            "name": e.name,
            "timeUnixNano": _nanos(e.time or span.start),
            "attributes": _attributes(e.attributes),
        }
        for e in span.events
    ]
    events.extend(_score_event(span, s, judge) for s in scores)
    status: dict[str, Any] = {"code": _STATUS[span.status.code]}
    if span.status.message:
        status["message"] = span.status.message
    return {
        "traceId": span.trace_id,
        "spanId": span.span_id,
        "parentSpanId": span.parent_id or "",
        "name": span.name,
        "kind": 1,
        "startTimeUnixNano": _nanos(span.start),
        "endTimeUnixNano": _nanos(span.end),
        "attributes": _attributes(attrs),
        "events": events,
        "status": status,
    }


def otlp_export(result: EvalResult, traces: Any) -> dict[str, Any]:
    """The traces as one OTLP JSON export (``resourceSpans``) with the result's scores on the
    spans they judged."""
    loaded = _traces(traces)
    targets = _targets(result, loaded)
    spans = [
        _otlp_span(span, targets.get((trace.trace_id, span.span_id), []), result.judge)
        for trace in loaded
        for span in trace.spans
    ]
    return {
        "resourceSpans": [
            {
                "resource": {"attributes": []},
                "scopeSpans": [{"scope": {"name": "rubriclab.trace_scores"}, "spans": spans}],
            }
        ]
    }


# -- a copy of the original OTLP JSON ----------------------------------------------------------

_PROTO_SUFFIXES = (".pb", ".bin", ".protobuf", ".binpb")
_SPAN_KEYS = ("resourceSpans", "resource_spans")
_SCOPE_KEYS = ("scopeSpans", "scope_spans", "instrumentationLibrarySpans")
_EXPORT_KEYS = (*_SPAN_KEYS, "resourceLogs", "resource_logs")


def _first(obj: Mapping[str, Any], keys: tuple[str, ...]) -> Any:
    return next((obj[k] for k in keys if k in obj), None)


def _is_otlp_export(record: Any) -> bool:
    return isinstance(record, Mapping) and any(k in record for k in _EXPORT_KEYS)


def _original_records(traces: Any) -> tuple[list[Any], str] | None:
    """The OTLP JSON exports ``traces`` was read from and their layout (``"document"``,
    ``"array"`` or ``"lines"``); None when it is not OTLP JSON exports (then a new export is
    built)."""
    records: list[Any]
    if isinstance(traces, Mapping):
        records, layout = [traces], "document"
    elif isinstance(traces, list | tuple) and traces and all(map(_is_otlp_export, traces)):
        records, layout = list(traces), "array"
    elif isinstance(traces, str | Path) and not str(traces).lstrip().startswith(("{", "[")):
        path = Path(traces)
        records = read_trace_path(path)
        layout = "document" if len(records) == 1 else "lines"
        if path.is_file() and path.suffix.lower() not in _PROTO_SUFFIXES:
            with path.open("rb") as handle:
                head = handle.read(4096).decode("utf-8", "replace").lstrip("\ufeff \t\r\n")
            if head.startswith("["):
                layout = "array"
    else:
        return None
    if not records or not all(map(_is_otlp_export, records)):
        return None
    if not any(_first(r, _SPAN_KEYS) for r in records):
        return None
    return copy.deepcopy(records), layout


def _snake_case(value: Any) -> Any:
    """An OTLP JSON fragment with the snake_case keys some exporters write (``string_value``)."""
    if isinstance(value, list):
        return [_snake_case(v) for v in value]
    if isinstance(value, dict):
        names = {
            "stringValue": "string_value",
            "boolValue": "bool_value",
            "intValue": "int_value",
            "doubleValue": "double_value",
            "arrayValue": "array_value",
            "kvlistValue": "kvlist_value",
            "timeUnixNano": "time_unix_nano",
        }
        return {names.get(k, k): _snake_case(v) for k, v in value.items()}
    return value


def _raw_text(value: Any) -> Any:
    if isinstance(value, Mapping):
        return _first(value, ("stringValue", "string_value"))
    return value


def _earlier_event(event: Any, metrics: set[str]) -> bool:
    """Whether ``event`` is an evaluation event of one of ``metrics`` (from an earlier write)."""
    if not isinstance(event, Mapping) or event.get("name") != EVENT_NAME:
        return False
    for kv in event.get("attributes") or []:
        if isinstance(kv, Mapping) and kv.get("key") == "gen_ai.evaluation.name":
            return _raw_text(kv.get("value")) in metrics
    return False


def _score_raw_span(raw: dict[str, Any], scores: list[TraceScore], judge: str | None) -> None:
    """Add the scores to one span of the original document, in place and in its key style."""
    snake = "start_time_unix_nano" in raw or "span_id" in raw
    metrics = {s.metric for s in scores}
    end = _first(raw, ("endTimeUnixNano", "end_time_unix_nano"))
    stamp = str(end) if end not in (None, "") else "0"
    new_attrs = _attributes(_score_attributes(scores))
    new_keys = {kv["key"] for kv in new_attrs}
    attrs = raw.get("attributes")
    if isinstance(attrs, list):
        kept = [kv for kv in attrs if not (isinstance(kv, Mapping) and kv.get("key") in new_keys)]
        raw["attributes"] = kept + (_snake_case(new_attrs) if snake else new_attrs)
    elif isinstance(attrs, dict):  # a plain {key: value} map, as some writers emit
        attrs.update(_score_attributes(scores))
    else:
        raw["attributes"] = _snake_case(new_attrs) if snake else new_attrs
    events = [e for e in raw.get("events") or [] if not _earlier_event(e, metrics)]
    for score in scores:
        event = _score_event_at(stamp, score, judge)
        events.append(_snake_case(event) if snake else event)
    raw["events"] = events


def scored_otlp_records(result: EvalResult, traces: Any) -> tuple[list[Any], str] | None:
    """A copy of the OTLP JSON exports ``traces`` was read from with the result's scores added
    to the judged spans, and their layout; None when ``traces`` is not OTLP JSON exports."""
    original = _original_records(traces)
    if original is None:
        return None
    records, layout = original
    targets = _targets(result, _traces(traces))
    placed: set[tuple[str, str]] = set()
    for record in records:
        for resource_spans in _first(record, _SPAN_KEYS) or []:
            for scope_spans in _first(resource_spans, _SCOPE_KEYS) or []:
                for raw in scope_spans.get("spans") or []:
                    trace_id, span_id = otlp_span_key(raw)
                    key = (trace_id or "", span_id or "")
                    if key in targets and key not in placed:
                        _score_raw_span(raw, targets[key], result.judge)
                        placed.add(key)
    missing = sorted(set(targets) - placed)
    if missing:
        trace_id, span_id = missing[0]
        raise ValueError(f"span {span_id} of trace {trace_id} is not in the OTLP file given")
    return records, layout


def write_otlp_scores(result: EvalResult, traces: Any, path: str | Path) -> Path:
    """Write the scored traces to ``path`` (UTF-8 JSON): a copy of the original OTLP JSON in its
    own layout when ``traces`` is one, else :func:`otlp_export`; returns the path."""
    target = Path(path)
    scored = scored_otlp_records(result, traces)
    if scored is None:
        text = json.dumps(otlp_export(result, traces), ensure_ascii=False, indent=1) + "\n"
    else:
        records, layout = scored
        if layout == "document":
            text = json.dumps(records[0], ensure_ascii=False, indent=1) + "\n"
        elif layout == "array":
            text = json.dumps(records, ensure_ascii=False, indent=1) + "\n"
        else:
            text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)
    target.write_text(text, encoding="utf-8")
    return target


# -- MLflow assessments ------------------------------------------------------------------------


def _mlflow_trace_id(trace: Trace) -> str | None:
    """The MLflow trace id (``tr-...``) its spans carry, or None when it did not come from MLflow."""
    for span in trace.spans:
        raw = span.attributes.get("mlflow.traceRequestId")
        if isinstance(raw, str) and raw.strip():
            text = raw.strip()
            if text.startswith('"'):
                try:
                    decoded = json.loads(text)
                except ValueError:
                    decoded = text
                text = decoded if isinstance(decoded, str) else text
            return text
    return None


def _feedbacks(result: EvalResult, traces: list[Trace]) -> Iterator[tuple[str, TraceScore]]:
    mlflow_ids = {t.trace_id: _mlflow_trace_id(t) for t in traces}
    known = {k: v for k, v in mlflow_ids.items() if v}
    if not known:
        raise ValueError(
            "none of these traces came from MLflow (no span carries mlflow.traceRequestId): "
            "assessments go only onto MLflow traces; use write_trace_scores for an OTLP file"
        )
    for (trace_id, _span), scores in _targets(result, traces).items():
        if trace_id in known:
            for score in scores:
                yield known[trace_id], score


def log_mlflow_feedback(result: EvalResult, traces: Any) -> list[str]:
    """Log every score of ``result`` as an MLflow feedback assessment on its trace (and span, for
    ``partition="span"``); traces not from MLflow are skipped. Returns the assessment ids."""
    try:
        import mlflow
        from mlflow.entities import AssessmentError, AssessmentSource
    except ImportError:
        raise ImportError(
            "log_feedback_to_mlflow needs MLflow 3: pip install 'rubriclab[mlflow]'"
        ) from None
    if not hasattr(mlflow, "log_feedback"):
        raise ImportError("log_feedback_to_mlflow needs MLflow 3 (mlflow.log_feedback)")
    source = AssessmentSource(source_type="LLM_JUDGE", source_id=result.judge or "rubriclab")
    ids: list[str] = []
    for mlflow_id, score in _feedbacks(result, _traces(traces)):
        value: float | str | None = score.score if score.score is not None else score.label
        error = None
        if score.error is not None:
            value = None
            error = AssessmentError(error_code="JUDGE_ERROR", error_message=score.error)
        metadata = {"rubriclab.label": score.label} if score.label is not None else None
        feedback = mlflow.log_feedback(
            trace_id=mlflow_id,
            name=score.metric,
            value=value,
            source=source,
            error=error,
            rationale=score.explanation if score.error is None else None,
            metadata=metadata,
            span_id=score.span_id,
        )
        ids.append(str(feedback.assessment_id))
    return ids
