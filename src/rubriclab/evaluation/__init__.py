"""``evaluate`` / ``aevaluate``: data -> cases -> rubrics -> critiques -> scores -> EvalResult.

This package only wires the steps; each step is its own module. ``run`` holds the one metric
loop (every metric through the ``Metric`` protocol), ``responses`` writes responses first when
a ``model`` is given, and ``stream`` runs big sources chunk by chunk into a file. Traces come
in through their data adapter (``rubriclab.traces.trace_cases``) and go through the same loop.
It works from a script and inside Jupyter's running event loop (``run_sync``), and never loses
finished work: a failing row carries its error and raw output, and every judge call goes
through the engine's cache.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import pandas as pd

from ..judges.engine import run_scope
from ..judges.sync import run_sync
from ..result import EvalResult, RunStats, presentation
from ..result.formats import OutputFields, check_output_fields
from .responses import ModelFn, generate_responses
from .run import RunJudge, check_metrics, describe, evaluate_frame, metric_list, run_metrics
from .stream import DEFAULT_CHUNK_ROWS, astream_evaluate, iter_chunks, streams

if TYPE_CHECKING:
    from ..judges import Judge
    from ..metrics import Metric

__all__ = ["ModelFn", "aevaluate", "evaluate", "generate_responses"]


async def aevaluate(
    data: Any,
    metrics: Metric | Sequence[Metric],
    *,
    judge: Judge | str | None = None,
    model: Judge | str | ModelFn | None = None,
    mapping: Mapping[str, str] | None = None,
    partition: str | None = None,
    on_rows: Callable[[pd.DataFrame], None] | None = None,
    chunk_rows: int | None = None,
    output: str | os.PathLike[str] | None = None,
    image_dirs: Sequence[str | os.PathLike[str]] | None = None,
    output_fields: OutputFields | None = None,
) -> EvalResult:
    """Async form of :func:`evaluate` (it warns the same way when rows fail).

    ``on_rows`` (the live view's hook) is called with each block of finished rows, every
    metric's columns filled, in row order; rows are then judged ``chunk_rows`` at a time (by
    default a few times the judge's concurrency) and the result is the same as without it.
    With ``output=`` (or an iterator of DataFrames) the run is streamed instead (``stream``)
    and ``chunk_rows`` is its chunk size.
    """
    result = await _aevaluate(
        data,
        metrics,
        judge=judge,
        model=model,
        mapping=mapping,
        partition=partition,
        on_rows=on_rows,
        chunk_rows=chunk_rows,
        output=output,
        image_dirs=image_dirs,
        output_fields=output_fields,
    )
    result.warn_row_errors()
    return result


async def _aevaluate(
    data: Any,
    metrics: Metric | Sequence[Metric],
    *,
    judge: Judge | str | None = None,
    model: Judge | str | ModelFn | None = None,
    mapping: Mapping[str, str] | None = None,
    partition: str | None = None,
    on_rows: Callable[[pd.DataFrame], None] | None = None,
    chunk_rows: int | None = None,
    output: str | os.PathLike[str] | None = None,
    image_dirs: Sequence[str | os.PathLike[str]] | None = None,
    output_fields: OutputFields | None = None,
) -> EvalResult:
    metrics = metric_list(metrics)
    if output_fields not in (None, "all") and output is None:
        raise ValueError(
            "output_fields= says what an output= file keeps; for a result in memory, "
            "save it with result.save(path, output_fields=...)"
        )
    check_output_fields(output_fields)
    if output is not None or streams(data):
        return await _streamed(
            data,
            metrics,
            judge,
            model,
            mapping,
            partition,
            output,
            chunk_rows,
            image_dirs,
            output_fields=output_fields,
        )
    if partition is not None or _is_traces(data):
        return await _traces(data, metrics, judge, partition)
    return await evaluate_frame(
        data,
        metrics,
        judge=judge,
        model=model,
        mapping=mapping,
        on_rows=on_rows,
        chunk_rows=chunk_rows,
        image_dirs=image_dirs,
    )


def evaluate(
    data: Any,
    metrics: Metric | Sequence[Metric],
    *,
    judge: Judge | str | None = None,
    model: Judge | str | ModelFn | None = None,
    mapping: Mapping[str, str] | None = None,
    partition: str | None = None,
    display: bool = False,
    output: str | os.PathLike[str] | None = None,
    chunk_rows: int | None = None,
    image_dirs: Sequence[str | os.PathLike[str]] | None = None,
    output_fields: OutputFields | None = None,
) -> EvalResult:
    """Judge every row of ``data`` with every metric and return an :class:`EvalResult`.

    ``data`` is a DataFrame, records, or a file (CSV/JSONL/Parquet); traces are judged per
    ``partition`` ("span" or "trace"). ``model`` (a Judge, a spec string or a Python callable
    taking the prompt) first writes the responses. ``judge`` defaults to ``rl.set_judge`` /
    ``RUBRICLAB_JUDGE``. ``display=True`` shows a live table in a notebook that fills as rows
    finish (with progress and error counts); Ctrl-C keeps the finished rows in it.

    With ``output=`` (a ``.parquet``, ``.jsonl`` or ``.jsonl.gz`` path) the run is streamed:
    ``data`` (also a file path or an iterator of DataFrames) is judged ``chunk_rows`` rows at a
    time (2,000 by default), each finished chunk is saved, memory stays bounded, the same call
    resumes an interrupted run, and the result reads its table from the file when first asked.
    ``output_fields="compact"`` leaves the judge's raw answers out of that file (scores,
    verdicts, criteria with their evidence, rationales and errors stay).

    Local image files named in the data are read only from the data file's folder (the
    working folder for a DataFrame) and the folders in ``image_dirs``: data is often someone
    else's, and a row must not send the user's own files to a judge.

    Rows whose judge calls failed keep their error (``{metric}/error``); when there are any,
    a :class:`~rubriclab.result.RowErrorWarning` gives their counts and commonest errors, and
    the result's repr names the first one.
    """
    if display:
        if output is not None:
            raise ValueError(
                "display=True and output= cannot be combined yet: a streamed run shows its "
                "progress per chunk; open the result when it is done"
            )
        if partition is not None or _is_traces(data):
            raise ValueError(
                "display=True shows rows of a table as they finish; trace evaluation "
                "(partition=...) has no live view yet: run it without display and show the result"
            )
        result: EvalResult = presentation().live_evaluate(
            lambda on_rows: run_sync(
                _aevaluate(
                    data,
                    metrics,
                    judge=judge,
                    model=model,
                    mapping=mapping,
                    on_rows=on_rows,
                    image_dirs=image_dirs,
                )
            ),
            rows=_row_count(data),
        )
        result.warn_row_errors()
        return result
    result = run_sync(
        _aevaluate(
            data,
            metrics,
            judge=judge,
            model=model,
            mapping=mapping,
            partition=partition,
            output=output,
            chunk_rows=chunk_rows,
            image_dirs=image_dirs,
            output_fields=output_fields,
        )
    )
    result.warn_row_errors()
    return result


def _is_traces(data: Any) -> bool:
    """Whether ``data`` is traces; without importing ``rubriclab.traces`` (a third of a
    kernel's first evaluate) when it was never imported: then no trace exists."""
    traces = sys.modules.get("rubriclab.traces")
    return traces is not None and bool(traces.is_traces(data))


async def _traces(
    data: Any, metrics: Sequence[Metric], judge: Judge | str | None, partition: str | None
) -> EvalResult:
    """Traces through their data adapter, then the same metric loop as any table."""
    # imported here, not at the top: most runs judge tables, and traces cost an import
    from ..traces import check_partition, default_partition, trace_cases

    check_metrics(metrics)
    chosen = partition or default_partition(metrics)
    check_partition(metrics, chosen)
    rows = trace_cases(data, chosen)
    with run_scope():
        run_judge = RunJudge(judge)
        infos, stats, asked = await run_metrics(metrics, rows.cases, rows.table, run_judge)
    described, is_mock = describe(run_judge, asked)
    return EvalResult(
        rows.table, infos, judge=described, is_mock=is_mock, stats=stats, meta=rows.meta
    )


async def _streamed(
    data: Any,
    metrics: Sequence[Metric],
    judge: Judge | str | None,
    model: Judge | str | ModelFn | None,
    mapping: Mapping[str, str] | None,
    partition: str | None,
    output: str | os.PathLike[str] | None,
    chunk_rows: int | None,
    image_dirs: Sequence[str | os.PathLike[str]] | None = None,
    *,
    output_fields: OutputFields | None = None,
) -> EvalResult:
    """Chunked runs live in ``stream``; without ``output`` the chunks' results join in memory."""
    if partition is not None or _is_traces(data):
        raise ValueError("traces cannot be streamed: drop output= / chunk_rows= for traces")
    rows = chunk_rows or DEFAULT_CHUNK_ROWS
    where = (
        (os.path.dirname(os.fspath(data)) or ".") if isinstance(data, str | os.PathLike) else None
    )
    if output is not None:
        return await astream_evaluate(
            data,
            metrics,
            output=output,
            chunk_rows=rows,
            judge=judge,
            model=model,
            mapping=mapping,
            image_dirs=image_dirs,
            data_dir=where,
            output_fields=output_fields,
        )
    parts = [
        await evaluate_frame(
            chunk,
            metrics,
            judge=judge,
            model=model,
            mapping=mapping,
            image_dirs=image_dirs,
            data_dir=where,
        )
        for chunk in iter_chunks(data, rows)
    ]
    if not parts:
        raise ValueError("the data has no rows to evaluate")
    first = parts[0]
    stats = RunStats()
    for part in parts:
        stats.merge(part.stats)
    table = pd.concat([p.table for p in parts])
    return EvalResult(
        table, first.metrics, judge=first.judge, is_mock=any(p.is_mock for p in parts), stats=stats
    )


def _row_count(data: Any) -> int | None:
    """Rows in ``data`` when known without reading it (a file's are learnt as they finish)."""
    return len(data) if isinstance(data, pd.DataFrame | list | tuple) else None
