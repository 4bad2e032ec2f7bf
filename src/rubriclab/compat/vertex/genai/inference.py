"""``generate_rubrics`` and ``run_inference``: rubrics and responses written onto a dataset.

Every call goes through rubriclab (cache, retries, pacing); a row whose call or parse fails
keeps its error (``rubric_generation_error``, ``response_error``) and the run goes on.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from ....data import to_frame
from ....evaluation import generate_responses
from ....generate import agenerate_rubrics as lab_agenerate_rubrics
from ....judges import Judge, get_judge
from ..calls import judge_for, model_for
from ..config import RubricGenerationConfig as ClassicGenerationConfig
from ..generation import add_rubrics
from ..mock import mock_speaks_vertex
from ..rows import GEN_ERROR, RUBRICS
from .cases import EvaluationDataset, Rubric
from .convert import (
    RUBRIC_GROUPS,
    dataset_frame,
    vertex_rubrics,
)
from .metricspec import EvalRunInferenceConfig, PrebuiltMetric, PromptTemplate
from .resolve import generator_for

__all__ = [
    "GENERATION_ERROR",
    "JudgeArg",
    "agenerate_rubrics",
    "arun_inference",
    "is_cloud",
    "load_source",
]

GENERATION_ERROR = "rubric_generation_error"
JudgeArg = Judge | str | None


def is_cloud(path: str) -> bool:
    return path.startswith(("gs://", "bq://", "projects/"))


def load_source(src: Any, what: str = "src") -> pd.DataFrame:
    """A DataFrame from a DataFrame, an EvaluationDataset or a local file."""
    if isinstance(src, str | os.PathLike) and is_cloud(os.fspath(src)):
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
    if cfg.dest and is_cloud(cfg.dest):
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
