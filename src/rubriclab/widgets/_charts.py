"""What the charts draw, computed once in the kernel for the live views and the static report.

Per metric: a score histogram (ten 10-point bins for pointwise, the 5-point scale for pairwise),
per-criterion result counts (YES/NO, levels, or winners: where answers fail), and for pairwise
the win/tie/loss rates with their intervals from the summary. Plain JSON; no HTML is built here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ..columns import CRITERIA, ERROR, PASSED, SCORE, col, to_plain
from ..scoring import unshared_criteria
from ._cells import is_missing
from ._source import Source

__all__ = ["BINS", "chart_data", "metric_chart"]

BINS = 10
PAIRWISE_SCALE = (1.0, 0.5, 0.0, -0.5, -1.0)
PAIRWISE_LABELS = {
    1.0: "candidate much better",
    0.5: "candidate better",
    0.0: "tie",
    -0.5: "baseline better",
    -1.0: "baseline much better",
}
MAX_CRITERIA = 40


def chart_data(source: Source, positions: np.ndarray | None = None) -> list[dict[str, Any]]:
    """One chart block per metric over the rows at ``positions`` (all rows when None)."""
    table = source.table if positions is None else source.table.iloc[positions]
    return [
        metric_chart(table, m.name, m.kind, _summary_row(source, m.name))
        for m in source.metrics
        if col(m.name, SCORE) in table.columns
    ]


def _summary_row(source: Source, name: str) -> Mapping[str, Any]:
    return next((s for s in source.summary if s.get("metric") == name), {})


def metric_chart(
    table: pd.DataFrame, name: str, kind: str, summary: Mapping[str, Any]
) -> dict[str, Any]:
    scores = pd.to_numeric(table[col(name, SCORE)], errors="coerce").to_numpy(dtype=float)
    scored = scores[~np.isnan(scores)]
    err_col = col(name, ERROR)
    errors = (
        int(sum(1 for v in table[err_col].tolist() if not is_missing(v) and str(v).strip()))
        if err_col in table.columns
        else 0
    )
    out: dict[str, Any] = {
        "metric": name,
        "kind": kind,
        "rows": len(table),
        "scored": len(scored),
        "errors": errors,
    }
    if kind == "pairwise":
        out["choices"] = [
            {"value": v, "label": PAIRWISE_LABELS[v], "count": int(np.sum(np.isclose(scored, v)))}
            for v in PAIRWISE_SCALE
        ]
        out["wtl"] = [
            _rate(summary, "win_rate", "candidate wins"),
            _rate(summary, "tie_rate", "ties"),
            _rate(summary, "loss_rate", "baseline wins"),
        ]
    else:
        clipped = np.clip(scored, 0.0, 1.0)
        counts, _edges = np.histogram(clipped, bins=BINS, range=(0.0, 1.0))
        out["histogram"] = [
            {"low": i / BINS, "high": (i + 1) / BINS, "count": int(c)} for i, c in enumerate(counts)
        ]
        passed_col = col(name, PASSED)
        if passed_col in table.columns:
            flags = table[passed_col].tolist()
            out["passed"] = sum(1 for v in flags if v is True or v is np.True_)
            out["failed"] = sum(1 for v in flags if v is False or v is np.False_)
    column = col(name, CRITERIA)
    cells = table[column].tolist() if column in table.columns else []
    out["criteria"] = _criteria_counts(cells)
    # per-row rubrics: say why criteria are missing, rather than show unrelated sums
    out["unshared_criteria"] = len(unshared_criteria(cells))
    return out


def _rate(summary: Mapping[str, Any], key: str, label: str) -> dict[str, Any]:
    return {
        "label": label,
        "rate": to_plain(summary.get(key), str),
        "low": to_plain(summary.get(f"{key}_low"), str),
        "high": to_plain(summary.get(f"{key}_high"), str),
    }


def _result(item: Mapping[str, Any]) -> tuple[str, float, bool | None] | None:
    """(label, sort order, good?) of one criterion result."""
    winner = item.get("winner")
    if isinstance(winner, str) and winner:
        order = {"candidate": 0.0, "tie": 1.0, "baseline": 2.0}.get(winner, 3.0)
        return winner, order, {"candidate": True, "baseline": False}.get(winner)
    label = item.get("label")
    if isinstance(label, str) and label.upper() in ("YES", "NO"):
        return label.upper(), 0.0 if label.upper() == "YES" else 1.0, label.upper() == "YES"
    level = item.get("level")
    if isinstance(level, bool):
        return ("YES" if level else "NO"), 0.0 if level else 1.0, bool(level)
    if isinstance(level, int | float) and not is_missing(level):
        good = None if item.get("passed_critical") is None else bool(item["passed_critical"])
        return f"level {level:g}", -float(level), good
    return None


def _criteria_counts(values: Sequence[Any]) -> list[dict[str, Any]]:
    """Per criterion, how many rows got each result (highest level / YES / candidate first).

    Only criteria shared by the rows: a name asking different questions on different rows
    (per-row generated rubrics' q1, q2, ...) is left out rather than added up."""
    seen: dict[str, dict[str, Any]] = {}
    unshared = unshared_criteria(values)
    for value in values:
        if not isinstance(value, list | tuple):
            continue
        for item in value:
            if not isinstance(item, Mapping) or item.get("name") is None:
                continue
            if str(item["name"]) in unshared:
                continue
            name = str(item["name"])[:400]
            entry = seen.get(name)
            if entry is None:
                if len(seen) >= MAX_CRITERIA:
                    continue
                entry = seen[name] = {
                    "name": name,
                    "question": str(item.get("question") or "")[:400],
                    "results": {},
                }
            result = _result(item)
            label, order, good = result if result is not None else ("missing", 99.0, False)
            bucket = entry["results"].setdefault(
                label, {"label": label, "order": order, "good": good, "count": 0}
            )
            bucket["count"] += 1
    out = []
    for entry in seen.values():
        results = sorted(entry["results"].values(), key=lambda r: (r["order"], r["label"]))
        total = sum(r["count"] for r in results)
        if unshared and total < 2:  # per-row rubrics: a name seen once is shared by nothing
            continue
        bad = sum(r["count"] for r in results if r["good"] is False)
        out.append(
            {
                "name": entry["name"],
                "question": entry["question"],
                "total": total,
                "bad_share": bad / total if total else None,
                "results": [
                    {"label": r["label"], "count": r["count"], "good": r["good"]} for r in results
                ],
            }
        )
    return out
