"""``EvalResult``: the judged table, its per-metric summary, and save/load.

The table is the contract every view, the CLI and the Vertex layer read: the input columns,
then ``{metric}/field`` columns (DESIGN.md). Summaries are derived from the table on demand, so
editing or filtering the table and re-summarising never disagrees with what is shown.
"""

from __future__ import annotations

import html
import importlib
import json
import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol, cast

import pandas as pd

from ..columns import (
    CRITERIA,
    ERROR,
    JUDGES,
    MOCK_ATTR,
    NESTED_FIELDS,
    PASSED,
    RUBRIC,
    SCORE,
    SWAP_CONSISTENT,
    col,
    field_of,
    to_plain,
)
from ..files import atomic_path, atomic_writer, defused
from ..judges.base import CallTally
from ..rubric import Rubric
from ..scale import format_count, format_percent
from ..scoring import PASS_RULE, Summary, summarize
from .formats import (
    RESULT_SUFFIXES,
    OutputFields,
    dropped_columns,
    open_text,
    result_format,
)
from .labels import (
    LABEL_COLUMNS,
    OVERALL,
    PAIRWISE_VERDICTS,
    YES_NO,
    Label,
    LabelError,
    LabelStore,
    check_value,
    default_reviewer,
    labels_path,
    now_utc,
    parse_label,
)

__all__ = [
    "LABEL_COLUMNS",
    "OVERALL",
    "PRESENTATION",
    "EvalResult",
    "FileResult",
    "Label",
    "LabelError",
    "MetricInfo",
    "Presentation",
    "ResultSaveError",
    "RowErrorWarning",
    "RowErrors",
    "RunStats",
    "decode_saved_cells",
    "from_json_text",
    "labels_path",
    "load_result",
    "open_result",
    "plain",
    "presentation",
    "result_file",
    "rubrics_have_pass_mark",
]

#: the old name of :func:`rubriclab.columns.to_plain`, kept for code that imports it from here
plain = to_plain

MetricKind = Literal["pointwise", "pairwise", "template", "computation"]

#: field suffixes whose values may be lists/dicts (JSON text in Parquet, nested JSON in JSONL)
_NESTED_FIELDS = NESTED_FIELDS
#: 1: nested values as NUL-tagged JSON strings (still read); 2: real nested JSON in JSONL, and
#: Parquet's JSON-text columns listed in the header's ``json_columns``
_FORMAT_VERSION = 2
#: the format version written (streamed runs write the same files)
FORMAT_VERSION = _FORMAT_VERSION
#: a file-backed result with more rows shows its summary, not its table, when displayed
DISPLAY_LOAD_MAX_ROWS = 100_000


# -- the one way up to the views ---------------------------------------------------------------
class Presentation(Protocol):
    """What results ask of the views: the one hook from this layer up to presentation.

    Results sit below the views and never import them. A result's notebook display, a
    comparison's HTML, the MLflow report and a live run all go through this hook, which names
    the module that draws them (the way pandas' ``plotting.backend`` option names its plotting
    module), so the dependency is one documented line, not lazy imports spread over the layer.
    """

    def result_mimebundle(self, result: Any) -> dict[str, Any]:
        """A result's MIME bundle: a live view in a kernel, plain text and static HTML always."""
        ...

    def comparison_mimebundle(self, comparison: Any) -> dict[str, Any]:
        """A ``Comparison``'s plain text and static HTML."""
        ...

    def report_html(self, results: Mapping[str, Any], title: str) -> str:
        """One self-contained HTML page (no scripts) for named results."""
        ...

    def arena_mimebundle(self, arena: Any) -> dict[str, Any]:
        """An arena's ranking, matrix and pairs as plain text and static HTML."""
        ...

    def clusters_mimebundle(self, clusters: Any) -> dict[str, Any]:
        """Failure clusters, largest first, with their rows, as plain text and static HTML."""
        ...

    def judge_card_mimebundle(self, card: Any) -> dict[str, Any]:
        """A ``JudgeCard``'s plain text and static HTML (charts, tables)."""
        ...

    def judge_card_page(self, card: Any) -> str:
        """A ``JudgeCard`` as one self-contained HTML page (no scripts)."""
        ...

    def judge_card_text(self, card: Any) -> str:
        """A ``JudgeCard`` as a fixed-width text block."""
        ...

    def calibration_view(self, calibration: Any, title: str | None = None) -> Any:
        """The view of ``rl.calibrate(result)``'s figures (a ``CalibrationView``)."""
        ...

    def alignment_mimebundle(self, alignment: Any) -> dict[str, Any]:
        """An ``Alignment``'s plain text and static HTML (before/after, gain, changes)."""
        ...

    def live_evaluate(
        self, run: Callable[[Callable[[Any], None]], Any], rows: int | None = None
    ) -> Any:
        """Run ``run(on_rows)`` while showing its rows as they finish; returns its value."""
        ...


#: the module implementing :class:`Presentation`; set it to draw results some other way
PRESENTATION = "rubriclab.widgets.presentation"


def presentation() -> Presentation:
    """The module named by :data:`PRESENTATION` (imported on first use)."""
    return cast(Presentation, importlib.import_module(PRESENTATION))


@dataclass(frozen=True)
class MetricInfo:
    """What a metric column group is: its name, kind, and fixed rubric if it has one."""

    name: str
    kind: MetricKind = "pointwise"
    rubric: Rubric | None = None
    description: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "kind": self.kind,
            "rubric": self.rubric.to_dict() if self.rubric is not None else None,
            "description": self.description,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> MetricInfo:
        rubric = data.get("rubric")
        return cls(
            name=str(data["name"]),
            kind=data.get("kind", "pointwise"),
            rubric=Rubric.from_saved(rubric) if rubric else None,
            description=str(data.get("description", "")),
        )


@dataclass
class RunStats:
    """Calls, tokens and cost per metric, from the engine's replies."""

    calls: dict[str, int] = field(default_factory=dict)
    cached: dict[str, int] = field(default_factory=dict)
    tokens: dict[str, int] = field(default_factory=dict)
    cost: dict[str, float | None] = field(default_factory=dict)

    def add(self, metric: str, tally: CallTally) -> None:
        self.calls[metric] = self.calls.get(metric, 0) + tally.calls
        self.cached[metric] = self.cached.get(metric, 0) + tally.cached
        self.tokens[metric] = self.tokens.get(metric, 0) + tally.tokens
        prev = self.cost.get(metric, 0.0)
        self.cost[metric] = None if prev is None or tally.cost is None else prev + tally.cost

    def merge(self, other: RunStats) -> None:
        """Add another run's figures (a streamed run's chunks) to these."""
        for name, calls in other.calls.items():
            self.add(
                name,
                CallTally(
                    calls=calls,
                    cached=other.cached.get(name, 0),
                    tokens=other.tokens.get(name, 0),
                    cost=other.cost.get(name, 0.0),
                ),
            )

    def to_dict(self) -> dict[str, Any]:
        return {
            "calls": self.calls,
            "cached": self.cached,
            "tokens": self.tokens,
            "cost": self.cost,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RunStats:
        return cls(
            calls=dict(data.get("calls", {})),
            cached=dict(data.get("cached", {})),
            tokens=dict(data.get("tokens", {})),
            cost=dict(data.get("cost", {})),
        )


class RowErrorWarning(UserWarning):
    """Rows of a run failed (judge calls, unreadable answers): their errors, counted."""


@dataclass(frozen=True)
class RowErrors:
    """One metric's failed rows: how many, out of how many, and the commonest distinct errors.

    A run whose judge calls fail must say so where people look (the CLI's stderr, a Python
    warning, the result's repr), with the error text itself, not only a count.
    """

    metric: str
    errors: int
    rows: int
    scored: int
    top: tuple[tuple[str, int], ...]
    """The commonest distinct error messages with their counts, commonest first."""
    distinct: int
    """How many distinct error messages there are in all."""

    @property
    def nothing_scored(self) -> bool:
        """Whether the metric had rows and scored none of them."""
        return self.rows > 0 and self.scored == 0

    def lines(self, width: int = 300) -> list[str]:
        """``"support: 3 of 3 rows failed"`` then one ``"  3x <error>"`` line per distinct error."""
        head = f"{self.metric}: {self.errors} of {format_count(self.rows, 'row')} failed"
        if self.nothing_scored:
            head += " (no row scored)"
        out = [head]
        for message, count in self.top:
            text = " ".join(message.split())
            if len(text) > width:
                text = text[: width - 3] + "..."
            out.append(f"  {count}x {text}")
        if self.distinct > len(self.top):
            more = self.distinct - len(self.top)
            out.append(f"  ... and {more} other distinct error{'s' if more != 1 else ''}")
        return out


class EvalResult:
    """A judged, scored evaluation: ``.table`` (one row per case) and ``.summary`` (per metric)."""

    def __init__(
        self,
        table: pd.DataFrame,
        metrics: Sequence[MetricInfo],
        *,
        judge: str = "",
        is_mock: bool = False,
        stats: RunStats | None = None,
        meta: Mapping[str, Any] | None = None,
    ) -> None:
        self.table = table
        self.metrics = list(metrics)
        self.judge = judge
        self.is_mock = is_mock
        # a mock run's table says so wherever it goes (a real run over a mock run's table: not)
        if is_mock:
            table.attrs[MOCK_ATTR] = judge or "mock"
        else:
            table.attrs.pop(MOCK_ATTR, None)
        self.stats = stats or RunStats()
        self.meta = dict(meta or {})
        names = [m.name for m in self.metrics]
        if len(set(names)) != len(names):
            raise ValueError(f"metric names must be unique, got {names}")
        self._labels: LabelStore | None = None

    # -- people's labels ---------------------------------------------------------------------------
    def label_store(self) -> LabelStore:
        """Where this result's labels live (a file once the result is saved or loaded)."""
        if self._labels is None:
            self._labels = LabelStore(None, self._check_label)
        return self._labels

    @property
    def labels(self) -> pd.DataFrame:
        """People's labels: one row per reviewer's latest label, with columns ``row`` (0-based
        position in ``table``), ``metric``, ``criterion`` (a criterion's name, or ``"overall"``
        for the verdict or pairwise winner), ``value``, ``reviewer``, ``time`` (UTC ISO) and
        ``comment``. Read again from the labels file on each access, so labels another notebook
        or the review page added show up."""
        return self.label_store().frame()

    @property
    def label_history(self) -> pd.DataFrame:
        """Every label ever given, oldest first (including replaced and withdrawn ones)."""
        frame = pd.DataFrame(
            [label.__dict__ for label in self.label_store().history], columns=list(LABEL_COLUMNS)
        )
        frame["value"] = frame["value"].astype(object)
        return frame

    @property
    def label_problems(self) -> list[str]:
        """Lines of the labels file that were skipped, each with its line number and reason."""
        store = self.label_store()
        store.refresh()
        return list(store.skipped)

    def label(
        self,
        row: int,
        value: str | int | bool | None,
        *,
        metric: str | None = None,
        criterion: str = OVERALL,
        reviewer: str | None = None,
        comment: str = "",
    ) -> Label:
        """Record a person's label for ``row`` (its 0-based position in ``table``).

        ``value`` is ``"pass"``/``"fail"`` (pairwise: ``"candidate"``/``"tie"``/``"baseline"``)
        for ``criterion="overall"``, or a criterion's level (``"yes"``/``"no"`` for a checklist
        item); ``None`` withdraws this reviewer's label. ``metric`` may be left out when the
        result has one metric. A saved or loaded result appends the label to its labels file at
        once; otherwise ``save`` writes it.
        """
        if metric is None:
            if len(self.metrics) != 1:
                raise LabelError(
                    f"say which metric the label is for: metric= one of {', '.join(self.metric_names)}"
                )
            metric = self.metrics[0].name
        if isinstance(value, bool):
            value = "yes" if value else "no"
        data = {
            "row": row,
            "metric": metric,
            "criterion": criterion,
            "value": value,
            "reviewer": reviewer if reviewer is not None else default_reviewer(),
            "time": now_utc(),
            "comment": comment,
        }
        return self.label_store().add([parse_label(data)])[0]

    def add_labels(self, labels: pd.DataFrame | Sequence[Mapping[str, Any]]) -> int:
        """Record many labels at once (a DataFrame or dicts with the ``labels`` columns;
        ``reviewer``, ``time`` and ``comment`` may be missing). All are checked before any is
        kept; returns how many were added."""
        records: Sequence[Mapping[Any, Any]] = (
            labels.to_dict(orient="records") if isinstance(labels, pd.DataFrame) else labels
        )
        parsed = []
        for i, record in enumerate(records):
            data = {str(k): to_plain(v) for k, v in record.items()}
            data.setdefault("criterion", OVERALL)
            if data.get("reviewer") is None:
                data["reviewer"] = default_reviewer()
            if not data.get("time"):
                data["time"] = now_utc()
            if data.get("comment") is None:
                data["comment"] = ""
            if isinstance(data.get("value"), bool):
                data["value"] = "yes" if data["value"] else "no"
            try:
                parsed.append(self._check_label(parse_label(data)))
            except LabelError as exc:
                raise LabelError(f"label {i}: {exc}") from None
        return len(self.label_store().add(parsed))

    def export_labels(self, path: str | Path) -> Path:
        """Write the latest labels as ``.csv`` or ``.jsonl`` (one JSON object a line)."""
        path = Path(path)
        frame = self.labels
        with atomic_writer(path) as fh:
            if path.suffix == ".csv":  # reviewers' names and comments are someone else's text
                frame.map(lambda v: defused(v) if isinstance(v, str) else v).to_csv(
                    fh, index=False, lineterminator="\r\n"
                )
            else:
                for record in frame.to_dict(orient="records"):
                    fh.write(json.dumps(to_plain(record), ensure_ascii=False) + "\n")
        return path

    def label_choices(self, row: int, metric: str) -> dict[str, list[str | int]]:
        """What a person may answer on ``row`` for ``metric``: ``overall`` and each criterion,
        with its allowed values (an empty list: any level number or yes/no)."""
        info = self.metric(metric)
        pairwise = info.kind == "pairwise"
        overall: list[str | int] = list(PAIRWISE_VERDICTS if pairwise else ("pass", "fail"))
        out: dict[str, list[str | int]] = {OVERALL: overall}
        for name, allowed in (self._row_criteria(row, info) or {}).items():
            out[name] = list(allowed)
        return out

    def _row_criteria(self, row: int, info: MetricInfo) -> dict[str, tuple[str | int, ...]] | None:
        """Each criterion of ``row`` for metric ``info`` with its allowed label values."""
        table = self.table
        cells = table.iloc[row]
        rubric = info.rubric
        for key in (col(info.name, RUBRIC), RUBRIC):
            value = cells.get(key) if key in cells.index else None
            if isinstance(value, Rubric):
                rubric = value
                break
            if isinstance(value, Mapping):
                try:
                    rubric = Rubric.from_saved(value)
                    break
                except ValueError:
                    continue
        pairwise = info.kind == "pairwise"
        if rubric is not None:
            return {
                c.name: PAIRWISE_VERDICTS
                if pairwise
                else YES_NO
                if c.is_yes_no
                else tuple(level.score for level in c.levels)
                for c in rubric.criteria
            }
        crits = (
            cells.get(col(info.name, CRITERIA)) if col(info.name, CRITERIA) in cells.index else None
        )
        if isinstance(crits, list | tuple):
            names = [str(c["name"]) for c in crits if isinstance(c, Mapping) and c.get("name")]
            return dict.fromkeys(names, PAIRWISE_VERDICTS if pairwise else ())
        return None

    def _check_label(self, label: Label) -> Label:
        """``label`` checked against this result: its row exists, its metric, criterion, value."""
        n = len(self.table)
        if label.row >= n:
            raise LabelError(f"row {label.row} is out of range: the result has {n} rows")
        try:
            info = self.metric(label.metric)
        except KeyError as exc:
            raise LabelError(str(exc.args[0])) from None
        criteria = None if label.criterion == OVERALL else self._row_criteria(label.row, info)
        return check_value(label, pairwise=info.kind == "pairwise", criteria=criteria)

    # -- reading -----------------------------------------------------------------------------------
    @property
    def row_count(self) -> int:
        return len(self.table)

    @property
    def metric_names(self) -> list[str]:
        return [m.name for m in self.metrics]

    def metric(self, name: str) -> MetricInfo:
        for m in self.metrics:
            if m.name == name:
                return m
        raise KeyError(f"no metric {name!r} in this result (has: {', '.join(self.metric_names)})")

    def has_column(self, column: str) -> bool:
        """Whether the table has ``column`` (a file-backed result answers without loading)."""
        return column in self.table

    def metric_summary(self, name: str) -> Summary:
        info = self.metric(name)
        t = self.table
        scores = t[col(name, SCORE)].tolist()
        passed = t[col(name, PASSED)].tolist() if col(name, PASSED) in t else None
        if info.kind != "pairwise":
            return summarize(scores, passed=passed, has_pass_mark=self.has_pass_mark(name))
        flips = col(name, SWAP_CONSISTENT)
        crits = col(name, CRITERIA)
        return summarize(
            scores,
            choices=scores,
            swap_consistent=t[flips].tolist() if flips in t else None,
            criteria=t[crits].tolist() if crits in t else None,
        )

    @property
    def summary(self) -> pd.DataFrame:
        """Per metric: n, scored, errors, mean, std, pass rate and win/tie/loss rates with Wilson
        95% intervals, calls (made / from cache), tokens and cost."""
        rows = []
        for info in self.metrics:
            flat = self.metric_summary(info.name).as_flat_dict()
            flat["kind"] = info.kind
            flat["calls"] = self.stats.calls.get(info.name, 0)
            flat["cached_calls"] = self.stats.cached.get(info.name, 0)
            flat["tokens"] = self.stats.tokens.get(info.name, 0)
            flat["cost"] = self.stats.cost.get(info.name)
            found = self.panel_agreement(info.name)
            if found is not None:  # a judge panel: how far its judges agree
                flat.update({k: v for k, v in found.items() if k not in ("judges", "units")})
            rows.append(pd.Series(flat, name=info.name))
        frame = pd.DataFrame(rows)
        frame.index.name = "metric"
        return frame

    def has_pass_mark(self, name: str) -> bool | None:
        """Whether metric ``name`` can pass: its fixed rubric, or any row's rubric (generated
        ones, or the data's ``rubric`` column) has a pass mark. None when no rubric tells
        (pairwise, template and computation metrics: their pass flags are taken as given)."""
        info = self.metric(name)
        if info.kind == "pairwise":
            return None
        if info.rubric is not None:
            return info.rubric.pass_mark is not None
        for column in (col(name, RUBRIC), RUBRIC):
            if self.has_column(column):
                return rubrics_have_pass_mark(self.table[column].tolist())
        return None

    def panel_agreement(self, name: str) -> dict[str, Any] | None:
        """How far a judge panel's judges agree (Fleiss' kappa, Krippendorff's alpha nominal
        and ordinal, over every case's criteria); None for a metric judged by one judge."""
        self.metric(name)
        if not self.has_column(col(name, JUDGES)):
            return None
        from ..calibration.measures import panel_agreement

        return panel_agreement(self.table[col(name, JUDGES)].tolist())

    def criterion_wins(self, name: str) -> pd.DataFrame:
        """A pairwise metric's wins, ties and losses per criterion (rows: criteria).

        A criterion whose two orders disagreed counts as a tie; rows with an error count nowhere.
        """
        if self.metric(name).kind != "pairwise":
            raise ValueError(f"metric {name!r} is not pairwise: it has no wins per criterion")
        counts = self.metric_summary(name).criteria or {}
        frame = pd.DataFrame(
            [c.model_dump() for c in counts.values()],
            index=pd.Index(list(counts), name="criterion"),
            columns=["win", "tie", "loss"],
        )
        return frame

    def row_errors(self, top: int = 3) -> list[RowErrors]:
        """Per metric with failed rows: the counts and the ``top`` commonest distinct errors
        (metrics without errors are left out)."""
        found = []
        for info in self.metrics:
            s = self.metric_summary(info.name)
            if not s.errors:
                continue
            column = col(info.name, ERROR)
            counts: dict[str, int] = {}
            if self._errors_readable() and self.has_column(column):
                for value in self.table[column].tolist():
                    if isinstance(value, str) and value:
                        counts[value] = counts.get(value, 0) + 1
            ranked = sorted(counts.items(), key=lambda kv: -kv[1])  # stable: first seen first
            found.append(
                RowErrors(
                    metric=info.name,
                    errors=s.errors,
                    rows=s.n,
                    scored=s.scored,
                    top=tuple(ranked[:top]),
                    distinct=len(counts),
                )
            )
        return found

    def warn_row_errors(self, stacklevel: int = 2) -> None:
        """Warn (:class:`RowErrorWarning`) with every metric's failed rows and their commonest
        errors; nothing when every row was scored."""
        found = self.row_errors()
        if not found:
            return
        import warnings

        lines = [line for errors in found for line in errors.lines()]
        hint = "each row's error is in result.table['METRIC/error']"
        warnings.warn(RowErrorWarning("\n".join(lines) + f"\n({hint})"), stacklevel=stacklevel + 1)

    def _errors_readable(self) -> bool:
        """Whether the error texts can be read without loading a table too big to show."""
        return True

    @property
    def summary_metrics(self) -> dict[str, Any]:
        """A flat dict (Vertex style): ``row_count``, ``{metric}/mean``, ``{metric}/std``, ..."""
        out: dict[str, Any] = {"row_count": self.row_count}
        for info in self.metrics:
            for key, value in (
                self.metric_summary(info.name).as_flat_dict(col(info.name, "")).items()
            ):
                out[key] = value
        return out

    def summary_text(self, title: str | None = None) -> str:
        """The summary as a fixed-width text block, for terminals, logs and CI output.

        Every score and rate is a percent with ``%``; each rate has its counts beside it.
        """
        mock = "  [MOCK judge: not real judgments]" if self.is_mock else ""
        head = f"== {title or 'result'} ({format_count(self.row_count, 'row')}){mock} =="
        rows: dict[str, dict[str, Any]] = {}
        notes: list[str] = []
        summaries = {info.name: self.metric_summary(info.name) for info in self.metrics}
        for info in self.metrics:
            s = summaries[info.name]
            rows[info.name] = _summary_cells(s, info.kind == "pairwise")
            rows[info.name]["calls"] = self.stats.calls.get(info.name, 0)
            rows[info.name]["tokens"] = self.stats.tokens.get(info.name, 0)
            if s.criteria:
                counts = ", ".join(f"{c} {w.win}/{w.tie}/{w.loss}" for c, w in s.criteria.items())
                notes.append(f"{info.name} per criterion (win/tie/loss): {counts}")
        frame = pd.DataFrame.from_dict(rows, orient="index").fillna("")
        frame.index.name = "metric"
        if any(s.verdicts or s.has_pass_mark is False for s in summaries.values()):
            notes.append(PASS_RULE)
        if any(info.kind == "pairwise" for info in self.metrics):
            notes.append(
                "pairwise mean: +100% candidate much better ... -100% baseline much better"
            )
        with pd.option_context("display.width", 160, "display.max_columns", 20):
            body = frame.to_string()
        return "\n".join([head, body, *notes])

    def case(self, index: int) -> dict[str, Any]:
        """Row ``index`` (by position) as a plain dict, for explanations."""
        return {str(k): to_plain(v) for k, v in self.table.iloc[index].to_dict().items()}

    def __len__(self) -> int:
        return self.row_count

    def __iter__(self) -> Iterator[dict[str, Any]]:
        for i in range(self.row_count):
            yield self.case(i)

    def __repr__(self) -> str:
        mock = " (MOCK judge)" if self.is_mock else ""
        parts = []
        failed = False
        for info in self.metrics:
            s = self.metric_summary(info.name)
            failed = failed or bool(s.errors)
            if s.n and not s.scored:  # a total failure reads as one, with its first error
                parts.append(f"{info.name}: NO ROW SCORED, {format_count(s.errors, 'error')}")
                continue
            mean = format_percent(s.mean, signed=info.kind == "pairwise")
            parts.append(f"{info.name}: mean {mean}, {format_count(s.errors, 'error')}")
        text = f"<EvalResult {format_count(self.row_count, 'row')}{mock}; " + "; ".join(parts)
        if failed:
            first = next((e.top[0] for e in self.row_errors(top=1) if e.top), None)
            if first is not None:
                message = " ".join(first[0].split())
                message = message if len(message) <= 200 else message[:197] + "..."
                text += f"; first error ({first[1]}x): {message}"
        return text + ">"

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        return presentation().result_mimebundle(self)

    def failure_clusters(
        self,
        metric: str | None = None,
        *,
        threshold: float = 0.8,
        name_with: Any = None,
    ) -> Any:
        """One metric's failing rows grouped by the criterion that failed them, then by what the
        judge's reasons say (``FailureClusters``: ``.clusters`` largest first, ``.rows(n)``).
        ``name_with=judge`` adds the judge's one-line summary of each cluster (one call each).
        Needs scikit-learn (``pip install 'rubriclab[clusters]'``)."""
        from .clusters import failure_clusters

        return failure_clusters(
            self, metric, threshold=threshold, name_with=name_with, present=presentation
        )

    # -- tracking ------------------------------------------------------------------------------------
    def log_to_mlflow(self, name: str = "rubriclab", *, artifact_dir: str = "rubriclab") -> str:
        """Log summary metrics, the table, the rubrics and the HTML report into the active MLflow
        run (started and ended here if none is active); returns the run id. Needs
        ``pip install 'rubriclab[mlflow]'``."""
        from .mlflow import log_result

        return log_result(
            self,
            self._flat_table()[0],
            report=lambda: presentation().report_html({name: self}, f"rubriclab: {name}"),
            name=name,
            artifact_dir=artifact_dir,
        )

    def write_trace_scores(self, traces: Any, path: str | Path) -> Path:
        """Write the judged ``traces`` (the same ones this evaluation read) to ``path`` as OTLP
        JSON, each judged span carrying its scores as ``gen_ai.evaluation.result`` span events
        and ``rubriclab.evaluation.<metric>.*`` attributes; the root span for trace rows. When
        ``traces`` is the OTLP JSON file (or parsed export) they came from, the output is a copy
        of it in its own layout (document, array or JSON lines) with resources, scopes and every
        span field kept; only the judged spans gain the scores."""
        from .trace_scores import write_otlp_scores

        return write_otlp_scores(self, traces, path)

    def log_feedback_to_mlflow(self, traces: Any) -> list[str]:
        """Log each score as an MLflow feedback assessment (``mlflow.log_feedback``) on the
        traces that came from MLflow, onto the judged span for span rows; returns the
        assessment ids. Needs MLflow 3 (``pip install 'rubriclab[mlflow]'``)."""
        from .trace_scores import log_mlflow_feedback

        return log_mlflow_feedback(self, traces)

    # -- saving --------------------------------------------------------------------------------------
    def save(self, path: str | Path, *, output_fields: OutputFields | None = None) -> Path:
        """Write the result: ``.jsonl`` (always available), ``.jsonl.gz`` or ``.parquet``
        (needs pyarrow).

        JSONL is plain: a first ``{"__rubriclab__": ...}`` header line (metrics, judge, run
        stats), then one JSON object per row with nested fields (criteria, rubrics, raw outputs)
        as real JSON, so ``jq`` and ``pandas.read_json(lines=True)`` read it (``.jsonl.gz`` is
        the same, gzipped: ``zcat``, ``pandas.read_json(..., compression="gzip")``). Parquet
        stores nested fields as JSON text (named in the header) and the header in the schema
        metadata. All load back exactly with :func:`load_result`.

        ``output_fields="compact"`` leaves out the judge's raw answers (often half a pairwise
        row); a list names the metric fields to keep. Scores, verdicts, criteria and errors are
        always written, so the summary reads back the same.
        """
        path = Path(path)
        fmt = result_format(path)
        drop = dropped_columns(self.table.columns, output_fields, [m.name for m in self.metrics])
        table = self.table.drop(columns=drop) if drop else self.table
        header = self._header(table)
        # written whole or not at all: a failed save leaves the previous file as it was
        if fmt == "parquet":
            try:
                import pyarrow as pa
                import pyarrow.parquet as pq
            except ImportError:
                raise ImportError(
                    "saving Parquet needs pyarrow: pip install 'rubriclab[arrow]', or save as .jsonl"
                ) from None
            flat, json_columns = _flatten(table)
            header["json_columns"] = json_columns
            try:
                arrow = pa.Table.from_pandas(flat, preserve_index=False)
            except (pa.ArrowException, ValueError, TypeError) as exc:
                raise _save_error(path, flat, exc) from None
            meta = dict(arrow.schema.metadata or {})
            meta[b"rubriclab"] = json.dumps(header).encode()
            with atomic_path(path) as temp:
                pq.write_table(arrow.replace_schema_metadata(meta), temp)
        else:
            with atomic_path(path) as temp, open_text(temp, "w", gz=fmt == "jsonl.gz") as fh:
                fh.write(json.dumps({"__rubriclab__": header}) + "\n")
                for record in table.to_dict(orient="records"):
                    try:
                        line = json.dumps({str(k): to_plain(v) for k, v in record.items()})
                    except (TypeError, ValueError) as exc:
                        raise _save_error(path, table, exc) from None
                    fh.write(line + "\n")
        self.label_store().save_to(labels_path(path))
        return path

    def _header(self, table: pd.DataFrame | None = None) -> dict[str, Any]:
        table = self.table if table is None else table
        return {
            "version": _FORMAT_VERSION,
            "metrics": [m.to_dict() for m in self.metrics],
            "judge": self.judge,
            "is_mock": self.is_mock,
            "stats": self.stats.to_dict(),
            "meta": to_plain(self.meta),
            "columns": [str(c) for c in table.columns],
            # what open_result shows without reading the rows (as a streamed file's header)
            "rows": len(table),
            "summary": self._saved_summaries(),
        }

    def _saved_summaries(self) -> dict[str, Any]:
        """Each metric's summary for the file's header; a metric whose columns are not all
        there is left out (a reader then computes it from the rows, as before)."""
        out: dict[str, Any] = {}
        for m in self.metrics:
            try:
                out[m.name] = self.metric_summary(m.name).model_dump()
            except (KeyError, ValueError):
                continue
        return out

    def flat_table(self) -> tuple[pd.DataFrame, list[str]]:
        """The table as Parquet stores it, and the columns whose values are JSON text."""
        return self._flat_table()

    def _flat_table(self) -> tuple[pd.DataFrame, list[str]]:
        return _flatten(self.table)


def _flatten(table: pd.DataFrame) -> tuple[pd.DataFrame, list[str]]:
    """The table with nested columns as JSON text (Parquet columns hold one type)."""
    flat = table.copy()
    json_columns = []
    for column in flat.columns:
        if _is_nested(str(column)) or flat[column].map(_is_container).any():
            flat[column] = flat[column].map(_to_json_text)
            json_columns.append(str(column))
    return flat, json_columns


def result_file(path: str | Path) -> Path:
    """The result file at ``path``: the file itself, or a results folder's one result file
    (``results.jsonl``, else ``results.parquet``, else the folder's only ``.jsonl``/``.parquet``).
    """
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"no result file or folder at {path}")
    if not path.is_dir():
        return path
    for name in ("results.jsonl", "results.jsonl.gz", "results.parquet"):
        if (path / name).is_file():
            return path / name
    found = sorted(
        p
        for p in path.iterdir()
        if p.is_file()
        and p.name.lower().endswith(RESULT_SUFFIXES)
        and not p.name.lower().endswith((".labels.jsonl", ".labels.jsonl.gz"))
    )
    if len(found) == 1:
        return found[0]
    if not found:
        raise FileNotFoundError(f"{path} holds no result file (results.jsonl or .parquet)")
    names = ", ".join(p.name for p in found)
    raise ValueError(f"{path} holds several result files ({names}): name one of them")


def rubrics_have_pass_mark(cells: Sequence[Any]) -> bool | None:
    """Whether any rubric among ``cells`` (rubrics, their dicts or YAML text) has a pass mark;
    None when no cell holds a rubric."""
    seen = False
    for cell in cells:
        if isinstance(cell, Rubric):
            mark: Any = cell.pass_mark
        elif isinstance(cell, Mapping) and "criteria" in cell:
            mark = cell.get("pass_mark")
        elif isinstance(cell, str) and cell.strip():
            try:
                mark = Rubric.from_yaml_text(cell).pass_mark
            except ValueError:
                continue
        else:
            continue
        seen = True
        if mark is not None:
            return True
    return False if seen else None


def load_result(path: str | Path) -> EvalResult:
    """Read a result written by :meth:`EvalResult.save` (JSONL or Parquet), or the one in a
    results folder (what ``rubriclab run`` writes)."""
    path = result_file(path)
    if _read_format(path) == "parquet":
        import pyarrow.parquet as pq

        table = pq.read_table(path)
        raw_meta = (table.schema.metadata or {}).get(b"rubriclab")
        if raw_meta is None:
            raise ValueError(f"{path} is a Parquet file but not a rubriclab result")
        header = json.loads(raw_meta)
        frame = table.to_pandas()
    else:
        with open_text(path) as fh:
            first = fh.readline()
            try:
                header = json.loads(first)["__rubriclab__"]
            except (json.JSONDecodeError, KeyError, TypeError):
                raise ValueError(
                    f"{path} is not a rubriclab result (its first line has no __rubriclab__ header)"
                ) from None
            records = [json.loads(line) for line in fh if line.strip()]
        frame = pd.DataFrame.from_records(records, columns=header.get("columns"))
    decode_saved_cells(frame, header)
    result = EvalResult(
        frame,
        [MetricInfo.from_dict(m) for m in header.get("metrics", [])],
        judge=header.get("judge", ""),
        is_mock=bool(header.get("is_mock", False)),
        stats=RunStats.from_dict(header.get("stats", {})),
        meta=header.get("meta", {}),
    )
    result.label_store().path = labels_path(path)
    return result


class FileResult(EvalResult):
    """A result that lives in a file (a streamed run's output): the table loads on first access,
    while the summary, row count and metrics come from the file's header without loading it."""

    def __init__(self, path: Path, header: Mapping[str, Any]) -> None:
        super().__init__(
            pd.DataFrame(),
            [MetricInfo.from_dict(m) for m in header.get("metrics", [])],
            judge=header.get("judge", ""),
            is_mock=bool(header.get("is_mock", False)),
            stats=RunStats.from_dict(header.get("stats", {})),
            meta=header.get("meta", {}),
        )
        self.path = path
        self._table: pd.DataFrame | None = None
        #: None: a file from before headers counted their rows (the table tells)
        self._rows: int | None = int(header["rows"]) if "rows" in header else None
        self._summaries = {
            str(k): Summary.model_validate(v) for k, v in (header.get("summary") or {}).items()
        }
        self._agreement = {str(k): dict(v) for k, v in (header.get("agreement") or {}).items()}
        self.stream_fingerprint: str | None = (header.get("stream") or {}).get("fingerprint")
        #: a streamed run's file source as it was judged (size, mtime_ns), None if not a file
        self.stream_source: Any = (header.get("stream") or {}).get("source")
        self._columns = {str(c) for c in header.get("columns") or []}
        #: the file's header as read (views that page the file decode cells with it)
        self.header: Mapping[str, Any] = header

    def has_column(self, column: str) -> bool:
        if self._table is None and self._columns:
            return column in self._columns
        return super().has_column(column)

    @property
    def table(self) -> pd.DataFrame:
        if self._table is None:
            self._table = load_result(self.path).table
        return self._table

    @table.setter
    def table(self, value: pd.DataFrame) -> None:
        self._table = value

    @property
    def loaded(self) -> bool:
        """Whether the table has been read into memory."""
        return self._table is not None

    @property
    def row_count(self) -> int:
        if self._table is None and self._rows is not None:
            return self._rows
        return len(self.table)

    def metric_summary(self, name: str) -> Summary:
        if self._table is None and name in self._summaries:
            self.metric(name)
            return self._summaries[name]
        return super().metric_summary(name)

    def panel_agreement(self, name: str) -> dict[str, Any] | None:
        if self._table is None and name in self._agreement:
            self.metric(name)
            return self._agreement[name]
        return super().panel_agreement(name)

    @property
    def too_big_to_load(self) -> bool:
        """Whether the table is unread and holds more than ``DISPLAY_LOAD_MAX_ROWS`` rows: views
        and reprs then read the header or pages of the file, never the whole table."""
        rows = self.row_count
        return self._table is None and rows > DISPLAY_LOAD_MAX_ROWS

    def _errors_readable(self) -> bool:
        return not self.too_big_to_load

    def __repr__(self) -> str:
        return super().__repr__().replace("<EvalResult", f"<EvalResult in {self.path.name}", 1)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        if not self.too_big_to_load:
            return super()._repr_mimebundle_(include, exclude)
        # a streamed run of millions of rows: showing it must not load it
        text = (
            f"{self.summary_text(self.path.name)}\n"
            f"(the {format_count(self.row_count, 'row')} stay in {str(self.path)!r}; result.table loads them)"
        )
        return {"text/plain": text, "text/html": f"<pre>{html.escape(text)}</pre>"}


def decode_saved_cells(frame: pd.DataFrame, header: Mapping[str, Any]) -> None:
    """Turn a saved file's cells back into values, in place: nested fields from their JSON text
    (the header names those columns) and rubrics from their dicts. ``frame`` may hold any of the
    file's columns (a page of rows read by a view, or the whole table)."""
    if header.get("version", 1) < 2:
        _decode_tagged(frame)
    else:
        for column in header.get("json_columns", []):
            if column in frame.columns:
                frame[column] = frame[column].map(from_json_text)
    for column in frame.columns:
        if field_of(str(column)) == RUBRIC or column == RUBRIC:
            frame[column] = frame[column].map(
                lambda v: Rubric.from_saved(v) if isinstance(v, dict) else v
            )


def _read_format(path: Path) -> str:
    """How to read a result file: by its name, and any other name as JSON Lines (whose header
    line then says whether it is a rubriclab result)."""
    try:
        return result_format(path)
    except ValueError:
        return "jsonl"


def open_result(path: str | Path) -> FileResult:
    """A result file (or a results folder's) opened without reading its table
    (see :class:`FileResult`)."""
    path = result_file(path)
    if _read_format(path) == "parquet":
        import pyarrow.parquet as pq

        raw_meta = (pq.read_schema(path).metadata or {}).get(b"rubriclab")
        if raw_meta is None:
            raise ValueError(f"{path} is a Parquet file but not a rubriclab result")
        header = json.loads(raw_meta)
    else:
        with open_text(path) as fh:
            try:
                header = json.loads(fh.readline())["__rubriclab__"]
            except (json.JSONDecodeError, KeyError, TypeError):
                raise ValueError(
                    f"{path} is not a rubriclab result (its first line has no __rubriclab__ header)"
                ) from None
    result = FileResult(path, header)
    result.label_store().path = labels_path(path)
    return result


# -- helpers -----------------------------------------------------------------------------------------


def _summary_cells(s: Summary, pairwise: bool) -> dict[str, Any]:
    """One summary row as display text: percents with '%', counts beside each rate."""
    cells: dict[str, Any] = {
        "n": s.n,
        "errors": s.errors,
        "mean": format_percent(s.mean, signed=pairwise),
        "± std": format_percent(s.std) if s.std is not None else "",
    }
    if s.has_pass_mark is False:
        cells["pass"] = s.pass_text()
    elif s.verdicts:
        rate = s.pass_rate.rate if s.pass_rate is not None else None
        text = f"{format_percent(rate)} ({s.passed}/{s.verdicts})"
        cells["pass"] = text + (f", {s.no_verdict} without verdict" if s.no_verdict else "")
    elif s.verdicts == 0 and s.scored:
        cells["pass"] = "n/a (no pass/fail verdicts)"
    for key in ("win", "tie", "loss"):
        iv = getattr(s, key)
        if iv is not None:
            cells[key] = f"{format_percent(iv.rate)} ({iv.k}/{iv.n})"
    if s.swap_inconsistent is not None:
        cells["swap-inconsistent"] = (
            f"{format_percent(s.swap_inconsistent_rate)} ({s.swap_inconsistent}/{s.scored})"
        )
    return cells


#: version 1 files tagged nested values' JSON text with this prefix
_V1_JSON_TAG = "\x00json:"


def _is_nested(column: str) -> bool:
    return column == "rubric" or field_of(column) in _NESTED_FIELDS


def _is_container(value: Any) -> bool:
    return isinstance(value, list | dict | tuple | Rubric)


def _to_json_text(value: Any) -> Any:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    try:  # plain JSON already (the usual case): the C encoder, no walk through the value
        return json.dumps(value, allow_nan=False)
    except (TypeError, ValueError):  # numpy scalars, rubrics, NaN inside: made plain first
        return json.dumps(to_plain(value))


def from_json_text(value: Any) -> Any:
    """A cell of a :meth:`EvalResult.flat_table` JSON-text column as its list or dict again
    (cells that are not text, such as None or a value never flattened, as they are)."""
    return json.loads(value) if isinstance(value, str) else value


def _decode_tagged(frame: pd.DataFrame) -> None:
    """Version 1 files: every ``"\\x00json:..."`` string back to its list or dict."""

    def decode(value: Any) -> Any:
        if isinstance(value, str) and value.startswith(_V1_JSON_TAG):
            return json.loads(value[len(_V1_JSON_TAG) :])
        return value

    for column in frame.columns:
        if frame[column].map(lambda v: isinstance(v, str) and v.startswith(_V1_JSON_TAG)).any():
            frame[column] = frame[column].map(decode)


class ResultSaveError(ValueError):
    """A result cannot be written; the message names the row and column at fault."""


def _save_error(path: Path, flat: pd.DataFrame, exc: BaseException) -> ResultSaveError:
    """The first cell that cannot be written, named by row and column (else the cause)."""
    for column in flat.columns:
        for row, value in flat[column].items():
            problem = _cell_problem(value)
            if problem:
                return ResultSaveError(
                    f"cannot save {path.name}: row {row}, column {column!r}: {problem}"
                )
    return ResultSaveError(f"cannot save {path.name}: {type(exc).__name__}: {exc}")


def _cell_problem(value: Any) -> str | None:
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as err:
            return (
                f"the text holds a lone surrogate ({value[err.start]!r}) at character "
                f"{err.start}, which UTF-8 cannot store; replace it (e.g. with U+FFFD)"
            )
        return None
    try:
        json.dumps(to_plain(value))
    except (TypeError, ValueError) as err:
        return f"a {type(value).__name__} value that cannot be stored ({err})"
    return None
