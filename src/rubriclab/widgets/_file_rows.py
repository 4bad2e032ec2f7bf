"""Rows of a big result file read on demand, so a view of a million-row run never loads it.

A :class:`~rubriclab.result.FileResult` with more than ``DISPLAY_LOAD_MAX_ROWS`` rows is shown
from its file: the summary and columns come from the header, each page from the file (Parquet:
the row groups holding the page, batch by batch; plain JSONL: a byte-offset index built on the
first page past the file's start; ``.jsonl.gz``: a sequential read). Sorting and filtering
read only the few small per-metric columns (scores, verdicts, pass flags, errors) of a Parquet
file; anything else (text search, criterion filters, sorting by text, any query over JSONL)
would need the whole table, and the view says so instead of loading it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..columns import ERROR, PASSED, SCORE, SWAP_CONSISTENT, VERDICT, col
from ..result import FileResult, decode_saved_cells
from ..result.formats import open_text, result_format
from ..scale import format_count
from ._cells import case_payload, cell, column_kind
from ._charts import chart_data
from ._query import MAX_PAGE, Query, QueryError, TableQuery
from ._source import MetricRef, Source

__all__ = ["FileQuery", "FileRows", "is_big_file"]

#: rows read from a file's start to show its first page and to learn the columns' kinds
SAMPLE_ROWS = 200
#: JSONL pages below this row are read from the start; further on, a line index is built once
SEQUENTIAL_LIMIT = 20_000
#: Parquet rows decoded per batch while seeking a page inside a row group
BATCH_ROWS = 4096


def is_big_file(result: Any) -> bool:
    """Whether ``result`` is a file-backed result too big to load for a view."""
    return isinstance(result, FileResult) and result.too_big_to_load


class FileRows:
    """Reads rows of one result file by position, never the whole table."""

    def __init__(self, result: FileResult) -> None:
        self.path: Path = result.path
        self.format = result_format(self.path)
        self.total = result.row_count
        self._offsets: np.ndarray | None = None
        self.header = result.header  # read once, by open_result
        if self.format == "parquet":
            import pyarrow.parquet as pq

            self._pf = pq.ParquetFile(self.path)
            self.columns = [str(c) for c in self._pf.schema_arrow.names]
            sizes = [
                self._pf.metadata.row_group(i).num_rows for i in range(self._pf.num_row_groups)
            ]
            self._starts = np.concatenate([[0], np.cumsum(sizes, dtype=np.int64)])
            if int(self._starts[-1]) != self.total:
                self.total = int(self._starts[-1])
        else:
            self.columns = [str(c) for c in self.header.get("columns") or []]

    # -- reading rows ---------------------------------------------------------------------------
    def rows(self, positions: Sequence[int] | np.ndarray, columns: Sequence[str]) -> pd.DataFrame:
        """The rows at ``positions`` (in that order) with ``columns``, decoded as
        :func:`~rubriclab.result.load_result` decodes them; the index is the positions."""
        wanted = np.asarray(positions, dtype=np.int64)
        names = [c for c in dict.fromkeys(columns) if c in self.columns]
        if len(wanted) and (wanted.min() < 0 or wanted.max() >= self.total):
            raise QueryError(f"rows must be positions from 0 to {self.total - 1}")
        if self.format == "parquet":
            frame = self._parquet_rows(wanted, names)
        else:
            frame = self._jsonl_rows(wanted, names)
        decode_saved_cells(frame, self.header)
        return frame

    def _parquet_rows(self, wanted: np.ndarray, names: list[str]) -> pd.DataFrame:
        import pyarrow as pa

        groups = np.searchsorted(self._starts, wanted, side="right") - 1
        found: dict[int, dict[str, Any]] = {}
        for group in np.unique(groups):
            local = wanted[groups == group] - self._starts[group]
            last = int(local.max())
            seen = 0
            for batch in self._pf.iter_batches(
                batch_size=BATCH_ROWS, row_groups=[int(group)], columns=names
            ):
                end = seen + batch.num_rows
                inside = local[(local >= seen) & (local < end)]
                if len(inside):
                    taken = pa.Table.from_batches([batch]).take(pa.array(inside - seen))
                    for pos, record in zip(
                        inside + self._starts[group], taken.to_pylist(), strict=True
                    ):
                        found[int(pos)] = record
                seen = end
                if seen > last:
                    break
        return _frame([found[int(p)] for p in wanted], wanted, names)

    def _jsonl_rows(self, wanted: np.ndarray, names: list[str]) -> pd.DataFrame:
        found: dict[int, dict[str, Any]] = {}
        targets = {int(p) for p in wanted}
        if not targets:
            return _frame([], wanted, names)
        last = max(targets)
        if last < SEQUENTIAL_LIMIT or self.format == "jsonl.gz":
            # near the start (or gzipped: no seeking), read on to the last row wanted
            for pos, line in enumerate(self._lines()):
                if pos in targets:
                    found[pos] = self._record(line, pos, names)
                if pos >= last:
                    break
        else:
            offsets = self._line_offsets()
            with self.path.open("rb") as fh:
                for pos in sorted(targets):
                    fh.seek(int(offsets[pos]))
                    found[pos] = self._record(fh.readline().decode("utf-8"), pos, names)
        missing = targets - set(found)
        if missing:
            raise QueryError(
                f"{self.path.name} holds fewer rows than its header says ({self.total}); "
                f"row {min(missing)} is missing"
            )
        return _frame([found[int(p)] for p in wanted], wanted, names)

    def _lines(self) -> Iterator[str]:
        with open_text(self.path) as fh:
            fh.readline()  # the header
            for line in fh:
                if line.strip():
                    yield line

    def _line_offsets(self) -> np.ndarray:
        """Each row's byte offset in a plain JSONL file (built once, 8 bytes a row)."""
        if self._offsets is None:
            offsets = np.empty(self.total, dtype=np.int64)
            n = 0
            with self.path.open("rb") as fh:
                at = len(fh.readline())
                for line in fh:
                    if line.strip() and n < self.total:
                        offsets[n] = at
                        n += 1
                    at += len(line)
            self._offsets = offsets[:n]
            self.total = n
        return self._offsets

    def _record(self, line: str, pos: int, names: list[str]) -> dict[str, Any]:
        try:
            record = json.loads(line)
        except ValueError:
            raise QueryError(f"row {pos} of {self.path.name} is not JSON") from None
        if not isinstance(record, dict):
            raise QueryError(f"row {pos} of {self.path.name} is not a row")
        return {n: record.get(n) for n in names}

    def head(self, n: int) -> pd.DataFrame:
        """The first ``n`` rows with every column, indexed from 0."""
        return self.rows(np.arange(min(n, self.total)), self.columns)

    # -- whole columns (Parquet only: each column is read alone) ---------------------------------
    def read_columns(self, names: Sequence[str]) -> pd.DataFrame:
        if self.format != "parquet":
            raise QueryError("needs the whole table")
        present = [n for n in names if n in self.columns]
        table = self._pf.read(columns=present)
        frame: pd.DataFrame = table.to_pandas()
        frame.index = pd.RangeIndex(len(frame))
        return frame


def _frame(records: list[dict[str, Any]], index: np.ndarray, names: list[str]) -> pd.DataFrame:
    frame = (
        pd.DataFrame.from_records(records, columns=names)
        if records
        else pd.DataFrame({n: pd.Series([], dtype=object) for n in names})
    )
    frame.index = pd.Index(index.tolist(), dtype=np.int64)
    return frame


#: per-metric columns a query over a big Parquet file may read whole (small: numbers, short text)
_SLIM_FIELDS = (SCORE, PASSED, VERDICT, ERROR, SWAP_CONSISTENT)


class FileQuery:
    """``TableQuery``'s answers (pages, views, charts) over a big result file."""

    def __init__(self, rows: FileRows, sample: Source) -> None:
        self.rows = rows
        self.sample = sample
        self._kinds = {str(c): column_kind(str(c), sample.table[c]) for c in sample.table.columns}
        self._slim: TableQuery | None = None

    @property
    def total(self) -> int:
        return self.rows.total

    def needs_whole(self, what: str) -> QueryError:
        return QueryError(
            f"{what} needs the whole table ({format_count(self.total, 'row')} in "
            f"{self.rows.path.name}): result.table loads it"
            + ("" if self.rows.format == "parquet" else "; or save the result as .parquet")
        )

    def _slim_fields(self) -> list[str]:
        return [
            col(m.name, f)
            for m in self.sample.metrics
            for f in _SLIM_FIELDS
            if col(m.name, f) in self.rows.columns
        ]

    def _check(self, query: Query) -> None:
        """Refuse, in the reader's terms, what would need every column of every row."""
        if query.search:
            raise self.needs_whole("searching the text")
        if query.criterion is not None:
            raise self.needs_whole("filtering by a criterion")
        if query.disagree:
            raise self.needs_whole("showing label disagreements")
        key = query.sort_key
        small = key in (None, "__index__") or key in self._slim_fields()
        if not small and self._kinds.get(str(key)) not in ("score", "number", "bool"):
            raise self.needs_whole(f"sorting by {key!r}")
        filtered = query.score_min is not None or query.score_max is not None
        filtered = filtered or query.verdict is not None or query.status is not None
        filtered = filtered or query.errors_only or query.swap_only
        if self.rows.format != "parquet" and key not in (None, "__index__"):
            raise self.needs_whole(f"sorting by {key!r}")
        if self.rows.format != "parquet" and filtered:
            raise self.needs_whole("filtering")

    #: the toolbar's filters, each with a query that uses it alone
    _FILTER_PROBES: tuple[tuple[str, dict[str, Any]], ...] = (
        ("search", {"search": "x"}),
        ("score", {"score_min": 0.5}),
        ("status", {"status": "pass"}),
        ("errors_only", {"errors_only": True}),
        ("swap", {"swap_inconsistent_only": True}),
        ("criterion", {"criterion": {"name": "x", "value": "x"}}),
        ("disagree", {"disagree": True}),
    )

    def refusals(self) -> dict[str, Any]:
        """What this file's view refuses, each with its one-line reason, for the browser to
        disable beforehand: ``sort`` (column key -> reason), ``filters`` (toolbar filter ->
        reason), ``export``, ``charts``, and a ``note`` for the reader. The reasons come from
        the same check the page requests go through, so the two cannot disagree."""
        sort: dict[str, str] = {}
        for key in ["__index__", *(str(c) for c in self.sample.table.columns)]:
            try:
                self._check(Query({"sort": {"key": key, "desc": False}}, self.sample))
            except QueryError as err:
                sort[key] = str(err)
        filters: dict[str, str] = {}
        for name, raw in self._FILTER_PROBES:
            try:
                self._check(Query(raw, self.sample))
            except QueryError as err:
                filters[name] = str(err)
        out: dict[str, Any] = {
            "sort": sort,
            "filters": filters,
            "export": str(self.needs_whole("exporting the rows")),
        }
        if self.rows.format != "parquet":
            out["charts"] = str(self.needs_whole("drawing charts"))
        what = ["sorting by text", "searching", "criterion filters", "export"]
        if self.rows.format != "parquet":
            what = ["sorting", "filtering", "charts", "export"]
        out["note"] = (
            f"Read from {self.rows.path.name}, a file of {format_count(self.total, 'row')}, "
            f"page by page: {', '.join(what[:-1])} and {what[-1]} need the whole table "
            "(result.table loads it)"
            + ("" if self.rows.format == "parquet" else "; save it as .parquet to sort by scores")
        )
        return out

    def _is_plain(self, query: Query) -> bool:
        """No filter and no sort but by position: the page is a slice of the file."""
        unfiltered = query.filter_key[2:] == (None, None, None, None, None, False, False)
        return unfiltered and not query.search and query.sort_key in (None, "__index__")

    def view(self, query: Query) -> np.ndarray:
        """Row positions in display order (reads only small columns of a Parquet file)."""
        self._check(query)
        if self._is_plain(query):
            order = np.arange(self.total)
            return order[::-1].copy() if query.sort_desc else order
        return self._slim_query(query.sort_key).view(query)

    def _slim_query(self, sort_key: str | None) -> TableQuery:
        fields = self._slim_fields()
        if sort_key not in (None, "__index__") and sort_key not in fields:
            fields.append(str(sort_key))
        if self._slim is None or any(f not in self._slim.source.table.columns for f in fields):
            have = list(self._slim.source.table.columns) if self._slim is not None else []
            frame = self.rows.read_columns(list(dict.fromkeys([*have, *fields])))
            source = Source(
                table=frame,
                metrics=self.sample.metrics,
                summary=self.sample.summary,
                is_mock=self.sample.is_mock,
                judge=self.sample.judge,
            )
            self._slim = TableQuery(source)
        return self._slim

    def page(
        self, raw_query: Mapping[str, Any] | None, start: int, stop: int, columns: Sequence[str]
    ) -> dict[str, Any]:
        """Rows ``[start, stop)`` of the view as ``[position, cell, cell, ...]`` lists."""
        query = Query(raw_query, self.sample)
        if start < 0 or stop < start:
            raise QueryError(f"bad page range {start}..{stop}")
        stop = min(stop, start + MAX_PAGE)
        for key in columns:
            if key != "__index__" and key not in self.rows.columns:
                raise QueryError(f"no column {key!r} in this result")
        if self._is_plain(query) and not query.sort_desc:
            self._check(query)
            chosen = np.arange(min(start, self.total), min(stop, self.total))
            total = self.total
        else:
            positions = self.view(query)
            chosen, total = positions[start:stop], len(positions)
        frame = self.rows.rows(chosen, [c for c in columns if c != "__index__"])
        out: list[list[Any]] = [[int(p)] for p in chosen]
        for key in columns:
            if key == "__index__":
                for r in out:
                    r.append(r[0])
                continue
            kind = self._kinds.get(key, "text")
            for r, value in zip(out, frame[key].to_numpy(dtype=object), strict=True):
                r.append(cell(kind, key, value))
        return {"rows": out, "start": start, "total": total}

    def charts(self, raw_query: Mapping[str, Any] | None) -> list[dict[str, Any]]:
        """Score charts over the view, from the small columns (no criteria: they are big)."""
        query = Query(raw_query, self.sample)
        if self.rows.format != "parquet":
            raise self.needs_whole("drawing charts")
        self._check(query)
        slim = self._slim_query(None)
        positions = None if self._is_plain(query) else self.view(query)
        return chart_data(slim.source, positions)

    def case(self, pos: int, metrics: Sequence[MetricRef]) -> dict[str, Any]:
        """One row's drill-down, read from the file."""
        if not 0 <= pos < self.total:
            raise IndexError(f"row {pos} is out of range: the result has {self.total} rows")
        frame = self.rows.rows([pos], self.rows.columns).reset_index(drop=True)
        one = Source(
            table=frame,
            metrics=list(metrics),
            summary=self.sample.summary,
            is_mock=self.sample.is_mock,
            judge=self.sample.judge,
        )
        payload = case_payload(one, 0)
        payload["row"] = pos
        heading = str(payload.get("heading", ""))
        payload["heading"] = heading.replace("case 1 of 1", f"case {pos + 1} of {self.total}", 1)
        return payload
