"""Static forms of the views: deterministic ``text/plain`` and escaped ``text/html``.

These are what GitHub, nbviewer, exported HTML and a reopened notebook without a kernel show,
and what nbval compares. Every piece of data goes through ``html.escape``; nothing here runs.
"""

from __future__ import annotations

import html
import math
from collections.abc import Mapping, Sequence
from typing import Any

from ..rubric import Rubric
from ._cells import cell, columns_payload
from ._markdown import looks_like_markdown, markdown_html
from ._source import Source

__all__ = [
    "case_html",
    "case_text",
    "fmt_rate",
    "fmt_score",
    "mock_html",
    "pairwise_html",
    "pairwise_text",
    "rubric_html",
    "rubric_text",
    "summary_text",
    "table_html",
    "table_text",
]

_FG = "var(--jp-ui-font-color1, #333)"
_MUTED = "var(--jp-ui-font-color2, #666)"
_BORDER = "var(--jp-border-color2, #e0e0e0)"
_BG2 = "var(--jp-layout-color1, #fafafa)"
_WRAP = (
    f"font-family: var(--jp-ui-font-family, system-ui, sans-serif); font-size: 13px; color: {_FG};"
)
_TH = f"text-align:left; padding:3px 8px; border-bottom:1px solid {_BORDER}; color:{_MUTED};"
_TD = f"text-align:left; vertical-align:top; padding:3px 8px; border-bottom:1px solid {_BORDER};"
_PRE = f"white-space:pre-wrap; overflow-wrap:anywhere; background:{_BG2}; border:1px solid {_BORDER}; border-radius:4px; padding:5px 8px; margin:2px 0 8px;"
MOCK_TEXT = "MOCK judge: these results come from an offline mock, not a real model."


def esc(value: Any) -> str:
    return html.escape("" if value is None else str(value), quote=True)


def _num(value: Any) -> float | None:
    if value is None or isinstance(value, bool):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(number) or math.isinf(number) else number


def fmt_score(value: Any, kind: str = "pointwise") -> str:
    number = _num(value)
    if number is None:
        return "—"
    if kind == "pairwise":
        return f"{number:+.1f}"
    return f"{100 * number:.1f}%"


def fmt_std(value: Any) -> str:
    """A labelled standard deviation of 0-1 scores: ``± 12.3% std``."""
    number = _num(value)
    return "" if number is None else f"± {100 * number:.1f}% std"


def fmt_pass_rule(row: Mapping[str, Any]) -> str:
    """``31 of 50 with a verdict passed`` when the summary has the counts, else ``""``."""
    passed, verdicts = _num(row.get("passed")), _num(row.get("verdicts"))
    if passed is None or verdicts is None:
        return ""
    n = _num(row.get("n"))
    without = (
        f", {round(n - verdicts):,} without a verdict" if n is not None and n > verdicts else ""
    )
    return f"{round(passed):,} of {round(verdicts):,} with a verdict passed{without}"


def fmt_rate(row: Mapping[str, Any], key: str) -> str:
    rate = _num(row.get(key))
    if rate is None:
        return "—"
    low, high = _num(row.get(f"{key}_low")), _num(row.get(f"{key}_high"))
    iv = f" [{100 * low:.0f}–{100 * high:.0f}%]" if low is not None and high is not None else ""
    return f"{100 * rate:.0f}%{iv}"


def _int(value: Any) -> str:
    number = _num(value)
    return "—" if number is None else f"{round(number):,}"


def _cost(value: Any) -> str:
    number = _num(value)
    return "—" if number is None else f"${number:.4f}" if 0 < number < 0.01 else f"${number:.2f}"


def mock_html(is_mock: bool, judge: str = "") -> str:
    if not is_mock:
        return ""
    who = f" ({esc(judge)})" if judge else ""
    return (
        '<div class="rl-mock" style="border:1px solid var(--jp-warn-color1, #f57c00); '
        "background: color-mix(in srgb, var(--jp-warn-color1, #f57c00) 15%, transparent); "
        'padding:5px 9px; border-radius:6px; font-weight:600; margin-bottom:6px;">'
        f"⚠ MOCK judge{who}: these results come from an offline mock, not a real model.</div>"
    )


# -- the table -------------------------------------------------------------------------------------
def _summary_cells(row: Mapping[str, Any]) -> list[str]:
    pairwise = row.get("kind") == "pairwise"
    mean = "—" if pairwise else fmt_score(row.get("mean"))
    std = fmt_std(row.get("std"))
    if not pairwise and std:
        mean += f" {std}"
    rule = fmt_pass_rule(row)
    return [
        str(row.get("metric", "")),
        str(row.get("kind", "")),
        _int(row.get("n")),
        mean,
        "—" if pairwise else fmt_rate(row, "pass_rate") + (f" ({rule})" if rule else ""),
        fmt_rate(row, "win_rate") if pairwise else "—",
        fmt_rate(row, "tie_rate") if pairwise else "—",
        fmt_rate(row, "loss_rate") if pairwise else "—",
        _int(row.get("errors")),
        _int(row.get("tokens")),
        _cost(row.get("cost")),
    ]


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
        if str(col["key"]).endswith("/swap_consistent"):
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
    lines.append(f"EvalResult: {n:,} rows; metrics: {names}")
    if source.judge:
        lines.append(f"judge: {source.judge}")
    if source.summary:
        lines.append(summary_text(source.summary))
    cols = _shown_columns(source)[1:]
    if cols and n:
        lines.append("")
        for pos in range(min(n, max_rows)):
            row = source.table.iloc[pos]
            parts = [f"{c['label']}={_short(_cell_text(c, row[c['key']]), 40)}" for c in cols]
            lines.append(f"[{pos}] " + "; ".join(parts))
        if n > max_rows:
            lines.append(f"... {n - max_rows:,} more rows")
    return "\n".join(lines)


def table_html(source: Source, title: str = "", max_rows: int = 20) -> str:
    n = len(source.table)
    out = [
        f'<div class="rubriclab-static rl-table-static" style="{_WRAP}">',
        mock_html(source.is_mock, source.judge),
    ]
    if title:
        out.append(
            f'<div style="font-weight:600; font-size:15px; margin-bottom:4px;">{esc(title)}</div>'
        )
    judge = f" · judge {esc(source.judge)}" if source.judge else ""
    out.append(f'<div style="color:{_MUTED}; margin-bottom:4px;">{n:,} rows{judge}</div>')
    if source.summary:
        out.append(
            '<table class="rl-summary-static" style="border-collapse:collapse; margin-bottom:10px;"><thead><tr>'
        )
        out.extend(f'<th style="{_TH}">{esc(h)}</th>' for h in _SUMMARY_HEAD)
        out.append("</tr></thead><tbody>")
        for row in source.summary:
            out.append(
                "<tr>"
                + "".join(f'<td style="{_TD}">{esc(c)}</td>' for c in _summary_cells(row))
                + "</tr>"
            )
        out.append("</tbody></table>")
    cols = _shown_columns(source)
    out.append('<table class="rl-rows-static" style="border-collapse:collapse;"><thead><tr>')
    out.extend(f'<th style="{_TH}{_col_style(c)}">{_head_html(c)}</th>' for c in cols)
    out.append("</tr></thead><tbody>")
    for pos in range(min(n, max_rows)):
        record = source.table.iloc[pos]
        cells = [esc(source.table.index[pos])] + [
            esc(_short(_cell_text(c, record[c["key"]]), 160)) for c in cols[1:]
        ]
        out.append(
            "<tr>"
            + "".join(
                f'<td style="{_TD}{_col_style(col)}">{c}</td>'
                for col, c in zip(cols, cells, strict=True)
            )
            + "</tr>"
        )
    out.append("</tbody></table>")
    if n > max_rows:
        out.append(
            f'<div style="color:{_MUTED}; margin-top:4px;">… {n - max_rows:,} more rows (run the notebook to browse them all)</div>'
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


def _short(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


# -- one case --------------------------------------------------------------------------------------
def _level_text(c: Mapping[str, Any] | None) -> str:
    if not c:
        return "—"
    label = c.get("label")
    if isinstance(label, str) and label.upper() in ("YES", "NO"):
        return label.upper()
    level = c.get("level")
    top = c.get("max_level")
    head = "" if level is None else f"{level}/{top}" if top is not None else str(level)
    return " ".join(p for p in (head, str(label) if label else "") if p) or "—"


def _metric_text(m: Mapping[str, Any]) -> list[str]:
    lines = [
        f"{m['name']} ({m['kind']}): score {fmt_score(m.get('score'), str(m['kind']))}"
        + (f", {m['verdict']}" if m.get("verdict") else "")
    ]
    if m.get("error"):
        lines.append(f"  ERROR: {m['error']}")
    if m.get("kind") == "pairwise":
        if m.get("choice"):
            lines.append(f"  choice: {m['choice']}")
        if m.get("swap_consistent") is not None:
            lines.append(f"  orders agree: {'yes' if m['swap_consistent'] else 'no'}")
        for r in m.get("pair_rows") or []:
            lines.append(f"  - {r['name']}: {r.get('winner') or '—'}")
    else:
        for c in m.get("criteria") or []:
            lines.append(f"  - {c.get('name')}: {_level_text(c)}")
    if m.get("rationale"):
        lines.append(f"  rationale: {_short(str(m['rationale']), 300)}")
    return lines


def case_text(case: Mapping[str, Any], is_mock: bool = False) -> str:
    lines = [MOCK_TEXT] if is_mock else []
    lines.append(str(case.get("heading", "")))
    for f in case.get("fields", []):
        lines.append(f"{f['name']}: {_short(str(f.get('text') or ''), 300)}")
    for m in case.get("metrics", []):
        lines.extend(_metric_text(m))
    return "\n".join(lines)


def _criteria_html(rows: Sequence[Mapping[str, Any]]) -> str:
    if not rows:
        return ""
    out = ['<table style="border-collapse:collapse; margin:4px 0 8px;"><thead><tr>']
    out.extend(
        f'<th style="{_TH}">{h}</th>'
        for h in ("criterion", "result", "weight", "evidence and reasoning")
    )
    out.append("</tr></thead><tbody>")
    for c in rows:
        crit = ""
        if c.get("critical") is not None:
            failed = c.get("passed_critical") is False
            crit = f'<div style="color:var(--jp-{"error" if failed else "warn"}-color1, #d32f2f); font-size:11px;">critical{" — below minimum" if failed else ""}</div>'
        question = c.get("question")
        q = (
            f'<div style="color:{_MUTED};">{esc(question)}</div>'
            if question and question != c.get("name")
            else ""
        )
        evidence = (
            f'<div style="font-style:italic;">{esc(c.get("evidence"))}</div>'
            if c.get("evidence")
            else ""
        )
        reasoning = (
            f'<div class="rl-md" style="color:{_MUTED}; white-space:normal;">{markdown_html(c.get("reasoning"))}</div>'
            if c.get("reasoning")
            else ""
        )
        out.append(
            f'<tr><td style="{_TD}"><b>{esc(c.get("name"))}</b>{q}{crit}</td>'
            f'<td style="{_TD}">{esc(_level_text(c))}</td>'
            f'<td style="{_TD}">{esc(c.get("weight"))}</td>'
            f'<td style="{_TD} white-space:pre-wrap;">{evidence}{reasoning}</td></tr>'
        )
    out.append("</tbody></table>")
    return "".join(out)


def _raw_html(raw: Sequence[str], open_: bool) -> str:
    if not raw:
        return ""
    blocks = "".join(f'<pre style="{_PRE}">{esc(r)}</pre>' for r in raw)
    return f'<details{" open" if open_ else ""}><summary style="color:{_MUTED}; cursor:pointer;">Raw judge output</summary>{blocks}</details>'


def _metric_html(m: Mapping[str, Any]) -> str:
    kind = str(m.get("kind"))
    out = [
        f'<div class="rl-metric-static" style="border-top:1px solid {_BORDER}; padding-top:6px; margin-top:8px;">'
        f'<b style="font-size:14px;">{esc(m.get("name"))}</b> <span style="color:{_MUTED};">{esc(kind)}</span> '
        f'<b style="font-size:16px; margin-left:8px;">{esc(fmt_score(m.get("score"), kind))}</b> '
        f'<span style="margin-left:6px;">{esc(m.get("verdict") or "")}</span>'
    ]
    if m.get("error"):
        out.append(
            f'<div style="border:1px solid var(--jp-error-color1, #d32f2f); padding:4px 8px; border-radius:4px; white-space:pre-wrap; margin:4px 0;">Judge error: {esc(m["error"])}</div>'
        )
    if kind == "pairwise":
        out.append(_pair_rows_html(m))
    else:
        out.append(_criteria_html(m.get("criteria") or []))
    if m.get("rationale"):
        out.append(
            f'<div style="color:{_MUTED}; font-size:11px; text-transform:uppercase;">Rationale</div>{_md_html(m["rationale"])}'
        )
    out.append(_raw_html(m.get("raw_output") or [], bool(m.get("error"))))
    meta = [
        f"{k} {_int(m.get(k)) if k != 'latency' else esc(m.get(k))}"
        for k in (("tokens",) if m.get("cached") else ("tokens", "latency", "attempts"))
        if m.get(k) is not None
    ]
    if m.get("cached"):
        meta.append("cached (answered from the judge cache, no new call)")
    if meta:
        out.append(f'<div style="color:{_MUTED}; font-size:12px;">{" · ".join(meta)}</div>')
    out.append("</div>")
    return "".join(out)


def _pair_rows_html(m: Mapping[str, Any]) -> str:
    rows = m.get("pair_rows") or []
    choice = f"<div>choice: <b>{esc(m.get('choice') or '—')}</b>"
    if m.get("swap_consistent") is not None:
        choice += " · " + (
            "both orders agree" if m["swap_consistent"] else "the two orders disagreed"
        )
    choice += "</div>"
    if not rows:
        return choice
    out = [choice, '<table style="border-collapse:collapse; margin:4px 0 8px;"><thead><tr>']
    out.extend(
        f'<th style="{_TH}">{h}</th>'
        for h in ("criterion", "candidate", "baseline", "winner", "evidence")
    )
    out.append("</tr></thead><tbody>")
    for r in rows:
        out.append(
            f'<tr><td style="{_TD}"><b>{esc(r.get("name"))}</b><div style="color:{_MUTED};">{esc(r.get("question") or "")}</div></td>'
            f'<td style="{_TD}">{esc(_level_text(r.get("candidate")))}</td>'
            f'<td style="{_TD}">{esc(_level_text(r.get("baseline")))}</td>'
            f'<td style="{_TD}"><b>{esc(r.get("winner") or "—")}</b></td>'
            f'<td style="{_TD} white-space:pre-wrap;">{esc(r.get("evidence") or "")}</td></tr>'
        )
    out.append("</tbody></table>")
    return "".join(out)


def _field_label_html(name: Any) -> str:
    return f'<div style="color:{_MUTED}; font-size:11px; text-transform:uppercase; margin-top:6px;">{esc(name)}</div>'


_MD_BOX = f"overflow-wrap:anywhere; background:{_BG2}; border:1px solid {_BORDER}; border-radius:4px; padding:0 8px; margin:2px 0 8px;"


def _md_html(text: Any) -> str:
    """Model or judge text as CommonMark (raw HTML stays text; see ``_markdown``)."""
    value = "" if text is None else str(text)
    if not looks_like_markdown(value):
        return f'<div style="{_PRE}">{esc(value)}</div>'
    return f'<div class="rl-md" style="{_MD_BOX}">{markdown_html(value)}</div>'


def _field_html(name: Any, text: Any) -> str:
    return _field_label_html(name) + _md_html(text)


def _images_html(images: Sequence[Mapping[str, Any]]) -> str:
    parts = []
    for img in images:
        src = img.get("src")
        if src:
            parts.append(
                f'<img src="{esc(src)}" alt="{esc(img.get("name"))}" style="max-width:240px; max-height:180px; margin:2px; border:1px solid {_BORDER};">'
            )
        else:
            parts.append(
                f'<div style="color:{_MUTED};">{esc(img.get("name"))}: {esc(img.get("note"))}</div>'
            )
    return "".join(parts)


def case_html(case: Mapping[str, Any], is_mock: bool = False, judge: str = "") -> str:
    out = [
        f'<div class="rubriclab-static rl-case-static" style="{_WRAP}">',
        mock_html(is_mock, judge),
    ]
    out.append(f'<div style="color:{_MUTED};">{esc(case.get("heading"))}</div>')
    for f in case.get("fields", []):
        out.append(_field_html(f["name"], f.get("text")))
    out.append(_images_html(case.get("images", [])))
    trace = case.get("trace")
    if trace:
        from ..trace_view import trace_tree_html

        out.append(_field_label_html("trace"))
        out.append(trace_tree_html(trace.get("spans"), highlight=trace.get("highlight")))
    for m in case.get("metrics", []):
        out.append(_metric_html(m))
    out.append("</div>")
    return "".join(out)


# -- pairwise --------------------------------------------------------------------------------------
def _totals_line(t: Mapping[str, Any]) -> str:
    return (
        f"{t.get('metric')}: candidate wins {fmt_rate(t, 'win_rate')}, ties {fmt_rate(t, 'tie_rate')}, "
        f"baseline wins {fmt_rate(t, 'loss_rate')} ({_int(t.get('scored'))} compared)"
    )


def pairwise_text(
    case: Mapping[str, Any], totals: Sequence[Mapping[str, Any]], is_mock: bool
) -> str:
    lines = [MOCK_TEXT] if is_mock else []
    lines.extend(_totals_line(t) for t in totals)
    lines.append(str(case.get("heading", "")))
    for f in case.get("fields", []):
        lines.append(f"{f['name']}: {_short(str(f.get('text') or ''), 200)}")
    for side in ("candidate", "baseline"):
        s = case.get(side) or {}
        lines.append(f"{side}: {_short(str(s.get('text') or ''), 200)}")
    metric = case.get("metric")
    if metric:
        lines.extend(_metric_text(metric))
    return "\n".join(lines)


def pairwise_html(
    case: Mapping[str, Any], totals: Sequence[Mapping[str, Any]], is_mock: bool, judge: str = ""
) -> str:
    out = [
        f'<div class="rubriclab-static rl-pairwise-static" style="{_WRAP}">',
        mock_html(is_mock, judge),
    ]
    for t in totals:
        out.append(f"<div><b>{esc(_totals_line(t))}</b></div>")
    out.append(f'<div style="color:{_MUTED};">{esc(case.get("heading"))}</div>')
    for f in case.get("fields", []):
        out.append(_field_html(f["name"], f.get("text")))
    out.append(_images_html(case.get("images", [])))
    out.append('<table style="width:100%; border-collapse:collapse;"><tr>')
    for side in ("candidate", "baseline"):
        s = case.get(side) or {}
        out.append(
            f'<td style="{_TD} width:50%;"><b>{side.title()}</b> <span style="color:{_MUTED};">{esc(s.get("name") or "")}</span>{_md_html(s.get("text") or "")}</td>'
        )
    out.append("</tr></table>")
    metric = case.get("metric")
    if metric:
        out.append(_metric_html(metric))
    out.append("</div>")
    return "".join(out)


# -- rubric ----------------------------------------------------------------------------------------
def rubric_text(rubric: Rubric, heading: str = "") -> str:
    lines = [heading] if heading else []
    pm = "none" if rubric.pass_mark is None else f"{100 * rubric.pass_mark:g}%"
    lines.append(
        f"Rubric{f' {rubric.name!r}' if rubric.name else ''}: {len(rubric)} criteria, pass mark {pm}"
    )
    for c in rubric.criteria:
        levels = (
            "YES/NO" if c.is_yes_no else ", ".join(f"{lv.score}={lv.descriptor}" for lv in c.levels)
        )
        crit = f", critical >= {c.critical}" if c.critical is not None else ""
        lines.append(f"- {c.name} (weight {c.weight:g}{crit}): {c.question} [{levels}]")
    return "\n".join(lines)


def rubric_html(rubric: Rubric, heading: str = "", error: str = "") -> str:
    pm = "none" if rubric.pass_mark is None else f"{100 * rubric.pass_mark:g}%"
    out = [f'<div class="rubriclab-static rl-rubric-static" style="{_WRAP}">']
    if heading:
        out.append(f'<div style="color:{_MUTED};">{esc(heading)}</div>')
    out.append(
        f"<div><b>{esc(rubric.name or 'Rubric')}</b> · {len(rubric)} criteria · pass mark {esc(pm)}</div>"
    )
    if error:
        out.append(f'<div style="color:var(--jp-error-color1, #d32f2f);">{esc(error)}</div>')
    out.append('<table style="border-collapse:collapse;"><thead><tr>')
    out.extend(
        f'<th style="{_TH}">{h}</th>'
        for h in ("#", "name", "question / description", "levels", "weight", "critical")
    )
    out.append("</tr></thead><tbody>")
    for i, c in enumerate(rubric.criteria, start=1):
        levels = (
            "YES / NO"
            if c.is_yes_no
            else "<br>".join(f"{lv.score} · {esc(lv.descriptor)}" for lv in c.levels)
        )
        out.append(
            f'<tr><td style="{_TD}">{i}</td><td style="{_TD}"><b>{esc(c.name)}</b></td>'
            f'<td style="{_TD} white-space:pre-wrap;">{esc(c.description)}</td><td style="{_TD}">{levels}</td>'
            f'<td style="{_TD}">{c.weight:g}</td><td style="{_TD}">{"" if c.critical is None else c.critical}</td></tr>'
        )
    out.append("</tbody></table></div>")
    return "".join(out)


# -- calibration -----------------------------------------------------------------------------------
def _pct(rate: Mapping[str, Any] | None) -> str:
    if not rate or rate.get("rate") is None:
        return "n/a"
    return f"{100 * rate['rate']:.0f}% ({rate['agree']}/{rate['total']})"


def _calibration_lines(summary: Mapping[str, Any]) -> list[tuple[str, str]]:
    if not summary:
        return []
    kappa = summary.get("kappa")
    lines = [
        ("pairs", f"{summary.get('pairs', 0):,}"),
        (
            "agreement with ties",
            f"{_pct(summary.get('with_ties'))} · random {100 * summary.get('random_with_ties', 0):.0f}%",
        ),
        (
            "agreement without ties",
            f"{_pct(summary.get('without_ties'))} · random {100 * summary.get('random_without_ties', 0):.0f}%",
        ),
        ("Cohen's kappa", "n/a" if kappa is None else f"{kappa:.2f}"),
        ("disagreements", f"{summary.get('disagreements', 0):,}"),
    ]
    hvh = summary.get("human_vs_human")
    if hvh:
        lines.append(
            (
                "human vs human",
                f"{_pct(hvh.get('with_ties'))} with ties · {_pct(hvh.get('without_ties'))} without",
            )
        )
    if summary.get("judge_inconsistent"):
        lines.append(("judge swap-inconsistent", _pct(summary["judge_inconsistent"])))
    return lines


def _diff_text(row: Mapping[str, Any]) -> str:
    d, lo, hi = _num(row.get("mean_diff")), _num(row.get("ci_low")), _num(row.get("ci_high"))
    if d is None:
        return "n/a"
    iv = f" [{lo:+.2f}, {hi:+.2f}]" if lo is not None and hi is not None else ""
    return f"{d:+.2f}{iv}"


def calibration_text(
    title: str,
    summary: Mapping[str, Any],
    labels: Sequence[str],
    sides: Sequence[str],
    confusion: Sequence[Sequence[int]],
    criteria: Sequence[Mapping[str, Any]],
) -> str:
    lines = [title] if title else []
    if summary:
        lines.append(f"{sides[0]} vs {sides[1]}")
        lines.extend(f"  {k}: {v}" for k, v in _calibration_lines(summary))
        lines.append(f"  confusion (rows: {sides[0]}, columns: {sides[1]}):")
        width = max([len(str(x)) for x in labels] + [5])
        lines.append("  " + " " * width + "".join(f"{lab:>{width + 1}}" for lab in labels))
        for lab, row in zip(labels, confusion, strict=True):
            lines.append(f"  {lab:<{width}}" + "".join(f"{c:>{width + 1}}" for c in row))
    if criteria:
        lines.append("per criterion (judge - human, bootstrap interval):")
        for crit in criteria:
            lines.append(
                f"  {crit['criterion']}: {_diff_text(crit)} {crit.get('tendency') or ''}".rstrip()
            )
    return "\n".join(lines)


def calibration_html(
    title: str,
    summary: Mapping[str, Any],
    labels: Sequence[str],
    sides: Sequence[str],
    confusion: Sequence[Sequence[int]],
    criteria: Sequence[Mapping[str, Any]],
) -> str:
    out = [f'<div class="rubriclab-static rl-calibration-static" style="{_WRAP}">']
    if title:
        out.append(f'<div style="font-weight:600; font-size:15px;">{esc(title)}</div>')
    if summary:
        out.append(
            f"<div><b>{esc(sides[0])} vs {esc(sides[1])}</b></div><table style='border-collapse:collapse;'>"
        )
        out.extend(
            f'<tr><th style="{_TH}">{esc(k)}</th><td style="{_TD}">{esc(v)}</td></tr>'
            for k, v in _calibration_lines(summary)
        )
        out.append("</table>")
        top = max((c for row in confusion for c in row), default=0) or 1
        out.append(
            f'<table style="border-collapse:collapse; margin:6px 0;"><tr><th style="{_TH}">{esc(sides[0])} \\ {esc(sides[1])}</th>'
        )
        out.extend(f'<th style="{_TH}">{esc(lab)}</th>' for lab in labels)
        out.append("</tr>")
        for lab, row in zip(labels, confusion, strict=True):
            cells = "".join(
                f'<td style="{_TD} text-align:center; background: color-mix(in srgb, var(--jp-brand-color1, #1976d2) {int(70 * c / top)}%, transparent);">{c}</td>'
                for c in row
            )
            out.append(f'<tr><th style="{_TH}">{esc(lab)}</th>{cells}</tr>')
        out.append("</table>")
    if criteria:
        out.append(
            f'<table style="border-collapse:collapse;"><tr>{"".join(f"<th style={chr(34)}{_TH}{chr(34)}>{h}</th>" for h in ("criterion", "n", "judge − human", "tendency", "exact"))}</tr>'
        )
        for crit in criteria:
            exact = _num(crit.get("exact"))
            out.append(
                f'<tr><td style="{_TD}">{esc(crit["criterion"])}</td><td style="{_TD}">{_int(crit.get("n"))}</td>'
                f'<td style="{_TD}">{esc(_diff_text(crit))}</td><td style="{_TD}">{esc(crit.get("tendency") or "")}</td>'
                f'<td style="{_TD}">{"n/a" if exact is None else f"{100 * exact:.0f}%"}</td></tr>'
            )
        out.append("</table>")
    out.append("</div>")
    return "".join(out)
