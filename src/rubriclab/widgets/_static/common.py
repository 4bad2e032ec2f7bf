"""What every static form shares: inline styles (JupyterLab's theme variables with light
fallbacks), escaping, number formats, the mock banner, and model text as escaped Markdown."""

from __future__ import annotations

import html
import math
from collections.abc import Mapping, Sequence
from typing import Any

from ...scale import format_percent
from .._markdown import looks_like_markdown, markdown_html

__all__ = [
    "BG2",
    "BORDER",
    "MOCK_TEXT",
    "MUTED",
    "PRE",
    "TD",
    "TH",
    "WRAP",
    "esc",
    "field_html",
    "field_label_html",
    "fmt_cost",
    "fmt_count",
    "fmt_int",
    "fmt_pass_rule",
    "fmt_rate",
    "fmt_score",
    "fmt_std",
    "images_html",
    "md_html",
    "mock_html",
    "num",
]

FG = "var(--jp-ui-font-color1, #333)"
MUTED = "var(--jp-ui-font-color2, #666)"
BORDER = "var(--jp-border-color2, #e0e0e0)"
BG2 = "var(--jp-layout-color1, #fafafa)"
WRAP = (
    f"font-family: var(--jp-ui-font-family, system-ui, sans-serif); font-size: 13px; color: {FG};"
)
TH = f"text-align:left; padding:3px 8px; border-bottom:1px solid {BORDER}; color:{MUTED};"
TD = f"text-align:left; vertical-align:top; padding:3px 8px; border-bottom:1px solid {BORDER};"
PRE = f"white-space:pre-wrap; overflow-wrap:anywhere; background:{BG2}; border:1px solid {BORDER}; border-radius:4px; padding:5px 8px; margin:2px 0 8px;"
MOCK_TEXT = "MOCK judge: these results come from an offline mock, not a real model."


def esc(value: Any) -> str:
    return html.escape("" if value is None else str(value), quote=True)


def num(value: Any) -> float | None:
    if value is None or isinstance(value, bool):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(number) or math.isinf(number) else number


def fmt_score(value: Any, kind: str = "pointwise") -> str:
    number = num(value)
    if number is None:
        return "—"
    if kind == "pairwise":  # one unit with its mean: a signed percent on -100%..+100%
        return format_percent(number, signed=True)
    return f"{100 * number:.1f}%"


def fmt_count(row: Mapping[str, Any], key: str, count: str) -> str:
    """``33% (1/3)``: a pairwise rate with the counts behind it (``count`` of ``scored``)."""
    rate, k, n = num(row.get(key)), num(row.get(count)), num(row.get("scored"))
    if rate is None:
        return "—"
    return f"{100 * rate:.0f}%" + (f" ({round(k):,}/{round(n):,})" if k is not None and n else "")


def fmt_std(value: Any) -> str:
    """A labelled standard deviation of 0-1 scores: ``± 12.3% std``."""
    number = num(value)
    return "" if number is None else f"± {100 * number:.1f}% std"


def fmt_pass_rule(row: Mapping[str, Any]) -> str:
    """``31 of 50 with a verdict passed`` when the summary has the counts, else ``""``."""
    passed, verdicts = num(row.get("passed")), num(row.get("verdicts"))
    if passed is None or verdicts is None:
        return ""
    n = num(row.get("n"))
    without = (
        f", {round(n - verdicts):,} without a verdict" if n is not None and n > verdicts else ""
    )
    return f"{round(passed):,} of {round(verdicts):,} with a verdict passed{without}"


def fmt_rate(row: Mapping[str, Any], key: str) -> str:
    rate = num(row.get(key))
    if rate is None:
        return "—"
    low, high = num(row.get(f"{key}_low")), num(row.get(f"{key}_high"))
    iv = f" [{100 * low:.0f}–{100 * high:.0f}%]" if low is not None and high is not None else ""
    return f"{100 * rate:.0f}%{iv}"


def fmt_int(value: Any) -> str:
    number = num(value)
    return "—" if number is None else f"{round(number):,}"


def fmt_cost(value: Any) -> str:
    number = num(value)
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


_MD_BOX = f"overflow-wrap:anywhere; background:{BG2}; border:1px solid {BORDER}; border-radius:4px; padding:0 8px; margin:2px 0 8px;"


def md_html(text: Any) -> str:
    """Model or judge text as CommonMark (raw HTML stays text; see ``_markdown``)."""
    value = "" if text is None else str(text)
    if not looks_like_markdown(value):
        return f'<div style="{PRE}">{esc(value)}</div>'
    return f'<div class="rl-md" style="{_MD_BOX}">{markdown_html(value)}</div>'


def field_label_html(name: Any) -> str:
    return f'<div style="color:{MUTED}; font-size:11px; text-transform:uppercase; margin-top:6px;">{esc(name)}</div>'


def field_html(name: Any, text: Any) -> str:
    return field_label_html(name) + md_html(text)


def images_html(images: Sequence[Mapping[str, Any]]) -> str:
    parts = []
    for img in images:
        src = img.get("src")
        if src:
            parts.append(
                f'<img src="{esc(src)}" alt="{esc(img.get("name"))}" style="max-width:240px; max-height:180px; margin:2px; border:1px solid {BORDER};">'
            )
        else:
            parts.append(
                f'<div style="color:{MUTED};">{esc(img.get("name"))}: {esc(img.get("note"))}</div>'
            )
    return "".join(parts)
