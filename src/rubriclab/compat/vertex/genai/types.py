"""``types``: the evaluation types Vertex GenAI code constructs and reads (``from vertexai
import types`` becomes ``from rubriclab.compat.vertex.genai import types``)."""

from __future__ import annotations

from .cases import (
    Content,
    EvalCase,
    EvaluationDataset,
    Message,
    Part,
    ResponseCandidate,
    Rubric,
    RubricContent,
    RubricContentProperty,
    RubricGroup,
    RubricVerdict,
)
from .metricspec import (
    EvalRunInferenceConfig,
    EvaluateMethodConfig,
    LLMMetric,
    Metric,
    MetricPromptBuilder,
    PrebuiltMetricLoader,
    PromptTemplate,
    RubricGenerationConfig,
)
from .metricspec import PrebuiltMetric as LazyLoadedPrebuiltMetric
from .outcomes import (
    AggregatedMetricResult,
    EvalCaseMetricResult,
    EvalCaseResult,
    EvaluationResult,
    EvaluationRunMetadata,
    ResponseCandidateResult,
    WinRateStats,
)

__all__ = [
    "AggregatedMetricResult",
    "Content",
    "EvalCase",
    "EvalCaseMetricResult",
    "EvalCaseResult",
    "EvalRunInferenceConfig",
    "EvaluateMethodConfig",
    "EvaluationDataset",
    "EvaluationResult",
    "EvaluationRunMetadata",
    "LLMMetric",
    "LazyLoadedPrebuiltMetric",
    "Message",
    "Metric",
    "MetricPromptBuilder",
    "Part",
    "PrebuiltMetric",
    "PromptTemplate",
    "ResponseCandidate",
    "ResponseCandidateResult",
    "Rubric",
    "RubricContent",
    "RubricContentProperty",
    "RubricGenerationConfig",
    "RubricGroup",
    "RubricMetric",
    "RubricVerdict",
    "WinRateStats",
]

#: ``types.RubricMetric.GENERAL_QUALITY`` ... (``PrebuiltMetric`` is the same object)
RubricMetric = PrebuiltMetricLoader()
PrebuiltMetric = RubricMetric
