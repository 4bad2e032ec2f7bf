"""Judging agent traces: one result row per span or per trace, and custom template metrics.

``evaluate(traces, partition="span" | "trace")`` lands here. Each row keeps its trace id, span
id, name, kind, short input/output previews and the trace's tree, so the usual table, summary
and views work on agent runs. A :class:`TemplateMetric` renders the user's template with the
raw Span/Trace bound (sandboxed), and we append the answer format ourselves; rubric metrics judge
the span's (or run's) input as the prompt and its output (or final answer) as the response.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pandas as pd

from . import schemas
from .columns import preview
from .critique import Outcome, _Invalid, _Job, _run_jobs
from .data import Case
from .parse import extract_json
from .result import EvalResult, MetricInfo
from .template_metric import TemplateMetric
from .templates import TemplateError, compile_template
from .traces import trace_tree

if TYPE_CHECKING:
    from .judges import Judge
    from .traces import Span, Trace

__all__ = [
    "OUTPUT_FORMAT_INSTRUCTION",
    "PARTITIONS",
    "SCORE_SCHEMA",
    "aevaluate_traces",
    "run_template_metric",
]

PARTITIONS = ("span", "trace")
#: re-asks after an unreadable or invalid answer (the contract has no knob for it)
TEMPLATE_REASK = 1
PREVIEW_CHARS = 120

#: appended to every rendered template: the template defines the rubric, we define the answer
OUTPUT_FORMAT_INSTRUCTION = (
    "\n\n---\n"
    "Answer with one JSON object and nothing else, in exactly this shape:\n"
    '{"rationale": "<your reasoning, in a few sentences>", "score": <a number from 0.0 to 1.0>}\n'
    "Write the rationale first, then the score. The score must be a plain number between 0.0 "
    "and 1.0 inclusive (not text, not a percentage), where higher is better as the instructions "
    "above define it."
)

#: the judge's answer: reasoning first, so the score follows from it
SCORE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "rationale": {
            "type": "string",
            "description": "Why the score: what in the input supports or contradicts it.",
        },
        "score": {
            "type": "number",
            "minimum": 0,
            "maximum": 1,
            "description": "0.0 (worst) to 1.0 (best), as the instructions define it.",
        },
    },
    "required": ["rationale", "score"],
    "additionalProperties": False,
}

_SHAPE = '{"rationale": "...", "score": <number from 0.0 to 1.0>}'


# -- template metrics --------------------------------------------------------------------------


@dataclass(frozen=True)
class _Score:
    value: float
    rationale: str


def _read_score(text: str) -> _Score:
    """The judge's score and rationale; anything but a number in [0, 1] is refused."""
    data = extract_json(text, expect=dict)
    if not isinstance(data, Mapping):
        raise _Invalid(f"the answer is not a JSON object; answer {_SHAPE}")
    if "score" not in data:
        raise _Invalid(f"the answer has no 'score'; answer {_SHAPE}")
    raw = data["score"]
    if isinstance(raw, bool) or not isinstance(raw, int | float) or not math.isfinite(raw):
        raise _Invalid(f"score {raw!r} is not a number; answer {_SHAPE}")
    if not 0.0 <= float(raw) <= 1.0:
        raise _Invalid(f"score {raw!r} is outside 0.0-1.0; answer {_SHAPE}")
    rationale = data.get("rationale")
    if rationale is not None and not isinstance(rationale, str):
        raise _Invalid(f"rationale {rationale!r} is not text; answer {_SHAPE}")
    return _Score(float(raw), rationale or "")


def _format_name(metric_name: str) -> str:
    # OpenAI names a response format with [A-Za-z0-9_-]{1,64}
    return (re.sub(r"[^A-Za-z0-9_-]", "_", metric_name)[:58] or "metric") + "_score"


def _metric_judge(metric: TemplateMetric, judge: Judge) -> Judge:
    """The judge with the metric's call settings applied (the same judge when they match)."""
    changes: dict[str, Any] = {}
    if metric.model is not None and metric.model != judge.model:
        changes["model"] = metric.model
    if judge.temperature != metric.judge_temperature:
        changes["temperature"] = metric.judge_temperature
    if judge.timeout != metric.timeout_seconds:
        changes["timeout"] = metric.timeout_seconds
    if judge.max_concurrency != metric.concurrency_limit:
        changes["max_concurrency"] = metric.concurrency_limit
    return judge.with_options(**changes) if changes else judge


def _template_outcome(job: _Job) -> Outcome:
    out = Outcome()
    out.account(job.replies)
    out.raw_output = job.raw
    if job.error is not None or not isinstance(job.parsed, _Score):
        out.error = job.error or "the judge gave no usable answer"
        return out
    out.score, out.rationale = job.parsed.value, job.parsed.rationale
    return out


def _render_error(exc: TemplateError, template_vars: frozenset[str], row: Mapping[str, Any]) -> str:
    missing = sorted(template_vars - set(row))
    if not missing:
        return str(exc)
    given = ", ".join(sorted(map(str, row))) or "(none)"
    return f"{exc} (the template reads {', '.join(missing)}; this row binds: {given})"


async def run_template_metric(
    metric: Any, variables_list: list[dict[str, Any]], judge: Judge
) -> tuple[list[Outcome], MetricInfo]:
    """Render, call and read one :class:`TemplateMetric` over rows of template variables.

    A template that fails to compile or render (sandbox refusal, undefined name, prompt over
    ``max_prompt_chars``) fails only its rows, with no judge call; the other rows still score.
    """
    if not isinstance(metric, TemplateMetric):
        raise TypeError(f"expected a TemplateMetric, got {type(metric).__name__}")
    info = MetricInfo(metric.name, "template", None, metric.description)
    outcomes: list[Outcome | None] = [None] * len(variables_list)
    try:
        template = compile_template(metric.prompt_template, name=f"{metric.name} prompt_template")
    except TemplateError as exc:
        return [Outcome(error=str(exc)) for _ in variables_list], info
    response_format = schemas.response_format(_format_name(metric.name), SCORE_SCHEMA)
    jobs: list[tuple[int, _Job]] = []
    for i, variables in enumerate(variables_list):
        try:
            text = template.render(
                variables,
                max_prompt_chars=metric.max_prompt_chars,
                render_timeout=metric.render_timeout,
            )
        except TemplateError as exc:
            outcomes[i] = Outcome(error=_render_error(exc, template.variables, variables))
            continue
        if not text.strip():
            outcomes[i] = Outcome(
                error="the template rendered an empty prompt for this row; nothing to judge"
            )
            continue
        messages = [{"role": "user", "content": text + OUTPUT_FORMAT_INSTRUCTION}]
        jobs.append((i, _Job(messages, response_format, 0, _read_score)))
    if jobs:
        m_judge = _metric_judge(metric, judge)
        try:
            await _run_jobs(
                [j for _, j in jobs], m_judge, TEMPLATE_REASK, desc=f"{metric.name}: judging"
            )
        finally:
            if m_judge is not judge:
                await m_judge.aclose()
    for i, job in jobs:
        outcomes[i] = _template_outcome(job)
    return [o if o is not None else Outcome(error="not judged") for o in outcomes], info


# -- rows from traces ----------------------------------------------------------------------------


@dataclass(frozen=True)
class _Row:
    id: str
    trace: Trace
    span: Span | None  # None: the whole trace is the row

    @property
    def target(self) -> Span | Trace:
        return self.trace if self.span is None else self.span


def _json_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, default=str)


def _call_text(span: Span) -> str:
    return ", ".join(f"{c.name}({_json_text(c.arguments)})" for c in span.tool_calls)


def span_io(span: Span) -> tuple[str, str]:
    """What a span was given and what it produced, as text: messages first, else the tool
    call's arguments and result (or error), else the calls an LLM asked for."""
    given = span.input_text
    made = span.output_text
    if span.kind == "TOOL" and span.tool_calls:
        call = span.tool_calls[0]
        given = given or _call_text(span)
        if not made:
            made = f"error: {call.error}" if call.error else _json_text(call.result)
    elif not made and span.tool_calls:
        made = "calls " + _call_text(span)
    if not made and span.is_error and span.status.message:
        made = f"error: {span.status.message}"
    return given, made


def trace_io(trace: Trace) -> tuple[str, str]:
    """A run's question (the first input text, roots first) and its final answer."""
    given = next((s.input_text for s in trace.roots() if s.input_text), "")
    if not given:
        given = next((s.input_text for s in trace.walk() if s.input_text), "")
    return given, trace.final_answer or ""


def _load(data: Any) -> list[Trace]:
    from .traces import Trace, load_traces

    if isinstance(data, pd.DataFrame):
        raise TypeError(
            "partition= judges traces, and this is a DataFrame: pass Trace objects, a list of "
            "them, or a trace file/export (rubriclab.load_traces reads OTLP and OpenInference)"
        )
    traces = [data] if isinstance(data, Trace) else load_traces(data)
    seen: set[str] = set()
    for t in traces:
        if t.trace_id in seen:
            raise ValueError(
                f"trace {t.trace_id} is given twice; each trace must appear once so every "
                "result row has its own id"
            )
        seen.add(t.trace_id)
    return traces


def _rows(traces: Sequence[Trace], partition: str) -> list[_Row]:
    if partition == "trace":
        return [_Row(t.trace_id, t, None) for t in traces]
    return [_Row(f"{t.trace_id}/{s.span_id}", t, s) for t in traces for s in t.walk()]


def _table(rows: Sequence[_Row], partition: str) -> tuple[pd.DataFrame, list[Case]]:
    trees: dict[str, list[dict[str, Any]]] = {}
    records: list[dict[str, Any]] = []
    cases: list[Case] = []
    for row in rows:
        tree = trees.setdefault(row.trace.trace_id, trace_tree(row.trace))
        if row.span is None:
            head = row.trace.roots()[0]
            given, made = trace_io(row.trace)
            record: dict[str, Any] = {
                "trace_id": row.trace.trace_id,
                "span_id": None,
                "name": head.name,
                "kind": head.kind,
                "status": head.status.code,
                "duration_ms": round(row.trace.duration.total_seconds() * 1000, 3),
                "spans": len(row.trace.spans),
                "error_spans": len(row.trace.errors),
            }
        else:
            span = row.span
            given, made = span_io(span)
            record = {
                "trace_id": span.trace_id,
                "span_id": span.span_id,
                "parent_id": span.parent_id,
                "name": span.name,
                "kind": span.kind,
                "status": span.status.code,
                "duration_ms": round(span.duration_ms, 3),
                "depth": row.trace.depth(span),
            }
        # views show the first few columns: what the step was, what went in, what came out
        shown = {
            "name": record.pop("name"),
            "input_preview": preview(given, PREVIEW_CHARS),
            "output_preview": preview(made, PREVIEW_CHARS),
        }
        records.append({**shown, **record, "trace_tree": tree})
        cases.append(Case(id=row.id, index=row.id, prompt=given, response=made or None))
    table = pd.DataFrame.from_records(records, index=[r.id for r in rows])
    table.index.name = f"{partition}_row"
    return table, cases


# -- evaluate ------------------------------------------------------------------------------------


def _check_metrics(metrics: Sequence[Any], partition: str) -> None:
    from .metrics import RubricMetric

    for metric in metrics:
        if isinstance(metric, TemplateMetric):
            if metric.partition != partition:
                raise ValueError(
                    f"metric {metric.name!r} binds {metric.variable!r} (one {metric.partition} "
                    f"per row) but partition={partition!r} gives one {partition} per row: pass "
                    f"partition={metric.partition!r}, or set "
                    f"expected_variables=['input_{partition}'] and read the {partition} in the "
                    "template"
                )
        elif not isinstance(metric, RubricMetric):
            raise TypeError(
                f"not a metric: {metric!r}; traces are judged by TemplateMetric, RubricMetric or "
                "PairwiseRubricMetric"
            )


async def aevaluate_traces(
    data: Any, metrics: Sequence[Any], *, judge: Judge | str | None, partition: str
) -> EvalResult:
    """Judge agent traces per span or per trace with every metric; one result row each."""
    from .evaluate import run_metrics
    from .generate import resolve_judge

    if partition not in PARTITIONS:
        raise ValueError(f"partition must be 'span' or 'trace', got {partition!r}")
    if not metrics:
        raise ValueError(
            "evaluate needs at least one metric, e.g. metrics=[rl.metrics.TemplateMetric()]"
        )
    _check_metrics(metrics, partition)
    traces = _load(data)
    rows = _rows(traces, partition)
    table, cases = _table(rows, partition)
    judge_obj = resolve_judge(judge)
    infos, stats, any_mock = await run_metrics(
        metrics, cases, judge_obj, table, lambda m: [{m.variable: row.target} for row in rows]
    )
    meta = {"partition": partition, "traces": [t.trace_id for t in traces]}
    return EvalResult(
        table, infos, judge=judge_obj.describe(), is_mock=any_mock, stats=stats, meta=meta
    )
