"""Judges: who answers a prompt. Transport only; what is judged lives in ``metrics``.

``Judge`` talks to any OpenAI-compatible endpoint over httpx or, as ``Judge("mock")``, answers
offline. Every call goes through ``rubriclab.runner``'s engine. Importing this package does not
import httpx or pandas; a real judge loads httpx when it is built.
"""

from __future__ import annotations

from .base import CALL_ERROR_TYPES, CallError, JudgeConfigError, Reply, Request, Usage
from .judge import Judge, get_judge, set_judge
from .media import image_part

__all__ = [
    "CALL_ERROR_TYPES",
    "CallError",
    "Judge",
    "JudgeConfigError",
    "Reply",
    "Request",
    "Usage",
    "get_judge",
    "image_part",
    "set_judge",
]
