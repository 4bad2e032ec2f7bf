"""``evaluate`` / ``aevaluate``: data -> cases -> rubrics -> critiques -> scores -> EvalResult.

This module only wires the steps; each step is its own module. It works from a script and inside
Jupyter's running event loop (``run_sync``), and never loses finished work: a failing row carries
its error and raw output, and every judge call goes through the engine's cache.
"""

from __future__ import annotations

import inspect
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import pandas as pd

from .columns import (
    ATTEMPTS,
    BASELINE_SCORE,
    CANDIDATE_SCORE,
    LATENCY,
    RUBRIC,
    RUBRIC_RAW_OUTPUT,
    SCORE,
    TOKENS,
    col,
)
from .critique import Outcome, critique_pairwise, critique_pointwise
from .data import Case, to_cases, to_frame
from .generate import generate_for_cases, resolve_judge
from .metrics import RubricMetric
from .result import EvalResult, MetricInfo, RunStats, presentation
from .rubric import Rubric
from .runner import run_scope
from .stream import streams

if TYPE_CHECKING:
    from .judges import Judge

__all__ = ["aevaluate", "evaluate"]

ModelFn = Callable[[str], Any]


async def aevaluate(
    data: Any,
    metrics: Sequence[Any],
    *,
    judge: Judge | str | None = None,
    model: Judge | str | ModelFn | None = None,
    mapping: Mapping[str, str] | None = None,
    partition: str | None = None,
    on_rows: Callable[[pd.DataFrame], None] | None = None,
    chunk_rows: int | None = None,
    output: str | os.PathLike[str] | None = None,
) -> EvalResult:
    """Async form of :func:`evaluate`.

    ``on_rows`` (the live view's hook) is called with each block of finished rows, every
    metric's columns filled, in row order; rows are then judged ``chunk_rows`` at a time (by
    default a few times the judge's concurrency) and the result is the same as without it.
    With ``output=`` (or an iterator of DataFrames) the run is streamed instead (``stream``)
    and ``chunk_rows`` is its chunk size.
    """
    if output is not None or streams(data):
        return await _streamed(data, metrics, judge, model, mapping, partition, output, chunk_rows)
    with run_scope():  # judge.last_run then covers the whole evaluate, re-asks included
        return await _aevaluate(
            data, metrics, judge, model, mapping, partition, on_rows, chunk_rows
        )


async def _aevaluate(
    data: Any,
    metrics: Sequence[Any],
    judge: Judge | str | None,
    model: Judge | str | ModelFn | None,
    mapping: Mapping[str, str] | None,
    partition: str | None,
    on_rows: Callable[[pd.DataFrame], None] | None,
    chunk_rows: int | None,
) -> EvalResult:
    if not metrics:
        raise ValueError(
            "evaluate needs at least one metric, e.g. metrics=[rl.metrics.TEXT_QUALITY]"
        )
    names = [getattr(m, "name", None) for m in metrics]
    if len(set(names)) != len(names):
        raise ValueError(f"metric names must be unique, got {names}")
    if partition is not None or _looks_like_traces(data):
        from .trace_eval import aevaluate_traces

        return await aevaluate_traces(
            data, metrics, judge=judge, partition=partition or _default_partition(metrics)
        )
    # computation metrics alone need no judge (and must not be labelled with a mock one)
    judged = not all(hasattr(m, "run_cases") for m in metrics)
    judge_obj = resolve_judge(judge) if judged else None
    frame = to_frame(data).copy()
    if model is not None:
        frame = await generate_responses(frame, model, mapping)
    # a pairwise row without a baseline becomes that row's error, not a failed run
    cases = to_cases(frame, mapping=mapping, need_response=model is None)
    table = frame.copy()
    if on_rows is not None and cases:
        table, infos, stats, any_mock = await _run_in_blocks(
            metrics, cases, judge_obj, table, on_rows, chunk_rows
        )
    else:
        infos, stats, any_mock = await run_metrics(
            metrics, cases, judge_obj, table, lambda metric: [c.variables() for c in cases]
        )
    described = judge_obj.describe() if judge_obj is not None else "no judge (computation metrics)"
    return EvalResult(table, infos, judge=described, is_mock=any_mock, stats=stats)


def _variables_of(cases: Sequence[Case]) -> Callable[[Any], list[dict[str, Any]]]:
    """A template metric's per-row variables for these cases (built only when asked)."""
    return lambda metric: [c.variables() for c in cases]


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


async def _run_in_blocks(
    metrics: Sequence[Any],
    cases: Sequence[Case],
    judge: Judge | None,
    table: pd.DataFrame,
    on_rows: Callable[[pd.DataFrame], None],
    chunk_rows: int | None,
) -> tuple[pd.DataFrame, list[MetricInfo], RunStats, bool]:
    """Judge ``cases`` a block at a time and hand each finished block to ``on_rows``."""
    size = (
        chunk_rows
        if chunk_rows is not None
        else max(4 * int(getattr(judge, "max_concurrency", 8)), 16)
    )
    if size < 1:
        raise ValueError(f"chunk_rows must be at least 1, got {size}")
    quiet: Any = _NoBars(judge) if judge is not None else None
    parts: list[pd.DataFrame] = []
    infos: list[MetricInfo] = []
    stats = RunStats()
    any_mock = False
    for start in range(0, len(cases), size):
        block = list(cases[start : start + size])
        part = table.iloc[start : start + size].copy()
        infos, part_stats, mock = await run_metrics(
            metrics, block, quiet, part, _variables_of(block)
        )
        any_mock = any_mock or mock
        for field in ("calls", "cached", "tokens"):
            into, add = getattr(stats, field), getattr(part_stats, field)
            for name, value in add.items():
                into[name] = into.get(name, 0) + value
        for name, cost in part_stats.cost.items():
            prev = stats.cost.get(name, 0.0)
            stats.cost[name] = None if prev is None or cost is None else prev + cost
        parts.append(part)
        on_rows(part)
    return pd.concat(parts), infos, stats, any_mock


async def run_metrics(
    metrics: Sequence[Any],
    cases: Sequence[Case],
    judge: Judge | None,
    table: pd.DataFrame,
    template_variables: Callable[[Any], list[dict[str, Any]]],
) -> tuple[list[MetricInfo], RunStats, bool]:
    """Judge every case with every metric, adding each metric's columns to ``table``.

    Shared by rows and traces; ``template_variables(metric)`` gives a template metric's
    per-row variables (row fields, or the bound span/trace).
    """
    from .trace_eval import run_template_metric

    infos: list[MetricInfo] = []
    stats = RunStats()
    any_mock = judge is not None and judge.is_mock
    for metric in metrics:
        extra: dict[str, list[Any]] = {}
        if hasattr(metric, "run_cases"):  # computation metrics: no judge call
            outcomes, info = await metric.run_cases(cases, judge)
        elif judge is None:
            raise TypeError(f"not a metric: {metric!r}")
        elif getattr(metric, "kind", None) == "template":
            outcomes, info = await run_template_metric(metric, template_variables(metric), judge)
        else:
            if not isinstance(metric, RubricMetric):
                raise TypeError(f"not a metric: {metric!r}")
            m_judge = resolve_judge(metric.judge) if metric.judge is not None else judge
            panel = [resolve_judge(j) for j in metric.judges or ()]
            any_mock = any_mock or m_judge.is_mock or any(j.is_mock for j in panel)
            rubrics, missing, gen_cols = await _rubrics_for(metric, cases, m_judge, table, stats)
            for column, values in gen_cols.items():
                table[column] = pd.Series(values, index=table.index, dtype=object)
            if metric.kind == "pairwise":
                baselines = _baselines(metric, cases, table)
                outcomes = await critique_pairwise(
                    cases, rubrics, metric, m_judge, baselines=baselines, missing=missing
                )
            elif panel:
                from .metrics.panel import critique_panel

                outcomes, extra = await critique_panel(
                    cases, rubrics, metric, panel, missing=missing
                )
            else:
                outcomes = await critique_pointwise(
                    cases, rubrics, metric, m_judge, missing=missing
                )
            info = MetricInfo(metric.name, metric.kind, metric.rubric, metric.description)
        _add_columns(table, info, outcomes)
        for field, values in extra.items():  # e.g. a panel's per-judge verdicts
            table[col(info.name, field)] = pd.Series(values, index=table.index, dtype=object)
        for o in outcomes:
            stats.add(info.name, o.usage)
        infos.append(info)
    return infos, stats, any_mock


def evaluate(
    data: Any,
    metrics: Sequence[Any],
    *,
    judge: Judge | str | None = None,
    model: Judge | str | ModelFn | None = None,
    mapping: Mapping[str, str] | None = None,
    partition: str | None = None,
    display: bool = False,
    output: str | os.PathLike[str] | None = None,
    chunk_rows: int | None = None,
) -> EvalResult:
    """Judge every row of ``data`` with every metric and return an :class:`EvalResult`.

    ``data`` is a DataFrame, records, or a file (CSV/JSONL/Parquet); traces are judged per
    ``partition`` ("span" or "trace"). ``model`` (a Judge, a spec string or a Python callable
    taking the prompt) first writes the responses. ``judge`` defaults to ``rl.set_judge`` /
    ``RUBRICLAB_JUDGE``. ``display=True`` shows a live table in a notebook that fills as rows
    finish (with progress and error counts); Ctrl-C keeps the finished rows in it.

    With ``output=`` (a ``.parquet`` or ``.jsonl`` path) the run is streamed: ``data`` (also a
    file path or an iterator of DataFrames) is judged ``chunk_rows`` rows at a time (10,000 by
    default), each finished chunk is saved, memory stays bounded, the same call resumes an
    interrupted run, and the result reads its table from the file when first asked.
    """
    from .runner import run_sync

    if display:
        if output is not None:
            raise ValueError(
                "display=True and output= cannot be combined yet: a streamed run shows its "
                "progress per chunk; open the result when it is done"
            )
        if partition is not None or _looks_like_traces(data):
            raise ValueError(
                "display=True shows rows of a table as they finish; trace evaluation "
                "(partition=...) has no live view yet: run it without display and show the result"
            )
        result: EvalResult = presentation().live_evaluate(
            lambda on_rows: run_sync(
                aevaluate(data, metrics, judge=judge, model=model, mapping=mapping, on_rows=on_rows)
            ),
            rows=_row_count(data),
        )
        return result
    return run_sync(
        aevaluate(
            data,
            metrics,
            judge=judge,
            model=model,
            mapping=mapping,
            partition=partition,
            output=output,
            chunk_rows=chunk_rows,
        )
    )


async def _streamed(
    data: Any,
    metrics: Sequence[Any],
    judge: Judge | str | None,
    model: Judge | str | ModelFn | None,
    mapping: Mapping[str, str] | None,
    partition: str | None,
    output: str | os.PathLike[str] | None,
    chunk_rows: int | None,
) -> EvalResult:
    """Chunked runs live in ``stream``; without ``output`` the chunks' results join in memory."""
    from .stream import DEFAULT_CHUNK_ROWS, astream_evaluate, iter_chunks

    if partition is not None or _looks_like_traces(data):
        raise ValueError("traces cannot be streamed: drop output= / chunk_rows= for traces")
    rows = chunk_rows or DEFAULT_CHUNK_ROWS
    if output is not None:
        return await astream_evaluate(
            data, metrics, output=output, chunk_rows=rows, judge=judge, model=model, mapping=mapping
        )
    parts = [
        await aevaluate(chunk, metrics, judge=judge, model=model, mapping=mapping)
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


# -- steps -----------------------------------------------------------------------------------------


def _default_partition(metrics: Sequence[Any]) -> str:
    """Judge spans when every template metric reads ``input_span``; otherwise whole traces."""
    wanted = {v for m in metrics for v in getattr(m, "expected_variables", [])}
    return "span" if wanted == {"input_span"} else "trace"


def _looks_like_traces(data: Any) -> bool:
    if __package__ + ".traces" not in sys.modules:
        return False  # no Trace exists before its module is imported (which takes ~50 ms)
    try:
        from .traces import Trace
    except ImportError:  # pragma: no cover - traces module always ships
        return False
    if isinstance(data, Trace):
        return True
    return isinstance(data, list | tuple) and bool(data) and all(isinstance(t, Trace) for t in data)


async def generate_responses(
    frame: pd.DataFrame, model: Judge | str | ModelFn, mapping: Mapping[str, str] | None
) -> pd.DataFrame:
    """Fill the response column from ``model``; a failed row keeps its error, others go on."""
    from .judges import Judge as _Judge

    prompt_col = (mapping or {}).get("prompt", "prompt")
    response_col = (mapping or {}).get("response", "response")
    if prompt_col not in frame.columns:
        raise ValueError(f"the data has no {prompt_col!r} column to generate responses from")
    prompts = [str(p) for p in frame[prompt_col].tolist()]
    responses: list[str | None] = [None] * len(prompts)
    errors: list[str | None] = [None] * len(prompts)
    if isinstance(model, str | _Judge):
        gen = model if isinstance(model, _Judge) else _Judge(model)
        replies = await gen.amap(
            [[{"role": "user", "content": p}] for p in prompts], desc="responses"
        )
        for i, r in enumerate(replies):
            if r.error is not None:
                errors[i] = f"model call failed: {r.error}"
            else:
                responses[i] = r.text
    elif callable(model):
        for i, p in enumerate(prompts):
            try:
                value = model(p)
                if inspect.isawaitable(value):
                    value = await value
                responses[i] = None if value is None else str(value)
            except Exception as exc:  # a user's model function failing is that row's error
                errors[i] = f"model function raised {type(exc).__name__}: {exc}"
    else:
        raise TypeError("model must be a Judge, a judge spec string, or a callable(prompt) -> str")
    frame = frame.copy()
    frame[response_col] = responses
    if any(errors):
        frame["response_error"] = errors
    return frame


async def _rubrics_for(
    metric: RubricMetric,
    cases: Sequence[Case],
    judge: Judge,
    table: pd.DataFrame,
    stats: RunStats,
) -> tuple[list[Rubric | None], list[str | None], dict[str, list[Any]]]:
    """Each case's rubric: fixed, from a column, from the case's rubric column, or generated."""
    n = len(cases)
    missing: list[str | None] = [None] * n
    if metric.rubric is not None:
        return [metric.rubric] * n, missing, {}
    if metric.rubric_column is not None:
        if metric.rubric_column not in table.columns:
            raise ValueError(
                f"metric {metric.name!r}: no rubric column {metric.rubric_column!r} in the data"
            )
        from .data import _rubric

        values = table[metric.rubric_column].tolist()
        return (
            [_rubric(v, f"row {i}", metric.rubric_column) for i, v in enumerate(values)],
            missing,
            {},
        )
    rubrics: list[Rubric | None] = [c.rubric for c in cases]
    if all(r is not None for r in rubrics) or metric.generator is None:
        if metric.generator is None and any(r is None for r in rubrics):
            missing = [
                None if r else "no rubric for this row and the metric has no generator"
                for r in rubrics
            ]
        return rubrics, missing, {}
    generated = await generate_for_cases(
        cases, metric.generator, judge, reask=metric.reask, max_prompt_chars=metric.max_prompt_chars
    )
    cols: dict[str, list[Any]] = {col(metric.name, RUBRIC): [g.rubric for g in generated]}
    for key in sorted({k for g in generated for k in g.extras}):
        cols[key] = [g.extras.get(key) for g in generated]
        for case, g in zip(cases, generated, strict=True):
            if key in g.extras and key not in case.extra:
                case.extra[key] = g.extras[key]
    cols[col(metric.name, RUBRIC_RAW_OUTPUT)] = [g.raw_output for g in generated]
    for g in generated:
        stats.add(metric.name, g.usage)
    missing = [None if g.rubric else f"rubric generation failed: {g.error}" for g in generated]
    return [g.rubric for g in generated], missing, cols


def _baselines(
    metric: RubricMetric, cases: Sequence[Case], table: pd.DataFrame
) -> list[str | None] | None:
    column = getattr(metric, "baseline_column", "baseline_model_response")
    if column == "baseline_model_response":
        return None
    if column not in table.columns:
        raise ValueError(f"metric {metric.name!r}: no baseline column {column!r} in the data")
    return [None if pd.isna(v) else str(v) for v in table[column].tolist()]


def _add_columns(table: pd.DataFrame, info: MetricInfo, outcomes: Sequence[Outcome]) -> None:
    m = info.name

    def put(field: str, values: list[Any]) -> None:
        # object dtype keeps lists and dicts per cell (criteria, raw outputs) as they are
        table[col(m, field)] = pd.Series(values, index=table.index, dtype=object)

    table[col(m, SCORE)] = pd.Series([o.score for o in outcomes], index=table.index, dtype=float)
    put("verdict", [o.verdict for o in outcomes])
    put("passed", [o.passed for o in outcomes])
    put("criteria", [o.criteria for o in outcomes])
    put("rationale", [o.rationale for o in outcomes])
    put("raw_output", [o.raw_output for o in outcomes])
    put("error", [o.error for o in outcomes])
    if info.kind == "pairwise":
        put("pairwise_choice", [o.pairwise_choice for o in outcomes])
        put("swap_consistent", [o.swap_consistent for o in outcomes])
        put("candidate_criteria", [o.candidate_criteria for o in outcomes])
        put("baseline_criteria", [o.baseline_criteria for o in outcomes])
        table[col(m, CANDIDATE_SCORE)] = pd.Series(
            [o.candidate_score for o in outcomes], index=table.index, dtype=float
        )
        table[col(m, BASELINE_SCORE)] = pd.Series(
            [o.baseline_score for o in outcomes], index=table.index, dtype=float
        )
    table[col(m, TOKENS)] = [o.usage.tokens for o in outcomes]
    table[col(m, LATENCY)] = [round(o.usage.latency, 4) for o in outcomes]
    table[col(m, ATTEMPTS)] = [o.usage.attempts for o in outcomes]
