"""One attempt at an OpenAI-compatible ``/chat/completions`` call, classified.

A session holds one pooled client (pool = the judge's concurrency) per event loop: an
``aiohttp.ClientSession`` when aiohttp is installed (the default: the client CPU per call is
what limits a fast judge, and aiohttp costs about half of httpx-over-aiohttp), else an
``httpx.AsyncClient`` (``transport="httpx"``, and whenever proxy variables are set). Both
answer with the same ``Outcome``: every failure becomes a ``Failure`` saying whether a retry
can help; the engine decides what to do with it. Text from the endpoint is scrubbed of the API
key before it is kept.
"""

from __future__ import annotations

import asyncio
import dataclasses
import email.utils
import errno
import json
import os
import sys
import threading
import time
from collections.abc import Mapping
from typing import Any

import httpx

from .backend import Failure, Outcome, Success
from .base import ErrorType, Request, Usage
from .clean import clean_text
from .dialect import Dialect, dialect_for
from .pacing import parse_rate_headers
from .secret import Secret
from .specs import Endpoint

__all__ = [
    "TRANSPORTS",
    "OpenAIBackend",
    "chat_body",
    "default_transport",
    "parse_chat",
    "parse_retry_after",
    "read_chat",
    "refused_field",
]

TRANSPORTS = ("auto", "httpx", "aiohttp")
_RAW_LIMIT = 4000
_FORMAT_WORDS = ("response_format", "json_schema", "json schema", "response format", "json mode")
_RETRY_STATUS = frozenset({408, 409, 425, 429})
#: request fields a 400 may refuse that a judge can send otherwise (see ``judges.dialect``)
_ADAPTABLE = ("max_tokens", "temperature")
_UNSUPPORTED_CODES = frozenset({"unsupported_parameter", "unsupported_value"})


_PROXY_ENV = ("https_proxy", "http_proxy", "all_proxy")


def default_transport() -> str:
    """'aiohttp' when aiohttp is installed (a bare aiohttp session measured about half the
    client CPU per call of httpx), else 'httpx'. Also 'httpx' when proxy variables are set:
    httpx honours them, the aiohttp session is not set up to."""
    if any(os.environ.get(v) or os.environ.get(v.upper()) for v in _PROXY_ENV):
        return "httpx"
    try:
        import aiohttp  # noqa: F401
    except ImportError:
        return "httpx"
    return "aiohttp"


def parse_retry_after(headers: Mapping[str, str], now: float | None = None) -> float | None:
    """Seconds to wait from ``retry-after-ms``, or ``Retry-After`` (seconds or an HTTP date)."""
    ms = headers.get("retry-after-ms")
    if ms:
        try:
            return max(0.0, float(ms) / 1000.0)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when is None:
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


class OpenAIBackend:
    """Chat completions against ``endpoint.base_url``; settings shared by all its sessions."""

    is_mock = False

    def __init__(
        self,
        endpoint: Endpoint,
        *,
        temperature: float | None,
        seed: int | None,
        max_tokens: int | None,
        params: Mapping[str, Any] | None,
        headers: Mapping[str, str | Secret] | None,
        timeout: float,
        max_concurrency: int,
        transport: str = "auto",
    ) -> None:
        if transport not in TRANSPORTS:
            raise ValueError(f"transport must be one of {TRANSPORTS}, got {transport!r}")
        self.endpoint = endpoint
        self.model = endpoint.model
        self.url = f"{endpoint.base_url}/chat/completions"
        self.temperature = temperature
        self.seed = seed
        self.max_tokens = max_tokens
        self.params = dict(params or {})
        self.extra_headers = dict(headers or {})
        self.timeout = timeout
        self.max_concurrency = max_concurrency
        self.transport = default_transport() if transport == "auto" else transport
        #: how bodies are spelled for this model; changed at most once a field by ``adapt``
        self.dialect: Dialect = dialect_for(
            self.model, openai=endpoint.provider == "openai", params=self.params
        )
        self._adapt_lock = threading.Lock()
        #: the fields the endpoint itself refused (``adapt``), in order: what a judge derived
        #: from this one takes over; not what the model's name rule decided
        self.learned: tuple[str, ...] = ()

    def adapt(self, refused: str) -> str | None:
        """Spell later bodies without the field the endpoint refused; what this judge now
        sends, or None when it already did (another call saw the same 400 first)."""
        with self._adapt_lock:
            before = self.dialect
            after = before.adapted(refused)
            if after == before:
                return None
            self.dialect = after
            self.learned = (*self.learned, refused)
        return after.change_from(before)

    @property
    def key(self) -> Secret:
        return self.endpoint.key

    def scrub(self, text: str) -> str:
        """``text`` without the API key or any credential header value."""
        text = self.endpoint.key.scrub(text)
        for value in self.extra_headers.values():
            if isinstance(value, Secret):
                text = value.scrub(text)
        return text

    def kept(self, outcome: Outcome) -> Outcome:
        """``outcome`` as it may be kept: the one boundary where a reply enters, so every
        text field of it (answer, model, finish reason, message, raw body) is scrubbed of
        the key and the credential headers here, whatever it came from (a body, the HTTP
        reason phrase, a batch line)."""
        scrub = self.scrub
        if type(outcome) is Success:
            text = scrub(outcome.text)
            model = scrub(outcome.model)
            finish = outcome.finish_reason
            finish = scrub(finish) if finish else finish
            if text is outcome.text and model is outcome.model and finish is outcome.finish_reason:
                return outcome  # (the usual case: nothing to replace, nothing copied)
            return dataclasses.replace(outcome, text=text, model=model, finish_reason=finish)
        assert isinstance(outcome, Failure)
        raw = outcome.raw
        return dataclasses.replace(
            outcome, message=scrub(outcome.message), raw=scrub(raw) if raw else raw
        )

    def describe(self) -> str:
        key = self.endpoint.key
        if key.env:
            who = f"key from ${key.env}" if key else f"${key.env} not set"
        else:
            who = "explicit key" if key else "no key"
        return f"{self.endpoint.provider} {self.model!r} at {self.endpoint.base_url} ({who})"

    def open_session(self) -> _HTTPSession:
        if self.transport == "aiohttp":
            try:
                import aiohttp  # noqa: F401
            except ImportError:  # fall back rather than fail: both answer the same way
                pass
            else:
                return _AiohttpSession(self)
        return _HTTPSession(self)


def _headers(backend: OpenAIBackend) -> dict[str, str]:
    """Every request's headers: JSON both ways, the key, and the user's extra headers."""
    headers = {
        "content-type": "application/json",
        "accept": "application/json",
        "user-agent": "rubriclab",
    }
    for name, value in backend.extra_headers.items():
        revealed = value.reveal() if isinstance(value, Secret) else value
        if revealed:
            headers[name] = revealed
    key = backend.key.reveal()
    if key:
        headers["authorization"] = f"Bearer {key}"
    return headers


class _HTTPSession:
    """The httpx session (also the base: body, classification and failures are shared)."""

    def __init__(self, backend: OpenAIBackend) -> None:
        self.backend = backend
        self.client = self._client(backend)
        self.encoder = BodyEncoder(backend)

    @staticmethod
    def _client(backend: OpenAIBackend) -> httpx.AsyncClient:
        size = backend.max_concurrency
        limits = httpx.Limits(max_connections=size, max_keepalive_connections=size)
        return httpx.AsyncClient(
            limits=limits,
            headers=_headers(backend),
            timeout=httpx.Timeout(backend.timeout, connect=connect_timeout(backend.timeout)),
        )

    async def send(
        self, request: Request, format_level: int, messages_json: str | None = None
    ) -> Outcome:
        dialect = self.backend.dialect  # how this body is spelled, for a 400 that refuses it
        content = self.encoder.encode(request, format_level, messages_json)
        try:
            response = await self._post(content)
        except asyncio.CancelledError:
            raise
        except (httpx.TransportError, httpx.InvalidURL, TimeoutError) as exc:
            return self._transport_failure(exc)
        return self._classify(
            response.status_code,
            response.reason_phrase,
            response.headers,
            response.content,
            request,
            format_level,
            dialect,
        )

    def _transport_failure(self, exc: BaseException) -> Failure:
        kind = _exception_kind(exc)
        base = self.backend.endpoint.base_url
        if kind == "timeout" and _connecting(exc):
            message = (
                f"could not connect to {base} within "
                f"{connect_timeout(self.backend.timeout):g}s (no answer to the connection)"
            )
        elif kind == "timeout":
            message = f"no answer from {self.backend.url} within {self.backend.timeout:g}s"
        elif kind == "connect":
            message = (
                f"cannot connect to {base} ({_line(exc)}): "
                "is the server running and the base URL right?"
            )
        elif kind == "bad_url":
            return Failure("connect", f"bad base URL {base!r}: {_line(exc)}")
        elif kind == "reset":
            message = f"the server at {base} reset the connection before answering (ECONNRESET)"
        elif kind == "closed":
            message = f"the server at {base} closed the connection without a complete answer"
        else:
            inner = _innermost(exc)
            message = f"{type(inner).__name__}: {_line(inner)}"
        return Failure(
            "timeout" if kind == "timeout" else "connect" if kind == "connect" else "transport",
            self.backend.scrub(message),
            retryable=True,
        )

    async def _post(self, content: bytes) -> httpx.Response:
        # httpx's timeouts bound each read; the deadline bounds the whole call, so a server
        # that trickles bytes cannot hold a slot forever.
        deadline = self.backend.timeout
        if sys.version_info >= (3, 11):
            async with asyncio.timeout(deadline):
                return await self.client.post(self.backend.url, content=content)
        return await asyncio.wait_for(  # pragma: no cover - Python 3.10
            self.client.post(self.backend.url, content=content), deadline
        )

    def _classify(
        self,
        status: int,
        reason: str | None,
        headers: Mapping[str, str],
        raw: bytes,
        request: Request,
        format_level: int,
        dialect: Dialect | None = None,
    ) -> Outcome:
        outcome = self.backend.kept(
            self._outcome(status, reason, headers, raw, request, format_level, dialect)
        )
        rate = parse_rate_headers(headers)
        return outcome if rate is None else dataclasses.replace(outcome, rate=rate)

    def _outcome(
        self,
        status: int,
        reason: str | None,
        headers: Mapping[str, str],
        raw: bytes,
        request: Request,
        format_level: int,
        dialect: Dialect | None = None,
    ) -> Outcome:
        if status == 200:
            return self._parse_ok(raw)
        # (scrubbed with every other field by ``kept``, the boundary)
        text = raw[:_RAW_LIMIT].decode("utf-8", "replace")
        detail = clean_text(_error_message(raw)) or clean_text(reason or "") or "no detail"
        retry_after = parse_retry_after(headers)
        if status == 429:
            return Failure(
                "rate_limited", f"rate limited: {detail}", status, text, True, retry_after
            )
        if status >= 500:
            return Failure("server_error", detail, status, text, True, retry_after)
        if status == 400:
            refused = _refused_field(raw)
            sent = self.backend.dialect if dialect is None else dialect
            if refused is not None and sent.adapted(refused) != sent:
                # a body spelled before the judge adapted (else the refusal stands as it is)
                return Failure("bad_request", detail, status, text, adapt=refused)
            asked = request.response_format is not None and format_level > 0
            lowered = text.lower()
            if asked and any(w in lowered for w in _FORMAT_WORDS):
                return Failure("bad_request", detail, status, text, format_rejected=True)
            return Failure("bad_request", detail, status, text)
        if status in (401, 403):
            env = self.backend.key.env
            fix = f"set {env} to a valid key" if env else "pass a valid api_key="
            return Failure(
                "auth", f"the endpoint rejected the API key (HTTP {status}): {fix}", status, text
            )
        if status == 404:
            return Failure(
                "not_found",
                f"HTTP 404 from {self.backend.url}: check the base URL and that model "
                f"{self.backend.model!r} exists ({detail})",
                status,
                text,
            )
        return Failure("http_error", detail, status, text, status in _RETRY_STATUS, retry_after)

    def _parse_ok(self, raw: bytes) -> Outcome:
        return read_chat(self.backend, raw)

    def new_run(self) -> None:
        self.encoder.new_run()

    async def aclose(self) -> None:
        await self.client.aclose()


class _AiohttpSession(_HTTPSession):
    """The same attempt on a bare ``aiohttp.ClientSession``: no per-request URL parsing,
    header merging or response models on top of aiohttp's own (that layer cost as much
    client CPU per call as aiohttp itself)."""

    def __init__(self, backend: OpenAIBackend) -> None:
        import aiohttp
        import yarl

        self.backend = backend
        self.encoder = BodyEncoder(backend)
        self._errors: tuple[type[BaseException], ...] = (
            aiohttp.ClientError,
            asyncio.TimeoutError,
        )
        size = backend.max_concurrency
        timeout = backend.timeout
        self.session = aiohttp.ClientSession(
            connector=aiohttp.TCPConnector(limit=size, limit_per_host=size),
            headers=_headers(backend),
            # total: the deadline bounds the whole call (connect, send, every read), kept by
            # aiohttp's own timer rather than an asyncio.timeout around each call. Connecting
            # has its own, shorter bound (a host that drops SYNs is retried, not waited out
            # for the whole deadline); armed once per new connection. No per-read timer: an
            # answer's first byte comes after the whole generation, so it could never fire
            # before the deadline, and it was re-armed on every chunk.
            timeout=aiohttp.ClientTimeout(total=timeout, sock_connect=connect_timeout(timeout)),
        )
        try:  # parsed once, not per request; a bad one fails each call as httpx's would
            self._url: Any = yarl.URL(backend.url)
        except (ValueError, TypeError):
            self._url = backend.url

    async def send(
        self, request: Request, format_level: int, messages_json: str | None = None
    ) -> Outcome:
        dialect = self.backend.dialect  # how this body is spelled, for a 400 that refuses it
        content = self.encoder.encode(request, format_level, messages_json)
        try:
            got = await self._post_aio(content)
        except asyncio.CancelledError:
            raise
        except self._errors as exc:
            return self._transport_failure(exc)
        status, reason, headers, raw = got
        return self._classify(status, reason, headers, raw, request, format_level, dialect)

    async def _post_aio(self, content: bytes) -> tuple[int, str | None, Mapping[str, str], bytes]:
        # no redirects, as with httpx: the key must not follow a Location to another host
        async with self.session.post(self._url, data=content, allow_redirects=False) as response:
            raw = await response.read()
            return response.status, response.reason, response.headers, raw

    async def aclose(self) -> None:
        await self.session.close()


def chat_body(backend: OpenAIBackend, request: Request, format_level: int = 2) -> dict[str, Any]:
    """The chat-completions JSON body for ``request`` (a call, or one line of a batch file)."""
    body = _body_without_format(backend, request, list(request.messages))
    fmt = _format_at(request.response_format, format_level)
    if fmt is not None:
        body["response_format"] = dict(fmt)
    return body


_SPLICED: Any = object()
"""Stands for messages whose JSON is already written (``BodyEncoder`` splices it in)."""


def _body_without_format(backend: OpenAIBackend, request: Request, messages: Any) -> dict[str, Any]:
    b = backend
    body: dict[str, Any] = {"model": b.model, "messages": messages}
    if b.temperature is not None:
        body["temperature"] = b.temperature
    if b.seed is not None:
        body["seed"] = b.seed + request.sample  # distinct samples stay distinct
    if b.max_tokens is not None:
        body["max_tokens"] = b.max_tokens
    body.update(b.params)
    body.update(request.params)
    dialect = b.dialect
    if not dialect.plain:  # a reasoning model's: max_completion_tokens, maybe no temperature
        dialect.respell(body, ({"max_tokens": b.max_tokens}, b.params, request.params))
    return body


_JSON_OBJECT: Mapping[str, Any] = {"type": "json_object"}


def _format_at(fmt: Mapping[str, Any] | None, level: int) -> Mapping[str, Any] | None:
    """The response_format sent at ``level``: the request's (2), a bare JSON-object mode in
    place of a schema (1), none (0)."""
    if fmt is None or level <= 0:
        return None
    if level >= 2 or fmt.get("type") != "json_schema":
        return fmt
    return _JSON_OBJECT


class BodyEncoder:
    """``chat_body`` as the bytes sent, with each response_format's JSON written once a run.

    A run sends one schema with thousands of calls, and the schema is most of each body's
    encoding time (a checklist's: 50 of 70 us). A format is remembered by identity until the
    next run starts (:meth:`new_run`): a dict changed in place between runs (a notebook
    tweaking a schema) is written again, so a stale schema is never sent.
    """

    #: formats remembered at once (a run whose rubrics differ by row writes the rest each time)
    LIMIT = 256

    def __init__(self, backend: OpenAIBackend) -> None:
        self.backend = backend
        self._seen: dict[int, tuple[Mapping[str, Any], str]] = {}

    def __len__(self) -> int:
        """How many formats' JSON is remembered."""
        return len(self._seen)

    def new_run(self) -> None:
        """Forget every format: the next run writes each one again, as it is then."""
        self._seen.clear()

    def encode(
        self, request: Request, format_level: int, messages_json: str | None = None
    ) -> bytes:
        """The body's bytes. ``messages_json``: ``request.messages`` as JSON already written
        (the cache key's text), spliced in rather than written again."""
        messages = list(request.messages) if messages_json is None else _SPLICED
        body = _body_without_format(self.backend, request, messages)
        fmt = _format_at(request.response_format, format_level)
        if fmt is not None:
            body.pop("response_format", None)  # the request's format wins over params
        if body.get("messages") is _SPLICED:  # (params naming "messages" win, as in chat_body)
            del body["messages"]
            head = f'{{"messages": {messages_json}, {json.dumps(body)[1:]}'
        else:
            head = json.dumps(body)
        if fmt is None:
            return head.encode()
        return f'{head[:-1]}, "response_format": {self._json(fmt)}}}'.encode()

    def _json(self, fmt: Mapping[str, Any]) -> str:
        seen = self._seen.get(id(fmt))
        if seen is not None and seen[0] is fmt:
            return seen[1]
        text = json.dumps(dict(fmt))
        if len(self._seen) >= self.LIMIT:
            self._seen.clear()
        self._seen[id(fmt)] = (fmt, text)  # the object is kept, so its id is not reused
        return text


def parse_chat(backend: OpenAIBackend, raw: bytes) -> Outcome:
    """A chat-completions response body as a Success, or a classified Failure, every field
    scrubbed (``OpenAIBackend.kept``)."""
    return backend.kept(read_chat(backend, raw))


def read_chat(backend: OpenAIBackend, raw: bytes) -> Outcome:
    """``parse_chat`` before the scrub: only for a caller that passes the outcome through
    ``backend.kept`` itself (or gave a body scrubbed whole)."""
    try:
        data = json.loads(raw)
    except ValueError:
        return Failure(
            "malformed_response",
            "the endpoint answered HTTP 200 with a body that is not JSON",
            200,
            raw[:_RAW_LIMIT].decode("utf-8", "replace"),
            retryable=True,
        )
    choices = data.get("choices") if isinstance(data, dict) else None
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        kind: ErrorType = "empty_response" if isinstance(choices, list) else "malformed_response"
        return Failure(
            kind,
            "the endpoint answered with no choices",
            200,
            raw[:_RAW_LIMIT].decode("utf-8", "replace"),
            retryable=True,
        )
    choice = choices[0]
    message = choice.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, list):  # some servers return content parts
        content = "".join(p.get("text", "") for p in content if isinstance(p, dict)) or None
    if not isinstance(content, str):
        refusal = message.get("refusal") if isinstance(message, dict) else None
        raw_text = raw[:_RAW_LIMIT].decode("utf-8", "replace")
        if isinstance(refusal, str) and refusal:
            said = clean_text(refusal[:200])
            return Failure("refusal", f"the model refused: {said}", 200, raw_text)
        return Failure("empty_response", "the answer had no message content", 200, raw_text, True)
    usage = data.get("usage")
    if isinstance(usage, dict):
        p = _count(usage.get("prompt_tokens"))
        c = _count(usage.get("completion_tokens"))
        t = _count(usage.get("total_tokens")) or p + c
        counted = Usage(p, c, t)
    else:
        counted = Usage()
    model = data.get("model")
    finish = choice.get("finish_reason")
    return Success(
        # the transport boundary: a lone surrogate (valid JSON, invalid UTF-8) becomes
        # U+FFFD here, so caches, files and reports downstream never meet one
        clean_text(content),
        counted,
        clean_text(model) if isinstance(model, str) and model else backend.model,
        clean_text(finish) if isinstance(finish, str) else None,
    )


_CONNECT_CAUSES = ("ClientConnectorError", "ClientConnectorDNSError", "ClientProxyConnectionError")
_TRANSPORT_CAUSES = ("ServerDisconnectedError", "ClientOSError", "ClientPayloadError")
_TIMEOUT_CAUSES = ("ServerTimeoutError", "SocketTimeoutError", "ConnectionTimeoutError")
_BAD_URL_CAUSES = ("InvalidURL", "InvalidUrlClientError", "NonHttpUrlClientError")


_CLOSED_WORDS = (
    "server disconnected",
    "connection closed",
    "peer closed connection",
    "incomplete",
    "not enough data",
    "response payload is not completed",
)


def _innermost(exc: BaseException) -> BaseException:
    while exc.__cause__ is not None:
        exc = exc.__cause__
    return exc


def _chain(exc: BaseException) -> list[BaseException]:
    out: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and len(out) < 10:
        out.append(current)
        current = current.__cause__ or current.__context__
    return out


CONNECT_TIMEOUT_S = 10.0
"""Seconds a new connection may take (at most the call's whole timeout)."""


def connect_timeout(timeout: float) -> float:
    """The connect bound for a call whose whole deadline is ``timeout``."""
    return min(timeout, CONNECT_TIMEOUT_S)


def _connecting(exc: BaseException) -> bool:
    """The timeout struck while connecting (aiohttp's or httpx's own connect timeout)."""
    return any(
        type(link).__name__ in ("ConnectionTimeoutError", "ConnectTimeout") for link in _chain(exc)
    )


def _exception_kind(exc: BaseException) -> str:
    """'timeout', 'connect', 'bad_url', 'reset', 'closed' or 'transport', by what happened.

    The exception's class is not enough: the aiohttp transport wraps a reset connection
    as ConnectTimeout ("[Errno 104]"), so the causes and errno decide first."""
    for link in _chain(exc):
        if isinstance(link, ConnectionResetError) or (
            isinstance(link, OSError) and link.errno == errno.ECONNRESET
        ):
            return "reset"
        if "reset by peer" in str(link).lower() or "[errno 104]" in str(link).lower():
            return "reset"
    cause: BaseException | None = exc  # aiohttp's own, or the cause httpx wraps
    while cause is not None:
        name = type(cause).__name__
        if name in _CONNECT_CAUSES:
            return "connect"
        if name in _TRANSPORT_CAUSES:
            return "closed" if _closed(exc) else "transport"
        if name in _TIMEOUT_CAUSES:
            return "timeout"
        cause = cause.__cause__
    if isinstance(exc, (httpx.UnsupportedProtocol, httpx.InvalidURL)) or (
        type(exc).__name__ in _BAD_URL_CAUSES
    ):
        return "bad_url"
    if isinstance(exc, (httpx.TimeoutException, TimeoutError)):
        return "timeout"
    if isinstance(exc, httpx.ConnectError):
        return "connect"
    return "closed" if _closed(exc) else "transport"


def _closed(exc: BaseException) -> bool:
    return any(w in str(link).lower() for link in _chain(exc) for w in _CLOSED_WORDS)


def _count(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text or type(exc).__name__


def _refused_field(raw: bytes) -> str | None:
    try:
        return refused_field(json.loads(raw))
    except ValueError:
        return None


def refused_field(data: Any) -> str | None:
    """The field an error body (parsed JSON) says this model does not take ('max_tokens' or
    'temperature'), else None.

    OpenAI names it: ``{"error": {"param": "max_tokens", "code": "unsupported_parameter",
    "message": "Unsupported parameter: 'max_tokens' is not supported with this model. Use
    'max_completion_tokens' instead."}}``, or ``"code": "unsupported_value"`` for a temperature
    other than the default. Gateways that keep only the message are read by its words. A 400
    about a value out of range ("max_tokens is too large") is not a refusal of the field.
    """
    error = data.get("error") if isinstance(data, dict) else None
    if not isinstance(error, dict):
        return None
    message = error.get("message")
    words = message.lower() if isinstance(message, str) else ""
    code = error.get("code")  # the endpoint's: any JSON (a list is unhashable)
    unsupported = (isinstance(code, str) and code in _UNSUPPORTED_CODES) or (
        "unsupported" in words or "not supported" in words
    )
    if not unsupported:
        return None
    for name in _ADAPTABLE:
        if error.get("param") == name or f"'{name}'" in words:
            return name
    return None


def _error_message(raw: bytes) -> str:
    """The human part of an OpenAI-style error body, else a trimmed first line."""
    try:
        data = json.loads(raw)
    except ValueError:
        return " ".join(raw[:300].decode("utf-8", "replace").split())
    if isinstance(data, dict):
        err = data.get("error")
        if isinstance(err, dict) and isinstance(err.get("message"), str):
            return " ".join(err["message"].split())[:500]
        if isinstance(err, str):
            return err[:500]
        if isinstance(data.get("message"), str):
            return str(data["message"])[:500]
    return " ".join(raw[:300].decode("utf-8", "replace").split())
