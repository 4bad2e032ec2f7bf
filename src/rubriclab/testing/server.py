"""A fake OpenAI-compatible judge that really listens on 127.0.0.1, with faults on demand.

Tests and benchmarks talk to it over real HTTP instead of patching the client, so everything
between ``Judge`` and the socket (pooling, timeouts, retries, parsing) is what gets tested.
It is a small asyncio HTTP/1.1 server (keep-alive, Content-Length bodies): enough for httpx
and aiohttp clients, cheap enough to keep up with thousands of calls a second, and stdlib only.

Answers come from ``responder(body)``; by default the mock judge's schema-driven answers.
Faults are drawn per request with a seeded RNG: 429 with Retry-After, 500, 503, 401, a hang
past the client's timeout, a malformed JSON body, a truncated body, empty choices, a connection
reset (TCP RST), and a reply whose text holds a lone surrogate. ``echo_headers`` makes error
replies quote the request's headers back (as some gateways do), and ``RateLimit`` is a true
token-bucket limiter that sends OpenAI's ``x-ratelimit-*`` headers on every reply.
``reasoning="o1"`` (or ``"o3-mini"``) makes it refuse what OpenAI's reasoning models refuse
(``max_tokens``, a temperature) with their exact 400 bodies.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import random
import signal
import socket
import struct
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..judges.mock import mock_answer, mock_usage
from .reasoning import REASONING_STYLES, reasoning_refusal
from .simulated import simulated_responder

__all__ = [
    "FAULT_KINDS",
    "FakeJudgeServer",
    "Faults",
    "RateLimit",
    "RequestRecord",
    "Responder",
    "ServerReply",
    "format_duration",
    "main",
]

FAULT_KINDS = (
    "429",
    "500",
    "503",
    "401",
    "hang",
    "malformed",
    "truncated",
    "empty",
    "reset",
    "surrogate",
)
_MAX_HEAD = 64 * 1024
_REASONS = {
    200: "OK",
    400: "Bad Request",
    401: "Unauthorized",
    404: "Not Found",
    411: "Length Required",
    429: "Too Many Requests",
    500: "Internal Server Error",
    503: "Service Unavailable",
}


@dataclass(frozen=True)
class ServerReply:
    """A scripted HTTP answer: any status, a JSON-able body (or raw bytes), extra headers."""

    status: int = 200
    body: Any = None
    headers: Mapping[str, str] = field(default_factory=dict)
    reason: str | None = None
    """The status line's reason phrase (default: the standard one); a careless gateway may
    put anything there, a request header included."""


Responder = Callable[[dict[str, Any]], str | dict[str, Any] | ServerReply]


@dataclass(frozen=True)
class Faults:
    """Per-request fault rates (each in [0, 1], summing to at most 1), drawn with ``seed``."""

    rate_429: float = 0.0
    rate_500: float = 0.0
    rate_503: float = 0.0
    rate_hang: float = 0.0
    rate_malformed: float = 0.0
    rate_truncated: float = 0.0
    rate_empty: float = 0.0
    rate_401: float = 0.0
    rate_reset: float = 0.0
    """The connection is reset (TCP RST) after the request arrived, before any answer."""
    rate_surrogate: float = 0.0
    """A well-formed answer whose text holds a lone surrogate (``\\ud800`` in the JSON)."""
    retry_after: float | str | None = 1
    """Retry-After sent with 429 and 503 (seconds, an HTTP date string, or None for none)."""
    retry_after_ms: float | None = None
    """Also send ``retry-after-ms`` (OpenAI's finer hint, which wins over Retry-After)."""
    echo_headers: bool = False
    """Error replies quote the request's headers back, credentials included."""
    hang_seconds: float = 300.0
    seed: int = 0

    def __post_init__(self) -> None:
        rates = self._rates()
        if any(not 0.0 <= r <= 1.0 for _, r in rates):
            raise ValueError(f"fault rates must be in [0, 1]: {dict(rates)}")
        if sum(r for _, r in rates) > 1.0 + 1e-9:
            raise ValueError("fault rates add up to more than 1")

    def _rates(self) -> list[tuple[str, float]]:
        return [
            ("429", self.rate_429),
            ("500", self.rate_500),
            ("503", self.rate_503),
            ("hang", self.rate_hang),
            ("malformed", self.rate_malformed),
            ("truncated", self.rate_truncated),
            ("empty", self.rate_empty),
            ("401", self.rate_401),
            ("reset", self.rate_reset),
            ("surrogate", self.rate_surrogate),
        ]

    def pick(self, rng: random.Random) -> str | None:
        roll = rng.random()
        edge = 0.0
        for kind, rate in self._rates():
            edge += rate
            if roll < edge:
                return kind
        return None


def format_duration(seconds: float) -> str:
    """OpenAI's ``x-ratelimit-reset-*`` form: "20ms", "1s", "1.5s", "6m0s", "1h2m3s"."""
    if seconds < 1.0:
        return f"{max(0, round(seconds * 1000))}ms"
    hours, rest = divmod(seconds, 3600.0)
    minutes, secs = divmod(rest, 60.0)
    text = f"{secs:.3f}".rstrip("0").rstrip(".") + "s"
    if hours >= 1:
        return f"{int(hours)}h{int(minutes)}m{text}"
    if minutes >= 1:
        return f"{int(minutes)}m{text}"
    return text


class _Bucket:
    """A token bucket: ``capacity`` tokens, refilled continuously at ``rate`` per second."""

    def __init__(self, capacity: float, rate: float) -> None:
        self.capacity = capacity
        self.rate = rate
        self.level = capacity
        self.stamp = time.monotonic()

    def refill(self, now: float) -> None:
        self.level = min(self.capacity, self.level + (now - self.stamp) * self.rate)
        self.stamp = now

    def wait_for(self, cost: float) -> float:
        """Seconds until ``cost`` tokens are there (0 when they are there now)."""
        return max(0.0, (cost - self.level) / self.rate)

    def reset_in(self) -> float:
        """Seconds until the bucket is full again (what OpenAI's reset headers say)."""
        return (self.capacity - self.level) / self.rate


@dataclass(frozen=True)
class RateLimit:
    """A provider-style limit: requests (and optionally tokens) per second, as token buckets.

    Every reply carries ``x-ratelimit-limit/remaining/reset-requests`` (and ``-tokens``);
    a request over the limit gets 429 with ``retry-after-ms`` and ``retry-after`` saying
    when it would have been let through. A request's token cost is its prompt's word count
    plus 4 per message (the mock judge's count) plus ``completion_tokens``.
    """

    requests_per_second: float
    burst: float | None = None
    """Bucket size in requests (default: one second's worth)."""
    tokens_per_second: float | None = None
    token_burst: float | None = None
    completion_tokens: int = 0
    headers: bool = True
    """False: a limiter that sends only Retry-After on 429 (no rate headers)."""
    retry_after_ms: bool = True
    """False: a 429 says only ``Retry-After`` in whole seconds (no ``retry-after-ms``)."""

    def __post_init__(self) -> None:
        if self.requests_per_second <= 0:
            raise ValueError("requests_per_second must be > 0")
        if self.tokens_per_second is not None and self.tokens_per_second <= 0:
            raise ValueError("tokens_per_second must be > 0")


class _Limiter:
    def __init__(self, limit: RateLimit) -> None:
        self.limit = limit
        rps = limit.requests_per_second
        self.requests = _Bucket(limit.burst or rps, rps)
        tps = limit.tokens_per_second
        self.tokens = _Bucket(limit.token_burst or tps, tps) if tps else None

    def admit(self, body: dict[str, Any]) -> tuple[bool, dict[str, str]]:
        """Take one request (and its tokens) if both buckets allow; the headers to send."""
        now = time.monotonic()
        cost = float(_prompt_tokens(body) + self.limit.completion_tokens)
        buckets = [(self.requests, 1.0, "requests")]
        if self.tokens is not None:
            buckets.append((self.tokens, cost, "tokens"))
        wait = 0.0
        for bucket, need, _ in buckets:
            bucket.refill(now)
            wait = max(wait, bucket.wait_for(need))
        if wait <= 0:
            for bucket, need, _ in buckets:
                bucket.level -= need
        headers: dict[str, str] = {}
        if self.limit.headers:
            for bucket, _, name in buckets:
                headers[f"x-ratelimit-limit-{name}"] = f"{bucket.capacity:g}"
                headers[f"x-ratelimit-remaining-{name}"] = str(int(max(0.0, bucket.level)))
                headers[f"x-ratelimit-reset-{name}"] = format_duration(bucket.reset_in())
        if wait > 0:
            if self.limit.retry_after_ms:
                headers["retry-after-ms"] = f"{wait * 1000:.0f}"
            headers["retry-after"] = f"{max(1, round(wait + 0.5))}"
        return wait <= 0, headers


def _prompt_tokens(body: dict[str, Any]) -> int:
    messages = body.get("messages")
    return mock_usage(messages if isinstance(messages, list) else [], "").prompt_tokens


@dataclass
class RequestRecord:
    """One chat-completions request as the server saw it, and what it did with it."""

    index: int
    body: dict[str, Any]
    received: float
    headers: dict[str, str] = field(default_factory=dict)
    fault: str | None = None
    status: int | None = None
    finished: float | None = None

    @property
    def succeeded(self) -> bool:
        """The server delivered a well-formed answer."""
        return self.fault is None and self.status == 200


def default_responder(body: dict[str, Any]) -> str:
    """The mock judge's answer: schema instances for structured prompts, labelled text else."""
    messages = body.get("messages") or []
    fmt = body.get("response_format")
    return mock_answer(messages, fmt if isinstance(fmt, Mapping) else None, 0, "fake-judge")


def completion_body(
    body: dict[str, Any], text: str, index: int, *, created: float | None = None, kind: str = "fake"
) -> dict[str, Any]:
    """An OpenAI chat.completion answering ``body`` with ``text`` (both fake servers send it)."""
    messages = body.get("messages")
    usage = mock_usage(messages if isinstance(messages, list) else [], text)
    return {
        "id": f"chatcmpl-{kind}-{index}",
        "object": "chat.completion",
        "created": int(time.time() if created is None else created),
        "model": body.get("model") or "fake-judge",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text},
                "finish_reason": "stop",
            }
        ],
        "usage": {
            "prompt_tokens": usage.prompt_tokens,
            "completion_tokens": usage.completion_tokens,
            "total_tokens": usage.total_tokens,
        },
    }


def _error_body(status: int, message: str, echo: Mapping[str, str] | None = None) -> dict[str, Any]:
    if echo is not None:  # as a careless gateway does: the request's headers, credentials too
        message = f"{message}; request headers: {dict(echo)}"
    error: dict[str, Any] = {"message": message, "type": "fake_error", "code": status}
    if echo is not None:
        error["request_headers"] = dict(echo)
    return {"error": error}


class _Connection(asyncio.Protocol):
    """One client connection: parse a request, let the server answer it, then the next."""

    def __init__(self, server: FakeJudgeServer) -> None:
        self.server = server
        self.buffer = bytearray()
        self.transport: asyncio.Transport | None = None
        self.task: asyncio.Task[None] | None = None
        self.busy = False
        self.before_write: Callable[[], None] | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        self.server._connections.add(self)

    def connection_lost(self, exc: Exception | None) -> None:
        self.server._connections.discard(self)
        if self.task is not None and not self.task.done():
            self.task.cancel()  # a hung request ends when its client gives up
        self.transport = None

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        if not self.busy:
            self._next()

    def _next(self) -> None:
        end = self.buffer.find(b"\r\n\r\n")
        if end < 0:
            if len(self.buffer) > _MAX_HEAD:
                self.close()
            return
        head = bytes(self.buffer[:end]).decode("latin-1").split("\r\n")
        try:
            method, target, _version = head[0].split(" ", 2)
        except ValueError:
            self.close()
            return
        headers: dict[str, str] = {}
        for line in head[1:]:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        if "chunked" in headers.get("transfer-encoding", "").lower():
            self.send(411, {}, json.dumps(_error_body(411, "send Content-Length")).encode(), False)
            return
        length = int(headers.get("content-length") or 0)
        if len(self.buffer) < end + 4 + length:
            return
        body = bytes(self.buffer[end + 4 : end + 4 + length])
        del self.buffer[: end + 4 + length]
        keep_alive = headers.get("connection", "").lower() != "close"
        self.busy = True
        # Recorded here, as the bytes arrive, not in the task: a client that gives up at once
        # closes the connection, which cancels the task, maybe before it ever ran; the request
        # still reached the server and must be counted.
        record = self.server._record(method, target, body, headers)
        self.task = asyncio.get_running_loop().create_task(
            self.server._handle(self, method, target, body, keep_alive, headers, record)
        )

    def send(
        self,
        status: int,
        headers: Mapping[str, str],
        body: bytes,
        keep_alive: bool,
        truncate: bool = False,
        reason: str | None = None,
    ) -> None:
        if self.before_write is not None:
            self.before_write()
        transport = self.transport
        if transport is None or transport.is_closing():
            return
        phrase = reason if reason is not None else _REASONS.get(status, "Status")
        lines = [f"HTTP/1.1 {status} {phrase}"]
        lines.append(f"content-length: {len(body)}")
        lines.append("content-type: application/json")
        lines.extend(f"{k}: {v}" for k, v in headers.items())
        if not keep_alive:
            lines.append("connection: close")
        head = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
        if truncate:
            transport.write(head + body[: len(body) // 2])
            transport.close()
            return
        transport.write(head + body)
        self.busy = False
        if not keep_alive:
            transport.close()
        elif self.buffer:
            self._next()

    def close(self) -> None:
        if self.transport is not None:
            self.transport.close()

    def reset(self) -> None:
        """Drop the connection with a TCP RST (ECONNRESET at the client), not a clean FIN."""
        if self.before_write is not None:
            self.before_write()
        transport = self.transport
        if transport is None:
            return
        sock = transport.get_extra_info("socket")
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        transport.abort()


class FakeJudgeServer:
    """``with FakeJudgeServer(responder, latency=0.05, faults=Faults(rate_429=0.2)) as s:``

    ``s.url`` is a base URL (ending in /v1) to give ``Judge``. ``responder``, ``latency`` and
    ``faults`` may be changed while it runs. ``requests`` holds every chat-completions body in
    arrival order, ``log`` the matching ``RequestRecord`` (fault, status, timing),
    ``peak_in_flight`` the most requests it was answering at once. ``rate_limit`` puts a
    token-bucket limiter in front of the answers. ``reasoning`` ("o1" or "o3-mini", see
    ``testing.reasoning``) refuses bodies as that OpenAI reasoning model does.
    """

    def __init__(
        self,
        responder: Responder | None = None,
        latency: float = 0.0,
        faults: Faults | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        rate_limit: RateLimit | None = None,
        hold_until: int | None = None,
        reasoning: str | None = None,
    ) -> None:
        if reasoning is not None and reasoning not in REASONING_STYLES:
            raise ValueError(f"reasoning must be one of {REASONING_STYLES} or None")
        self.reasoning = reasoning
        self.responder: Responder = responder or default_responder
        self.latency = latency
        #: answer nothing until this many requests are in flight at once, then answer them
        #: all: a barrier that proves a client's calls overlap, with no sleep to race
        self.hold_until = hold_until
        self._held: asyncio.Event | None = None
        self.faults = faults
        self._limiter: _Limiter | None = None
        self.rate_limit = rate_limit
        self.host = host
        self.port = port
        self.requests: list[dict[str, Any]] = []
        self.log: list[RequestRecord] = []
        self.in_flight = 0
        self.peak_in_flight = 0
        self._rng = random.Random(faults.seed if faults else 0)
        self._connections: set[_Connection] = set()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._server: asyncio.Server | None = None
        self._thread: threading.Thread | None = None
        self._count_lock = threading.Lock()

    @property
    def rate_limit(self) -> RateLimit | None:
        """The token-bucket limit in force (None: unlimited); setting it starts full buckets."""
        return self._limiter.limit if self._limiter is not None else None

    @rate_limit.setter
    def rate_limit(self, value: RateLimit | None) -> None:
        self._limiter = _Limiter(value) if value is not None else None

    # -- what tests read -------------------------------------------------------------------
    @property
    def url(self) -> str:
        if not self.port:
            raise RuntimeError("the fake judge server is not started")
        return f"http://{self.host}:{self.port}/v1"

    @property
    def calls(self) -> int:
        """Chat-completions requests received so far."""
        return len(self.log)

    def reset(self) -> None:
        """Forget recorded requests and peaks (the responder, latency and faults stay); a
        ``hold_until`` barrier that opened closes again."""
        self.requests.clear()
        self.log.clear()
        self.peak_in_flight = self.in_flight
        self._rng = random.Random(self.faults.seed if self.faults else 0)
        self._held = None

    # -- lifetime --------------------------------------------------------------------------
    async def start_async(self) -> None:
        """Start listening on the running loop (used by ``main`` and by ``start``)."""
        loop = asyncio.get_running_loop()
        self._loop = loop
        self._server = await loop.create_server(
            lambda: _Connection(self), self.host, self.port, reuse_address=True
        )
        sock = self._server.sockets[0]
        self.port = int(sock.getsockname()[1])

    async def stop_async(self) -> None:
        if self._server is not None:
            self._server.close()
        for conn in list(self._connections):
            conn.close()
            if conn.task is not None:
                conn.task.cancel()
        if self._server is not None:
            await self._server.wait_closed()
            self._server = None

    def start(self) -> FakeJudgeServer:
        """Serve from a background thread with its own event loop."""
        if self._thread is not None:
            return self
        ready = threading.Event()
        failure: list[BaseException] = []
        loop = asyncio.new_event_loop()

        def run() -> None:
            asyncio.set_event_loop(loop)
            try:
                loop.run_until_complete(self.start_async())
            except BaseException as exc:
                failure.append(exc)
                ready.set()
                return
            ready.set()
            try:
                loop.run_forever()
            finally:
                loop.run_until_complete(self.stop_async())
                loop.close()

        self._thread = threading.Thread(target=run, name="fake-judge-server", daemon=True)
        self._thread.start()
        ready.wait()
        if failure:
            self._thread = None
            raise RuntimeError(f"fake judge server could not start: {failure[0]}")
        return self

    def stop(self) -> None:
        thread, loop = self._thread, self._loop
        if thread is None or loop is None:
            return
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=10)
        self._thread = None

    def __enter__(self) -> FakeJudgeServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- answering -------------------------------------------------------------------------
    async def _handle(
        self,
        conn: _Connection,
        method: str,
        target: str,
        raw: bytes,
        keep_alive: bool,
        headers: dict[str, str],
        record: RequestRecord | None,
    ) -> None:
        path = target.split("?", 1)[0].rstrip("/")
        if method == "POST" and path.endswith("/chat/completions"):
            await self._chat(conn, keep_alive, record)
        elif method == "GET" and path.endswith("/models"):
            listing = {"object": "list", "data": [{"id": "fake-judge", "object": "model"}]}
            conn.send(200, {}, json.dumps(listing).encode(), keep_alive)
        elif method == "GET" and path == "/_stats":
            statuses: dict[str, int] = {}
            faults: dict[str, int] = {}
            for rec in list(self.log):
                statuses[str(rec.status)] = statuses.get(str(rec.status), 0) + 1
                if rec.fault is not None:
                    faults[rec.fault] = faults.get(rec.fault, 0) + 1
            ok = [r for r in list(self.log) if r.status == 200]
            answered = [r.received for r in ok]
            finished = [r.finished for r in ok if r.finished is not None]
            stats = {
                "calls": self.calls,
                "answered_from": min(answered, default=None),
                "answered_until": max(answered, default=None),
                # when the last answer was written (time.perf_counter: benchmarks on the same
                # machine compare it with their own clock)
                "finished_until": max(finished, default=None),
                "peak_in_flight": self.peak_in_flight,
                "in_flight": self.in_flight,
                "statuses": statuses,
                "faults": faults,
            }
            conn.send(200, {}, json.dumps(stats).encode(), keep_alive)
        elif method == "POST" and path == "/_reset":
            self.reset()
            conn.send(200, {}, b"{}", keep_alive)
        else:
            body = _error_body(404, f"no route {method} {path}")
            conn.send(404, {}, json.dumps(body).encode(), keep_alive)

    def _record(
        self, method: str, target: str, raw: bytes, headers: dict[str, str]
    ) -> RequestRecord | None:
        """Log a chat-completions request the moment it arrives (None for other routes)."""
        path = target.split("?", 1)[0].rstrip("/")
        if method != "POST" or not path.endswith("/chat/completions"):
            return None
        try:
            body = json.loads(raw)
        except ValueError as exc:
            body = {"_invalid": f"request body is not JSON: {exc}"}
        if not isinstance(body, dict):
            body = {"_invalid": "request body is not a JSON object"}
        with self._count_lock:
            record = RequestRecord(len(self.log), body, time.perf_counter(), headers)
            self.log.append(record)
            self.requests.append(body)
        return record

    async def _chat(
        self, conn: _Connection, keep_alive: bool, record: RequestRecord | None
    ) -> None:
        assert record is not None
        invalid = record.body.get("_invalid")
        if isinstance(invalid, str):
            record.status = 400
            conn.send(400, {}, json.dumps(_error_body(400, invalid)).encode(), keep_alive)
            return
        self.in_flight += 1
        if self.in_flight > self.peak_in_flight:
            self.peak_in_flight = self.in_flight
        if self.hold_until is not None:
            if self._held is None:
                self._held = asyncio.Event()
            if self.in_flight >= self.hold_until:
                self._held.set()
            await self._held.wait()

        def finish() -> None:
            # before the reply is written: a client that has its answer must see this
            # request done (in_flight, finished), not race the rest of this task
            conn.before_write = None
            self.in_flight -= 1
            record.finished = time.perf_counter()

        conn.before_write = finish
        try:
            await self._answer(conn, record.body, record, keep_alive)
        finally:
            if conn.before_write is finish:
                finish()

    async def _answer(
        self, conn: _Connection, body: dict[str, Any], record: RequestRecord, keep_alive: bool
    ) -> None:
        faults = self.faults
        limiter = self._limiter
        rate_headers: dict[str, str] = {}
        if limiter is not None:
            admitted, rate_headers = limiter.admit(body)
            if not admitted:  # over the token bucket: refused at once, as real limits are
                record.fault = "rate_limit"
                record.status = 429
                error = _error_body(429, "Rate limit reached for requests")
                conn.send(429, rate_headers, _json(error), keep_alive)
                return
        if self.reasoning is not None:
            refusal = reasoning_refusal(body, self.reasoning)
            if refusal is not None:  # a body the model does not take: refused at once
                record.fault = "refused_param"
                record.status = 400
                conn.send(400, rate_headers, _json(refusal), keep_alive)
                return
        fault = faults.pick(self._rng) if faults is not None else None
        record.fault = fault
        echo = faults is not None and faults.echo_headers
        if fault == "429":  # rate limits answer at once, as real ones do
            assert faults is not None
            record.status = 429
            error = _error_body(429, "rate limited", record.headers if echo else None)
            conn.send(429, {**rate_headers, **_retry_after(faults)}, _json(error), keep_alive)
            return
        if fault == "401":
            record.status = 401
            error = _error_body(401, "Incorrect API key provided", record.headers if echo else None)
            conn.send(401, {}, _json(error), keep_alive)
            return
        if fault == "reset":
            conn.reset()
            return
        if fault == "hang":
            assert faults is not None
            await asyncio.sleep(faults.hang_seconds)
            conn.close()
            return
        if self.latency > 0:
            await asyncio.sleep(self.latency)
        if fault in ("500", "503"):
            assert faults is not None
            status = int(fault)
            extra = _retry_after(faults) if status == 503 else {}
            record.status = status
            error = _error_body(status, "fake server error", record.headers if echo else None)
            conn.send(status, extra, _json(error), keep_alive)
            return
        if fault == "malformed":
            record.status = 200
            conn.send(200, {}, b'{"id": "chatcmpl-fake", "choices": [{"message": {"con', keep_alive)
            return
        if fault == "empty":
            record.status = 200
            empty = completion_body(body, "", record.index)
            empty["choices"] = []
            conn.send(200, {}, _json(empty), keep_alive)
            return
        try:
            answer = self.responder(body)
        except Exception as exc:
            record.status = 500
            record.fault = "responder_error"
            error = _error_body(500, f"responder raised {type(exc).__name__}: {exc}")
            conn.send(500, {}, _json(error), keep_alive)
            return
        if isinstance(answer, ServerReply):
            record.status = answer.status
            if answer.status != 200:
                record.fault = f"scripted_{answer.status}"
            payload = answer.body
            data = payload if isinstance(payload, bytes) else _json(payload)
            conn.send(answer.status, dict(answer.headers), data, keep_alive, reason=answer.reason)
            return
        text = str(answer)
        if fault == "surrogate" and not isinstance(answer, dict):
            text = text[: len(text) // 2] + "\ud800" + text[len(text) // 2 :]
        full = answer if isinstance(answer, dict) else completion_body(body, text, record.index)
        if fault == "truncated":
            record.status = 200
            conn.send(200, rate_headers, _json(full), keep_alive, truncate=True)
            return
        record.status = 200
        conn.send(200, rate_headers, _json(full), keep_alive)


def _json(value: Any) -> bytes:
    return json.dumps(value).encode()


def _retry_after(faults: Faults) -> dict[str, str]:
    if faults.retry_after is None:
        return (
            {}
            if faults.retry_after_ms is None
            else {"retry-after-ms": f"{faults.retry_after_ms:g}"}
        )
    value = faults.retry_after
    headers = {"retry-after": f"{value:g}" if isinstance(value, (int, float)) else str(value)}
    if faults.retry_after_ms is not None:
        headers["retry-after-ms"] = f"{faults.retry_after_ms:g}"
    return headers


# -- command line: `python -m rubriclab.testing` / `rubriclab serve-fake-judge` -----------------


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="rubriclab serve-fake-judge",
        description="Serve a fake OpenAI-compatible judge on 127.0.0.1 (for tests, demos, "
        "benchmarks). Prints its base URL, then serves until interrupted.",
    )
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=0, help="0 picks a free port")
    p.add_argument("--latency", type=float, default=0.0, help="seconds per answer")
    for kind in FAULT_KINDS:
        p.add_argument(f"--rate-{kind}", type=float, default=0.0, help=f"share of {kind} faults")
    p.add_argument("--retry-after", default="1", help="Retry-After value for 429/503")
    p.add_argument("--hang-seconds", type=float, default=300.0)
    p.add_argument("--echo-headers", action="store_true", help="error replies quote headers")
    p.add_argument("--retry-after-ms", type=float, default=None, help="also send retry-after-ms")
    p.add_argument("--rate-limit", type=float, default=0.0, help="requests/s token bucket")
    p.add_argument("--rate-limit-burst", type=float, default=None, help="bucket size")
    p.add_argument(
        "--no-rate-headers", action="store_true", help="the limiter sends no x-ratelimit-*"
    )
    p.add_argument(
        "--no-retry-after-ms",
        action="store_true",
        help="the limiter's 429s say Retry-After in whole seconds only",
    )
    p.add_argument(
        "--reasoning",
        choices=REASONING_STYLES,
        default=None,
        help="refuse max_tokens and temperature as this OpenAI reasoning model does",
    )
    p.add_argument(
        "--simulated",
        action="store_true",
        help="answer as the simulated judge (testing.simulated): rules read from the prompt",
    )
    p.add_argument("--seed", type=int, default=0)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Run the fake judge in the foreground; the first stdout line is its base URL."""
    args = _parser().parse_args(argv)
    try:
        retry_after: float | str | None = float(args.retry_after)
    except ValueError:
        retry_after = args.retry_after or None
    faults = Faults(
        rate_429=args.rate_429,
        rate_500=args.rate_500,
        rate_503=args.rate_503,
        rate_hang=args.rate_hang,
        rate_malformed=args.rate_malformed,
        rate_truncated=args.rate_truncated,
        rate_empty=args.rate_empty,
        rate_401=args.rate_401,
        rate_reset=args.rate_reset,
        rate_surrogate=args.rate_surrogate,
        retry_after=retry_after,
        retry_after_ms=args.retry_after_ms,
        echo_headers=args.echo_headers,
        hang_seconds=args.hang_seconds,
        seed=args.seed,
    )
    limit = (
        RateLimit(
            args.rate_limit,
            args.rate_limit_burst,
            headers=not args.no_rate_headers,
            retry_after_ms=not args.no_retry_after_ms,
        )
        if args.rate_limit > 0
        else None
    )
    server = FakeJudgeServer(
        simulated_responder if args.simulated else None,
        latency=args.latency,
        faults=faults,
        host=args.host,
        port=args.port,
        rate_limit=limit,
        reasoning=args.reasoning,
    )

    async def serve() -> None:
        await server.start_async()
        print(server.url, flush=True)
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError, RuntimeError):  # Windows
                loop.add_signal_handler(sig, stop.set)
        await stop.wait()
        await server.stop_async()

    with contextlib.suppress(KeyboardInterrupt):  # the signal handler normally catches it
        asyncio.run(serve())
    print(f"fake judge served {server.calls} calls", file=sys.stderr)
    return 0
