"""Showing results in a notebook: the live views in a kernel, static text and HTML elsewhere.

``EvalResult._repr_mimebundle_`` calls :func:`result_mimebundle`, so a result at the end of a
cell shows as its table; the bundle always carries deterministic ``text/plain`` and escaped
``text/html`` so nbval, GitHub, nbviewer and exported HTML read the same thing.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = ["display_eval_result", "display_explanations", "explanation_views", "result_mimebundle"]

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
    from .widgets._assets import BundleMissingError
    from .widgets._source import as_source
    from .widgets._static import table_html, table_text

    if _in_kernel():
        from .widgets import ResultTable

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
    from .widgets import Explanation, PairwiseView
    from .widgets._source import as_source

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
