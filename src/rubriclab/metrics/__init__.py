"""What is judged: metric definitions, separate from how calls are made (``judges``).

One module per kind, each implementing the :class:`Metric` protocol (``base``): ``rubric``
(pointwise rubric metrics and the predefined ones), ``pairwise`` (candidate vs baseline, and
the pairwise twins ``rl.metrics.pairwise.TEXT_QUALITY`` ...), ``template`` (a user-written
judge prompt, e.g. over agent traces), ``computation`` (exact match, ROUGE, BLEU against a
reference), ``panel`` (several judges per rubric metric, ``judges=[...]``) and ``rag``
(faithfulness, answer relevance, context relevance / precision / recall over a ``context``).
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
    rouge_l,
    rouge_l_sum,
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

__all__ = [
    "ANSWER_RELEVANCE",
    "COMPUTATION",
    "CONTEXT_PRECISION",
    "CONTEXT_RECALL",
    "CONTEXT_RELEVANCE",
    "FAITHFULNESS",
    "GENERAL_QUALITY",
    "GENERATORS",
    "INSTRUCTION_FOLLOWING",
    "MULTIMODAL_UNDERSTANDING",
    "OUTPUT_FORMAT_INSTRUCTION",
    "PREDEFINED",
    "RAG",
    "TEXT_QUALITY",
    "ComputationMetric",
    "Judged",
    "Metric",
    "PairwiseRubricMetric",
    "RagMetric",
    "Rows",
    "RubricGenerator",
    "RubricMetric",
    "TemplateMetric",
    "bleu",
    "by_name",
    "exact_match",
    "json_match",
    "pairwise",
    "rag",
    "rouge_1",
    "rouge_l",
    "rouge_l_sum",
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
