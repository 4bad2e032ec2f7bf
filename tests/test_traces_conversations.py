"""Conversations from traces (issue 33 point 2): an agent's model calls become one
``conversation`` per trace (or per session), which the conversation metrics judge whole and per
turn over real HTTP."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import rubriclab as rl
from rubriclab.data import transcript
from rubriclab.traces import Trace, trace_conversation, trace_conversations

FIXTURES = Path(__file__).parent / "fixtures" / "traces"
AGENT_RUN = FIXTURES / "agent_run_otlp.json"
REAL = FIXTURES / "real"


def _shape(conversation: list[dict[str, Any]]) -> list[tuple[str, list[str]]]:
    return [
        (m["role"], [c["function"]["name"] for c in m.get("tool_calls", [])]) for m in conversation
    ]


def test_an_agent_run_becomes_its_main_thread_without_the_side_call() -> None:
    frame = trace_conversations(AGENT_RUN)
    assert list(frame.columns) == ["trace_id", "conversation"]
    (conversation,) = frame["conversation"]
    assert _shape(conversation) == [
        ("system", []),
        ("user", []),
        ("assistant", ["get_weather", "search_web"]),
        ("tool", []),
        ("tool", []),
        ("assistant", ["search_web"]),
        ("tool", []),
        ("assistant", []),
    ]
    assert conversation[0]["content"].startswith("You are a travel assistant.")
    assert conversation[3]["tool_call_id"] == "call_weather_1"
    assert conversation[-1]["content"].startswith("Pack light summer clothes")
    # the summariser is a call of its own (another system prompt): not part of this conversation
    assert not any(m["content"].startswith("Summarise these") for m in conversation)
    args = json.loads(conversation[2]["tool_calls"][0]["function"]["arguments"])
    assert args["city"] == "Lisbon"


@pytest.mark.parametrize(
    "name",
    ["openinference.otlp.json", "genai_spans.otlp.json", "langfuse.otlp.json", "mlflow.trace.json"],
)
def test_every_producer_gives_the_same_conversation(name: str) -> None:
    (conversation,) = trace_conversations(REAL / name)["conversation"]
    assert _shape(conversation) == [
        ("user", []),
        ("assistant", ["get_weather", "add"]),
        ("tool", []),
        ("tool", []),
        ("assistant", []),
    ]
    assert conversation[0]["content"].startswith("What is the weather in Paris")
    assert conversation[-1]["content"].startswith("Done: get_weather")


def _llm(trace: str, span: str, start: int, given: list[Any], said: list[Any], **attrs: Any) -> Any:
    return {
        "trace_id": trace,
        "span_id": span,
        "name": "chat",
        "kind": "LLM",
        "start": f"2026-01-01T00:00:{start:02d}Z",
        "end": f"2026-01-01T00:00:{start + 1:02d}Z",
        "attributes": attrs,
        "input_messages": given,
        "output_messages": said,
    }


def _msg(role: str, text: str) -> dict[str, str]:
    return {"role": role, "content": text}


SYS = _msg("system", "Be brief.")
SESSION_TRACES = [
    # session s1 re-sends its history with every trace
    Trace.from_spans(
        [
            _llm(
                "t1",
                "a",
                0,
                [_msg("user", "hi")],
                [_msg("assistant", "hello")],
                **{"session.id": "s1"},
            )
        ]
    ),
    Trace.from_spans(
        [
            _llm(
                "t2",
                "b",
                10,
                [_msg("user", "hi"), _msg("assistant", "hello"), _msg("user", "bye")],
                [_msg("assistant", "ciao")],
                **{"gen_ai.conversation.id": "s1"},
            )
        ]
    ),
    # session s2 sends only each turn's new messages (and its system prompt every time)
    Trace.from_spans(
        [
            _llm(
                "t3",
                "c",
                20,
                [SYS, _msg("user", "one?")],
                [_msg("assistant", "1")],
                **{"session.id": "s2"},
            )
        ]
    ),
    Trace.from_spans(
        [
            _llm(
                "t4",
                "d",
                30,
                [SYS, _msg("user", "two?")],
                [_msg("assistant", "2")],
                **{"session.id": "s2"},
            )
        ]
    ),
    # no session id: a session of its own
    Trace.from_spans([_llm("t5", "e", 40, [_msg("user", "alone")], [_msg("assistant", "yes")])]),
]


def _texts(conversation: list[dict[str, Any]]) -> list[str]:
    return [f"{m['role']}: {m['content']}" for m in conversation]


def test_traces_of_one_session_join_in_order() -> None:
    frame = trace_conversations(SESSION_TRACES, by="session")
    assert list(frame.columns) == ["session_id", "trace_ids", "conversation"]
    assert frame["session_id"].tolist() == ["s1", "s2", "t5"]
    assert frame["trace_ids"].tolist() == [["t1", "t2"], ["t3", "t4"], ["t5"]]
    s1, s2, alone = frame["conversation"]
    assert _texts(s1) == ["user: hi", "assistant: hello", "user: bye", "assistant: ciao"]
    assert _texts(s2) == [
        "system: Be brief.",
        "user: one?",
        "assistant: 1",
        "user: two?",
        "assistant: 2",
    ]
    assert _texts(alone) == ["user: alone", "assistant: yes"]
    # negative control: per trace, nothing is joined
    per_trace = trace_conversations(SESSION_TRACES)
    assert per_trace["trace_id"].tolist() == ["t1", "t2", "t3", "t4", "t5"]
    assert _texts(per_trace["conversation"][3]) == [
        "system: Be brief.",
        "user: two?",
        "assistant: 2",
    ]


def test_a_trace_without_messages_keeps_its_row_as_that_rows_error() -> None:
    quiet = Trace.from_spans([_llm("q", "z", 0, [], [])])
    assert trace_conversation(quiet) == []
    frame = trace_conversations([quiet, SESSION_TRACES[4]])
    assert frame["conversation"][0] is None
    t = rl.evaluate(frame, [rl.metrics.TASK_COMPLETION], judge="mock").table
    assert "no conversation" in t["task_completion/error"].iloc[0]
    assert t["task_completion/error"].isna().iloc[1]


def test_by_must_be_trace_or_session() -> None:
    with pytest.raises(ValueError, match="by must be 'trace' or 'session'"):
        trace_conversations(SESSION_TRACES, by="user")  # type: ignore[arg-type]


def _answer(level: int) -> str:
    return json.dumps(
        {
            "criteria": {
                n: {"evidence": "[message 8]", "level": level} for n in ("task_done", "confirmed")
            },
            "rationale": "r",
        }
    )


def test_a_trace_conversation_is_judged_whole_and_per_turn_over_http(fake_judge: Any) -> None:
    def responder(body: dict[str, Any]) -> str:
        prompt = body["messages"][-1]["content"]
        block = prompt.split("<conversation>\n")[1].split("\n</conversation>")[0]
        # a turn that ends in tool calls has done nothing yet: level 1; the final answer: 3
        return _answer(1 if block.splitlines()[-1].startswith("tool call: ") else 3)

    fake_judge.responder = responder
    frame = trace_conversations(AGENT_RUN)
    judge = rl.Judge(fake_judge.url, model="judge-model", max_retries=0)
    whole = rl.evaluate(frame, [rl.metrics.TASK_COMPLETION], judge=judge).table
    assert len(fake_judge.requests) == 1
    prompt = fake_judge.requests[0]["messages"][-1]["content"]
    block = prompt.split("<conversation>\n")[1].split("\n</conversation>")[0]
    assert block == transcript(
        rl.data.conversation_cell(frame["conversation"][0], "row 0", "conversation") or []
    )
    assert "[message 8] assistant (turn 3)\n| Pack light summer clothes" in block
    assert whole["task_completion/score"].iloc[0] == 1.0  # levels 3 of 3 on both criteria

    fake_judge.requests.clear()
    per_turn = rl.metrics.ConversationMetric(
        name="each", rubric=rl.metrics.TASK_COMPLETION.rubric, per_turn=True, turn_rule="mean"
    )
    t = rl.evaluate(frame, [per_turn], judge=judge).table
    assert len(fake_judge.requests) == 3  # three assistant turns
    turns = t["each/turns"].iloc[0]
    assert [e["turn"] for e in turns] == [1, 2, 3]  # turns 1, 2 (tool calls) tie at 0: worst first
    assert [e["score"] for e in turns] == [0.0, 0.0, 1.0]
    assert t["each/score"].iloc[0] == pytest.approx(1 / 3)  # mean of 0, 0, 1
