"""What ``evaluate`` returns, in Vertex's shapes: per case, per candidate, per metric, plus
summaries and win rates. ``EvaluationResult.show()`` renders rubriclab's own views of the
``rubriclab.EvalResult`` behind each candidate (``results``)."""

from __future__ import annotations

import datetime
from typing import TYPE_CHECKING, Any

import pandas as pd
from pydantic import ConfigDict, PrivateAttr

from .cases import EvaluationDataset, Model, RubricVerdict

if TYPE_CHECKING:
    from ....result import EvalResult

__all__ = [
    "AggregatedMetricResult",
    "EvalCaseMetricResult",
    "EvalCaseResult",
    "EvaluationResult",
    "EvaluationRunMetadata",
    "ResponseCandidateResult",
    "WinRateStats",
]


class EvalCaseMetricResult(Model):
    """One metric on one response: score, explanation, rubric verdicts, or the row's error."""

    metric_name: str | None = None
    score: float | None = None
    explanation: str | None = None
    rubric_verdicts: list[RubricVerdict] | None = None
    raw_output: list[str] | None = None
    error_message: str | None = None


class ResponseCandidateResult(Model):
    """Every metric's result for one candidate's response (``response_index``: the candidate)."""

    response_index: int | None = None
    metric_results: dict[str, EvalCaseMetricResult] | None = None


class EvalCaseResult(Model):
    """One case: a result per candidate."""

    eval_case_index: int | None = None
    response_candidate_results: list[ResponseCandidateResult] | None = None


class AggregatedMetricResult(Model):
    """One metric over all cases (and candidates): counts, mean, standard deviation, pass rate.

    Errors are counted, never scored as 0; ``pass_rate`` is the share of valid cases rubriclab
    marks passed (None for metrics without a pass mark, such as computation metrics). Fields
    an ``aggregate_summary_fn`` adds are kept (as in Vertex).
    """

    model_config = ConfigDict(extra="allow", arbitrary_types_allowed=True)

    metric_name: str | None = None
    num_cases_total: int | None = None
    num_cases_valid: int | None = None
    num_cases_error: int | None = None
    mean_score: float | None = None
    stdev_score: float | None = None
    pass_rate: float | None = None


class WinRateStats(Model):
    """Per metric, over cases with a score: the share each candidate won (``win_rates``, in
    candidate order) and the share of ties (several candidates share the top score)."""

    win_rates: list[float] | None = None
    tie_rate: float | None = None


class EvaluationRunMetadata(Model):
    """Which candidates were compared, and when."""

    candidate_names: list[str] | None = None
    dataset_name: str | None = None
    dataset_id: str | None = None
    creation_timestamp: datetime.datetime | None = None


class EvaluationResult(Model):
    """The result of ``client.evals.evaluate``.

    ``results`` holds one :class:`rubriclab.EvalResult` per candidate (our full table: criteria,
    raw judge outputs, errors, tokens), for views, saving, ``rl.compare`` and calibration.
    """

    eval_case_results: list[EvalCaseResult] | None = None
    summary_metrics: list[AggregatedMetricResult] | None = None
    win_rates: dict[str, WinRateStats] | None = None
    evaluation_dataset: list[EvaluationDataset] | None = None
    metadata: EvaluationRunMetadata | None = None
    agent_info: Any | None = None

    _results: list[EvalResult] = PrivateAttr(default_factory=list)

    @property
    def results(self) -> list[EvalResult]:
        return list(self._results)

    def summary_frame(self) -> pd.DataFrame:
        """``summary_metrics`` as a table."""
        return pd.DataFrame([m.model_dump() for m in self.summary_metrics or []])

    def win_rate_frame(self) -> pd.DataFrame:
        """``win_rates`` as a table: one row per metric, a column per candidate, and ties."""
        names = (self.metadata.candidate_names if self.metadata else None) or []
        rows = []
        for metric, stats in (self.win_rates or {}).items():
            row: dict[str, Any] = {"metric": metric}
            for i, rate in enumerate(stats.win_rates or []):
                row[f"{names[i] if i < len(names) else i} wins"] = rate
            row["ties"] = stats.tie_rate
            rows.append(row)
        return pd.DataFrame(rows)

    def show(self, candidate_names: list[str] | None = None) -> None:
        """rubriclab's result view per candidate, and the win rates when there are several."""
        from ....widgets.display import display_eval_result
        from .cases import show_table

        names = candidate_names or (self.metadata.candidate_names if self.metadata else None)
        names = names or [f"candidate {i + 1}" for i in range(len(self._results))]
        if len(self._results) > 1 and self.win_rates:
            show_table(self.win_rate_frame())
        for name, result in zip(names, self._results, strict=False):
            display_eval_result(result, title=str(name))
