"""``ResultTable``: a whole result, fast at 100,000 rows.

The browser gets the summary and column list as traits and rows in pages over custom messages;
sorting and filtering run here on the table (see ``_query``). Selecting a row fills ``detail``
with that case's explanation.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import traitlets

from ..result import EvalResult
from ..result.labels import default_reviewer
from ._assets import EsmBundle
from ._base import RubricView
from ._cells import case_payload, columns_payload
from ._charts import chart_data
from ._file_rows import SAMPLE_ROWS, FileQuery, FileRows, is_big_file
from ._query import Query, TableQuery
from ._source import Source, as_source
from ._static.table import table_html, table_text
from .labelling import disagreeing_rows, label_form, save_labels

__all__ = ["ResultTable"]


class ResultTable(RubricView):
    """The result table: summary and charts on top, virtual scrolling, sort, filters, export,
    row explanations."""

    _esm = EsmBundle("result_table")

    columns = traitlets.List(traitlets.Dict()).tag(sync=True)
    visible = traitlets.List(traitlets.Unicode()).tag(sync=True)
    summary = traitlets.List(traitlets.Dict()).tag(sync=True)
    metrics = traitlets.List(traitlets.Dict()).tag(sync=True)
    verdicts = traitlets.Dict().tag(sync=True)
    criteria = traitlets.Dict().tag(sync=True)
    total = traitlets.Int(0).tag(sync=True)
    page_size = traitlets.Int(200).tag(sync=True)
    height = traitlets.Int(420).tag(sync=True)
    selected = traitlets.Int(-1).tag(sync=True)
    detail = traitlets.Dict(allow_none=True, default_value=None).tag(sync=True)
    #: a live run's state: {"done", "total", "errors", "state": running|finished|interrupted|failed}
    progress = traitlets.Dict(allow_none=True, default_value=None).tag(sync=True)
    #: while a run holds the kernel (page requests wait for it), the first rows and the charts
    #: travel in this trait: {"rows", "total", "charts"}
    live = traitlets.Dict(allow_none=True, default_value=None).tag(sync=True)
    #: the drill-down offers labelling (an EvalResult was shown, not a bare DataFrame)
    labelling = traitlets.Bool(False).tag(sync=True)
    #: what a view of a big result file refuses before it is asked (see ``FileQuery.refusals``);
    #: empty for a table in memory
    refusals = traitlets.Dict().tag(sync=True)
    #: whose labels the drill-down gives (``$RUBRICLAB_REVIEWER`` or the login name by default)
    reviewer = traitlets.Unicode("").tag(sync=True)

    def __init__(
        self,
        result: Any,
        *,
        title: str | None = None,
        metrics: Sequence[str] | None = None,
        columns: Sequence[str] | None = None,
        height: int = 420,
        page_size: int = 200,
    ) -> None:
        #: a big result file is read page by page, never loaded (see ``_file_rows``)
        self._file: FileQuery | None = None
        if is_big_file(result):
            source, self._file = _file_source(result, metrics)
        else:
            source = as_source(result, metrics)
        cols, default_visible = columns_payload(source)
        if self._file is not None:  # the row numbers go up to the file's last row
            cols[0]["width"] = min(max(8 * len(str(self._file.total)) + 22, 48), 200)
        keys = [c["key"] for c in cols]
        if columns is not None:
            unknown = [c for c in columns if c not in keys]
            if unknown:
                raise KeyError(
                    f"no column {', '.join(map(repr, unknown))} in this result; "
                    f"columns are: {', '.join(keys[1:])}"
                )
            default_visible = ["__index__", *[c for c in columns if c != "__index__"]]
        if page_size < 1 or page_size > 1000:
            raise ValueError(f"page_size must be between 1 and 1000, got {page_size}")
        self._source = source
        # labels of a big file would need its table (disagreements, the label store's rows)
        self._result = result if isinstance(result, EvalResult) and self._file is None else None
        self._query = TableQuery(source, disagree=self._disagree)
        super().__init__(
            labelling=self._result is not None,
            reviewer=default_reviewer(),
            columns=cols,
            visible=default_visible,
            summary=source.summary,
            metrics=[{"name": m.name, "kind": m.kind} for m in source.metrics],
            verdicts=self._query.verdicts(),
            criteria=self._query.criteria_options() if self._file is None else {},
            total=len(source.table) if self._file is None else self._file.total,
            refusals={} if self._file is None else self._file.refusals(),
            is_mock=source.is_mock,
            judge=source.judge,
            title=title or "",
            height=height,
            page_size=page_size,
        )
        self._register("page", self._page)
        self._register("export", self._export)
        self._register("charts", self._charts)
        self._register("label_form", self._label_form)
        self._register("save_labels", self._save_labels)

    def update(self, result: Any, progress: Mapping[str, Any] | None = None) -> None:
        """Show ``result`` (more rows of a live run, or its final result) in this view, keeping
        the columns the reader chose; ``progress`` is the run's progress line."""
        self._file = None
        if is_big_file(result):
            source, self._file = _file_source(result, None)
        else:
            source = as_source(result)
        cols, default_visible = columns_payload(source)
        known = {c["key"] for c in self.columns}
        keys = [c["key"] for c in cols]
        chosen = set(self.visible)
        visible = [k for k in keys if k in chosen or (k not in known and k in default_visible)]
        self._source = source
        self._result = result if isinstance(result, EvalResult) and self._file is None else None
        self._query = TableQuery(source, disagree=self._disagree)
        running = progress is not None and progress.get("state") == "running"
        with self.hold_sync():
            self.columns = cols
            self.visible = visible
            self.summary = source.summary
            self.metrics = [{"name": m.name, "kind": m.kind} for m in source.metrics]
            self.verdicts = self._query.verdicts()
            self.criteria = self._query.criteria_options() if self._file is None else {}
            self.labelling = self._result is not None
            self.refusals = {} if self._file is None else self._file.refusals()
            self.is_mock = source.is_mock
            self.judge = source.judge
            self.progress = dict(progress) if progress else None  # type: ignore[assignment]
            self.live = self._live_payload() if running else None  # type: ignore[assignment]
            self.total = len(source.table) if self._file is None else self._file.total

    LIVE_ROWS = 1000

    def _live_payload(self) -> dict[str, Any]:
        page = self._query.page(None, 0, self.LIVE_ROWS, list(self.visible))
        return {
            "rows": page["rows"],
            "columns": list(self.visible),
            "total": page["total"],
            "charts": chart_data(self._source),
        }

    # -- labelling -----------------------------------------------------------------------------
    def _labelled(self) -> EvalResult:
        if self._result is None:
            raise ValueError("labels need an EvalResult (this view shows a bare DataFrame)")
        return self._result

    def _disagree(self, metrics: Any) -> set[int]:
        return disagreeing_rows(self._result, metrics) if self._result is not None else set()

    def _label_form(self, request: Mapping[str, Any]) -> dict[str, Any]:
        row = int(request.get("row", -1))
        names = [m.name for m in self._source.metrics]
        return {"form": label_form(self._labelled(), row, names)}

    def _save_labels(self, request: Mapping[str, Any]) -> dict[str, Any]:
        saved = save_labels(self._labelled(), request.get("labels"), self.reviewer)
        return {"saved": saved}

    @property
    def result_table(self) -> Any:
        """The DataFrame this view shows (not a copy); for a big result file, its first rows
        (the view reads the others from the file)."""
        return self._source.table

    def _page(self, request: Mapping[str, Any]) -> dict[str, Any]:
        columns = request.get("columns") or self.visible
        start = int(request.get("start", 0))
        stop = int(request.get("stop", start + self.page_size))
        if self._file is not None:
            return self._file.page(request.get("query"), start, stop, [str(c) for c in columns])
        return self._query.page(request.get("query"), start, stop, [str(c) for c in columns])

    def _export(self, request: Mapping[str, Any]) -> dict[str, Any]:
        if self._file is not None:
            raise self._file.needs_whole("exporting the rows")
        return self._query.export(
            request.get("query"),
            self._export_columns(request.get("columns") or "visible"),
            str(request.get("format", "csv")),
        )

    def _export_columns(self, columns: Any) -> list[str]:
        """``"all"``: the row key and every field of the result (hidden columns, raw judge
        output, criteria as JSON); ``"visible"``: the columns shown; or a list of keys."""
        if columns == "all":
            return ["__index__", *(str(c) for c in self._source.table.columns)]
        if columns == "visible":
            return (
                ["__index__", *self.visible]
                if "__index__" not in self.visible
                else list(self.visible)
            )
        return [str(c) for c in columns]

    def _charts(self, request: Mapping[str, Any]) -> dict[str, Any]:
        if self._file is not None:
            return {"charts": self._file.charts(request.get("query"))}
        positions = self._query.view(Query(request.get("query"), self._source))
        everything = len(positions) == len(self._source.table)
        return {"charts": chart_data(self._source, None if everything else positions)}

    def export(
        self,
        fmt: str = "csv",
        query: Mapping[str, Any] | None = None,
        *,
        columns: str | Sequence[str] = "all",
    ) -> str:
        """The rows ``query`` selects (filtered, sorted) as CSV or JSON Lines text: every field
        of the result by default, as the view's download buttons save them; ``columns=
        "visible"`` for the columns shown, or a list of column keys."""
        if self._file is not None:
            raise self._file.needs_whole("exporting the rows")
        return str(self._query.export(query, self._export_columns(columns), fmt)["text"])

    def charts(self, query: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
        """The chart data the view draws for ``query`` (histogram, criteria, win/tie/loss)."""
        return list(self._charts({"query": query})["charts"])

    def page(
        self, start: int = 0, stop: int = 200, query: Mapping[str, Any] | None = None
    ) -> dict[str, Any]:
        """The rows the browser would get for ``query`` (for tests and scripts)."""
        if self._file is not None:
            return self._file.page(query, start, stop, list(self.visible))
        return self._query.page(query, start, stop, list(self.visible))

    @traitlets.validate("visible")
    def _valid_visible(self, proposal: Any) -> list[str]:
        keys = {c["key"] for c in self.columns} if self.columns else None
        value = [str(v) for v in proposal["value"]]
        if keys is not None:
            value = [v for v in value if v in keys]
        return value

    @traitlets.observe("selected")
    def _on_selected(self, change: Any) -> None:
        pos = int(change["new"])
        if pos < 0:
            self.detail = None  # type: ignore[assignment]
            return
        if self._file is not None:
            if pos >= self._file.total:
                self.selected = -1
                return
            self.detail = self._file.case(pos, self._source.metrics)
            return
        if pos >= len(self._source.table):
            self.selected = -1
            return
        self.detail = case_payload(self._source, pos)

    def static_text(self) -> str:
        return table_text(self._source, self.title)

    def static_html(self) -> str:
        return table_html(self._source, self.title)


def _file_source(result: Any, metrics: Sequence[str] | None) -> tuple[Source, FileQuery]:
    """A big result file's view: the summary and metrics from its header, column kinds from
    its first rows, every page from the file."""
    rows = FileRows(result)
    header_only = as_source(_HeaderResult(result, rows.head(SAMPLE_ROWS)), metrics)
    return header_only, FileQuery(rows, header_only)


class _HeaderResult:
    """What ``as_source`` reads of a big file: its first rows as the table, the rest from
    the header (the summary is the header's, never computed from those rows)."""

    def __init__(self, result: Any, head: Any) -> None:
        self.table = head
        self.metrics = result.metrics
        self.is_mock = result.is_mock
        self.judge = result.judge
        self.summary = result.summary
