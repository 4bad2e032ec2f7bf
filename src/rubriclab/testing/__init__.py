"""Testing helpers for rubriclab and its users: fake OpenAI-compatible judge and batch servers.

``FakeJudgeServer`` listens on 127.0.0.1 and answers chat-completions requests over real HTTP,
with scripted answers, latency and injected faults, so tests exercise the real client.
``simulated_responder`` makes it a simulated judge that follows rules read from the prompt
(for alignment tests); ``tool_call_responder`` makes it a model that calls tools when asked. ``FakeBatchServer`` does the same for ``/v1/files`` + ``/v1/batches`` on a clock the test owns.
"""

from __future__ import annotations

from .batch_server import FakeBatchServer, ManualClock
from .reasoning import both_limits_refusal, reasoning_refusal
from .server import (
    FAULT_KINDS,
    FakeJudgeServer,
    Faults,
    RateLimit,
    RequestRecord,
    Responder,
    ServerReply,
    default_responder,
    format_duration,
    main,
)
from .simulated import simulated_answer, simulated_responder
from .tool_calls import planned_calls, tool_call_responder

__all__ = [
    "FAULT_KINDS",
    "FakeBatchServer",
    "FakeJudgeServer",
    "Faults",
    "ManualClock",
    "RateLimit",
    "RequestRecord",
    "Responder",
    "ServerReply",
    "both_limits_refusal",
    "default_responder",
    "format_duration",
    "main",
    "planned_calls",
    "reasoning_refusal",
    "simulated_answer",
    "simulated_responder",
    "tool_call_responder",
]
