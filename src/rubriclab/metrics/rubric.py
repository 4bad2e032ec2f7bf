"""Rubric metrics: each response judged against a rubric, all criteria in one call per case.

A rubric metric names its result columns (``{name}/score`` ...), says where its rubric comes
from (fixed, a column, or written per case by a :class:`RubricGenerator`) and which prompt
template critiques with it. ``judges=[...]`` makes it a panel (``panel``). The predefined
metrics here cover the Vertex workflow people know; their pairwise twins are in ``pairwise``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from ..columns import RUBRIC, RUBRIC_RAW_OUTPUT, col
from ..critique import Outcome, critique_pointwise
from ..data import Case, rubric_cell
from ..fewshot import Example, as_examples, check_examples
from ..generate import RubricGenerator, generate_for_cases
from ..judges import get_judge
from ..judges.base import CallTally
from ..rubric import Rubric
from ..templates import DEFAULT_RENDER_TIMEOUT, check_render_timeout
from .base import Judged, Rows, judged
from .cuts import Cuts, apply_cuts, as_cuts, check_cuts
from .panel import critique_panel

if TYPE_CHECKING:
    import pandas as pd

    from ..judges import Judge

__all__ = [
    "GENERAL_QUALITY",
    "GENERATORS",
    "INSTRUCTION_FOLLOWING",
    "MULTIMODAL_UNDERSTANDING",
    "TEXT_QUALITY",
    "RubricGenerator",
    "RubricMetric",
    "rubrics_for",
]

Aggregate = Literal["majority", "median", "mean"]


@dataclass(frozen=True)
class RubricMetric:
    """Pointwise: one response judged against a rubric; all criteria in one call per case.

    The rubric comes from, in order: ``rubric`` (fixed for every case), ``rubric_column`` (one per
    row; default ``"rubric"`` when present), or ``generator`` (written by the judge per case).
    ``samples=k`` asks k times and takes the majority per criterion. ``judges=[j1, j2, ...]``
    makes a panel: every judge critiques every case (all in one pass) and ``aggregate`` combines
    them per criterion (``majority`` vote, lower ``median`` level, or ``mean``); each judge's
    verdicts stay in the table (``{name}/judges``). ``examples=[Example(...), ...]`` (or dicts)
    are cases people judged, shown to the judge in a fixed block before each prompt
    (``fewshot``). ``level_cuts={"criterion": [c1, c2, ...]}`` reads a scored criterion's judge
    level onto people's scale before scoring (``cuts``; ``rl.align`` chooses them).
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
    judges: tuple[Judge | str, ...] | None = None
    aggregate: Aggregate = "majority"
    examples: tuple[Example, ...] = ()
    level_cuts: Cuts | Mapping[str, Sequence[float]] = ()

    kind: ClassVar[Literal["pointwise", "pairwise", "template"]] = "pointwise"

    def __post_init__(self) -> None:
        if not self.name or "/" in self.name:
            raise ValueError(f"metric name {self.name!r} must be non-empty and contain no '/'")
        if self.judges is not None:
            panel = tuple(self.judges)
            object.__setattr__(self, "judges", panel)  # a list given by the user, kept immutable
            if len(panel) < 2:
                raise ValueError(f"metric {self.name!r}: a panel needs at least 2 judges")
            if self.kind != "pointwise":
                raise ValueError(f"metric {self.name!r}: judge panels are for pointwise metrics")
            if self.judge is not None:
                raise ValueError(f"metric {self.name!r}: give judge= or judges=, not both")
        if self.aggregate not in ("majority", "median", "mean"):
            raise ValueError(
                f"metric {self.name!r}: aggregate must be 'majority', 'median' or 'mean', "
                f"got {self.aggregate!r}"
            )
        object.__setattr__(self, "examples", as_examples(self.examples, self.name))
        if self.examples and self.rubric is not None:
            check_examples(self.examples, self.rubric, self.name, pairwise=self.kind == "pairwise")
        object.__setattr__(self, "level_cuts", as_cuts(self.level_cuts, self.name))
        if self.level_cuts:
            if self.kind != "pointwise":
                raise ValueError(f"metric {self.name!r}: level_cuts are for pointwise metrics")
            if self.rubric is None:
                raise ValueError(f"metric {self.name!r}: level_cuts need a fixed rubric=")
            check_cuts(as_cuts(self.level_cuts, self.name), self.rubric, self.name)
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

    async def judge_rows(self, rows: Rows) -> Judged:
        """Each row's rubric (fixed, from a column, or written now), then the critique."""
        own = _own_judge(self.judge)
        judge = own or rows.judge
        rubrics, missing, written, usage = await rubrics_for(self, rows.cases, rows.table, judge)
        used = [judge()] if usage else []
        outcomes, after, critics = await self._critique(rows, rubrics, missing, judge)
        if self.level_cuts and self.kind == "pointwise":
            apply_cuts(outcomes, self.rubric, as_cuts(self.level_cuts, self.name))
        return judged(
            self.name,
            outcomes,
            [*used, *critics],
            pairwise=self.kind == "pairwise",
            before=written,
            after=after,
            usage=usage,
        )

    async def _critique(
        self,
        rows: Rows,
        rubrics: Sequence[Rubric | None],
        missing: Sequence[str | None],
        judge: Callable[[], Judge],
    ) -> tuple[list[Outcome], dict[str, list[Any]], list[Judge]]:
        """Pointwise: one judge, or every judge of the panel (their verdicts as a column)."""
        if self.judges:
            panel = [get_judge(j) for j in self.judges]
            outcomes, extra = await critique_panel(
                rows.cases, rubrics, self, panel, aggregate=self.aggregate, missing=missing
            )
            return outcomes, {col(self.name, k): v for k, v in extra.items()}, panel
        if not any(r is not None and r.judged for r in rubrics):
            # code checks only: no judge is needed, none is resolved, no call is made
            outcomes = await critique_pointwise(rows.cases, rubrics, self, None, missing=missing)
            return outcomes, {}, []
        critic = judge()
        outcomes = await critique_pointwise(rows.cases, rubrics, self, critic, missing=missing)
        return outcomes, {}, [critic]

    @property
    def critique_template(self) -> str:
        if self.template:
            return self.template
        return "critique_analytic"  # chosen per rubric in critique.py when not set


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


def _own_judge(spec: Judge | str | None) -> Callable[[], Judge] | None:
    """A metric's own judge (``judge=``), resolved when first asked; None to use the run's."""
    if spec is None:
        return None
    found: list[Judge] = []

    def resolve() -> Judge:
        if not found:
            found.append(get_judge(spec))
        return found[0]

    return resolve


async def rubrics_for(
    metric: RubricMetric,
    cases: Sequence[Case],
    table: pd.DataFrame,
    judge: Callable[[], Judge],
) -> tuple[list[Rubric | None], list[str | None], dict[str, list[Any]], list[CallTally]]:
    """Each case's rubric: fixed, from a column, from the case's rubric column, or written by
    the judge now; with why a case has none, the columns writing added, and its calls."""
    n = len(cases)
    missing: list[str | None] = [None] * n
    if metric.rubric is not None:
        return [metric.rubric] * n, missing, {}, []
    if metric.rubric_column is not None:
        if metric.rubric_column not in table.columns:
            raise ValueError(
                f"metric {metric.name!r}: no rubric column {metric.rubric_column!r} in the data"
            )
        cells = table[metric.rubric_column].tolist()
        return (
            [rubric_cell(v, f"row {i}", metric.rubric_column) for i, v in enumerate(cells)],
            missing,
            {},
            [],
        )
    rubrics: list[Rubric | None] = [c.rubric for c in cases]
    if all(r is not None for r in rubrics) or metric.generator is None:
        if metric.generator is None and any(r is None for r in rubrics):
            missing = [
                None if r else "no rubric for this row and the metric has no generator"
                for r in rubrics
            ]
        return rubrics, missing, {}, []
    generated = await generate_for_cases(
        cases,
        metric.generator,
        judge(),
        reask=metric.reask,
        max_prompt_chars=metric.max_prompt_chars,
    )
    cols: dict[str, list[Any]] = {col(metric.name, RUBRIC): [g.rubric for g in generated]}
    for key in sorted({k for g in generated for k in g.extras}):
        cols[key] = [g.extras.get(key) for g in generated]
        for case, g in zip(cases, generated, strict=True):
            if key in g.extras and key not in case.extra:
                case.extra[key] = g.extras[key]  # e.g. an image description the critique reads
    cols[col(metric.name, RUBRIC_RAW_OUTPUT)] = [g.raw_output for g in generated]
    missing = [None if g.rubric else f"rubric generation failed: {g.error}" for g in generated]
    return [g.rubric for g in generated], missing, cols, [g.usage for g in generated]
