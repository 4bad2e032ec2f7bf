"""A fake model that answers with tool calls when asked, so a small agent can run end to end.

``tool_call_responder`` plugs into ``FakeJudgeServer(responder=...)``. It follows a plain rule
read from the conversation, so a test can say what the "model" will do and then check what an
instrumentation recorded against it:

* The request offers ``tools`` and carries no tool results yet: every line of the last user
  message of the form ``call NAME {json arguments}`` becomes one requested tool call (ids
  ``call_<m>_<n>``: m messages in the request, n-th call, in order), with ``finish_reason="tool_calls"`` and no text. Only tools
  the request offers are called; a line naming another tool is answered as text, saying so.
* Tool results are in the conversation: the answer is the text
  ``"Done: NAME -> RESULT; ..."`` (each result once, in the order of the tool messages) with
  ``finish_reason="stop"``.
* Otherwise (no tools offered, or no ``call`` lines): the mock judge's usual answer.

Token counts are the mock's deterministic ones (words plus 4 per message), so a test can
compute them too. The answers say nothing about being real: this is the fake server.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Mapping, Sequence
from typing import Any

from ..judges.mock import mock_usage
from .server import completion_body, default_responder

__all__ = ["CALL_LINE", "planned_calls", "tool_call_responder"]

CALL_LINE = re.compile(r"^\s*call\s+([A-Za-z_][\w.-]*)\s*(\{.*\})\s*$")
"""One requested call in the user's message: ``call get_weather {"city": "Paris"}``."""


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, Sequence):
        return "\n".join(
            str(p.get("text")) for p in content if isinstance(p, Mapping) and p.get("text")
        )
    return ""


def planned_calls(messages: Sequence[Mapping[str, Any]]) -> list[tuple[str, dict[str, Any]]]:
    """The ``call NAME {args}`` lines of the last user message, in order (bad JSON skipped)."""
    users = [m for m in messages if isinstance(m, Mapping) and m.get("role") == "user"]
    if not users:
        return []
    calls: list[tuple[str, dict[str, Any]]] = []
    for line in _text(users[-1].get("content")).splitlines():
        match = CALL_LINE.match(line)
        if match is None:
            continue
        try:
            arguments = json.loads(match[2])
        except ValueError:
            continue
        if isinstance(arguments, dict):
            calls.append((match[1], arguments))
    return calls


def _offered(body: Mapping[str, Any]) -> set[str]:
    names: set[str] = set()
    for tool in body.get("tools") or []:
        if isinstance(tool, Mapping):
            function = tool.get("function")
            if isinstance(function, Mapping) and function.get("name"):
                names.add(str(function["name"]))
    return names


def _reply(
    body: dict[str, Any], message: dict[str, Any], finish: str, index: int
) -> dict[str, Any]:
    messages = body.get("messages")
    listed = messages if isinstance(messages, list) else []
    arguments = " ".join(c["function"]["arguments"] for c in message.get("tool_calls", []))
    usage = mock_usage(listed, message.get("content") or arguments)
    full = completion_body(body, "", index, created=time.time())
    full["choices"] = [{"index": 0, "message": message, "finish_reason": finish}]
    full["usage"] = {
        "prompt_tokens": usage.prompt_tokens,
        "completion_tokens": usage.completion_tokens,
        "total_tokens": usage.total_tokens,
    }
    return full


def tool_call_responder(body: dict[str, Any]) -> str | dict[str, Any]:
    """Answer ``body`` as described in the module docstring (a ``FakeJudgeServer`` responder)."""
    messages = [m for m in body.get("messages") or [] if isinstance(m, Mapping)]
    index = len(messages)
    results = [m for m in messages if m.get("role") == "tool"]
    if results:
        names = {
            str(c.get("id")): str((c.get("function") or {}).get("name"))
            for m in messages
            if m.get("role") == "assistant"
            for c in m.get("tool_calls") or []
            if isinstance(c, Mapping)
        }
        done = "; ".join(
            f"{names.get(str(m.get('tool_call_id')), '?')} -> {_text(m.get('content'))}"
            for m in results
        )
        return _reply(body, {"role": "assistant", "content": f"Done: {done}"}, "stop", index)
    plan = planned_calls(messages)
    offered = _offered(body)
    if not plan or not offered:
        return default_responder(body)
    unknown = [name for name, _ in plan if name not in offered]
    if unknown:
        text = f"I was asked to call {', '.join(unknown)}, which this request does not offer."
        return _reply(body, {"role": "assistant", "content": text}, "stop", index)
    calls = [
        {
            "id": f"call_{index}_{n}",
            "type": "function",
            "function": {"name": name, "arguments": json.dumps(arguments)},
        }
        for n, (name, arguments) in enumerate(plan)
    ]
    message = {"role": "assistant", "content": None, "tool_calls": calls}
    return _reply(body, message, "tool_calls", index)
