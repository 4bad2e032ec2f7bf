"""Conversations out of traces: the messages an agent's model calls saw and said, as the
OpenAI-style ``conversation`` column the conversation metrics judge (``rl.metrics.CONVERSATION``).

Why threads: an agent re-sends its history on every model call, so the calls of one trace
repeat each other, and a trace may also hold side calls (a summariser with its own system
prompt). Each model call's input is matched against the threads seen so far: when a thread is a
prefix of it, the call continues that thread (its input and output become the thread);
otherwise it starts a new one. The trace's conversation is its longest thread; side threads
are left out (they are other conversations, with other instructions).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal

import pandas as pd

from ._load import load_traces
from ._model import Message, Span
from ._tree import Trace

__all__ = ["SESSION_KEYS", "trace_conversation", "trace_conversations"]

#: span attributes that name the session (chat) a trace belongs to, first found wins:
#: OpenInference, GenAI semantic conventions, Langfuse
SESSION_KEYS = ("session.id", "gen_ai.conversation.id", "langfuse.session.id")

_ROLE_ALIASES = {"model": "assistant", "ai": "assistant", "human": "user", "function": "tool"}

ConversationBy = Literal["trace", "session"]


def _openai_message(message: Message) -> dict[str, Any]:
    role = _ROLE_ALIASES.get(message.role, message.role)
    out: dict[str, Any] = {"role": role, "content": message.text}
    if message.tool_calls and role == "assistant":
        out["tool_calls"] = [
            {
                "id": call.id,
                "type": "function",
                "function": {"name": call.name, "arguments": _arguments_text(call.arguments)},
            }
            for call in message.tool_calls
        ]
    if message.tool_call_id:
        out["tool_call_id"] = message.tool_call_id
    if message.name:
        out["name"] = message.name
    return out


def _arguments_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, default=str)


def _key(message: Mapping[str, Any]) -> tuple[Any, ...]:
    """What makes two copies of a message the same message (ids left out: producers differ)."""
    calls = tuple(
        (c["function"]["name"], c["function"]["arguments"]) for c in message.get("tool_calls", [])
    )
    return (message["role"], message["content"].strip(), calls)


def _is_prefix(head: Sequence[Mapping[str, Any]], whole: Sequence[Mapping[str, Any]]) -> bool:
    return len(head) <= len(whole) and all(
        _key(a) == _key(b) for a, b in zip(head, whole, strict=False)
    )


def _model_calls(spans: Iterable[Span]) -> list[Span]:
    """The spans that record a model call's messages, in the order they started."""
    calls = [s for s in spans if s.input_messages or s.output_messages]
    return sorted(calls, key=lambda s: s.start)


def trace_conversation(trace: Trace) -> list[dict[str, Any]]:
    """One trace's conversation: the longest thread of its model calls (see the module's
    docstring), as OpenAI-style messages; ``[]`` when no span recorded messages."""
    threads: list[list[dict[str, Any]]] = []
    for span in _model_calls(trace.walk()):
        given = [_openai_message(m) for m in span.input_messages]
        said = [_openai_message(m) for m in span.output_messages]
        whole = given + said
        for i, thread in enumerate(threads):
            if _is_prefix(thread, given):
                threads[i] = whole
                break
        else:
            threads.append(whole)
    return max(threads, key=len, default=[])


def _session(trace: Trace) -> str | None:
    for span in trace.walk():
        for key in SESSION_KEYS:
            value = span.attributes.get(key)
            if value is not None and str(value).strip():
                return str(value)
    return None


def _join(turns: Sequence[list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """A session's traces in order, each one turn or more: a trace that re-sends the session so
    far replaces it; one that sends only its new messages is appended (a system message the
    session already has is not repeated)."""
    out: list[dict[str, Any]] = []
    for messages in turns:
        if _is_prefix(out, messages):
            out = list(messages)
            continue
        seen = {_key(m) for m in out if m["role"] in ("system", "developer")}
        out += [m for m in messages if _key(m) not in seen]
    return out


def trace_conversations(
    traces: Trace | Sequence[Trace] | Any, *, by: ConversationBy = "trace"
) -> pd.DataFrame:
    """A DataFrame with a ``conversation`` column from traces (or anything ``load_traces`` reads:
    an OTLP JSON file, a folder, Phoenix or MLflow exports), ready for
    ``rl.evaluate(frame, list(rl.metrics.CONVERSATION.values()), ...)``.

    ``by="trace"``: one row per trace (``trace_id``, ``conversation``). ``by="session"``: one
    row per session, the traces that carry the same session id (``session.id``,
    ``gen_ai.conversation.id`` or ``langfuse.session.id`` on any span) joined in the order they
    started (``session_id``, ``trace_ids``, ``conversation``); a trace without a session id is
    a session of its own. A trace whose model calls recorded no messages keeps its row with no
    conversation, so the metrics report it on that row instead of dropping it.
    """
    if by not in ("trace", "session"):
        raise ValueError(f"by must be 'trace' or 'session', got {by!r}")
    loaded = load_traces(traces)
    if by == "trace":
        rows: list[dict[str, Any]] = [
            {"trace_id": t.trace_id, "conversation": trace_conversation(t) or None} for t in loaded
        ]
        return pd.DataFrame(rows, columns=["trace_id", "conversation"])
    sessions: dict[str, list[Trace]] = {}
    for t in sorted(loaded, key=lambda t: t.start):
        sessions.setdefault(_session(t) or t.trace_id, []).append(t)
    joined: list[dict[str, Any]] = [
        {
            "session_id": name,
            "trace_ids": [t.trace_id for t in group],
            "conversation": _join([trace_conversation(t) for t in group]) or None,
        }
        for name, group in sessions.items()
    ]
    return pd.DataFrame(joined, columns=["session_id", "trace_ids", "conversation"])
