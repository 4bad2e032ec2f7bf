"""``generate_rubrics``, ``run_inference`` and ``evaluate`` over rubriclab's engine (async).

Every judge call goes through rubriclab (cache, retries, pacing); a row whose call or parse
fails keeps its error (``rubric_generation_error``, ``response_error``, a metric result's
``error_message``) and is never scored as 0. With several candidates, adaptive rubrics are
written once per prompt and every candidate is judged against the same ones, so win rates
compare responses, not rubrics.
"""

from __future__ import annotations

import datetime
import json
import math
import os
import statistics
import warnings
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from ....data import to_frame
from ....evaluation import aevaluate as lab_aevaluate
from ....evaluation import generate_responses
from ....generate import agenerate_rubrics as lab_agenerate_rubrics
from ....judges import Judge, get_judge
from ....metrics import RubricMetric as LabRubricMetric
from ....result import EvalResult, RowErrorWarning
from ..calls import judge_for, model_for
from ..config import AutoraterConfig
from ..config import RubricGenerationConfig as ClassicGenerationConfig
from ..critique import critique
from ..generation import add_rubrics
from ..mock import mock_speaks_vertex
from ..rows import GEN_ERROR, RUBRICS
from .cases import EvaluationDataset, Rubric, RubricVerdict
from .convert import (
    RUBRIC_GROUPS,
    as_dataset,
    dataset_frame,
    group_rubric,
    rubrics_of,
    vertex_rubrics,
)
from .metricspec import EvalRunInferenceConfig, EvaluateMethodConfig, PrebuiltMetric, PromptTemplate
from .outcomes import (
    AggregatedMetricResult,
    EvalCaseMetricResult,
    EvalCaseResult,
    EvaluationResult,
    EvaluationRunMetadata,
    ResponseCandidateResult,
    WinRateStats,
)
from .resolve import Planned, generator_for, plan_metric, rubric_column

__all__ = [
    "GENERATION_ERROR",
    "aevaluate",
    "agenerate_rubrics",
    "arun_inference",
    "candidate_names",
    "win_rates",
]

GENERATION_ERROR = "rubric_generation_error"
JudgeArg = Judge | str | None


def _cloud(path: str) -> bool:
    return path.startswith(("gs://", "bq://", "projects/"))


def load_source(src: Any, what: str = "src") -> pd.DataFrame:
    """A DataFrame from a DataFrame, an EvaluationDataset or a local file."""
    if isinstance(src, str | os.PathLike) and _cloud(os.fspath(src)):
        raise NotImplementedError(
            f"{what}={os.fspath(src)!r}: Cloud Storage and BigQuery are not read by rubriclab's "
            "Vertex client; copy the file locally (gsutil cp / bq extract) and pass its path or "
            "a DataFrame"
        )
    if isinstance(src, EvaluationDataset):
        return dataset_frame(src, what)
    if isinstance(src, pd.DataFrame):
        return src.reset_index(drop=True).copy()
    if isinstance(src, str | os.PathLike):
        return to_frame(Path(src)).reset_index(drop=True)
    raise TypeError(
        f"{what} must be a local file path, a pandas DataFrame or a types.EvaluationDataset, "
        f"got {type(src).__name__}"
    )


# -- generate_rubrics ----------------------------------------------------------------------------


async def agenerate_rubrics(
    src: Any,
    rubric_group_name: str,
    *,
    judge: JudgeArg,
    prompt_template: str | None = None,
    generator_model_config: Mapping[str, Any] | None = None,
    predefined_spec_name: str | PrebuiltMetric | None = None,
    metric_spec_parameters: Mapping[str, Any] | None = None,
    metric: Any = None,
) -> EvaluationDataset:
    """The prompts with a ``rubric_groups`` column: ``{rubric_group_name: [Rubric, ...]}``."""
    frame = load_source(src)
    if "prompt" not in frame.columns and "request" not in frame.columns:
        raise ValueError("Loaded dataset must have a 'prompt' or 'request' column.")
    if not isinstance(rubric_group_name, str) or not rubric_group_name.strip():
        raise ValueError("rubric_group_name cannot be empty.")
    if metric is not None:
        raise NotImplementedError(
            "generate_rubrics(metric=...) uses a metric registered on Vertex's servers, which "
            "rubriclab's client does not offer; pass predefined_spec_name= or prompt_template="
        )
    column = "request" if "request" in frame.columns else "prompt"
    if predefined_spec_name is not None:
        name = (
            predefined_spec_name.spec_name
            if isinstance(predefined_spec_name, PrebuiltMetric)
            else str(predefined_spec_name)
        )
        generator = generator_for(name, metric_spec_parameters)
        made = await lab_agenerate_rubrics(
            frame, generator, judge=get_judge(judge), mapping={"prompt": column}, column="_rubric"
        )
        rubrics = [vertex_rubrics(r) for r in made["_rubric"]]
        errors = made["_rubric_error"].tolist()
    elif prompt_template:
        lab_judge = judge_for(judge)
        model = (generator_model_config or {}).get("autorater_model")
        config = ClassicGenerationConfig(prompt_template=prompt_template)
        gen_judge = judge_for(model, lab_judge) if model else lab_judge
        with mock_speaks_vertex(gen_judge):
            made, _ = await add_rubrics(config, rubric_group_name, frame, gen_judge)
        rubrics = [_questions(q) for q in made[RUBRICS]]
        errors = made[GEN_ERROR].tolist()
    else:
        raise ValueError("Either metric, predefined_spec_name or prompt_template must be provided.")
    out = frame.copy()
    old = out[RUBRIC_GROUPS].tolist() if RUBRIC_GROUPS in out.columns else [None] * len(out)
    out[RUBRIC_GROUPS] = pd.Series(
        [
            {**(o if isinstance(o, Mapping) else {}), rubric_group_name: r}
            for o, r in zip(old, rubrics, strict=True)
        ],
        index=out.index,
        dtype=object,
    )
    out[GENERATION_ERROR] = pd.Series(errors, index=out.index, dtype=object)
    return EvaluationDataset(eval_dataset_df=out)


def _questions(value: Any) -> list[Rubric]:
    if not isinstance(value, list):
        return []
    out = []
    for i, q in enumerate(value):
        text = q.get("question") or q.get("text") if isinstance(q, Mapping) else q
        if text and str(text).strip():
            out.append(Rubric.of(str(text).strip(), rubric_id=f"r{i + 1}"))
    return out


# -- run_inference -------------------------------------------------------------------------------


def _drop_empty(frame: pd.DataFrame) -> pd.DataFrame:
    """Columns where every cell is empty (None, NaN, [] or {}) are dropped, as Vertex does."""

    def empty(v: Any) -> bool:
        if isinstance(v, list | dict | tuple):
            return len(v) == 0
        return v is None or (isinstance(v, float) and math.isnan(v))

    keep = [c for c in frame.columns if not all(empty(v) for v in frame[c].tolist())]
    return frame[keep]


def _candidate_name(model: Any) -> str | None:
    if isinstance(model, str):
        return model.strip()
    if isinstance(model, Judge):
        return model.model
    return getattr(model, "__name__", None)


async def arun_inference(
    src: Any,
    model: Judge | str | Callable[[str], Any] | None,
    *,
    judge: JudgeArg,
    agent: Any = None,
    config: EvalRunInferenceConfig | Mapping[str, Any] | None = None,
) -> EvaluationDataset:
    """Each row's prompt (or ``request``) sent to ``model``; answers in ``response``."""
    if agent is not None:
        raise NotImplementedError(
            "run_inference(agent=...) runs Vertex agent engines, which rubriclab's client does "
            "not offer; run your agent yourself and put its answers in a 'response' column, or "
            "use rubriclab.compat.vertex's EvalTask(runnable=your_agent)"
        )
    if model is None:
        raise ValueError("run_inference needs model= (a model name, a judge spec or a function)")
    cfg = (
        config
        if isinstance(config, EvalRunInferenceConfig)
        else EvalRunInferenceConfig.model_validate(dict(config or {}))
    )
    if cfg.dest and _cloud(cfg.dest):
        raise NotImplementedError(
            f"dest={cfg.dest!r}: writing to Cloud Storage is not offered by rubriclab's Vertex "
            "client; give a local folder and copy it up yourself"
        )
    frame = _drop_empty(load_source(src))
    column = "prompt"
    if cfg.prompt_template is not None:
        template = (
            cfg.prompt_template
            if isinstance(cfg.prompt_template, PromptTemplate)
            else PromptTemplate(text=cfg.prompt_template)
        )
        requests = []
        for i, row in enumerate(frame.to_dict(orient="records")):
            values = {k: row[k] for k in template.variables if k in row}
            try:
                requests.append(template.assemble(**values))
            except ValueError as exc:
                raise ValueError(f"row {i}: {exc} (the prompt_template's columns)") from None
        frame["request"] = requests
        column = "request"
    elif "prompt" not in frame.columns:
        if "request" not in frame.columns:
            raise ValueError("the data has no 'prompt' (or 'request') column to send to the model")
        column = "request"
    writer = model_for(model, judge_for(judge) if isinstance(model, str) else None)
    if "response" in frame.columns:
        frame = frame.drop(columns=["response"])
    done = await generate_responses(frame, writer, {"prompt": column, "response": "response"})
    if cfg.dest:
        os.makedirs(cfg.dest, exist_ok=True)
        done.to_json(
            os.path.join(cfg.dest, "inference_results.jsonl"), orient="records", lines=True
        )
    return EvaluationDataset(eval_dataset_df=done, candidate_name=_candidate_name(model))


# -- evaluate ------------------------------------------------------------------------------------


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


def _same_prompts(frames: Sequence[pd.DataFrame], names: Sequence[str]) -> None:
    first = frames[0]
    for frame, name in zip(frames[1:], names[1:], strict=True):
        if len(frame) != len(first):
            raise ValueError(
                f"candidate {name!r} has {len(frame)} rows and {names[0]!r} has {len(first)}: "
                "every dataset must hold the same prompts in the same order"
            )
        for col in ("prompt", "request"):
            if col in first.columns and col in frame.columns:
                for i, (a, b) in enumerate(zip(first[col], frame[col], strict=True)):
                    if str(a) != str(b):
                        raise ValueError(
                            f"row {i}: candidate {name!r} has a different {col} than "
                            f"{names[0]!r}; every dataset must hold the same prompts in order"
                        )


async def _shared_rubrics(
    plans: list[Planned], frames: list[pd.DataFrame], judge: JudgeArg
) -> tuple[list[Planned], list[dict[str, list[str | None]]]]:
    """Adaptive metrics: write each prompt's rubric once (on the first dataset's prompts) and
    judge every candidate with it. Rubric groups: read from ``rubric_groups``."""
    out: list[Planned] = []
    errors: list[dict[str, list[str | None]]] = [{} for _ in frames]
    for plan in plans:
        lab = plan.lab
        if not isinstance(lab, LabRubricMetric):
            out.append(plan)
            continue
        column = rubric_column(plan.group or f"adaptive:{plan.name}")
        if plan.group is not None:
            for k, frame in enumerate(frames):
                if RUBRIC_GROUPS not in frame.columns:
                    raise ValueError(
                        f"metric {plan.name!r} judges with rubric group {plan.group!r}, and the "
                        "dataset has no 'rubric_groups' column: run client.evals.generate_rubrics("
                        f"..., rubric_group_name={plan.group!r}) first"
                    )
                found = [rubrics_of(c, plan.group) for c in frame[RUBRIC_GROUPS]]
                frame[column] = pd.Series(
                    [group_rubric(r or [], plan.group) for r in found],
                    index=frame.index,
                    dtype=object,
                )
                errors[k][plan.name] = [
                    None if r else f"no rubrics in group {plan.group!r} for this case"
                    for r in found
                ]
            out.append(plan)
            continue
        generator = lab.generator
        if generator is None:
            out.append(plan)
            continue
        rubric_judge = lab.judge if lab.judge is not None else judge
        source = frames[0]
        mapping = {"prompt": "request"} if "request" in source.columns else None
        made = await lab_agenerate_rubrics(
            source.drop(columns=[RUBRIC_GROUPS], errors="ignore"),
            generator,
            judge=get_judge(rubric_judge),
            mapping=mapping,
            column="_rubric",
        )
        gen_errors = [
            None if e is None else f"rubric generation failed: {e}" for e in made["_rubric_error"]
        ]
        for k, frame in enumerate(frames):
            frame[column] = pd.Series(made["_rubric"].tolist(), index=frame.index, dtype=object)
            errors[k][plan.name] = gen_errors
        out.append(
            Planned(
                name=plan.name,
                lab=lab.with_options(rubric_column=column, generator=None),
                group=plan.group,
            )
        )
    return out, errors


async def _judge_own_prompts(
    plans: Sequence[Planned], frames: Sequence[pd.DataFrame], judge: JudgeArg
) -> None:
    """``LLMMetric``s: each row's prompt rendered from your template and judged (a score and an
    explanation read from the answer); the columns join the frame before rubriclab's run."""
    for plan in plans:
        if plan.llm is None:
            continue
        critic_judge = plan.judge if plan.judge is not None else judge_for(judge)
        config = AutoraterConfig(sampling_count=plan.samples, flip_enabled=False)
        for frame in frames:
            with mock_speaks_vertex(critic_judge):
                done = await critique(plan.llm, frame, critic_judge, config)
            for column, values in done.columns.items():
                frame[column] = pd.Series(values, index=frame.index, dtype=object)


def _before(errors: Mapping[str, list[str | None]], name: str, i: int) -> str | None:
    """Why a row had no rubric before judging (generation failed, no such group), if so."""
    found = errors.get(name)
    return found[i] if found else None


def _value(row: Mapping[str, Any], key: str) -> Any:
    value = row.get(key)
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


def _verdicts(criteria: Any) -> list[RubricVerdict] | None:
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


def _lab_result(name: str, row: Mapping[str, Any], before: str | None) -> EvalCaseMetricResult:
    score = _value(row, f"{name}/score")
    error = _value(row, f"{name}/error")
    if before and error:
        error = f"{before}; {error}"
    raws = row.get(f"{name}/raw_outputs")  # an LLMMetric's answers, one per sample
    raw = _value(row, f"{name}/raw_output")
    return EvalCaseMetricResult(
        metric_name=name,
        score=None if score is None else float(score),
        explanation=_value(row, f"{name}/rationale"),
        rubric_verdicts=_verdicts(_value(row, f"{name}/criteria")),
        raw_output=[str(r) for r in raws]
        if isinstance(raws, list)
        else [str(raw)]
        if raw
        else None,
        error_message=error if error else (before if score is None else None),
    )


def _custom_result(
    name: str, fn: Callable[..., Any], row: Mapping[str, Any]
) -> EvalCaseMetricResult:
    instance = {
        k: v for k, v in row.items() if "/" not in str(k) and not str(k).startswith("rubric_group:")
    }
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


def _summary(
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


def _aggregated(
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


async def aevaluate(
    dataset: Any,
    metrics: Sequence[Any] | None,
    *,
    judge: JudgeArg,
    config: EvaluateMethodConfig | Mapping[str, Any] | None = None,
    agent_info: Any = None,
) -> EvaluationResult:
    """Judge every candidate's responses with every metric (default: GENERAL_QUALITY)."""
    if agent_info is not None:
        raise NotImplementedError(
            "evaluate(agent_info=...) evaluates agents, which rubriclab's Vertex GenAI client "
            "does not offer; use rubriclab.compat.vertex's EvalTask(runnable=...) or rl.evaluate "
            "over traces"
        )
    cfg = (
        config
        if isinstance(config, EvaluateMethodConfig)
        else EvaluateMethodConfig.model_validate(dict(config or {}))
    )
    if cfg.dest and _cloud(cfg.dest):
        raise NotImplementedError(
            f"dest={cfg.dest!r}: writing results to Cloud Storage is not offered by rubriclab's "
            "Vertex client; give a local folder, or save result.results[0] with its .save()"
        )
    given = list(dataset) if isinstance(dataset, list | tuple) else [dataset]
    if not given:
        raise ValueError("evaluate: dataset is an empty list")
    datasets = [as_dataset(d, f"dataset {i}") for i, d in enumerate(given)]
    names = candidate_names(datasets)
    frames = [dataset_frame(d, f"dataset {i}") for i, d in enumerate(datasets)]
    for frame, name in zip(frames, names, strict=True):
        if "response" not in frame.columns:
            raise ValueError(
                f"candidate {name!r} has no 'response' column: run client.evals.run_inference("
                "model=..., src=...) first, or add the responses to the DataFrame"
            )
    _same_prompts(frames, names)
    specs = list(metrics) if metrics is not None else [PrebuiltMetric("GENERAL_QUALITY")]
    plans = [plan_metric(m, judge) for m in specs]
    dupes = sorted({p.name for p in plans if [q.name for q in plans].count(p.name) > 1})
    if dupes:
        raise ValueError(f"metric name(s) given twice: {', '.join(dupes)}")
    plans, before = await _shared_rubrics(plans, frames, judge)
    await _judge_own_prompts(plans, frames, judge)
    lab_metrics = [p.lab for p in plans if p.lab is not None]
    results: list[EvalResult] = []
    for frame in frames:
        table_in = frame.drop(columns=[RUBRIC_GROUPS], errors="ignore")
        results.append(
            await lab_aevaluate(table_in, lab_metrics, judge=judge)
            if lab_metrics
            else EvalResult(table=table_in, metrics=[])
        )
    per_metric: dict[str, list[EvalCaseMetricResult]] = {p.name: [] for p in plans}
    passed: dict[str, list[Any]] = {p.name: [] for p in plans}
    cases: list[EvalCaseResult] = []
    for i in range(len(frames[0])):
        candidates = []
        for k, result in enumerate(results):
            row = {str(k): v for k, v in result.table.iloc[i].to_dict().items()}
            metric_results = {}
            for plan in plans:
                if plan.custom is not None:
                    res = _custom_result(plan.name, plan.custom, row)
                else:
                    res = _lab_result(plan.name, row, _before(before[k], plan.name, i))
                metric_results[plan.name] = res
                per_metric[plan.name].append(res)
                passed[plan.name].append(_value(row, f"{plan.name}/passed"))
            candidates.append(
                ResponseCandidateResult(response_index=k, metric_results=metric_results)
            )
        cases.append(EvalCaseResult(eval_case_index=i, response_candidate_results=candidates))
    for plan in plans:  # rubriclab warns for its own metrics; these are judged here
        failed = sum(r.error_message is not None for r in per_metric[plan.name])
        if plan.lab is None and failed:
            warnings.warn(
                f"{plan.name}: {failed} of {len(per_metric[plan.name])} rows failed "
                "(see error_message)",
                RowErrorWarning,
                stacklevel=3,
            )
    out = EvaluationResult(
        eval_case_results=cases,
        summary_metrics=[
            _aggregated(p, _summary(p.name, per_metric[p.name], passed[p.name]), per_metric[p.name])
            for p in plans
        ],
        win_rates=win_rates(cases, len(frames)) if len(frames) > 1 else None,
        evaluation_dataset=datasets,
        metadata=EvaluationRunMetadata(
            candidate_names=names, creation_timestamp=datetime.datetime.now(datetime.timezone.utc)
        ),
    )
    out._results.extend(results)
    if cfg.dest:
        os.makedirs(cfg.dest, exist_ok=True)
        body = out.model_dump(mode="json", exclude={"evaluation_dataset"})
        with open(os.path.join(cfg.dest, "evaluation_result.json"), "w", encoding="utf-8") as fh:
            json.dump(body, fh, indent=1)
    return out
