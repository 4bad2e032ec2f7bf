"""End to end over real HTTP: generation -> revision -> critique -> scores -> summary.

The fake judge server listens on 127.0.0.1; scripted answers are functions of the request body,
so rendering, JSON schemas, parsing, re-asking, validation and scoring all run for real.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import rubriclab as rl
from rubriclab.demo import support_frame, support_rubric

from . import judge_scripts

MEETING = (
    "Summarize the meeting: 'The deadline for code completion is August 15th. Marketing, led by "
    "Chloe, begins on August 1st. All teams must provide weekly progress reports.'"
)


def _judge(server: Any, **kw: Any) -> rl.Judge:
    return rl.Judge(server.url, model="judge-model", max_retries=0, **kw)


def meeting_frame() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "prompt": [f"{MEETING} (team {t})" for t in "ABC"],
            "response": [
                "Code is due August 15th; marketing (Chloe) starts August 1st; weekly reports.",
                "The team met. Marketing starts soon.",
                "Deadline: August 15th.",
            ],
        },
        index=["m1", "m2", "m3"],
    )


def test_generate_revise_critique_score_summarise(fake_judge: Any) -> None:
    fake_judge.responder = judge_scripts.realistic
    judge = _judge(fake_judge)

    cases = rl.generate_rubrics(meeting_frame(), metric=rl.metrics.TEXT_QUALITY, judge=judge)
    first = cases.loc["m1", "rubric"]
    assert isinstance(first, rl.Rubric)
    # the near-duplicate deadline question was dropped; the weekly one was added for this prompt
    assert [c.question for c in first.criteria] == [
        "Does the response mention the deadline of August 15th?",
        "Does the response name who leads marketing?",
        "Is the response a summary rather than a transcript?",
        "Does the response mention weekly progress reports?",
    ]
    assert first["q1"].critical == 1
    assert cases["rubric_raw_output"].str.contains("```json").all()
    generation_calls = len(fake_judge.requests)
    assert generation_calls == 3

    # revision in code: drop the marketing question of row m2
    revised = cases.loc["m2", "rubric"]
    cases.at["m2", "rubric"] = rl.Rubric.checklist([revised["q1"], revised["q3"], revised["q4"]])

    result = rl.evaluate(cases, metrics=[rl.metrics.TEXT_QUALITY], judge=judge)
    assert len(fake_judge.requests) == generation_calls + 3  # no rubric was generated again
    t = result.table
    assert list(t.index) == ["m1", "m2", "m3"]
    assert t.loc["m1", "text_quality/score"] == 1.0
    assert t.loc["m1", "text_quality/verdict"] == "critical met"
    # m2: misses the deadline (critical) -> fails whatever its total
    assert t.loc["m2", "text_quality/verdict"] == "fail (q1 is NO)"
    # revised criteria keep their ids, so verdicts still match the questions people edited
    assert [c["name"] for c in t.loc["m2", "text_quality/criteria"]] == ["q1", "q3", "q4"]
    assert t.loc["m2", "text_quality/score"] == pytest.approx(1 / 3)
    assert t.loc["m3", "text_quality/score"] == pytest.approx(2 / 4)
    crit = t.loc["m3", "text_quality/criteria"][0]
    assert crit["label"] == "YES" and crit["reasoning"].startswith("Checked")
    s = result.summary.loc["text_quality"]
    assert s["n"] == 3 and s["errors"] == 0
    assert s["mean"] == pytest.approx((1.0 + 1 / 3 + 0.5) / 3)
    # no pass mark: no pass rate at all (a rate that can only be 0% reads as "all failed");
    # m2's failed critical item is counted
    assert "pass_rate" not in result.summary.columns
    assert not s["has_pass_mark"] and s["critical_fails"] == 1
    assert s["calls"] == 3 and s["tokens"] > 0
    assert not result.is_mock


def test_a_judge_with_position_bias_never_wins(fake_judge: Any) -> None:
    fake_judge.responder = judge_scripts.first_position
    df = pd.DataFrame(
        {
            "prompt": ["q1", "q2", "q3", "q4"],
            "response": ["short", "a much longer answer", "x", "y y y"],
            "baseline_model_response": ["a much longer answer", "short", "x x", "y"],
        }
    )
    metric = rl.metrics.PairwiseRubricMetric(
        name="vs_base", rubric=rl.Rubric.checklist(["Is it right?", "Is it clear?"])
    )
    result = rl.evaluate(df, metrics=[metric], judge=_judge(fake_judge))
    t = result.table
    assert (t["vs_base/score"] == 0.0).all()
    assert (t["vs_base/pairwise_choice"] == "tie").all()
    assert (t["vs_base/swap_consistent"] == False).all()  # noqa: E712
    assert all(c["winner"] == "tie" for row in t["vs_base/criteria"] for c in row)
    s = result.summary.loc["vs_base"]
    assert s["win_rate"] == 0 and s["loss_rate"] == 0 and s["tie_rate"] == 1
    assert len(fake_judge.requests) == 8  # both orders, every row


def test_a_consistent_pairwise_judge_gives_wins_losses_and_per_response_verdicts(
    fake_judge: Any,
) -> None:
    fake_judge.responder = judge_scripts.realistic
    df = pd.DataFrame(
        {
            "prompt": ["p", "p"],
            "response": ["a long and complete answer", "short"],
            "baseline_model_response": ["short", "a long and complete answer"],
        }
    )
    metric = rl.metrics.PairwiseRubricMetric(name="pw", rubric=rl.Rubric.checklist(["Complete?"]))
    t = rl.evaluate(df, metrics=[metric], judge=_judge(fake_judge)).table
    assert t["pw/score"].tolist() == [0.5, -0.5]
    assert t["pw/pairwise_choice"].tolist() == ["candidate better", "baseline better"]
    assert t["pw/swap_consistent"].tolist() == [True, True]
    assert t.loc[0, "pw/candidate_criteria"][0]["label"] == "YES"
    assert t.loc[0, "pw/baseline_criteria"][0]["label"] == "NO"
    assert t["pw/verdict"].tolist() == ["candidate wins", "baseline wins"]


BAD_ANSWERS = {
    "malformed": "I think the answer is good. {verdicts: maybe",
    "truncated": '{"verdicts": {"q1": {"reasoning": "fine", "verdict": "YE',
    "off-schema": '{"verdicts": {"q1": {"reasoning": "ok", "verdict": "PERHAPS"}, "q2": {"reasoning": "ok", "verdict": "YES"}}}',
    "missing-criterion": '```json\n{"verdicts": {"q1": {"reasoning": "ok", "verdict": "YES"}}}\n```',
}


def test_bad_judge_answers_end_as_row_errors_with_raw_text_and_others_still_score(
    fake_judge: Any,
) -> None:
    def responder(body: dict[str, Any]) -> str:
        prompt = judge_scripts._prompt(body)
        for kind, answer in BAD_ANSWERS.items():
            if f"<response>\n{kind}\n</response>" in prompt:
                return answer
        return json.dumps(
            {
                "verdicts": {q: {"reasoning": "r", "verdict": "YES"} for q in ("q1", "q2")},
                "rationale": "ok",
            }
        )

    fake_judge.responder = responder
    df = pd.DataFrame({"prompt": ["p"] * 6, "response": [*BAD_ANSWERS, "good one", "good two"]})
    metric = rl.metrics.RubricMetric(name="chk", rubric=rl.Rubric.checklist(["A?", "B?"]))
    result = rl.evaluate(df, metrics=[metric], judge=_judge(fake_judge))
    t = result.table
    for i, (kind, answer) in enumerate(BAD_ANSWERS.items()):
        assert pd.isna(t.loc[i, "chk/score"]), kind
        assert t.loc[i, "chk/error"].startswith("unreadable judge answer"), kind
        assert t.loc[i, "chk/raw_output"] == answer, kind
    assert "PERHAPS" in t.loc[2, "chk/error"]
    assert "missing criteria: q2" in t.loc[3, "chk/error"]
    assert t.loc[4, "chk/score"] == 1.0 and t.loc[5, "chk/score"] == 1.0
    assert len(fake_judge.requests) == 4 * 2 + 2  # each bad row was asked once more
    s = result.summary.loc["chk"]
    assert (s["n"], s["scored"], s["errors"], s["mean"]) == (6, 2, 4, 1.0)


def test_a_reask_that_succeeds_scores_the_row(fake_judge: Any) -> None:
    answers = iter(
        ["not json at all", json.dumps({"verdicts": {"q1": {"reasoning": "r", "verdict": "NO"}}})]
    )
    fake_judge.responder = lambda body: next(answers)
    metric = rl.metrics.RubricMetric(name="chk", rubric=rl.Rubric.checklist(["A?"]))
    t = rl.evaluate(
        pd.DataFrame({"prompt": ["p"], "response": ["r"]}), [metric], judge=_judge(fake_judge)
    ).table
    assert t.loc[0, "chk/score"] == 0.0 and pd.isna(t.loc[0, "chk/error"])
    second = fake_judge.requests[1]["messages"]
    assert second[1] == {"role": "assistant", "content": "not json at all"}
    assert "could not be used" in second[2]["content"]


def test_an_over_long_prompt_is_refused_on_its_row_without_a_call(fake_judge: Any) -> None:
    fake_judge.responder = judge_scripts.realistic
    df = pd.DataFrame({"prompt": ["p", "p"], "response": ["x" * 5_000, "a refund is possible"]})
    metric = rl.metrics.RubricMetric(name="sup", rubric=support_rubric(), max_prompt_chars=3_000)
    t = rl.evaluate(df, [metric], judge=_judge(fake_judge)).table
    assert "3,000" in t.loc[0, "sup/error"] or "3000" in t.loc[0, "sup/error"]
    assert pd.isna(t.loc[0, "sup/score"])
    assert t.loc[1, "sup/score"] == 1.0
    assert len(fake_judge.requests) == 1


def test_a_template_with_an_undefined_variable_names_it(fake_judge: Any) -> None:
    metric = rl.metrics.RubricMetric(
        name="custom", rubric=rl.Rubric.checklist(["A?"]), template="Judge {{ respons }} please."
    )
    t = rl.evaluate(
        pd.DataFrame({"prompt": ["p"], "response": ["r"]}), [metric], judge=_judge(fake_judge)
    ).table
    assert "respons" in t.loc[0, "custom/error"]
    assert fake_judge.requests == []


def test_analytic_rubric_with_critical_criterion_over_http(fake_judge: Any, tmp_path: Path) -> None:
    fake_judge.responder = judge_scripts.realistic
    metric = rl.metrics.RubricMetric(name="support", rubric=support_rubric())
    result = rl.evaluate(support_frame(), [metric], judge=_judge(fake_judge))
    t = result.table
    refunds = t["response"].str.lower().str.contains("refund")
    assert (t.loc[refunds, "support/score"] == 1.0).all()
    assert (t.loc[~refunds, "support/verdict"] == "fail (accuracy below 2)").all()
    first = t.loc[0, "support/criteria"][0]
    assert first["name"] == "accuracy" and first["evidence"] and first["passed_critical"] is False
    # the request carried a strict JSON schema keyed by criterion ids
    schema = fake_judge.requests[0]["response_format"]["json_schema"]["schema"]
    assert list(schema["properties"]["criteria"]["properties"]) == support_rubric().names
    # and the result survives a save/load round trip
    path = result.save(tmp_path / "support.jsonl")
    again = rl.load_result(path)
    assert again.table["support/criteria"].tolist() == t["support/criteria"].tolist()
    pd.testing.assert_frame_equal(again.summary, result.summary)


def test_a_missing_column_fails_fast_but_an_empty_response_is_judged() -> None:
    with pytest.raises(ValueError, match="no 'response' column"):
        rl.evaluate(pd.DataFrame({"prompt": ["p"]}), [rl.metrics.TEXT_QUALITY], judge="mock")
    result = rl.evaluate(
        pd.DataFrame({"prompt": ["p", "q"], "response": ["r", "  "]}, index=["a", "b"]),
        [rl.metrics.TEXT_QUALITY],
        judge="mock",
    )
    assert result.table["text_quality/error"].isna().all()  # "  " is what the model said


def test_the_mock_judge_runs_every_built_in_kind_offline_and_says_so() -> None:
    from rubriclab.demo import car_damage_frame

    result = rl.evaluate(
        car_damage_frame(),
        [rl.metrics.MULTIMODAL_UNDERSTANDING, rl.metrics.pairwise.MULTIMODAL_UNDERSTANDING],
        judge="mock",
    )
    assert result.is_mock and "MOCK" in repr(result)
    t = result.table
    assert t["multimodal_understanding/error"].isna().all()
    assert t["pairwise_multimodal_understanding/score"].isin([1.0, 0.5, 0.0, -0.5, -1.0]).all()
    assert t["image_description"].str.contains("mock", case=False).all()


def test_samples_vote_per_criterion() -> None:
    metric = rl.metrics.RubricMetric(name="v", rubric=support_rubric(), samples=3)
    t = rl.evaluate(support_frame().head(2), [metric], judge="mock").table
    for row in t["v/criteria"]:
        for crit in row:
            assert sum(crit["votes"].values()) == 3
            top = max(crit["votes"].values())
            assert crit["votes"][str(crit["level"])] == top
    assert all(len(raw) == 3 for raw in t["v/raw_output"])


def test_model_generates_responses_first_and_a_failing_model_row_is_kept() -> None:
    def model(prompt: str) -> str:
        if "boom" in prompt:
            raise RuntimeError("model exploded")
        return f"Answer to {prompt}"

    df = pd.DataFrame({"prompt": ["hello", "boom"]})
    metric = rl.metrics.RubricMetric(name="q", rubric=rl.Rubric.checklist(["Polite?"]))
    t = rl.evaluate(df, [metric], judge="mock", model=model).table
    assert t.loc[0, "response"] == "Answer to hello"
    assert pd.isna(t.loc[0, "q/error"])
    assert "model exploded" in t.loc[1, "q/error"]


# -- numbers you can trust (issue 18) ---------------------------------------------------------------


def _cut_off(text: str, tokens: int = 64) -> dict[str, Any]:
    """A completion the endpoint stopped at max_tokens, as OpenAI reports it."""
    return {
        "model": "judge-model",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text},
                "finish_reason": "length",
            }
        ],
        "usage": {"prompt_tokens": 10, "completion_tokens": tokens, "total_tokens": 10 + tokens},
    }


def _verdicts(**answers: str) -> str:
    return json.dumps(
        {"verdicts": {q: {"reasoning": "r", "verdict": v} for q, v in answers.items()}}
    )


def test_a_cut_off_answer_is_a_row_error_with_the_raw_text_never_a_score(fake_judge: Any) -> None:
    cut = '{"criteria": {"quality": {"reasoning": "flawless", "score": 1'
    fake_judge.responder = lambda body: _cut_off(cut, tokens=50)
    rubric = rl.Rubric.analytic({"quality": {"levels": {0: "bad", 1: "good"}}})
    metric = rl.metrics.RubricMetric(name="q", rubric=rubric)
    t = rl.evaluate(
        pd.DataFrame({"prompt": ["p"], "response": ["r"]}),
        [metric],
        judge=_judge(fake_judge, max_tokens=50),
    ).table
    assert pd.isna(t.loc[0, "q/score"])
    assert t.loc[0, "q/error"].startswith("judge answer cut off at max_tokens 1074 after 50 tokens")
    assert t.loc[0, "q/raw_output"] == cut
    # asked once more, the same question with twice the room (not a "fix your JSON" re-ask)
    first, second = fake_judge.requests
    assert (first["max_tokens"], second["max_tokens"]) == (50, 1074)
    assert second["messages"] == first["messages"]


def test_a_cut_off_answer_asked_again_with_room_scores(fake_judge: Any) -> None:
    def responder(body: dict[str, Any]) -> Any:
        if body.get("max_tokens", 0) < 1000:
            return _cut_off('{"verdicts": {"q1": {"reasoning": "fine", "verdict": "YE')
        return _verdicts(q1="YES")

    fake_judge.responder = responder
    metric = rl.metrics.RubricMetric(name="chk", rubric=rl.Rubric.checklist(["A?"]))
    t = rl.evaluate(
        pd.DataFrame({"prompt": ["p"], "response": ["r"]}),
        [metric],
        judge=_judge(fake_judge, max_tokens=200),
    ).table
    assert t.loc[0, "chk/score"] == 1.0 and t.loc[0, "chk/error"] is None
    assert [b["max_tokens"] for b in fake_judge.requests] == [200, 1224]


@pytest.mark.parametrize(
    "answer",
    [
        '{"verdicts": [{"id": "q1", "verdict": "YES"}, {"id": "q1", "verdict": "NO"}]}',
        '{"verdicts": {"q1": {"verdict": "YES"}, "q1": {"verdict": "NO"}}}',
    ],
    ids=["list", "object"],
)
def test_conflicting_duplicate_verdicts_are_asked_again_then_a_row_error(
    fake_judge: Any, answer: str
) -> None:
    fake_judge.responder = lambda body: answer
    metric = rl.metrics.RubricMetric(name="chk", rubric=rl.Rubric.checklist(["A?"]))
    t = rl.evaluate(
        pd.DataFrame({"prompt": ["p"], "response": ["r"]}), [metric], judge=_judge(fake_judge)
    ).table
    assert pd.isna(t.loc[0, "chk/score"])
    assert t.loc[0, "chk/error"].startswith("unreadable judge answer")
    assert "twice with different" in t.loc[0, "chk/error"]
    assert t.loc[0, "chk/raw_output"] == answer
    assert len(fake_judge.requests) == 2  # re-asked once


def test_identical_repeated_verdicts_are_merged(fake_judge: Any) -> None:
    fake_judge.responder = lambda body: (
        '{"verdicts": [{"id": "q1", "verdict": "NO"}, {"id": "q1", "verdict": "NO"}]}'
    )
    metric = rl.metrics.RubricMetric(name="chk", rubric=rl.Rubric.checklist(["A?"]))
    result = rl.evaluate(
        pd.DataFrame({"prompt": ["p"], "response": ["r"]}), [metric], judge=_judge(fake_judge)
    )
    assert result.table.loc[0, "chk/score"] == 0.0 and len(fake_judge.requests) == 1
    # no pass mark and nothing critical: no pass rate is invented
    text = result.summary_text()
    assert "no pass mark" in text and "pass 0.0%" not in text


def test_one_bad_row_does_not_stop_the_run(fake_judge: Any) -> None:
    def responder(body: dict[str, Any]) -> str:
        said = judge_scripts._between(judge_scripts._prompt(body), "response")
        return _verdicts(q1="YES" if said.strip() else "NO")

    fake_judge.responder = responder
    df = pd.DataFrame(
        {
            "prompt": ["p0", "p1", "p2", None, "p4", "p5"],
            "response": ["fine", "", None, "orphan", float("nan"), "also fine"],
        }
    )
    metric = rl.metrics.RubricMetric(
        name="chk", rubric=rl.Rubric.checklist(["Answered?"], pass_mark=0.5)
    )
    result = rl.evaluate(df, [metric], judge=_judge(fake_judge))
    t = result.table
    assert t["chk/score"].tolist()[:2] == [1.0, 0.0]  # "" is judged as what the model said
    assert t.loc[5, "chk/score"] == 1.0
    assert t.loc[2, "chk/error"] == "no response to judge"
    assert t.loc[4, "chk/error"] == "no response to judge"
    assert t.loc[3, "chk/error"] == "no prompt (column 'prompt' is empty in this row)"
    assert len(fake_judge.requests) == 3  # no call for a row that cannot be judged
    s = result.summary.loc["chk"]
    assert (s["n"], s["scored"], s["errors"], s["passed"], s["verdicts"]) == (6, 3, 3, 2, 3)
    with pytest.raises(ValueError, match="there is no column 'answer'"):  # shape problems fail fast
        rl.evaluate(df, [metric], judge=_judge(fake_judge), mapping={"response": "answer"})


def test_pass_rate_counts_only_real_passes_and_shows_its_denominator(fake_judge: Any) -> None:
    # one metric whose rubric has a pass mark on some rows and none on others
    fake_judge.responder = lambda body: _verdicts(q1="YES", q2="NO", q3="NO")
    with_mark = rl.Rubric.checklist(["A?", "B?", "C?"], pass_mark="30%")
    critical_only = rl.Rubric.checklist([rl.Criterion.yes_no("A?", critical=True), "B?", "C?"])
    df = pd.DataFrame(
        {
            "prompt": ["p"] * 3,
            "response": ["r1", "r2", "r3"],
            "rubric": [with_mark, with_mark, critical_only],
        }
    )
    result = rl.evaluate(df, [rl.metrics.RubricMetric(name="chk")], judge=_judge(fake_judge))
    t = result.table
    assert t["chk/verdict"].tolist() == ["pass", "pass", "critical met"]
    s = result.summary.loc["chk"]
    assert (s["pass_rate"], s["passed"], s["verdicts"], s["scored"]) == (1.0, 2, 2, 3)
    text = result.summary_text("run")
    assert "100.0% (2/2), 1 without verdict" in text and "33.3%" in text
    assert "pass = verdict 'pass'" in text


def test_pairwise_summary_counts_flips_and_wins_per_criterion(fake_judge: Any) -> None:
    def responder(body: dict[str, Any]) -> str:
        prompt = judge_scripts._prompt(body)
        a = judge_scripts._between(prompt, "response_A")
        # a judge with a position bias on q2: always prefers whatever is shown first
        q1 = "A" if "long" in a else "B"
        choice = "A>B" if "long" in a else "B>A"
        return json.dumps(
            {
                "criteria": {
                    "q1": {"evidence": "e", "winner": q1},
                    "q2": {"evidence": "e", "winner": "A"},
                },
                "overall": {"reasoning": "r", "choice": choice},
            }
        )

    fake_judge.responder = responder
    df = pd.DataFrame(
        {
            "prompt": ["p", "p"],
            "response": ["a long answer", "short"],
            "baseline_model_response": ["short", "a long answer"],
        }
    )
    metric = rl.metrics.PairwiseRubricMetric(
        name="pw", rubric=rl.Rubric.checklist(["Complete?", "Clear?"])
    )
    result = rl.evaluate(df, [metric], judge=_judge(fake_judge))
    s = result.metric_summary("pw")
    assert (s.swap_inconsistent, s.swap_inconsistent_rate) == (2, 1.0)
    assert s.criteria is not None
    assert s.criteria["q1"].model_dump() == {"win": 1, "tie": 0, "loss": 1}
    assert s.criteria["q2"].model_dump() == {"win": 0, "tie": 2, "loss": 0}
    row = result.summary.loc["pw"]
    assert (row["swap_inconsistent"], row["swap_inconsistent_rate"]) == (2, 1.0)
    text = result.summary_text("pw run")
    assert "swap-inconsistent" in text and "100.0% (2/2)" in text
    assert "pw per criterion (win/tie/loss): q1 1/0/1, q2 0/2/0" in text
    wins = result.criterion_wins("pw")
    assert wins.to_dict(orient="index") == {
        "q1": {"win": 1, "tie": 0, "loss": 1},
        "q2": {"win": 0, "tie": 2, "loss": 0},
    }


def test_a_bad_image_or_rubric_cell_fails_its_row_only(fake_judge: Any, tmp_path: Path) -> None:
    fake_judge.responder = lambda body: _verdicts(q1="YES")
    df = pd.DataFrame(
        {
            "prompt": ["p0", "p1", "p2"],
            "response": ["r0", "r1", "r2"],
            "image": [None, str(tmp_path / "missing.png"), None],
            "rubric": [["Right?"], ["Right?"], "criteria: [{name: a, wieght: 2}]"],
        }
    )
    metric = rl.metrics.RubricMetric(name="chk")
    t = rl.evaluate(df, [metric], judge=_judge(fake_judge), image_dirs=[tmp_path]).table
    assert t.loc[0, "chk/score"] == 1.0
    assert (
        "row 1, column 'image'" in t.loc[1, "chk/error"] and "no such file" in t.loc[1, "chk/error"]
    )
    assert "row 2, column 'rubric': not a valid rubric" in t.loc[2, "chk/error"]
    assert len(fake_judge.requests) == 1


def test_a_rubric_cell_that_names_a_file_is_text_never_read(
    fake_judge: Any, tmp_path: Path
) -> None:
    """Data is untrusted: a cell holding a path is not a rubric and the file is never opened."""
    secret = tmp_path / "secret.yaml"
    secret.write_text("criteria: [Is the password hunter2?]\n", encoding="utf-8")
    fake_judge.responder = lambda body: _verdicts(q1="YES")
    df = pd.DataFrame({"prompt": ["p0"], "response": ["r0"], "rubric": [str(secret)]})
    t = rl.evaluate(df, [rl.metrics.RubricMetric(name="chk")], judge=_judge(fake_judge)).table
    assert "row 0, column 'rubric': not a valid rubric" in t.loc[0, "chk/error"]
    assert "hunter2" not in t.to_json()
    assert fake_judge.requests == []


# -- issue 19: live runs -------------------------------------------------------------------------
def _half_bad(body: dict[str, Any]) -> str:
    """YES/YES, except rows whose response says 'bad': an answer that cannot be read."""
    if "<response>\nbad" in judge_scripts._prompt(body):
        return "I refuse to answer in JSON."
    return json.dumps({"verdicts": {q: {"reasoning": "r", "verdict": "YES"} for q in ("q1", "q2")}})


def test_on_rows_gets_finished_blocks_in_order_and_the_result_is_unchanged(
    fake_judge: Any,
) -> None:
    fake_judge.responder = _half_bad
    df = pd.DataFrame(
        {
            "prompt": [f"p{i}" for i in range(10)],
            "response": ["bad" if i % 4 == 1 else f"ok {i}" for i in range(10)],
        }
    )
    metric = rl.metrics.RubricMetric(name="chk", rubric=rl.Rubric.checklist(["A?", "B?"]))
    judge = _judge(fake_judge, cache=False)
    blocks: list[pd.DataFrame] = []
    live = rl.evaluate(df, [metric], judge=judge).table  # the plain run, for comparison
    from rubriclab.evaluation import aevaluate
    from rubriclab.judges.sync import run_sync

    result = run_sync(aevaluate(df, [metric], judge=judge, on_rows=blocks.append, chunk_rows=4))
    assert [len(b) for b in blocks] == [4, 4, 2]
    assert [list(b.index) for b in blocks] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    assert blocks[0]["chk/score"].notna().sum() == 3 and blocks[0].loc[1, "chk/error"]
    pd.testing.assert_frame_equal(
        result.table.drop(columns="chk/latency"), live.drop(columns="chk/latency")
    )
    assert result.summary.loc["chk", "errors"] == 3
    assert result.stats.calls["chk"] == 10 + 3  # each unreadable answer was asked once more


def test_display_true_outside_a_notebook_prints_progress_and_returns_the_result(
    fake_judge: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    fake_judge.responder = _half_bad
    df = pd.DataFrame({"prompt": ["p"] * 5, "response": ["ok", "bad", "ok", "ok", "ok"]})
    metric = rl.metrics.RubricMetric(name="chk", rubric=rl.Rubric.checklist(["A?", "B?"]))
    result = rl.evaluate(df, [metric], judge=_judge(fake_judge), display=True)
    assert len(result.table) == 5 and result.summary.loc["chk", "errors"] == 1
    from rubriclab.widgets.display import last_live_rows

    assert last_live_rows() is result.table


def test_ctrl_c_in_a_live_run_keeps_the_finished_rows(
    fake_judge: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    from rubriclab.widgets import display

    fake_judge.responder = _half_bad
    df = pd.DataFrame({"prompt": [f"p{i}" for i in range(12)], "response": ["ok"] * 12})
    metric = rl.metrics.RubricMetric(name="chk", rubric=rl.Rubric.checklist(["A?", "B?"]))
    judge = _judge(fake_judge)
    from rubriclab.evaluation import aevaluate
    from rubriclab.judges.sync import run_sync

    def run(on_rows: Any) -> Any:
        def hook(part: pd.DataFrame) -> None:
            on_rows(part)
            if len(part) and part.index[-1] == 7:  # Ctrl-C after the second block
                raise KeyboardInterrupt

        return run_sync(aevaluate(df, [metric], judge=judge, on_rows=hook, chunk_rows=4))

    with pytest.raises(KeyboardInterrupt):
        display.live_evaluate(run, rows=12)
    kept = display.last_live_rows()
    assert list(kept.index) == list(range(8)) and (kept["chk/score"] == 1.0).all()
    assert "run interrupted; the 8 finished rows stay in the live table" in capsys.readouterr().err


def test_live_runs_refuse_what_they_cannot_show() -> None:
    from rubriclab.evaluation import aevaluate
    from rubriclab.judges.sync import run_sync

    df = pd.DataFrame({"prompt": ["p"], "response": ["r"]})
    metric = rl.metrics.RubricMetric(name="chk", rubric=rl.Rubric.checklist(["A?"]))
    with pytest.raises(ValueError, match="no live view yet"):
        rl.evaluate(df, [metric], judge="mock", partition="span", display=True)
    with pytest.raises(ValueError, match="chunk_rows must be at least 1, got 0"):
        run_sync(aevaluate(df, [metric], judge="mock", on_rows=lambda part: None, chunk_rows=0))


def test_importing_any_submodule_keeps_the_public_functions() -> None:
    """No submodule shares a public function's name, so importing one never hides it
    (``rl.evaluate`` stays the function after ``import rubriclab.evaluation``)."""
    import importlib
    import pkgutil

    for info in pkgutil.iter_modules(rl.__path__):
        if info.name not in ("testing", "ray", "__main__"):
            importlib.import_module(f"rubriclab.{info.name}")
    for name in ("evaluate", "aevaluate", "compare", "agreement", "generate_rubrics"):
        assert callable(getattr(rl, name)) and not isinstance(getattr(rl, name), type(rl)), name


@pytest.mark.parametrize(
    ("answers", "levels"),
    [
        # the shape the schema asks for
        ({"q1": {"verdict": "YES"}, "q2": {"verdict": "NO"}, "q3": {"verdict": "YES"}}, [1, 0, 1]),
        # shapes judges give anyway: words in any case, booleans, numbers, bare values
        ({"q1": {"verdict": "yes"}, "q2": {"answer": False}, "q3": "Yes."}, [1, 0, 1]),
        ({"q1": {"score": 1}, "q2": {"level": 0.0}, "q3": {"verdict": "[[YES]]"}}, [1, 0, 1]),
        ({"q1": True, "q2": "no", "q3": {"verdict": "1"}}, [1, 0, 1]),
    ],
)
def test_every_answer_shape_a_judge_gives_reads_as_its_level(
    answers: dict[str, Any], levels: list[int]
) -> None:
    from rubriclab.testing import FakeJudgeServer

    rubric = rl.Rubric.checklist(["Is it right?", "Is it long?", "Is it kind?"])
    metric = rl.metrics.RubricMetric(rubric=rubric, name="chk")
    text = json.dumps({"verdicts": answers, "rationale": "read"})
    with FakeJudgeServer(lambda body: text) as server:
        judge = rl.Judge(server.url, model="m", cache=False)
        table = rl.evaluate(
            pd.DataFrame({"prompt": ["p"], "response": ["r"]}), [metric], judge=judge
        ).table
    assert table.loc[0, "chk/error"] is None
    assert [c["level"] for c in table.loc[0, "chk/criteria"]] == levels
    assert [c["label"] for c in table.loc[0, "chk/criteria"]] == [
        "YES" if v else "NO" for v in levels
    ]
    assert table.loc[0, "chk/score"] == pytest.approx(sum(levels) / 3)


def test_an_analytic_answer_outside_the_levels_is_asked_again_not_scored() -> None:
    from rubriclab.testing import FakeJudgeServer

    rubric = rl.Rubric.analytic({"accuracy": {"levels": {1: "wrong", 2: "partly", 4: "right"}}})
    metric = rl.metrics.RubricMetric(rubric=rubric, name="acc", reask=2)
    answers = iter(
        [json.dumps({"criteria": {"accuracy": {"level": level}}}) for level in (3, True, "4")]
    )
    with FakeJudgeServer(lambda body: next(answers)) as server:
        judge = rl.Judge(server.url, model="m", cache=False)
        table = rl.evaluate(
            pd.DataFrame({"prompt": ["p"], "response": ["r"]}), [metric], judge=judge
        ).table
        assert len(server.requests) == 3  # 3 is not a level, True is not a level of 1-4
    assert table.loc[0, "acc/error"] is None
    assert table.loc[0, "acc/criteria"][0]["level"] == 4 and table.loc[0, "acc/score"] == 1.0


def test_a_first_evaluate_imports_only_what_it_uses() -> None:
    """A kernel's first evaluate pays for every import it makes: traces, calibration and the
    views are loaded only when a run judges traces, tallies a panel or shows a result."""
    import subprocess
    import sys

    code = (
        "import sys, pandas as pd, rubriclab as rl\n"
        "rubric = rl.Rubric.checklist(['Is it right?'])\n"
        "frame = pd.DataFrame({'prompt': ['p'], 'response': ['r']})\n"
        "rl.evaluate(frame, [rl.metrics.RubricMetric(rubric=rubric, name='c')], judge='mock')\n"
        "heavy = ('rubriclab.traces', 'rubriclab.calibration', 'rubriclab.widgets')\n"
        "print(sorted(m for m in sys.modules if m.startswith(heavy)))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_an_unreachable_judge_warns_with_the_error_and_the_repr_says_so() -> None:
    import socket

    from rubriclab.result import RowErrorWarning

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    dead = rl.Judge(f"http://127.0.0.1:{port}/v1", model="m", max_retries=0)
    metric = rl.metrics.RubricMetric(rubric=support_rubric(), name="support")
    with pytest.warns(RowErrorWarning) as caught:
        result = rl.evaluate(support_frame().head(3), metrics=[metric], judge=dead)
    assert len(caught) == 1  # once, not once per row
    message = str(caught[0].message)
    assert message.startswith("support: 3 of 3 rows failed (no row scored)\n  3x judge call")
    assert f"cannot connect to http://127.0.0.1:{port}/v1" in message
    assert "result.table['METRIC/error']" in message
    text = repr(result)
    assert "support: NO ROW SCORED, 3 errors" in text
    assert "first error (3x): judge call failed" in text and "cannot connect" in text


def test_aevaluate_warns_too_and_a_clean_run_does_not(fake_judge: Any) -> None:
    import asyncio
    import warnings

    from rubriclab.result import RowErrorWarning

    fake_judge.responder = judge_scripts.realistic
    metric = rl.metrics.RubricMetric(rubric=support_rubric(), name="support")
    with warnings.catch_warnings():
        warnings.simplefilter("error", RowErrorWarning)
        result = asyncio.run(
            rl.aevaluate(support_frame().head(2), [metric], judge=_judge(fake_judge))
        )
    assert result.row_errors() == []
    assert "first error" not in repr(result)
    fake_judge.responder = lambda body: "no verdict here"
    with pytest.warns(RowErrorWarning, match="2 of 2 rows failed"):
        asyncio.run(rl.aevaluate(support_frame().head(2), [metric], judge=_judge(fake_judge)))


def test_one_metric_needs_no_list_and_text_is_refused_clearly(fake_judge: Any) -> None:
    fake_judge.responder = judge_scripts.realistic
    metric = rl.metrics.RubricMetric(rubric=support_rubric(), name="support")
    result = rl.evaluate(support_frame().head(2), metrics=metric, judge=_judge(fake_judge))
    assert result.metric_names == ["support"] and result.table["support/score"].notna().all()
    with pytest.raises(TypeError, match="metrics='support' is text: pass metric objects"):
        rl.evaluate(support_frame().head(2), metrics="support", judge=_judge(fake_judge))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("metric", "mapping", "column"),
    [
        (
            rl.metrics.PairwiseRubricMetric(rubric=support_rubric(), name="vs"),
            None,
            "baseline_model_response",
        ),
        (
            rl.metrics.PairwiseRubricMetric(
                rubric=support_rubric(), name="vs", baseline_column="old"
            ),
            None,
            "old",
        ),
        # a predefined pairwise metric would write rubrics first: no call may happen either
        (rl.metrics.pairwise.TEXT_QUALITY, None, "baseline_model_response"),
    ],
)
def test_a_missing_baseline_column_stops_before_any_call_naming_it(
    fake_judge: Any, metric: Any, mapping: Any, column: str
) -> None:
    fake_judge.responder = judge_scripts.realistic
    pointwise = rl.metrics.RubricMetric(rubric=support_rubric(), name="support")
    frame = support_frame().head(2)[["prompt", "response"]]
    with pytest.raises(ValueError) as info:
        rl.evaluate(frame, metrics=[pointwise, metric], judge=_judge(fake_judge), mapping=mapping)
    assert f"no {column!r} column" in str(info.value) and "compares each response" in str(
        info.value
    )
    assert fake_judge.requests == []  # not one call, not even the pointwise metric's


def test_a_live_run_hands_over_its_first_rows_after_one_round_of_calls(fake_judge: Any) -> None:
    """Issue 26: the live table filled in blocks of 16 (4x the concurrency, at least 16), so
    its first rows came only after 8 rounds of calls; the first block is now one round and
    blocks double from there (to the old size), the result unchanged."""
    from rubriclab.evaluation import aevaluate
    from rubriclab.judges.sync import run_sync

    fake_judge.responder = _half_bad
    df = pd.DataFrame({"prompt": [f"p{i}" for i in range(40)], "response": ["ok"] * 40})
    metric = rl.metrics.RubricMetric(name="chk", rubric=rl.Rubric.checklist(["A?", "B?"]))
    judge = _judge(fake_judge, cache=False, max_concurrency=2)
    blocks: list[pd.DataFrame] = []
    result = run_sync(aevaluate(df, [metric], judge=judge, on_rows=blocks.append))
    assert [len(b) for b in blocks] == [2, 4, 8, 16, 10]
    assert [b.index[0] for b in blocks] == [0, 2, 6, 14, 30]
    assert len(result.table) == 40 and (result.table["chk/score"] == 1.0).all()
    # the sizes alone: explicit chunk_rows kept as given
    from rubriclab.evaluation.run import block_sizes

    assert block_sizes(10, 4, 16) == [4, 4, 2]
    assert block_sizes(200, None, 16) == [16, 32, 64, 64, 24]
    assert block_sizes(0, None, 4) == []
