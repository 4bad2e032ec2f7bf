"""Testing helpers for rubriclab and its users: a fake OpenAI-compatible judge server.

``FakeJudgeServer`` listens on 127.0.0.1 and answers chat-completions requests over real HTTP,
with scripted answers, latency and injected faults, so tests exercise the real client.
"""

from __future__ import annotations

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

__all__ = [
    "FAULT_KINDS",
    "FakeJudgeServer",
    "Faults",
    "RateLimit",
    "RequestRecord",
    "Responder",
    "ServerReply",
    "default_responder",
    "format_duration",
    "main",
]
