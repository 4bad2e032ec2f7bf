"""Vertex's metric classes with the constructor parameters people already write.

They describe *what* is judged (templates, parsers, sampling); :mod:`.critique` runs them, on
whichever judge ``rl.set_judge`` / ``RUBRICLAB_JUDGE`` names. The one thing a metric runs
itself is Vertex's ``RubricBasedMetric.generate_rubrics`` (through :mod:`.generation`).
Templates are checked when a metric is built, so a stray brace fails at the line that made it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, ClassVar, Literal

import pandas as pd

from ...judges.sync import run_sync
from ...templates import brace_placeholders
from . import prompts, utils
from .calls import rubric_writer
from .classic import parse_pairwise_choice_result, parse_pointwise_score_result
from .config import AutoraterConfig, CritiqueParser, CustomOutputConfig, RubricGenerationConfig
from .generation import add_rubrics
from .prompt_template import PromptTemplate
from .rows import GEN_ERROR, GEN_RAW

if TYPE_CHECKING:
    from ...judges import Judge

__all__ = [
    "CritiqueMetric",
    "CustomMetric",
    "PairwiseMetric",
    "PointwiseMetric",
    "PredefinedRubricMetrics",
    "RubricBasedMetric",
]


class CritiqueMetric:
    """Shared by pointwise and pairwise metrics: a name, a template and how to read answers."""

    kind: ClassVar[Literal["pointwise", "pairwise"]] = "pointwise"

    def __init__(
        self,
        *,
        metric: str,
        metric_prompt_template: str | PromptTemplate,
        system_instruction: str | None = None,
        autorater_config: AutoraterConfig | None = None,
        custom_output_config: CustomOutputConfig | None = None,
        template_defaults: Mapping[str, str] | None = None,
    ) -> None:
        if isinstance(metric_prompt_template, PromptTemplate):  # vertexai keeps str(template)
            metric_prompt_template = str(metric_prompt_template)
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
        config = self.custom_output_config  # vertexai: raw outputs only when asked for
        return False if config is None else config.return_raw_output

    def __repr__(self) -> str:
        return f"{type(self).__name__}(metric={self.metric_name!r})"


class PointwiseMetric(CritiqueMetric):
    """One response judged per row. The default parser reads Vertex's ``<question>`` blocks;
    an answer without them, to a template without ``{rubrics}``, is read as Vertex's classic
    metric (a score and an explanation)."""

    kind: ClassVar[Literal["pointwise", "pairwise"]] = "pointwise"

    def _default_parse(self, texts: list[str]) -> Mapping[str, Any]:
        result = utils.parse_pointwise_rubric_result(texts)
        if result.get("error") is None or "rubrics" in self.placeholders:
            return result
        classic = parse_pointwise_score_result(texts)
        if classic.get("error") is None:
            return classic
        return {**result, "error": f"{result['error']}; nor a classic 'Score: N' answer"}


class PairwiseMetric(CritiqueMetric):
    """Candidate (``response``) vs ``baseline_model_response`` per row.

    ``baseline_model`` (a judge spec, Judge or function of the prompt) writes the baseline
    responses when the data has none. The default parser reads Vertex's SxS format.
    """

    kind: ClassVar[Literal["pointwise", "pairwise"]] = "pairwise"

    def _default_parse(self, texts: list[str]) -> Mapping[str, Any]:
        result = utils.parse_pairwise_rubric_result(texts)
        if result.get("error") is None or "rubrics" in self.placeholders:
            return result
        classic = parse_pairwise_choice_result(texts)
        if classic.get("error") is None:
            return classic
        return {**result, "error": f"{result['error']}; nor a classic CANDIDATE/BASELINE/TIE"}

    def __init__(
        self,
        *,
        metric: str,
        metric_prompt_template: str | PromptTemplate,
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


class CustomMetric:
    """vertexai's client-side metric: ``metric_function(row) -> {name: score, ...}``.

    Run on every row with the row's columns as a dict; ``{name}/score`` is the value under the
    metric's own name and every other key becomes a ``{name}/key`` column (e.g.
    ``explanation``). No judge is called. A function that raises leaves that row without a
    score and with ``{name}/error``; one that returns no ``name`` key raises KeyError, as in
    vertexai, since every row would fail the same way.
    """

    def __init__(self, name: str, metric_function: Callable[[dict[str, Any]], Mapping[str, Any]]):
        if not isinstance(name, str) or not name.strip() or "/" in name:
            raise ValueError(f"CustomMetric name {name!r} must be non-empty text without '/'")
        if not callable(metric_function):
            raise TypeError(f"CustomMetric {name!r}: metric_function must be a function of a row")
        self.name = name
        self.metric_name = name
        self.metric_function = metric_function

    def __str__(self) -> str:
        return self.name

    def __repr__(self) -> str:
        return f"CustomMetric(name={self.name!r})"


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
        """A copy of the data with a ``rubrics`` column (and any extra keys the parser returns),
        as vertexai returns it.

        When a row's generation failed, that row keeps ``rubrics`` empty and the frame also has
        ``rubric_generation_error`` (why) and ``rubric_generation_raw_output`` (the judge's
        text); when none failed those two columns are left out.
        """
        return run_sync(self.agenerate_rubrics(eval_dataset, judge=judge))

    async def agenerate_rubrics(
        self, eval_dataset: pd.DataFrame, *, judge: Judge | str | None = None
    ) -> pd.DataFrame:
        frame, _ = await add_rubrics(
            self.generation_config,
            self.metric_name,
            eval_dataset,
            rubric_writer(self.generation_config.model, judge),
        )
        if GEN_ERROR in frame.columns and frame[GEN_ERROR].isna().all():
            frame = frame.drop(columns=[GEN_ERROR, GEN_RAW], errors="ignore")
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
