"""The charts as inline SVG for static HTML (the report): no script, no external reference.

Every label (metric and criterion names come from users and judges) goes through
``html.escape``; tooltips are SVG ``<title>`` elements, which hold text only.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["charts_html", "criteria_svg", "histogram_svg", "runs_svg", "wtl_svg"]

_GOOD = "#388e3c"
_BAD = "#d32f2f"
_MID = "#9e9e9e"
_ACCENT = "#1976d2"
_AXIS = "#777"
_FONT = "font-family:system-ui,sans-serif;font-size:11px"


def _e(value: Any) -> str:
    return html.escape("" if value is None else str(value), quote=True)


def _pct(value: Any, digits: int = 0) -> str:
    return "—" if not isinstance(value, int | float) else f"{100 * value:.{digits}f}%"


def histogram_svg(chart: Mapping[str, Any], width: int = 360, height: int = 164) -> str:
    """Score distribution: ten bins of 10 points (pointwise) or the 5-point scale (pairwise)."""
    if chart.get("kind") == "pairwise":
        bars = [(c["label"], c["count"]) for c in chart.get("choices", [])]
    else:
        bars = [
            (f"{100 * b['low']:.0f}–{100 * b['high']:.0f}%", b["count"])
            for b in chart.get("histogram", [])
        ]
    if not bars:
        return ""
    top = max((c for _, c in bars), default=0) or 1
    left, bottom, right, top_pad = 46, 44, 8, 18
    plot_w, plot_h = width - left - right, height - bottom - top_pad
    step = plot_w / len(bars)
    out = [
        f'<svg class="rl-chart rl-hist" xmlns="http://www.w3.org/2000/svg" width="{width}" '
        f'height="{height}" viewBox="0 0 {width} {height}" role="img" '
        f'aria-label="score distribution of {_e(chart.get("metric"))}" style="{_FONT}">',
        f'<text x="{left}" y="12" fill="#333">{_e(chart.get("metric"))}: scores '
        f"({chart.get('scored', 0):,} scored)</text>",
    ]
    for tick in (0, top):
        y = top_pad + plot_h - plot_h * tick / top
        out.append(
            f'<text x="{left - 4}" y="{y + 4:.1f}" text-anchor="end" fill="{_AXIS}">{tick:,}</text>'
        )
    out.append(
        f'<line x1="{left}" y1="{top_pad + plot_h}" x2="{left + plot_w}" y2="{top_pad + plot_h}" stroke="{_AXIS}"/>'
    )
    for i, (label, count) in enumerate(bars):
        h = plot_h * count / top
        x = left + i * step + 1
        y = top_pad + plot_h - h
        out.append(
            f'<rect x="{x:.1f}" y="{y:.1f}" width="{step - 2:.1f}" height="{h:.1f}" fill="{_ACCENT}">'
            f"<title>{_e(label)}: {count:,}</title></rect>"
        )
        if chart.get("kind") != "pairwise" and i % 2 == 0:
            out.append(
                f'<text x="{left + i * step:.1f}" y="{top_pad + plot_h + 13}" fill="{_AXIS}">{100 * i // len(bars)}%</text>'
            )
    if chart.get("kind") != "pairwise":
        out.append(
            f'<text x="{left + plot_w}" y="{top_pad + plot_h + 13}" text-anchor="end" fill="{_AXIS}">100%</text>'
        )
    else:
        out.append(
            f'<text x="{left}" y="{top_pad + plot_h + 13}" fill="{_AXIS}">candidate better</text>'
            f'<text x="{left + plot_w}" y="{top_pad + plot_h + 13}" text-anchor="end" fill="{_AXIS}">baseline better</text>'
        )
    # axis titles: what is counted (rows) against what (the score, or the pairwise verdict)
    x_title = "verdict (both orders)" if chart.get("kind") == "pairwise" else "score"
    y_mid = top_pad + plot_h / 2
    out.append(
        f'<text class="rl-axis-title" x="{left + plot_w / 2:.1f}" y="{height - 6}" '
        f'text-anchor="middle" font-style="italic" fill="{_AXIS}">{x_title}</text>'
        f'<text class="rl-axis-title" x="12" y="{y_mid:.1f}" text-anchor="middle" '
        f'transform="rotate(-90 12 {y_mid:.1f})" font-style="italic" fill="{_AXIS}">rows</text>'
    )
    out.append("</svg>")
    return "".join(out)


def _colour(result: Mapping[str, Any], index: int, count: int) -> str:
    good = result.get("good")
    if good is True:
        return _GOOD
    if good is False:
        return _BAD
    if result.get("label") == "tie":
        return _MID
    # levels without a pass rule: a blue ramp, darkest for the highest level
    shade = 0.35 + 0.65 * (1 - index / max(count - 1, 1))
    return f"rgba(25,118,210,{shade:.2f})"


def criteria_svg(chart: Mapping[str, Any], width: int = 560) -> str:
    """One stacked bar per criterion: how many rows got each result (where answers fail)."""
    rows: Sequence[Mapping[str, Any]] = chart.get("criteria") or []
    if not rows:
        return ""
    label_w, row_h, top_pad = 170, 20, 18
    bar_w = width - label_w - 60
    # pairwise criteria have no pass or fail: the right-hand figure is the baseline's share
    bad_word = "baseline" if chart.get("kind") == "pairwise" else "fail"
    # each colour once with the results it stands for (a critical criterion colours its levels
    # pass/fail, the others on a blue ramp), first seen first
    by_colour: dict[str, list[str]] = {}
    for row in rows:
        results = row.get("results") or []
        for i, res in enumerate(results):
            labels = by_colour.setdefault(_colour(res, i, len(results)), [])
            if str(res["label"]) not in labels:
                labels.append(str(res["label"]))
    legend = [(", ".join(labels), colour) for colour, labels in by_colour.items()]
    legend_y = top_pad + row_h * len(rows) + 6
    placed: list[tuple[float, int, str, str]] = []  # x, line, text, colour: wraps at the width
    lx, line = float(label_w), 0
    for label, colour in legend:
        text = label if len(label) <= 24 else label[:23] + "…"
        item_w = 14 + 6.5 * len(text) + 12
        if lx + item_w > width and lx > label_w:
            lx, line = float(label_w), line + 1
        placed.append((lx, line, text, colour))
        lx += item_w
    height = legend_y + 18 * (placed[-1][1] + 1 if placed else 0)
    out = [
        f'<svg class="rl-chart rl-crit-chart" xmlns="http://www.w3.org/2000/svg" width="{width}" '
        f'height="{height}" viewBox="0 0 {width} {height}" role="img" '
        f'aria-label="results per criterion of {_e(chart.get("metric"))}" style="{_FONT}">',
        f'<text x="0" y="12" fill="#333">{_e(chart.get("metric"))}: results per criterion</text>',
    ]
    for r, row in enumerate(rows):
        y = top_pad + r * row_h
        name = str(row.get("name", ""))
        short = name if len(name) <= 28 else name[:27] + "…"
        out.append(
            f'<text x="{label_w - 6}" y="{y + 13}" text-anchor="end" fill="#333">'
            f"<title>{_e(row.get('question') or name)}</title>{_e(short)}</text>"
        )
        total = row.get("total") or 0
        x = float(label_w)
        results = row.get("results") or []
        for i, res in enumerate(results):
            w = bar_w * res["count"] / total if total else 0
            out.append(
                f'<rect x="{x:.1f}" y="{y + 3}" width="{w:.1f}" height="{row_h - 6}" '
                f'fill="{_colour(res, i, len(results))}"><title>{_e(name)}: {_e(res["label"])} '
                f"{res['count']:,} of {total:,}</title></rect>"
            )
            short = str(res["label"]).removeprefix("level ")
            if w >= 8 * len(short) + 8:
                out.append(
                    f'<text x="{x + w / 2:.1f}" y="{y + 13}" text-anchor="middle" fill="#fff" '
                    f'font-weight="600">{_e(short)}</text>'
                )
            x += w
        bad = row.get("bad_share")
        if isinstance(bad, int | float):
            out.append(
                f'<text x="{label_w + bar_w + 6}" y="{y + 13}" fill="{_AXIS}">{_pct(bad)} {bad_word}</text>'
            )
    out.append('<g class="rl-legend">')
    for x, line, text, colour in placed:
        y = legend_y + 18 * line
        out.append(
            f'<rect x="{x:.1f}" y="{y + 2}" width="10" height="10" fill="{colour}"/>'
            f'<text x="{x + 14:.1f}" y="{y + 11}" fill="{_AXIS}">{_e(text)}</text>'
        )
    out.append("</g></svg>")
    return "".join(out)


def wtl_svg(chart: Mapping[str, Any], width: int = 420) -> str:
    """Win / tie / loss rates as bars with their intervals as whiskers, on a 0-100% axis."""
    rows: Sequence[Mapping[str, Any]] = chart.get("wtl") or []
    if not rows:
        return ""
    label_w, row_h, top_pad = 100, 22, 18
    bar_w = width - label_w - 70
    height = top_pad + row_h * len(rows) + 20
    colours = [_GOOD, _MID, _BAD]
    out = [
        f'<svg class="rl-chart rl-wtl" xmlns="http://www.w3.org/2000/svg" width="{width}" '
        f'height="{height}" viewBox="0 0 {width} {height}" role="img" '
        f'aria-label="win tie loss of {_e(chart.get("metric"))}" style="{_FONT}">',
        f'<text x="0" y="12" fill="#333">{_e(chart.get("metric"))}: win / tie / loss (95% interval)</text>',
    ]
    for r, row in enumerate(rows):
        y = top_pad + r * row_h
        rate = row.get("rate")
        out.append(
            f'<text x="{label_w - 6}" y="{y + 14}" text-anchor="end" fill="#333">{_e(row["label"])}</text>'
        )
        if isinstance(rate, int | float):
            out.append(
                f'<rect x="{label_w}" y="{y + 4}" width="{bar_w * rate:.1f}" height="{row_h - 8}" fill="{colours[r % 3]}">'
                f"<title>{_e(row['label'])}: {_pct(rate, 1)}</title></rect>"
            )
        low, high = row.get("low"), row.get("high")
        if isinstance(low, int | float) and isinstance(high, int | float):
            x1, x2, mid = label_w + bar_w * low, label_w + bar_w * high, y + row_h / 2
            out.append(
                f'<path d="M{x1:.1f} {mid - 5:.1f}V{mid + 5:.1f}M{x1:.1f} {mid:.1f}H{x2:.1f}M{x2:.1f} {mid - 5:.1f}V{mid + 5:.1f}" '
                f'stroke="#222" fill="none"><title>interval {_pct(low)}–{_pct(high)}</title></path>'
            )
        out.append(
            f'<text x="{label_w + bar_w + 6}" y="{y + 14}" fill="{_AXIS}">{_pct(rate)}</text>'
        )
    axis_y = top_pad + row_h * len(rows) + 2
    out.append(
        f'<line x1="{label_w}" y1="{axis_y}" x2="{label_w + bar_w}" y2="{axis_y}" stroke="{_AXIS}"/>'
    )
    for t in (0, 0.25, 0.5, 0.75, 1):
        x = label_w + bar_w * t
        out.append(
            f'<line x1="{x:.1f}" y1="{axis_y}" x2="{x:.1f}" y2="{axis_y + 3}" stroke="{_AXIS}"/>'
            f'<text x="{x:.1f}" y="{axis_y + 14}" text-anchor="middle" fill="{_AXIS}">{100 * t:.0f}%</text>'
        )
    out.append("</svg>")
    return "".join(out)


def charts_html(charts: Sequence[Mapping[str, Any]]) -> str:
    """All charts of a result, side by side, as static HTML."""
    blocks = []
    for chart in charts:
        parts = [histogram_svg(chart), wtl_svg(chart), criteria_svg(chart)]
        parts.append(_unshared_note(chart))
        blocks.append(
            '<div class="rl-charts-static" style="display:flex; flex-wrap:wrap; gap:18px; '
            'align-items:flex-start; margin:8px 0;">' + "".join(p for p in parts if p) + "</div>"
        )
    return "".join(blocks)


def unshared_text(chart: Mapping[str, Any]) -> str:
    """Why per-criterion bars are missing for per-row rubrics (empty when none are)."""
    count = chart.get("unshared_criteria")
    if not isinstance(count, int) or count <= 0:
        return ""
    return (
        f"no per-criterion figures for {count} criteria: each row's rubric asks its own "
        "questions under these names (per-row rubrics), so they are not added up"
    )


def _unshared_note(chart: Mapping[str, Any]) -> str:
    text = unshared_text(chart)
    return (
        f'<div style="color:#666; font-size:12px; max-width:420px;">{_e(text)}</div>'
        if text
        else ""
    )


def runs_svg(runs: Sequence[tuple[str, Sequence[Mapping[str, Any]]]], width: int = 560) -> str:
    """Several runs side by side: per metric, one bar per run (mean score, or win rate for a
    pairwise metric) with its interval or std as a whisker, on a labelled 0-100% axis."""
    metrics: list[str] = []
    for _title, summary in runs:
        for entry in summary:
            name = str(entry.get("metric", ""))
            if name not in metrics:
                metrics.append(name)
    if not metrics or not runs:
        return ""
    label_w, row_h, gap, top_pad = 170, 18, 10, 6
    bar_w = width - label_w - 80
    palette = ["#1976d2", "#f57c00", "#388e3c", "#7b1fa2", "#c2185b", "#00796b"]
    height = top_pad + len(metrics) * (len(runs) * row_h + gap) + 30
    out = [
        f'<svg class="rl-chart rl-runs" xmlns="http://www.w3.org/2000/svg" width="{width}" '
        f'height="{height}" viewBox="0 0 {width} {height}" role="img" aria-label="runs compared" '
        f'style="{_FONT}">'
    ]
    y = float(top_pad)
    for metric in metrics:
        out.append(
            f'<text x="0" y="{y + 12:.1f}" font-weight="600" fill="#333">{_e(metric)}</text>'
        )
        for r, (title, summary) in enumerate(runs):
            row: Mapping[str, Any] | None = next(
                (s for s in summary if str(s.get("metric")) == metric), None
            )
            colour = palette[r % len(palette)]
            short = title if len(title) <= 22 else title[:21] + "…"
            out.append(
                f'<text x="{label_w - 6}" y="{y + 13:.1f}" text-anchor="end" fill="{_AXIS}">'
                f"<title>{_e(title)}</title>{_e(short)}</text>"
            )
            if row is not None:
                pairwise = row.get("kind") == "pairwise"
                value = row.get("win_rate" if pairwise else "mean")
                if isinstance(value, int | float):
                    what = "win rate" if pairwise else "mean score"
                    out.append(
                        f'<rect x="{label_w}" y="{y + 3:.1f}" width="{bar_w * max(0.0, min(1.0, value)):.1f}" '
                        f'height="{row_h - 6}" fill="{colour}"><title>{_e(title)} · {_e(metric)}: '
                        f"{what} {_pct(value, 1)}</title></rect>"
                    )
                    low, high = (
                        (row.get("win_rate_low"), row.get("win_rate_high"))
                        if pairwise
                        else (
                            (value - row["std"], value + row["std"])
                            if isinstance(row.get("std"), int | float)
                            else (None, None)
                        )
                    )
                    if isinstance(low, int | float) and isinstance(high, int | float):
                        x1 = label_w + bar_w * max(0.0, low)
                        x2 = label_w + bar_w * min(1.0, high)
                        mid = y + row_h / 2
                        out.append(
                            f'<path d="M{x1:.1f} {mid:.1f}H{x2:.1f}" stroke="#222" fill="none">'
                            f"<title>{'95% interval' if pairwise else '± std'}</title></path>"
                        )
                    suffix = " win" if pairwise else ""
                    out.append(
                        f'<text x="{label_w + bar_w + 6}" y="{y + 13:.1f}" fill="{_AXIS}">{_pct(value, 1)}{suffix}</text>'
                    )
            y += row_h
        y += gap
    out.append(
        f'<line x1="{label_w}" y1="{y:.1f}" x2="{label_w + bar_w}" y2="{y:.1f}" stroke="{_AXIS}"/>'
    )
    for t in (0, 0.25, 0.5, 0.75, 1):
        x = label_w + bar_w * t
        out.append(
            f'<line x1="{x:.1f}" y1="{y:.1f}" x2="{x:.1f}" y2="{y + 3:.1f}" stroke="{_AXIS}"/>'
            f'<text x="{x:.1f}" y="{y + 14:.1f}" text-anchor="middle" fill="{_AXIS}">{100 * t:.0f}%</text>'
        )
    out.append("</svg>")
    return "".join(out)
