"""Judges: who answers a prompt. Transport only; what is judged lives in ``metrics``.

``Judge`` talks to any OpenAI-compatible endpoint over httpx or, as ``Judge("mock")``, answers
offline. Every call goes through the engine (``judges.engine``). Importing this package does not
import httpx or pandas; a real judge loads httpx when it is built. ``Judge`` and the default-judge
functions load on first use, so the engine and cache can import the value types from here.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .base import CALL_ERROR_TYPES, CallError, CallTally, JudgeConfigError, Reply, Request, Usage
from .media import MediaError, image_part
from .secret import Public

if TYPE_CHECKING:
    from .judge import Judge, get_judge, set_judge

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

_LAZY = {"Judge", "get_judge", "set_judge"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(importlib.import_module(".judge", __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'rubriclab.judges' has no attribute {name!r}")
