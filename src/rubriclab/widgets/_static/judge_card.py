"""``JudgeCardView``'s static form: per suite and subset, each judge's accuracy against people
with its interval as a bar chart (published judges' figures drawn beside, hatched and labelled
"published, their prompt"), then the table of figures, MT-Bench agreement, the differences
between judges and what the run cost. Every string from the card is escaped."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .common import MUTED, TD, TH, WRAP, esc, fmt_cost, fmt_int, num

__all__ = ["judge_card_html", "judge_card_text"]

_COLOURS = ("#1976d2", "#e65100", "#2e7d32", "#6a1b9a", "#00838f", "#ad1457")
_PUB = "#9e9e9e"
MOCK_LINE = "MOCK judge: offline and deterministic, not a real model; these figures rate nothing."


def _pct(value: Any, digits: int = 1) -> str:
    v = num(value)
    return "—" if v is None else f"{100 * v:.{digits}f}%"


def _rate(rate: Any) -> str:
    if not isinstance(rate, Mapping) or num(rate.get("rate")) is None:
        return "—"
    k, n = rate.get("k"), rate.get("n")
    kk = f"{k:g}" if isinstance(k, float) else str(k)
    iv = ""
    if num(rate.get("low")) is not None and num(rate.get("high")) is not None:
        iv = f" [{_pct(rate['low'], 0)}, {_pct(rate['high'], 0)}]"
    return f"{_pct(rate['rate'])}{iv} ({kk}/{n})"


def _get(f: Any, *path: str) -> Any:
    for key in path:
        if not isinstance(f, Mapping):
            return None
        f = f.get(key)
    return f


def _judges(card: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return [j for j in card.get("judges", []) if isinstance(j, Mapping)]


def _is_mock(card: Mapping[str, Any]) -> bool:
    return any(bool(j.get("mock")) for j in _judges(card))


def _title(card: Mapping[str, Any]) -> str:
    names = ", ".join(str(j.get("name")) for j in _judges(card))
    mock = "MOCK " if _is_mock(card) else ""
    return f"{mock}Judge card: {names}"


def _groups(card: Mapping[str, Any]) -> list[tuple[str, str]]:
    seen: dict[tuple[str, str], None] = {}
    for f in card.get("figures", []):
        if isinstance(f, Mapping):
            seen[(str(f.get("suite")), str(f.get("subset")))] = None
    return list(seen)


def _figure(card: Mapping[str, Any], judge: str, suite: str, subset: str) -> Mapping[str, Any]:
    for f in card.get("figures", []):
        if (
            isinstance(f, Mapping)
            and f.get("judge") == judge
            and f.get("suite") == suite
            and f.get("subset") == subset
        ):
            return f
    return {}


def _published(
    card: Mapping[str, Any], suite: str, subset: str, figure: str
) -> list[Mapping[str, Any]]:
    return [
        p
        for p in card.get("published", [])
        if isinstance(p, Mapping)
        and p.get("suite") == suite
        and p.get("subset") == subset
        and p.get("figure") == figure
        and num(p.get("value")) is not None
    ]


def _bars_svg(
    bars: Sequence[tuple[str, float | None, float | None, float | None, str, bool]],
    title: str,
    chance: float | None,
    width: int = 520,
) -> str:
    """Horizontal bars 0-100% with interval whiskers; ``bars``: (label, value, low, high,
    colour, published)."""
    row, left, right = 20, 290, 60
    plot = width - left - right
    height = 24 + row * len(bars) + 18
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'role="img" aria-label="{esc(title)}" style="display:block; margin:4px 0 10px;">',
        f"<title>{esc(title)}</title>",
        f'<text x="0" y="13" font-size="12" font-weight="600" fill="currentColor">{esc(title)}</text>',
        '<defs><pattern id="rl-hatch" width="6" height="6" patternUnits="userSpaceOnUse" '
        'patternTransform="rotate(45)"><rect width="6" height="6" fill="#e0e0e0"/>'
        f'<line x1="0" y1="0" x2="0" y2="6" stroke="{_PUB}" stroke-width="3"/></pattern></defs>',
    ]
    base = 24
    for tick in (0, 0.25, 0.5, 0.75, 1.0):
        x = left + plot * tick
        out.append(
            f'<line x1="{x:.1f}" y1="{base - 4}" x2="{x:.1f}" y2="{base + row * len(bars)}" '
            'stroke="#e0e0e0" stroke-width="1"/>'
            f'<text x="{x:.1f}" y="{base + row * len(bars) + 12}" font-size="10" '
            f'text-anchor="middle" fill="#757575">{int(tick * 100)}%</text>'
        )
    if chance is not None:
        x = left + plot * chance
        out.append(
            f'<line x1="{x:.1f}" y1="{base - 4}" x2="{x:.1f}" y2="{base + row * len(bars)}" '
            'stroke="#757575" stroke-dasharray="3,3" stroke-width="1"><title>chance</title></line>'
        )
    for i, (label, value, low, high, colour, published) in enumerate(bars):
        y = base + i * row
        short = label if len(label) <= 42 else label[:41] + "…"
        out.append(
            f'<text x="{left - 6}" y="{y + 13}" font-size="11" text-anchor="end" '
            f'fill="currentColor"><title>{esc(label)}</title>{esc(short)}</text>'
        )
        if value is None:
            out.append(
                f'<text x="{left + 4}" y="{y + 13}" font-size="11" fill="#757575">no figure</text>'
            )
            continue
        fill = "url(#rl-hatch)" if published else colour
        out.append(
            f'<rect x="{left}" y="{y + 3}" width="{plot * value:.1f}" height="{row - 7}" '
            f'fill="{fill}" stroke="{_PUB if published else colour}"/>'
        )
        if low is not None and high is not None:
            x1, x2, ym = left + plot * low, left + plot * high, y + row / 2
            out.append(
                f'<line x1="{x1:.1f}" y1="{ym:.1f}" x2="{x2:.1f}" y2="{ym:.1f}" stroke="#212121" stroke-width="1.5"/>'
                f'<line x1="{x1:.1f}" y1="{ym - 4:.1f}" x2="{x1:.1f}" y2="{ym + 4:.1f}" stroke="#212121"/>'
                f'<line x1="{x2:.1f}" y1="{ym - 4:.1f}" x2="{x2:.1f}" y2="{ym + 4:.1f}" stroke="#212121"/>'
            )
        out.append(
            f'<text x="{left + plot + 4}" y="{y + 13}" font-size="11" fill="currentColor">{_pct(value)}</text>'
        )
    out.append("</svg>")
    return "".join(out)


def _chart(card: Mapping[str, Any], suite: str, subset: str) -> str:
    judges = [str(j.get("name")) for j in _judges(card)]
    mock = _is_mock(card)
    key: tuple[str, ...]
    if suite == "mt_bench":
        figure, chance, what = "agreement_without_ties", 0.5, "agreement with experts, without ties"
        key = ("agreement", "without_ties")
    else:
        figure, chance, what = "accuracy", 0.5, "accuracy against people"
        key = ("accuracy",)
    bars: list[tuple[str, float | None, float | None, float | None, str, bool]] = []
    for i, name in enumerate(judges):
        rate = _get(_figure(card, name, suite, subset), *key)
        label = f"{'MOCK · ' if mock and not name.startswith('MOCK') else ''}{name}"
        bars.append(
            (
                label,
                num(_get(rate, "rate")),
                num(_get(rate, "low")),
                num(_get(rate, "high")),
                _COLOURS[i % len(_COLOURS)],
                False,
            )
        )
    for p in _published(card, suite, subset, figure):
        label = f"{p.get('judge')} · {_scope(p)}"
        bars.append((label, num(p.get("value")), num(p.get("low")), num(p.get("high")), _PUB, True))
    svg = _bars_svg(bars, what, chance)
    if any(b[5] for b in bars):
        svg += (
            f'<div style="color:{MUTED}; font-size:11px; margin:-6px 0 8px;">hatched: '
            "published, their prompt (people: each other). “these items”: their shipped "
            "verdicts on the items drawn here; “all N”: the paper's figure on the full set.</div>"
        )
    return svg


def _scope(p: Mapping[str, Any]) -> str:
    kind = str(p.get("kind", ""))
    return "these items" if "these items" in kind else f"all {p.get('n')}"


_ROWS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("accuracy vs people [95% interval]", ("accuracy",)),
    ("right in both orders", ("accuracy_both_orders",)),
    ("swap inconsistency", ("swap_inconsistency",)),
    ("  of which first slot both times", ("first_slot",)),
    ("  of which second slot both times", ("second_slot",)),
    ("tie rate (per order)", ("tie_rate",)),
    ("accuracy, preferred answer shorter", ("length_bias", "preferred_shorter")),
    ("accuracy, preferred answer longer", ("length_bias", "preferred_longer")),
    ("MT-Bench agreement with ties (S1)", ("agreement", "with_ties")),
    ("MT-Bench agreement without ties (S2)", ("agreement", "without_ties")),
)


def _table_rows(card: Mapping[str, Any], suite: str, subset: str) -> list[tuple[str, list[str]]]:
    judges = [str(j.get("name")) for j in _judges(card)]
    figs = [_figure(card, name, suite, subset) for name in judges]
    rows: list[tuple[str, list[str]]] = [
        (
            "items (errors)",
            [f"{fmt_int(f.get('items'))} ({fmt_int(f.get('errors'))})" for f in figs],
        )
    ]
    for label, path in _ROWS:
        cells = [_rate(_get(f, *path)) for f in figs]
        if any(c != "—" for c in cells):
            rows.append((label, cells))
    return rows


def _published_rows(card: Mapping[str, Any], suite: str, subset: str) -> list[Mapping[str, Any]]:
    return [
        p
        for p in card.get("published", [])
        if isinstance(p, Mapping) and p.get("suite") == suite and p.get("subset") == subset
    ]


def judge_card_text(card: Mapping[str, Any]) -> str:
    lines = [_title(card)]
    if _is_mock(card):
        lines.append(MOCK_LINE)
    judges = [str(j.get("name")) for j in _judges(card)]
    for suite, subset in _groups(card):
        lines.append(f"{suite} · {subset}")
        for label, cells in _table_rows(card, suite, subset):
            lines.append(
                f"  {label:<40}"
                + " | ".join(f"{j}: {c}" for j, c in zip(judges, cells, strict=True))
            )
        for p in _published_rows(card, suite, subset):
            lines.append(
                f"  {p.get('judge')} {p.get('figure')}: {_pct(p.get('value'))} (n={p.get('n')}) — "
                f"{p.get('kind')}; {p.get('source')}"
            )
    for d in card.get("differences", []):
        if isinstance(d, Mapping):
            lines.append(
                f"{d.get('b')} − {d.get('a')} on {d.get('suite')} · {d.get('subset')}: "
                f"{_signed(d.get('difference'))} [{_signed(d.get('low'))}, {_signed(d.get('high'))}] (n={d.get('n')})"
            )
    for u in card.get("usage", []):
        if isinstance(u, Mapping):
            lines.append(
                f"{u.get('judge')}: {fmt_int(u.get('calls'))} calls, {fmt_int(u.get('cached_calls'))} from cache, {fmt_int(u.get('tokens'))} tokens, "
                f"{fmt_cost(u.get('cost'))}, {num(u.get('seconds')) or 0:.1f}s, {fmt_int(u.get('errors'))} errors"
            )
    return "\n".join(lines)


def _signed(value: Any) -> str:
    v = num(value)
    return "—" if v is None else f"{100 * v:+.1f} pts"


def judge_card_html(card: Mapping[str, Any]) -> str:
    judges = [str(j.get("name")) for j in _judges(card)]
    mock = _is_mock(card)
    out = [f'<div class="rubriclab-static rl-judge-card" style="{WRAP}">']
    if mock:
        out.append(
            '<div class="rl-mock" style="border:1px solid #f57c00; background:#fff3e0; '
            f'padding:5px 9px; border-radius:6px; font-weight:600; margin-bottom:6px;">⚠ {esc(MOCK_LINE)}</div>'
        )
    out.append(f'<div style="font-weight:600; font-size:15px;">{esc(_title(card))}</div>')
    metric = card.get("metric") if isinstance(card.get("metric"), Mapping) else {}
    assert isinstance(metric, Mapping)
    rubric = metric.get("rubric")
    how = (
        "rubriclab's pairwise metric with its general rubric"
        if metric.get("default")
        else f"metric {metric.get('name')!s}"
    )
    suites = ", ".join(str(s) for s in card.get("suites", []))
    count = "all items" if card.get("n") is None else f"{card.get('n')} items per suite"
    out.append(
        f'<div style="color:{MUTED}; margin:2px 0 6px;">Judged with {esc(how)}, both orders; '
        f"suites {esc(suites)}; {esc(count)} (seed {esc(card.get('seed'))}). "
        "Intervals: Wilson 95% over items.</div>"
    )
    if isinstance(rubric, list) and rubric:
        out.append(
            "<details><summary>rubric</summary><ol>"
            + "".join(f"<li>{esc(q)}</li>" for q in rubric)
            + "</ol></details>"
        )
    for suite, subset in _groups(card):
        out.append(
            f'<h3 style="margin:14px 0 2px; font-size:14px;">{esc(suite)} · {esc(subset)}</h3>'
        )
        out.append(_chart(card, suite, subset))
        head = "".join(
            f'<th style="{TH}">{esc(("MOCK · " if mock and not j.startswith("MOCK") else "") + j)}</th>'
            for j in judges
        )
        out.append(
            f'<table style="border-collapse:collapse;"><tr><th style="{TH}">figure</th>{head}</tr>'
        )
        for label, cells in _table_rows(card, suite, subset):
            out.append(
                f'<tr><th style="{TH}">{esc(label)}</th>'
                + "".join(f'<td style="{TD}">{esc(c)}</td>' for c in cells)
                + "</tr>"
            )
        out.append("</table>")
        pubs = _published_rows(card, suite, subset)
        if pubs:
            out.append(
                '<table style="border-collapse:collapse; margin-top:4px;"><tr>'
                + "".join(
                    f'<th style="{TH}">{h}</th>'
                    for h in ("published judge", "figure", "value", "n", "what", "source")
                )
                + "</tr>"
            )
            for p in pubs:
                iv = ""
                if num(p.get("low")) is not None and num(p.get("high")) is not None:
                    iv = f" [{_pct(p.get('low'), 0)}, {_pct(p.get('high'), 0)}]"
                out.append(
                    "<tr>"
                    + "".join(
                        f'<td style="{TD}{" white-space:nowrap;" if i == 2 else ""}">{esc(v)}</td>'
                        for i, v in enumerate(
                            (
                                p.get("judge"),
                                p.get("figure"),
                                _pct(p.get("value")) + iv,
                                p.get("n"),
                                p.get("kind"),
                                p.get("source"),
                            )
                        )
                    )
                    + "</tr>"
                )
            out.append("</table>")
    diffs = [d for d in card.get("differences", []) if isinstance(d, Mapping)]
    if diffs:
        out.append(
            '<h3 style="margin:14px 0 2px; font-size:14px;">Accuracy differences (paired bootstrap 95%)</h3>'
        )
        out.append(
            '<table style="border-collapse:collapse;"><tr>'
            + "".join(
                f'<th style="{TH}">{h}</th>'
                for h in ("judges", "suite · subset", "difference", "interval", "items")
            )
            + "</tr>"
        )
        for d in diffs:
            out.append(
                "<tr>"
                + "".join(
                    f'<td style="{TD}">{esc(v)}</td>'
                    for v in (
                        f"{d.get('b')} − {d.get('a')}",
                        f"{d.get('suite')} · {d.get('subset')}",
                        _signed(d.get("difference")),
                        f"[{_signed(d.get('low'))}, {_signed(d.get('high'))}]",
                        d.get("n"),
                    )
                )
                + "</tr>"
            )
        out.append("</table>")
    usage = [u for u in card.get("usage", []) if isinstance(u, Mapping)]
    if usage:
        out.append('<h3 style="margin:14px 0 2px; font-size:14px;">Cost of the run</h3>')
        out.append(
            '<table style="border-collapse:collapse;"><tr>'
            + "".join(
                f'<th style="{TH}">{h}</th>'
                for h in (
                    "judge",
                    "items",
                    "errors",
                    "calls",
                    "from cache",
                    "tokens",
                    "cost",
                    "time",
                )
            )
            + "</tr>"
        )
        for u in usage:
            seconds = num(u.get("seconds"))
            out.append(
                "<tr>"
                + "".join(
                    f'<td style="{TD}">{esc(v)}</td>'
                    for v in (
                        u.get("judge"),
                        fmt_int(u.get("items")),
                        fmt_int(u.get("errors")),
                        fmt_int(u.get("calls")),
                        fmt_int(u.get("cached_calls")),
                        fmt_int(u.get("tokens")),
                        fmt_cost(u.get("cost")),
                        "—" if seconds is None else f"{seconds:.1f}s",
                    )
                )
                + "</tr>"
            )
        out.append("</table>")
    if "hhh" in card.get("suites", []):
        out.append(
            f'<p style="color:{MUTED};">HHH: no published judge figure is shown; none could be '
            "verified from the shipped data. Chance is 50%.</p>"
        )
    out.append("</div>")
    return "".join(out)
