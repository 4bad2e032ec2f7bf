"""Static form of an alignment: agreement before/after on the test rows per criterion, the gain
in words, and every change tried with its wording as a word diff. All text is escaped."""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from .common import BORDER, MUTED, PRE, TD, TH, WRAP, esc

if TYPE_CHECKING:
    from ...alignment import Alignment, Change

__all__ = ["alignment_html", "alignment_text", "word_diff"]

_INS = "background:rgba(46,160,67,0.18); text-decoration:none;"
_DEL = "background:rgba(248,81,73,0.18); text-decoration:line-through; margin-right:2px;"
_TOKENS = re.compile(r"\s+|[^\s]+")


def word_diff(before: str, after: str) -> list[tuple[str, str]]:
    """(op, text) pieces: ``=`` kept, ``-`` removed, ``+`` added; by words."""
    a, b = _TOKENS.findall(before), _TOKENS.findall(after)
    out: list[tuple[str, str]] = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        if op == "equal":
            out.append(("=", "".join(a[i1:i2])))
            continue
        if i2 > i1:
            out.append(("-", "".join(a[i1:i2])))
        if j2 > j1:
            out.append(("+", "".join(b[j1:j2])))
    return out


def _diff_html(before: str, after: str) -> str:
    parts = []
    for op, text in word_diff(before, after):
        if op == "=":
            parts.append(esc(text))
        elif op == "-":
            parts.append(f'<del style="{_DEL}">{esc(text)}</del>')
        else:
            parts.append(f'<ins style="{_INS}">{esc(text)}</ins>')
    return "".join(parts)


def _pct(value: float | None) -> str:
    return "—" if value is None or math.isnan(value) else f"{value:.0%}"


def _k(value: float | None) -> str:
    return "—" if value is None or math.isnan(value) else f"{round(value, 2) + 0.0:.2f}"


def _gain(g: dict[str, float] | None) -> str:
    """A kappa gain with its 95% interval, ``+0.30 [+0.10, +0.50]``."""
    if not g or g.get("kappa") is None or math.isnan(g["kappa"]):
        return "—"
    low, high = g.get("low", math.nan), g.get("high", math.nan)
    span = "" if math.isnan(low) or math.isnan(high) else f" [{low:+.2f}, {high:+.2f}]"
    return f"{round(g['kappa'], 2) + 0.0:+.2f}{span}"


def _rows(al: Alignment) -> list[tuple[str, str, str, str, str, str, str]]:
    names = sorted(set(al.before.per_criterion) | set(al.after.per_criterion))
    names = [n for n in names if n != "overall"] + (["overall"] if "overall" in names else [])
    out = []
    for n in names:
        b, a = al.before.per_criterion.get(n, {}), al.after.per_criterion.get(n, {})
        items = int(b.get("items", a.get("items", 0)))
        out.append(
            (
                n,
                str(items),
                _pct(b.get("exact")),
                _pct(a.get("exact")),
                _k(b.get("kappa")),
                _k(a.get("kappa")),
                _gain(al.gain.per_criterion.get(n)),
            )
        )
    out.append(
        (
            "all criteria",
            str(al.before.items),
            _pct(al.before.exact),
            _pct(al.after.exact),
            _k(al.before.kappa),
            _k(al.after.kappa),
            _gain(
                {
                    "kappa": al.gain.kappa,
                    "low": al.gain.kappa_interval[0],
                    "high": al.gain.kappa_interval[1],
                }
            ),
        )
    )
    return out


def _change_label(c: Change) -> str:
    what = {
        "rewrite": "rewrite",
        "example": "example",
        "cut_points": "cut points",
        "pass_mark": "pass mark",
    }.get(c.kind, c.kind)
    return f"{what}{f' · {c.criterion}' if c.criterion else ''}"


def _figures(c: Change) -> str:
    bits = []
    if c.train is not None:
        bits.append(f"training {_pct(c.train)}")
    if c.validation is not None:
        bits.append(f"validation {_pct(c.validation)}")
    return ", ".join(bits)


def alignment_text(al: Alignment) -> str:
    lines = [
        al.summary,
        "",
        "criterion  items  exact before -> after  kappa before -> after  kappa gain [95%]",
    ]
    for n, items, eb, ea, kb, ka, g in _rows(al):
        lines.append(f"{n}  {items}  {eb} -> {ea}  {kb} -> {ka}  {g}")
    lines.append("")
    for c in al.changes:
        state = "kept" if c.kept else "rejected"
        lines.append(f"[{state}] {_change_label(c)}: {c.before!r} -> {c.after!r} {_figures(c)}")
        if c.note:
            lines.append(f"    {c.note}")
    return "\n".join(lines)


def _changes_html(changes: Sequence[Change]) -> str:
    if not changes:
        return f'<p style="color:{MUTED}">No change was tried.</p>'
    items = []
    for c in sorted(changes, key=lambda c: not c.kept):
        state = (
            '<strong style="color:#1a7f37">kept</strong>'
            if c.kept
            else f'<span style="color:{MUTED}">rejected</span>'
        )
        body = (
            _diff_html(c.before, c.after)
            if c.kind in ("rewrite", "cut_points", "pass_mark")
            else esc(c.after)
        )
        note = f'<div style="color:{MUTED}">{esc(c.note)}</div>' if c.note else ""
        figures = _figures(c)
        figs = f' <span style="color:{MUTED}">({esc(figures)})</span>' if figures else ""
        items.append(
            f'<li style="margin:4px 0 10px" data-kept="{str(c.kept).lower()}">{state} · '
            f"<strong>{esc(_change_label(c))}</strong>{figs}"
            f'<div style="{PRE}">{body}</div>{note}</li>'
        )
    return f'<ul style="list-style:none; padding-left:0">{"".join(items)}</ul>'


def alignment_html(al: Alignment) -> str:
    reliable = al.gain.reliable
    color = "#1a7f37" if reliable else MUTED
    head = "".join(
        f'<th style="{TH}">{h}</th>'
        for h in (
            "criterion",
            "items",
            "exact before",
            "exact after",
            "kappa before",
            "kappa after",
            "kappa gain [95%]",
        )
    )
    body = "".join(
        "<tr>" + "".join(f'<td style="{TD}">{esc(v)}</td>' for v in row) + "</tr>"
        for row in _rows(al)
    )
    split = (
        f"{len(al.train_rows)} training, {len(al.validation_rows)} validation and "
        f"{len(al.test_rows)} test rows (seed {al.seed}); {al.calls} judge calls of "
        f"{al.max_calls}"
    )
    return (
        f'<div class="rubriclab-alignment" style="{WRAP}">'
        f'<div style="font-weight:600; margin-bottom:4px">Alignment of {esc(al.metric.name)}</div>'
        f'<div style="color:{color}; margin-bottom:4px" data-reliable="{str(reliable).lower()}">'
        f"{esc(al.gain.words)}</div>"
        f'<div style="color:{MUTED}; margin-bottom:8px">{esc(split)}. Before and after are '
        "agreement with people on the test rows only, which no choice saw.</div>"
        f'<table style="border-collapse:collapse; border:1px solid {BORDER}; margin-bottom:10px">'
        f"<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
        f'<div style="font-weight:600">Changes</div>{_changes_html(al.changes)}</div>'
    )
