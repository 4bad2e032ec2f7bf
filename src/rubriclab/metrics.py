"""What is judged: metric definitions, separate from how calls are made (runner, judges).

A metric names its result columns (``{name}/score`` ...), says where its rubric comes from
(fixed, a column, or generated per case by a :class:`RubricGenerator`) and which prompt
template critiques with it. Predefined metrics cover the Vertex workflow people know.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from .rubric import Rubric
from .templates import DEFAULT_RENDER_TIMEOUT, check_render_timeout

if TYPE_CHECKING:
    from .judges import Judge

__all__ = [
    "GENERAL_QUALITY",
    "INSTRUCTION_FOLLOWING",
    "MULTIMODAL_UNDERSTANDING",
    "TEXT_QUALITY",
    "Metric",
    "PairwiseRubricMetric",
    "RubricGenerator",
    "RubricMetric",
    "TemplateMetric",
    "pairwise",
]


@dataclass(frozen=True)
class RubricGenerator:
    """How a judge writes a checklist for one prompt: what to focus on, and how many items."""

    name: str
    focus_name: str
    focus: str
    max_items: int = 12
    describe_media: bool = False
    template: str = "generate_checklist"

    def __post_init__(self) -> None:
        if not 1 <= self.max_items <= 100:
            raise ValueError(f"RubricGenerator {self.name!r}: max_items must be 1-100")


@dataclass(frozen=True)
class RubricMetric:
    """Pointwise: one response judged against a rubric; all criteria in one call per case.

    The rubric comes from, in order: ``rubric`` (fixed for every case), ``rubric_column`` (one per
    row; default ``"rubric"`` when present), or ``generator`` (written by the judge per case).
    ``samples=k`` asks k times and takes the majority per criterion.
    """

    name: str = "rubric"
    rubric: Rubric | None = None
    rubric_column: str | None = None
    generator: RubricGenerator | None = None
    samples: int = 1
    template: str | None = None
    judge: Judge | str | None = None
    max_prompt_chars: int = 100_000
    reask: int = 1
    render_timeout: float = DEFAULT_RENDER_TIMEOUT  # seconds per template render, then refused
    description: str = ""

    kind: ClassVar[Literal["pointwise", "pairwise", "template"]] = "pointwise"

    def __post_init__(self) -> None:
        if not self.name or "/" in self.name:
            raise ValueError(f"metric name {self.name!r} must be non-empty and contain no '/'")
        if self.samples < 1:
            raise ValueError(f"metric {self.name!r}: samples must be at least 1")
        if self.reask < 0:
            raise ValueError(f"metric {self.name!r}: reask must be 0 or more")
        if not 1_000 <= self.max_prompt_chars <= 1_000_000:
            raise ValueError(f"metric {self.name!r}: max_prompt_chars must be 1,000-1,000,000")
        try:
            check_render_timeout(self.render_timeout)
        except ValueError as exc:
            raise ValueError(f"metric {self.name!r}: {exc}") from None

    def with_options(self, **changes: Any) -> RubricMetric:
        """A copy with some fields changed (metrics are immutable so they can be shared)."""
        return replace(self, **changes)

    @property
    def critique_template(self) -> str:
        if self.template:
            return self.template
        return "critique_analytic"  # chosen per rubric in critique.py when not set


@dataclass(frozen=True)
class PairwiseRubricMetric(RubricMetric):
    """Pairwise: candidate vs baseline per criterion, judged in both orders.

    A winner stands only when both orders agree; otherwise the criterion (or the overall choice)
    is a tie and ``swap_consistent`` is False. The score is on the 5-point scale 1.0 ... -1.0.
    """

    name: str = "pairwise_rubric"
    baseline_column: str = "baseline_model_response"

    kind: ClassVar[Literal["pointwise", "pairwise", "template"]] = "pairwise"


Metric = RubricMetric  # the common base; TemplateMetric (traces) joins it


# -- predefined ----------------------------------------------------------------------------------

_GENERAL = RubricGenerator(
    name="general_quality",
    focus_name="general quality",
    focus=(
        "Everything that makes a response good for this prompt: does it do what was asked, "
        "are its facts right, is it complete where it needs to be, is it clear and well "
        "organised, and is it safe."
    ),
)
_TEXT = RubricGenerator(
    name="text_quality",
    focus_name="text quality, over six categories",
    focus=(
        "Cover all six categories, most important first, with more questions for the first ones:\n"
        "1. Instruction following: every explicit instruction, limit and format in the prompt.\n"
        "2. Groundedness and correctness: claims agree with the given text or known facts.\n"
        "3. Harmlessness and safety: nothing harmful, biased or inappropriate.\n"
        "4. Relevance and conciseness: on topic, no padding.\n"
        "5. Style and format: structure, tone and register fit the request.\n"
        "6. Completeness and detail: the key points are all there.\n"
        "Use the category names above in each question's 'category'."
    ),
    max_items=16,
)
_INSTRUCTIONS = RubricGenerator(
    name="instruction_following",
    focus_name="instruction following",
    focus=(
        "Break the prompt into its explicit and implied instructions: the task, each constraint "
        "(length, format, audience, language, items to include or avoid), and the order asked "
        "for. One question per instruction; exact numbers stay exact."
    ),
)
_MULTIMODAL = RubricGenerator(
    name="multimodal_understanding",
    focus_name="multimodal understanding",
    focus=(
        "Whether the response reads the attached image(s) correctly and uses them as the prompt "
        "asks: the objects, damage, text or details actually visible, conclusions supported by "
        "what is visible, and the instructions of the prompt. Ground questions in your "
        "description of the image."
    ),
    describe_media=True,
)

GENERAL_QUALITY = RubricMetric(name="general_quality", generator=_GENERAL)
TEXT_QUALITY = RubricMetric(name="text_quality", generator=_TEXT)
INSTRUCTION_FOLLOWING = RubricMetric(name="instruction_following", generator=_INSTRUCTIONS)
MULTIMODAL_UNDERSTANDING = RubricMetric(name="multimodal_understanding", generator=_MULTIMODAL)

GENERATORS: dict[str, RubricGenerator] = {
    g.name: g for g in (_GENERAL, _TEXT, _INSTRUCTIONS, _MULTIMODAL)
}


class pairwise:
    """Pairwise twins of the predefined metrics (candidate vs ``baseline_model_response``)."""

    GENERAL_QUALITY: ClassVar[PairwiseRubricMetric] = PairwiseRubricMetric(
        name="pairwise_general_quality", generator=_GENERAL
    )
    TEXT_QUALITY: ClassVar[PairwiseRubricMetric] = PairwiseRubricMetric(
        name="pairwise_text_quality", generator=_TEXT
    )
    INSTRUCTION_FOLLOWING: ClassVar[PairwiseRubricMetric] = PairwiseRubricMetric(
        name="pairwise_instruction_following", generator=_INSTRUCTIONS
    )
    MULTIMODAL_UNDERSTANDING: ClassVar[PairwiseRubricMetric] = PairwiseRubricMetric(
        name="pairwise_multimodal_understanding", generator=_MULTIMODAL
    )


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


from .template_metric import TemplateMetric  # noqa: E402
