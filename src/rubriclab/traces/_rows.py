"""A trace as plain tree rows: what a result table keeps of the trace a row was judged from.

Result rows carry these rows (the ``trace_tree`` column) so a view can show where the judged
span sits without holding the trace; plain values only, so they survive JSON and Parquet.
Drawing them is the views' job (``rubriclab.widgets.trace_view``).
"""

from __future__ import annotations

from typing import Any

from ._model import Span
from ._tree import Trace

__all__ = ["TREE_KEYS", "span_row", "trace_tree"]

#: the keys of one tree row, in display order
TREE_KEYS = ("span_id", "parent_id", "name", "kind", "status", "duration_ms", "depth")


def trace_tree(trace: Trace) -> list[dict[str, Any]]:
    """One row per span, depth-first (a parent before its children): ids, name, kind, status,
    duration and depth. Plain values only, so the rows survive JSON and Parquet round trips."""
    return [span_row(trace, span) for span in trace.walk()]


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
