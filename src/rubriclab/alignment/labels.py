"""People's labels for one metric, one value per (row, criterion): the truth alignment aims at.

Labels come as the review store writes them (``result.labels``): columns ``row`` (0-based
position, as in the result table), ``metric``, ``criterion`` (a criterion's name or
``"overall"``), ``value``, ``reviewer``, ``time``, ``comment``. Each reviewer counts once per
(row, criterion) with their latest label; then the majority of reviewers wins, and a tie goes to
the most recent label among the tied values.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from typing import Any

import pandas as pd

from ..fewshot import PAIRWISE_VALUES
from ..rubric import Criterion, Rubric

__all__ = ["LABEL_COLUMNS", "People", "people_labels"]

LABEL_COLUMNS = ("row", "metric", "criterion", "value", "reviewer", "time", "comment")
_YES = ("yes", "pass", "true", "1", "passed")
_NO = ("no", "fail", "false", "0", "failed")


@dataclass(frozen=True)
class People:
    """Per row: the value people gave each criterion (levels as numbers, ``overall`` as
    pass/fail, pairwise winners as candidate/tie/baseline), and their comments."""

    values: dict[int, dict[str, Any]]
    comments: dict[int, dict[str, str]]

    @property
    def rows(self) -> list[int]:
        return sorted(self.values)


def people_labels(
    labels: pd.DataFrame, metric: str, rubric: Rubric, n_rows: int, *, pairwise: bool
) -> People:
    """The labels for ``metric``, checked against its rubric and the data, one per item."""
    if not isinstance(labels, pd.DataFrame):
        raise ValueError(
            f"labels must be a DataFrame with columns {', '.join(LABEL_COLUMNS)} "
            f"(result.labels), got {type(labels).__name__}"
        )
    missing = [c for c in ("row", "metric", "criterion", "value") if c not in labels.columns]
    if missing:
        raise ValueError(f"labels have no column {', '.join(repr(c) for c in missing)}")
    mine = labels[labels["metric"].astype(str) == metric]
    if mine.empty:
        names = sorted({str(m) for m in labels["metric"].tolist()})
        raise ValueError(
            f"no labels for metric {metric!r} (labels name: {', '.join(names) or 'none'})"
        )
    by_name = {c.name: c for c in rubric.criteria}
    votes: dict[tuple[int, str], dict[Any, tuple[int, Any, str]]] = {}
    order = _order(mine)
    for pos, (_, rec) in zip(order, mine.iterrows(), strict=True):
        row = _row(rec["row"], n_rows)
        name = str(rec["criterion"])
        if name != "overall" and name not in by_name:
            raise ValueError(
                f"labels row {row}: criterion {name!r} is not in metric {metric!r}'s rubric "
                f"({', '.join(by_name)}, or overall)"
            )
        value = _value(rec["value"], by_name.get(name), pairwise, f"labels row {row}, {name}")
        reviewer = rec.get("reviewer", None)
        reviewer = None if _missing(reviewer) else str(reviewer)
        comment = rec.get("comment", None)
        text = "" if _missing(comment) else str(comment)
        key = reviewer if reviewer is not None else ("label", pos)  # no name: each counts
        item = votes.setdefault((row, name), {})
        if key not in item or item[key][0] <= pos:
            item[key] = (pos, value, text)  # a reviewer's latest label replaces theirs
    values: dict[int, dict[str, Any]] = {}
    comments: dict[int, dict[str, str]] = {}
    for (row, name), item in votes.items():
        tally = Counter(v for _, v, _ in item.values())
        top = max(tally.values())
        tied = {v for v, n in tally.items() if n == top}
        pos, value, text = max((p, v, t) for p, v, t in item.values() if v in tied)
        values.setdefault(row, {})[name] = value
        if text:
            comments.setdefault(row, {})[name] = text
    return People(values, comments)


def _order(frame: pd.DataFrame) -> list[int]:
    """Each label's place in time: by ``time`` where given (ties and gaps: table order)."""
    n = len(frame)
    if "time" not in frame.columns:
        return list(range(n))
    times = pd.to_datetime(frame["time"], errors="coerce", utc=True)
    keyed = sorted(
        range(n),
        key=lambda i: (
            pd.isna(times.iloc[i]),
            times.iloc[i] if not pd.isna(times.iloc[i]) else 0,
            i,
        ),
    )
    rank = [0] * n
    for r, i in enumerate(keyed):
        rank[i] = r
    return rank


def _missing(value: Any) -> bool:
    if value is None:
        return True
    if isinstance(value, float) and math.isnan(value):
        return True
    return value is pd.NaT or (isinstance(value, str) and not value.strip())


def _row(value: Any, n_rows: int) -> int:
    try:
        row = int(value)
    except (TypeError, ValueError):
        raise ValueError(f"labels row {value!r} is not a row number") from None
    if not 0 <= row < n_rows or row != value:
        raise ValueError(f"labels row {value!r}: the data has rows 0 to {n_rows - 1}")
    return row


def _value(raw: Any, criterion: Criterion | None, pairwise: bool, where: str) -> Any:
    text = str(raw).strip().lower()
    if pairwise:
        if text not in PAIRWISE_VALUES:
            raise ValueError(f"{where}: {raw!r} is not candidate, tie or baseline")
        return text
    if criterion is None:  # overall
        if text in _YES:
            return "pass"
        if text in _NO:
            return "fail"
        raise ValueError(f"{where}: {raw!r} is not pass or fail")
    if criterion.is_yes_no:
        if text in _YES:
            return 1
        if text in _NO:
            return 0
        raise ValueError(f"{where}: {raw!r} is not yes/no (or pass/fail)")
    try:
        level = int(float(text))
    except ValueError:
        level = None
    if level is None or level not in criterion.scores or float(text) != level:
        levels = ", ".join(map(str, criterion.scores))
        raise ValueError(f"{where}: {raw!r} is not one of its levels ({levels})")
    return level
