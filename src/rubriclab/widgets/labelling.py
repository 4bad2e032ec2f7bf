"""What a labelling view needs for one row, and how a person's answers become labels.

The notebook views (``ResultTable``'s drill-down, ``PairwiseView``) and the review page share
this: per metric, what a person may answer (``overall`` and each criterion, with the allowed
values), the judge's own answer beside each, and the labels already given. Everything is plain
JSON; text stays text (the browser puts it in the page with ``textContent``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..calibration.people import judge_answer
from ..columns import to_plain
from ..result import OVERALL, EvalResult, LabelError
from ._cells import case_payload, text_of
from ._source import as_source

__all__ = [
    "disagreeing_rows",
    "label_form",
    "labelled_rows",
    "review_case",
    "save_labels",
]

#: labels sent in one request at most (a person's answers on one row are a handful)
MAX_LABELS_PER_REQUEST = 200


def label_form(
    result: EvalResult, row: int, metrics: Sequence[str] | None = None
) -> list[dict[str, Any]]:
    """Per metric: each question a person may answer on ``row`` (``overall`` first), its
    allowed values, the judge's answer and every reviewer's latest label."""
    n = result.row_count
    if not 0 <= row < n:
        raise IndexError(f"row {row} is out of range: the result has {n} rows")
    names = list(metrics) if metrics is not None else result.metric_names
    labels = result.labels
    here = labels[labels["row"] == row]
    cells = result.table.iloc[row]
    out = []
    for name in names:
        info = result.metric(name)
        pairwise = info.kind == "pairwise"
        mine = here[here["metric"] == name]
        questions = []
        for criterion, allowed in result.label_choices(row, name).items():
            given = mine[mine["criterion"] == criterion]
            judged = judge_answer(cells, name, criterion, pairwise)
            yes_no = not pairwise and criterion != OVERALL and set(allowed) == {"yes", "no"}
            if judged is not None and yes_no:
                judged = "yes" if judged else "no"
            questions.append(
                {
                    "criterion": criterion,
                    "allowed": [to_plain(v) for v in allowed],
                    "judge": to_plain(judged),
                    "labels": [
                        {
                            "reviewer": text_of(r["reviewer"], 100),
                            "value": to_plain(r["value"]),
                            "time": str(r["time"]),
                        }
                        for _, r in given.iterrows()
                    ],
                }
            )
        comments = [
            {"reviewer": text_of(r["reviewer"], 100), "comment": text_of(r["comment"], 2000)}
            for _, r in mine[mine["criterion"] == OVERALL].iterrows()
            if r["comment"]
        ]
        out.append(
            {"metric": name, "kind": info.kind, "questions": questions, "comments": comments}
        )
    return out


def review_case(result: EvalResult, row: int) -> dict[str, Any]:
    """One row for the review page: the case as the views show it, and its labelling form."""
    source = as_source(result)
    return {**case_payload(source, row), "form": label_form(result, row)}


def save_labels(result: EvalResult, raw: Any, reviewer: str) -> int:
    """Record the labels a view or the review page sent: ``[{row, metric, criterion, value,
    comment}]`` by ``reviewer``. All are checked before any is kept (a bad one is an error
    naming it); returns how many were kept."""
    if not isinstance(raw, list) or not raw:
        raise LabelError("expected a non-empty list of labels")
    if len(raw) > MAX_LABELS_PER_REQUEST:
        raise LabelError(f"at most {MAX_LABELS_PER_REQUEST} labels at once")
    records = []
    for item in raw:
        if not isinstance(item, Mapping):
            raise LabelError("each label must be an object")
        allowed = {"row", "metric", "criterion", "value", "comment"}
        extra = set(item) - allowed
        if extra:
            raise LabelError(f"unknown label keys: {', '.join(sorted(map(str, extra)))}")
        records.append({**dict(item), "reviewer": reviewer})
    return result.add_labels(records)


def labelled_rows(result: EvalResult, reviewer: str | None = None) -> set[int]:
    """Rows with at least one label (by ``reviewer``, when given)."""
    labels = result.labels
    if reviewer is not None:
        labels = labels[labels["reviewer"] == reviewer]
    return {int(r) for r in labels["row"].unique()}


def disagreeing_rows(result: EvalResult, metrics: Sequence[str] | None = None) -> set[int]:
    """Rows where some person's label differs from the judge's answer (any criterion)."""
    out: set[int] = set()
    labels = result.labels
    if metrics is not None:
        labels = labels[labels["metric"].isin(list(metrics))]
    table = result.table
    kinds = {m.name: m.kind for m in result.metrics}
    for rec in labels.itertuples(index=False):
        row, metric, criterion, value = (
            int(str(rec.row)),
            str(rec.metric),
            str(rec.criterion),
            rec.value,
        )
        if row in out:
            continue
        judged = judge_answer(table.iloc[row], metric, criterion, kinds[metric] == "pairwise")
        if judged is None:
            continue
        person: Any = value
        if value in ("yes", "no") and isinstance(judged, int):
            person = 1 if value == "yes" else 0
        if person != judged:
            out.add(row)
    return out
