"""A row's conversation reaches the views as messages for a chat transcript (text only), with a
per-turn metric's turn results beside it; a cell that is not a conversation stays a field."""

from __future__ import annotations

import dataclasses

import pandas as pd

import rubriclab as rl
from rubriclab.widgets._cells import case_payload
from rubriclab.widgets._source import MetricRef, Source

TALK = [
    {"role": "system", "content": "You are a support agent."},
    {"role": "user", "content": "<img src=x onerror=alert(1)> where is my order?"},
    {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {"id": "c1", "function": {"name": "lookup_order", "arguments": '{"id": "A1"}'}}
        ],
    },
    {"role": "tool", "tool_call_id": "c1", "content": "| a | b |"},
    {"role": "assistant", "content": "It shipped today."},
]


def test_case_payload_carries_the_conversation_in_order_with_turns() -> None:
    table = pd.DataFrame({"prompt": ["where?"], "conversation": [TALK]})
    case = case_payload(Source(table=table, metrics=[]), 0)
    conv = case["conversation"]
    assert [m["role"] for m in conv["messages"]] == [m["role"] for m in TALK]
    assert conv["messages"][1]["content"] == "<img src=x onerror=alert(1)> where is my order?"
    assert conv["messages"][2]["tool_calls"] == [
        {"name": "lookup_order", "arguments": '{"id": "A1"}'}
    ]
    assert [m.get("turn") for m in conv["messages"]] == [None, None, 1, None, 2]
    assert conv["messages"][3]["tool_call_id"] == "c1"
    # shown as a transcript, so not again as a JSON field
    assert [f["name"] for f in case["fields"]] == ["prompt"]


def test_a_cell_that_is_not_a_conversation_stays_a_plain_field() -> None:
    table = pd.DataFrame({"conversation": ["not a conversation"]})
    case = case_payload(Source(table=table, metrics=[]), 0)
    assert case["conversation"] is None
    assert case["fields"] == [{"name": "conversation", "text": "not a conversation"}]


def test_per_turn_results_reach_the_metric_payload_worst_first() -> None:
    metric = dataclasses.replace(rl.metrics.TASK_COMPLETION, name="turns_judged", per_turn=True)
    result = rl.evaluate(pd.DataFrame({"conversation": [TALK]}), [metric], judge="mock")
    source = Source(table=result.table, metrics=[MetricRef("turns_judged")])
    (payload,) = case_payload(source, 0)["metrics"]
    turns = payload["turns"]
    assert sorted(t["turn"] for t in turns) == [1, 2]
    assert turns[0]["score"] == min(t["score"] for t in turns)
    whole = rl.evaluate(
        pd.DataFrame({"conversation": [TALK]}), [rl.metrics.ROLE_ADHERENCE], judge="mock"
    )
    (plain,) = case_payload(Source(table=whole.table, metrics=[MetricRef("role_adherence")]), 0)[
        "metrics"
    ]
    assert "turns" not in plain


def test_the_static_form_keeps_the_transcript_escaped_with_turn_scores() -> None:
    metric = dataclasses.replace(rl.metrics.TASK_COMPLETION, name="turns_judged", per_turn=True)
    result = rl.evaluate(pd.DataFrame({"conversation": [TALK]}), [metric], judge="mock")
    view = rl.Explanation(result)
    from rubriclab.widgets._static.case import case_html, case_text

    html = case_html(view.case)
    assert "&lt;img src=x onerror=alert(1)&gt; where is my order?" in html
    assert "<img src=x" not in html
    start, end = html.index("conversation</div>"), html.index("It shipped today.")
    assert "| a | b |" in html[start:end] and "<table" not in html[start:end]
    assert "→ lookup_order({&quot;id&quot;: &quot;A1&quot;})" in html
    assert "assistant · turn 2" in html and html.count("worst turn") == 1
    text = case_text(view.case)
    assert "  tool · result for c1: | a | b |" in text
    assert '  assistant · turn 1:  -> lookup_order({"id": "A1"})' in text
