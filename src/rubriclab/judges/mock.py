"""``Judge("mock")``: offline, deterministic, and always labelled as a mock.

Same input, same answer: the seed is a hash of model, messages and sample index. Structured
prompts get an instance of their JSON schema (see ``mockdata``; a pairwise answer then follows
the two responses' content, so both orders agree: see ``mockpair``); free-text prompts get a
labelled text, unless a registered responder knows the format (the Vertex layer teaches the
mock its verdict lines this way). Calls go through the same engine as real ones.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import random
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from .backend import Failure, Outcome, Success
from .base import Request, Usage
from .mockdata import LABEL, SchemaFiller, message_text, word_count
from .mockpair import judge_pair

__all__ = [
    "LABEL",
    "MockBackend",
    "Responder",
    "mock_answer",
    "mock_usage",
    "register_responder",
    "unregister_responder",
]

Responder = Callable[[Sequence[Mapping[str, Any]], int], "str | None"]

_responders: list[Responder] = []
_lock = threading.Lock()
_IMAGE_TOKENS = 85


def register_responder(fn: Responder) -> Responder:
    """Teach the mock a text format: ``fn(messages, sample)`` returns the answer or None.

    The most recently registered responder is asked first; returning None passes the prompt
    on. Usable as a decorator.
    """
    with _lock:
        if fn not in _responders:
            _responders.append(fn)
    return fn


def unregister_responder(fn: Responder) -> None:
    with _lock:
        if fn in _responders:
            _responders.remove(fn)


def _seed(model: str, messages: Sequence[Mapping[str, Any]], sample: int) -> int:
    blob = json.dumps([model, messages, sample], sort_keys=True, default=str).encode()
    return int.from_bytes(hashlib.sha256(blob).digest()[:8], "big")


def mock_answer(
    messages: Sequence[Mapping[str, Any]],
    response_format: Mapping[str, Any] | None = None,
    sample: int = 0,
    model: str = "mock",
) -> str:
    """The mock's answer text for a request (also used by the fake server's default responder)."""
    with _lock:
        responders = list(reversed(_responders))
    for responder in responders:
        answer = responder(messages, sample)
        if answer is not None:
            return answer
    rng = random.Random(_seed(model, messages, sample))
    user_text = message_text(messages, "user") or message_text(messages)
    schema = _schema_of(response_format)
    if schema is not None:
        filler = SchemaFiller(schema, rng, user_text)
        value = filler.fill()
        judge_pair(value, filler, user_text, f"{model}\x1f{sample}")
        return json.dumps(value, ensure_ascii=False)
    words = user_text.split()
    preview = " ".join(words[:12]) + (" ..." if len(words) > 12 else "")
    text = (
        f"{LABEL} This answer comes from the offline mock judge (model {model!r}, "
        f"sample {sample}); no language model was called. It read: {preview!r}."
    )
    if response_format is not None and response_format.get("type") == "json_object":
        return json.dumps({"mock_judge": True, "answer": text}, ensure_ascii=False)
    return text


def _schema_of(response_format: Mapping[str, Any] | None) -> Mapping[str, Any] | None:
    if not response_format or response_format.get("type") != "json_schema":
        return None
    spec = response_format.get("json_schema")
    if not isinstance(spec, Mapping):
        return None
    schema = spec.get("schema")
    return schema if isinstance(schema, Mapping) else {"type": "object"}


def mock_usage(messages: Sequence[Mapping[str, Any]], answer: str) -> Usage:
    """Deterministic token counts: words, plus 4 per message and a flat rate per image."""
    prompt = 0
    for message in messages:
        prompt += 4
        content = message.get("content")
        if isinstance(content, str):
            prompt += word_count(content)
        elif isinstance(content, (list, tuple)):
            for part in content:
                if isinstance(part, Mapping):
                    if isinstance(part.get("text"), str):
                        prompt += word_count(part["text"])
                    elif part.get("type") in ("image_url", "input_image", "image"):
                        prompt += _IMAGE_TOKENS
    return Usage.from_counts(prompt, word_count(answer))


class _MockSession:
    def __init__(self, model: str) -> None:
        self.model = model

    async def send(
        self, request: Request, format_level: int, messages_json: str | None = None
    ) -> Outcome:
        await asyncio.sleep(0)  # a real suspension point, like a network call
        try:
            text = mock_answer(
                request.messages, request.response_format, request.sample, self.model
            )
        except Exception as exc:  # a responder's bug is recorded on the row, not raised
            return Failure("internal", f"mock responder failed: {type(exc).__name__}: {exc}")
        return Success(text, mock_usage(request.messages, text), self.model, "stop")

    def new_run(self) -> None:
        return None

    async def aclose(self) -> None:
        return None


class MockBackend:
    """The offline backend behind ``Judge("mock")`` and ``Judge("mock:NAME")``."""

    is_mock = True

    def __init__(self, model: str = "mock") -> None:
        self.model = model

    def open_session(self) -> _MockSession:
        return _MockSession(self.model)

    def describe(self) -> str:
        return f"mock judge {self.model!r} (offline, deterministic; answers are not real)"

    def adapt(self, refused: str) -> str | None:
        """The mock refuses no field, so there is nothing to adapt."""
        return None
