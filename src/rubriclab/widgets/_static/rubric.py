"""``RubricEditor``'s static form: a rubric's criteria, levels, weights and critical minimums."""

from __future__ import annotations

from ...rubric import Rubric
from .common import MUTED, TD, TH, WRAP, esc

__all__ = ["rubric_html", "rubric_text"]


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
    out = [f'<div class="rubriclab-static rl-rubric-static" style="{WRAP}">']
    if heading:
        out.append(f'<div style="color:{MUTED};">{esc(heading)}</div>')
    out.append(
        f"<div><b>{esc(rubric.name or 'Rubric')}</b> · {len(rubric)} criteria · pass mark {esc(pm)}</div>"
    )
    if error:
        out.append(f'<div style="color:var(--jp-error-color1, #d32f2f);">{esc(error)}</div>')
    out.append('<table style="border-collapse:collapse;"><thead><tr>')
    out.extend(
        f'<th style="{TH}">{h}</th>'
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
            f'<tr><td style="{TD}">{i}</td><td style="{TD}"><b>{esc(c.name)}</b></td>'
            f'<td style="{TD} white-space:pre-wrap;">{esc(c.description)}</td><td style="{TD}">{levels}</td>'
            f'<td style="{TD}">{c.weight:g}</td><td style="{TD}">{"" if c.critical is None else c.critical}</td></tr>'
        )
    out.append("</tbody></table></div>")
    return "".join(out)
