"""Vertex layer: computation metrics by name in EvalTask, and classic Pointwise/PairwiseMetric
(a score or a choice plus an explanation, no rubric), over the fake judge's real HTTP."""

from __future__ import annotations

import json
import math
from typing import Any

import pandas as pd
import pytest
import sacrebleu
from rouge_score import rouge_scorer

import rubriclab as rl
from rubriclab.compat.vertex import EvalTask, PairwiseMetric, PointwiseMetric
from rubriclab.compat.vertex.classic import (
    parse_pairwise_choice_result,
    parse_pointwise_score_result,
)

FLUENCY = (
    "Rate the fluency of the response from 1 (broken) to 5 (natural).\n"
    "Prompt: {prompt}\nResponse: {response}\n"
    "Answer with 'Score: N' then 'Explanation: ...'."
)
PREFERENCE = (
    "Which response answers better?\nPrompt: {prompt}\n"
    "Baseline: {baseline_model_response}\nCandidate: {response}\n"
    'Answer in JSON: {{"pairwise_choice": "CANDIDATE" | "BASELINE" | "TIE", "explanation": "..."}}'
)


def _prompt(body: dict[str, Any]) -> str:
    return str(body["messages"][-1]["content"])


def classic_judge(body: dict[str, Any]) -> str:
    text = _prompt(body)
    if "fluency" in text:
        if "Response: garbled" in text:
            return "I cannot rate this."
        score = 5 if "Response: Paris is the capital" in text else 2
        return f"Score: {score}\nExplanation: reads {'naturally' if score == 5 else 'stiffly'}."
    baseline = text.split("Baseline: ", 1)[1].split("\n", 1)[0]
    candidate = text.split("Candidate: ", 1)[1].split("\n", 1)[0]
    choice = "CANDIDATE" if len(candidate) > len(baseline) else "BASELINE"
    if candidate == baseline:
        choice = "TIE"
    return json.dumps({"pairwise_choice": choice, "explanation": f"{choice} is more complete"})


@pytest.fixture
def judge(fake_judge: Any) -> Any:
    fake_judge.responder = classic_judge
    rl.set_judge(rl.Judge(fake_judge.url, model="judge-model", max_retries=0))
    try:
        yield fake_judge
    finally:
        rl.set_judge(None)


def test_computation_metrics_by_name_as_in_vertexai() -> None:
    data = pd.DataFrame(
        {
            "prompt": ["Capital of France?", "Summarise."],
            "response": ["Paris", "the cat sat on the mat\nit was happy"],
            "reference": ["Paris", "the cat sat\nit was very happy"],
        }
    )
    result = EvalTask(dataset=data, metrics=["exact_match", "bleu", "rouge_l_sum"]).evaluate()
    table = result.metrics_table
    assert list(table["exact_match/score"]) == [1.0, 0.0]
    expected_bleu = sacrebleu.sentence_bleu(data.response[1], [data.reference[1]]).score / 100
    assert table.loc[1, "bleu/score"] == pytest.approx(expected_bleu)
    lsum = rouge_scorer.RougeScorer(["rougeLsum"]).score(data.reference[1], data.response[1])
    assert table.loc[1, "rouge_l_sum/score"] == pytest.approx(lsum["rougeLsum"].fmeasure)
    assert result.summary_metrics["exact_match/mean"] == 0.5
    assert result.summary_metrics["row_count"] == 2
    assert result.result.metric("bleu").kind == "computation"


def test_unknown_computation_name_and_missing_reference() -> None:
    data = pd.DataFrame({"prompt": ["q"], "response": ["a"]})
    with pytest.raises(ValueError, match=r"Metric name: meteor is not supported.*exact_match"):
        EvalTask(dataset=data, metrics=["meteor"])
    with pytest.raises(KeyError, match="Required column `reference`"):
        EvalTask(dataset=data, metrics=["rouge_1"]).evaluate()


def test_classic_pointwise_metric_gives_score_and_explanation(judge: Any) -> None:
    data = pd.DataFrame(
        {
            "prompt": ["Capital of France?"] * 3,
            "response": ["Paris is the capital.", "capital Paris is.", "garbled"],
        }
    )
    fluency = PointwiseMetric(metric="fluency", metric_prompt_template=FLUENCY)
    result = EvalTask(dataset=data, metrics=[fluency]).evaluate()
    table = result.metrics_table
    assert list(table["fluency/score"][:2]) == [5.0, 2.0]
    assert table.loc[0, "fluency/explanation"] == "reads naturally."
    assert math.isnan(table.loc[2, "fluency/score"])  # unreadable: an error, never a 0
    assert "nor a classic 'Score: N' answer" in table.loc[2, "fluency/error"]
    assert result.summary_metrics["fluency/mean"] == pytest.approx(3.5)
    assert result.result.table.loc[1, "fluency/rationale"] == "reads stiffly."


def test_classic_pairwise_metric_gives_choice_and_explanation(judge: Any) -> None:
    data = pd.DataFrame(
        {
            "prompt": ["Capital of France?"] * 3,
            "response": ["Paris, on the Seine.", "Paris", "Paris"],
            "baseline_model_response": ["Paris", "Paris, on the Seine.", "Paris"],
        }
    )
    metric = PairwiseMetric(metric="preference", metric_prompt_template=PREFERENCE)
    result = EvalTask(dataset=data, metrics=[metric]).evaluate()
    table = result.metrics_table
    assert list(table["preference/pairwise_choice"]) == ["CANDIDATE", "BASELINE", "TIE"]
    assert "preference/score" not in table.columns  # vertexai gives only the choice
    assert list(result.result.table["preference/score"]) == [1.0, -1.0, 0.0]
    assert table.loc[0, "preference/explanation"] == "CANDIDATE is more complete"
    assert result.summary_metrics["preference/candidate_model_win_rate"] == pytest.approx(1 / 3)


def test_classic_parsers() -> None:
    out = parse_pointwise_score_result(
        ['{"score": 4, "explanation": "fine"}', "Score: 2\nExplanation: meh"]
    )
    assert out["score"] == 3.0
    assert out["explanation"] == "fine"
    bad = parse_pointwise_score_result(["no number here"])
    assert bad["score"] is None
    assert bad["error"]
    pick = parse_pairwise_choice_result(
        ["pairwise_choice: baseline\nexplanation: shorter", '{"choice": "TIE"}']
    )
    assert pick["pairwise_choice"] == "TIE"  # one each: a split vote is a tie
    assert parse_pairwise_choice_result(["Choice: CANDIDATE"])["score"] == 1.0


def test_classic_pairwise_reads_the_labels_of_vertex_templates() -> None:
    """Vertex's pairwise templates ask for "A", "B" or "SAME" (Response A is the baseline)."""
    assert parse_pairwise_choice_result(["pairwise_choice: B\nexplanation: smoother"]) == {
        "pairwise_choice": "CANDIDATE",
        "score": 1.0,
        "explanation": "smoother",
        "raw_outputs": ["pairwise_choice: B\nexplanation: smoother"],
        "error": None,
    }
    assert parse_pairwise_choice_result(['{"pairwise_choice": "A"}'])["pairwise_choice"] == (
        "BASELINE"
    )
    assert parse_pairwise_choice_result(["Choice: SAME"])["score"] == 0.0
    unread = parse_pairwise_choice_result(["Choice: a tie, really"])  # the article is no label
    assert unread["pairwise_choice"] is None and "A, B, SAME" in unread["error"]
