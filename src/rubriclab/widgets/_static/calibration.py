"""``CalibrationView``'s static form: agreement figures, the confusion matrix and the
per-criterion judge-minus-human differences."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .common import TD, TH, WRAP, esc, fmt_int, num

__all__ = ["calibration_html", "calibration_text"]


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
    d, lo, hi = num(row.get("mean_diff")), num(row.get("ci_low")), num(row.get("ci_high"))
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
    out = [f'<div class="rubriclab-static rl-calibration-static" style="{WRAP}">']
    if title:
        out.append(f'<div style="font-weight:600; font-size:15px;">{esc(title)}</div>')
    if summary:
        out.append(
            f"<div><b>{esc(sides[0])} vs {esc(sides[1])}</b></div><table style='border-collapse:collapse;'>"
        )
        out.extend(
            f'<tr><th style="{TH}">{esc(k)}</th><td style="{TD}">{esc(v)}</td></tr>'
            for k, v in _calibration_lines(summary)
        )
        out.append("</table>")
        top = max((c for row in confusion for c in row), default=0) or 1
        out.append(
            f'<table style="border-collapse:collapse; margin:6px 0;"><tr><th style="{TH}">{esc(sides[0])} \\ {esc(sides[1])}</th>'
        )
        out.extend(f'<th style="{TH}">{esc(lab)}</th>' for lab in labels)
        out.append("</tr>")
        for lab, row in zip(labels, confusion, strict=True):
            cells = "".join(
                f'<td style="{TD} text-align:center; background: color-mix(in srgb, var(--jp-brand-color1, #1976d2) {int(70 * c / top)}%, transparent);">{c}</td>'
                for c in row
            )
            out.append(f'<tr><th style="{TH}">{esc(lab)}</th>{cells}</tr>')
        out.append("</table>")
    if criteria:
        out.append(
            f'<table style="border-collapse:collapse;"><tr>{"".join(f"<th style={chr(34)}{TH}{chr(34)}>{h}</th>" for h in ("criterion", "n", "judge − human", "tendency", "exact"))}</tr>'
        )
        for crit in criteria:
            exact = num(crit.get("exact"))
            out.append(
                f'<tr><td style="{TD}">{esc(crit["criterion"])}</td><td style="{TD}">{fmt_int(crit.get("n"))}</td>'
                f'<td style="{TD}">{esc(_diff_text(crit))}</td><td style="{TD}">{esc(crit.get("tendency") or "")}</td>'
                f'<td style="{TD}">{"n/a" if exact is None else f"{100 * exact:.0f}%"}</td></tr>'
            )
        out.append("</table>")
    out.append("</div>")
    return "".join(out)
