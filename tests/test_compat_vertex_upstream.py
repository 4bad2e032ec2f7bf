"""Issue 31: behaviours Vertex's own unit tests (googleapis/python-aiplatform,
tests/unit/vertexai/test_evaluation.py) and its evaluation source define, on the offline mock.

Each test names the upstream test or source function it follows.
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import pytest

import rubriclab as rl
from rubriclab.compat.vertex import EvalTask, PairwiseMetric, PointwiseMetric, notebook_utils

PAIRWISE_TEMPLATE = (
    "Compare.\n{prompt}\nResponse A: {baseline_model_response}\nResponse B: {response}\n"
    "Answer with the better one."
)


@pytest.fixture
def mock_judge() -> Any:
    rl.set_judge(rl.Judge("mock"))
    try:
        yield
    finally:
        rl.set_judge(None)


def test_each_pairwise_metric_has_its_own_baseline_model(mock_judge: Any) -> None:
    """Diverges on purpose from ``test_evaluate_pairwise_metrics_with_multiple_baseline_models``
    (vertexai raises ValueError): we run both, each metric against its own baseline."""
    seen: dict[str, list[str]] = {"a": [], "b": []}

    def baseline_a(prompt: str) -> str:
        seen["a"].append(prompt)
        return "answer from A"

    def baseline_b(prompt: str) -> str:
        seen["b"].append(prompt)
        return "answer from B"

    data = pd.DataFrame({"prompt": ["Say hi."], "response": ["hi"]})
    metrics = [
        PairwiseMetric(
            metric="vs_a", metric_prompt_template=PAIRWISE_TEMPLATE, baseline_model=baseline_a
        ),
        PairwiseMetric(
            metric="vs_b", metric_prompt_template=PAIRWISE_TEMPLATE, baseline_model=baseline_b
        ),
    ]
    EvalTask(dataset=data, metrics=metrics).evaluate()
    assert seen == {"a": ["Say hi."], "b": ["Say hi."]}  # B was asked, not skipped


def test_model_with_an_existing_response_column_raises(mock_judge: Any) -> None:
    """Follows ``test_evaluate_response_column_and_model_provided``."""
    data = pd.DataFrame({"prompt": ["Say hi."], "response": ["hi"]})
    metric = PointwiseMetric(metric="m", metric_prompt_template="Rate {response}")
    with pytest.raises(ValueError, match="already has one"):
        EvalTask(dataset=data, metrics=[metric]).evaluate(model=lambda p: "generated")


def test_baseline_model_with_an_existing_baseline_column_raises(mock_judge: Any) -> None:
    """Follows ``test_evaluate_baseline_response_column_and_baseline_model_provided``."""
    data = pd.DataFrame(
        {"prompt": ["Say hi."], "response": ["hi"], "baseline_model_response": ["hello"]}
    )
    metric = PairwiseMetric(
        metric="p", metric_prompt_template=PAIRWISE_TEMPLATE, baseline_model=lambda p: "x"
    )
    with pytest.raises(ValueError, match="baseline_model_response"):
        EvalTask(dataset=data, metrics=[metric]).evaluate()


@pytest.mark.parametrize(
    ("columns", "missing"),
    [({"prompt": ["q"]}, "'response'"), ({"prompt": ["q"], "response": ["r"]}, "baseline")],
)
def test_a_missing_response_or_baseline_column_stops_the_run(
    mock_judge: Any, columns: dict[str, list[str]], missing: str
) -> None:
    """Follows ``test_evaluate_response_column_not_provided`` and
    ``test_evaluate_baseline_model_response_column_not_provided``: a column the template
    needs and the dataset lacks raises ValueError before any judge call."""
    metric = PairwiseMetric(metric="p", metric_prompt_template=PAIRWISE_TEMPLATE)
    with pytest.raises(ValueError, match=missing):
        EvalTask(dataset=pd.DataFrame(columns), metrics=[metric]).evaluate()


def test_bleu_of_identical_text_is_exactly_one() -> None:
    """Issue 31 point 4 (sacrebleu gives 100.00000000000004 for identical text)."""
    data = pd.DataFrame(
        {"response": ["the cat sat on the mat"], "reference": ["the cat sat on the mat"]}
    )
    result = EvalTask(dataset=data, metrics=["bleu"]).evaluate()
    assert result.metrics_table["bleu/score"].tolist() == [1.0]
    assert result.summary_metrics["bleu/mean"] <= 1.0


def test_notebook_utils_take_lists_and_match_substrings(
    mock_judge: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    """Follows vertexai ``notebook_utils``: ``display_bar_plot(metrics: List[str])`` and
    ``display_eval_result`` / ``display_explanations`` filtering by name substring."""
    data = pd.DataFrame({"response": ["the cat", "a dog"], "reference": ["the cat", "a cat"]})
    task = EvalTask(dataset=data, metrics=["exact_match", "bleu"])
    first = task.evaluate(experiment_run_name="r1")
    capsys.readouterr()
    notebook_utils.display_bar_plot([("r1", first)], metrics=["exact_match", "bleu"])
    out = capsys.readouterr().out
    assert "r1 · exact_match" in out and "r1 · bleu" in out
    notebook_utils.display_eval_result(first, metrics=["exact"])
    out = capsys.readouterr().out
    assert "exact_match" in out and "bleu" not in out
    with pytest.raises(ValueError, match="no metric name contains"):
        notebook_utils.display_eval_result(first, metrics=["fluency"])


def test_rubric_generation_config_model_can_be_set_later() -> None:
    """Issue 31 point 4: vertexai's config is a plain object (``config.model = ...`` works)."""
    from rubriclab.compat.vertex import RubricGenerationConfig

    config = RubricGenerationConfig(prompt_template="Write rubrics for {prompt}")
    config.model = "gemini-2.5-pro"
    assert config.model == "gemini-2.5-pro"


# -- PromptTemplate: upstream TestPromptTemplate ------------------------------------------------


def test_prompt_template_init_str_and_repr() -> None:
    """Follows ``TestPromptTemplate.test_init``, ``test_str`` and ``test_repr``."""
    from rubriclab.compat.vertex import PromptTemplate

    assert PromptTemplate("Hello, {name}!").template == "Hello, {name}!"
    assert str(PromptTemplate("Hello, world!")) == "Hello, world!"
    assert repr(PromptTemplate("Hello, {name}!")) == "PromptTemplate('Hello, {name}!')"


def test_prompt_template_variables_and_format() -> None:
    """Follows ``TestPromptTemplate.test_get_variables``, ``test_format`` and
    ``test_format_missing_variable``."""
    from rubriclab.compat.vertex import PromptTemplate

    template = PromptTemplate("Hello, {name}! Today is {day}.")
    assert template.variables == {"name", "day"}
    assert str(template.assemble(name="John", day="Monday")) == "Hello, John! Today is Monday."
    lone = PromptTemplate("Hello, {name}!")
    assert str(lone.assemble()) == "Hello, {name}!"
    assert lone.variables == {"name"}
    with pytest.raises(ValueError, match="no variable 'age'"):
        lone.assemble(age=3)


def test_prompt_template_partial_format() -> None:
    """Follows ``TestPromptTemplate.test_partial_format``."""
    from rubriclab.compat.vertex import PromptTemplate

    partial = PromptTemplate("Hello, {name}! Today is {day}.").assemble(name="John")
    assert isinstance(partial, PromptTemplate)
    assert str(partial) == "Hello, John! Today is {day}."
    assert partial.variables == {"day"}
    assert str(partial.assemble(day="Monday")) == "Hello, John! Today is Monday."


def test_evaluate_takes_a_prompt_template_object(mock_judge: Any) -> None:
    """Follows vertexai ``EvalTask.evaluate(prompt_template: Union[str, PromptTemplate])``."""
    from rubriclab.compat.vertex import PromptTemplate

    data = pd.DataFrame({"country": ["France"], "reference": ["Name the capital of France."]})
    seen: list[str] = []
    result = EvalTask(dataset=data, metrics=["exact_match"]).evaluate(
        model=lambda p: seen.append(p) or p,
        prompt_template=PromptTemplate("Name the capital of {country}."),
    )
    assert seen == ["Name the capital of France."]
    assert result.metrics_table["exact_match/score"].tolist() == [1.0]


def test_display_radar_plot_takes_radar_range(
    mock_judge: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    """Follows vertexai ``notebook_utils.display_radar_plot(..., radar_range=(0, 5))``."""
    data = pd.DataFrame({"response": ["the cat"], "reference": ["the cat"]})
    run = EvalTask(dataset=data, metrics=["exact_match"]).evaluate()
    capsys.readouterr()
    notebook_utils.display_radar_plot([("r", run)], metrics=["exact_match"], radar_range=(0, 1))
    assert "r · exact_match" in capsys.readouterr().out
    for bad in [(1, 0), (0,), "ab"]:
        with pytest.raises(ValueError, match="radar_range"):
            notebook_utils.display_radar_plot([("r", run)], radar_range=bad)  # type: ignore[arg-type]
