"""The one metric loop: every metric judges the cases and adds its columns to the table.

Rows from a table and rows from agent traces (``rubriclab.traces.trace_cases``) both come here
as cases plus a table. Each metric is asked through the :class:`~rubriclab.metrics.Metric`
protocol alone; the run's judge is resolved when a metric first asks for it, so a run of
computation metrics needs none and is never labelled with a mock judge.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import pandas as pd

from ..columns import FLOAT_FIELDS, USAGE_FIELDS, field_of
from ..data import Case, to_cases, to_frame
from ..judges import JudgeConfigError, get_judge
from ..judges.engine import run_scope
from ..metrics.base import Metric, Rows
from ..result import EvalResult, MetricInfo, RunStats
from .responses import ModelFn, generate_responses

if TYPE_CHECKING:
    from ..judges import Judge

__all__ = [
    "RunJudge",
    "check_data",
    "check_metrics",
    "evaluate_frame",
    "metric_list",
    "run_metrics",
]


def metric_list(metrics: Metric | Sequence[Metric]) -> list[Metric]:
    """``metrics=`` as a list: one metric given on its own is a list of one."""
    if isinstance(metrics, Metric):
        return [metrics]
    if isinstance(metrics, str):
        raise TypeError(
            f"metrics={metrics!r} is text: pass metric objects, e.g. "
            "metrics=[rl.metrics.TEXT_QUALITY] (rl.metrics.by_name looks one up by name)"
        )
    return list(metrics)


def check_data(
    metrics: Sequence[Metric], columns: Sequence[Any], mapping: Mapping[str, str] | None
) -> None:
    """Columns a metric needs (a pairwise metric's baseline) are there: before any call."""
    for metric in metrics:
        check = getattr(metric, "check_data", None)
        if callable(check):
            check(list(columns), dict(mapping or {}))


def check_metrics(metrics: Sequence[Any]) -> None:
    """At least one metric, each one a :class:`Metric`, with distinct names."""
    if not metrics:
        raise ValueError(
            "evaluate needs at least one metric, e.g. metrics=[rl.metrics.TEXT_QUALITY]"
        )
    for metric in metrics:
        if not isinstance(metric, Metric):
            raise TypeError(
                f"not a metric: {metric!r}; use rl.metrics.RubricMetric, PairwiseRubricMetric, "
                "TemplateMetric or a computation metric such as rl.metrics.exact_match"
            )
    names = [m.name for m in metrics]
    if len(set(names)) != len(names):
        raise ValueError(f"metric names must be unique, got {names}")


class RunJudge:
    """The run's judge, resolved on first use (``judge=``, else ``rl.set_judge`` / env).

    With ``progress`` off it is handed out without per-call progress bars (a live view shows
    the progress instead).
    """

    def __init__(self, spec: Judge | str | None) -> None:
        self._spec = spec
        self._judge: Judge | None = None
        self.progress = True

    def __call__(self) -> Judge:
        if self._judge is None:
            self._judge = get_judge(self._spec)
        if self.progress:
            return self._judge
        return _NoBars(self._judge)  # type: ignore[return-value]

    @property
    def resolved(self) -> Judge | None:
        """The judge, once a metric has asked for it."""
        return self._judge


class _NoBars:
    """The judge, without per-call progress bars: a live view shows the progress instead."""

    def __init__(self, judge: Judge) -> None:
        self._judge = judge

    def __getattr__(self, name: str) -> Any:
        return getattr(self._judge, name)

    async def amap(
        self, requests: Any, progress: bool = True, desc: str = "judging", **kw: Any
    ) -> Any:
        return await self._judge.amap(requests, progress=False, desc=desc, **kw)


async def run_metrics(
    metrics: Sequence[Metric], cases: Sequence[Case], table: pd.DataFrame, judge: RunJudge
) -> tuple[list[MetricInfo], RunStats, list[Judge]]:
    """Judge every case with every metric, adding each metric's columns to ``table``.

    Returns each metric's description for the result, the calls per metric, and every judge
    that answered (the run is a mock run when any of them is a mock).
    """
    infos: list[MetricInfo] = []
    stats = RunStats()
    asked: list[Judge] = []
    rows = Rows(cases, table, judge)
    for metric in metrics:
        done = await metric.judge_rows(rows)
        for column, values in done.columns.items():
            _put(table, column, values)
        for tally in done.usage:
            stats.add(metric.name, tally)
        asked += done.judges
        infos.append(MetricInfo(metric.name, metric.kind, metric.rubric, metric.description))
    return infos, stats, asked


def _put(table: pd.DataFrame, column: str, values: list[Any]) -> None:
    field = field_of(column)
    if field in USAGE_FIELDS:
        table[column] = values
    else:  # object dtype keeps lists and dicts per cell (criteria, raw outputs) as they are
        dtype = float if field in FLOAT_FIELDS else object
        table[column] = pd.Series(values, index=table.index, dtype=dtype)


def describe(judge: RunJudge, asked: Sequence[Judge]) -> tuple[str, bool]:
    """The run's judge as the result names it, and whether any judge was a mock."""
    first = judge.resolved or (asked[0] if asked else None)
    described = first.describe() if first is not None else "no judge (computation metrics)"
    return described, any(j.is_mock for j in asked)


async def evaluate_frame(
    data: Any,
    metrics: Sequence[Metric],
    *,
    judge: Judge | str | None = None,
    model: Judge | str | ModelFn | None = None,
    mapping: Mapping[str, str] | None = None,
    on_rows: Callable[[pd.DataFrame], None] | None = None,
    chunk_rows: int | None = None,
    image_dirs: Sequence[str | os.PathLike[str]] | None = None,
    data_dir: str | os.PathLike[str] | None = None,
) -> EvalResult:
    """Judge a table held in memory (a DataFrame, records or a file) with every metric.

    Local images named in the rows are read from the data file's folder (``data_dir``, or
    the working folder for data in memory) and ``image_dirs`` only (see ``data.to_cases``).

    ``on_rows`` (the live view's hook) is called with each block of finished rows, every
    metric's columns filled, in row order; rows are then judged ``chunk_rows`` at a time (by
    default a few times the judge's concurrency) and the result is the same as without it.
    """
    check_metrics(metrics)
    with run_scope():  # judge.last_run then covers the whole evaluate, re-asks included
        run_judge = RunJudge(judge)
        if data_dir is None and isinstance(data, str | os.PathLike):
            data_dir = os.path.dirname(os.fspath(data)) or "."
        frame = to_frame(data).copy()
        check_data(metrics, list(frame.columns), mapping)  # before any call, responses' too
        if model is not None:
            frame = await generate_responses(frame, model, mapping)
        # a pairwise row without a baseline becomes that row's error, not a failed run
        cases = to_cases(
            frame,
            mapping=mapping,
            need_response=model is None,
            image_dirs=image_dirs,
            data_dir=data_dir,
        )
        table = frame.copy()
        if on_rows is not None and cases:
            table, infos, stats, asked = await _run_in_blocks(
                metrics, cases, run_judge, table, on_rows, chunk_rows
            )
        else:
            infos, stats, asked = await run_metrics(metrics, cases, table, run_judge)
        described, is_mock = describe(run_judge, asked)
        return EvalResult(table, infos, judge=described, is_mock=is_mock, stats=stats)


async def _run_in_blocks(
    metrics: Sequence[Metric],
    cases: Sequence[Case],
    judge: RunJudge,
    table: pd.DataFrame,
    on_rows: Callable[[pd.DataFrame], None],
    chunk_rows: int | None,
) -> tuple[pd.DataFrame, list[MetricInfo], RunStats, list[Judge]]:
    """Judge ``cases`` a block at a time and hand each finished block to ``on_rows``."""
    judge.progress = False
    if chunk_rows is not None and chunk_rows < 1:
        raise ValueError(f"chunk_rows must be at least 1, got {chunk_rows}")
    parts: list[pd.DataFrame] = []
    infos: list[MetricInfo] = []
    stats = RunStats()
    asked: list[Judge] = []
    start = 0
    for size in block_sizes(len(cases), chunk_rows, _concurrency(judge)):
        block = list(cases[start : start + size])
        part = table.iloc[start : start + size].copy()
        start += size
        infos, part_stats, part_asked = await run_metrics(metrics, block, part, judge)
        stats.merge(part_stats)
        asked += part_asked
        parts.append(part)
        on_rows(part)
    return pd.concat(parts), infos, stats, asked


def block_sizes(total: int, chunk_rows: int | None, concurrency: int) -> list[int]:
    """The sizes of a live run's blocks: ``chunk_rows`` each when given; by default the
    first block is one round of calls (the judge's concurrency), so the first rows show after
    one answer's time, and each next block doubles up to a few times the concurrency (fewer,
    larger blocks lose less to the slowest call of each)."""
    if chunk_rows is not None:
        size, cap = chunk_rows, chunk_rows
    else:
        size, cap = max(concurrency, 1), max(4 * concurrency, 16)
    sizes: list[int] = []
    left = total
    while left > 0:
        sizes.append(min(size, left))
        left -= sizes[-1]
        size = min(2 * size, cap)
    return sizes


def _concurrency(judge: RunJudge) -> int:
    """The judge's concurrency (8 for a computation-only run, which may have no judge)."""
    found = _judge_or_none(judge)
    return found.max_concurrency if found is not None else 8


def _judge_or_none(judge: RunJudge) -> Judge | None:
    try:
        return judge()
    except JudgeConfigError:  # no judge set: a metric that needs one says so when it asks
        return None
