"""A trace's tree (the ``trace_tree`` rows of :func:`rubriclab.traces.trace_tree`) as static,
escaped HTML, with the judged span marked.

It works anywhere static HTML does (GitHub, nbviewer, exported reports); every name and status
from the trace is escaped, because span names and messages come from the agent and are
untrusted.
"""

from __future__ import annotations

import html
import math
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["trace_tree_html"]

_MAX_INDENT = 32  # deeper spans are drawn at this depth (the depth number is still shown)


def _duration(value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return ""
    if abs(value) >= 1000:
        return f"{value / 1000:.2f} s"
    return f"{value:.0f} ms"


def _depth(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return 0
    return max(0, min(int(value), _MAX_INDENT))


def _text(value: Any) -> str:
    return "" if value is None else html.escape(str(value), quote=True)


def trace_tree_html(tree: Sequence[Mapping[str, Any]] | None, highlight: str | None = None) -> str:
    """The tree as an indented HTML list; the span whose id is ``highlight`` is marked.

    ``tree`` is a ``trace_tree`` column value (or :func:`trace_tree` output). Everything taken
    from it is escaped; a missing tree gives a short note rather than an error, since a view
    should still show the rest of the row.
    """
    if not tree:
        return '<div class="rl-trace-tree rl-empty">(no trace tree for this row)</div>'
    items = []
    found = False
    for row in tree:
        if not isinstance(row, Mapping):
            continue
        judged = highlight is not None and str(row.get("span_id")) == str(highlight)
        found = found or judged
        status = str(row.get("status") or "unset")
        classes = ["rl-span", f"rl-status-{'error' if status == 'error' else 'other'}"]
        style = f"padding-left:{1.25 * _depth(row.get('depth')):.2f}em"
        if judged:
            classes.append("rl-span-judged")
            style += ";background:#fff3bf;font-weight:600;outline:1px solid #f59f00"
        if status == "error":
            style += ";color:#c92a2a"
        marker = ' <span class="rl-judged-marker">&#9664; judged</span>' if judged else ""
        items.append(
            f'<li class="{" ".join(classes)}" style="{style}" '
            f'data-span-id="{_text(row.get("span_id"))}"'
            f"{' aria-current=true' if judged else ''}>"
            f'<span class="rl-span-kind" style="font-family:monospace;opacity:.7">'
            f"{_text(row.get('kind'))}</span> "
            f'<span class="rl-span-name">{_text(row.get("name"))}</span> '
            f'<span class="rl-span-meta" style="opacity:.7">{_text(status)}'
            f"{' · ' + _duration(row.get('duration_ms')) if _duration(row.get('duration_ms')) else ''}"
            f"</span>{marker}</li>"
        )
    note = ""
    if highlight is not None and not found:
        note = (
            '<div class="rl-trace-note" style="opacity:.7">'
            f"(judged span {_text(highlight)} is not in this tree)</div>"
        )
    return (
        '<div class="rl-trace-tree"><ul style="list-style:none;margin:0;padding:0">'
        + "".join(items)
        + "</ul>"
        + note
        + "</div>"
    )
