"""A trace as plain tree rows: what a result table keeps of the trace a row was judged from.

Result rows carry these rows (the ``trace_tree`` column) so a view can show where the judged
span sits without holding the trace; plain values only, so they survive JSON and Parquet.
Drawing them is the views' job (``rubriclab.widgets.trace_view``).
"""

from __future__ import annotations

from typing import Any

from ._model import Span
from ._tree import Trace

__all__ = ["EVALUATION_EVENT", "TREE_KEYS", "span_evaluations", "span_row", "trace_tree"]

#: the OpenTelemetry GenAI span event one evaluation result is written as
EVALUATION_EVENT = "gen_ai.evaluation.result"

#: the keys of one tree row, in display order
TREE_KEYS = ("span_id", "parent_id", "name", "kind", "status", "duration_ms", "depth")


def trace_tree(trace: Trace) -> list[dict[str, Any]]:
    """One row per span, depth-first (a parent before its children): ids, name, kind, status,
    duration and depth, plus ``evaluations`` on a span that carries evaluation events (scores
    written back by an earlier run or another tool). Plain values only, so the rows survive
    JSON and Parquet round trips."""
    rows = []
    for span in trace.walk():
        row = span_row(trace, span)
        evaluations = span_evaluations(span)
        if evaluations:
            row["evaluations"] = evaluations
        rows.append(row)
    return rows


def _plain(value: Any) -> Any:
    return value if value is None or isinstance(value, str | int | float | bool) else str(value)


def span_evaluations(span: Span) -> list[dict[str, Any]]:
    """The span's ``gen_ai.evaluation.result`` events as plain dicts: metric, score, label,
    explanation, error (the event's text is untrusted: views show it as text)."""
    out = []
    for event in span.events:
        if event.name != EVALUATION_EVENT:
            continue
        attrs = event.attributes
        score = attrs.get("gen_ai.evaluation.score.value")
        out.append(
            {
                "metric": str(attrs.get("gen_ai.evaluation.name") or "evaluation"),
                "score": score
                if isinstance(score, int | float) and not isinstance(score, bool)
                else None,
                "label": _plain(attrs.get("gen_ai.evaluation.score.label")),
                "explanation": _plain(attrs.get("gen_ai.evaluation.explanation")),
                "error": _plain(attrs.get("error.type")),
            }
        )
    return out


def span_row(trace: Trace, span: Span) -> dict[str, Any]:
    """One span's ``TREE_KEYS`` values (also the first columns of a span's result row)."""
    return {
        "span_id": span.span_id,
        "parent_id": span.parent_id,
        "name": span.name,
        "kind": span.kind,
        "status": span.status.code,
        "duration_ms": round(span.duration_ms, 3),
        "depth": trace.depth(span),
    }
