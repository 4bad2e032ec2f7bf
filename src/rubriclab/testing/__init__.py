"""Testing helpers for rubriclab and its users: fake OpenAI-compatible judge and batch servers,
and rubric checks for pytest.

``FakeJudgeServer`` listens on 127.0.0.1 and answers chat-completions requests over real HTTP,
with scripted answers, latency and injected faults, so tests exercise the real client.
``simulated_responder`` makes it a simulated judge that follows rules read from the prompt
(for alignment tests); ``tool_call_responder`` makes it a model that calls tools when asked.
``FakeBatchServer`` does the same for ``/v1/files`` + ``/v1/batches`` on a clock the test owns.
``assert_rubric`` judges a case or a table in a test and fails it with the judge's reasons
(``assertions``; the pytest plugin is ``pytest_plugin``).

Names load on first use: the pytest plugin imports this package in every pytest run of an
environment where rubriclab is installed, and must not slow them down.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

# public name -> module that defines it (relative to this package)
_EXPORTS: dict[str, str] = {
    "FakeBatchServer": "batch_server",
    "ManualClock": "batch_server",
    "both_limits_refusal": "reasoning",
    "reasoning_refusal": "reasoning",
    "FAULT_KINDS": "server",
    "FakeJudgeServer": "server",
    "Faults": "server",
    "RateLimit": "server",
    "RequestRecord": "server",
    "Responder": "server",
    "ServerReply": "server",
    "default_responder": "server",
    "format_duration": "server",
    "main": "server",
    "simulated_answer": "simulated",
    "simulated_responder": "simulated",
    "planned_calls": "tool_calls",
    "tool_call_responder": "tool_calls",
    "assert_rubric": "assertions",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])


if TYPE_CHECKING:
    from .assertions import assert_rubric as assert_rubric
    from .batch_server import FakeBatchServer as FakeBatchServer
    from .batch_server import ManualClock as ManualClock
    from .reasoning import both_limits_refusal as both_limits_refusal
    from .reasoning import reasoning_refusal as reasoning_refusal
    from .server import FAULT_KINDS as FAULT_KINDS
    from .server import FakeJudgeServer as FakeJudgeServer
    from .server import Faults as Faults
    from .server import RateLimit as RateLimit
    from .server import RequestRecord as RequestRecord
    from .server import Responder as Responder
    from .server import ServerReply as ServerReply
    from .server import default_responder as default_responder
    from .server import format_duration as format_duration
    from .server import main as main
    from .simulated import simulated_answer as simulated_answer
    from .simulated import simulated_responder as simulated_responder
    from .tool_calls import planned_calls as planned_calls
    from .tool_calls import tool_call_responder as tool_call_responder
