"""Vertex agent evaluation by metric name: EvalTask(metrics=["trajectory_exact_match", ...]) reads
``predicted_trajectory`` / ``reference_trajectory`` and scores with no judge (values by hand)."""

from __future__ import annotations

from typing import Any

import pandas as pd
import pytest

from rubriclab.compat.vertex.task import EvalTask, MissingColumnError


def _call(name: str, **args: Any) -> dict[str, Any]:
    return {"tool_name": name, "tool_input": args}


A, B, C = _call("get_weather", city="Paris"), _call("book", day="mon"), _call("search", q="x")
NAMES = [
    "trajectory_exact_match",
    "trajectory_in_order_match",
    "trajectory_any_order_match",
    "trajectory_precision",
    "trajectory_recall",
]


def _data() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "predicted_trajectory": [[A, B], [B, A], [A, C]],
            "reference_trajectory": [[A, B], [A, B], [A, B]],
        }
    )


def test_trajectory_metrics_by_name_score_by_hand() -> None:
    result = EvalTask(dataset=_data(), metrics=list(NAMES)).evaluate()
    table = result.metrics_table
    # row 0 identical; row 1 same calls swapped; row 2 one of two calls right
    assert table["trajectory_exact_match/score"].tolist() == [1.0, 0.0, 0.0]
    assert table["trajectory_in_order_match/score"].tolist() == [1.0, 0.0, 0.0]
    assert table["trajectory_any_order_match/score"].tolist() == [1.0, 1.0, 0.0]
    assert table["trajectory_precision/score"].tolist() == [1.0, 1.0, 0.5]
    assert table["trajectory_recall/score"].tolist() == [1.0, 1.0, 0.5]
    summary = result.summary_metrics
    assert summary["row_count"] == 3
    assert summary["trajectory_exact_match/mean"] == pytest.approx(1 / 3)
    assert summary["trajectory_any_order_match/mean"] == pytest.approx(2 / 3)
    assert summary["trajectory_precision/mean"] == pytest.approx(2.5 / 3)


def test_tool_call_metrics_by_name_read_response_and_reference() -> None:
    call = (
        '{"content": "", "tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}]}'
    )
    other = (
        '{"content": "", "tool_calls": [{"name": "get_weather", "arguments": {"town": "Rome"}}]}'
    )
    data = pd.DataFrame({"response": [call, other, "not json"], "reference": [call, call, call]})
    names = ["tool_call_valid", "tool_name_match", "tool_parameter_key_match"]
    table = EvalTask(dataset=data, metrics=names).evaluate().metrics_table
    assert table["tool_call_valid/score"].tolist() == [1.0, 1.0, 0.0]
    assert table["tool_name_match/score"].tolist() == [1.0, 1.0, 0.0]
    assert table["tool_parameter_key_match/score"].tolist() == [1.0, 0.0, 0.0]


def test_a_missing_reference_cell_is_the_rows_error_not_a_zero() -> None:
    data = _data()
    data.loc[1, "reference_trajectory"] = None
    result = EvalTask(dataset=data, metrics=["trajectory_recall"]).evaluate()
    scores = result.metrics_table["trajectory_recall/score"].tolist()
    assert scores[0] == 1.0 and pd.isna(scores[1]) and scores[2] == 0.5
    assert result.summary_metrics["trajectory_recall/errors"] == 1


def test_a_missing_column_and_single_tool_use_by_name_say_what_to_do() -> None:
    with pytest.raises(MissingColumnError, match="reference_trajectory"):
        EvalTask(
            dataset=_data().drop(columns="reference_trajectory"),
            metrics=["trajectory_exact_match"],
        ).evaluate()
    with pytest.raises(ValueError, match=r"trajectory_single_tool_use\(tool_name\)"):
        EvalTask(dataset=_data(), metrics=["trajectory_single_tool_use"])


def test_single_tool_use_takes_the_tool_name_as_vertex_does() -> None:
    from rubriclab.compat.vertex import TrajectorySingleToolUse

    metric = TrajectorySingleToolUse(tool_name="book")
    assert metric.metric_name == "trajectory_single_tool_use"
    data = _data().drop(columns="reference_trajectory")  # it reads no reference
    table = EvalTask(dataset=data, metrics=[metric]).evaluate().metrics_table
    # [A, B] and [B, A] call book; [A, C] does not
    assert table["trajectory_single_tool_use/score"].tolist() == [1.0, 1.0, 0.0]
    with pytest.raises(ValueError, match="tool's name"):
        TrajectorySingleToolUse(tool_name="")
