"""``PairwiseView``'s static form: the win/tie/loss totals, then one case with candidate and
baseline side by side and the judge's per-criterion winners."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ...columns import preview
from .case import metric_html, metric_text
from .common import (
    MOCK_TEXT,
    MUTED,
    TD,
    WRAP,
    esc,
    field_html,
    fmt_count,
    fmt_int,
    fmt_score,
    images_html,
    md_html,
    mock_html,
)

__all__ = ["pairwise_html", "pairwise_text"]


def _totals_line(t: Mapping[str, Any]) -> str:
    mean = fmt_score(t.get("mean"), "pairwise")
    return (
        f"{t.get('metric')}: candidate wins {fmt_count(t, 'win_rate', 'wins')}, "
        f"ties {fmt_count(t, 'tie_rate', 'ties')}, baseline wins "
        f"{fmt_count(t, 'loss_rate', 'losses')} ({fmt_int(t.get('scored'))} compared); "
        f"mean preference {mean} (on -100%..+100%)"
    )


def pairwise_text(
    case: Mapping[str, Any], totals: Sequence[Mapping[str, Any]], is_mock: bool
) -> str:
    lines = [MOCK_TEXT] if is_mock else []
    lines.extend(_totals_line(t) for t in totals)
    lines.append(str(case.get("heading", "")))
    for f in case.get("fields", []):
        lines.append(f"{f['name']}: {preview(str(f.get('text') or ''), 200)}")
    for side in ("candidate", "baseline"):
        s = case.get(side) or {}
        lines.append(f"{side}: {preview(str(s.get('text') or ''), 200)}")
    metric = case.get("metric")
    if metric:
        lines.extend(metric_text(metric))
    return "\n".join(lines)


def pairwise_html(
    case: Mapping[str, Any], totals: Sequence[Mapping[str, Any]], is_mock: bool, judge: str = ""
) -> str:
    out = [
        f'<div class="rubriclab-static rl-pairwise-static" style="{WRAP}">',
        mock_html(is_mock, judge),
    ]
    for t in totals:
        out.append(f"<div><b>{esc(_totals_line(t))}</b></div>")
    out.append(f'<div style="color:{MUTED};">{esc(case.get("heading"))}</div>')
    for f in case.get("fields", []):
        out.append(field_html(f["name"], f.get("text")))
    out.append(images_html(case.get("images", [])))
    out.append('<table style="width:100%; border-collapse:collapse;"><tr>')
    for side in ("candidate", "baseline"):
        s = case.get(side) or {}
        out.append(
            f'<td style="{TD} width:50%;"><b>{side.title()}</b> <span style="color:{MUTED};">{esc(s.get("name") or "")}</span>{md_html(s.get("text") or "")}</td>'
        )
    out.append("</tr></table>")
    metric = case.get("metric")
    if metric:
        out.append(metric_html(metric))
    out.append("</div>")
    return "".join(out)
