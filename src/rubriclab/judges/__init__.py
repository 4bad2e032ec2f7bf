"""Judges: who answers a prompt, and everything about a call. Transport only; what is judged
lives in ``metrics``, and nothing here imports the evaluation layers.

``Judge`` talks to any OpenAI-compatible endpoint over httpx or, as ``Judge("mock")``, answers
offline. Every call goes through the engine (``judges.engine``: limits, retries, cache, cost),
and sync code runs coroutines through ``run_sync``. Importing this package does not import
httpx or pandas; a real judge loads httpx when it is built.
"""

from __future__ import annotations

from .base import CALL_ERROR_TYPES, CallError, CallTally, JudgeConfigError, Reply, Request, Usage
from .judge import Judge, get_judge, set_judge
from .media import MediaError, image_part
from .secret import Public

__all__ = [
    "CALL_ERROR_TYPES",
    "CallError",
    "CallTally",
    "Judge",
    "JudgeConfigError",
    "MediaError",
    "Public",
    "Reply",
    "Request",
    "Usage",
    "get_judge",
    "image_part",
    "set_judge",
]
