"""``evaluate``: every candidate's responses judged with every metric, in Vertex's shapes.

Every judge call goes through rubriclab (cache, retries, pacing); a row whose call or parse
fails keeps its error (a metric result's ``error_message``) and is never scored as 0. With
several candidates, adaptive rubrics are written once per prompt and every candidate is judged
against the same ones, so win rates compare responses, not rubrics.
"""

from __future__ import annotations

import datetime
import json
import os
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from ....evaluation import aevaluate as lab_aevaluate
from ....generate import agenerate_rubrics as lab_agenerate_rubrics
from ....judges import get_judge
from ....metrics import RubricMetric as LabRubricMetric
from ....result import EvalResult, RowErrorWarning
from ..calls import judge_for
from ..config import AutoraterConfig
from ..critique import critique
from ..mock import mock_speaks_vertex
from .convert import (
    RUBRIC_GROUPS,
    as_dataset,
    dataset_frame,
    group_rubric,
    rubrics_of,
)
from .inference import JudgeArg, is_cloud
from .metricspec import EvaluateMethodConfig, PrebuiltMetric
from .outcomes import (
    EvalCaseMetricResult,
    EvalCaseResult,
    EvaluationResult,
    EvaluationRunMetadata,
    ResponseCandidateResult,
)
from .resolve import Planned, plan_metric, rubric_column
from .tally import (
    aggregated,
    candidate_names,
    custom_result,
    lab_result,
    summarize,
    value_of,
    win_rates,
)

__all__ = ["aevaluate"]


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
        column = rubric_column(plan.name)
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
    if cfg.dest and is_cloud(cfg.dest):
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
                    res = custom_result(plan.name, plan.custom, row)
                else:
                    res = lab_result(plan.name, row, _before(before[k], plan.name, i))
                metric_results[plan.name] = res
                per_metric[plan.name].append(res)
                passed[plan.name].append(value_of(row, f"{plan.name}/passed"))
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
            aggregated(p, summarize(p.name, per_metric[p.name], passed[p.name]), per_metric[p.name])
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
