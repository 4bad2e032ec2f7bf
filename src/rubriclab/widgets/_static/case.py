"""``Explanation``'s static form: one case with its fields, images, trace and every metric's
criteria, rationale and raw judge output. ``metric_text``/``metric_html`` are shared with the
pairwise form."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ...columns import preview
from .._markdown import markdown_html
from ..trace_view import trace_tree_html
from .common import (
    BORDER,
    MOCK_TEXT,
    MUTED,
    PRE,
    TD,
    TH,
    WRAP,
    esc,
    field_html,
    field_label_html,
    fmt_int,
    fmt_score,
    images_html,
    md_html,
    mock_html,
)

__all__ = ["case_html", "case_text", "metric_html", "metric_text"]


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


def _criterion_text(c: Mapping[str, Any]) -> list[str]:
    """One criterion: its verdict, then what it asked or claimed (a RAG claim's own text) and
    the judge's evidence quote, so the plain text says *which* claim failed, not only its
    number."""
    lines = [f"  - {c.get('name')}: {_level_text(c)}"]
    question = c.get("question")
    if question and question != c.get("name"):
        lines.append(f"      {preview(str(question), 200)}")
    evidence = c.get("evidence")
    if evidence:
        lines.append(f'      evidence: "{preview(str(evidence), 200)}"')
    return lines


def metric_text(m: Mapping[str, Any]) -> list[str]:
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
            lines.extend(_criterion_text(c))
    if m.get("rationale"):
        lines.append(f"  rationale: {preview(str(m['rationale']), 300)}")
    return lines


def case_text(case: Mapping[str, Any], is_mock: bool = False) -> str:
    lines = [MOCK_TEXT] if is_mock else []
    lines.append(str(case.get("heading", "")))
    for f in case.get("fields", []):
        lines.append(f"{f['name']}: {preview(str(f.get('text') or ''), 300)}")
    for msg in (case.get("conversation") or {}).get("messages", []):
        calls = "".join(f" -> {c['name']}({c['arguments']})" for c in msg.get("tool_calls", []))
        lines.append(f"  {_role_text(msg)}: {preview(str(msg.get('content') or ''), 300)}{calls}")
    for m in case.get("metrics", []):
        lines.extend(metric_text(m))
    return "\n".join(lines)


def _role_text(msg: Mapping[str, Any]) -> str:
    role = str(msg.get("role"))
    if msg.get("turn") is not None:
        role += f" · turn {msg['turn']}"
    if msg.get("tool_call_id"):
        role += f" · result for {msg['tool_call_id']}"
    return role


def _conversation_html(
    conversation: Mapping[str, Any] | None, metrics: Sequence[Mapping[str, Any]]
) -> str:
    """The row's conversation as a transcript: role, then the text escaped (never Markdown or
    HTML), tool calls as name + arguments, per-turn scores beside assistant turns."""
    messages = (conversation or {}).get("messages") or []
    if not messages:
        return ""
    chips: dict[int, list[str]] = {}
    for m in metrics:
        turns = m.get("turns") or []
        for i, t in enumerate(turns):
            mark = " · worst turn" if i == 0 and len(turns) > 1 else ""
            verdict = "error" if t.get("error") else t.get("verdict") or ""
            chips.setdefault(int(t["turn"]), []).append(
                f"{m.get('name')} {fmt_score(t.get('score'))} {verdict}{mark}"
            )
    out = [field_label_html("conversation")]
    for msg in messages:
        scores = chips.get(int(msg["turn"]), []) if msg.get("turn") is not None else []
        worst = any("worst turn" in c for c in scores)
        border = "#d32f2f" if worst else BORDER
        head = esc(_role_text(msg)) + "".join(
            f' <span style="color:{MUTED};">[{esc(c)}]</span>' for c in scores
        )
        calls = "".join(
            f'<div style="font-family:monospace;">→ {esc(c["name"])}({esc(c["arguments"])})</div>'
            for c in msg.get("tool_calls", [])
        )
        text = msg.get("content") or ""
        body = f'<div style="white-space:pre-wrap;">{esc(text)}</div>' if text else ""
        out.append(
            f'<div style="border:1px solid {border}; border-radius:6px; padding:4px 8px; '
            f'margin:4px 0;"><div style="font-size:11px; color:{MUTED}; font-weight:600;">'
            f"{head}</div>{body}{calls}</div>"
        )
    if conversation and conversation.get("omitted"):
        out.append(f'<div style="color:{MUTED};">{conversation["omitted"]} more messages</div>')
    return "".join(out)


def _criteria_html(rows: Sequence[Mapping[str, Any]]) -> str:
    if not rows:
        return ""
    out = ['<table style="border-collapse:collapse; margin:4px 0 8px;"><thead><tr>']
    out.extend(
        f'<th style="{TH}">{h}</th>'
        for h in ("criterion", "result", "weight", "evidence and reasoning")
    )
    out.append("</tr></thead><tbody>")
    for c in rows:
        crit = ""
        if c.get("critical") is not None:
            failed = c.get("passed_critical") is False
            crit = f'<div style="color:var(--jp-{"error" if failed else "warn"}-color1, #d32f2f); font-size:11px;">critical{" — below minimum" if failed else ""}</div>'
        if c.get("checked_by") == "code":
            label = f" · {c['check']}" if c.get("check") else ""
            crit = (
                f'<div style="color:{MUTED}; font-size:11px;">{esc("checked by code" + label)}</div>'
                + crit
            )
        question = c.get("question")
        q = (
            f'<div style="color:{MUTED};">{esc(question)}</div>'
            if question and question != c.get("name")
            else ""
        )
        evidence = (
            f'<div style="font-style:italic;">{esc(c.get("evidence"))}</div>'
            if c.get("evidence")
            else ""
        )
        reasoning = (
            f'<div class="rl-md" style="color:{MUTED}; white-space:normal;">{markdown_html(c.get("reasoning"))}</div>'
            if c.get("reasoning")
            else ""
        )
        out.append(
            f'<tr><td style="{TD}"><b>{esc(c.get("name"))}</b>{q}{crit}</td>'
            f'<td style="{TD}">{esc(_level_text(c))}</td>'
            f'<td style="{TD}">{esc(c.get("weight"))}</td>'
            f'<td style="{TD} white-space:pre-wrap;">{evidence}{reasoning}</td></tr>'
        )
    out.append("</tbody></table>")
    return "".join(out)


def _raw_html(raw: Sequence[str], open_: bool) -> str:
    if not raw:
        return ""
    blocks = "".join(f'<pre style="{PRE}">{esc(r)}</pre>' for r in raw)
    return f'<details{" open" if open_ else ""}><summary style="color:{MUTED}; cursor:pointer;">Raw judge output</summary>{blocks}</details>'


def metric_html(m: Mapping[str, Any]) -> str:
    kind = str(m.get("kind"))
    out = [
        f'<div class="rl-metric-static" style="border-top:1px solid {BORDER}; padding-top:6px; margin-top:8px;">'
        f'<b style="font-size:14px;">{esc(m.get("name"))}</b> <span style="color:{MUTED};">{esc(kind)}</span> '
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
            f'<div style="color:{MUTED}; font-size:11px; text-transform:uppercase;">Rationale</div>{md_html(m["rationale"])}'
        )
    out.append(_raw_html(m.get("raw_output") or [], bool(m.get("error"))))
    meta = [
        f"{k} {fmt_int(m.get(k)) if k != 'latency' else esc(m.get(k))}"
        for k in (("tokens",) if m.get("cached") else ("tokens", "latency", "attempts"))
        if m.get(k) is not None
    ]
    if m.get("cached"):
        meta.append("cached (answered from the judge cache, no new call)")
    if meta:
        out.append(f'<div style="color:{MUTED}; font-size:12px;">{" · ".join(meta)}</div>')
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
        f'<th style="{TH}">{h}</th>'
        for h in ("criterion", "candidate", "baseline", "winner", "evidence")
    )
    out.append("</tr></thead><tbody>")
    for r in rows:
        out.append(
            f'<tr><td style="{TD}"><b>{esc(r.get("name"))}</b><div style="color:{MUTED};">{esc(r.get("question") or "")}</div></td>'
            f'<td style="{TD}">{esc(_level_text(r.get("candidate")))}</td>'
            f'<td style="{TD}">{esc(_level_text(r.get("baseline")))}</td>'
            f'<td style="{TD}"><b>{esc(r.get("winner") or "—")}</b></td>'
            f'<td style="{TD} white-space:pre-wrap;">{esc(r.get("evidence") or "")}</td></tr>'
        )
    out.append("</tbody></table>")
    return "".join(out)


def case_html(case: Mapping[str, Any], is_mock: bool = False, judge: str = "") -> str:
    out = [
        f'<div class="rubriclab-static rl-case-static" style="{WRAP}">',
        mock_html(is_mock, judge),
    ]
    out.append(f'<div style="color:{MUTED};">{esc(case.get("heading"))}</div>')
    for f in case.get("fields", []):
        out.append(field_html(f["name"], f.get("text")))
    out.append(images_html(case.get("images", [])))
    out.append(_conversation_html(case.get("conversation"), case.get("metrics", [])))
    trace = case.get("trace")
    if trace:
        out.append(field_label_html("trace"))
        out.append(trace_tree_html(trace.get("spans"), highlight=trace.get("highlight")))
    for m in case.get("metrics", []):
        out.append(metric_html(m))
    out.append("</div>")
    return "".join(out)
