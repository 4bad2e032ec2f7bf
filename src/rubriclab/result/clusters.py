"""Failure clusters: the failing rows of a metric grouped so people read causes, not rows.

First by the criterion that failed a row (its critical failure, else its NO answer or bottom level
of most weight, else its weakest criterion); then, inside each criterion, by what the judge's
evidence and reasoning say: TF-IDF vectors of those texts, agglomerative clustering on cosine
distance with a distance threshold (so the number of clusters follows the data), each cluster
named by its most characteristic words. Rubrics generated per row (no shared criteria: their
``q1`` asks something else on every row) are clustered on the failed questions and reasons
together. A judge may name each cluster (``name_with=judge``): one call a cluster, kept as the
judge's summary beside the word-based name, never in its place.

Needs scikit-learn (``pip install 'rubriclab[clusters]'``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ..columns import CRITERIA, ERROR, PASSED, RATIONALE, SCORE, col
from ..judges.sync import run_sync
from ..scale import format_count

if TYPE_CHECKING:
    from ..judges import Judge
    from . import EvalResult

__all__ = ["FailureClusters", "failure_clusters"]

#: cosine distance under which two reasons join one cluster (average linkage)
DEFAULT_THRESHOLD = 0.8
_SNIPPET = 400


@dataclass
class FailureClusters:
    """Clusters of one metric's failing rows, largest first.

    ``clusters``: one row a cluster (``cluster``, ``criterion``, ``name``, ``judge_name``,
    ``size``, ``share`` of the failing rows, ``rows`` as row positions in the result table,
    ``terms``). ``failing``: one row a failing row (``row``, ``criterion``, ``reason``,
    ``cluster``). ``rows(cluster)`` gives a cluster's rows of the result table.
    """

    metric: str
    result: EvalResult
    clusters: pd.DataFrame
    failing: pd.DataFrame
    rule: str
    errors: int
    judged_rows: int
    notes: list[str] = field(default_factory=list)
    #: the results layer's hook up to the views (``rubriclab.result.presentation``), handed in by
    #: ``EvalResult.failure_clusters`` so this module needs nothing from its package
    present: Callable[[], Any] | None = field(default=None, repr=False)

    @property
    def is_mock(self) -> bool:
        return bool(self.result.is_mock)

    def rows(self, cluster: int) -> pd.DataFrame:
        """The result table's rows in one cluster (by its ``cluster`` number)."""
        match = self.clusters[self.clusters["cluster"] == cluster]
        if match.empty:
            raise KeyError(f"no cluster {cluster}; clusters are 0 to {len(self.clusters) - 1}")
        return self.result.table.iloc[list(match.iloc[0]["rows"])]

    def summary_text(self) -> str:
        mock = " (MOCK judge)" if self.is_mock else ""
        n = len(self.failing)
        lines = [
            f"{self.metric}{mock}: {n} failing of {format_count(self.judged_rows, 'judged row')} "
            f"({self.rule}) in {format_count(len(self.clusters), 'cluster')}; "
            f"{format_count(self.errors, 'row')} with errors left out"
        ]
        for c in self.clusters.to_dict("records"):
            judge = f"  (judge's summary: {c['judge_name']})" if c["judge_name"] else ""
            lines.append(
                f"{c['cluster']:>3}. [{c['criterion']}] {c['name']}: {format_count(int(c['size']), 'row')} "
                f"({100 * float(c['share']):.0f}%){judge}"
            )
        lines += self.notes
        return "\n".join(lines)

    def __repr__(self) -> str:
        return self.summary_text()

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        if self.present is None:
            text = self.summary_text()
            return {"text/plain": text}
        bundle: dict[str, Any] = self.present().clusters_mimebundle(self)
        return bundle


# -- which rows fail, and on what --------------------------------------------------------------
def _verdict(value: Any) -> bool | None:
    """A pass/fail cell as a bool (numpy's included), None when the row has no verdict."""
    if isinstance(value, bool | np.bool_):
        return bool(value)
    return None


def _items(cell: Any) -> list[Mapping[str, Any]]:
    return [c for c in cell if isinstance(c, Mapping)] if isinstance(cell, list) else []


def _level_share(item: Mapping[str, Any], bounds: Mapping[str, tuple[float, float]]) -> float:
    """Where a criterion's level sits on its scale: 0 the bottom, 1 the top."""
    label = str(item.get("label", "")).upper()
    if label in ("YES", "NO"):
        return 1.0 if label == "YES" else 0.0
    level: Any = item.get("level")
    low, high = bounds.get(str(item.get("name")), (0.0, 1.0))
    try:
        value = float(level)
    except (TypeError, ValueError):
        return math.nan
    return 0.0 if high <= low else (value - low) / (high - low)


def _failed_item(
    items: Sequence[Mapping[str, Any]], bounds: Mapping[str, tuple[float, float]]
) -> Mapping[str, Any] | None:
    """The criterion that failed a row: a critical failure, else the bottom-level (NO) item of
    most weight, else the weakest item."""
    if not items:
        return None
    critical = [c for c in items if c.get("passed_critical") is False]
    if critical:
        return critical[0]
    shares = [
        (_level_share(c, bounds), -float(c.get("weight") or 0), i) for i, c in enumerate(items)
    ]
    shares = [s for s in shares if not math.isnan(s[0])]
    if not shares:
        return items[0]
    return items[min(shares)[2]]


def _pairwise_failed(items: Sequence[Mapping[str, Any]]) -> Mapping[str, Any] | None:
    """The criterion the candidate lost (first of those), else the first."""
    lost = [c for c in items if c.get("winner") == "baseline"]
    return lost[0] if lost else (items[0] if items else None)


def _reason(item: Mapping[str, Any] | None, rationale: Any, per_row: bool) -> str:
    parts = []
    if item is not None:
        if per_row:
            parts.append(str(item.get("question") or item.get("name") or ""))
        for key in ("evidence", "reasoning"):
            if item.get(key):
                parts.append(str(item[key]))
    # the row's overall rationale only when the criterion has no words of its own: it is often
    # the same sentence on every row, and would then name every cluster
    if len(parts) <= int(per_row) and rationale and isinstance(rationale, str):
        parts.append(rationale)
    return " ".join(parts)[:4000]


# -- clustering ----------------------------------------------------------------------------------
def _cluster_texts(texts: Sequence[str], threshold: float) -> tuple[list[int], list[list[str]]]:
    """Labels and top terms per label for a list of texts."""
    try:
        from sklearn.cluster import AgglomerativeClustering  # type: ignore[import-untyped]
        from sklearn.feature_extraction.text import (  # type: ignore[import-untyped]
            TfidfVectorizer,
        )
    except ImportError as exc:  # pragma: no cover - the extra is installed in tests
        raise ImportError(
            "failure clusters need scikit-learn: pip install 'rubriclab[clusters]'"
        ) from exc
    if len(texts) == 1:
        return [0], [_fallback_terms(texts[0])]
    vectorizer = TfidfVectorizer(
        stop_words="english",
        sublinear_tf=True,
        max_features=5000,
        token_pattern=r"(?u)\b[a-zA-Z][a-zA-Z0-9']+\b",
    )
    try:
        matrix = vectorizer.fit_transform(texts)
    except ValueError:  # every text empty or only stop words: one cluster
        return [0] * len(texts), [[]]
    dense = matrix.toarray()
    empty = ~dense.any(axis=1)
    if empty.all():
        return [0] * len(texts), [[]]
    model = AgglomerativeClustering(
        n_clusters=None, metric="cosine", linkage="average", distance_threshold=threshold
    )
    labels = np.zeros(len(texts), dtype=int)
    if (~empty).sum() == 1:
        labels[~empty] = 0
    else:
        labels[~empty] = model.fit_predict(dense[~empty])
    if empty.any():  # texts with no words go together
        labels[empty] = labels.max() + 1
    vocabulary = np.array(vectorizer.get_feature_names_out())
    overall = dense.mean(axis=0)
    several = labels.max() > 0
    terms = []
    for label in range(int(labels.max()) + 1):
        centroid = dense[labels == label].mean(axis=0)
        # the words that set this cluster apart from the others of its criterion
        weight = centroid - overall if several else centroid
        top = [str(vocabulary[i]) for i in np.argsort(-weight)[:4] if weight[i] > 0]
        terms.append(top)
    return [int(x) for x in labels], terms


def _fallback_terms(text: str) -> list[str]:
    words = [w for w in text.lower().split() if len(w) > 3][:4]
    return words


def _name_with_judge(judge: Judge, criterion: str, reasons: Sequence[str]) -> str:
    """One call: a short name for what the reasons share. The reasons are model text; they go
    to the judge as data, and its answer is shown as the judge's summary."""
    shown = "\n".join(f"- {r[:300]}" for r in reasons[:12])
    prompt = (
        "Below are a judge's reasons for failing several responses on the criterion "
        f"{criterion!r}. In at most eight words, name the failure they share. Answer with the "
        f"name only.\n\n<reasons>\n{shown}\n</reasons>"
    )
    reply = run_sync(judge.acomplete([{"role": "user", "content": prompt}]))
    if reply.error is not None:
        return f"(no summary: {reply.error})"
    return " ".join(str(reply.text or "").split())[:80]


def failure_clusters(
    result: EvalResult,
    metric: str | None = None,
    *,
    threshold: float = DEFAULT_THRESHOLD,
    name_with: Judge | str | None = None,
    present: Callable[[], Any] | None = None,
) -> FailureClusters:
    """Group one metric's failing rows: by failed criterion, then by the judge's reasons.

    A row fails when its verdict is a fail (a pass mark or critical criterion said so); for a
    metric with no pass rule, when any criterion sits at its bottom level (a NO); for a pairwise
    metric, when the candidate lost. Rows with errors are counted, not clustered.
    """
    if not 0 < threshold <= 2:
        raise ValueError(f"threshold is a cosine distance in (0, 2], got {threshold}")
    names = result.metric_names
    if metric is None:
        if len(names) != 1:
            raise ValueError(f"name the metric: one of {', '.join(names)}")
        metric = names[0]
    info = result.metric(metric)
    table = result.table
    bounds: dict[str, tuple[float, float]] = {}
    if info.rubric is not None:
        for criterion_spec in info.rubric.criteria:
            level_scores = [lv.score for lv in criterion_spec.levels]
            bounds[criterion_spec.name] = (float(min(level_scores)), float(max(level_scores)))
    per_row = info.rubric is None
    errors = (
        table[col(metric, ERROR)].notna()
        if col(metric, ERROR) in table
        else pd.Series(False, index=table.index)
    )
    items = (
        table[col(metric, CRITERIA)]
        if col(metric, CRITERIA) in table
        else pd.Series([[]] * len(table))
    )
    rationale = (
        table[col(metric, RATIONALE)]
        if col(metric, RATIONALE) in table
        else pd.Series([None] * len(table))
    )
    scores = (
        table[col(metric, SCORE)]
        if col(metric, SCORE) in table
        else pd.Series([np.nan] * len(table))
    )
    passed = (
        table[col(metric, PASSED)]
        if col(metric, PASSED) in table
        else pd.Series([None] * len(table))
    )
    pairwise = info.kind == "pairwise"
    verdicts = [_verdict(v) for v in passed]
    has_rule = any(v is not None for v in verdicts)
    if pairwise:
        rule = "the candidate lost"
    elif has_rule:
        rule = "verdict fail"
    else:
        rule = "no pass rule: a criterion at its bottom level (NO)"

    failing_rows = []
    for position in range(len(table)):
        if bool(errors.iloc[position]):
            continue
        row_items = _items(items.iloc[position])
        if pairwise:
            score = scores.iloc[position]
            if not (isinstance(score, int | float) and score < 0):
                continue
            item = _pairwise_failed(row_items)
        elif has_rule:
            if verdicts[position] is not False:
                continue
            item = _failed_item(row_items, bounds)
        else:
            bottom = [c for c in row_items if _level_share(c, bounds) == 0.0]
            if not bottom:
                continue
            item = _failed_item(bottom, bounds)
        criterion = "(any)" if per_row or item is None else str(item.get("name"))
        failing_rows.append(
            {
                "row": position,
                "criterion": criterion,
                "question": "" if item is None else str(item.get("question") or ""),
                "reason": _reason(item, rationale.iloc[position], per_row),
            }
        )
    failing = pd.DataFrame(failing_rows, columns=["row", "criterion", "question", "reason"])
    judge = None
    if name_with is not None:
        from ..judges import get_judge

        judge = get_judge(name_with)
    clusters: list[dict[str, Any]] = []
    failing["cluster"] = -1
    for group_name, group in failing.groupby("criterion", sort=False):
        criterion = str(group_name)
        labels, terms = _cluster_texts(list(group["reason"]), threshold)
        for label in sorted(set(labels)):
            members = group.index[[lb == label for lb in labels]]
            words = terms[label] if label < len(terms) else []
            clusters.append(
                {
                    "criterion": str(criterion),
                    "name": ", ".join(words) if words else "(no words in the reasons)",
                    "judge_name": _name_with_judge(
                        judge, str(criterion), list(failing.loc[members, "reason"])
                    )
                    if judge is not None
                    else "",
                    "size": len(members),
                    "rows": [int(r) for r in failing.loc[members, "row"]],
                    "terms": words,
                    "_members": members,
                }
            )
    clusters.sort(key=lambda c: (-c["size"], c["criterion"], c["name"]))
    for number, cluster in enumerate(clusters):
        failing.loc[cluster.pop("_members"), "cluster"] = number
        cluster["cluster"] = number
        cluster["share"] = cluster["size"] / len(failing) if len(failing) else 0.0
    frame = pd.DataFrame(
        clusters,
        columns=["cluster", "criterion", "name", "judge_name", "size", "share", "rows", "terms"],
    )
    notes = []
    if judge is not None:
        notes.append(
            "judge_name: the judge's summary of each cluster's reasons (one call a cluster)"
        )
    return FailureClusters(
        metric=metric,
        result=result,
        clusters=frame,
        failing=failing,
        rule=rule,
        errors=int(errors.sum()),
        judged_rows=int((~errors).sum()),
        notes=notes,
        present=present,
    )
