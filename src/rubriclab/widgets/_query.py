"""Sort, filter and page a result table in the kernel, so the browser only ever holds a page.

A query (sort key, text search, score range, outcome group, one criterion's result, errors
only, swap-inconsistent only) becomes an array of row positions; the last few are cached, so scrolling through one view of
100,000 rows costs one sort, then only slicing.
"""

from __future__ import annotations

import copy
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ..columns import (
    CRITERIA,
    ERROR,
    PAIRWISE_CHOICE,
    PASSED,
    RATIONALE,
    SCORE,
    SWAP_CONSISTENT,
    VERDICT,
    col,
)
from ..scoring import unshared_criteria
from ._cells import cell, column_kind, input_columns, is_missing
from ._source import Source

__all__ = ["Query", "QueryError", "TableQuery"]

MAX_PAGE = 1000


class QueryError(ValueError):
    """A page request the table cannot answer (unknown column, bad range)."""


class Query:
    """A validated query from the browser (unknown keys are refused, not ignored)."""

    KEYS = frozenset(
        {
            "sort",
            "search",
            "metric",
            "score_min",
            "score_max",
            "verdict",
            "status",
            "criterion",
            "errors_only",
            "swap_inconsistent_only",
            "disagree",
        }
    )

    def __init__(self, raw: Mapping[str, Any] | None, source: Source) -> None:
        raw = dict(raw or {})
        unknown = set(raw) - self.KEYS
        if unknown:
            raise QueryError(f"unknown query keys: {', '.join(sorted(unknown))}")
        sort = raw.get("sort")
        self.sort_key: str | None = None
        self.sort_desc = False
        if sort:
            if not isinstance(sort, Mapping) or "key" not in sort:
                raise QueryError("sort must be {'key': column, 'desc': bool}")
            key = str(sort["key"])
            if key != "__index__" and key not in source.table.columns:
                raise QueryError(f"cannot sort by {key!r}: no such column")
            self.sort_key, self.sort_desc = key, bool(sort.get("desc", False))
        self.search = str(raw.get("search") or "").strip()
        names = [m.name for m in source.metrics]
        metric = raw.get("metric")
        if metric is not None and metric not in names:
            raise QueryError(f"no metric {metric!r} (metrics: {', '.join(names) or 'none'})")
        self.metrics: list[str] = [str(metric)] if metric else names
        self.score_min = _optional_float(raw.get("score_min"), "score_min")
        self.score_max = _optional_float(raw.get("score_max"), "score_max")
        self.verdict = str(raw["verdict"]) if raw.get("verdict") else None
        status = raw.get("status") or None
        if status is not None and status not in STATUSES:
            raise QueryError(f"status must be one of {', '.join(STATUSES)}, got {status!r}")
        self.status: str | None = status
        self.criterion = _criterion_filter(raw.get("criterion"))
        self.errors_only = bool(raw.get("errors_only", False))
        self.swap_only = bool(raw.get("swap_inconsistent_only", False))
        #: only rows where a person's label differs from the judge (labels change: never cached)
        self.disagree = bool(raw.get("disagree", False))

    @property
    def filter_key(self) -> tuple[Any, ...]:
        return (
            self.search.lower(),
            tuple(self.metrics),
            self.score_min,
            self.score_max,
            self.verdict,
            self.status,
            self.criterion,
            self.errors_only,
            self.swap_only,
        )

    @property
    def key(self) -> tuple[Any, ...]:
        return (*self.filter_key, self.sort_key, self.sort_desc)


class TableQuery:
    """Answers page requests over one table; cached by query."""

    def __init__(
        self,
        source: Source,
        cache_size: int = 8,
        disagree: Callable[[Sequence[str]], set[int]] | None = None,
    ) -> None:
        self.source = source
        self.disagree = disagree
        self._views: OrderedDict[tuple[Any, ...], np.ndarray] = OrderedDict()
        self._masks: OrderedDict[tuple[Any, ...], np.ndarray] = OrderedDict()
        self._cache_size = cache_size
        self._kinds = {str(c): column_kind(str(c), source.table[c]) for c in source.table.columns}
        self._text_cols = [
            c for c in input_columns(source.table) if self._kinds.get(c) == "text"
        ] + [
            col(m.name, f)
            for m in source.metrics
            for f in (VERDICT, RATIONALE, ERROR, PAIRWISE_CHOICE)
            if col(m.name, f) in source.table.columns
        ]

    # -- the view: row positions in display order -------------------------------------------------
    def view(self, query: Query) -> np.ndarray:
        if query.disagree:
            rows = self.disagree(query.metrics) if self.disagree is not None else set()
            everything = copy.copy(query)
            everything.disagree = False
            base = self.view(everything)
            return base[np.isin(base, np.fromiter(rows, dtype=np.int64, count=len(rows)))]
        cached = self._views.get(query.key)
        if cached is not None:
            self._views.move_to_end(query.key)
            return cached
        mask = self._mask(query)
        order = self._order(query)
        positions = order[mask[order]] if mask is not None else order
        self._remember(self._views, query.key, positions)
        return positions

    def page(
        self, raw_query: Mapping[str, Any] | None, start: int, stop: int, columns: Sequence[str]
    ) -> dict[str, Any]:
        """Rows ``[start, stop)`` of the view as ``[position, cell, cell, ...]`` lists."""
        query = Query(raw_query, self.source)
        if start < 0 or stop < start:
            raise QueryError(f"bad page range {start}..{stop}")
        stop = min(stop, start + MAX_PAGE)
        table = self.source.table
        for key in columns:
            if key != "__index__" and key not in table.columns:
                raise QueryError(f"no column {key!r} in this result")
        positions = self.view(query)
        chosen = positions[start:stop]
        rows: list[list[Any]] = [[int(p)] for p in chosen]
        for key in columns:
            if key == "__index__":
                labels = table.index[chosen]
                for r, label in zip(rows, labels, strict=True):
                    r.append(label.item() if hasattr(label, "item") else _label(label))
                continue
            kind = self._kinds[key]
            values = table[key].to_numpy(dtype=object)[chosen]
            for r, value in zip(rows, values, strict=True):
                r.append(cell(kind, key, value))
        return {"rows": rows, "start": start, "total": len(positions)}

    # -- pieces ----------------------------------------------------------------------------------
    def _order(self, query: Query) -> np.ndarray:
        n = len(self.source.table)
        if query.sort_key is None or query.sort_key == "__index__":
            order = np.arange(n)
            return order[::-1].copy() if query.sort_desc else order
        column = self.source.table[query.sort_key]
        kind = self._kinds[query.sort_key]
        if kind in ("score", "number", "bool"):
            values = pd.to_numeric(column, errors="coerce").to_numpy(dtype=float)
            keys = -values if query.sort_desc else values
            order = np.argsort(keys, kind="stable")  # NaN sorts last either way
            return order
        text = column.map(lambda v: None if is_missing(v) else str(v).lower())
        ranked = pd.Series(text.to_numpy(dtype=object), dtype=object)
        ordered = ranked.sort_values(
            ascending=not query.sort_desc, kind="stable", na_position="last"
        )
        return ordered.index.to_numpy(dtype=np.int64)

    def _mask(self, query: Query) -> np.ndarray | None:
        if query.filter_key == (
            "",
            tuple(query.metrics),
            None,
            None,
            None,
            None,
            None,
            False,
            False,
        ):
            return None
        cached = self._masks.get(query.filter_key)
        if cached is not None:
            return cached
        table = self.source.table
        mask = np.ones(len(table), dtype=bool)
        metrics = query.metrics
        if query.search:
            hit = np.zeros(len(table), dtype=bool)
            for column in self._text_cols:
                series = table[column]
                hit |= (
                    series.astype("string")
                    .str.contains(query.search, case=False, regex=False, na=False)
                    .to_numpy(dtype=bool)
                )
            mask &= hit
        if query.score_min is not None or query.score_max is not None:
            in_range = np.zeros(len(table), dtype=bool)
            for m in metrics:
                scores = pd.to_numeric(table[col(m, SCORE)], errors="coerce").to_numpy(dtype=float)
                ok = ~np.isnan(scores)
                if query.score_min is not None:
                    ok &= scores >= query.score_min - 1e-12
                if query.score_max is not None:
                    ok &= scores <= query.score_max + 1e-12
                in_range |= ok
            mask &= in_range
        if query.verdict is not None:
            match = np.zeros(len(table), dtype=bool)
            for m in metrics:
                column = col(m, VERDICT)
                if column in table.columns:
                    match |= (table[column] == query.verdict).to_numpy(dtype=bool)
            mask &= match
        if query.status is not None:
            group = np.zeros(len(table), dtype=bool)
            for m in metrics:
                group |= status_mask(table, m, query.status)
            mask &= group
        if query.criterion is not None:
            mask &= self._criterion_mask(query.criterion, metrics)
        if query.errors_only:
            errs = np.zeros(len(table), dtype=bool)
            for m in metrics:
                column = col(m, ERROR)
                if column in table.columns:
                    errs |= ~table[column].map(_blank).to_numpy(dtype=bool)
            mask &= errs
        if query.swap_only:
            bad = np.zeros(len(table), dtype=bool)
            for m in metrics:
                column = col(m, SWAP_CONSISTENT)
                if column in table.columns:
                    bad |= (
                        table[column]
                        .map(lambda v: v is False or v is np.False_)
                        .to_numpy(dtype=bool)
                    )
            mask &= bad
        self._remember(self._masks, query.filter_key, mask)
        return mask

    def _criterion_mask(self, crit: tuple[str, str], metrics: Sequence[str]) -> np.ndarray:
        """Rows where criterion ``name`` has result ``value`` (YES/NO, a level, or a winner)."""
        name, value = crit
        table = self.source.table
        hit = np.zeros(len(table), dtype=bool)
        for m in metrics:
            column = col(m, CRITERIA)
            if column not in table.columns:
                continue
            hit |= np.fromiter(
                (_criterion_result(v, name) == value for v in table[column].to_numpy(dtype=object)),
                dtype=bool,
                count=len(table),
            )
        return hit

    def criteria_options(self) -> dict[str, list[dict[str, Any]]]:
        """Per metric, each criterion with the results it takes (for the criterion filter)."""
        out: dict[str, list[dict[str, Any]]] = {}
        table = self.source.table
        for m in self.source.metrics:
            column = col(m.name, CRITERIA)
            if column not in table.columns:
                continue
            seen: dict[str, dict[str, Any]] = {}
            cells = table[column].iloc[:2000].to_numpy(dtype=object)
            # a name asking other questions on other rows (per-row rubrics) is no one filter
            unshared = unshared_criteria(cells.tolist())
            for value in cells:
                if not isinstance(value, list | tuple):
                    continue
                for item in value:
                    if not isinstance(item, Mapping) or item.get("name") is None:
                        continue
                    if str(item["name"]) in unshared:
                        continue
                    key = str(item["name"])[:400]
                    entry = seen.setdefault(
                        key,
                        {
                            "name": key,
                            "question": str(item.get("question") or "")[:400],
                            "values": set(),
                        },
                    )
                    result = _criterion_result([item], key)
                    if result is not None:
                        entry["values"].add(result)
            out[m.name] = [
                {**e, "values": sorted(e["values"], key=_value_order)} for e in seen.values()
            ][:100]
        return out

    def export(
        self, raw_query: Mapping[str, Any] | None, columns: Sequence[str], fmt: str
    ) -> dict[str, Any]:
        """The rows of the current view (filtered and sorted) as CSV or JSON Lines text."""
        from ._export import export_rows

        query = Query(raw_query, self.source)
        for key in columns:
            if key != "__index__" and key not in self.source.table.columns:
                raise QueryError(f"no column {key!r} in this result")
        positions = self.view(query)
        return export_rows(self.source.table, positions, list(columns), fmt)

    def _remember(
        self,
        store: OrderedDict[tuple[Any, ...], np.ndarray],
        key: tuple[Any, ...],
        value: np.ndarray,
    ) -> None:
        store[key] = value
        store.move_to_end(key)
        while len(store) > self._cache_size:
            store.popitem(last=False)

    def verdicts(self) -> dict[str, list[str]]:
        """The distinct verdicts per metric (for the verdict filter), most common first."""
        out: dict[str, list[str]] = {}
        for m in self.source.metrics:
            column = col(m.name, VERDICT)
            if column in self.source.table.columns:
                counts = self.source.table[column].dropna().astype(str).value_counts()
                out[m.name] = [str(v) for v in counts.index[:50]]
        return out


STATUSES = ("pass", "fail", "no_verdict", "error", "win", "tie", "loss")


def status_mask(table: pd.DataFrame, metric: str, status: str) -> np.ndarray:
    """Rows of ``metric`` in an outcome group: pass / fail / no verdict / error (pointwise,
    from ``{metric}/passed`` when present, else the verdict's first word) or win / tie / loss
    (pairwise, from the score's sign)."""
    n = len(table)
    err_col = col(metric, ERROR)
    errors = (
        ~table[err_col].map(_blank).to_numpy(dtype=bool)
        if err_col in table.columns
        else np.zeros(n, dtype=bool)
    )
    if status == "error":
        return errors
    if status in ("win", "tie", "loss"):
        scores = pd.to_numeric(table[col(metric, SCORE)], errors="coerce").to_numpy(dtype=float)
        with np.errstate(invalid="ignore"):
            sign = {"win": scores > 0, "tie": scores == 0, "loss": scores < 0}[status]
        hit: np.ndarray = sign & ~errors
        return hit
    passed_col = col(metric, PASSED)
    if passed_col in table.columns:
        values = table[passed_col].to_numpy(dtype=object)
        passed = np.fromiter((v is True or v is np.True_ for v in values), dtype=bool, count=n)
        failed = np.fromiter((v is False or v is np.False_ for v in values), dtype=bool, count=n)
    else:
        verdict_col = col(metric, VERDICT)
        words = (
            table[verdict_col].map(lambda v: "" if is_missing(v) else str(v).lower())
            if verdict_col in table.columns
            else pd.Series([""] * n)
        )
        passed = words.str.startswith("pass").to_numpy(dtype=bool)
        failed = words.str.startswith("fail").to_numpy(dtype=bool)
    passed &= ~errors
    failed &= ~errors
    if status == "pass":
        return passed
    if status == "fail":
        return failed
    rest: np.ndarray = ~(passed | failed | errors)
    return rest


def _criterion_result(value: Any, name: str) -> str | None:
    """One criterion's result in a row's criteria list: YES/NO, the level, or the winner."""
    if not isinstance(value, list | tuple):
        return None
    for item in value:
        if isinstance(item, Mapping) and str(item.get("name")) == name:
            winner = item.get("winner")
            if isinstance(winner, str) and winner:
                return winner
            label = item.get("label")
            if isinstance(label, str) and label.upper() in ("YES", "NO"):
                return label.upper()
            level = item.get("level")
            if isinstance(level, bool):
                return "YES" if level else "NO"
            if isinstance(level, int | float) and not is_missing(level):
                return f"level {level:g}"
            return None
    return None


def _value_order(value: str) -> tuple[int, float, str]:
    if value.startswith("level "):
        try:
            return (1, float(value[6:]), value)
        except ValueError:
            pass
    order = {"YES": 0, "NO": 0, "candidate": 2, "tie": 2, "baseline": 2}
    return (order.get(value, 3), 0.0, value)


def _criterion_filter(raw: Any) -> tuple[str, str] | None:
    if raw is None or raw == "":
        return None
    if not isinstance(raw, Mapping) or not raw.get("name") or raw.get("value") in (None, ""):
        raise QueryError(
            "criterion must be {'name': criterion name, 'value': 'YES', 'NO', 'level 2', ...}"
        )
    return (str(raw["name"]), str(raw["value"]))


def _blank(value: Any) -> bool:
    return is_missing(value) or (isinstance(value, str) and not value.strip())


def _label(value: Any) -> Any:
    if isinstance(value, int | float | str) or value is None:
        return value
    return str(value)


def _optional_float(value: Any, name: str) -> float | None:
    if value is None or value == "":
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise QueryError(f"{name} must be a number, got {value!r}") from None
    if np.isnan(number):
        return None
    return number
