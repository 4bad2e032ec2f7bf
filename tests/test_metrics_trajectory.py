"""Trajectory and tool-call metrics: a table of cases against values worked out by hand, and
the metrics inside ``evaluate`` (no judge, no call)."""

from __future__ import annotations

import json
from typing import Any

import pandas as pd
import pytest

import rubriclab as rl
from rubriclab.metrics import trajectory as tj

A = {"tool_name": "search", "tool_input": {"q": "x"}}
A2 = {"tool_name": "search", "tool_input": {"q": "y"}}
B = {"tool_name": "book", "tool_input": {"id": 1}}
C = {"tool_name": "pay", "tool_input": {"amount": 5}}

# predicted, reference -> exact, in order, any order, precision, recall (by hand)
TRAJECTORIES = [
    ([A, B], [A, B], 1, 1, 1, 1.0, 1.0),
    ([B, A], [A, B], 0, 0, 1, 1.0, 1.0),
    ([A, C, B], [A, B], 0, 1, 1, 2 / 3, 1.0),
    ([A], [A, B], 0, 0, 0, 1.0, 0.5),
    ([A, A], [A], 0, 1, 1, 0.5, 1.0),
    ([], [A], 0, 0, 0, 0.0, 0.0),
    ([], [], 1, 1, 1, 1.0, 1.0),
    ([A2], [A], 0, 0, 0, 0.0, 0.0),
    ([C], [], 0, 1, 1, 0.0, 1.0),
    ([B, A, B], [A, B, B], 0, 0, 1, 1.0, 1.0),
]


@pytest.mark.parametrize(("pred", "ref", "exact", "in_order", "any_order", "p", "r"), TRAJECTORIES)
def test_trajectory_metrics_equal_hand_computed_values(
    pred: list[Any], ref: list[Any], exact: int, in_order: int, any_order: int, p: float, r: float
) -> None:
    got = {
        name: tj.TRAJECTORY[name].score_one(json.dumps(pred), ref).score for name in tj.TRAJECTORY
    }
    assert got == {
        "trajectory_exact_match": exact,
        "trajectory_in_order_match": in_order,
        "trajectory_any_order_match": any_order,
        "trajectory_precision": p,
        "trajectory_recall": r,
    }


REF = json.dumps(
    {"content": "", "tool_calls": [{"name": "book", "arguments": {"id": 1, "seat": "A"}}]}
)
OPENAI = {
    "tool_calls": [
        {"type": "function", "function": {"name": "book", "arguments": '{"seat": "A", "id": 1}'}}
    ]
}

# response -> valid, name, key, kv (by hand, against REF)
TOOL_CALLS = [
    ({"tool_calls": [{"name": "book", "arguments": {"id": 1, "seat": "A"}}]}, 1, 1, 1, 1),
    ({"tool_calls": [{"name": "book", "arguments": {"id": 2, "seat": "A"}}]}, 1, 1, 1, 0),
    ({"tool_calls": [{"name": "book", "arguments": {"id": 1}}]}, 1, 1, 0, 0),
    ({"tool_calls": [{"name": "cancel", "arguments": {"id": 1, "seat": "A"}}]}, 1, 0, 1, 1),
    (OPENAI, 1, 1, 1, 1),
    ({"content": "I booked it"}, 0, 0, 0, 0),
    ("not json", 0, 0, 0, 0),
    ({"tool_calls": []}, 0, 0, 0, 0),
    ({"tool_calls": [{"arguments": {"id": 1}}]}, 0, 0, 0, 0),
    (
        {"tool_calls": [{"name": "book", "arguments": {"id": 1, "seat": "A"}}, {"name": "pay"}]},
        1,
        0,
        0,
        0,
    ),
]


@pytest.mark.parametrize(("response", "valid", "name", "key", "kv"), TOOL_CALLS)
def test_tool_call_metrics_equal_hand_computed_values(
    response: Any, valid: int, name: int, key: int, kv: int
) -> None:
    text = response if isinstance(response, str) else json.dumps(response)
    got = {n: tj.TOOL_CALL[n].score_one(text, REF).score for n in tj.TOOL_CALL}
    assert got == {
        "tool_call_valid": valid,
        "tool_name_match": name,
        "tool_parameter_key_match": key,
        "tool_parameter_kv_match": kv,
    }


def test_single_tool_use_and_reasons() -> None:
    m = rl.metrics.trajectory_single_tool_use("book")
    assert m.score_one([A, B, B], None).score == 1.0
    assert m.score_one([A, B, B], None).rationale == "book called 2 time(s)"
    assert m.score_one([A], None).score == 0.0
    out = tj.trajectory_in_order_match.score_one([B, A], [A, B])
    assert out.rationale == "reference call 2 (book(id=1)) is not found after call 1"


def test_in_evaluate_no_judge_and_bad_rows_are_errors_not_zeros() -> None:
    df = pd.DataFrame(
        {
            "prompt": ["book a flight"] * 4,
            "response": ["Booked."] * 4,
            "predicted_trajectory": [[A, B], json.dumps([B]), None, [A]],
            "reference_trajectory": [[A, B], [A, B], [A], "{broken"],
        }
    )
    metrics = [tj.trajectory_exact_match, tj.trajectory_recall, tj.trajectory_precision]
    t = rl.evaluate(df, metrics).table
    assert t["trajectory_exact_match/score"].tolist()[:2] == [1.0, 0.0]
    assert t["trajectory_recall/score"].tolist()[:2] == [1.0, 0.5]
    assert t["trajectory_precision/score"].tolist()[:2] == [1.0, 1.0]
    assert t["trajectory_recall/error"][2] == "no 'predicted_trajectory' value to score"
    assert "reference_trajectory is not JSON" in t["trajectory_recall/error"][3]
    assert t["trajectory_recall/score"].isna().tolist()[2:] == [True, True]


def test_a_missing_column_is_named() -> None:
    df = pd.DataFrame({"prompt": ["p"], "response": ["r"], "predicted_trajectory": [[A]]})
    with pytest.raises(ValueError, match="reads a 'reference_trajectory' column"):
        rl.evaluate(df, [tj.trajectory_recall])


def test_the_judged_trajectory_rubric_sends_the_calls_and_scores_the_levels(
    fake_judge: Any,
) -> None:
    def responder(body: dict[str, Any]) -> str:
        prompt = body["messages"][-1]["content"]
        calls = prompt.split("<tool_calls>")[1].split("</tool_calls>")[0]
        good = '"search"' in calls and "<reference_tool_calls>" in prompt
        level = 3 if good else 1
        return json.dumps(
            {
                "criteria": {
                    n: {"evidence": "-", "level": level} for n in ("tool_choice", "inputs", "order")
                },
                "rationale": "ok",
            }
        )

    fake_judge.responder = responder
    df = pd.DataFrame(
        {
            "prompt": ["find x then book"] * 2,
            "response": ["Booked."] * 2,
            "predicted_trajectory": [[A, B], [C]],
            "reference_trajectory": [[A, B], [A, B]],
        }
    )
    judge = rl.Judge(fake_judge.url, model="judge-model", max_retries=0)
    t = rl.evaluate(df, [rl.metrics.TRAJECTORY_QUALITY], judge=judge).table
    assert len(fake_judge.requests) == 2
    first = fake_judge.requests[0]["messages"][-1]["content"]
    assert "<tool_calls>" in first and '"tool_name": "book"' in first
    # weights 2, 2, 1 over levels 1-3: all 3 -> 1.0; all 1 -> 0.0 and tool_choice below 2
    assert t["trajectory_quality/score"].tolist() == [1.0, 0.0]
    assert t["trajectory_quality/verdict"].tolist() == ["pass", "fail (tool_choice below 2)"]
