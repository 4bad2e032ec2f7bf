"""The value types every judge call speaks: requests in, replies (or recorded errors) out.

They are plain frozen dataclasses so that results pickle, compare and print without ever
carrying a client, a connection or an API key.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = [
    "CALL_ERROR_TYPES",
    "CallError",
    "CallTally",
    "JudgeConfigError",
    "Message",
    "Messages",
    "Reply",
    "Request",
    "RequestLike",
    "Usage",
    "coerce_request",
]

Message = Mapping[str, Any]
Messages = Sequence[Message]

#: Every value ``CallError.type`` can take; downstream code may switch on these.
CALL_ERROR_TYPES = (
    "rate_limited",  # HTTP 429 after every retry
    "server_error",  # HTTP 5xx after every retry
    "timeout",  # no complete answer within the judge's timeout
    "connect",  # the host could not be reached
    "transport",  # connection dropped, truncated body, protocol error
    "malformed_response",  # the body was not the JSON an OpenAI-compatible endpoint returns
    "empty_response",  # no choices or no content
    "refusal",  # the model refused (message.refusal set)
    "bad_request",  # HTTP 400: the request itself is wrong
    "auth",  # HTTP 401/403: key missing or rejected
    "not_found",  # HTTP 404: wrong base URL or unknown model
    "http_error",  # any other HTTP status
    "internal",  # a bug or unexpected exception on our side, recorded rather than raised
    "batch_expired",  # a batch job's window ended before this request ran
    "batch_cancelled",  # the batch job was cancelled before this request ran
    "batch_failed",  # the batch job failed as a whole (e.g. its input file was rejected)
)

ErrorType = Literal[
    "rate_limited",
    "server_error",
    "timeout",
    "connect",
    "transport",
    "malformed_response",
    "empty_response",
    "refusal",
    "bad_request",
    "auth",
    "not_found",
    "http_error",
    "internal",
    "batch_expired",
    "batch_cancelled",
    "batch_failed",
]


class JudgeConfigError(ValueError):
    """A judge cannot be built as asked (bad spec, missing key); the message says what to set."""


@dataclass(frozen=True, slots=True)
class Usage:
    """Token counts as the endpoint reported them (zero when it reported none)."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
            self.total_tokens + other.total_tokens,
        )

    @classmethod
    def from_counts(cls, prompt: int, completion: int) -> Usage:
        return cls(prompt, completion, prompt + completion)


@dataclass(eq=True)
class CallError(Exception):
    """Why a judge call failed after every retry; stored on the reply, raisable if you want.

    ``raw`` keeps the endpoint's body (trimmed) so a failing row can be inspected later.
    """

    type: ErrorType
    message: str
    status: int | None = None
    attempts: int = 1
    raw: str | None = None

    def __post_init__(self) -> None:
        Exception.__init__(self, self.message)

    def __str__(self) -> str:
        status = f"HTTP {self.status}, " if self.status is not None else ""
        tries = "attempt" if self.attempts == 1 else "attempts"
        return f"{self.type} ({status}{self.attempts} {tries}): {self.message}"

    def __reduce__(self) -> tuple[Any, ...]:
        return (CallError, (self.type, self.message, self.status, self.attempts, self.raw))

    def __hash__(self) -> int:
        return hash((self.type, self.message, self.status, self.attempts))

    def to_dict(self) -> dict[str, Any]:
        return {
            "type": self.type,
            "status": self.status,
            "message": self.message,
            "attempts": self.attempts,
            "raw": self.raw,
        }


@dataclass(frozen=True, slots=True)
class Reply:
    """One judge answer: text or a recorded error, never both missing silently."""

    text: str | None
    usage: Usage = field(default_factory=Usage)
    latency: float = 0.0
    attempts: int = 0
    error: CallError | None = None
    cached: bool = False
    model: str = ""
    is_mock: bool = False
    cost: float | None = None
    finish_reason: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None and self.text is not None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready record (for result tables and saved runs)."""
        return {
            "text": self.text,
            "usage": {
                "prompt_tokens": self.usage.prompt_tokens,
                "completion_tokens": self.usage.completion_tokens,
                "total_tokens": self.usage.total_tokens,
            },
            "latency": self.latency,
            "attempts": self.attempts,
            "error": None if self.error is None else self.error.to_dict(),
            "cached": self.cached,
            "model": self.model,
            "is_mock": self.is_mock,
            "cost": self.cost,
            "finish_reason": self.finish_reason,
        }


@dataclass
class CallTally:
    """What some replies cost: calls made, cache hits, tokens, latency, attempts and cost.

    ``cost`` becomes None as soon as one reply's cost is unknown, so a partial sum is never
    shown as the total.
    """

    tokens: int = 0
    calls: int = 0
    cached: int = 0
    latency: float = 0.0
    attempts: int = 0
    cost: float | None = 0.0

    def add(self, reply: Reply) -> None:
        self.merge(
            CallTally(
                tokens=reply.usage.total_tokens,
                calls=0 if reply.cached else 1,
                cached=1 if reply.cached else 0,
                latency=reply.latency,
                attempts=reply.attempts,
                cost=reply.cost,
            )
        )

    def merge(self, other: CallTally) -> None:
        self.tokens += other.tokens
        self.calls += other.calls
        self.cached += other.cached
        self.latency += other.latency
        self.attempts += other.attempts
        self.cost = None if self.cost is None or other.cost is None else self.cost + other.cost


@dataclass(frozen=True, slots=True)
class Request:
    """One call to make: chat messages, an optional OpenAI ``response_format``, a sample index.

    ``sample`` makes repeated draws distinct calls (and distinct cache entries); ``params``
    are extra body fields (``top_p``, ``temperature``...) that override the judge's. A token
    limit goes out under the field the judge's model takes (``max_completion_tokens`` for
    OpenAI's reasoning models, which take no temperature either: see ``judges.dialect``).
    """

    messages: Messages
    response_format: Mapping[str, Any] | None = None
    sample: int = 0
    params: Mapping[str, Any] = field(default_factory=dict)


RequestLike = Request | Messages | Mapping[str, Any] | str

_ROLES = frozenset({"system", "developer", "user", "assistant", "tool", "function"})


def coerce_request(item: RequestLike, index: int | None = None) -> Request:
    """Turn what a user passed into a validated ``Request``; errors name the request and field."""
    where = "request" if index is None else f"request {index}"
    if isinstance(item, Request):
        request = item
    elif isinstance(item, str):
        request = Request([{"role": "user", "content": item}])
    elif isinstance(item, Mapping):
        if "messages" not in item:
            raise ValueError(
                f"{where}: a mapping must have a 'messages' key "
                "(and optionally response_format, sample, params)"
            )
        unknown = set(item) - {"messages", "response_format", "sample", "params"}
        if unknown:
            raise ValueError(f"{where}: unknown key(s) {sorted(unknown)}")
        request = Request(
            messages=item["messages"],
            response_format=item.get("response_format"),
            sample=item.get("sample", 0),
            params=item.get("params") or {},
        )
    elif isinstance(item, Sequence):
        request = Request(item)  # type: ignore[arg-type]  # a str was handled above
    else:
        raise TypeError(
            f"{where}: expected a list of chat messages, a Request or a string, "
            f"got {type(item).__name__}"
        )
    _check_messages(request.messages, where)
    if not isinstance(request.sample, int) or request.sample < 0:
        raise ValueError(f"{where}: sample must be an integer >= 0, got {request.sample!r}")
    if request.response_format is not None and not isinstance(request.response_format, Mapping):
        raise ValueError(f"{where}: response_format must be a dict like {{'type': 'json_object'}}")
    return request


def _check_messages(messages: object, where: str) -> None:
    if isinstance(messages, (str, bytes)) or not isinstance(messages, Sequence):
        raise ValueError(f"{where}: messages must be a list of {{'role', 'content'}} dicts")
    if not messages:
        raise ValueError(f"{where}: messages is empty; give at least one user message")
    for i, message in enumerate(messages):
        if not isinstance(message, Mapping):
            raise ValueError(f"{where}: message {i} must be a dict, got {type(message).__name__}")
        role = message.get("role")
        if role not in _ROLES:
            raise ValueError(f"{where}: message {i} has role {role!r}; use one of {sorted(_ROLES)}")
        content = message.get("content")
        if content is None and role != "assistant":
            raise ValueError(f"{where}: message {i} ({role}) has no 'content'")
        if content is not None and not isinstance(content, (str, list, tuple)):
            raise ValueError(
                f"{where}: message {i} content must be a string or a list of content parts, "
                f"got {type(content).__name__}"
            )
