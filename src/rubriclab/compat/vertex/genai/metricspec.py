"""What Vertex GenAI code says to judge with: ``Metric``, ``LLMMetric``, prompt templates and
the prebuilt metrics (``types.RubricMetric.GENERAL_QUALITY`` ...), plus the run configs.

These only describe; :mod:`.resolve` turns them into rubriclab metrics. The prebuilt metrics
are rubriclab's adaptive-rubric metrics with our own prompt texts, not Google's.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from pydantic import Field, field_validator, model_validator

from .cases import Model

__all__ = [
    "OUTPUT_INSTRUCTION",
    "PREBUILT",
    "EvalRunInferenceConfig",
    "EvaluateMethodConfig",
    "LLMMetric",
    "Metric",
    "MetricPromptBuilder",
    "PrebuiltMetric",
    "PrebuiltMetricLoader",
    "PromptTemplate",
    "RubricGenerationConfig",
]

_SLOT = re.compile(r"\{([_a-zA-Z][_a-zA-Z0-9]*)\}")


class Metric(Model):
    """A metric by name: a prebuilt one (``general_quality_v1``), a computation one
    (``exact_match``, ``bleu``, ``rouge_1``, ``rouge_l``, ``rouge_l_sum``), or a Python
    ``custom_function(instance: dict) -> float | {"score": ..., "explanation": ...}``.

    Names are lower-cased, as in Vertex. ``judge_model`` is a judge spec or a bare model name
    asked on the client's judge endpoint.
    """

    name: str | None = None
    custom_function: Callable[..., Any] | None = None
    prompt_template: str | None = None
    judge_model_system_instruction: str | None = None
    return_raw_output: bool | None = None
    parse_and_reduce_fn: Callable[..., Any] | None = None
    aggregate_summary_fn: Callable[..., Any] | None = None
    remote_custom_function: str | None = None
    judge_model: str | None = None
    judge_model_sampling_count: int | None = None
    rubric_group_name: str | None = None
    metric_spec_parameters: dict[str, Any] | None = None
    metric_resource_name: str | None = None

    @field_validator("name", mode="before")
    @classmethod
    def _name(cls, value: Any) -> str:
        if value is None or (isinstance(value, str) and not value.strip()):
            raise ValueError("Metric name cannot be empty.")
        if not isinstance(value, str):
            raise ValueError(f"Metric name must be text, got {type(value).__name__}")
        return value.strip().lower()


class LLMMetric(Metric):
    """A metric judged with your own ``prompt_template`` (``{prompt}``, ``{response}`` and any
    column as ``{name}``; a ``MetricPromptBuilder`` works too). The judge answers a score and
    an explanation; a template that does not ask for ``Score:`` gets :data:`OUTPUT_INSTRUCTION`
    appended. An answer with no score is that row's error, never a 0."""

    rubric_group_name: str | None = None
    result_parsing_function: str | None = None

    @field_validator("prompt_template", mode="before")
    @classmethod
    def _template(cls, value: Any) -> Any:
        if value is None:
            raise ValueError("Prompt template cannot be empty.")
        if isinstance(value, PromptTemplate):
            value = value.text
        if isinstance(value, str) and not value.strip():
            raise ValueError("Prompt template cannot be an empty string.")
        return value

    @field_validator("judge_model_sampling_count")
    @classmethod
    def _samples(cls, value: int | None) -> int | None:
        if value is not None and not 1 <= value <= 32:
            raise ValueError("judge_model_sampling_count must be between 1 and 32.")
        return value


class PromptTemplate(Model):
    """Text with ``{variable}`` slots; ``assemble(**values)`` fills every one of them."""

    text: str | None = None

    @field_validator("text")
    @classmethod
    def _not_empty(cls, value: str | None) -> str | None:
        if value is None or not value.strip():
            raise ValueError("Prompt template text cannot be empty.")
        return value

    @property
    def variables(self) -> set[str]:
        return set(_SLOT.findall(self.text or ""))

    def assemble(self, **values: Any) -> str:
        """The text with every slot filled; a missing or unknown name is an error."""
        known = self.variables
        for name in values:
            if name not in known:
                raise ValueError(
                    f"Invalid variable name '{name}' provided; the template's variables are: "
                    f"{', '.join(sorted(known)) or '(none)'}"
                )
        for name in sorted(known):
            if name not in values:
                raise ValueError(f"Missing value for template variable '{name}'")
        return _SLOT.sub(lambda m: str(values[m.group(1)]), self.text or "")

    def __str__(self) -> str:
        return self.text or ""

    def __repr__(self) -> str:
        return f"PromptTemplate(text='{self.text}')"


#: how an LLMMetric's judge is asked to answer (added to a template that does not say)
OUTPUT_INSTRUCTION = (
    "Answer in two lines: 'Score: <one of the rating scores, as a number>' and then "
    "'Explanation: <why, in one or two sentences>'."
)
_INSTRUCTION = (
    "You are grading an AI model's response to a user's prompt. Read the prompt first to "
    "understand the task, then judge the response against each criterion below.\n"
    "Give a rating from the rating scores only, and explain it criterion by criterion."
)
_STEPS = {
    "Step 1": "Check the response against every criterion, one at a time.",
    "Step 2": "Choose the rating score that fits best and explain why, per criterion.",
}


class MetricPromptBuilder(PromptTemplate):
    """A judge prompt built from criteria and rating scores (our wording, Vertex's fields)."""

    criteria: dict[str, str] | None = None
    rating_scores: dict[str, str] | None = None
    instruction: str | None = None
    metric_definition: str | None = None
    evaluation_steps: dict[str, str] | None = None
    few_shot_examples: list[str] | None = None

    @model_validator(mode="before")
    @classmethod
    def _build(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        if not data.get("criteria") or not data.get("rating_scores"):
            raise ValueError(
                "Both 'criteria' and 'rating_scores' are required to build a metric prompt"
            )
        data = dict(data)
        data["instruction"] = data.get("instruction") or _INSTRUCTION
        data["evaluation_steps"] = data.get("evaluation_steps") or dict(_STEPS)
        data["text"] = _prompt_text(data)
        return data


def _lines(items: dict[str, str]) -> str:
    return "\n".join(f"{k}: {v}" for k, v in items.items())


def _prompt_text(data: dict[str, Any]) -> str:
    parts = ["# Instruction", str(data["instruction"])]
    if data.get("metric_definition"):
        parts += ["# Metric definition", str(data["metric_definition"])]
    parts += [
        "# Criteria",
        _lines(data["criteria"]),
        "# Rating Rubric",
        _lines(data["rating_scores"]),
    ]
    parts += ["# Evaluation steps", _lines(data["evaluation_steps"])]
    if data.get("few_shot_examples"):
        parts += ["# Examples", "\n\n".join(map(str, data["few_shot_examples"]))]
    parts += ["# Output format", OUTPUT_INSTRUCTION]
    parts += ["# User prompt", "{prompt}", "# AI-generated response", "{response}"]
    return "\n\n".join(parts)


class RubricGenerationConfig(Model):
    """Options of ``generate_rubrics`` (Vertex: HTTP options only; nothing to set here)."""

    http_options: Any | None = None


class EvalRunInferenceConfig(Model):
    """``run_inference`` options: ``dest`` (a local folder for ``inference_results.jsonl``)
    and ``prompt_template`` (builds a ``request`` column from the row's columns)."""

    dest: str | None = None
    prompt_template: str | PromptTemplate | None = None
    generate_content_config: Any | None = None
    user_simulator_config: Any | None = None
    allow_cross_region_model: bool | None = None


class EvaluateMethodConfig(Model):
    """``evaluate`` options: ``dest`` is a local folder for the result; ``dataset_schema`` is
    accepted for Vertex code (the flat ``prompt``/``response`` schema is what is read)."""

    dataset_schema: str | None = None
    dest: str | None = None
    evaluation_service_qps: float | None = Field(default=None, gt=0)


# -- prebuilt metrics ----------------------------------------------------------------------------

#: Vertex's prebuilt names that we judge, and the spec name a result is reported under
PREBUILT: dict[str, str] = {
    "GENERAL_QUALITY": "general_quality_v1",
    "TEXT_QUALITY": "text_quality_v1",
    "INSTRUCTION_FOLLOWING": "instruction_following_v1",
    "SAFETY": "safety_v1",
    "COHERENCE": "coherence_v1",
    "FLUENCY": "fluency_v1",
    "VERBOSITY": "verbosity_v1",
    "SUMMARIZATION_QUALITY": "summarization_quality_v1",
    "QUESTION_ANSWERING_QUALITY": "question_answering_quality_v1",
}
#: Vertex's prebuilt names for agents, conversations and media: not offered here
NOT_OFFERED = {
    "MULTI_TURN_GENERAL_QUALITY",
    "MULTI_TURN_TEXT_QUALITY",
    "MULTI_TURN_TOOL_USE_QUALITY",
    "MULTI_TURN_TRAJECTORY_QUALITY",
    "MULTI_TURN_TASK_SUCCESS",
    "MULTI_TURN_CHAT_QUALITY",
    "MULTI_TURN_SAFETY",
    "FINAL_RESPONSE_MATCH",
    "FINAL_RESPONSE_REFERENCE_FREE",
    "FINAL_RESPONSE_QUALITY",
    "HALLUCINATION",
    "TOOL_USE_QUALITY",
    "GECKO_TEXT2IMAGE",
    "GECKO_TEXT2VIDEO",
}


class PrebuiltMetric:
    """One prebuilt metric (``types.RubricMetric.GENERAL_QUALITY``); call it to set options:
    ``RubricMetric.GENERAL_QUALITY(rubric_group_name="my_rubrics")``."""

    def __init__(self, name: str, version: str | None = None, **kwargs: Any) -> None:
        self.name = name.upper()
        self.version = version
        self.metric_kwargs = kwargs

    @property
    def spec_name(self) -> str:
        """The name results are reported under (``general_quality_v1``)."""
        base = PREBUILT[self.name]
        return f"{self.name.lower()}_{self.version.lower()}" if self.version else base

    def __call__(self, version: str | None = None, **kwargs: Any) -> PrebuiltMetric:
        unknown = sorted(set(kwargs) - set(Metric.model_fields))
        if unknown:
            raise TypeError(f"RubricMetric.{self.name}: unknown option(s) {', '.join(unknown)}")
        return PrebuiltMetric(
            self.name, version or self.version, **{**self.metric_kwargs, **kwargs}
        )

    def resolve(self, api_client: Any = None) -> Metric:
        """The ``Metric`` this stands for (Vertex's resolve; no client is needed here)."""
        return Metric(name=self.spec_name, **self.metric_kwargs)

    def __repr__(self) -> str:
        return f"RubricMetric.{self.name}"


class PrebuiltMetricLoader:
    """``types.RubricMetric`` (alias ``types.PrebuiltMetric``): the prebuilt metrics by name."""

    def __getattr__(self, name: str) -> PrebuiltMetric:
        if name.startswith("__"):
            raise AttributeError(name)
        key = name.upper()
        if key in PREBUILT:
            return PrebuiltMetric(key)
        if key in NOT_OFFERED:
            raise NotImplementedError(
                f"RubricMetric.{key} judges agents, conversations or media and is not offered by "
                "rubriclab's Vertex GenAI client; judge those with rubriclab.compat.vertex's "
                "EvalTask (runnable=your agent) or rl.evaluate over traces, or write a "
                "types.LLMMetric with your own prompt"
            )
        raise AttributeError(
            f"RubricMetric has no metric {name!r}; choose one of: {', '.join(sorted(PREBUILT))}"
        )

    def __dir__(self) -> list[str]:
        return sorted(PREBUILT)
