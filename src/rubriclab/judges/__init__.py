"""Judges: who answers a prompt, and everything about a call. Transport only; what is judged
lives in ``metrics``, and nothing here imports the evaluation layers.

``Judge`` (``judge``) talks to any OpenAI-compatible endpoint (``openai``, over httpx) or, as
``Judge("mock")`` (``mock``), answers offline. Every call goes through the engine (``engine``:
limits, retries, accounting) with its ``cache`` and ``pricing``; ``batch`` uses a provider's
batch API; sync code runs coroutines with ``sync.run_sync``. ``get_judge`` is the one place a
judge argument (a Judge, a spec, or None for the default) becomes a ``Judge``. Importing this
package does not import httpx or pandas; a real judge loads httpx when it is built.
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
