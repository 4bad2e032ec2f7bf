"""vertexai's ``PointwiseMetricPromptTemplate`` and ``PairwiseMetricPromptTemplate``.

A metric's judge prompt assembled from parts (instruction, metric definition, criteria, rating
rubric, evaluation steps, few-shot examples, input variables) into the same sections, headings
and order as vertexai's, so a ``PointwiseMetric(metric_prompt_template=...)`` built from them
reads the same to a judge and to the parsers. The default instruction and evaluation steps are
in our own words. Dictionaries are written one ``key: value`` line each, sorted by key (as
vertexai does); input variables keep the order given (vertexai's order is a set's, so random).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import ClassVar

from .prompt_template import PromptTemplate

__all__ = ["PairwiseMetricPromptTemplate", "PointwiseMetricPromptTemplate"]

_POINTWISE_INSTRUCTION = (
    "You are judging the quality of one response written by an AI model. You are given what "
    "the user asked and the model's response.\n"
    "Read the user's input first to understand the task, then judge the response against each "
    "criterion in the Evaluation section below.\n"
    "Rate the response with the Rating Rubric, following the Evaluation Steps. Explain your "
    "reasoning step by step and use only ratings that appear in the Rating Rubric."
)
_POINTWISE_STEPS = {
    "Step 1": "Judge the response on each criterion in turn and note what you found for each.",
    "Step 2": (
        "Choose the rating from the rating rubric that fits those findings, with a short "
        "reason that refers to each criterion."
    ),
    "Step 3": (
        "Answer in two lines: 'Score: <rating>' with the rating's number, then "
        "'Explanation: <your reasons>'."
    ),
}
_PAIRWISE_INSTRUCTION = (
    "You are comparing two responses written by AI models for the same user input: "
    "Response A and Response B.\n"
    "Read the user's input first to understand the task, then judge both responses against "
    "the criteria in the Evaluation section below.\n"
    "Judge each response on its own first, following the Rating Rubric and Evaluation Steps; "
    "then explain your reasoning step by step and name the better response, or say they are "
    "equally good, using the Rating Rubric."
)
_PAIRWISE_STEPS = {
    "Step 1": "Judge Response A on each criterion.",
    "Step 2": "Judge Response B on each criterion.",
    "Step 3": "Weigh the two sets of findings against each other.",
    "Step 4": (
        'Give your choice, "A", "SAME" or "B", in the pairwise_choice field, as the rating '
        "rubric defines them."
    ),
    "Step 5": (
        "Give the reasons for your choice in the explanation field. Answer in two lines: "
        "'pairwise_choice: <A, SAME or B>', then 'explanation: <your reasons>'."
    ),
}


def serialize_dict_in_order(elements: Mapping[str, str] | None) -> str:
    """``key: value`` lines sorted by key (vertexai's helper of this name)."""
    if elements is None:
        return ""
    return "\n".join(f"{key}: {value}" for key, value in sorted(elements.items()))


def _text_map(value: object, what: str) -> dict[str, str]:
    if not isinstance(value, Mapping) or not value:
        raise ValueError(f"{what} must be a non-empty dict of name -> text")
    return {str(k): str(v) for k, v in value.items()}


class _MetricPromptTemplate(PromptTemplate):
    """The parts, the assembled ``template`` and its ``variables``."""

    _fixed: ClassVar[tuple[str, ...]] = ("response",)
    _default_instruction: ClassVar[str] = ""
    _default_steps: ClassVar[Mapping[str, str]] = {}

    def __init__(
        self,
        *,
        criteria: Mapping[str, str],
        rating_rubric: Mapping[str, str],
        input_variables: Sequence[str] | None = None,
        instruction: str | None = None,
        metric_definition: str | None = None,
        evaluation_steps: Mapping[str, str] | None = None,
        few_shot_examples: Sequence[str] | None = None,
    ) -> None:
        kind = type(self).__name__
        self._criteria = _text_map(criteria, f"{kind}: criteria")
        self._rating_rubric = _text_map(rating_rubric, f"{kind}: rating_rubric")
        if isinstance(input_variables, str):
            raise ValueError(f"{kind}: input_variables must be a list of column names, not text")
        names: list[str] = []
        for name in [*(input_variables or []), *self._fixed]:
            if not isinstance(name, str) or not name.isidentifier():
                raise ValueError(f"{kind}: input variable {name!r} must be an identifier")
            if name not in names:
                names.append(name)
        self._input_variables = names
        self._instruction = instruction or self._default_instruction
        self._metric_definition = metric_definition
        self._evaluation_steps = dict(evaluation_steps or self._default_steps)
        self._few_shot_examples = [str(e) for e in few_shot_examples or []]
        super().__init__(self._assembled())

    @property
    def prompt_data(self) -> str:
        return self.template

    def _assembled(self) -> str:
        raise NotImplementedError

    def _head(self) -> list[str]:
        parts = ["# Instruction", self._instruction, "\n", "# Evaluation"]
        if self._metric_definition:
            parts += ["## Metric Definition", f"{self._metric_definition}\n"]
        parts += [
            "## Criteria",
            f"{serialize_dict_in_order(self._criteria)}\n",
            "## Rating Rubric",
            f"{serialize_dict_in_order(self._rating_rubric)}\n",
        ]
        if self._evaluation_steps:
            parts += ["## Evaluation Steps", f"{serialize_dict_in_order(self._evaluation_steps)}\n"]
        if self._few_shot_examples:
            parts += ["## Evaluation Examples", "\n".join(self._few_shot_examples) + "\n"]
        return parts

    def _inputs(self) -> list[str]:
        parts: list[str] = []
        for name in self._input_variables:
            if name not in self._fixed:
                parts += [f"### {name}", f"{{{name}}}\n"]
        return parts

    def __str__(self) -> str:
        return self.template

    def __repr__(self) -> str:
        return f"{type(self).__name__}(prompt_data={self.prompt_data}, variables={self.variables})"


class PointwiseMetricPromptTemplate(_MetricPromptTemplate):
    """A judge prompt for one ``{response}`` (plus any ``input_variables`` columns)."""

    _fixed = ("response",)
    _default_instruction = _POINTWISE_INSTRUCTION
    _default_steps = _POINTWISE_STEPS

    def get_default_pointwise_instruction(self) -> str:
        return _POINTWISE_INSTRUCTION

    def get_default_pointwise_evaluation_steps(self) -> dict[str, str]:
        return dict(_POINTWISE_STEPS)

    def _assembled(self) -> str:
        parts = self._head()
        parts += ["\n# User Inputs and AI-generated Response", "## User Inputs"]
        parts += self._inputs()
        parts += ["\n", "\n## AI-generated Response", "{response}"]
        return "\n".join(parts)


class PairwiseMetricPromptTemplate(_MetricPromptTemplate):
    """A judge prompt for ``{baseline_model_response}`` (Response A) against ``{response}``
    (Response B), plus any ``input_variables`` columns."""

    _fixed = ("response", "baseline_model_response")
    _default_instruction = _PAIRWISE_INSTRUCTION
    _default_steps = _PAIRWISE_STEPS

    def get_default_pairwise_instruction(self) -> str:
        return _PAIRWISE_INSTRUCTION

    def get_default_pairwise_evaluation_steps(self) -> dict[str, str]:
        return dict(_PAIRWISE_STEPS)

    def _assembled(self) -> str:
        parts = self._head()
        parts += ["\n# User Inputs and AI-generated Responses", "## User Inputs"]
        parts += self._inputs()
        parts += [
            "\n## AI-generated Responses",
            "### Response A",
            "{baseline_model_response}\n",
            "### Response B",
            "{response}",
        ]
        return "\n".join(parts)
