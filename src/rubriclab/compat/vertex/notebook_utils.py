"""``notebook_utils``: Vertex's display helpers, drawing our widgets instead of raw HTML.

Vertex builds HTML from model output without escaping it; ours put every model text in the
page as text (see :mod:`rubriclab.widgets.display`), with a static HTML form for exported
notebooks.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...widgets import display

__all__ = ["display_bar_plot", "display_eval_result", "display_explanations", "display_radar_plot"]


def _ours(eval_result: Any) -> Any:
    """The rubriclab result behind a Vertex-style result (or the value itself)."""
    inner = getattr(eval_result, "result", None)
    return inner if inner is not None and hasattr(inner, "table") else eval_result


def _matching(ours: Any, metrics: Sequence[str] | None) -> list[str] | None:
    """Vertex's filter: the metrics whose names contain any of the given substrings."""
    if metrics is None:
        return None
    if isinstance(metrics, str):
        metrics = [metrics]
    names = [m.name for m in ours.metrics]
    picked = [n for n in names if any(str(part) in n for part in metrics)]
    if not picked:
        raise ValueError(
            f"no metric name contains any of {list(metrics)}; the metrics are: {', '.join(names)}"
        )
    return picked


def display_eval_result(
    eval_result: Any, title: str | None = None, metrics: Sequence[str] | None = None
) -> None:
    """Show the summary and the sortable, filterable result table. ``metrics`` are name
    substrings, as in vertexai (``["fluency"]`` picks ``pairwise_fluency`` too)."""
    ours = _ours(eval_result)
    display.display_eval_result(ours, title=title, metrics=_matching(ours, metrics))


def display_explanations(
    eval_result: Any,
    num: int = 1,
    metrics: Sequence[str] | None = None,
    *,
    seed: int | None = 0,
) -> None:
    """Show ``num`` rows drawn at random (as vertexai does: ``metrics_table.sample(n=num)``) with
    each rubric question's verdict and the raw critique. ``seed`` makes the draw repeatable
    (None: a new draw each call, like vertexai); ``num`` above the row count shows every row."""
    if num < 1:
        raise ValueError(f"num must be greater than 0, got {num}")
    ours = _ours(eval_result)
    table = ours.table
    picked = table.reset_index(drop=True).sample(n=min(num, len(table)), random_state=seed)
    picked_metrics = _matching(ours, metrics)
    display.display_explanations(ours, num=num, metrics=picked_metrics, rows=picked.index.tolist())


def display_radar_plot(
    eval_results_with_title: Sequence[tuple[str, Any]],
    metrics: Sequence[str] | None = None,
    radar_range: tuple[float, float] = (0, 5),
) -> None:
    """Vertex draws a radar of summary metrics per run; we draw the same comparison as bars
    (one per run and metric, with std or interval), which read more exactly than a radar.
    ``radar_range`` (vertexai's axis range) is checked, but our bars always show each mean as
    a share of its own scale, so it does not change the chart."""
    low, high = _range(radar_range)
    if not low < high:
        raise ValueError(f"radar_range must be (low, high) with low < high, got {radar_range!r}")
    display.display_runs([(t, _ours(r)) for t, r in eval_results_with_title], metrics=metrics)


def _range(value: Any) -> tuple[float, float]:
    try:
        low, high = value
        return float(low), float(high)
    except (TypeError, ValueError):
        raise ValueError(f"radar_range must be two numbers (low, high), got {value!r}") from None


def display_bar_plot(
    eval_results_with_title: Sequence[tuple[str, Any]], metrics: Sequence[str]
) -> None:
    """The listed metrics across runs as bars (mean score, or win rate for a pairwise metric).
    ``metrics`` is a list, as in vertexai; one name as text is taken as a list of one."""
    names = [metrics] if isinstance(metrics, str) else list(metrics)
    display.display_runs([(t, _ours(r)) for t, r in eval_results_with_title], metrics=names)
