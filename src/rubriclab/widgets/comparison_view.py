"""``ComparisonView``: run B against run A, where each changed and by how much.

Per metric and per criterion, the difference (B minus A) with its bootstrap interval as a bar,
sorted by the largest change; click a metric to list its cases by the size of their change,
and a case to read both runs' critiques side by side. The static form (no scripts) carries the
same tables for reports, GitHub and nbviewer.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import traitlets

from ..columns import CRITERIA, ERROR, RATIONALE, SCORE, VERDICT, col, to_plain
from ..comparison import percent as _pct
from ..scale import format_count
from ._assets import EsmBundle
from ._base import RubricView
from ._cells import text_of
from ._static.common import esc, mock_html

if TYPE_CHECKING:
    from ..comparison import Comparison

__all__ = [
    "ComparisonView",
    "case_rows",
    "comparison_html",
    "comparison_mimebundle",
    "comparison_text",
    "criteria_rows",
    "metric_rows",
    "overview",
]

MAX_LISTED = 500
_TEXT_FIELDS = ("prompt", "response", "reference")


class ComparisonTraits(traitlets.HasTraits):
    """The synced state the comparison's front-end code draws (ComparisonView's, and the
    Workbench's, which reuses that code)."""

    names = traitlets.List(traitlets.Unicode()).tag(sync=True)
    overview = traitlets.Dict().tag(sync=True)
    metrics = traitlets.List(traitlets.Dict()).tag(sync=True)
    criteria = traitlets.List(traitlets.Dict()).tag(sync=True)
    metric = traitlets.Unicode("").tag(sync=True)
    cases = traitlets.List(traitlets.Dict()).tag(sync=True)
    case_total = traitlets.Int(0).tag(sync=True)
    item = traitlets.Int(-1).tag(sync=True)
    detail = traitlets.Dict(allow_none=True, default_value=None).tag(sync=True)


class ComparisonView(RubricView, ComparisonTraits):
    """Deltas per metric and criterion with intervals; both critiques of one case side by side."""

    _esm = EsmBundle("comparison_view")

    def __init__(self, comparison: Comparison, *, title: str | None = None) -> None:
        self._comparison = comparison
        self._listed: list[Any] = []
        a, b = comparison.names
        rows = metric_rows(comparison)
        super().__init__(
            title=title or f"{b} vs {a}",
            names=[a, b],
            is_mock=bool(comparison.a.is_mock or comparison.b.is_mock),
            judge=comparison.b.judge if comparison.b.is_mock else comparison.a.judge,
            overview=overview(comparison),
            metrics=rows,
            criteria=criteria_rows(comparison),
        )
        if rows:
            self.metric = rows[0]["metric"]  # the largest change is listed first

    @traitlets.validate("metric")
    def _valid_metric(self, proposal: Any) -> str:
        value = str(proposal["value"])
        if value and value not in self._comparison.metric_names:
            raise traitlets.TraitError(
                f"no metric {value!r} in this comparison ({', '.join(self._comparison.metric_names)})"
            )
        return value

    @traitlets.observe("metric")
    def _on_metric(self, change: Any) -> None:
        with self.hold_sync():
            self.item = -1
            self.detail = None  # type: ignore[assignment]
            listed = case_rows(self._comparison, str(change["new"])) if change["new"] else []
            self.case_total = len(listed)
            self._listed = [r["key_value"] for r in listed[:MAX_LISTED]]
            self.cases = [{k: v for k, v in r.items() if k != "key_value"} for r in listed][
                :MAX_LISTED
            ]

    @traitlets.observe("item")
    def _on_item(self, change: Any) -> None:
        pos = int(change["new"])
        if pos < 0 or pos >= len(self._listed):
            self.detail = None  # type: ignore[assignment]
            return
        self.detail = case_detail(self._comparison, self._listed[pos], self.metric)

    def static_text(self) -> str:
        return comparison_text(self._comparison, self.title)

    def static_html(self) -> str:
        return comparison_html(self._comparison, self.title)


# -- payloads --------------------------------------------------------------------------------------


def _finite(value: Any) -> Any:
    if value is None or isinstance(value, str | bool):
        return value
    try:
        number = float(value)
    except (TypeError, ValueError):
        return to_plain(value, str)
    return None if math.isnan(number) or math.isinf(number) else number


def overview(c: Comparison) -> dict[str, Any]:
    return {
        "cases": len(c.table),
        "only_a": len(c.only_a),
        "only_b": len(c.only_b),
        "errored": len(c.errored),
        "confidence": c.confidence,
        "metrics_only_in_one": list(c.metrics_only_in_one),
    }


def _by_change(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(rows, key=lambda r: -abs(r["diff"]) if r.get("diff") is not None else 1.0)


def metric_rows(c: Comparison) -> list[dict[str, Any]]:
    rows = []
    for name, row in c.summary.iterrows():
        out = {"metric": str(name)}
        out.update({str(k): _finite(v) for k, v in row.items()})
        out["kind"] = c.b.metric(str(name)).kind
        rows.append(out)
    return _by_change(rows)


def criteria_rows(c: Comparison) -> list[dict[str, Any]]:
    return [{str(k): _finite(v) for k, v in r.items()} for r in c.criteria.to_dict("records")]


def case_rows(c: Comparison, metric: str) -> list[dict[str, Any]]:
    t = c.table

    def cells(name: str) -> list[Any]:  # column by column: iterrows cost ~1 s per 1,000 rows
        key = col(metric, name)
        return t[key].tolist() if key in t.columns else [None] * len(t)

    sa, sb, diff = cells("score_a"), cells("score_b"), cells("diff")
    va, vb, ea, eb = cells("verdict_a"), cells("verdict_b"), cells("error_a"), cells("error_b")
    rows = []
    for i, key in enumerate(t.index.tolist()):
        rows.append(
            {
                "key": text_of(key, 120),
                "key_value": key,
                "score_a": _finite(sa[i]),
                "score_b": _finite(sb[i]),
                "diff": _finite(diff[i]),
                "verdict_a": _text_or_none(va[i]),
                "verdict_b": _text_or_none(vb[i]),
                "error_a": _text_or_none(ea[i], 200),
                "error_b": _text_or_none(eb[i], 200),
            }
        )
    # the largest change first; errored rows (no difference) after every paired row
    return sorted(rows, key=lambda r: -abs(r["diff"]) if r["diff"] is not None else 1.0)


def _text_or_none(value: Any, limit: int = 120) -> str | None:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    return text_of(value, limit)


def case_detail(c: Comparison, key: Any, metric: str) -> dict[str, Any]:
    """Both runs' critiques of one case under one metric, as plain text fields."""
    row_a, row_b = c.case_rows(key)
    sides = []
    for name, row in zip(c.names, (row_a, row_b), strict=True):
        if row is None:
            sides.append({"name": name, "missing": True})
            continue
        criteria = []
        for crit in row.get(col(metric, CRITERIA)) or []:
            if isinstance(crit, Mapping):
                criteria.append(
                    {
                        "name": text_of(crit.get("name"), 80),
                        "question": text_of(crit.get("question"), 400),
                        "label": text_of(crit.get("label", crit.get("winner")), 120),
                        "level": _finite(crit.get("level")),
                        "evidence": text_of(crit.get("evidence"), 600),
                        "reasoning": text_of(crit.get("reasoning"), 600),
                    }
                )
        sides.append(
            {
                "name": name,
                "score": _finite(row.get(col(metric, SCORE))),
                "verdict": _text_or_none(row.get(col(metric, VERDICT))),
                "error": _text_or_none(row.get(col(metric, ERROR)), 600),
                "rationale": text_of(row.get(col(metric, RATIONALE)), 2000),
                "criteria": criteria,
                "fields": [
                    {"name": f, "text": text_of(row.get(f), 4000)}
                    for f in _TEXT_FIELDS
                    if row.get(f) is not None
                ],
            }
        )
    return {"key": text_of(key, 120), "metric": metric, "sides": sides}


# -- static forms ------------------------------------------------------------------------------------

_TH = "text-align:left; padding:3px 8px; border-bottom:1px solid var(--jp-border-color2, #e0e0e0); color:var(--jp-ui-font-color2, #666);"
_TD = "text-align:left; vertical-align:top; padding:3px 8px; border-bottom:1px solid var(--jp-border-color2, #e0e0e0); font-variant-numeric:tabular-nums;"
_WRAP = "font-family: var(--jp-ui-font-family, system-ui, sans-serif); font-size: 13px; color: var(--jp-ui-font-color1, #333);"


def _level(value: Any) -> str:
    number = _finite(value)
    return "n/a" if not isinstance(number, float | int) else f"{float(number):+.2f}"


def _interval(row: Mapping[str, Any], fmt: Any) -> str:
    lo, hi = row.get("ci_low"), row.get("ci_high")
    if fmt is _pct:
        return f"[{_pct(lo, True)}, {_pct(hi, True)}]"
    return f"[{fmt(lo)}, {fmt(hi)}]"


def _pass_text(row: Mapping[str, Any]) -> str:
    if _finite(row.get("pass_a")) is None:
        return ""
    p = _finite(row.get("mcnemar_p"))
    return (
        f"{_pct(row.get('pass_a'))} → {_pct(row.get('pass_b'))} "
        f"({_pct(row.get('pass_diff'), True)}; McNemar p = {'n/a' if p is None else f'{p:.3g}'})"
    )


def _counts(row: Mapping[str, Any]) -> str:
    return f"{int(row['better'])} / {int(row['same'])} / {int(row['worse'])}"


def comparison_text(c: Comparison, title: str = "") -> str:
    text = c.summary_text()
    return f"{title}\n{text}" if title else text


def comparison_mimebundle(c: Comparison) -> dict[str, Any]:
    """What a ``Comparison`` shows at the end of a cell: its summary text and static HTML."""
    return {"text/plain": c.summary_text(), "text/html": comparison_html(c)}


def _table(head: Sequence[str], rows: Sequence[Sequence[Any]], margin: str = "6px 0") -> str:
    """A plain HTML table; every header and cell is escaped text."""
    th = "".join(f'<th style="{_TH}">{esc(h)}</th>' for h in head)
    body = "".join(
        "<tr>" + "".join(f'<td style="{_TD}">{esc(v)}</td>' for v in r) + "</tr>" for r in rows
    )
    return f'<table style="border-collapse:collapse; margin:{margin};"><tr>{th}</tr>{body}</table>'


def comparison_html(c: Comparison, title: str = "") -> str:
    """The comparison as HTML with no scripts: metrics, criteria and the most changed cases."""
    a, b = c.names
    pct = round(100 * c.confidence)
    out = [f'<div class="rubriclab-static rl-comparison-static" style="{_WRAP}">']
    out.append(mock_html(c.a.is_mock or c.b.is_mock, c.b.judge if c.b.is_mock else c.a.judge))
    out.append(
        f'<div style="font-weight:600; font-size:15px;">{esc(title or f"{b} vs {a}")}</div>'
        f"<div>{format_count(len(c.table), 'case')} paired (differences are {esc(b)} − {esc(a)}); only in "
        f"{esc(a)}: {len(c.only_a)}; only in {esc(b)}: {len(c.only_b)}; errored rows left out: "
        f"{len(c.errored)}</div>"
    )
    head = ["metric", a, b, "difference", f"{pct}% interval", "better / same / worse", "pass rate"]
    rows: list[tuple[Any, ...]] = [
        (
            r["metric"],
            _pct(r.get("mean_a")),
            _pct(r.get("mean_b")),
            _pct(r.get("diff"), True),
            _interval(r, _pct),
            _counts(r),
            _pass_text(r),
        )
        for r in metric_rows(c)
    ]
    out.append(_table(head, rows))
    crit = criteria_rows(c)
    if crit:
        out.append("<div><b>Per criterion</b> (mean level difference, largest change first)</div>")
        head = ["metric", "criterion", "difference", f"{pct}% interval", "b / s / w"]
        rows = [
            (
                r["metric"],
                r["criterion"],
                _level(r.get("diff")),
                _interval(r, _level),
                _counts(r),
            )
            for r in crit
        ]
        out.append(_table(head, rows))
    for metric in c.metric_names:
        changed = [r for r in case_rows(c, metric) if r["diff"]][:10]
        if changed:
            out.append(f"<div><b>{esc(metric)}</b>: the most changed cases</div>")
            rows = [
                (
                    r["key"],
                    f"{_pct(r['score_a'])} {r['verdict_a'] or ''}".strip(),
                    f"{_pct(r['score_b'])} {r['verdict_b'] or ''}".strip(),
                    _pct(r["diff"], True),
                )
                for r in changed
            ]
            out.append(_table(["case", a, b, "difference"], rows, "4px 0 8px"))
    out.append("</div>")
    return "".join(out)
