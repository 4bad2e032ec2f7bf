"""Results in Vertex's shapes: one metric on one row, summaries, win rates, candidate names.

An error is counted, never scored: a row without a score is left out of means and win rates.
"""

from __future__ import annotations

import math
import statistics
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from .cases import EvaluationDataset, Rubric, RubricVerdict
from .outcomes import (
    AggregatedMetricResult,
    EvalCaseMetricResult,
    EvalCaseResult,
    WinRateStats,
)
from .resolve import Planned

__all__ = [
    "aggregated",
    "candidate_names",
    "custom_result",
    "lab_result",
    "summarize",
    "value_of",
    "verdicts",
    "win_rates",
]


def candidate_names(datasets: Sequence[EvaluationDataset]) -> list[str]:
    """Each dataset's candidate name; repeated names get `` #1``, `` #2`` ... as in Vertex."""
    raw = [d.candidate_name or f"candidate_{i + 1}" for i, d in enumerate(datasets)]
    counts = {n: raw.count(n) for n in raw}
    seen: dict[str, int] = {}
    out = []
    for n in raw:
        if counts[n] > 1:
            seen[n] = seen.get(n, 0) + 1
            out.append(f"{n} #{seen[n]}")
        else:
            out.append(n)
    return out


def value_of(row: Mapping[str, Any], key: str) -> Any:
    value = row.get(key)
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


def verdicts(criteria: Any) -> list[RubricVerdict] | None:
    if not isinstance(criteria, list) or not criteria:
        return None
    out = []
    for c in criteria:
        if not isinstance(c, Mapping):
            continue
        label = str(c.get("label") or "").upper()
        out.append(
            RubricVerdict(
                evaluated_rubric=Rubric.of(str(c.get("question") or ""), rubric_id=c.get("name")),
                verdict=None if label not in ("YES", "NO") else label == "YES",
                reasoning=c.get("reasoning") or c.get("evidence") or None,
            )
        )
    return out


def lab_result(name: str, row: Mapping[str, Any], before: str | None) -> EvalCaseMetricResult:
    score = value_of(row, f"{name}/score")
    error = value_of(row, f"{name}/error")
    if before and error:
        error = f"{before}; {error}"
    raws = row.get(f"{name}/raw_outputs")  # an LLMMetric's answers, one per sample
    raw = value_of(row, f"{name}/raw_output")
    return EvalCaseMetricResult(
        metric_name=name,
        score=None if score is None else float(score),
        explanation=value_of(row, f"{name}/rationale"),
        rubric_verdicts=verdicts(value_of(row, f"{name}/criteria")),
        raw_output=[str(r) for r in raws]
        if isinstance(raws, list)
        else [str(raw)]
        if raw
        else None,
        error_message=error if error else (before if score is None else None),
    )


def custom_result(
    name: str, fn: Callable[..., Any], row: Mapping[str, Any]
) -> EvalCaseMetricResult:
    instance = {k: v for k, v in row.items() if "/" not in str(k)}
    try:
        value = fn(instance)
    except Exception as exc:  # a user's function failing is that row's error
        return EvalCaseMetricResult(
            metric_name=name, error_message=f"custom_function raised {type(exc).__name__}: {exc}"
        )
    if isinstance(value, EvalCaseMetricResult):
        return value.model_copy(update={"metric_name": name})
    if isinstance(value, Mapping):
        score, explanation = value.get("score"), value.get("explanation")
    else:
        score, explanation = value, None
    if isinstance(score, bool) or not isinstance(score, int | float) or not math.isfinite(score):
        return EvalCaseMetricResult(
            metric_name=name,
            error_message=f"custom_function returned {score!r:.60}, not a number (or {{'score': ...}})",
        )
    return EvalCaseMetricResult(
        metric_name=name,
        score=float(score),
        explanation=None if explanation is None else str(explanation),
    )


def summarize(
    name: str, results: list[EvalCaseMetricResult], passed: list[Any]
) -> AggregatedMetricResult:
    scores = [r.score for r in results if r.score is not None and r.error_message is None]
    flags = [
        p
        for p, r in zip(passed, results, strict=True)
        if isinstance(p, bool) and r.score is not None
    ]
    return AggregatedMetricResult(
        metric_name=name,
        num_cases_total=len(results),
        num_cases_valid=len(scores),
        num_cases_error=len(results) - len(scores),
        mean_score=statistics.fmean(scores) if scores else None,
        stdev_score=statistics.stdev(scores) if len(scores) > 1 else None,
        pass_rate=sum(flags) / len(flags) if flags else None,
    )


def aggregated(
    plan: Planned, default: AggregatedMetricResult, results: list[EvalCaseMetricResult]
) -> AggregatedMetricResult:
    """``aggregate_summary_fn(results) -> dict`` overrides or adds summary fields; if it fails
    or returns no dict, the default summary stands (with a warning), as in Vertex."""
    if plan.aggregate is None:
        return default
    try:
        custom = plan.aggregate(results)
    except Exception as exc:  # the user's function: keep the default summary, say why
        warnings.warn(
            f"metric {plan.name!r}: aggregate_summary_fn raised {type(exc).__name__}: {exc}; "
            "the default summary is used",
            stacklevel=4,
        )
        return default
    if not isinstance(custom, Mapping):
        warnings.warn(
            f"metric {plan.name!r}: aggregate_summary_fn returned {type(custom).__name__}, not a "
            "dict; the default summary is used",
            stacklevel=4,
        )
        return default
    fields = {str(k): v for k, v in custom.items() if k != "metric_name"}
    return AggregatedMetricResult.model_validate({**default.model_dump(), **fields})


def win_rates(cases: Sequence[EvalCaseResult], candidates: int) -> dict[str, WinRateStats]:
    """Per metric, over cases where some candidate has a score: the top score wins; a shared
    top score is a tie. Cases with no score are left out (an error is never a loss)."""
    wins: dict[str, list[int]] = {}
    ties: dict[str, int] = {}
    valid: dict[str, int] = {}
    for case in cases:
        by_metric: dict[str, list[tuple[float, int]]] = {}
        for k, cand in enumerate(case.response_candidate_results or []):
            for name, res in (cand.metric_results or {}).items():
                if res.score is not None:
                    by_metric.setdefault(name, []).append((res.score, k))
        for name, scores in by_metric.items():
            valid[name] = valid.get(name, 0) + 1
            top = max(s for s, _ in scores)
            winners = [k for s, k in scores if s == top]
            if len(winners) == 1:
                wins.setdefault(name, [0] * candidates)[winners[0]] += 1
            else:
                ties[name] = ties.get(name, 0) + 1
    return {
        name: WinRateStats(
            win_rates=[w / n for w in wins.get(name, [0] * candidates)],
            tie_rate=ties.get(name, 0) / n,
        )
        for name, n in valid.items()
    }
