"""Showing results in a notebook: the live views in a kernel, static text and HTML elsewhere.

``EvalResult._repr_mimebundle_`` calls :func:`result_mimebundle` (through the results layer's
presentation hook, :mod:`rubriclab.widgets.presentation`), so a result at the end of a cell
shows as its table; the bundle always carries deterministic ``text/plain`` and escaped
``text/html`` so nbval, GitHub, nbviewer and exported HTML read the same thing.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from ..columns import ERROR, field_of
from ..scale import format_count
from ._assets import BundleMissingError
from ._file_rows import is_big_file
from ._source import as_source
from ._static.common import esc, fmt_rate, fmt_score, fmt_std
from ._static.table import table_html, table_text
from ._svg import runs_svg
from .explanation import Explanation
from .pairwise_view import PairwiseView
from .result_table import ResultTable

__all__ = [
    "display_eval_result",
    "display_explanations",
    "display_runs",
    "explanation_views",
    "last_live_rows",
    "live_evaluate",
    "result_mimebundle",
    "runs_mimebundle",
]

WIDGET_MIME = "application/vnd.jupyter.widget-view+json"


def _in_kernel() -> bool:
    """True inside a Jupyter kernel (where a widget can render), False in scripts and terminals."""
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython is a dependency
        return False
    shell = get_ipython()
    return shell is not None and getattr(shell, "kernel", None) is not None


def result_mimebundle(
    result: Any, title: str | None = None, metrics: Sequence[str] | None = None
) -> dict[str, Any]:
    """The MIME bundle for a result: live ``ResultTable`` in a kernel plus static forms."""
    if is_big_file(result) and not _in_kernel():
        # outside a kernel a big file shows its summary, never its million rows
        data: dict[str, Any] = result._repr_mimebundle_()
        return data
    if _in_kernel():
        try:
            data, _meta = ResultTable(result, title=title, metrics=metrics)._repr_mimebundle_()
        except BundleMissingError as exc:
            source = as_source(result, metrics)
            return {
                "text/plain": f"{table_text(source, title or '')}\n({exc})",
                "text/html": table_html(source, title or ""),
            }
        return data
    source = as_source(result, metrics)
    return {
        "text/plain": table_text(source, title or ""),
        "text/html": table_html(source, title or ""),
    }


def _show(data: dict[str, Any]) -> None:
    """Publish a bundle: through IPython when a shell runs, else print its text form."""
    from IPython.core.interactiveshell import InteractiveShell
    from IPython.display import display

    if InteractiveShell.initialized():
        display(data, raw=True)  # type: ignore[no-untyped-call]
    else:
        print(data["text/plain"])


def display_eval_result(
    result: Any, title: str | None = None, metrics: Sequence[str] | None = None
) -> None:
    """Show the result table (summary, sortable and filterable rows) in the notebook."""
    _show(result_mimebundle(result, title=title, metrics=metrics))


def explanation_views(
    result: Any,
    num: int = 1,
    metrics: Sequence[str] | None = None,
    *,
    rows: Sequence[int] | None = None,
) -> list[Any]:
    """One ``Explanation`` per case for the first ``num`` rows, or for the row positions in
    ``rows`` (pairwise metrics get a ``PairwiseView`` when asked for alone)."""
    if num < 1:
        raise ValueError(f"num must be at least 1, got {num}")
    source = as_source(result, metrics)
    if rows is None:
        rows = range(min(num, len(source.table)))
    elif any(not 0 <= i < len(source.table) for i in rows):
        raise ValueError(f"rows must be positions from 0 to {len(source.table) - 1}, got {rows}")
    if len(source.metrics) == 1 and source.metrics[0].kind == "pairwise":
        return [PairwiseView(result, source.metrics[0].name, index=i) for i in rows]
    names = [m.name for m in source.metrics]
    return [Explanation(result, index=i, metrics=names) for i in rows]


def display_explanations(
    result: Any,
    num: int = 1,
    metrics: Sequence[str] | None = None,
    *,
    rows: Sequence[int] | None = None,
) -> None:
    """Show the first ``num`` cases (or those at ``rows``) with every criterion's level,
    evidence and reasoning."""
    for view in explanation_views(result, num=num, metrics=metrics, rows=rows):
        data, _meta = view._repr_mimebundle_()
        if not _in_kernel():
            data.pop(WIDGET_MIME, None)
        _show(data)


# -- several runs --------------------------------------------------------------------------------
def runs_mimebundle(
    results_with_title: Sequence[tuple[str, Any]], metrics: Sequence[str] | None = None
) -> dict[str, Any]:
    """Runs compared as text and as an inline SVG bar chart (mean or win rate per metric)."""
    if not results_with_title:
        raise ValueError("give at least one (title, result) pair to compare")
    runs = []
    lines = []
    for title, result in results_with_title:
        source = as_source(getattr(result, "result", result), metrics)
        runs.append((str(title), source.summary))
        for row in source.summary:
            if row.get("kind") == "pairwise":
                shown = f"win {fmt_rate(row, 'win_rate')}"
            else:
                shown = f"mean {fmt_score(row.get('mean'))} {fmt_std(row.get('std'))}".rstrip()
            lines.append(f"{title} · {row.get('metric')}: {shown}")
    legend = "".join(f"<li>{esc(line)}</li>" for line in lines)
    html = (
        '<div class="rubriclab-static rl-runs-static">'
        f'{runs_svg(runs)}<ul style="font-size:12px; margin:4px 0;">{legend}</ul></div>'
    )
    return {"text/plain": "\n".join(lines), "text/html": html}


def display_runs(
    results_with_title: Sequence[tuple[str, Any]], metrics: Sequence[str] | None = None
) -> None:
    """Show several results side by side: one bar per run for each metric."""
    _show(runs_mimebundle(results_with_title, metrics))


# -- live runs ---------------------------------------------------------------------------------
LIVE_INTERVAL_S = 0.5
_last_live: dict[str, Any] = {}


def last_live_rows() -> Any:
    """The rows a live run (``evaluate(..., display=True)``) finished before it stopped, as a
    DataFrame (None before any live run)."""
    return _last_live.get("rows")


class _LiveRun:
    """Collects finished blocks of rows and shows them: in a notebook as a ``ResultTable`` that
    fills (throttled to a few updates a second), elsewhere as a line of text on stderr."""

    def __init__(self, total: int | None) -> None:
        self.total = total
        self.parts: list[Any] = []
        self.done = 0
        self.errors = 0
        self.view: Any = None
        self._shown = 0.0
        self._lock = threading.Lock()
        if _in_kernel():
            import pandas as pd

            self.view = ResultTable(pd.DataFrame({"prompt": pd.Series([], dtype=object)}))
            with self.view.hold_sync():  # rows come in `live` until the run frees the kernel
                self.view.progress = self._progress("running")
                self.view.live = {
                    "rows": [],
                    "columns": self.view.visible,
                    "total": 0,
                    "charts": [],
                }
            data, _meta = self.view._repr_mimebundle_()
            _show(data)

    def _progress(self, state: str, message: str = "") -> dict[str, Any]:
        total = self.total if self.total is not None else self.done
        return {
            "done": self.done,
            "total": max(total, self.done),
            "errors": self.errors,
            "state": state,
            "message": message,
        }

    def rows(self) -> Any:
        import pandas as pd

        return pd.concat(self.parts) if self.parts else None

    def on_rows(self, part: Any) -> None:
        with self._lock:
            self.parts.append(part)
            self.done += len(part)
            self.errors += _error_rows(part)
            now = time.monotonic()
            if self.total is not None and self.done >= self.total:
                return  # the final result follows at once
            if now - self._shown < LIVE_INTERVAL_S and self.done != len(part):
                return
            self._shown = now
            if self.view is not None:
                self.view.update(self.rows(), self._progress("running"))
            else:
                total = "?" if self.total is None else f"{self.total:,}"
                sys.stderr.write(
                    f"\rrubriclab: {self.done:,} of {total} {'row' if self.total == 1 else 'rows'}"
                    f" · {format_count(self.errors, 'error')}"
                )

    def finish(self, result: Any) -> None:
        _last_live["rows"] = result.table
        if self.view is not None:
            self.view.update(result, self._progress("finished"))
        elif self.parts:
            sys.stderr.write("\n")

    def stop(self, state: str, message: str = "") -> None:
        rows = self.rows()
        _last_live["rows"] = rows
        if self.view is not None and rows is not None:
            self.view.update(rows, self._progress(state, message))
        elif self.view is not None:
            self.view.progress = self._progress(state, message)
        kept = f"the {self.done:,} finished rows" if self.done else "no finished rows"
        sys.stderr.write(
            f"\nrubriclab: run {state}; {kept} stay in the live table "
            "(rubriclab.widgets.display.last_live_rows() returns them as a DataFrame).\n"
        )


def _error_rows(part: Any) -> int:
    cols = [c for c in part.columns if field_of(str(c)) == ERROR]
    if not cols:
        return 0
    flags = part[cols].apply(lambda col: col.map(lambda v: isinstance(v, str) and bool(v.strip())))
    return int(flags.any(axis=1).sum())


def live_evaluate(run: Callable[[Callable[[Any], None]], Any], rows: int | None = None) -> Any:
    """Run ``run(on_rows)`` (an evaluate with a row hook) with a live view of the rows as they
    finish; returns what ``run`` returns. Ctrl-C or an error keeps the finished rows shown."""
    live = _LiveRun(rows)
    try:
        result = run(live.on_rows)
    except KeyboardInterrupt:
        live.stop("interrupted")
        raise
    except Exception as exc:
        live.stop("failed", f"{type(exc).__name__}: {exc}")
        raise
    live.finish(result)
    return result
