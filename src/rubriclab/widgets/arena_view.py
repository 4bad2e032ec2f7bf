"""``ArenaView``: the arena's ranking with intervals, its win-rate matrix, per-criterion wins
and swap inconsistency per pair, as static HTML (no scripts: it reads the same in a notebook,
an exported page, GitHub and nbviewer).

Candidate names and criterion names come from the user's data: every one is escaped text.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from ._static.common import BORDER, MUTED, TD, TH, WRAP, esc, mock_html

if TYPE_CHECKING:
    from ..ranking import Arena

__all__ = ["ArenaView", "arena_html", "arena_mimebundle"]


def _records(frame: Any) -> list[dict[str, Any]]:
    return [{str(k): v for k, v in r.items()} for r in frame.to_dict("records")]


def _finite(value: Any) -> float | None:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(number) or math.isinf(number) else number


def _rate(value: Any) -> str:
    number = _finite(value)
    return "—" if number is None else f"{100 * number:.0f}%"


def _intervals_svg(arena: Arena, width: int = 520, row: int = 22) -> str:
    """One row a candidate: its Elo-style score as a dot, its interval as a bar, on one axis."""
    rank = arena.ranking
    lows, highs = rank["elo_low"].astype(float), rank["elo_high"].astype(float)
    lo, hi = float(lows.min()), float(highs.max())
    pad = max(10.0, (hi - lo) * 0.08)
    lo, hi = lo - pad, hi + pad
    left, right = 150, 20
    span = width - left - right

    def x(value: float) -> float:
        return left + span * (value - lo) / (hi - lo)

    height = row * len(rank) + 48
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'role="img" aria-label="Bradley-Terry scores with intervals" '
        f'style="font: 12px var(--jp-ui-font-family, system-ui, sans-serif);">'
    ]
    for i, r in enumerate(_records(rank)):
        y = 8 + i * row + row / 2
        name = str(r["candidate"])
        shown = name if len(name) <= 22 else name[:21] + "…"
        out.append(
            f'<text x="{left - 8}" y="{y + 4:.1f}" text-anchor="end" fill="currentColor">'
            f"{esc(shown)}</text>"
        )
        out.append(
            f'<line x1="{x(float(r["elo_low"])):.1f}" x2="{x(float(r["elo_high"])):.1f}" y1="{y:.1f}" '
            f'y2="{y:.1f}" stroke="#4c78a8" stroke-width="4" stroke-linecap="round" opacity="0.45"/>'
        )
        out.append(f'<circle cx="{x(float(r["elo"])):.1f}" cy="{y:.1f}" r="4.5" fill="#4c78a8"/>')
    axis = 8 + row * len(rank) + 4
    out.append(
        f'<line x1="{left}" x2="{width - right}" y1="{axis}" y2="{axis}" stroke="{BORDER}"/>'
    )
    steps = 4
    for s in range(steps + 1):
        value = lo + (hi - lo) * s / steps
        out.append(
            f'<text x="{x(value):.1f}" y="{axis + 14}" text-anchor="middle" fill="{MUTED}">'
            f"{value:.0f}</text>"
        )
    out.append(
        f'<text x="{left + span / 2:.1f}" y="{axis + 28}" text-anchor="middle" fill="{MUTED}">'
        "score (Elo scale: 1000 = mean, +400 = ten times the odds)</text>"
    )
    out.append("</svg>")
    return "".join(out)


def _heat(value: float | None) -> str:
    """Blue where the row wins, orange where it loses, white at 50%."""
    if value is None:
        return ""
    t = max(-1.0, min(1.0, 2 * value - 1))
    colour = "76,120,168" if t >= 0 else "245,133,24"
    return f"background: rgba({colour},{abs(t) * 0.45:.2f});"


def _table(head: list[str], rows: list[list[str]]) -> str:
    """A table of escaped headers and ready ``<td>`` cells."""
    th = "".join(f'<th style="{TH}">{h}</th>' for h in head)
    body = "".join("<tr>" + "".join(r) + "</tr>" for r in rows)
    return f'<table style="border-collapse:collapse; margin:6px 0;"><tr>{th}</tr>{body}</table>'


def arena_html(arena: Arena, title: str = "") -> str:
    """The arena as HTML with no scripts."""
    pct = round(100 * arena.confidence)
    out = [f'<div class="rubriclab-static rl-arena-static" style="{WRAP}">']
    out.append(mock_html(arena.is_mock, arena.judge))
    if title:
        out.append(f'<div style="font-weight:600; font-size:14px;">{esc(title)}</div>')
    out.append(
        f'<div style="color:{MUTED}; margin:2px 0 6px;">{len(arena.candidates)} candidates · '
        f"{len(arena.result.table)} comparisons on metric {esc(arena.metric)} (both orders "
        f"each) · {arena.errors} without a verdict · Bradley-Terry, ties count half · "
        f"{pct}% intervals from {arena.n_boot} resamples of the cases · judge "
        f"{esc(arena.judge)}</div>"
    )
    out.append(_intervals_svg(arena))
    rows = []
    for r in _records(arena.ranking):
        low, high = int(r["rank_low"]), int(r["rank_high"])
        ranks = f"{low}" if low == high else f"{low}–{high}"
        rows.append(
            [
                f'<td style="{TD}">{int(r["rank"])}</td>',
                f'<td style="{TD}"><b>{esc(r["candidate"])}</b></td>',
                f'<td style="{TD}">{float(r["elo"]):.0f}</td>',
                f'<td style="{TD}">[{float(r["elo_low"]):.0f}, {float(r["elo_high"]):.0f}]</td>',
                f'<td style="{TD}">{ranks}</td>',
                f'<td style="{TD}">{_rate(r["win_rate"])} of {int(r["comparisons"])}</td>',
            ]
        )
    out.append(
        _table(
            ["rank", "candidate", "score", f"{pct}% interval", "rank range", "wins (ties half)"],
            rows,
        )
    )
    names = list(arena.matrix.index)
    out.append(
        f'<div style="font-weight:600; margin-top:10px;">Win rate of the row against the '
        f'column <span style="font-weight:400; color:{MUTED};">(ties half)</span></div>'
    )
    rows = []
    for a in names:
        cells = [f'<td style="{TD}"><b>{esc(a)}</b></td>']
        for b in names:
            value = _finite(arena.matrix.at[a, b])
            cells.append(f'<td style="{TD}{_heat(value)} text-align:center;">{_rate(value)}</td>')
        rows.append(cells)
    out.append(_table(["", *[esc(b) for b in names]], rows))
    if len(arena.criteria.columns):
        out.append(
            '<div style="font-weight:600; margin-top:10px;">Per criterion: share of '
            "comparisons won</div>"
        )
        rows = []
        for a in arena.criteria.index:
            cells = [f'<td style="{TD}"><b>{esc(a)}</b></td>']
            for c in arena.criteria.columns:
                value = _finite(arena.criteria.at[a, c])
                cells.append(
                    f'<td style="{TD}{_heat(value)} text-align:center;">{_rate(value)}</td>'
                )
            rows.append(cells)
        out.append(_table(["", *[esc(c) for c in arena.criteria.columns]], rows))
    rows = [
        [
            f'<td style="{TD}">{esc(p["a"])} vs {esc(p["b"])}</td>',
            f'<td style="{TD}">{int(p["comparisons"])}</td>',
            f'<td style="{TD}">{_rate(p["a_win_rate"])}</td>',
            f'<td style="{TD}">{_rate(p["swap_inconsistent_rate"])} '
            f"({int(p['swap_inconsistent'])}/{int(p['comparisons'])})</td>",
            f'<td style="{TD}">{int(p["errors"])}</td>',
        ]
        for p in _records(arena.pairs)
    ]
    out.append(
        '<div style="font-weight:600; margin-top:10px;">Pairs: position bias shows as swap '
        "inconsistency (the two orders disagreed; counted as a tie)</div>"
    )
    out.append(
        _table(
            ["pair", "compared", "first named wins (ties half)", "swap-inconsistent", "errors"],
            rows,
        )
    )
    out.extend(f'<div style="color:{MUTED};">{esc(n)}</div>' for n in arena.notes)
    out.append("</div>")
    return "".join(out)


def arena_mimebundle(arena: Arena) -> dict[str, Any]:
    """What an ``Arena`` shows at the end of a cell: its summary text and static HTML."""
    return {"text/plain": arena.summary_text(), "text/html": arena_html(arena)}


class ArenaView:
    """Shows an :class:`~rubriclab.ranking.Arena`: ranking with intervals, matrix, criteria,
    pairs. Static HTML, so it reads the same wherever the notebook is read."""

    def __init__(self, arena: Arena, *, title: str | None = None) -> None:
        self.arena = arena
        self.title = title or ""

    def static_html(self) -> str:
        return arena_html(self.arena, self.title)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        return {"text/plain": self.arena.summary_text(), "text/html": self.static_html()}
