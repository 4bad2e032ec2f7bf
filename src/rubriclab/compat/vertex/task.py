"""``EvalTask``: dataset + metrics -> (responses) -> rubrics -> critiques -> an ``EvalResult``.

``output_uri_prefix`` is a local folder here: each run writes ``summary_metrics.json``,
``metrics_table.jsonl`` (Vertex's columns) and ``result.jsonl`` (ours; ``rl.load_result`` reads
it) into its own subfolder. ``gs://`` and ``bq://`` prefixes cannot be written without Google
Cloud, so they give a warning and the results stay in memory.
"""

from __future__ import annotations

import copy
import datetime as _dt
import json
import warnings
from collections.abc import Callable, Collection, Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from ...columns import (
    ATTEMPTS,
    BASELINE_CRITERIA,
    BASELINE_SCORE,
    CANDIDATE_CRITERIA,
    CANDIDATE_SCORE,
    CRITERIA,
    ERROR,
    LATENCY,
    PAIRWISE_CHOICE,
    PASSED,
    RATIONALE,
    RAW_OUTPUT,
    SCORE,
    SWAP_CONSISTENT,
    TOKENS,
    VERDICT,
    col,
    field_of,
    metric_of,
    to_plain,
)
from ...data import to_frame
from ...evaluation import generate_responses
from ...files import atomic_write_text, atomic_writer
from ...judges import Judge
from ...judges.sync import run_sync
from ...metrics.computation import COMPUTATION, ComputationMetric
from ...metrics.trajectory import TOOL_CALL, TRAJECTORY, TrajectoryMetric
from ...result import EvalResult as _Result
from ...result import MetricInfo, RunStats
from ...templates import TemplateError, brace_placeholders, format_braces
from .calls import CallPolicy, judge_for, model_for, rubric_writer
from .config import AutoraterConfig, CustomOutputConfig
from .critique import RAW_OUTPUTS, VERTEX_FIELDS, critique
from .generation import add_rubrics
from .metrics import CustomMetric, PairwiseMetric, PointwiseMetric, RubricBasedMetric
from .notebook_utils import display_radar_plot
from .prompt_template import PromptTemplate
from .rows import GEN_ERROR, GEN_RAW, RUBRICS
from .runnable import run_runnable
from .utils import load_dataset

__all__ = ["EvalResult", "EvalTask", "MissingColumnError"]

AnyMetric = (
    RubricBasedMetric
    | PointwiseMetric
    | PairwiseMetric
    | ComputationMetric
    | CustomMetric
    | TrajectoryMetric
    | str
)
#: metrics that run here without a judge
_LOCAL = (ComputationMetric, CustomMetric, TrajectoryMetric)
#: every metric given by name: computation, trajectory and tool-call metrics (Vertex's names)
_BY_NAME: dict[str, ComputationMetric | TrajectoryMetric] = {
    **COMPUTATION,
    **TRAJECTORY,
    **TOOL_CALL,
}
ModelArg = Judge | str | Callable[[str], Any] | None

#: our fields, which Vertex's metrics table leaves out (they stay on ``EvalResult.result``)
_OUR_FIELDS = (
    VERDICT,
    PASSED,
    CRITERIA,
    RATIONALE,
    RAW_OUTPUT,
    SWAP_CONSISTENT,
    CANDIDATE_CRITERIA,
    BASELINE_CRITERIA,
    CANDIDATE_SCORE,
    BASELINE_SCORE,
    TOKENS,
    LATENCY,
    ATTEMPTS,
)


class EvalResult:
    """Vertex's result shape (``summary_metrics``, ``metrics_table``, ``metadata``) over ours.

    ``result`` is the :class:`rubriclab.EvalResult` (views, ``.summary``, save/load);
    ``output_path`` the folder written, if any.
    """

    def __init__(
        self,
        summary_metrics: dict[str, Any],
        metrics_table: pd.DataFrame,
        metadata: dict[str, Any],
        result: _Result,
        output_path: Path | None = None,
    ) -> None:
        self.summary_metrics = summary_metrics
        self.metrics_table = metrics_table
        self.metadata = metadata
        self.result = result
        self.output_path = output_path

    def __repr__(self) -> str:
        return f"<vertex-style EvalResult over {self.result!r}>"

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> Any:
        return self.result._repr_mimebundle_(include, exclude)


class EvalTask:
    """Evaluate ``dataset`` with ``metrics`` on the session judge (no Google project needed).

    ``metric_column_mapping`` maps a template placeholder to a dataset column
    (``{"prompt": "question"}``); ``autorater_config`` sets samples, both-order pairwise and
    the judge for every metric that sets none.
    """

    def __init__(
        self,
        *,
        dataset: pd.DataFrame | Mapping[str, Any] | str | Path,
        metrics: Sequence[AnyMetric],
        experiment: str | None = None,
        metric_column_mapping: Mapping[str, str] | None = None,
        output_uri_prefix: str | Path | None = "",
        autorater_config: AutoraterConfig | None = None,
    ) -> None:
        if isinstance(dataset, str) and "://" in dataset:  # gs://, s3://, bq:// ... as vertexai
            self.dataset = load_dataset(dataset)
        else:
            self.dataset = to_frame(dataset).copy()
        self.metrics = metrics  # as given, as vertexai keeps them; resolved below
        self._resolved: list[Any] = [
            _computation(m, n) if isinstance(m, str) else m for n, m in enumerate(metrics)
        ]
        for n, metric in enumerate(self._resolved):
            if not isinstance(
                metric,
                RubricBasedMetric
                | PointwiseMetric
                | PairwiseMetric
                | ComputationMetric
                | CustomMetric
                | TrajectoryMetric,
            ):
                raise TypeError(
                    f"metrics[{n}] is {metric!r}: the Vertex layer runs RubricBasedMetric, "
                    "PointwiseMetric, PairwiseMetric, CustomMetric, Rouge and computation "
                    f"metrics by name ({', '.join(_BY_NAME)})"
                )
        self.experiment = experiment
        self.metric_column_mapping = dict(metric_column_mapping or {})
        for target, column in self.metric_column_mapping.items():
            if column not in self.dataset.columns:
                raise ValueError(
                    f"metric_column_mapping {target!r} -> {column!r}: the dataset has no column "
                    f"{column!r} (columns: {', '.join(map(str, self.dataset.columns))})"
                )
        self.output_uri_prefix = "" if output_uri_prefix is None else str(output_uri_prefix)
        self.autorater_config = autorater_config
        self.runs: list[tuple[str, EvalResult]] = []

    @property
    def _judged(self) -> list[RubricBasedMetric | PointwiseMetric | PairwiseMetric]:
        return [m for m in self._resolved if not isinstance(m, _LOCAL)]

    def display_runs(self) -> None:
        """Show this task's runs side by side (Vertex shows the experiment's runs)."""
        if not self.runs:
            raise ValueError("this EvalTask has no runs yet: call evaluate() first")
        display_radar_plot(self.runs)

    def evaluate(
        self,
        *,
        model: ModelArg = None,
        runnable: Any = None,
        prompt_template: str | PromptTemplate | None = None,
        experiment_run_name: str | None = None,
        response_column_name: str | None = None,
        baseline_model_response_column_name: str | None = None,
        evaluation_service_qps: float | None = None,
        retry_timeout: float | None = None,
        output_file_name: str | None = None,
        judge: Judge | str | None = None,
    ) -> EvalResult:
        """Run the evaluation. ``model`` (a judge spec, a bare model name sent to the judge's
        endpoint, a Judge, or a function of the prompt) or ``runnable`` (an agent: see
        :mod:`.runnable`) first writes the ``response`` column.
        ``evaluation_service_qps`` caps judge calls started per second and ``retry_timeout``
        bounds one call with its retries, in seconds (vertexai's meanings, on our judge)."""
        return run_sync(
            self.aevaluate(
                model=model,
                runnable=runnable,
                prompt_template=prompt_template,
                experiment_run_name=experiment_run_name,
                response_column_name=response_column_name,
                baseline_model_response_column_name=baseline_model_response_column_name,
                evaluation_service_qps=evaluation_service_qps,
                retry_timeout=retry_timeout,
                output_file_name=output_file_name,
                judge=judge,
            )
        )

    async def aevaluate(
        self,
        *,
        model: ModelArg = None,
        runnable: Any = None,
        prompt_template: str | PromptTemplate | None = None,
        experiment_run_name: str | None = None,
        response_column_name: str | None = None,
        baseline_model_response_column_name: str | None = None,
        evaluation_service_qps: float | None = None,
        retry_timeout: float | None = None,
        output_file_name: str | None = None,
        judge: Judge | str | None = None,
    ) -> EvalResult:
        if model is not None and runnable is not None:
            raise ValueError("give either model= or runnable= to write the responses, not both")
        _check_metrics(list(self.metrics), self._resolved)
        for config in [self.autorater_config, *(_critic(m).autorater_config for m in self._judged)]:
            if config is not None:
                config.check()
        calls = CallPolicy(qps=evaluation_service_qps, retry_timeout=retry_timeout)
        task_judge = self.autorater_config.autorater_model if self.autorater_config else None
        if isinstance(prompt_template, PromptTemplate):
            prompt_template = prompt_template.template
        frame = self._prepared(
            prompt_template, response_column_name, baseline_model_response_column_name
        )
        if model is not None and "response" in frame.columns:
            raise ValueError(_byor("response"))
        if runnable is not None and "response" in frame.columns:
            raise ValueError(
                "evaluate(runnable=...) would write the `response` column, and the dataset "
                "already has one: drop that column, or leave out runnable= to judge it as it is"
            )
        if model is None and runnable is None:  # data errors first, before any judge is needed
            with_baseline = {
                _critic(m).metric_name
                for m in self._judged
                if isinstance(_critic(m), PairwiseMetric) and _critic(m).baseline_model is not None
            }
            _check_columns(
                self._resolved, frame, dict.fromkeys(with_baseline), self.autorater_config
            )
        judged = isinstance(model, str) or any(not isinstance(m, _LOCAL) for m in self._resolved)
        default = judge_for(task_judge, judge) if judged else None  # computation needs none
        if model is not None:
            frame = await _generated(frame, model_for(model, default), None, model, default)
        if runnable is not None:
            frame = await run_runnable(frame, runnable)
        baselines: dict[str, pd.Series] = {}  # each pairwise metric's own baseline responses
        made: list[tuple[Any, pd.Series]] = []
        for metric in self._resolved:
            if isinstance(metric, _LOCAL):
                continue
            critic = metric.critique_metric if isinstance(metric, RubricBasedMetric) else metric
            if isinstance(critic, PairwiseMetric) and critic.baseline_model is not None:
                if "baseline_model_response" in frame.columns:
                    raise ValueError(_byor("baseline_model_response"))
                known = [s for b, s in made if b is critic.baseline_model]
                if not known:
                    written = await _generated(
                        frame,
                        model_for(critic.baseline_model, default),
                        {"response": "baseline_model_response"},
                        critic.baseline_model,
                        default,
                    )
                    known = [written["baseline_model_response"]]
                    made.append((critic.baseline_model, known[0]))
                baselines[critic.metric_name] = known[0]
        if len(made) == 1:  # one baseline model: its responses are the table's baseline column
            frame["baseline_model_response"] = made[0][1]
        _check_columns(self._resolved, frame, baselines, self.autorater_config)
        stats = RunStats()
        infos: list[MetricInfo] = []
        any_mock = default is not None and default.is_mock
        described = default.describe() if default is not None else "no judge (computation metrics)"
        for metric in self._resolved:
            if isinstance(metric, ComputationMetric | TrajectoryMetric):  # no judge
                for column, values in _computed(metric, frame).items():
                    frame[column] = pd.Series(values, index=frame.index)
                infos.append(MetricInfo(metric.name, metric.kind, None, metric.description))
                continue
            if isinstance(metric, CustomMetric):  # the user's function, row by row
                for column, values in _custom(metric, frame).items():
                    frame[column] = pd.Series(values, index=frame.index, dtype=object)
                frame[col(metric.name, SCORE)] = pd.to_numeric(
                    frame[col(metric.name, SCORE)], errors="coerce"
                )
                infos.append(MetricInfo(metric.name, "computation", None, "CustomMetric"))
                continue
            critic = metric.critique_metric if isinstance(metric, RubricBasedMetric) else metric
            name = critic.metric_name
            if isinstance(metric, RubricBasedMetric):
                gen_judge = rubric_writer(metric.generation_config.model, task_judge, judge)
                any_mock = any_mock or (isinstance(gen_judge, Judge) and gen_judge.is_mock)
                frame, usage = await add_rubrics(
                    metric.generation_config, name, frame, gen_judge, calls
                )
                stats.add(name, usage)
                if _raw_critique(metric):  # vertexai sets this on the critique (ours: a copy)
                    critic = copy.copy(critic)
                    critic.custom_output_config = CustomOutputConfig(return_raw_output=True)
            config = critic.autorater_config
            m_judge = judge_for(config.autorater_model if config else None, task_judge, judge)
            any_mock = any_mock or m_judge.is_mock
            judged_frame = frame
            if name in baselines:
                judged_frame = frame.assign(baseline_model_response=baselines[name])
            done = await critique(critic, judged_frame, m_judge, self.autorater_config, calls)
            for column, values in done.columns.items():
                frame[column] = pd.Series(values, index=frame.index, dtype=object)
            frame[col(name, SCORE)] = frame[col(name, SCORE)].astype(float)
            stats.add(name, done.usage)
            infos.append(MetricInfo(name, "pairwise" if done.kind == "pairwise" else "pointwise"))
        run_name = experiment_run_name or _run_name(output_file_name)
        meta: dict[str, Any] = {
            "api": "rubriclab.compat.vertex",
            "run": run_name,
            "experiment": self.experiment,
        }
        result = _Result(frame, infos, judge=described, is_mock=any_mock, stats=stats, meta=meta)
        rubric_based = [m.metric_name for m in self._resolved if isinstance(m, RubricBasedMetric)]
        summary = _summary_metrics(result, rubric_based)
        hidden = {
            t
            for t in self.metric_column_mapping
            if t not in self.dataset.columns and t not in ("response", "baseline_model_response")
        }
        classic_pairwise = {
            m.metric_name
            for m in self._resolved
            if isinstance(m, PairwiseMetric) and "rubrics" not in m.placeholders
        }
        raw_only = {  # vertexai: return_raw_output without a parsing_fn gives only raw_output
            m.metric_name
            for m in self._resolved
            if isinstance(m, PointwiseMetric | PairwiseMetric)
            and "rubrics" not in m.placeholders
            and m.custom_output_config is not None
            and m.custom_output_config.return_raw_output
            and m.custom_output_config.parsing_fn is None
        } | {m.metric_name for m in self._resolved if _raw_critique(m)}
        table = _vertex_table(
            frame, [i.name for i in infos], self.dataset.columns, hidden, classic_pairwise
        )
        for name in raw_only:
            fields = [c for c in table.columns if metric_of(str(c)) == name]
            keep = {col(name, RAW_OUTPUTS)}
            raws = table.get(col(name, RAW_OUTPUTS))
            if raws is None or not all(isinstance(r, list) and r for r in raws):
                keep.add(col(name, ERROR))  # a call failed: unreadable texts are not errors here
            table = table.drop(columns=[c for c in fields if c not in keep])
            table = table.rename(columns={col(name, RAW_OUTPUTS): col(name, "raw_output")})
        metadata = {"run_name": run_name, "judge": described, "is_mock": any_mock}
        path = _write(self.output_uri_prefix, run_name, summary, table, result)
        out = EvalResult(summary, table, metadata, result, path)
        self.runs.append((run_name, out))
        return out

    def _prepared(
        self, prompt_template: str | None, response_col: str | None, baseline_col: str | None
    ) -> pd.DataFrame:
        frame = self.dataset.copy()
        for target, column in self.metric_column_mapping.items():
            if target not in frame.columns:
                frame[target] = frame[column]
        renames: tuple[tuple[str, str | None], ...] = (
            ("response", response_col),
            ("baseline_model_response", baseline_col),
        )
        for target, source in renames:
            if source and source != target:
                if source not in frame.columns:
                    raise ValueError(f"the dataset has no column {source!r} to use as {target}")
                frame[target] = frame[source]
        if prompt_template is not None:
            wanted = set(brace_placeholders(prompt_template, name="prompt_template"))
            missing = sorted(wanted - {str(c) for c in frame.columns})
            if missing:
                raise ValueError(
                    "Failed to assemble prompt template: The following column(s) are missing: "
                    f"{', '.join(missing)}. Please verify prompt_template variables "
                    f"{sorted(wanted)} and evaluation dataset column names "
                    f"{sorted(map(str, frame.columns))}."
                )
            prompts = []
            for i, row in enumerate(frame.to_dict(orient="records")):
                values = {str(k): "" if v is None else str(v) for k, v in row.items()}
                try:
                    prompts.append(format_braces(prompt_template, values, name="prompt_template"))
                except TemplateError as exc:
                    raise ValueError(f"row {i}: {exc}") from None
            frame["prompt"] = prompts
        return frame


async def _generated(
    frame: pd.DataFrame,
    writer: Judge | Callable[[str], Any],
    mapping: Mapping[str, str] | None,
    given: Any,
    default: Judge | None,
) -> pd.DataFrame:
    """Responses from ``writer``; a judge made here (from a name or spec) has its connections
    closed after, so no aiohttp session is left open."""
    try:
        return await generate_responses(frame, writer, mapping)
    finally:
        if isinstance(writer, Judge) and writer is not given and writer is not default:
            await writer.aclose()


def _check_columns(
    metrics: Sequence[Any],
    frame: pd.DataFrame,
    baselines: Mapping[str, Any],
    autorater: AutoraterConfig | None = None,
) -> None:
    """A missing response or baseline column stops the run before any call (as in Vertex);
    a missing cell stays that row's error. With the task's ``flip_enabled`` a pairwise
    metric's columns are checked first, with vertexai's flipping sentence."""
    if autorater is not None and autorater.flip_enabled:
        for metric in metrics:
            critic = _critic(metric) if not isinstance(metric, _LOCAL) else None
            if not isinstance(critic, PairwiseMetric):
                continue
            for column in ("response", "baseline_model_response"):
                if column in frame.columns or (
                    column == "baseline_model_response" and critic.metric_name in baselines
                ):
                    continue
                raise ValueError(
                    f"Cannot find the `{column}` column in the evaluation dataset to fill the "
                    "metric prompt template. This is required for Pairwise metrics when "
                    "performing autorater config flipping. The dataset has "
                    f"{', '.join(map(str, frame.columns))}: add it, or map yours with "
                    "metric_column_mapping"
                )
    for metric in metrics:
        if isinstance(metric, _LOCAL):
            continue
        critic = metric.critique_metric if isinstance(metric, RubricBasedMetric) else metric
        wanted = [c for c in ("response", "baseline_model_response") if c in critic.placeholders]
        if isinstance(critic, PairwiseMetric) and "baseline_model_response" not in wanted:
            wanted.append("baseline_model_response")
        for column in wanted:
            if column in frame.columns or (
                column == "baseline_model_response" and critic.metric_name in baselines
            ):
                continue
            how = "model=..." if column == "response" else "baseline_model= on the metric"
            raise ValueError(
                f"Cannot find the `{column}` column in the evaluation dataset to fill the "
                f"metric prompt template for `{critic.metric_name}` metric. The dataset has "
                f"{', '.join(map(str, frame.columns))}: add it, map yours with "
                f"metric_column_mapping, or give {how}"
            )


class MissingColumnError(KeyError, ValueError):
    """A column a computation metric reads is not in the data: KeyError, as vertexai raises
    (and ValueError, as the rest of this layer's data errors)."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


def _critic(metric: RubricBasedMetric | PointwiseMetric | PairwiseMetric) -> Any:
    return metric.critique_metric if isinstance(metric, RubricBasedMetric) else metric


def _raw_critique(metric: Any) -> bool:
    """A rubric metric whose classic critique has no CustomOutputConfig: vertexai gives it
    ``CustomOutputConfig(return_raw_output=True)``, so its table has only ``{m}/raw_output``."""
    return (
        isinstance(metric, RubricBasedMetric)
        and "rubrics" not in metric.critique_metric.placeholders
        and metric.critique_metric.custom_output_config is None
    )


def _byor(column: str) -> str:
    """vertexai's sentence (word for word: Vertex code may match it) when a model would write
    a column the dataset already has."""
    return (
        "The `model` parameter or `baseline_model` in pairwise metric is specified, but the "
        "evaluation `dataset` contains model response column or baseline model response column "
        f"`{column}` to perform bring-your-own-response(BYOR) evaluation. If you would like to "
        "perform evaluation using the dataset with the existing model response column or or "
        f"baseline model response column `{column}`, please remove `model` parameter in "
        "`EvalTask.evaluate()` function or `baseline_model` in `PairwiseMetric`."
    )


def _check_metrics(given: Sequence[Any], metrics: Sequence[Any]) -> None:
    """vertexai's checks at ``evaluate()``: some metric, no name twice, one rubric-based
    metric, one baseline model."""
    if not metrics:
        raise ValueError("Metrics cannot be empty.")
    seen: set[str] = set()
    for raw, metric in zip(given, metrics, strict=True):
        name = _name(metric)
        if name in seen:
            if isinstance(raw, str):
                raise ValueError(f"Duplicate string metric name found: {name!r}")
            raise ValueError(f"Duplicate Metric instances of the same metric name found: {name!r}")
        seen.add(name)
    if sum(isinstance(m, RubricBasedMetric) for m in metrics) > 1:
        raise ValueError(
            "Multiple rubric based metrics are not supported. One run has one `rubrics` "
            "column (the second metric would critique with the first one's rubrics): run one "
            "EvalTask per RubricBasedMetric"
        )
    baselines: list[Any] = []
    for metric in metrics:
        critic = metric.critique_metric if isinstance(metric, RubricBasedMetric) else metric
        model = critic.baseline_model if isinstance(critic, PairwiseMetric) else None
        if model is not None and all(b is not model for b in baselines):
            baselines.append(model)
    if len(baselines) > 1:
        raise ValueError(
            "Not all `PairwiseMetric` instances have the same `baseline_model`: one run has one "
            "baseline column, so give every PairwiseMetric the same baseline_model (or run "
            "one EvalTask per baseline)"
        )


def _custom(metric: CustomMetric, frame: pd.DataFrame) -> dict[str, list[Any]]:
    """``{name}/score`` and the function's other keys per row; a raising row gets its error."""
    name = metric.name
    out: dict[str, list[Any]] = {col(name, SCORE): [None] * len(frame)}
    errors: list[str | None] = [None] * len(frame)
    for i, row in enumerate(frame.to_dict(orient="records")):
        try:
            result = metric.metric_function({str(k): v for k, v in row.items()})
        except Exception as exc:  # the user's function failing is that row's error
            errors[i] = f"metric_function raised {type(exc).__name__}: {exc}"
            continue
        if not isinstance(result, Mapping) or name not in result:
            raise KeyError(
                f"Custom metric score `{name}` not found in the metric output {result!r:.200}: "
                f"metric_function must return a dict with the score under {name!r}"
            )
        for key, value in result.items():
            column = col(name, SCORE) if key == name else col(name, str(key))
            out.setdefault(column, [None] * len(frame))[i] = value
    if any(e is not None for e in errors):
        out[col(name, ERROR)] = errors
    return out


def _computation(name: str, position: int) -> ComputationMetric | TrajectoryMetric:
    """A metric by its Vertex name: computation (``"exact_match"``, ``"bleu"``), trajectory
    (``"trajectory_exact_match"``) or tool-call (``"tool_name_match"``)."""
    key = name.strip().lower()
    metric = _BY_NAME.get(key)
    if metric is None:
        hint = (
            ": it needs the tool's name, rubriclab.metrics.trajectory_single_tool_use(tool_name)"
            if key == "trajectory_single_tool_use"
            else ""
        )
        raise ValueError(
            f"Metric name: {name} is not supported{hint}. metrics[{position}] must be one of "
            f"{', '.join(_BY_NAME)}, or a metric object"
        )
    return metric


def _name(metric: Any) -> str:
    return str(metric.name) if isinstance(metric, _LOCAL) else str(metric.metric_name)


def _computed(
    metric: ComputationMetric | TrajectoryMetric, frame: pd.DataFrame
) -> dict[str, list[Any]]:
    """``{metric}/score`` (and our ``error`` / ``rationale``) for every row of ``frame``."""
    if isinstance(metric, TrajectoryMetric):
        return _trajectory_scores(metric, frame)
    for column in ("response", metric.reference_column):
        if column not in frame.columns:
            raise MissingColumnError(
                f"Required column `{column}` not found in the evaluation dataset. The columns "
                f"in the evaluation dataset are {list(map(str, frame.columns))}; metric "
                f"{metric.name!r} needs it (add it, map yours with metric_column_mapping"
                + (", or give model=...)" if column == "response" else ")")
            )
    outcomes = [
        metric.score_one(_cell(r), _cell(ref))
        for r, ref in zip(frame["response"], frame[metric.reference_column], strict=True)
    ]
    m = metric.name
    return {
        col(m, SCORE): [o.score for o in outcomes],
        col(m, ERROR): [o.error for o in outcomes],
        col(m, RATIONALE): [o.rationale for o in outcomes],
    }


def _trajectory_scores(metric: TrajectoryMetric, frame: pd.DataFrame) -> dict[str, list[Any]]:
    """A trajectory or tool-call metric on its own columns (``predicted_trajectory`` /
    ``reference_trajectory``, or ``response`` / ``reference``), cells passed as they are (lists
    of calls or their JSON text)."""
    wanted = [metric.predicted_column]
    if metric.needs_reference:
        wanted.append(metric.reference_column)
    for column in wanted:
        if column not in frame.columns:
            raise MissingColumnError(
                f"Required column `{column}` not found in the evaluation dataset. The columns "
                f"in the evaluation dataset are {list(map(str, frame.columns))}; metric "
                f"{metric.name!r} needs it (add it, or map yours with metric_column_mapping)"
            )
    preds = frame[metric.predicted_column].tolist()
    refs = (
        frame[metric.reference_column].tolist() if metric.needs_reference else [None] * len(preds)
    )
    outcomes = [metric.score_one(p, r) for p, r in zip(preds, refs, strict=True)]
    m = metric.name
    return {
        col(m, SCORE): [o.score for o in outcomes],
        col(m, ERROR): [o.error for o in outcomes],
        col(m, RATIONALE): [o.rationale for o in outcomes],
    }


def _cell(value: Any) -> str | None:
    return None if value is None or (isinstance(value, float) and pd.isna(value)) else str(value)


def _run_name(output_file_name: str | None) -> str:
    if output_file_name:
        return Path(output_file_name).stem
    return "eval-" + _dt.datetime.now().strftime("%Y%m%d-%H%M%S-%f")


def _summary_metrics(result: _Result, rubric_based: Sequence[str] = ()) -> dict[str, Any]:
    """Vertex's keys only: ``row_count``; ``{m}/candidate_model_win_rate`` and
    ``{m}/baseline_model_win_rate`` for a PairwiseMetric, ``{m}/mean`` and ``{m}/std`` for
    the others (a pairwise RubricBasedMetric too, as in vertexai); ``{m}/errors`` only when
    some row of ``m`` failed. Our other statistics stay on ``EvalResult.result``."""
    ours = result.summary_metrics
    out: dict[str, Any] = {"row_count": ours.get("row_count", result.row_count)}
    for info in result.metrics:
        m = info.name
        if info.kind == "pairwise":
            out[col(m, "candidate_model_win_rate")] = ours.get(col(m, "win_rate"))
            out[col(m, "baseline_model_win_rate")] = ours.get(col(m, "loss_rate"))
        if info.kind != "pairwise" or m in rubric_based:
            out[col(m, "mean")] = ours.get(col(m, "mean"))
            out[col(m, "std")] = ours.get(col(m, "std"))
        if ours.get(col(m, "errors")):
            out[col(m, "errors")] = ours[col(m, "errors")]
    return out


def _vertex_table(
    frame: pd.DataFrame,
    names: Sequence[str],
    inputs: Any,
    hidden: Collection[str] = (),
    classic_pairwise: Collection[str] = (),
) -> pd.DataFrame:
    """The columns Vertex users read, in Vertex's order: inputs, generated ones, then each
    metric's fields. A metric field no row filled (``error`` when none failed, rubric fields of
    a classic metric) is left out, as is the candidate-side ``score`` of a classic pairwise
    metric (Vertex gives only ``pairwise_choice``); ``hidden`` columns (filled in from
    ``metric_column_mapping``) too. Everything stays on ``EvalResult.result``."""
    ours = {col(m, f) for m in names for f in _OUR_FIELDS}
    ours |= {col(m, SCORE) for m in classic_pairwise}
    no_gen_error = GEN_ERROR not in frame.columns or bool(frame[GEN_ERROR].isna().all())
    keep = []
    for column in frame.columns:
        text = str(column)
        if text in ours or text in hidden or (text in (GEN_ERROR, GEN_RAW) and no_gen_error):
            continue
        metric = metric_of(text)
        if (
            metric in names
            and field_of(text) not in (SCORE, PAIRWISE_CHOICE)
            and frame[column].isna().all()
        ):
            continue
        keep.append(column)
    first = [c for c in keep if c in set(inputs) or metric_of(str(c)) is None]
    if RUBRICS in first:
        first.remove(RUBRICS)
        first.append(RUBRICS)
    rest = [c for c in keep if c not in first]
    ordered = first + sorted(rest, key=lambda c: (_metric_rank(str(c), names), _field_rank(str(c))))
    return frame[ordered].copy()


def _metric_rank(column: str, names: Sequence[str]) -> int:
    metric = metric_of(column)
    return list(names).index(metric) if metric is not None and metric in names else len(names)


def _field_rank(column: str) -> int:
    field = field_of(column)
    return VERTEX_FIELDS.index(field) if field in VERTEX_FIELDS else len(VERTEX_FIELDS)


def _write(
    prefix: str, run: str, summary: dict[str, Any], table: pd.DataFrame, result: _Result
) -> Path | None:
    if not prefix:
        return None
    if prefix.startswith(("gs://", "bq://")):
        warnings.warn(
            f"output_uri_prefix {prefix!r} is a Google Cloud location, which rubriclab does not "
            "write to; the results were kept in memory only. Pass a local folder to save them.",
            stacklevel=4,
        )
        return None
    folder = Path(prefix.removeprefix("file://")).expanduser() / run
    folder.mkdir(parents=True, exist_ok=True)
    atomic_write_text(
        folder / "summary_metrics.json",
        json.dumps({"summary_metrics": to_plain(summary)}, indent=2),
    )
    with atomic_writer(folder / "metrics_table.jsonl") as fh:
        for record in table.to_dict(orient="records"):
            fh.write(json.dumps(to_plain(record), default=str) + "\n")
    result.save(folder / "result.jsonl")
    return folder
