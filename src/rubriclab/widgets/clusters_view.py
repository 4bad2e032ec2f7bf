"""``ClustersView``: failure clusters largest first, each opening onto its rows.

Static HTML with no scripts: each cluster is a ``<details>`` element, so the drill-down works in
a notebook, an exported page, GitHub and nbviewer alike. Prompts, responses and the judge's
reasons are model or user text: escaped, and cut to a readable length.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..scale import format_count
from ._static.common import BG2, BORDER, MUTED, TD, TH, WRAP, esc, mock_html

if TYPE_CHECKING:
    from ..result.clusters import FailureClusters

__all__ = ["ClustersView", "clusters_html", "clusters_mimebundle"]

ROWS_SHOWN = 20
CLIP = 240


def _records(frame: Any) -> list[dict[str, Any]]:
    return [{str(k): v for k, v in r.items()} for r in frame.to_dict("records")]


def _clip(value: Any, limit: int = CLIP) -> str:
    text = "" if value is None else " ".join(str(value).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _bar(share: float, width: int = 120) -> str:
    filled = max(1, round(width * share)) if share > 0 else 0
    return (
        f'<svg width="{width}" height="10" role="img" aria-label="{100 * share:.0f}% of failing '
        f'rows"><rect width="{width}" height="10" fill="{BORDER}"/><rect width="{filled}" '
        'height="10" fill="#e45756"/></svg>'
    )


def clusters_html(fc: FailureClusters, title: str = "") -> str:
    """Failure clusters as HTML with no scripts."""
    table = fc.result.table
    out = [f'<div class="rubriclab-static rl-clusters-static" style="{WRAP}">']
    out.append(mock_html(fc.is_mock, str(fc.result.judge)))
    heading = title or f"Why {fc.metric} fails"
    out.append(f'<div style="font-weight:600; font-size:14px;">{esc(heading)}</div>')
    out.append(
        f'<div style="color:{MUTED}; margin:2px 0 8px;">{len(fc.failing)} failing of '
        f"{format_count(fc.judged_rows, 'judged row')} ({esc(fc.rule)}) in "
        f"{format_count(len(fc.clusters), 'cluster')}, "
        f"largest first · grouped by the criterion that failed each row, then by the words of "
        f"the judge's reasons · {format_count(fc.errors, 'row')} with errors left out</div>"
    )
    if fc.clusters.empty:
        out.append("<div>No failing rows.</div></div>")
        return "".join(out)
    for c in _records(fc.clusters):
        size, share, number = int(c["size"]), float(c["share"]), int(c["cluster"])
        judge = (
            f' <span style="color:{MUTED};">· judge\'s summary: <i>{esc(c["judge_name"])}</i></span>'
            if c["judge_name"]
            else ""
        )
        out.append(
            f'<details class="rl-cluster" style="border:1px solid {BORDER}; border-radius:4px; '
            f'margin:4px 0; padding:4px 8px;"><summary style="cursor:pointer;">'
            f"{_bar(share)} <b>{size}</b> rows ({100 * share:.0f}%) · "
            f'<span style="color:{MUTED};">{esc(c["criterion"])}</span> · {esc(c["name"])}{judge}'
            "</summary>"
        )
        members = fc.failing[fc.failing["cluster"] == number].head(ROWS_SHOWN)
        head = "".join(
            f'<th style="{TH}">{h}</th>' for h in ("row", "prompt", "response", "judge's reason")
        )
        body = []
        for m in _records(members):
            record = table.iloc[int(m["row"])]
            body.append(
                "<tr>"
                f'<td style="{TD}">{int(m["row"])}</td>'
                f'<td style="{TD}">{esc(_clip(record.get("prompt")))}</td>'
                f'<td style="{TD}">{esc(_clip(record.get("response")))}</td>'
                f'<td style="{TD} background:{BG2};">{esc(_clip(m["reason"], 400))}</td>'
                "</tr>"
            )
        more = size - len(members)
        tail = (
            f'<div style="color:{MUTED};">… and {more} more (clusters.rows({number}))</div>'
            if more > 0
            else ""
        )
        out.append(
            f'<table style="border-collapse:collapse; margin:6px 0;"><tr>{head}</tr>'
            f"{''.join(body)}</table>{tail}</details>"
        )
    out.extend(f'<div style="color:{MUTED};">{esc(n)}</div>' for n in fc.notes)
    out.append("</div>")
    return "".join(out)


def clusters_mimebundle(fc: FailureClusters) -> dict[str, Any]:
    """What ``FailureClusters`` shows at the end of a cell: its summary text and static HTML."""
    return {"text/plain": fc.summary_text(), "text/html": clusters_html(fc)}


class ClustersView:
    """Shows ``result.failure_clusters(metric)``: clusters largest first, rows on opening."""

    def __init__(self, clusters: FailureClusters, *, title: str | None = None) -> None:
        self.clusters = clusters
        self.title = title or ""

    def static_html(self) -> str:
        return clusters_html(self.clusters, self.title)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        return {"text/plain": self.clusters.summary_text(), "text/html": self.static_html()}
