"""A fake OpenAI-compatible judge that really listens on 127.0.0.1, with faults on demand.

Tests and benchmarks talk to it over real HTTP instead of patching the client, so everything
between ``Judge`` and the socket (pooling, timeouts, retries, parsing) is what gets tested.
It is a small asyncio HTTP/1.1 server (keep-alive, Content-Length bodies): enough for httpx
and aiohttp clients, cheap enough to keep up with thousands of calls a second, and stdlib only.

Answers come from ``responder(body)``; by default the mock judge's schema-driven answers.
Faults are drawn per request with a seeded RNG: 429 with Retry-After, 500, 503, a hang past
the client's timeout, a malformed JSON body, a truncated body, empty choices.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import random
import signal
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..judges.mock import mock_answer, mock_usage

__all__ = [
    "FAULT_KINDS",
    "FakeJudgeServer",
    "Faults",
    "RequestRecord",
    "Responder",
    "ServerReply",
    "main",
]

FAULT_KINDS = ("429", "500", "503", "hang", "malformed", "truncated", "empty")
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
    retry_after: float | str | None = 1
    """Retry-After sent with 429 and 503 (seconds, an HTTP date string, or None for none)."""
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
        ]

    def pick(self, rng: random.Random) -> str | None:
        roll = rng.random()
        edge = 0.0
        for kind, rate in self._rates():
            edge += rate
            if roll < edge:
                return kind
        return None


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


def _completion(body: dict[str, Any], text: str, index: int) -> dict[str, Any]:
    messages = body.get("messages")
    usage = mock_usage(messages if isinstance(messages, list) else [], text)
    return {
        "id": f"chatcmpl-fake-{index}",
        "object": "chat.completion",
        "created": int(time.time()),
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


def _error_body(status: int, message: str) -> dict[str, Any]:
    return {"error": {"message": message, "type": "fake_error", "code": status}}


class _Connection(asyncio.Protocol):
    """One client connection: parse a request, let the server answer it, then the next."""

    def __init__(self, server: FakeJudgeServer) -> None:
        self.server = server
        self.buffer = bytearray()
        self.transport: asyncio.Transport | None = None
        self.task: asyncio.Task[None] | None = None
        self.busy = False

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
        self.task = asyncio.get_running_loop().create_task(
            self.server._handle(self, method, target, body, keep_alive, headers)
        )

    def send(
        self,
        status: int,
        headers: Mapping[str, str],
        body: bytes,
        keep_alive: bool,
        truncate: bool = False,
    ) -> None:
        transport = self.transport
        if transport is None or transport.is_closing():
            return
        lines = [f"HTTP/1.1 {status} {_REASONS.get(status, 'Status')}"]
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


class FakeJudgeServer:
    """``with FakeJudgeServer(responder, latency=0.05, faults=Faults(rate_429=0.2)) as s:``

    ``s.url`` is a base URL (ending in /v1) to give ``Judge``. ``responder``, ``latency`` and
    ``faults`` may be changed while it runs. ``requests`` holds every chat-completions body in
    arrival order, ``log`` the matching ``RequestRecord`` (fault, status, timing),
    ``peak_in_flight`` the most requests it was answering at once.
    """

    def __init__(
        self,
        responder: Responder | None = None,
        latency: float = 0.0,
        faults: Faults | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None:
        self.responder: Responder = responder or default_responder
        self.latency = latency
        self.faults = faults
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
        """Forget recorded requests and peaks (the responder, latency and faults stay)."""
        self.requests.clear()
        self.log.clear()
        self.peak_in_flight = self.in_flight
        self._rng = random.Random(self.faults.seed if self.faults else 0)

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
    ) -> None:
        path = target.split("?", 1)[0].rstrip("/")
        if method == "POST" and path.endswith("/chat/completions"):
            await self._chat(conn, raw, keep_alive, headers)
        elif method == "GET" and path.endswith("/models"):
            listing = {"object": "list", "data": [{"id": "fake-judge", "object": "model"}]}
            conn.send(200, {}, json.dumps(listing).encode(), keep_alive)
        elif method == "GET" and path == "/_stats":
            stats = {
                "calls": self.calls,
                "peak_in_flight": self.peak_in_flight,
                "in_flight": self.in_flight,
            }
            conn.send(200, {}, json.dumps(stats).encode(), keep_alive)
        elif method == "POST" and path == "/_reset":
            self.reset()
            conn.send(200, {}, b"{}", keep_alive)
        else:
            body = _error_body(404, f"no route {method} {path}")
            conn.send(404, {}, json.dumps(body).encode(), keep_alive)

    async def _chat(
        self, conn: _Connection, raw: bytes, keep_alive: bool, headers: dict[str, str]
    ) -> None:
        try:
            body = json.loads(raw)
            if not isinstance(body, dict):
                raise ValueError("body is not a JSON object")
        except ValueError as exc:
            error = _error_body(400, f"request body is not JSON: {exc}")
            conn.send(400, {}, json.dumps(error).encode(), keep_alive)
            return
        with self._count_lock:
            record = RequestRecord(len(self.log), body, time.perf_counter(), headers)
            self.log.append(record)
            self.requests.append(body)
        self.in_flight += 1
        if self.in_flight > self.peak_in_flight:
            self.peak_in_flight = self.in_flight
        try:
            await self._answer(conn, body, record, keep_alive)
        finally:
            self.in_flight -= 1
            record.finished = time.perf_counter()

    async def _answer(
        self, conn: _Connection, body: dict[str, Any], record: RequestRecord, keep_alive: bool
    ) -> None:
        faults = self.faults
        fault = faults.pick(self._rng) if faults is not None else None
        record.fault = fault
        if fault == "429":  # rate limits answer at once, as real ones do
            assert faults is not None
            record.status = 429
            conn.send(
                429, _retry_after(faults), _json(_error_body(429, "rate limited")), keep_alive
            )
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
            conn.send(status, extra, _json(_error_body(status, "fake server error")), keep_alive)
            return
        if fault == "malformed":
            record.status = 200
            conn.send(200, {}, b'{"id": "chatcmpl-fake", "choices": [{"message": {"con', keep_alive)
            return
        if fault == "empty":
            record.status = 200
            empty = _completion(body, "", record.index)
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
            conn.send(answer.status, dict(answer.headers), data, keep_alive)
            return
        full = answer if isinstance(answer, dict) else _completion(body, str(answer), record.index)
        if fault == "truncated":
            record.status = 200
            conn.send(200, {}, _json(full), keep_alive, truncate=True)
            return
        record.status = 200
        conn.send(200, {}, _json(full), keep_alive)


def _json(value: Any) -> bytes:
    return json.dumps(value).encode()


def _retry_after(faults: Faults) -> dict[str, str]:
    if faults.retry_after is None:
        return {}
    value = faults.retry_after
    return {"retry-after": f"{value:g}" if isinstance(value, (int, float)) else str(value)}


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
    for kind in ("429", "500", "503", "hang", "malformed", "truncated", "empty"):
        p.add_argument(f"--rate-{kind}", type=float, default=0.0, help=f"share of {kind} faults")
    p.add_argument("--retry-after", default="1", help="Retry-After value for 429/503")
    p.add_argument("--hang-seconds", type=float, default=300.0)
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
        retry_after=retry_after,
        hang_seconds=args.hang_seconds,
        seed=args.seed,
    )
    server = FakeJudgeServer(latency=args.latency, faults=faults, host=args.host, port=args.port)

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
