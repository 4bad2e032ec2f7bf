"""Computation metrics: exact/json match, ROUGE (rouge-score) and BLEU (sacrebleu) vs `reference`."""

from __future__ import annotations

import math

import pandas as pd
import pytest
import sacrebleu
from rouge_score import rouge_scorer

import rubriclab as rl
from rubriclab.metrics import ComputationMetric
from rubriclab.metrics.computation import COMPUTATION

# rouge-score's README example: score(target, prediction)
REF = "The quick brown fox jumps over the lazy dog"
HYP = "The quick brown dog jumps on the log."


def score(metric: ComputationMetric, response: str, reference: str) -> float:
    out = metric.score_one(response, reference)
    assert out.error is None, out.error
    assert out.score is not None
    return out.score


def test_rouge_equals_rouge_score_on_its_readme_example() -> None:
    # by hand: 6 shared unigrams, 8 predicted, 9 reference -> P 3/4, R 2/3, F 12/17
    assert score(rl.metrics.rouge_1, HYP, REF) == pytest.approx(12 / 17)
    # longest common subsequence "the quick brown jumps the" = 5 -> P 5/8, R 5/9, F 10/17
    assert score(rl.metrics.rouge_l, HYP, REF) == pytest.approx(10 / 17)
    lib = rouge_scorer.RougeScorer(["rouge1", "rougeL", "rougeLsum"]).score(REF, HYP)
    assert score(rl.metrics.rouge_1, HYP, REF) == lib["rouge1"].fmeasure
    assert score(rl.metrics.rouge_l, HYP, REF) == lib["rougeL"].fmeasure
    assert score(rl.metrics.rouge_l_sum, HYP, REF) == lib["rougeLsum"].fmeasure


def test_rouge_l_sum_splits_sentences_on_newlines() -> None:
    ref = "the cat sat on the mat\nit was happy"
    hyp = "it was happy\nthe cat sat"
    lib = rouge_scorer.RougeScorer(["rougeL", "rougeLsum"]).score(ref, hyp)
    assert score(rl.metrics.rouge_l_sum, hyp, ref) == lib["rougeLsum"].fmeasure
    assert score(rl.metrics.rouge_l_sum, hyp, ref) > score(rl.metrics.rouge_l, hyp, ref)


@pytest.mark.parametrize(
    ("hyp", "ref"),
    [
        # sacrebleu's README pairs
        ("The dog bit the man.", "The dog bit the man."),
        ("It wasn't surprising.", "It was not unexpected."),
        ("The man had just bitten him.", "The man bit him first."),
    ],
)
def test_bleu_equals_sacrebleu_sentence_bleu_over_100(hyp: str, ref: str) -> None:
    expected = sacrebleu.sentence_bleu(hyp, [ref]).score / 100
    assert score(rl.metrics.bleu, hyp, ref) == pytest.approx(expected, abs=1e-12)


def test_bleu_of_identical_text_is_one() -> None:
    assert score(rl.metrics.bleu, "The dog bit the man.", "The dog bit the man.") == pytest.approx(
        1
    )


def test_exact_match_ignores_only_surrounding_whitespace() -> None:
    assert score(rl.metrics.exact_match, " Paris\n", "Paris") == 1.0
    assert score(rl.metrics.exact_match, "paris", "Paris") == 0.0


def test_json_match_keys_and_values() -> None:
    ref = '{"name": "Ada", "age": 36, "langs": ["en", "fr"]}'
    assert (
        score(rl.metrics.json_match, '{"age": 36, "langs": ["en", "fr"], "name": "Ada"}', ref) == 1
    )
    # leaf keys: name, age, langs[0], langs[1] (+ extra city): agree on name, langs[0], langs[1]
    out = rl.metrics.json_match.score_one(
        '{"name": "Ada", "age": 37, "langs": ["en", "fr"], "city": "X"}', ref
    )
    assert out.score == pytest.approx(3 / 5)
    assert "different: age" in out.rationale
    assert "extra: city" in out.rationale
    bad = rl.metrics.json_match.score_one("not json", ref)
    assert bad.score == 0.0
    assert "not JSON" in bad.rationale


def test_hostile_nesting_is_that_rows_error() -> None:
    deep = "[" * 100_000 + "]" * 100_000
    assert "nested too deeply" in (rl.metrics.json_match.score_one(deep, "[]").error or "")
    assert "nested too deeply" in (rl.metrics.json_match.score_one("[]", deep).error or "")


def test_rows_without_reference_or_response_are_errors_not_zeros() -> None:
    assert rl.metrics.rouge_l.score_one(None, "x").error == "no response to score"
    assert "no 'reference'" in (rl.metrics.bleu.score_one("x", None).error or "")
    assert "reference is not JSON" in (rl.metrics.json_match.score_one("{}", "{oops").error or "")


def test_beside_rubric_metrics_in_evaluate_with_the_column_contract(tmp_path) -> None:
    df = pd.DataFrame(
        {
            "prompt": ["Capital of France?", "Capital of Italy?", "Capital of Spain?"],
            "response": ["Paris", "Rome is the capital", "Madrid"],
            "gold": ["Paris", "Rome", None],
        }
    )
    metrics = [rl.metrics.exact_match, rl.metrics.rouge_l, rl.metrics.TEXT_QUALITY]
    result = rl.evaluate(df, metrics, judge="mock", mapping={"reference": "gold"})
    t = result.table
    assert list(t["exact_match/score"][:2]) == [1.0, 0.0]
    assert t.loc[1, "rouge_l/score"] == pytest.approx(2 / 5)  # P 1/4, R 1/1 -> F 2/5
    assert math.isnan(t.loc[2, "rouge_l/score"])
    assert "no 'reference' value" in t.loc[2, "rouge_l/error"]
    for field in ("verdict", "criteria", "rationale", "raw_output", "error", "tokens"):
        assert f"bleu/{field}" not in t  # bleu was not asked for
        assert f"rouge_l/{field}" in t
    summary = result.summary
    assert summary.loc["exact_match", "kind"] == "computation"
    assert summary.loc["exact_match", "errors"] == 1
    assert summary.loc["rouge_l", "calls"] == 0
    again = rl.load_result(result.save(tmp_path / "r.jsonl"))
    assert again.metric("rouge_l").kind == "computation"
    assert again.table["rouge_l/score"].iloc[0] == 1.0


def test_computation_metrics_alone_need_no_judge_and_are_not_labelled_mock(monkeypatch) -> None:
    monkeypatch.delenv("RUBRICLAB_JUDGE", raising=False)
    df = pd.DataFrame({"prompt": ["q"], "response": ["a b c"], "reference": ["a b d"]})
    result = rl.evaluate(df, [rl.metrics.rouge_1, rl.metrics.exact_match])
    assert result.table["rouge_1/score"][0] == pytest.approx(2 / 3)
    assert not result.is_mock
    assert "no judge" in result.judge
    assert "MOCK" not in result.summary_text()


def test_a_custom_reference_column_and_no_reference_at_all() -> None:
    df = pd.DataFrame({"prompt": ["q"], "response": ["a b c"], "expected": ["a b c"]})
    metric = rl.metrics.exact_match.with_options(name="exact_expected", reference_column="expected")
    assert rl.evaluate(df, [metric], judge="mock").table["exact_expected/score"][0] == 1.0
    with pytest.raises(ValueError, match="compares with a 'reference' column"):
        rl.evaluate(df, [rl.metrics.bleu], judge="mock")


def test_every_named_metric_is_registered() -> None:
    assert set(COMPUTATION) == {
        "exact_match",
        "json_match",
        "rouge_1",
        "rouge_2",
        "rouge_l",
        "rouge_l_sum",
        "bleu",
    }
    for name, metric in COMPUTATION.items():
        assert getattr(rl.metrics, name) is metric
