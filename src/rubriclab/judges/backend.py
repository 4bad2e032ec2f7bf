"""What the engine asks of a transport: one attempt in, one outcome out, never an exception.

Retries, limits, caching and accounting live in the engine (``judges.engine``); a backend
only knows how to make a single attempt and classify what happened.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from .base import ErrorType, Request, Usage
from .pacing import RateHeaders

__all__ = ["Backend", "Failure", "Outcome", "Session", "Success"]


@dataclass(frozen=True, slots=True)
class Success:
    text: str
    usage: Usage
    model: str
    finish_reason: str | None = None
    rate: RateHeaders | None = None
    """The provider's ``x-ratelimit-*`` headers on this reply, for pacing."""


@dataclass(frozen=True, slots=True)
class Failure:
    type: ErrorType
    message: str
    status: int | None = None
    raw: str | None = None
    retryable: bool = False
    retry_after: float | None = None
    format_rejected: bool = False
    """The endpoint refused ``response_format``: the engine retries once without it."""
    rate: RateHeaders | None = None


Outcome = Success | Failure


class Session(Protocol):
    """Per-event-loop state of a backend (an HTTP connection pool, or nothing for the mock)."""

    async def send(
        self, request: Request, format_level: int, messages_json: str | None = None
    ) -> Outcome:
        """Make one attempt. ``format_level``: 2 = as asked, 1 = json_object only, 0 = none.
        ``messages_json``: ``request.messages`` as JSON, when the engine wrote it already (for
        the cache key); a session that sends JSON may use it rather than write it again."""
        ...

    def new_run(self) -> None:
        """A run starts: drop what was remembered of earlier runs' requests (their objects
        may have been changed in place since)."""
        ...

    async def aclose(self) -> None: ...


class Backend(Protocol):
    is_mock: bool

    def open_session(self) -> Session:
        """Create the per-loop session; called inside the event loop that will use it."""
        ...

    def describe(self) -> str: ...
