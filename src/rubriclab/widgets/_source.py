"""What a view reads: an ``EvalResult`` (or a bare result table), normalised once.

Views accept either, so a table filtered with pandas can be looked at without rebuilding a
result; metrics are then read off the ``{metric}/score`` columns.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from ..columns import PAIRWISE_CHOICE, PASSED, SCORE, TOKENS, col, field_of, metric_of
from ..rubric import Rubric
from ..scoring import summarize

__all__ = ["MetricRef", "Source", "as_source"]


@dataclass(frozen=True)
class MetricRef:
    """A metric as the views need it: name, kind, and its fixed rubric (if any)."""

    name: str
    kind: str = "pointwise"
    rubric: Rubric | None = None


@dataclass
class Source:
    table: pd.DataFrame
    metrics: list[MetricRef]
    summary: list[dict[str, Any]] = field(default_factory=list)
    is_mock: bool = False
    judge: str = ""

    def metric(self, name: str) -> MetricRef:
        for m in self.metrics:
            if m.name == name:
                return m
        names = ", ".join(m.name for m in self.metrics) or "none"
        raise KeyError(f"no metric {name!r} in this result (metrics: {names})")


def as_source(result: Any, metrics: Sequence[str] | None = None) -> Source:
    """Read an ``EvalResult`` or a DataFrame; ``metrics`` picks (and orders) metrics by name."""
    if isinstance(result, pd.DataFrame):
        table = result
        refs = _metrics_from_columns(table)
        is_mock, judge, summary_frame = False, "", None
    elif hasattr(result, "table") and isinstance(result.table, pd.DataFrame):
        table = result.table
        refs = [
            MetricRef(str(m.name), str(getattr(m, "kind", "pointwise")), getattr(m, "rubric", None))
            for m in getattr(result, "metrics", [])
        ] or _metrics_from_columns(table)
        is_mock = bool(getattr(result, "is_mock", False))
        judge = str(getattr(result, "judge", "") or "")
        summary_frame = getattr(result, "summary", None)
    else:
        raise TypeError(
            f"expected an EvalResult or a pandas DataFrame, got {type(result).__name__}; "
            "pass the value rl.evaluate(...) returned"
        )
    if metrics is not None:
        wanted = [metrics] if isinstance(metrics, str) else list(metrics)
        known = {m.name: m for m in refs}
        missing = [name for name in wanted if name not in known]
        if missing:
            raise KeyError(
                f"no metric {', '.join(map(repr, missing))} in this result "
                f"(metrics: {', '.join(known) or 'none'})"
            )
        refs = [known[name] for name in wanted]
    summary = _summary_rows(table, refs, summary_frame)
    return Source(table=table, metrics=refs, summary=summary, is_mock=is_mock, judge=judge)


def _metrics_from_columns(table: pd.DataFrame) -> list[MetricRef]:
    refs = []
    for column in table.columns:
        name = str(column)
        metric = metric_of(name)
        if metric is not None and field_of(name) == SCORE:
            kind = "pairwise" if col(metric, PAIRWISE_CHOICE) in table.columns else "pointwise"
            refs.append(MetricRef(metric, kind))
    return refs


def _summary_rows(
    table: pd.DataFrame, refs: Sequence[MetricRef], frame: Any
) -> list[dict[str, Any]]:
    """One JSON-safe dict per metric: the result's own summary, or one computed from the table."""
    rows: list[dict[str, Any]] = []
    for ref in refs:
        row: dict[str, Any]
        if isinstance(frame, pd.DataFrame) and ref.name in frame.index:
            row = {str(k): _num(v) for k, v in frame.loc[ref.name].items()}
        else:
            scores = table[col(ref.name, SCORE)].tolist()
            passed_col = col(ref.name, PASSED)
            passed = table[passed_col].tolist() if passed_col in table.columns else None
            pairwise = ref.kind == "pairwise"
            flat = summarize(
                scores, passed=None if pairwise else passed, choices=scores if pairwise else None
            ).as_flat_dict()
            row = {k: _num(v) for k, v in flat.items()}
            tokens_col = col(ref.name, TOKENS)
            if tokens_col in table.columns:
                row["tokens"] = _num(pd.to_numeric(table[tokens_col], errors="coerce").sum())
        row["metric"] = ref.name
        row["kind"] = ref.kind
        rows.append(row)
    return rows


def _num(value: Any) -> Any:
    """Numbers and strings pass; NaN and missing become None (JSON has no NaN)."""
    if value is None:
        return None
    if isinstance(value, bool | str):
        return value
    if type(value).__name__ == "bool" or type(value).__name__ == "bool_":  # numpy's bool
        return bool(value)
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    if math.isnan(number) or math.isinf(number):
        return None
    return int(number) if float(number).is_integer() and not isinstance(value, float) else number
