"""``ResultTable``'s static form: the summary and the first rows as text and as an HTML table."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ...columns import SWAP_CONSISTENT, field_of, preview
from ...scale import format_count
from .._cells import cell, columns_payload
from .._source import Source
from .common import (
    MOCK_TEXT,
    MUTED,
    TD,
    TH,
    WRAP,
    esc,
    fmt_cost,
    fmt_count,
    fmt_int,
    fmt_pass_rule,
    fmt_rate,
    fmt_score,
    fmt_std,
    mock_html,
)

__all__ = ["summary_text", "table_html", "table_text"]


def _summary_cells(row: Mapping[str, Any]) -> list[str]:
    pairwise = row.get("kind") == "pairwise"
    mean = fmt_score(row.get("mean"), "pairwise" if pairwise else "pointwise")
    std = fmt_std(row.get("std"))
    if not pairwise and std:
        mean += f" {std}"
    rule = fmt_pass_rule(row)
    return [
        str(row.get("metric", "")),
        str(row.get("kind", "")),
        fmt_int(row.get("n")),
        mean,
        "—" if pairwise else _pass_cell(row, rule),
        fmt_count(row, "win_rate", "wins") if pairwise else "—",
        fmt_count(row, "tie_rate", "ties") if pairwise else "—",
        fmt_count(row, "loss_rate", "losses") if pairwise else "—",
        fmt_int(row.get("errors")),
        fmt_int(row.get("tokens")),
        fmt_cost(row.get("cost")),
    ]


def _pass_cell(row: Mapping[str, Any], rule: str) -> str:
    if row.get("has_pass_mark") is False:  # cannot pass: no pass rate (never "0%")
        fails = row.get("critical_fails")
        more = (
            f" ({fmt_int(fails)} failed a critical item)"
            if isinstance(fails, int | float) and fails
            else ""
        )
        return f"no pass mark{more}"
    return fmt_rate(row, "pass_rate") + (f" ({rule})" if rule else "")


_SUMMARY_HEAD = [
    "metric",
    "kind",
    "n",
    "mean",
    "pass rate",
    "win",
    "tie",
    "loss",
    "errors",
    "tokens",
    "cost",
]


def summary_text(summary: Sequence[Mapping[str, Any]]) -> str:
    rows = [_SUMMARY_HEAD, *(_summary_cells(r) for r in summary)]
    widths = [max(len(r[i]) for r in rows) for i in range(len(_SUMMARY_HEAD))]
    return "\n".join(
        "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows
    )


def _shown_columns(source: Source) -> list[dict[str, Any]]:
    cols, visible = columns_payload(source)
    return [c for c in cols if c["key"] in visible]


def _cell_text(col: Mapping[str, Any], value: Any) -> str:
    shown = cell(str(col["kind"]), str(col["key"]), value)
    if shown is None:
        return ""
    if col["kind"] == "score":
        return fmt_score(shown, str(col.get("metric_kind", "pointwise")))
    if col["kind"] == "bool":
        if field_of(str(col["key"])) == SWAP_CONSISTENT:
            return "agree" if shown else "disagree"
        return "yes" if shown else "no"
    if isinstance(shown, float):
        return f"{shown:g}"
    return str(shown)


def table_text(source: Source, title: str = "", max_rows: int = 10) -> str:
    n = len(source.table)
    names = ", ".join(m.name for m in source.metrics) or "none"
    lines = []
    if source.is_mock:
        lines.append(MOCK_TEXT)
    if title:
        lines.append(title)
    lines.append(f"EvalResult: {format_count(n, 'row')}; metrics: {names}")
    if source.judge:
        lines.append(f"judge: {source.judge}")
    if source.summary:
        lines.append(summary_text(source.summary))
    cols = _shown_columns(source)[1:]
    if cols and n:
        lines.append("")
        for pos in range(min(n, max_rows)):
            row = source.table.iloc[pos]
            parts = [f"{c['label']}={preview(_cell_text(c, row[c['key']]), 40)}" for c in cols]
            lines.append(f"[{pos}] " + "; ".join(parts))
        if n > max_rows:
            lines.append(f"... {n - max_rows:,} more rows")
    return "\n".join(lines)


def table_html(source: Source, title: str = "", max_rows: int = 20) -> str:
    n = len(source.table)
    out = [
        f'<div class="rubriclab-static rl-table-static" style="{WRAP}">',
        mock_html(source.is_mock),  # the judge is named once, on the rows line below
    ]
    if title:
        out.append(
            f'<div style="font-weight:600; font-size:15px; margin-bottom:4px;">{esc(title)}</div>'
        )
    judge = f" · judge {esc(source.judge)}" if source.judge else ""
    out.append(
        f'<div style="color:{MUTED}; margin-bottom:4px;">{format_count(n, "row")}{judge}</div>'
    )
    if source.summary:
        out.append(
            '<table class="rl-summary-static" style="border-collapse:collapse; margin-bottom:10px;"><thead><tr>'
        )
        out.extend(f'<th style="{TH}">{esc(h)}</th>' for h in _SUMMARY_HEAD)
        out.append("</tr></thead><tbody>")
        for row in source.summary:
            out.append(
                "<tr>"
                + "".join(f'<td style="{TD}">{esc(c)}</td>' for c in _summary_cells(row))
                + "</tr>"
            )
        out.append("</tbody></table>")
    cols = _shown_columns(source)
    out.append('<table class="rl-rows-static" style="border-collapse:collapse;"><thead><tr>')
    out.extend(f'<th style="{TH}{_col_style(c)}">{_head_html(c)}</th>' for c in cols)
    out.append("</tr></thead><tbody>")
    for pos in range(min(n, max_rows)):
        record = source.table.iloc[pos]
        cells = [esc(source.table.index[pos])] + [
            esc(preview(_cell_text(c, record[c["key"]]), 160)) for c in cols[1:]
        ]
        out.append(
            "<tr>"
            + "".join(
                f'<td style="{TD}{_col_style(col)}">{c}</td>'
                for col, c in zip(cols, cells, strict=True)
            )
            + "</tr>"
        )
    out.append("</tbody></table>")
    if n > max_rows:
        out.append(
            f'<div style="color:{MUTED}; margin-top:4px;">… {n - max_rows:,} more rows (run the notebook to browse them all)</div>'
        )
    out.append("</div>")
    return "".join(out)


def _col_style(col: Mapping[str, Any]) -> str:
    """Prose gets room (wraps between 220 and 480 px); scores, verdicts and flags stay narrow."""
    if col.get("kind") == "text":
        return " min-width:220px; max-width:480px; overflow-wrap:anywhere;"
    if col.get("kind") in ("verdict", "error", "list"):
        return " min-width:90px; max-width:260px; overflow-wrap:anywhere;"
    return " white-space:nowrap;"


def _head_html(col: Mapping[str, Any]) -> str:
    """``metric/field`` headers on two lines (metric small above the field), so a long metric
    name never widens its column."""
    metric, field = col.get("metric"), col.get("field")
    if metric and field:
        return (
            f'<div style="font-weight:400; font-size:11px; overflow-wrap:anywhere;">{esc(metric)}</div>'
            f"<div>{esc(field)}</div>"
        )
    return esc(col.get("label"))
