"""A trace's tree (the ``trace_tree`` rows of :func:`rubriclab.traces.trace_tree`) as static,
escaped HTML, with the judged span marked and each span's scores under it (metric, score or
label, pass/fail, the explanation folded in a ``<details>``).

It works anywhere static HTML does (GitHub, nbviewer, exported reports); every name and status
from the trace is escaped, because span names and messages come from the agent and are
untrusted.
"""

from __future__ import annotations

import html
import math
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["score_text", "trace_tree_html"]

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


def score_text(score: Mapping[str, Any]) -> str:
    """One score on a span in words: ``metric 0.80 pass``, ``metric error: ...``."""
    bits = [str(score.get("metric") or "")]
    value = score.get("score")
    if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
        bits.append(f"{value:.2f}")
    label = score.get("label")
    passed = score.get("passed")
    if isinstance(passed, bool):
        bits.append("pass" if passed else "fail")
    elif label:
        bits.append(str(label))
    if score.get("error"):
        bits.append(f"error: {score['error']}")
    return " ".join(b for b in bits if b)


def _scores_html(scores: Any, depth: int) -> str:
    if not isinstance(scores, list | tuple) or not scores:
        return ""
    out = []
    for score in scores:
        if not isinstance(score, Mapping):
            continue
        passed = score.get("passed")
        colour = "#2b8a3e" if passed is True else "#c92a2a" if passed is False else "#495057"
        why = score.get("explanation") or score.get("error")
        head = f'<span style="color:{colour};font-weight:600">{_text(score_text(score))}</span>'
        body = (
            f"<details><summary>{head}</summary>"
            f'<div style="white-space:pre-wrap;opacity:.8">{_text(why)}</div></details>'
            if why
            else head
        )
        out.append(
            f'<li class="rl-span-score" style="padding-left:{1.25 * depth + 1.5:.2f}em;'
            f'font-size:.9em">{body}</li>'
        )
    return "".join(out)


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
        items.append(_scores_html(row.get("scores"), _depth(row.get("depth"))))
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
