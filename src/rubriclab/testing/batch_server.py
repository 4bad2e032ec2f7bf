"""A fake OpenAI batch API (``/v1/files`` + ``/v1/batches``) that really listens on 127.0.0.1.

Batches move through validating -> in_progress -> finalizing -> completed on a clock that the
test owns (``clock=`` any callable returning seconds; ``ManualClock`` advances only when told),
so a test decides exactly when a batch is still running and when it is done, without sleeping.
Lines can fail (``fail=`` picks them by custom_id), a batch can expire before every line ran
(``expire_after=``), be cancelled, or fail validation (a bad input file). Output and error files
have the shapes OpenAI documents: one JSON object per line with ``custom_id`` and ``response``
(``status_code``, ``body``) or ``error`` (``code``, ``message``).

Stdlib only (``http.server`` in a thread): enough for httpx, and the requests it saw are kept
(``uploads``, ``batches``, ``polls``) so tests can check that a run paid once.
"""

from __future__ import annotations

import email.parser
import email.policy
import itertools
import json
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from .reasoning import REASONING_STYLES, reasoning_refusal
from .server import completion_body, default_responder

__all__ = ["BatchRecord", "FakeBatchServer", "FileRecord", "ManualClock"]

TERMINAL = frozenset({"completed", "expired", "cancelled", "failed"})


class ManualClock:
    """A clock that moves only when a test says so: ``clock.advance(60)``."""

    def __init__(self, start: float = 1_700_000_000.0) -> None:
        self._now = start
        self._lock = threading.Lock()

    def __call__(self) -> float:
        with self._lock:
            return self._now

    def advance(self, seconds: float) -> None:
        with self._lock:
            self._now += seconds


@dataclass
class FileRecord:
    id: str
    purpose: str
    filename: str
    content: bytes
    created_at: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "object": "file",
            "bytes": len(self.content),
            "created_at": self.created_at,
            "filename": self.filename,
            "purpose": self.purpose,
            "status": "processed",
        }


@dataclass
class BatchRecord:
    id: str
    input_file_id: str
    endpoint: str
    completion_window: str
    metadata: dict[str, Any]
    created: float
    lines: list[dict[str, Any]]
    errors: list[dict[str, Any]] = field(default_factory=list)
    cancelled: float | None = None
    output_file_id: str | None = None
    error_file_id: str | None = None
    final_status: str | None = None


class FakeBatchServer:
    """``with FakeBatchServer(clock=ManualClock(), run_seconds=60) as s: Judge(s.url, ...)``.

    ``run_seconds``: how long the in-progress phase takes (lines finish evenly over it);
    ``validate_seconds``/``finalize_seconds`` the phases around it. ``fail(custom_id)`` True
    makes that line fail with HTTP 500 in the error file. ``expire_after``: seconds after
    which an unfinished batch expires (its unrun lines go to the error file as
    ``batch_expired``). ``max_requests``/``max_bytes`` are the per-file limits it enforces.
    ``reasoning`` ("o1" or "o3-mini") fails each line whose body that OpenAI reasoning model
    would refuse, with its HTTP 400 in the error file. ``view_hook(batch)`` rewrites each
    batch object it sends; ``lines_hook(kind, lines)`` a finished job's "output" or "error"
    lines before they are stored.
    """

    def __init__(
        self,
        responder: Callable[[dict[str, Any]], Any] | None = None,
        *,
        clock: Callable[[], float] | None = None,
        validate_seconds: float = 0.0,
        run_seconds: float = 0.0,
        finalize_seconds: float = 0.0,
        expire_after: float | None = None,
        cancel_seconds: float = 0.0,
        fail: Callable[[str], bool] | None = None,
        api_key: str | None = None,
        max_requests: int = 50_000,
        max_bytes: int = 200 * 1024 * 1024,
        reasoning: str | None = None,
        view_hook: Callable[[dict[str, Any]], Any] | None = None,
        lines_hook: Callable[[str, list[dict[str, Any]]], list[dict[str, Any]]] | None = None,
    ) -> None:
        if reasoning is not None and reasoning not in REASONING_STYLES:
            raise ValueError(f"reasoning must be one of {REASONING_STYLES} or None")
        self.reasoning = reasoning
        #: rewrites each batch object before it is sent (a provider's malformed fields)
        self.view_hook = view_hook
        #: rewrites a finished job's "output" or "error" lines before they are stored (a
        #: repeated custom_id, an echoed header, a padded line...)
        self.lines_hook = lines_hook
        self.responder = responder or default_responder
        self.clock = clock or time.time
        self.validate_seconds = validate_seconds
        self.run_seconds = run_seconds
        self.finalize_seconds = finalize_seconds
        self.expire_after = expire_after
        self.cancel_seconds = cancel_seconds
        self.fail = fail
        self.api_key = api_key
        self.max_requests = max_requests
        self.max_bytes = max_bytes
        self.files: dict[str, FileRecord] = {}
        self.batches: dict[str, BatchRecord] = {}
        self.uploads = 0
        self.polls = 0
        self._ids = itertools.count(1)
        self._lock = threading.RLock()
        self._polled = threading.Condition(self._lock)
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifetime -------------------------------------------------------------------------
    @property
    def url(self) -> str:
        if self._httpd is None:
            raise RuntimeError("the fake batch server is not started")
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def start(self) -> FakeBatchServer:
        server = self

        class Handler(_Handler):
            owner = server

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, name="fake-batch-server", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> FakeBatchServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def wait_for_polls(self, count: int, timeout: float = 30.0) -> bool:
        """Block until the server has answered ``count`` batch status polls (or ``timeout``)."""
        with self._polled:
            return self._polled.wait_for(lambda: self.polls >= count, timeout)

    # -- files ----------------------------------------------------------------------------
    def _new_id(self, prefix: str) -> str:
        return f"{prefix}-fake{next(self._ids):05d}"

    def upload(self, purpose: str, filename: str, content: bytes) -> tuple[int, Any]:
        if purpose != "batch":
            return 400, _error(f"purpose must be 'batch' for batch input, got {purpose!r}")
        if len(content) > self.max_bytes:
            return 400, _error(f"file is {len(content)} bytes; the limit is {self.max_bytes}")
        with self._lock:
            self.uploads += 1
            record = FileRecord(self._new_id("file"), purpose, filename, content, int(self.clock()))
            self.files[record.id] = record
        return 200, record.to_dict()

    def _store(self, filename: str, lines: list[dict[str, Any]]) -> str:
        content = "".join(json.dumps(line) + "\n" for line in lines).encode()
        record = FileRecord(
            self._new_id("file"), "batch_output", filename, content, int(self.clock())
        )
        self.files[record.id] = record
        return record.id

    # -- batches --------------------------------------------------------------------------
    def create(self, body: Mapping[str, Any]) -> tuple[int, Any]:
        file_id = body.get("input_file_id")
        endpoint = body.get("endpoint")
        window = body.get("completion_window")
        if endpoint != "/v1/chat/completions":
            return 400, _error(f"unsupported endpoint {endpoint!r}")
        if window != "24h":
            return 400, _error(f"completion_window must be '24h', got {window!r}")
        with self._lock:
            source = self.files.get(str(file_id))
            if source is None:
                return 404, _error(f"no file {file_id!r}")
            lines, errors = self._parse_input(source.content, str(endpoint))
            batch = BatchRecord(
                self._new_id("batch"),
                source.id,
                str(endpoint),
                str(window),
                dict(body.get("metadata") or {}),
                self.clock(),
                lines,
                errors,
            )
            self.batches[batch.id] = batch
            return 200, self._view(batch)

    def _parse_input(
        self, content: bytes, endpoint: str
    ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        lines: list[dict[str, Any]] = []
        errors: list[dict[str, Any]] = []
        seen: set[str] = set()
        for n, raw in enumerate(content.decode("utf-8", "replace").splitlines(), start=1):
            if not raw.strip():
                continue
            try:
                line = json.loads(raw)
            except ValueError:
                errors.append({"code": "invalid_json_line", "line": n, "message": "not JSON"})
                continue
            cid = line.get("custom_id") if isinstance(line, dict) else None
            if not isinstance(cid, str) or not cid:
                errors.append({"code": "missing_custom_id", "line": n, "message": "no custom_id"})
            elif cid in seen:
                errors.append(
                    {"code": "duplicate_custom_id", "line": n, "message": f"{cid} repeats"}
                )
            elif line.get("url") != endpoint or line.get("method") != "POST":
                errors.append(
                    {"code": "mismatched_url", "line": n, "message": f"use POST {endpoint}"}
                )
            else:
                seen.add(cid)
                lines.append(line)
        if len(lines) + len(errors) > self.max_requests:
            errors.append(
                {
                    "code": "too_many_requests",
                    "line": None,
                    "message": f"a batch file holds at most {self.max_requests} requests",
                }
            )
        return lines, errors

    def cancel(self, batch_id: str) -> tuple[int, Any]:
        with self._lock:
            batch = self.batches.get(batch_id)
            if batch is None:
                return 404, _error(f"no batch {batch_id!r}")
            if self._status(batch)[0] in TERMINAL:
                return 409, _error(f"batch {batch_id} is already {self._status(batch)[0]}")
            batch.cancelled = self.clock()
            return 200, self._view(batch)

    def retrieve(self, batch_id: str) -> tuple[int, Any]:
        with self._lock:
            batch = self.batches.get(batch_id)
            if batch is None:
                return 404, _error(f"no batch {batch_id!r}")
            view = self._view(batch)
            if self.view_hook is not None:
                view = self.view_hook(view)
            self.polls += 1
            self._polled.notify_all()
            return 200, view

    def _done_count(self, batch: BatchRecord, at: float) -> int:
        elapsed = at - batch.created - self.validate_seconds
        total = len(batch.lines)
        if elapsed < 0:
            return 0
        if self.run_seconds <= 0:
            return total
        return min(total, int(total * elapsed / self.run_seconds))

    def _status(self, batch: BatchRecord) -> tuple[str, int]:
        """(status, lines finished) at the clock's current time."""
        if batch.final_status is not None:
            return batch.final_status, len(batch.lines)
        now = self.clock()
        age = now - batch.created
        if batch.errors:
            return ("validating", 0) if age < self.validate_seconds else ("failed", 0)
        if batch.cancelled is not None:
            done = self._done_count(batch, batch.cancelled)
            gone = now - batch.cancelled >= self.cancel_seconds
            return ("cancelled" if gone else "cancelling"), done
        if self.expire_after is not None and age >= self.expire_after:
            done = self._done_count(batch, batch.created + self.expire_after)
            if done < len(batch.lines):
                return "expired", done
        done = self._done_count(batch, now)
        if age < self.validate_seconds:
            return "validating", 0
        if done < len(batch.lines):
            return "in_progress", done
        end = self.validate_seconds + self.run_seconds + self.finalize_seconds
        return ("finalizing" if age < end else "completed"), done

    def _failing(self, custom_id: str) -> bool:
        return self.fail is not None and self.fail(custom_id)

    def _refusal(self, line: Mapping[str, Any]) -> dict[str, Any] | None:
        """The 400 body a reasoning model (``reasoning``) sends for this line, else None."""
        if self.reasoning is None:
            return None
        return reasoning_refusal(line.get("body") or {}, self.reasoning)

    def _fails(self, line: Mapping[str, Any]) -> bool:
        return self._failing(line["custom_id"]) or self._refusal(line) is not None

    def _view(self, batch: BatchRecord) -> dict[str, Any]:
        status, done = self._status(batch)
        if status in TERMINAL and batch.final_status is None:
            self._finish(batch, status, done)
        ran = batch.lines[:done]
        failed = sum(self._fails(line) for line in ran)
        if status == "expired":
            failed += len(batch.lines) - done
        view: dict[str, Any] = {
            "id": batch.id,
            "object": "batch",
            "endpoint": batch.endpoint,
            "errors": {"object": "list", "data": batch.errors} if batch.errors else None,
            "input_file_id": batch.input_file_id,
            "completion_window": batch.completion_window,
            "status": status,
            "output_file_id": batch.output_file_id,
            "error_file_id": batch.error_file_id,
            "created_at": int(batch.created),
            "expires_at": int(batch.created + (self.expire_after or 86400)),
            "cancelled_at": int(batch.cancelled)
            if status == "cancelled" and batch.cancelled
            else None,
            "request_counts": {
                "total": len(batch.lines),
                "completed": done - sum(self._fails(line) for line in ran),
                "failed": failed,
            },
            "metadata": batch.metadata,
        }
        return view

    def _finish(self, batch: BatchRecord, status: str, done: int) -> None:
        batch.final_status = status
        if status == "failed":
            return
        outputs: list[dict[str, Any]] = []
        errors: list[dict[str, Any]] = []
        for i, line in enumerate(batch.lines):
            cid = line["custom_id"]
            rid = f"batch_req_{batch.id}_{i}"
            if i >= done:
                if status == "expired":
                    errors.append(
                        {
                            "id": rid,
                            "custom_id": cid,
                            "response": None,
                            "error": {
                                "code": "batch_expired",
                                "message": "This request could not be executed before the "
                                "completion window expired.",
                            },
                        }
                    )
                continue  # cancelled before it ran: in neither file
            refusal = self._refusal(line)
            if refusal is not None:
                errors.append(
                    {
                        "id": rid,
                        "custom_id": cid,
                        "response": {"status_code": 400, "request_id": rid, "body": refusal},
                        "error": None,
                    }
                )
                continue
            if self._failing(cid):
                errors.append(
                    {
                        "id": rid,
                        "custom_id": cid,
                        "response": {
                            "status_code": 500,
                            "request_id": rid,
                            "body": _error("The server had an error processing this request"),
                        },
                        "error": None,
                    }
                )
                continue
            outputs.append(
                {
                    "id": rid,
                    "custom_id": cid,
                    "response": {
                        "status_code": 200,
                        "request_id": rid,
                        "body": self._completion(line.get("body") or {}, i),
                    },
                    "error": None,
                }
            )
        if self.lines_hook is not None:
            outputs = self.lines_hook("output", outputs)
            errors = self.lines_hook("error", errors)
        if outputs:
            batch.output_file_id = self._store(f"{batch.id}_output.jsonl", outputs)
        if errors:
            batch.error_file_id = self._store(f"{batch.id}_error.jsonl", errors)

    def _completion(self, body: dict[str, Any], index: int) -> dict[str, Any]:
        answer = self.responder(body)
        text = answer if isinstance(answer, str) else json.dumps(answer)
        return completion_body(body, text, index, created=self.clock(), kind="fakebatch")

    def list_batches(self) -> tuple[int, Any]:
        with self._lock:
            data = [self._view(b) for b in reversed(list(self.batches.values()))]
        return 200, {"object": "list", "data": data, "has_more": False}


def _error(message: str) -> dict[str, Any]:
    return {"error": {"message": message, "type": "invalid_request_error"}}


class _Handler(BaseHTTPRequestHandler):
    owner: FakeBatchServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        return

    def _authorized(self) -> bool:
        key = self.owner.api_key
        if key is None or self.headers.get("authorization") == f"Bearer {key}":
            return True
        self._send(401, _error("invalid API key"))
        return False

    def _body(self) -> bytes:
        length = int(self.headers.get("content-length") or 0)
        return self.rfile.read(length) if length else b""

    def _send(self, status: int, payload: Any, raw: bytes | None = None) -> None:
        data = raw if raw is not None else json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json" if raw is None else "application/jsonl")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        if not self._authorized():
            return
        parts = self.path.split("?", 1)[0].strip("/").split("/")
        owner = self.owner
        if parts[:2] == ["v1", "batches"] and len(parts) == 2:
            self._send(*owner.list_batches())
        elif parts[:2] == ["v1", "batches"] and len(parts) == 3:
            self._send(*owner.retrieve(parts[2]))
        elif parts[:2] == ["v1", "files"] and len(parts) in (3, 4):
            record = owner.files.get(parts[2])
            if record is None:
                self._send(404, _error(f"no file {parts[2]!r}"))
            elif len(parts) == 4 and parts[3] == "content":
                self._send(200, None, record.content)
            else:
                self._send(200, record.to_dict())
        else:
            self._send(404, _error(f"no route GET {self.path}"))

    def do_POST(self) -> None:
        body = self._body()
        if not self._authorized():
            return
        parts = self.path.split("?", 1)[0].strip("/").split("/")
        owner = self.owner
        if parts == ["v1", "files"]:
            fields = _multipart(self.headers.get("content-type", ""), body)
            if "file" not in fields:
                self._send(400, _error("multipart field 'file' is required"))
                return
            purpose = fields.get("purpose", (None, b""))[1].decode()
            filename, content = fields["file"]
            self._send(*owner.upload(purpose, filename or "upload.jsonl", content))
        elif parts == ["v1", "batches"]:
            try:
                payload = json.loads(body or b"{}")
            except ValueError:
                self._send(400, _error("body is not JSON"))
                return
            self._send(*owner.create(payload))
        elif parts[:2] == ["v1", "batches"] and len(parts) == 4 and parts[3] == "cancel":
            self._send(*owner.cancel(parts[2]))
        else:
            self._send(404, _error(f"no route POST {self.path}"))


def _multipart(content_type: str, body: bytes) -> dict[str, tuple[str | None, bytes]]:
    """Fields of a multipart/form-data body: name -> (filename, bytes)."""
    message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
        f"content-type: {content_type}\r\n\r\n".encode() + body
    )
    fields: dict[str, tuple[str | None, bytes]] = {}
    if not message.is_multipart():
        return fields
    for part in message.iter_parts():
        name = part.get_param("name", header="content-disposition")
        if isinstance(name, str):
            payload = part.get_payload(decode=True)
            fields[name] = (part.get_filename(), payload if isinstance(payload, bytes) else b"")
    return fields
