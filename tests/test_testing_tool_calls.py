"""The fake server's tool-calling model: asked calls come back as tool calls, then an answer."""

from __future__ import annotations

import json
from typing import Any

import httpx

from rubriclab.testing import FakeJudgeServer, tool_call_responder

TOOLS = [
    {"type": "function", "function": {"name": "add", "parameters": {"type": "object"}}},
    {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}},
]
ASK = 'Please:\ncall add {"a": 2, "b": 3}\ncall get_weather {"city": "Oslo"}'


def _post(server: FakeJudgeServer, body: dict[str, Any]) -> dict[str, Any]:
    reply = httpx.post(f"{server.url}/chat/completions", json=body, timeout=10)
    reply.raise_for_status()
    data: dict[str, Any] = reply.json()
    return data


def test_calls_when_asked_then_answers_from_the_results() -> None:
    with FakeJudgeServer(tool_call_responder) as server:
        messages: list[dict[str, Any]] = [{"role": "user", "content": ASK}]
        first = _post(server, {"model": "m", "messages": messages, "tools": TOOLS})
        [choice] = first["choices"]
        assert choice["finish_reason"] == "tool_calls"
        calls = choice["message"]["tool_calls"]
        assert [(c["id"], c["function"]["name"]) for c in calls] == [
            ("call_1_0", "add"),
            ("call_1_1", "get_weather"),
        ]
        assert [json.loads(c["function"]["arguments"]) for c in calls] == [
            {"a": 2, "b": 3},
            {"city": "Oslo"},
        ]
        assert first["usage"]["prompt_tokens"] > 0
        messages.append(choice["message"])
        messages.append({"role": "tool", "tool_call_id": "call_1_0", "content": "5"})
        messages.append({"role": "tool", "tool_call_id": "call_1_1", "content": "rain"})
        second = _post(server, {"model": "m", "messages": messages, "tools": TOOLS})
        [choice] = second["choices"]
        assert choice["finish_reason"] == "stop"
        assert choice["message"]["content"] == "Done: add -> 5; get_weather -> rain"


def test_no_tools_offered_or_an_unknown_tool_is_answered_as_text() -> None:
    with FakeJudgeServer(tool_call_responder) as server:
        plain = _post(server, {"model": "m", "messages": [{"role": "user", "content": ASK}]})
        assert "tool_calls" not in plain["choices"][0]["message"]
        only_add = _post(
            server,
            {"model": "m", "messages": [{"role": "user", "content": ASK}], "tools": TOOLS[:1]},
        )
        message = only_add["choices"][0]["message"]
        assert "tool_calls" not in message
        assert "get_weather, which this request does not offer" in message["content"]
