"""Vertex's metric classes with the constructor parameters people already write.

They only describe *what* is judged (templates, parsers, sampling); running them is
:mod:`.critique`'s job, on whichever judge ``rl.set_judge`` / ``RUBRICLAB_JUDGE`` names.
Templates are checked when a metric is built, so a stray brace fails at the line that made it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Literal

import pandas as pd

from ...templates import brace_placeholders
from . import prompts, utils

if TYPE_CHECKING:
    from ...judges import Judge

__all__ = [
    "AutoraterConfig",
    "CustomOutputConfig",
    "PairwiseMetric",
    "PointwiseMetric",
    "PredefinedRubricMetrics",
    "RubricBasedMetric",
    "RubricGenerationConfig",
]

#: parses the list of raw judge outputs of one row (one per sample) into result columns
CritiqueParser = Callable[[list[str]], Mapping[str, Any]]
#: parses one rubric-generation reply into ``{"questions": [...], **extra columns}`` (or a list)
RubricParser = Callable[[str], Any]


@dataclass(frozen=True)
class AutoraterConfig:
    """How the judge is asked: samples per row, both orders for pairwise, which judge.

    ``autorater_model`` is a judge spec or :class:`~rubriclab.Judge` (default: the session
    judge). ``flip_enabled`` (our default True) also asks with A and B swapped and keeps a
    winner only when both orders agree; set False for Vertex's single order.
    """

    sampling_count: int = 1
    flip_enabled: bool = True
    autorater_model: Judge | str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.sampling_count, int) or not 1 <= self.sampling_count <= 32:
            raise ValueError(
                f"AutoraterConfig: sampling_count must be an integer 1-32, "
                f"got {self.sampling_count!r}"
            )


@dataclass(frozen=True)
class CustomOutputConfig:
    """``parsing_fn(raw_outputs: list[str]) -> dict``: each key becomes a ``{metric}/key`` column.

    ``return_raw_output`` adds ``{metric}/raw_outputs`` (the judge's texts) to the table.
    """

    return_raw_output: bool = False
    parsing_fn: CritiqueParser | None = None

    def __post_init__(self) -> None:
        if self.parsing_fn is not None and not callable(self.parsing_fn):
            raise TypeError("CustomOutputConfig: parsing_fn must be a function of list[str]")


@dataclass(frozen=True)
class RubricGenerationConfig:
    """A ``{placeholder}`` prompt that asks for rubric questions, the judge, and the parser.

    ``model`` is a judge spec or :class:`~rubriclab.Judge` (Vertex: a Gemini model); None uses
    the session judge. ``parsing_fn`` defaults to :func:`utils.parse_rubrics`.
    """

    prompt_template: str
    model: Judge | str | None = None
    parsing_fn: RubricParser | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.prompt_template, str) or not self.prompt_template.strip():
            raise ValueError("RubricGenerationConfig: prompt_template must be non-empty text")
        brace_placeholders(self.prompt_template, name="rubric generation prompt_template")
        if self.parsing_fn is not None and not callable(self.parsing_fn):
            raise TypeError("RubricGenerationConfig: parsing_fn must be a function of str")

    @property
    def parser(self) -> RubricParser:
        return self.parsing_fn or utils.parse_rubrics


class _CritiqueMetric:
    """Shared by pointwise and pairwise metrics: a name, a template and how to read answers."""

    kind: ClassVar[Literal["pointwise", "pairwise"]] = "pointwise"

    def __init__(
        self,
        *,
        metric: str,
        metric_prompt_template: str,
        system_instruction: str | None = None,
        autorater_config: AutoraterConfig | None = None,
        custom_output_config: CustomOutputConfig | None = None,
        template_defaults: Mapping[str, str] | None = None,
    ) -> None:
        if not isinstance(metric, str) or not metric.strip() or "/" in metric:
            raise ValueError(f"metric name {metric!r} must be non-empty text without '/'")
        if not isinstance(metric_prompt_template, str) or not metric_prompt_template.strip():
            raise ValueError(f"metric {metric!r}: metric_prompt_template must be non-empty text")
        self.placeholders = brace_placeholders(
            metric_prompt_template, name=f"metric {metric!r} prompt template"
        )
        self.metric_name = metric
        self.metric_prompt_template = metric_prompt_template
        self.system_instruction = system_instruction
        self.autorater_config = autorater_config
        self.custom_output_config = custom_output_config
        self.template_defaults = dict(template_defaults or {})

    @property
    def parser(self) -> CritiqueParser:
        config = self.custom_output_config
        if config is not None and config.parsing_fn is not None:
            return config.parsing_fn
        return self._default_parse

    def _default_parse(self, texts: list[str]) -> Mapping[str, Any]:
        return utils.parse_pointwise_rubric_result(texts)

    @property
    def return_raw_output(self) -> bool:
        config = self.custom_output_config
        return True if config is None else config.return_raw_output

    def __repr__(self) -> str:
        return f"{type(self).__name__}(metric={self.metric_name!r})"


class PointwiseMetric(_CritiqueMetric):
    """One response judged per row. The default parser reads Vertex's ``<question>`` blocks;
    an answer without them, to a template without ``{rubrics}``, is read as Vertex's classic
    metric (a score and an explanation)."""

    kind: ClassVar[Literal["pointwise", "pairwise"]] = "pointwise"

    def _default_parse(self, texts: list[str]) -> Mapping[str, Any]:
        result = utils.parse_pointwise_rubric_result(texts)
        if result.get("error") is None or "rubrics" in self.placeholders:
            return result
        from .classic import parse_pointwise_score_result  # no verdicts: a classic metric?

        classic = parse_pointwise_score_result(texts)
        if classic.get("error") is None:
            return classic
        return {**result, "error": f"{result['error']}; nor a classic 'Score: N' answer"}


class PairwiseMetric(_CritiqueMetric):
    """Candidate (``response``) vs ``baseline_model_response`` per row.

    ``baseline_model`` (a judge spec, Judge or function of the prompt) writes the baseline
    responses when the data has none. The default parser reads Vertex's SxS format.
    """

    kind: ClassVar[Literal["pointwise", "pairwise"]] = "pairwise"

    def _default_parse(self, texts: list[str]) -> Mapping[str, Any]:
        result = utils.parse_pairwise_rubric_result(texts)
        if result.get("error") is None or "rubrics" in self.placeholders:
            return result
        from .classic import parse_pairwise_choice_result  # classic: CANDIDATE/BASELINE/TIE

        classic = parse_pairwise_choice_result(texts)
        if classic.get("error") is None:
            return classic
        return {**result, "error": f"{result['error']}; nor a classic CANDIDATE/BASELINE/TIE"}

    def __init__(
        self,
        *,
        metric: str,
        metric_prompt_template: str,
        baseline_model: Judge | str | Callable[[str], Any] | None = None,
        system_instruction: str | None = None,
        autorater_config: AutoraterConfig | None = None,
        custom_output_config: CustomOutputConfig | None = None,
        template_defaults: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(
            metric=metric,
            metric_prompt_template=metric_prompt_template,
            system_instruction=system_instruction,
            autorater_config=autorater_config,
            custom_output_config=custom_output_config,
            template_defaults=template_defaults,
        )
        self.baseline_model = baseline_model


class RubricBasedMetric:
    """Rubric generation per row, then critique against it (``rubrics`` column).

    Rows whose data already has a ``rubrics`` column are not regenerated, so rubrics you
    revised by hand are the ones judged.
    """

    def __init__(
        self,
        *,
        generation_config: RubricGenerationConfig,
        critique_metric: PointwiseMetric | PairwiseMetric,
    ) -> None:
        if not isinstance(generation_config, RubricGenerationConfig):
            raise TypeError("RubricBasedMetric: generation_config must be a RubricGenerationConfig")
        if not isinstance(critique_metric, PointwiseMetric | PairwiseMetric):
            raise TypeError(
                "RubricBasedMetric: critique_metric must be a PointwiseMetric or PairwiseMetric"
            )
        self.generation_config = generation_config
        self.critique_metric = critique_metric

    @property
    def metric_name(self) -> str:
        return self.critique_metric.metric_name

    def generate_rubrics(
        self, eval_dataset: pd.DataFrame, *, judge: Judge | str | None = None
    ) -> pd.DataFrame:
        """A copy of the data with a ``rubrics`` column (and any extra keys the parser returns).

        A row whose generation failed keeps ``rubrics`` empty and says why in
        ``rubric_generation_error``; ``rubric_generation_raw_output`` keeps the judge's text.
        """
        from ...runner import run_sync

        return run_sync(self.agenerate_rubrics(eval_dataset, judge=judge))

    async def agenerate_rubrics(
        self, eval_dataset: pd.DataFrame, *, judge: Judge | str | None = None
    ) -> pd.DataFrame:
        from .critique import add_rubrics, pick_judge

        frame, _ = await add_rubrics(
            self, eval_dataset, pick_judge(self.generation_config.model, judge)
        )
        return frame

    def __repr__(self) -> str:
        return f"RubricBasedMetric(metric={self.metric_name!r})"


# -- predefined ------------------------------------------------------------------------------------


def _predefined(key: str, pairwise: bool) -> RubricBasedMetric:
    prompt_set = prompts.PromptSet.for_metric(key)
    defaults = {"description": "(no description was written)"}
    output = CustomOutputConfig(return_raw_output=True)
    critique: PointwiseMetric | PairwiseMetric
    if pairwise:
        critique = PairwiseMetric(
            metric=f"pairwise_rb_{key}",
            metric_prompt_template=prompt_set.pairwise,
            custom_output_config=output,
            template_defaults=defaults,
        )
    else:
        critique = PointwiseMetric(
            metric=f"rb_{key}",
            metric_prompt_template=prompt_set.pointwise,
            custom_output_config=output,
            template_defaults=defaults,
        )
    return RubricBasedMetric(
        generation_config=RubricGenerationConfig(prompt_template=prompt_set.generation),
        critique_metric=critique,
    )


class PredefinedRubricMetrics:
    """Ready-made rubric metrics (``rb_*`` and ``pairwise_rb_*``) with our built-in prompts."""

    class Pointwise:
        INSTRUCTION_FOLLOWING: ClassVar[RubricBasedMetric] = _predefined(
            "instruction_following", False
        )
        TEXT_QUALITY: ClassVar[RubricBasedMetric] = _predefined("text_quality", False)
        MULTIMODAL_UNDERSTANDING: ClassVar[RubricBasedMetric] = _predefined(
            "multimodal_understanding", False
        )

    class Pairwise:
        INSTRUCTION_FOLLOWING: ClassVar[RubricBasedMetric] = _predefined(
            "instruction_following", True
        )
        TEXT_QUALITY: ClassVar[RubricBasedMetric] = _predefined("text_quality", True)
        MULTIMODAL_UNDERSTANDING: ClassVar[RubricBasedMetric] = _predefined(
            "multimodal_understanding", True
        )
