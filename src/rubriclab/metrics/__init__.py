"""What is judged: metric definitions, separate from how calls are made (``judges``).

One module per kind, each implementing the :class:`Metric` protocol (``base``): ``rubric``
(pointwise rubric metrics and the predefined ones), ``pairwise`` (candidate vs baseline, and
the pairwise twins ``rl.metrics.pairwise.TEXT_QUALITY`` ...), ``template`` (a user-written
judge prompt, e.g. over agent traces), ``computation`` (exact match, ROUGE, BLEU against a
reference), ``trajectory`` (tool-call trajectories, Vertex's names), ``conversation`` (whole
conversations judged), ``panel`` (several judges per rubric metric, ``judges=[...]``) and
``rag`` (faithfulness, answer relevance, context relevance / precision / recall over a
``context``).
"""

from __future__ import annotations

from . import pairwise, rag
from .base import Judged, Metric, Rows
from .computation import (
    COMPUTATION,
    ComputationMetric,
    bleu,
    exact_match,
    json_match,
    rouge_1,
    rouge_2,
    rouge_l,
    rouge_l_sum,
)
from .conversation import (
    CONVERSATION,
    CONVERSATION_QUALITY,
    KNOWLEDGE_RETENTION,
    ROLE_ADHERENCE,
    TASK_COMPLETION,
    ConversationMetric,
)
from .pairwise import PairwiseRubricMetric
from .rag import (
    ANSWER_RELEVANCE,
    CONTEXT_PRECISION,
    CONTEXT_RECALL,
    CONTEXT_RELEVANCE,
    FAITHFULNESS,
    RAG,
    RagMetric,
)
from .rubric import (
    GENERAL_QUALITY,
    GENERATORS,
    INSTRUCTION_FOLLOWING,
    MULTIMODAL_UNDERSTANDING,
    TEXT_QUALITY,
    RubricGenerator,
    RubricMetric,
)
from .template import OUTPUT_FORMAT_INSTRUCTION, TemplateMetric
from .trajectory import (
    TOOL_CALL,
    TRAJECTORY,
    TRAJECTORY_QUALITY,
    TrajectoryMetric,
    tool_call_valid,
    tool_name_match,
    tool_parameter_key_match,
    tool_parameter_kv_match,
    trajectory_any_order_match,
    trajectory_exact_match,
    trajectory_in_order_match,
    trajectory_precision,
    trajectory_recall,
    trajectory_single_tool_use,
)

__all__ = [
    "ANSWER_RELEVANCE",
    "COMPUTATION",
    "CONTEXT_PRECISION",
    "CONTEXT_RECALL",
    "CONTEXT_RELEVANCE",
    "CONVERSATION",
    "CONVERSATION_QUALITY",
    "FAITHFULNESS",
    "GENERAL_QUALITY",
    "GENERATORS",
    "INSTRUCTION_FOLLOWING",
    "KNOWLEDGE_RETENTION",
    "MULTIMODAL_UNDERSTANDING",
    "OUTPUT_FORMAT_INSTRUCTION",
    "PREDEFINED",
    "RAG",
    "ROLE_ADHERENCE",
    "TASK_COMPLETION",
    "TEXT_QUALITY",
    "TOOL_CALL",
    "TRAJECTORY",
    "TRAJECTORY_QUALITY",
    "ComputationMetric",
    "ConversationMetric",
    "Judged",
    "Metric",
    "PairwiseRubricMetric",
    "RagMetric",
    "Rows",
    "RubricGenerator",
    "RubricMetric",
    "TemplateMetric",
    "TrajectoryMetric",
    "bleu",
    "by_name",
    "exact_match",
    "json_match",
    "pairwise",
    "rag",
    "rouge_1",
    "rouge_2",
    "rouge_l",
    "rouge_l_sum",
    "tool_call_valid",
    "tool_name_match",
    "tool_parameter_key_match",
    "tool_parameter_kv_match",
    "trajectory_any_order_match",
    "trajectory_exact_match",
    "trajectory_in_order_match",
    "trajectory_precision",
    "trajectory_recall",
    "trajectory_single_tool_use",
]

PREDEFINED: dict[str, RubricMetric] = {
    m.name: m
    for m in (
        GENERAL_QUALITY,
        TEXT_QUALITY,
        INSTRUCTION_FOLLOWING,
        MULTIMODAL_UNDERSTANDING,
        pairwise.GENERAL_QUALITY,
        pairwise.TEXT_QUALITY,
        pairwise.INSTRUCTION_FOLLOWING,
        pairwise.MULTIMODAL_UNDERSTANDING,
    )
}


def by_name(name: str) -> RubricMetric:
    """A predefined metric by name (for the CLI and magics), with the list on a miss."""
    key = name.strip().lower().removeprefix("rb_")
    if key in PREDEFINED:
        return PREDEFINED[key]
    raise KeyError(f"no predefined metric {name!r}; choose one of: {', '.join(sorted(PREDEFINED))}")
