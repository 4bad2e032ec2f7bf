"""Issue 31: behaviours Vertex's own unit tests (googleapis/python-aiplatform,
tests/unit/vertexai/test_evaluation.py) and its evaluation source define, on the offline mock.

Each test names the upstream test or source function it follows.
"""

from __future__ import annotations

import importlib.util
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


def test_pairwise_metrics_sharing_one_baseline_model(mock_judge: Any) -> None:
    """Beside ``test_evaluate_pairwise_metrics_with_multiple_baseline_models`` (different
    baselines raise): metrics that share one ``baseline_model`` ask it once per row, and the
    table's ``baseline_model_response`` is its answer."""
    seen: list[str] = []

    def baseline(prompt: str) -> str:
        seen.append(prompt)
        return "answer from the baseline"

    data = pd.DataFrame({"prompt": ["Say hi."], "response": ["hi"]})
    metrics = [
        PairwiseMetric(metric=n, metric_prompt_template=PAIRWISE_TEMPLATE, baseline_model=baseline)
        for n in ("vs_a", "vs_b")
    ]
    result = EvalTask(dataset=data, metrics=metrics).evaluate()
    assert seen == ["Say hi."]
    assert result.metrics_table["baseline_model_response"].tolist() == ["answer from the baseline"]


def test_model_with_an_existing_response_column_raises(mock_judge: Any) -> None:
    """Follows ``test_evaluate_response_column_and_model_provided`` and
    ``test_evaluate_invalid_model_and_dataset_input`` (vertexai's sentence)."""
    data = pd.DataFrame({"prompt": ["Say hi."], "response": ["hi"]})
    metric = PointwiseMetric(metric="m", metric_prompt_template="Rate {response}")
    with pytest.raises(
        ValueError,
        match=(
            r"The `model` parameter or `baseline_model` in pairwise metric is specified, but the "
            r"evaluation `dataset` contains model response column or baseline model response "
            r"column `response` to perform bring-your-own-response\(BYOR\) evaluation"
        ),
    ):
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
    [({"prompt": ["q"]}, "`response`"), ({"prompt": ["q"], "response": ["r"]}, "baseline")],
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


# -- metric prompt templates: upstream TestPromptTemplate ------------------------------------------

_TEMPLATE_PARTS: dict[str, Any] = {
    "criteria": {"metric1": "summarization"},
    "input_variables": ["country"],
    "instruction": "hello",
    "metric_definition": "this is eval metric",
    "evaluation_steps": {"step1": "start", "step2": "finish"},
    "few_shot_examples": ["Q: hi A: hello"],
}
_HEAD = (
    "# Instruction\nhello\n\n\n# Evaluation\n## Metric Definition\nthis is eval metric\n\n"
    "## Criteria\nmetric1: summarization\n\n## Rating Rubric\n{rubric}\n\n"
    "## Evaluation Steps\nstep1: start\nstep2: finish\n\n"
    "## Evaluation Examples\nQ: hi A: hello\n\n\n"
)
CRITERIA = {
    "Coherence": "The response presents ideas in a logical and organized manner.",
    "Fluency": "The text flows smoothly and naturally",
}
POINTWISE_RUBRIC = {
    "3": "(Good). Well-written.",
    "2": "(Ok). Adequate writing with decent coherence and fluency.",
    "1": "(Bad). Poorly written.",
}
PAIRWISE_RUBRIC = {
    "A": "Response A answers better than response B.",
    "SAME": "Response A and B answers equally well.",
    "B": "Response B answers better than response A.",
}
STEPS = {"STEP 1": "Assess grammar correctness", "STEP 2": "Assess word choice and flow"}


def test_pointwise_metric_prompt_template_text() -> None:
    """Follows ``TestPromptTemplate.test_pointwise_metric_prompt_template`` (its expected text,
    section for section)."""
    from rubriclab.compat.vertex import PointwiseMetricPromptTemplate

    template = PointwiseMetricPromptTemplate(
        rating_rubric={"1": "good", "0": "bad"}, **_TEMPLATE_PARTS
    )
    expected = _HEAD.format(rubric="0: bad\n1: good") + (
        "# User Inputs and AI-generated Response\n## User Inputs\n### country\n{country}\n"
        "\n\n\n\n## AI-generated Response\n{response}"
    )
    assert str(template) == expected
    assert template.variables == {"country", "response"}
    assert template.prompt_data == expected


def test_pairwise_metric_prompt_template_text() -> None:
    """Follows ``TestPromptTemplate.test_pairtwise_metric_prompt_template``."""
    from rubriclab.compat.vertex import PairwiseMetricPromptTemplate

    template = PairwiseMetricPromptTemplate(
        rating_rubric={"A": "good", "B": "good"}, **_TEMPLATE_PARTS
    )
    expected = _HEAD.format(rubric="A: good\nB: good") + (
        "# User Inputs and AI-generated Responses\n## User Inputs\n### country\n{country}\n\n"
        "\n## AI-generated Responses\n### Response A\n{baseline_model_response}\n\n"
        "### Response B\n{response}"
    )
    assert str(template) == expected
    assert template.variables == {"country", "baseline_model_response", "response"}


def _defaults_text(instruction: str, steps: dict[str, str], rubric: dict[str, str]) -> str:
    lines = "\n".join(f"{k}: {v}" for k, v in sorted(steps.items()))
    scale = "\n".join(f"{k}: {v}" for k, v in sorted(rubric.items()))
    return (
        f"# Instruction\n{instruction}\n\n\n# Evaluation\n## Criteria\n"
        "Coherence: The response presents ideas in a logical and organized manner.\n"
        f"Fluency: The text flows smoothly and naturally\n\n## Rating Rubric\n{scale}\n\n"
        f"## Evaluation Steps\n{lines}\n\n\n"
    )


def test_pointwise_metric_prompt_template_with_default_values() -> None:
    """Follows ``test_pointwise_metric_prompt_template_with_default_values``: the same layout
    (sorted rubric, default steps, empty inputs section); the default instruction and steps
    are our own words, not Google's, so they are read from the template's getters."""
    from rubriclab.compat.vertex import PointwiseMetricPromptTemplate

    template = PointwiseMetricPromptTemplate(criteria=CRITERIA, rating_rubric=POINTWISE_RUBRIC)
    head = _defaults_text(
        template.get_default_pointwise_instruction(),
        template.get_default_pointwise_evaluation_steps(),
        POINTWISE_RUBRIC,
    )
    tail = "# User Inputs and AI-generated Response\n## User Inputs\n\n\n\n## AI-generated Response\n{response}"
    assert str(template) == head + tail
    assert "1: (Bad). Poorly written.\n2: (Ok)" in str(template)  # sorted, as vertexai
    assert template.variables == {"response"}


def test_pairwise_metric_prompt_template_with_default_values() -> None:
    """Follows ``test_pairtwise_metric_prompt_template_with_default_values``."""
    from rubriclab.compat.vertex import PairwiseMetricPromptTemplate

    template = PairwiseMetricPromptTemplate(criteria=CRITERIA, rating_rubric=PAIRWISE_RUBRIC)
    head = _defaults_text(
        template.get_default_pairwise_instruction(),
        template.get_default_pairwise_evaluation_steps(),
        PAIRWISE_RUBRIC,
    )
    tail = (
        "# User Inputs and AI-generated Responses\n## User Inputs\n\n## AI-generated Responses\n"
        "### Response A\n{baseline_model_response}\n\n### Response B\n{response}"
    )
    assert str(template) == head + tail
    assert "A: Response A answers better than response B.\nB: " in str(template)
    assert len(template.get_default_pairwise_evaluation_steps()) == 5


def test_complex_prompt_template_variables() -> None:
    """Follows ``TestPromptTemplate.test_complex_prompt_template_variables``."""
    from rubriclab.compat.vertex import PromptTemplate

    text = (
        'Metric prompt template\n{\n  "Function API spec": You may use default python '
        'libraries,\n  "example": test test\n}\nOutput JSON:\n{\n  "is_the_response_valid": '
        '[valid or invalid],\n  "reasoning":\n}\nHere are some actual variables:\n'
        "{var_1} {var2} {_var_3} {\n        var_5_mutli_line\n} {VAR_6} {7_var} {{var_9}}\n"
    )
    assert PromptTemplate(text).variables == {"var_1", "var2", "_var_3", "VAR_6", "var_9"}


def test_metric_prompt_template_bad_parts_are_refused() -> None:
    """Bad input fails at construction with the argument's name (vertexai has no check)."""
    from rubriclab.compat.vertex import PointwiseMetricPromptTemplate

    with pytest.raises(ValueError, match="criteria"):
        PointwiseMetricPromptTemplate(criteria={}, rating_rubric={"1": "ok"})
    with pytest.raises(ValueError, match="input variable 'a b'"):
        PointwiseMetricPromptTemplate(
            criteria={"c": "x"}, rating_rubric={"1": "ok"}, input_variables=["a b"]
        )


# -- MetricPromptTemplateExamples -------------------------------------------------------------

_POINTWISE_EXAMPLES = [
    "coherence",
    "fluency",
    "safety",
    "groundedness",
    "instruction_following",
    "verbosity",
    "text_quality",
    "summarization_quality",
    "question_answering_quality",
    "multi_turn_chat_quality",
    "multi_turn_safety",
]


def test_metric_prompt_template_examples_names_and_scales() -> None:
    """vertexai's ``MetricPromptTemplateExamples``: the same names, in the same order, the same
    rating scales and input variables (its module ``metric_prompt_template_examples``)."""
    from rubriclab.compat.vertex import MetricPromptTemplateExamples as Examples
    from rubriclab.compat.vertex.mockclassic import rating_scale

    names = Examples.list_example_metric_names()
    assert names == _POINTWISE_EXAMPLES + [f"pairwise_{n}" for n in _POINTWISE_EXAMPLES]
    scales = {n: [k for k, _ in rating_scale(Examples.get_prompt_template(n)) or []] for n in names}
    assert scales["fluency"] == ["1", "2", "3", "4", "5"]
    assert scales["safety"] == scales["groundedness"] == ["0", "1"]
    assert scales["verbosity"] == ["0", "1", "2"]
    assert Examples.Pointwise.FLUENCY.metric_name == "fluency"
    assert Examples.Pairwise.SAFETY.metric_name == "pairwise_safety"
    assert Examples.Pointwise.MULTI_TURN_SAFETY.placeholders == ["history", "prompt", "response"]
    assert set(Examples.Pairwise.COHERENCE.placeholders) == {
        "prompt",
        "baseline_model_response",
        "response",
    }
    assert "A: Response A is better" in Examples.get_prompt_template("pairwise_fluency")
    with pytest.raises(KeyError, match="no example metric named 'fluent'"):
        Examples.get_prompt_template("fluent")


@pytest.fixture
def scripted_judge(fake_judge: Any) -> Any:
    """The fake judge over real HTTP, set as the session judge; tests script its answers."""
    rl.set_judge(rl.Judge(fake_judge.url, model="judge-model", max_retries=0))
    try:
        yield fake_judge
    finally:
        rl.set_judge(None)


def _last(body: dict[str, Any]) -> str:
    return str(body["messages"][-1]["content"])


ALL_INCLUDED = pd.DataFrame(
    {
        "prompt": ["test_prompt", "text_prompt"],
        "response": ["test", "text"],
        "reference": ["test", "ref"],
        "context": ["test", "context"],
        "instruction": ["test", "instruction"],
        "source": ["test", "source"],
    }
)
WITHOUT_RESPONSE = pd.DataFrame(
    {
        "prompt": ["test", "prompt"],
        "reference": ["test", "ref"],
        "context": ["test", "context"],
        "instruction": ["test", "instruction"],
    }
)


def _score_by_response(body: dict[str, Any]) -> str:
    """What upstream's mocked service answers: 5 for the row whose response is 'test', else 4."""
    text = _last(body)
    score = 5 if text.rstrip().endswith("## AI-generated Response\ntest") else 4
    return f"Score: {score}\nExplanation: explanation"


def test_compute_pointwise_metrics_without_model_inference(scripted_judge: Any) -> None:
    """Follows ``test_compute_pointwise_metrics_without_model_inference`` (and
    ``test_compute_pointwise_metrics`` with a PointwiseMetricPromptTemplate)."""
    from rubriclab.compat.vertex import MetricPromptTemplateExamples as Examples
    from rubriclab.compat.vertex import PointwiseMetricPromptTemplate

    scripted_judge.responder = _score_by_response
    own = PointwiseMetric(
        metric="test_pointwise_metric",
        metric_prompt_template=PointwiseMetricPromptTemplate(
            metric_definition="You will be assessing Text Quality",
            criteria=CRITERIA,
            rating_rubric=POINTWISE_RUBRIC,
            evaluation_steps=STEPS,
        ),
    )
    for metric in (Examples.Pointwise.SUMMARIZATION_QUALITY, own):
        name = metric.metric_name
        result = EvalTask(dataset=ALL_INCLUDED, metrics=[metric]).evaluate()
        assert result.summary_metrics["row_count"] == 2
        assert result.summary_metrics[f"{name}/mean"] == 4.5
        assert result.summary_metrics[f"{name}/std"] == pytest.approx(0.7, 0.1)
        table = result.metrics_table
        assert set(table.columns) == set(ALL_INCLUDED.columns) | {
            f"{name}/score",
            f"{name}/explanation",
        }
        assert table["response"].equals(ALL_INCLUDED["response"])
        assert table[f"{name}/score"].tolist() == [5, 4]
        assert table[f"{name}/explanation"].tolist() == ["explanation", "explanation"]


def test_compute_pointwise_metrics_free_string(scripted_judge: Any) -> None:
    """Follows ``test_compute_pointwise_metrics_free_string``: ``metric_column_mapping``
    fills ``{abc}`` from the prompt column."""
    seen: list[str] = []

    def answer(body: dict[str, Any]) -> str:
        seen.append(_last(body))
        return f"Score: {5 if _last(body) == 'abc: test_prompt' else 4}\nExplanation: explanation"

    scripted_judge.responder = answer
    metric = PointwiseMetric(
        metric="test_pointwise_metric_str", metric_prompt_template="abc: {abc}"
    )
    task = EvalTask(dataset=ALL_INCLUDED, metrics=[metric], metric_column_mapping={"abc": "prompt"})
    result = task.evaluate()
    assert sorted(seen) == ["abc: test_prompt", "abc: text_prompt"]
    assert result.summary_metrics["test_pointwise_metric_str/mean"] == 4.5
    assert set(result.metrics_table.columns) == set(ALL_INCLUDED.columns) | {
        "test_pointwise_metric_str/score",
        "test_pointwise_metric_str/explanation",
    }
    assert sorted(result.metrics_table["test_pointwise_metric_str/score"]) == [4, 5]


def test_compute_pointwise_metrics_metric_prompt_template_example(scripted_judge: Any) -> None:
    """Follows ``test_compute_pointwise_metrics_metric_prompt_template_example``: a model
    (here a function) writes the responses from ``prompt_template``, then the example metric."""
    from rubriclab.compat.vertex import MetricPromptTemplateExamples as Examples

    scripted_judge.responder = lambda body: (
        "Score: 5\nExplanation: explanation"
        if "### prompt\ntest test prompt template test" in _last(body)
        else "Score: 4\nExplanation: explanation"
    )
    prompts: list[str] = []
    result = EvalTask(
        dataset=WITHOUT_RESPONSE, metrics=[Examples.Pointwise.SUMMARIZATION_QUALITY]
    ).evaluate(
        model=lambda p: prompts.append(p) or "test_response",
        prompt_template="{instruction} test prompt template {context}",
    )
    assert prompts == ["test test prompt template test", "instruction test prompt template context"]
    assert result.summary_metrics["summarization_quality/mean"] == 4.5
    assert set(result.metrics_table.columns) == {
        "context",
        "instruction",
        "reference",
        "prompt",
        "response",
        "summarization_quality/score",
        "summarization_quality/explanation",
    }
    assert result.metrics_table["response"].tolist() == ["test_response", "test_response"]
    assert sorted(result.metrics_table["summarization_quality/score"]) == [4, 5]


def test_compute_pairwise_metrics_without_model_inference(scripted_judge: Any) -> None:
    """Follows ``test_compute_pairwise_metrics_without_model_inference``: columns, choices
    and Vertex's two summary keys (win rates 0.5 / 0.5)."""
    from rubriclab.compat.vertex import MetricPromptTemplateExamples as Examples

    def answer(body: dict[str, Any]) -> str:
        """Upstream's mocked answers: BASELINE on row 1, CANDIDATE on row 2, decided by the
        responses themselves (not their positions), so both orders agree."""
        text = _last(body)
        a = text.split("### Response A\n", 1)[1].split("\n", 1)[0]
        winner = "baseline" if "\nbaseline\n" in text + "\n" else "text"
        return f"pairwise_choice: {'A' if a == winner else 'B'}\nexplanation: explanation"

    scripted_judge.responder = answer
    data = ALL_INCLUDED.copy()
    data.insert(1, "baseline_model_response", ["baseline", "response"])
    result = EvalTask(dataset=data, metrics=[Examples.Pairwise.SUMMARIZATION_QUALITY]).evaluate()
    name = "pairwise_summarization_quality"
    assert set(result.metrics_table.columns) == set(data.columns) | {
        f"{name}/pairwise_choice",
        f"{name}/explanation",
    }
    assert result.metrics_table[f"{name}/pairwise_choice"].tolist() == ["BASELINE", "CANDIDATE"]
    assert result.metrics_table[f"{name}/explanation"].tolist() == ["explanation"] * 2
    assert set(result.summary_metrics) == {
        "row_count",
        f"{name}/candidate_model_win_rate",
        f"{name}/baseline_model_win_rate",
    }
    assert result.summary_metrics[f"{name}/candidate_model_win_rate"] == 0.5
    assert result.summary_metrics[f"{name}/baseline_model_win_rate"] == 0.5
    # ours stay on the rubriclab result
    assert result.result.summary_metrics[f"{name}/win_rate"] == 0.5


# -- CustomMetric ------------------------------------------------------------------------------


def test_custom_metric_runs_locally() -> None:
    """vertexai ``CustomMetric(name, metric_function)`` (``_evaluation._compute_custom_metrics``):
    the score under the metric's name becomes ``{name}/score``, other keys ``{name}/key``."""
    from rubriclab.compat.vertex import CustomMetric

    def length_ratio(row: dict[str, Any]) -> dict[str, Any]:
        ratio = len(row["response"]) / len(row["reference"])
        return {"length_ratio": ratio, "explanation": f"{len(row['response'])} chars"}

    data = pd.DataFrame({"response": ["abcd", "ab"], "reference": ["ab", "ab"]})
    metric = CustomMetric(name="length_ratio", metric_function=length_ratio)
    result = EvalTask(dataset=data, metrics=[metric, "exact_match"]).evaluate()
    table = result.metrics_table
    assert list(table.columns) == [
        "response",
        "reference",
        "length_ratio/score",
        "length_ratio/explanation",
        "exact_match/score",
    ]
    assert table["length_ratio/score"].tolist() == [2.0, 1.0]
    assert table["length_ratio/explanation"].tolist() == ["4 chars", "2 chars"]
    assert result.summary_metrics["length_ratio/mean"] == 1.5
    assert result.summary_metrics["length_ratio/std"] == pytest.approx(0.7071, abs=1e-4)
    assert result.metadata["is_mock"] is False


def test_custom_metric_failures() -> None:
    """A raising function is that row's error (no score, never 0); a result without the
    metric's name raises KeyError, as ``_compute_custom_metrics`` does."""
    from rubriclab.compat.vertex import CustomMetric

    def flaky(row: dict[str, Any]) -> dict[str, Any]:
        if row["response"] == "boom":
            raise RuntimeError("no luck")
        return {"flaky": 1.0}

    data = pd.DataFrame({"response": ["ok", "boom"]})
    result = EvalTask(dataset=data, metrics=[CustomMetric("flaky", flaky)]).evaluate()
    scores = result.metrics_table["flaky/score"].tolist()
    assert scores[0] == 1.0 and pd.isna(scores[1])
    assert "RuntimeError: no luck" in result.metrics_table["flaky/error"][1]
    assert result.summary_metrics["flaky/mean"] == 1.0
    wrong = CustomMetric("named", lambda row: {"other": 1})
    with pytest.raises(KeyError, match="Custom metric score `named` not found"):
        EvalTask(dataset=data, metrics=[wrong]).evaluate()


# -- load_dataset: upstream TestEvaluationUtils ------------------------------------------------


def test_load_dataset_from_dataframe_and_dict() -> None:
    """Follows ``test_load_dataset_from_dataframe`` and ``test_load_dataset_from_dict``."""
    from rubriclab.compat.vertex import utils

    data = {"col1": [1, 2], "col2": ["a", "b"]}
    frame = pd.DataFrame(data)
    loaded = utils.load_dataset(frame)
    assert loaded.equals(frame) and loaded is not frame
    assert utils.load_dataset(data).to_dict("list") == data


def test_load_dataset_from_local_files(tmp_path: Any) -> None:
    """Follows ``test_load_dataset_from_gcs_jsonl`` / ``test_load_dataset_from_gcs_csv`` with the same file contents
    (blank lines included), read from local files; parquet too."""
    from rubriclab.compat.vertex import utils

    jsonl = tmp_path / "data.jsonl"
    jsonl.write_text(
        '{"prompt": "prompt", "reference": "reference"}\n\n{"prompt":"test", "reference": "test"}\n\n'
    )
    assert utils.load_dataset(str(jsonl)).to_dict("list") == {
        "prompt": ["prompt", "test"],
        "reference": ["reference", "test"],
    }
    csv = tmp_path / "data.csv"
    csv.write_text("reference,context,instruction\ntest,test,test\n\ntext,text,text\n\n")
    assert utils.load_dataset(csv).to_dict("list") == {
        "reference": ["test", "text"],
        "context": ["test", "text"],
        "instruction": ["test", "text"],
    }
    parquet = tmp_path / "data.parquet"
    pd.DataFrame({"prompt": ["p"], "response": ["r"]}).to_parquet(parquet)
    assert utils.load_dataset(str(parquet)).to_dict("list") == {"prompt": ["p"], "response": ["r"]}
    with pytest.raises(ValueError, match="Unsupported file type: txt"):
        utils.load_dataset(str(tmp_path / "data.txt"))
    with pytest.raises(TypeError, match="Unsupported dataset type"):
        utils.load_dataset(42)  # type: ignore[arg-type]


_JSONL = (
    '{"prompt": "prompt", "reference": "reference"}\n\n{"prompt":"test", "reference": "test"}\n\n'
)
_CSV = "reference,context,instruction\ntest,test,test\n\ntext,text,text\n\n"


@pytest.fixture
def memory_store() -> Any:
    """fsspec's real in-memory file system under a folder of this test's own, removed after."""
    fsspec = pytest.importorskip("fsspec")
    import uuid

    fs = fsspec.filesystem("memory")
    root = f"memory://rubriclab-{uuid.uuid4().hex}"
    try:
        yield fs, root
    finally:
        if fs.exists(root):
            fs.rm(root, recursive=True)


def test_load_dataset_from_remote_files_through_fsspec(memory_store: Any) -> None:
    """Follows ``test_load_dataset_from_gcs_jsonl`` / ``test_load_dataset_from_gcs_csv`` with the same file contents,
    at fsspec URLs (``memory://`` stands for ``gs://``: the same fsspec.open, no Google
    account needed); parquet and json too."""
    from rubriclab.compat.vertex import utils

    fs, root = memory_store
    with fs.open(f"{root}/test_file.jsonl", "wb") as fh:
        fh.write(_JSONL.encode())
    with fs.open(f"{root}/test_file.csv", "wb") as fh:
        fh.write(_CSV.encode())
    frame = pd.DataFrame({"prompt": ["p", "q"], "response": ["r", "s"]})
    with fs.open(f"{root}/test_file.parquet", "wb") as fh:
        frame.to_parquet(fh)
    with fs.open(f"{root}/test_file.json", "wb") as fh:
        fh.write(frame.to_json(orient="records").encode())
    assert utils.load_dataset(f"{root}/test_file.jsonl").to_dict("list") == {
        "prompt": ["prompt", "test"],
        "reference": ["reference", "test"],
    }
    assert utils.load_dataset(f"{root}/test_file.csv").to_dict("list") == {
        "reference": ["test", "text"],
        "context": ["test", "text"],
        "instruction": ["test", "text"],
    }
    assert utils.load_dataset(f"{root}/test_file.parquet").equals(frame)
    assert utils.load_dataset(f"{root}/test_file.json").equals(frame)
    with pytest.raises(ValueError, match=r"data file memory://\S+/absent.jsonl does not exist"):
        utils.load_dataset(f"{root}/absent.jsonl")
    with pytest.raises(ValueError, match="Unsupported file type: txt"):
        utils.load_dataset(f"{root}/test_file.txt")


def test_load_dataset_from_gcs_jsonl_and_csv(fake_gcs: Any) -> None:
    """Follows ``test_load_dataset_from_gcs_jsonl`` / ``test_load_dataset_from_gcs_csv`` with their own ``gs://`` URLs:
    the gs protocol served by fsspec's memory file system, where gcsfs would plug in."""
    from rubriclab.compat.vertex import utils

    with fake_gcs.open("gs://test_bucket/test_file.jsonl", "wb") as fh:
        fh.write(_JSONL.encode())
    with fake_gcs.open("gs://test_bucket/test_file.csv", "wb") as fh:
        fh.write(_CSV.encode())
    assert utils.load_dataset("gs://test_bucket/test_file.jsonl").to_dict("list") == {
        "prompt": ["prompt", "test"],
        "reference": ["reference", "test"],
    }
    assert utils.load_dataset("gs://test_bucket/test_file.csv").to_dict("list") == {
        "reference": ["test", "text"],
        "context": ["test", "text"],
        "instruction": ["test", "text"],
    }
    # EvalTask(dataset=<URL>) loads it the same way, as vertexai's EvalTask does
    task = EvalTask(dataset="gs://test_bucket/test_file.csv", metrics=["exact_match"])
    assert task.dataset.to_dict("list") == {
        "reference": ["test", "text"],
        "context": ["test", "text"],
        "instruction": ["test", "text"],
    }
    with pytest.raises(NotImplementedError, match="bq extract"):
        EvalTask(dataset="bq://project-id.dataset.table_name", metrics=["exact_match"])


def test_load_dataset_names_the_package_a_remote_store_needs() -> None:
    """``gs://`` without gcsfs (vertexai's own store): one line saying what to install."""
    pytest.importorskip("fsspec")
    if importlib.util.find_spec("gcsfs") is not None:
        pytest.skip("gcsfs is installed: gs:// would be read")
    from rubriclab.compat.vertex import utils

    with pytest.raises(ImportError) as info:
        utils.load_dataset("gs://test_bucket/test_file.jsonl")
    message = str(info.value)
    assert message == (
        "load_dataset('gs://test_bucket/test_file.jsonl'): reading gs:// needs gcsfs: "
        "pip install gcsfs"
    )
    with pytest.raises(ValueError, match="nosuch:// is not a file system fsspec knows"):
        utils.load_dataset("nosuch://bucket/data.csv")


def test_load_dataset_from_bigquery_is_refused_with_the_way_out() -> None:
    """``test_load_dataset_from_bigquery`` needs Google Cloud: a clear NotImplementedError
    saying how to export the table."""
    from rubriclab.compat.vertex import utils

    with pytest.raises(NotImplementedError, match="bq extract"):
        utils.load_dataset("bq://project-id.dataset.table_name")


# -- ROUGE -------------------------------------------------------------------------------------


def test_rouge_metric_with_vertex_parameters() -> None:
    """Follows ``test_compute_automatic_metrics_with_custom_metric_spec``: ``Rouge(rouge_type=
    "rougeLsum", use_stemmer=True, split_summaries=True)`` gives a ``rouge/score`` column and
    ``rouge/mean`` / ``rouge/std``; the scores are ROUGE's own (upstream's 1 and 0.5 are its
    mocked service's, which these texts cannot give: 'test_response' against 'test' is 2/3)."""
    from rubriclab.compat.vertex import Rouge

    metric = Rouge(rouge_type="rougeLsum", use_stemmer=True, split_summaries=True)
    assert (metric.rouge_type, metric.use_stemmer, metric.split_summaries) == (
        "rougeLsum",
        True,
        True,
    )
    result = EvalTask(dataset=WITHOUT_RESPONSE, metrics=[metric]).evaluate(
        model=lambda p: "test_response"
    )
    assert set(result.metrics_table.columns) == set(WITHOUT_RESPONSE.columns) | {
        "response",
        "rouge/score",
    }
    assert result.metrics_table["rouge/score"].tolist() == [pytest.approx(2 / 3), 0.0]
    assert result.summary_metrics["rouge/mean"] == pytest.approx(1 / 3)
    with pytest.raises(ValueError, match="rouge_type 'rouge10'"):
        Rouge(rouge_type="rouge10")


def test_rouge_stemmer_and_sentence_split_change_the_score() -> None:
    """``use_stemmer`` and ``split_summaries`` are not ignored: each changes a score that
    should change (negative control: the same text scores 1.0 either way)."""
    from rubriclab.compat.vertex import Rouge

    def score(metric: Any, response: str, reference: str) -> float:
        return float(metric.score_one(response, reference).score)

    plain = Rouge(rouge_type="rouge1")
    stem = Rouge(rouge_type="rouge1", use_stemmer=True)
    assert score(plain, "cats running", "cat runs") == 0.0
    assert score(stem, "cats running", "cat runs") == 1.0
    joined = Rouge(rouge_type="rougeLsum")
    split = Rouge(rouge_type="rougeLsum", split_summaries=True)
    response, reference = "a b c. x y z.", "x y z. a b c."
    assert score(split, response, reference) > score(joined, response, reference)
    assert score(split, reference, reference) == score(joined, reference, reference) == 1.0


def test_rouge_string_metrics_include_rouge_2() -> None:
    """vertexai's string metrics ``rouge_1``, ``rouge_2``, ``rouge_l``, ``rouge_l_sum``."""
    data = pd.DataFrame({"response": ["the cat sat on the mat"], "reference": ["the cat sat"]})
    names = ["rouge_1", "rouge_2", "rouge_l", "rouge_l_sum"]
    table = EvalTask(dataset=data, metrics=names).evaluate().metrics_table
    # 6 vs 3 tokens: rouge1 P=3/6 R=1 -> 2/3; bigrams 5 vs 2, 2 shared -> P=2/5 R=1 -> 4/7
    assert table["rouge_1/score"].tolist() == [pytest.approx(2 / 3)]
    assert table["rouge_2/score"].tolist() == [pytest.approx(4 / 7)]
    assert table["rouge_l/score"].tolist() == [pytest.approx(2 / 3)]
    assert table["rouge_l_sum/score"].tolist() == [pytest.approx(2 / 3)]


# -- evaluate() errors: upstream TestEvaluationErrors ------------------------------------------


def test_evaluate_pairwise_metrics_with_multiple_baseline_models() -> None:
    """Follows ``test_evaluate_pairwise_metrics_with_multiple_baseline_models``: ValueError
    before any model or judge call."""
    calls: list[str] = []
    metrics = [
        PairwiseMetric(
            metric=f"pairwise_metric_{n}",
            metric_prompt_template="test_prompt_template",
            baseline_model=lambda p, n=n: calls.append(f"{n}") or "x",
        )
        for n in (1, 2)
    ]
    task = EvalTask(dataset=ALL_INCLUDED.drop(columns=["response"]), metrics=metrics)
    with pytest.raises(
        ValueError, match="Not all `PairwiseMetric` instances have the same `baseline_model`"
    ):
        task.evaluate()
    assert calls == []


def test_evaluate_empty_and_duplicate_metrics() -> None:
    """Follows ``test_evaluate_empty_metrics``, ``test_evaluate_duplicate_string_metric`` and
    ``test_evaluate_duplicate_metric_instances``: EvalTask is built, ``evaluate()`` raises."""
    from rubriclab.compat.vertex import MetricPromptTemplateExamples as Examples

    with pytest.raises(ValueError, match=r"Metrics cannot be empty\."):
        EvalTask(dataset=ALL_INCLUDED, metrics=[]).evaluate()
    twice = EvalTask(dataset=ALL_INCLUDED, metrics=["exact_match", "exact_match"])
    with pytest.raises(ValueError, match="Duplicate string metric name found: 'exact_match'"):
        twice.evaluate()
    same = Examples.Pointwise.SUMMARIZATION_QUALITY
    both = EvalTask(dataset=ALL_INCLUDED, metrics=[same, same])
    with pytest.raises(
        ValueError,
        match="Duplicate Metric instances of the same metric name found: 'summarization_quality'",
    ):
        both.evaluate()


def test_evaluate_invalid_metrics() -> None:
    """Follows ``test_evaluate_invalid_metrics``."""
    with pytest.raises(ValueError, match=r"Metric name: invalid_metric is not supported\."):
        EvalTask(dataset=ALL_INCLUDED, metrics=["invalid_metric"]).evaluate()


# -- rubric generation: upstream TestRubricGeneration -----------------------------------------

PROMPT_RESPONSE = pd.DataFrame(
    {
        "prompt": ["test_prompt", "text_prompt", "test_prompt_3"],
        "response": ["test", "text", "test_response_3"],
    }
)
GENERATED = '```json{"questions": ["test_rubric1", "test_rubric2"]}```'


def _with_rubrics(**extra: list[Any]) -> pd.DataFrame:
    frame = PROMPT_RESPONSE.copy()
    frame["rubrics"] = pd.Series([["test_rubric1", "test_rubric2"]] * 3, dtype=object)
    for key, values in extra.items():
        frame[key] = pd.Series(values, dtype=object)
    return frame


def _rubric_metric(model: Any, parsing_fn: Any = None) -> Any:
    from rubriclab.compat.vertex import MetricPromptTemplateExamples as Examples
    from rubriclab.compat.vertex import RubricBasedMetric, RubricGenerationConfig

    return RubricBasedMetric(
        generation_config=RubricGenerationConfig(
            prompt_template="Generate rubrics for the given prompt: {prompt}",
            model=model,
            parsing_fn=parsing_fn,
        ),
        critique_metric=Examples.Pointwise.COHERENCE,
    )


def test_rubric_generation_succeeds_with_a_model_function() -> None:
    """Follows ``test_rubric_generation_succeeds`` and ``test_rubric_generation_default_parsing_fn``:
    ``RubricGenerationConfig(model=<a model of one's own>)``, the frame exactly as vertexai's."""
    asked: list[str] = []
    out = _rubric_metric(lambda p: asked.append(p) or GENERATED).generate_rubrics(PROMPT_RESPONSE)
    assert out.equals(_with_rubrics())
    assert asked == [f"Generate rubrics for the given prompt: {p}" for p in PROMPT_RESPONSE.prompt]


def test_rubric_generation_model_object_with_text() -> None:
    """A model whose reply has ``.text`` (as a Gemini response) works as vertexai's does."""

    class Reply:
        text = GENERATED

    out = _rubric_metric(lambda p: Reply()).generate_rubrics(PROMPT_RESPONSE)
    assert out.equals(_with_rubrics())


def test_rubric_generation_skipped() -> None:
    """Follows ``test_rubric_generation_skipped``: existing rubrics, no model call."""
    asked: list[str] = []
    _rubric_metric(lambda p: asked.append(p) or GENERATED).generate_rubrics(_with_rubrics())
    assert asked == []


def test_rubric_generation_parsing_str_and_additional_fields() -> None:
    """Follows ``test_rubric_generation_parsing_str`` and
    ``test_rubric_generation_parsing_additional_fields``."""
    listed = _rubric_metric(
        lambda p: GENERATED, parsing_fn=lambda r: ["test_rubric1", "test_rubric2"]
    )
    assert listed.generate_rubrics(PROMPT_RESPONSE).equals(_with_rubrics())
    more = '```json{"questions": ["test_rubric1", "test_rubric2"], "desc": "test_desc"}```'
    out = _rubric_metric(lambda p: more).generate_rubrics(PROMPT_RESPONSE)
    assert out.equals(_with_rubrics(desc=["test_desc"] * 3))


def test_rubric_generation_model_failure_is_the_rows_error() -> None:
    """A model function that raises leaves that row's rubrics empty and says why (the error
    columns appear only then)."""

    def model(prompt: str) -> str:
        if "text_prompt" in prompt:
            raise RuntimeError("quota")
        return GENERATED

    out = _rubric_metric(model).generate_rubrics(PROMPT_RESPONSE)
    assert out["rubrics"][1] is None
    assert "RuntimeError: quota" in out["rubric_generation_error"][1]
    assert out["rubric_generation_error"][0] is None


def test_create_eval_task() -> None:
    """Follows ``test_create_eval_task``: the task keeps the dataset and the metrics as given."""
    from rubriclab.compat.vertex import MetricPromptTemplateExamples as Examples

    metrics = (
        "exact_match",
        "bleu",
        "rouge_1",
        "rouge_2",
        "rouge_l",
        "rouge_l_sum",
        Examples.Pointwise.COHERENCE,
        Examples.Pointwise.FLUENCY,
        Examples.Pointwise.SAFETY,
        Examples.Pointwise.GROUNDEDNESS,
        Examples.Pointwise.SUMMARIZATION_QUALITY,
        Examples.Pointwise.VERBOSITY,
        Examples.Pointwise.QUESTION_ANSWERING_QUALITY,
    )
    task = EvalTask(dataset=ALL_INCLUDED, metrics=metrics, experiment="test-experiment")
    assert task.dataset.equals(ALL_INCLUDED)
    assert task.metrics == metrics
    assert task.experiment == "test-experiment"


@pytest.mark.parametrize(
    ("columns", "missing"), [({"prompt": ["q"]}, "response"), ({"response": ["r"]}, "reference")]
)
def test_evaluate_response_or_reference_column_not_provided(
    columns: dict[str, list[str]], missing: str
) -> None:
    """Follows ``test_evaluate_response_column_not_provided`` and
    ``test_evaluate_reference_column_not_provided``: KeyError with vertexai's words."""
    import re

    task = EvalTask(dataset=pd.DataFrame(columns), metrics=["exact_match"])
    expected = (
        f"Required column `{missing}` not found in the evaluation dataset. The columns in the "
        f"evaluation dataset are {list(columns)}"
    )
    with pytest.raises(KeyError, match=re.escape(expected)):
        task.evaluate()


def test_compute_exact_match_metric() -> None:
    """Follows ``test_compute_exact_match_metric``: exactly vertexai's columns, in its order,
    and its summary values."""
    data = pd.DataFrame({"response": ["test", "text"], "reference": ["test", "ref"]})
    result = EvalTask(dataset=data, metrics=["exact_match"]).evaluate()
    assert result.summary_metrics["row_count"] == 2
    assert result.summary_metrics["exact_match/mean"] == 0.5
    assert result.summary_metrics["exact_match/std"] == pytest.approx(0.7, 0.1)
    assert list(result.metrics_table.columns) == ["response", "reference", "exact_match/score"]
    assert result.metrics_table[["response", "reference"]].equals(data)
    assert result.metrics_table["exact_match/score"].tolist() == [1.0, 0.0]
    assert set(result.summary_metrics) == {"row_count", "exact_match/mean", "exact_match/std"}


def _raw_metric(pairwise: bool) -> Any:
    from rubriclab.compat.vertex import (
        CustomOutputConfig,
        PairwiseMetricPromptTemplate,
        PointwiseMetricPromptTemplate,
    )

    kind, template, rubric = (
        (PairwiseMetric, PairwiseMetricPromptTemplate, PAIRWISE_RUBRIC)
        if pairwise
        else (PointwiseMetric, PointwiseMetricPromptTemplate, POINTWISE_RUBRIC)
    )
    return kind(
        metric=f"test_{'pairwise' if pairwise else 'pointwise'}_metric",
        metric_prompt_template=template(
            metric_definition="You will be assessing Text Quality",
            criteria=CRITERIA,
            rating_rubric=rubric,
            evaluation_steps=STEPS,
        ),
        custom_output_config=CustomOutputConfig(return_raw_output=True),
        autorater_config=None,
    )


@pytest.mark.parametrize("pairwise", [False, True])
def test_compute_metrics_with_raw_output(scripted_judge: Any, pairwise: bool) -> None:
    """Follows ``test_compute_pointwise_metrics_with_raw_output`` and
    ``test_compute_pairwise_metrics_with_raw_output``: ``return_raw_output`` without a parser
    gives only ``{metric}/raw_output``, the judge's texts per row."""
    from rubriclab.compat.vertex import AutoraterConfig

    answers = iter(f"raw_output_sample_{n}" for n in range(1, 100))
    scripted_judge.responder = lambda body: next(answers)
    data = (
        pd.DataFrame(
            {
                "prompt": ["test_prompt", "text_prompt"],
                "response": ["test", "text"],
                "baseline_model_response": ["test", "ref"],
                "context": ["test", "context"],
                "instruction": ["test", "instruction"],
            }
        )
        if pairwise
        else ALL_INCLUDED
    )
    metric = _raw_metric(pairwise)
    config = AutoraterConfig(sampling_count=2, flip_enabled=False)
    result = EvalTask(dataset=data, metrics=[metric], autorater_config=config).evaluate()
    name = metric.metric_name
    assert result.summary_metrics["row_count"] == 2
    assert set(result.metrics_table.columns) == set(data.columns) | {f"{name}/raw_output"}
    raw = result.metrics_table[f"{name}/raw_output"].tolist()
    assert sorted(text for row in raw for text in row) == [
        f"raw_output_sample_{n}" for n in range(1, 5)
    ]
    assert all(len(row) == 2 for row in raw)


@pytest.mark.parametrize("sampling_count", [-1, 33])
def test_pairwise_invalid_sampling_count(mock_judge: Any, sampling_count: int) -> None:
    """Follows ``test_pairwise_invalid_sampling_count``: the config is built, ``evaluate()``
    raises vertexai's ValueError before any call."""
    import re

    from rubriclab.compat.vertex import AutoraterConfig
    from rubriclab.compat.vertex import MetricPromptTemplateExamples as Examples

    task = EvalTask(
        dataset=ALL_INCLUDED,
        metrics=[Examples.Pairwise.SUMMARIZATION_QUALITY],
        autorater_config=AutoraterConfig(sampling_count=sampling_count),
    )
    with pytest.raises(
        ValueError, match=re.escape("autorater_config.sampling_count must be in the range [1, 32].")
    ):
        task.evaluate()


def test_compute_multiple_metrics(scripted_judge: Any) -> None:
    """Follows ``test_compute_multiple_metrics`` (and ``test_compute_pairwise_metrics``): a
    string metric, an example pointwise metric and a pairwise metric with a ``baseline_model``,
    responses written by ``model`` from ``prompt_template``. Vertex's single order
    (``flip_enabled=False``, its default); the pairwise template also shows ``prompt`` so the
    scripted judge can tell the rows apart (both responses are 'test_response', as upstream).
    ``exact_match`` is the real one: 'test_response' matches neither reference (upstream's
    1.0 is its mocked service's)."""
    from rubriclab.compat.vertex import AutoraterConfig, PairwiseMetricPromptTemplate
    from rubriclab.compat.vertex import MetricPromptTemplateExamples as Examples

    def answer(body: dict[str, Any]) -> str:
        text = _last(body)
        first = "### prompt\ntest test prompt template test" in text
        if "### Response A" in text:
            return f"pairwise_choice: {'A' if first else 'B'}\nexplanation: explanation"
        return f"Score: {5 if first else 4}\nExplanation: explanation"

    scripted_judge.responder = answer
    baseline_prompts: list[str] = []
    pairwise = PairwiseMetric(
        metric="test_pairwise_metric",
        metric_prompt_template=PairwiseMetricPromptTemplate(
            metric_definition="You will be assessing Text Quality",
            criteria=CRITERIA,
            rating_rubric=PAIRWISE_RUBRIC,
            evaluation_steps=STEPS,
            input_variables=["prompt"],
        ),
        baseline_model=lambda p: baseline_prompts.append(p) or "test_response",
    )
    task = EvalTask(
        dataset=WITHOUT_RESPONSE,
        metrics=["exact_match", Examples.Pointwise.SUMMARIZATION_QUALITY, pairwise],
        autorater_config=AutoraterConfig(flip_enabled=False),
    )
    result = task.evaluate(
        model=lambda p: "test_response",
        prompt_template="{instruction} test prompt template {context}",
    )
    assert baseline_prompts == [
        "test test prompt template test",
        "instruction test prompt template context",
    ]
    assert result.summary_metrics["row_count"] == 2
    assert list(result.metrics_table.columns) == [
        "prompt",
        "reference",
        "context",
        "instruction",
        "response",
        "baseline_model_response",
        "exact_match/score",
        "summarization_quality/score",
        "summarization_quality/explanation",
        "test_pairwise_metric/pairwise_choice",
        "test_pairwise_metric/explanation",
    ]
    table = result.metrics_table
    assert table["exact_match/score"].tolist() == [0.0, 0.0]
    assert table["test_pairwise_metric/pairwise_choice"].tolist() == ["BASELINE", "CANDIDATE"]
    assert table["test_pairwise_metric/explanation"].tolist() == ["explanation"] * 2
    assert result.summary_metrics["test_pairwise_metric/candidate_model_win_rate"] == 0.5
    assert result.summary_metrics["test_pairwise_metric/baseline_model_win_rate"] == 0.5
    assert table["summarization_quality/score"].tolist() == [5, 4]
    assert table["summarization_quality/explanation"].tolist() == ["explanation"] * 2


# -- predefined rubric metrics: upstream test_rubric_based_eval.py ------------------------------

_RB_DATA = pd.DataFrame(
    {
        "prompt": ["test_prompt", "text_prompt", "test_prompt_3"],
        "response": ["test", "text", "test_response_3"],
    }
)


@pytest.mark.parametrize(
    ("pairwise", "key"),
    [
        (False, "instruction_following"),
        (True, "instruction_following"),
        (False, "text_quality"),
        (True, "text_quality"),
    ],
)
def test_predefined_rubric_metric_columns(mock_judge: Any, pairwise: bool, key: str) -> None:
    """Follows ``TestPredefinedRubricMetrics.test_pointwise_instruction_following_metric``,
    ``test_pairwise_instruction_following_metric``, ``test_pointwise_text_quality_metric`` and
    ``test_pairwise_text_quality_metric``: exactly vertexai's columns, in its order, on the
    offline mock (which writes the rubrics and answers in Vertex's critique formats)."""
    from rubriclab.compat.vertex import PredefinedRubricMetrics

    group = PredefinedRubricMetrics.Pairwise if pairwise else PredefinedRubricMetrics.Pointwise
    metric = getattr(group, key.upper())
    data = _RB_DATA.assign(baseline_model_response=_RB_DATA["response"]) if pairwise else _RB_DATA
    table = EvalTask(dataset=data, metrics=[metric]).evaluate().metrics_table
    name = f"pairwise_rb_{key}" if pairwise else f"rb_{key}"
    fields = (
        [
            "pairwise_choice",
            "score",
            "baseline_rubric_verdict_pairs",
            "candidate_rubric_verdict_pairs",
        ]
        if pairwise
        else ["score", "rubric_verdict_pairs"]
    )
    assert table.columns.tolist() == [
        *data.columns,
        "rubrics",
        *(f"{name}/{f}" for f in fields),
        f"{name}/raw_outputs",
    ]


def test_evaluate_response_column_and_model_not_provided() -> None:
    """Follows ``test_evaluate_response_column_and_model_not_provided`` and
    ``test_evaluate_baseline_model_response_column_not_provided``: vertexai's sentence."""
    import re

    from rubriclab.compat.vertex import PointwiseMetricPromptTemplate

    metric = PointwiseMetric(
        metric="test_pointwise_metric",
        metric_prompt_template=PointwiseMetricPromptTemplate(
            criteria=CRITERIA, rating_rubric=POINTWISE_RUBRIC
        ),
    )
    single = pd.DataFrame({"prompt": ["test_prompt", "text_prompt"]})
    with pytest.raises(
        ValueError,
        match=re.escape(
            "Cannot find the `response` column in the evaluation dataset to fill the metric "
            "prompt template for `test_pointwise_metric` metric."
        ),
    ):
        EvalTask(dataset=single, metrics=[metric]).evaluate()
    pairwise = PairwiseMetric(
        metric="test_pairwise_metric", metric_prompt_template=PAIRWISE_TEMPLATE
    )
    with pytest.raises(
        ValueError,
        match=re.escape(
            "Cannot find the `baseline_model_response` column in the evaluation dataset to fill "
            "the metric prompt template for `test_pairwise_metric` metric."
        ),
    ):
        EvalTask(
            dataset=single.assign(response=["test", "response"]), metrics=[pairwise]
        ).evaluate()


def test_evaluate_invalid_prompt_template_variables(mock_judge: Any) -> None:
    """Follows ``test_evaluate_invalid_prompt_template_variables``: ValueError naming the
    missing column, before any call."""
    from rubriclab.compat.vertex import MetricPromptTemplateExamples as Examples

    task = EvalTask(
        dataset=pd.DataFrame({"prompt": ["test_prompt", "text_prompt"]}),
        metrics=[Examples.Pointwise.FLUENCY],
    )
    with pytest.raises(
        ValueError,
        match=(
            r"Failed to assemble prompt template: The following column\(s\) are missing: "
            r"invalid_variable\. Please verify prompt_template variables \['invalid_variable'\]"
        ),
    ):
        task.evaluate(prompt_template="test_prompt_template {invalid_variable}")


def test_rouge_with_options_keeps_its_scoring() -> None:
    """``with_options`` (as on every computation metric) works on ``Rouge`` too."""
    from rubriclab.compat.vertex import Rouge

    stem = Rouge(rouge_type="rouge1", use_stemmer=True).with_options(reference_column="gold")
    assert stem.reference_column == "gold"
    assert stem.score_one("cats running", "cat runs").score == 1.0


# -- AutoraterConfig: upstream TestAgentEvaluation autorater cases ----------------------------


def _choice_by_position(body: dict[str, Any]) -> str:
    """A judge that always prefers Response A, so the order asked shows in the choice."""
    if "### Response A" in _last(body):
        return "pairwise_choice: A\nexplanation: explanation"
    return "Score: 4\nExplanation: explanation"


def test_autorater_config_defaults_are_vertexais(scripted_judge: Any) -> None:
    """vertexai's ``AutoraterConfig()`` (a proto message) reads ``flip_enabled`` False, and its
    pairwise rubric parser reads Response A as the baseline: one order, one call per row, A =
    baseline. ``flip_enabled=True`` (rubriclab's both orders) is there when asked for."""
    from rubriclab.compat.vertex import AutoraterConfig
    from rubriclab.compat.vertex import MetricPromptTemplateExamples as Examples

    assert AutoraterConfig().flip_enabled is False
    assert AutoraterConfig().sampling_count == 1
    scripted_judge.responder = _choice_by_position
    data = ALL_INCLUDED.assign(baseline_model_response=["base one", "base two"])
    metric = Examples.Pairwise.SUMMARIZATION_QUALITY
    result = EvalTask(dataset=data, metrics=[metric]).evaluate()
    assert len(scripted_judge.requests) == 2
    for body, base, cand in zip(
        scripted_judge.requests, data["baseline_model_response"], data["response"], strict=True
    ):
        text = _last(body)
        assert text.index(f"### Response A\n{base}") < text.index(f"### Response B\n{cand}")
    name = metric.metric_name
    # the position-biased judge picks A, the baseline, on every row
    assert result.metrics_table[f"{name}/pairwise_choice"].tolist() == ["BASELINE"] * 2
    assert result.summary_metrics[f"{name}/baseline_model_win_rate"] == 1.0
    # negative control: asked in both orders, the same judge contradicts itself -> ties
    flipped = EvalTask(
        dataset=data, metrics=[metric], autorater_config=AutoraterConfig(flip_enabled=True)
    ).evaluate()
    assert len(scripted_judge.requests) == 4  # the swapped order of each row is new
    assert flipped.metrics_table[f"{name}/pairwise_choice"].tolist() == ["TIE"] * 2
    assert flipped.result.table[f"{name}/swap_consistent"].tolist() == [False, False]


def test_pairwise_flipping_missing_baseline_model_response_column(mock_judge: Any) -> None:
    """Follows ``test_pairwise_flipping_missing_baseline_model_response_column``: with
    ``flip_enabled=True`` a pairwise metric without a baseline column raises vertexai's
    sentence at ``evaluate()``."""
    import re

    from rubriclab.compat.vertex import AutoraterConfig
    from rubriclab.compat.vertex import MetricPromptTemplateExamples as Examples

    task = EvalTask(
        dataset=ALL_INCLUDED,
        metrics=[Examples.Pairwise.SUMMARIZATION_QUALITY],
        autorater_config=AutoraterConfig(flip_enabled=True),
        metric_column_mapping={"response": "response"},
    )
    with pytest.raises(
        ValueError,
        match=re.escape(
            "Cannot find the `baseline_model_response` column in the evaluation dataset to "
            "fill the metric prompt template."
        ),
    ):
        task.evaluate()


_AUTORATER = {"autorater_model": "test_autorater_model", "sampling_count": 6, "flip_enabled": True}


def _models_and_calls(scripted_judge: Any) -> tuple[set[str], int]:
    return {b["model"] for b in scripted_judge.requests}, len(scripted_judge.requests)


@pytest.mark.parametrize("where", ["task", "metric", "metric_over_task"])
@pytest.mark.parametrize("pairwise", [False, True])
def test_autorater_config_reaches_the_judge(
    scripted_judge: Any, where: str, pairwise: bool
) -> None:
    """Follows ``test_pointwise_autorater_request_config_enabled``,
    ``test_pointwise_autorater_from_metric``, ``test_pointwise_autorater_from_metric_override``,
    ``test_pairwise_autorater_request_config_enabled``, ``test_pairwise_autorater_from_metric``
    and ``test_pairwise_autorater_request_default_metric_column_mapping``: the config in force
    (the metric's over the task's) decides the model asked and the samples per row. Upstream
    compares the request's proto; here the HTTP calls show it. With ``flip_enabled`` ours asks
    every sample in both orders (Vertex's service flips half of the samples), so 12 calls."""
    from rubriclab.compat.vertex import AutoraterConfig
    from rubriclab.compat.vertex import MetricPromptTemplateExamples as Examples

    scripted_judge.responder = _choice_by_position
    config = AutoraterConfig(**_AUTORATER)
    other = AutoraterConfig(autorater_model="test_another_model", sampling_count=2)
    kind = PairwiseMetric if pairwise else PointwiseMetric
    example = (Examples.Pairwise if pairwise else Examples.Pointwise).SUMMARIZATION_QUALITY
    metric = kind(
        metric="summarization_quality",
        metric_prompt_template=example.metric_prompt_template,
        autorater_config=None if where == "task" else config,
    )
    task_config = {"task": config, "metric": None, "metric_over_task": other}[where]
    data = ALL_INCLUDED.head(1)
    if pairwise:
        data = data.assign(baseline_model_response=["the baseline"])
    EvalTask(dataset=data, metrics=[metric], autorater_config=task_config).evaluate()
    models, calls = _models_and_calls(scripted_judge)
    assert models == {"test_autorater_model"}
    assert calls == (12 if pairwise else 6)


# -- agents: upstream TestAgentEvaluation --------------------------------------------------------

_AGENT_DATA = pd.DataFrame(
    {
        "prompt": ["test_input1", "test_input2"],
        "reference_trajectory": [
            [{"tool_name": "test_tool1"}, {"tool_name": "test_tool2"}],
            [{"tool_name": "test_tool3"}, {"tool_name": "test_tool4"}],
        ],
    }
)


class _Queryable:
    """Upstream's mocked Reasoning Engine: row by row, its two canned answers."""

    def __init__(self) -> None:
        self.answers = {
            "test_input1": ["test_tool1", "test_tool2"],
            "test_input2": ["test_tool2", "test_tool3"],
        }
        self.inputs: list[str] = []

    def query(self, input: str) -> dict[str, Any]:
        self.inputs.append(input)
        steps = [
            [{"kwargs": {"tool": tool}, "tool_output": "test_tool_output"}]
            for tool in self.answers.get(input, ["test_tool1", "test_tool2"])
        ]
        return {"input": input, "output": "test_output", "intermediate_steps": steps}


def test_runnable_trajectory_eval_with_runnable_inference() -> None:
    """Follows ``test_runnable_trajectory_eval_with_runnable_inference``: the agent's
    ``intermediate_steps`` become ``predicted_trajectory`` and ``trajectory_exact_match``
    scores them against the reference. Upstream's 1.0 / 0.0 are its mocked service's; here
    they are computed (row 1 calls tools 1, 2 as referenced; row 2 calls 2, 3, not 3, 4)."""
    agent = _Queryable()
    result = EvalTask(dataset=_AGENT_DATA, metrics=["trajectory_exact_match"]).evaluate(
        runnable=agent
    )
    assert sorted(agent.inputs) == ["test_input1", "test_input2"]
    assert result.summary_metrics["row_count"] == 2
    assert result.summary_metrics["trajectory_exact_match/mean"] == 0.5
    assert result.summary_metrics["trajectory_exact_match/std"] == pytest.approx(0.7, 0.1)
    assert set(result.metrics_table.columns) == {
        "prompt",
        "response",
        "latency_in_seconds",
        "failure",
        "predicted_trajectory",
        "reference_trajectory",
        "trajectory_exact_match/score",
    }
    assert result.metrics_table["trajectory_exact_match/score"].tolist() == [1.0, 0.0]
    assert result.metrics_table["failure"].tolist() == [0, 0]


def test_runnable_response_eval_with_runnable_inference(scripted_judge: Any) -> None:
    """Follows ``test_runnable_response_eval_with_runnable_inference``: COHERENCE on the
    agent's answers. ``prompt_template="test prompt template"`` has no variables, so both rows
    ask the agent the same thing and get the same answer. Upstream's scores 5 and 4 come from
    its mocked service; two identical rows cannot give them (the judge sees the same text), so
    this judge answers 4 for both: mean 4.0, not 4.5. Columns, row count and the agent's
    inputs are upstream's."""
    scripted_judge.responder = lambda body: "Score: 4\nExplanation: explanation"
    from rubriclab.compat.vertex import MetricPromptTemplateExamples as Examples

    agent = _Queryable()
    result = EvalTask(dataset=_AGENT_DATA, metrics=[Examples.Pointwise.COHERENCE]).evaluate(
        runnable=agent, prompt_template="test prompt template"
    )
    assert agent.inputs == ["test prompt template"] * 2
    assert result.summary_metrics["row_count"] == 2
    assert result.summary_metrics["coherence/mean"] == 4.0
    assert set(result.metrics_table.columns) == {
        "prompt",
        "reference_trajectory",
        "response",
        "latency_in_seconds",
        "failure",
        "predicted_trajectory",
        "coherence/score",
        "coherence/explanation",
    }
    assert result.metrics_table["coherence/explanation"].tolist() == ["explanation"] * 2


def test_a_runnable_that_raises_adds_response_error_only_then() -> None:
    """Beside the two ports above (no ``response_error`` column when every row ran): a row
    whose agent raised has ``failure`` 1 and its error, and is that metric's row error."""

    class Flaky(_Queryable):
        def query(self, input: str) -> dict[str, Any]:
            if input == "test_input2":
                raise RuntimeError("agent down")
            return super().query(input)

    result = EvalTask(dataset=_AGENT_DATA, metrics=["trajectory_exact_match"]).evaluate(
        runnable=Flaky()
    )
    table = result.metrics_table
    assert table["failure"].tolist() == [0, 1]
    assert table["response_error"].tolist() == [None, "runnable raised RuntimeError: agent down"]
    assert table["trajectory_exact_match/score"][0] == 1.0
    assert pd.isna(table["trajectory_exact_match/score"][1])


# -- models that write responses: GenerativeModel objects and bare names ------------------------


class _GenerativeModel:
    """What vertexai's ``GenerativeModel`` offers the SDK: ``generate_content(prompt)`` with a
    reply whose ``.text`` is the answer (upstream's mocked model answers 'test_response')."""

    def __init__(self, text: str = "test_response") -> None:
        self.text = text
        self.prompts: list[str] = []

    def generate_content(self, prompt: str) -> Any:
        self.prompts.append(prompt)
        reply = type("GenerationResponse", (), {})()
        reply.text = self.text
        return reply


def test_compute_pairwise_metrics_metric_prompt_template_example(scripted_judge: Any) -> None:
    """Follows ``test_compute_pairwise_metrics_metric_prompt_template_example``: a model object
    writes the candidate responses from ``prompt_template``; the example pairwise metric judges
    them against the dataset's baselines. Upstream's BASELINE / CANDIDATE come from its mocked
    service; this judge picks the baseline when it reads 'baseline', else the candidate."""
    from rubriclab.compat.vertex import MetricPromptTemplateExamples as Examples

    def answer(body: dict[str, Any]) -> str:
        a = _last(body).split("### Response A\n", 1)[1].split("\n", 1)[0]
        return f"pairwise_choice: {'A' if a == 'baseline' else 'B'}\nexplanation: explanation"

    scripted_judge.responder = answer
    data = WITHOUT_RESPONSE.copy()
    data.insert(1, "baseline_model_response", ["baseline", "response"])
    model = _GenerativeModel()
    result = EvalTask(dataset=data, metrics=[Examples.Pairwise.SUMMARIZATION_QUALITY]).evaluate(
        model=model, prompt_template="{instruction} test prompt template {context}"
    )
    assert model.prompts == [
        "test test prompt template test",
        "instruction test prompt template context",
    ]
    name = "pairwise_summarization_quality"
    assert result.summary_metrics["row_count"] == 2
    assert set(result.metrics_table.columns) == {
        "context",
        "instruction",
        "prompt",
        "response",
        "reference",
        "baseline_model_response",
        f"{name}/pairwise_choice",
        f"{name}/explanation",
    }
    assert result.metrics_table["response"].tolist() == ["test_response"] * 2
    assert result.metrics_table[f"{name}/pairwise_choice"].tolist() == ["BASELINE", "CANDIDATE"]
    assert result.metrics_table[f"{name}/explanation"].tolist() == ["explanation"] * 2
    assert set(result.summary_metrics) == {
        "row_count",
        f"{name}/candidate_model_win_rate",
        f"{name}/baseline_model_win_rate",
    }
    assert result.summary_metrics[f"{name}/candidate_model_win_rate"] == 0.5
    assert result.summary_metrics[f"{name}/baseline_model_win_rate"] == 0.5


def test_compute_pointwise_metrics_metric_prompt_template_example_string_model(
    scripted_judge: Any,
) -> None:
    """Follows ``test_compute_pointwise_metrics_metric_prompt_template_example_string_model``:
    ``model="gemini-1.5-pro"`` writes the responses (here: that model name asked on the
    judge's own endpoint, over HTTP), then the example metric scores them."""
    from rubriclab.compat.vertex import MetricPromptTemplateExamples as Examples

    def answer(body: dict[str, Any]) -> str:
        if body["model"] == "gemini-1.5-pro":
            return "test_response"
        first = "### prompt\ntest test prompt template test" in _last(body)
        return f"Score: {5 if first else 4}\nExplanation: explanation"

    scripted_judge.responder = answer
    result = EvalTask(
        dataset=WITHOUT_RESPONSE, metrics=[Examples.Pointwise.SUMMARIZATION_QUALITY]
    ).evaluate(
        model="gemini-1.5-pro", prompt_template="{instruction} test prompt template {context}"
    )
    models = [b["model"] for b in scripted_judge.requests]
    assert models.count("gemini-1.5-pro") == 2 and models.count("judge-model") == 2
    assert result.summary_metrics["row_count"] == 2
    assert result.summary_metrics["summarization_quality/mean"] == 4.5
    assert result.summary_metrics["summarization_quality/std"] == pytest.approx(0.7, 0.1)
    assert set(result.metrics_table.columns) == {
        "context",
        "instruction",
        "reference",
        "prompt",
        "response",
        "summarization_quality/score",
        "summarization_quality/explanation",
    }
    assert result.metrics_table["response"].tolist() == ["test_response"] * 2
    assert sorted(result.metrics_table["summarization_quality/score"]) == [4, 5]
    assert result.metrics_table["summarization_quality/explanation"].tolist() == ["explanation"] * 2


def test_rubric_generation_succeeds() -> None:
    """Follows ``test_rubric_generation_succeeds``: ``RubricGenerationConfig(model=<a
    GenerativeModel>)`` is asked through ``generate_content``; the frame is vertexai's."""
    model = _GenerativeModel(GENERATED)
    out = _rubric_metric(model).generate_rubrics(PROMPT_RESPONSE)
    assert out.equals(_with_rubrics())
    assert model.prompts == [
        f"Generate rubrics for the given prompt: {p}" for p in PROMPT_RESPONSE.prompt
    ]
    with pytest.raises(TypeError, match="generate_content"):
        _rubric_metric(object())


def test_unmatched_metric_column_mapping(mock_judge: Any) -> None:
    """Follows ``test_unmatched_metric_column_mapping``: ``model=`` over a dataset that has
    ``response`` raises vertexai's sentence, word for word."""
    import re

    task = EvalTask(
        dataset=ALL_INCLUDED,
        metrics=[
            PointwiseMetric(metric="test_pointwise_metric_str", metric_prompt_template="abc: {abc}")
        ],
    )
    with pytest.raises(
        ValueError,
        match=re.escape(
            "The `model` parameter or `baseline_model` in pairwise metric is"
            " specified, but the evaluation `dataset` contains model response"
            " column or baseline model response column `response`"
            " to perform bring-your-own-response(BYOR) evaluation. If you would"
            " like to perform evaluation using the dataset with the"
            " existing model response column or or baseline model response column"
            " `response`, please remove `model` parameter in `EvalTask.evaluate()`"
            " function or `baseline_model` in `PairwiseMetric`."
        ),
    ):
        task.evaluate(model=_GenerativeModel())


def test_evaluate_baseline_model_provided_but_no_baseline_response_column(
    scripted_judge: Any,
) -> None:
    """Follows ``test_evaluate_baseline_model_provided_but_no_baseline_response_column``: a
    candidate model and the metric's ``baseline_model`` (both GenerativeModels) write the two
    columns, then the pairwise metric judges every row."""
    from rubriclab.compat.vertex import PairwiseMetricPromptTemplate

    scripted_judge.responder = lambda body: "pairwise_choice: SAME\nexplanation: explanation"
    baseline, candidate = _GenerativeModel("the baseline"), _GenerativeModel("the candidate")
    metric = PairwiseMetric(
        metric="test_pairwise_metric",
        metric_prompt_template=PairwiseMetricPromptTemplate(
            metric_definition="You will be assessing Text Quality",
            criteria=CRITERIA,
            rating_rubric=PAIRWISE_RUBRIC,
            evaluation_steps=STEPS,
        ),
        baseline_model=baseline,
    )
    result = EvalTask(dataset=WITHOUT_RESPONSE, metrics=[metric]).evaluate(model=candidate)
    assert result.summary_metrics["row_count"] == 2
    assert baseline.prompts == candidate.prompts == ["test", "prompt"]
    table = result.metrics_table
    assert table["response"].tolist() == ["the candidate"] * 2
    assert table["baseline_model_response"].tolist() == ["the baseline"] * 2
    assert table["test_pairwise_metric/pairwise_choice"].tolist() == ["TIE"] * 2


def test_validate_metrics_multiple_rubric_based_metrics() -> None:
    """Follows ``test_validate_metrics_multiple_rubric_based_metrics``: one run has one
    ``rubrics`` column, so two rubric-based metrics raise at ``evaluate()`` (before this, the
    second one critiqued with the first one's rubrics, its own generation never asked)."""
    import re

    from rubriclab.compat.vertex import MetricPromptTemplateExamples as Examples
    from rubriclab.compat.vertex import RubricBasedMetric, RubricGenerationConfig

    asked: list[str] = []
    config = RubricGenerationConfig(prompt_template="abc", model=lambda p: asked.append(p))
    metrics = [
        RubricBasedMetric(generation_config=config, critique_metric=critic)
        for critic in (Examples.Pointwise.COHERENCE, Examples.Pointwise.FLUENCY)
    ]
    task = EvalTask(dataset=PROMPT_RESPONSE, metrics=metrics)
    with pytest.raises(
        ValueError, match=re.escape("Multiple rubric based metrics are not supported.")
    ):
        task.evaluate()
    assert asked == []


def test_default_rubrics_parser_succeeds() -> None:
    """Follows ``test_default_rubrics_parser_succeeds``. ``..._with_invalid_json`` expects
    ``{"questions": ""}`` for ``{["questions": [...]]}``; ours repairs that near-JSON (as it
    does trailing commas) and reads the question, and text with no rubric at all gives
    ``questions`` None and an ``error``, never an empty rubric."""
    from rubriclab.compat.vertex import utils

    assert utils.parse_rubrics('```json{"questions": ["test_rubric"]}```') == {
        "questions": ["test_rubric"]
    }
    repaired = utils.parse_rubrics('```json{["questions": ["test_rubric"]]}```')
    assert repaired == {"questions": ["test_rubric"]}
    bad = utils.parse_rubrics("I cannot write rubrics for this.")
    assert bad["questions"] is None and bad["error"].startswith("unreadable rubric")


# -- multimodal predefined rubric metrics: upstream test_rubric_based_eval.py --------------------


def _gs_images(fake_gcs: Any) -> list[str]:
    """Upstream's two ``gs://test-bucket/image*.png`` parts, the pictures put in the store."""
    import json
    from pathlib import Path

    from rubriclab.demo import car_damage_frame

    parts = []
    for n, path in zip((3, 4), car_damage_frame()["image"], strict=False):
        uri = f"gs://test-bucket/image{n}.png"
        with fake_gcs.open(uri, "wb") as fh:
            fh.write(Path(path).read_bytes())
        part = {"file_data": {"mime_type": "image/png", "file_uri": uri}}
        parts.append(json.dumps({"contents": [{"parts": [part]}]}))
    return parts


@pytest.mark.parametrize("pairwise", [False, True])
def test_multimodal_understanding_metric(
    scripted_judge: Any, fake_gcs: Any, pairwise: bool
) -> None:
    """Follows ``TestPredefinedRubricMetrics.test_pointwise_multimodal_understanding_metric``
    and ``test_pairwise_multimodal_understanding_metric``: upstream's datasets (gs:// images,
    read through fsspec), its generation answer (questions only, so no ``description``
    column unless the dataset has one) and exactly vertexai's columns, in its order."""
    from rubriclab.compat.vertex import PredefinedRubricMetrics

    def answer(body: dict[str, Any]) -> str:
        parts = body["messages"][-1]["content"]
        assert [p["type"] for p in parts].count("image_url") == 1  # the row's picture went
        text = "\n".join(p.get("text", "") for p in parts)
        block = "<question>\nQuestion: test_rubric\nVerdict: [[YES]]\n</question>"
        if "[[Response A Answers" in text:
            return (
                f"[[Response A Answers:]]\n{block}\n[[Response B Answers:]]\n{block}\n"
                "[[SxS Rating: B > A]]"
            )
        if "<question>" in text and "Verdict:" in text:
            return f"{block}\n[[Rubric Score: 1/1]]"
        return '```json{"questions": ["test_rubric"]}```'

    scripted_judge.responder = answer
    images = _gs_images(fake_gcs)
    if pairwise:
        data = pd.DataFrame(
            {
                "prompt": ["test_prompt", "text_prompt"],
                "image": images,
                "description": ["description", "description"],
                "response": ["test", "text"],
                "baseline_model_response": ["test", "text"],
            }
        )
        metric = PredefinedRubricMetrics.Pairwise.MULTIMODAL_UNDERSTANDING
        fields = ["pairwise_choice", "score", "baseline_rubric_verdict_pairs"]
        fields += ["candidate_rubric_verdict_pairs", "raw_outputs"]
    else:
        data = pd.DataFrame(
            {
                "prompt": ["test_prompt", "text_prompt"],
                "image": images,
                "response": ["test", "text"],
            }
        )
        metric = PredefinedRubricMetrics.Pointwise.MULTIMODAL_UNDERSTANDING
        fields = ["score", "rubric_verdict_pairs", "raw_outputs"]
    table = EvalTask(dataset=data, metrics=[metric]).evaluate().metrics_table
    name = metric.critique_metric.metric_name
    assert table.columns.tolist() == [*data.columns, "rubrics", *(f"{name}/{f}" for f in fields)]


def test_compute_rubric_based_metric(scripted_judge: Any) -> None:
    """Follows ``test_compute_rubric_based_metric``: a RubricBasedMetric whose critique metric
    has no CustomOutputConfig gets vertexai's ``CustomOutputConfig(return_raw_output=True)``,
    so its table has only ``{m}/raw_output`` (the judge's texts) beside ``rubrics``. Upstream's
    two texts per row come from its mocked service; here one sample per row is asked
    (``sampling_count`` 1), so each row has one."""
    from rubriclab.compat.vertex import MetricPromptTemplateExamples as Examples
    from rubriclab.compat.vertex import RubricBasedMetric, RubricGenerationConfig

    def answer(body: dict[str, Any]) -> str:
        text = _last(body)
        if text == "abc":
            return GENERATED
        which = "test" if "## AI-generated Response\ntest" in text else "text"
        return f"raw_output_for_{which}"

    scripted_judge.responder = answer
    metric = RubricBasedMetric(
        generation_config=RubricGenerationConfig(prompt_template="abc"),
        critique_metric=Examples.Pointwise.SUMMARIZATION_QUALITY,
    )
    data = pd.DataFrame(
        {
            "prompt": ["test_prompt", "text_prompt"],
            "response": ["test", "text"],
            "baseline_model_response": ["test", "ref"],
            "context": ["test", "context"],
            "instruction": ["test", "instruction"],
        }
    )
    result = EvalTask(dataset=data, metrics=[metric]).evaluate()
    assert result.summary_metrics["row_count"] == 2
    assert set(result.metrics_table.columns) == {
        "prompt",
        "response",
        "baseline_model_response",
        "context",
        "instruction",
        "summarization_quality/raw_output",
        "rubrics",
    }
    assert result.metrics_table["summarization_quality/raw_output"].tolist() == [
        ["raw_output_for_test"],
        ["raw_output_for_text"],
    ]
    assert result.metrics_table["rubrics"].tolist() == [["test_rubric1", "test_rubric2"]] * 2
    # vertexai sets the config on the shared example metric; ours leaves it as it was
    assert Examples.Pointwise.SUMMARIZATION_QUALITY.custom_output_config is None
