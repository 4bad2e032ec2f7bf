"""Provider batch APIs: a run sent as ``/v1/batches`` jobs at half price and without rate limits.

``Judge("openai:gpt-4o-mini", batch=True)`` routes ``map``/``amap`` here (one call still goes
interactively). The requests not already in the cache are written as JSONL lines (the line's
``custom_id`` is the request's cache key, so answers map back by key, never by position), split
into files of at most 50,000 requests and 200 MB, uploaded with ``purpose=batch`` and started.
Each job's id is written to the cache DB *before* it is polled: a restarted kernel or CLI run
finds it there and re-attaches to the job in flight instead of paying for it again. Polls back
off up to a minute; the progress bar follows the job's ``request_counts``. When a job ends its
output and error files are read: answers go to the cache, failed lines and lines an expired or
cancelled job never ran become replies carrying their error, and a failed job's validation
errors land on every one of its rows. Lines refused for a field the judge can send otherwise
(an OpenAI reasoning model behind an unknown name refuses ``max_tokens``) adapt the judge, as
an interactive 400 does, and go out again once in a new job.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import random
import time
from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Protocol, cast

import httpx

from .base import CallError, ErrorType, Reply, Request
from .cache import CacheEntry
from .clean import clean_text
from .pricing import batch_cost_of
from .secret import Secret

if TYPE_CHECKING:
    from .engine import Engine
    from .openai import OpenAIBackend

__all__ = ["BatchError", "BatchOptions", "BatchRunner", "split_lines"]

MAX_REQUESTS = 50_000
MAX_BYTES = 200 * 1024 * 1024
MAX_LINE = 64 * 1024 * 1024
"""An output line longer than this is not an answer we can use: skipped, never held."""
TERMINAL = frozenset({"completed", "failed", "expired", "cancelled"})
_ENDPOINT = "/v1/chat/completions"


class _Ledger(Protocol):
    """The cache's batch-job records (``Cache`` and ``MemoryCache`` both keep them)."""

    def get_many(self, keys: Iterable[str]) -> dict[str, CacheEntry]: ...

    def put(self, key: str, entry: CacheEntry) -> None: ...

    def get_batch(self, key: str) -> dict[str, Any] | None: ...

    def put_batch(self, key: str, record: Mapping[str, Any]) -> None: ...


class BatchError(RuntimeError):
    """A batch job could not be started or read at all (not one row's failure)."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class BatchOptions:
    """How batch jobs are sent and watched. ``poll_interval`` is the first wait between
    status checks; it grows by half each time up to ``poll_max``."""

    poll_interval: float = 5.0
    poll_max: float = 60.0
    completion_window: str = "24h"
    max_requests: int = MAX_REQUESTS
    max_bytes: int = MAX_BYTES


def split_lines(lines: Sequence[bytes], max_requests: int, max_bytes: int) -> list[list[bytes]]:
    """Group JSONL lines into files under both limits, keeping their order."""
    files: list[list[bytes]] = []
    current: list[bytes] = []
    size = 0
    for line in lines:
        if len(line) > max_bytes:
            raise BatchError(f"one request is {len(line)} bytes, over the {max_bytes}-byte limit")
        if current and (len(current) >= max_requests or size + len(line) > max_bytes):
            files.append(current)
            current, size = [], 0
        current.append(line)
        size += len(line)
    if current:
        files.append(current)
    return files


@dataclass
class _Job:
    key: str
    custom_ids: list[str]
    batch_id: str
    status: str = "validating"
    done: int = 0


class BatchRunner:
    """Answers a list of requests through batch jobs; the engine's cache holds their ids."""

    def __init__(self, engine: Engine, backend: OpenAIBackend, options: BatchOptions) -> None:
        self.engine = engine
        self.backend = backend
        self.options = options
        self.base_url = str(backend.endpoint.base_url)

    @property
    def cache(self) -> _Ledger:
        cache = self.engine.cache
        if cache is None or not hasattr(cache, "put_batch"):
            raise BatchError("batch=True needs a cache that can record batch ids")
        return cast(_Ledger, cache)

    # -- the run --------------------------------------------------------------------------
    async def run(
        self, requests: Sequence[Request], *, progress: bool = True, desc: str = "batch"
    ) -> list[Reply]:
        """Replies in input order; failed lines come back as replies with errors."""
        from .engine import UNWRITABLE, summarize, unwritable

        started = time.perf_counter()
        engine = self.engine
        run_keys = engine.run_keys()  # (what the requests share, written once)
        keys: list[str] = []
        answers: dict[str, Reply] = {}
        for i, request in enumerate(requests):
            try:
                keys.append(run_keys(request)[0])
            except UNWRITABLE as exc:  # its row's error, not the run's
                keys.append(f"unwritable:{i}")
                answers[keys[-1]] = unwritable(engine.model, f"{type(exc).__name__}: {exc}")
        cache = self.cache
        for key, entry in cache.get_many(set(keys)).items():
            answers[key] = self._reply(entry, cached=True)
        todo: dict[str, Request] = {}
        for key, request in zip(keys, requests, strict=True):
            if key not in answers and key not in todo:
                todo[key] = request
        if todo:
            answers.update(await self._send_adapting(todo, progress, desc))
        replies = [answers[k] for k in keys]
        seen: set[str] = set()
        for i, key in enumerate(keys):  # the same request twice is asked once
            if key in seen and replies[i].ok:
                replies[i] = replace(replies[i], cached=True)
            seen.add(key)
        engine.last_run = summarize(replies, time.perf_counter() - started)
        return replies

    async def _send_adapting(
        self, todo: Mapping[str, Request], progress: bool, desc: str
    ) -> dict[str, Reply]:
        """``_send``; then the lines refused for a field this judge now sends otherwise go
        out again. Each round needs the judge to have adapted, so there are at most as many
        rounds as fields it can adapt."""
        answers: dict[str, Reply] = {}
        while todo:
            spelled = self.backend.dialect
            got = await self._send(todo, progress, desc)
            answers.update(got)
            refused = {cid: f for cid, r in got.items() if (f := _refused(r)) is not None}
            fields = {f for f in refused.values() if spelled.adapted(f) != spelled}
            for name in sorted(fields):
                self.engine.adapt(name)
            todo = {cid: todo[cid] for cid, f in refused.items() if f in fields}
        return answers

    async def _send(
        self, todo: Mapping[str, Request], progress: bool, desc: str
    ) -> dict[str, Reply]:
        level = self.engine.format_level
        lines = [
            json.dumps(
                {
                    "custom_id": key,
                    "method": "POST",
                    "url": _ENDPOINT,
                    "body": _body(self.backend, request, level),
                },
                separators=(",", ":"),
            ).encode()
            + b"\n"
            for key, request in todo.items()
        ]
        files = split_lines(lines, self.options.max_requests, self.options.max_bytes)
        answers: dict[str, Reply] = {}
        bar = _progress_bar(len(todo), desc) if progress else None
        async with self._client() as client:
            jobs: list[_Job] = []
            start = 0
            for content in files:
                ids = list(todo)[start : start + len(content)]
                start += len(content)
                jobs.append(await self._attach_or_start(client, ids, b"".join(content)))
            try:
                results = await asyncio.gather(
                    *(self._watch(client, job, jobs, bar) for job in jobs)
                )
            finally:
                if bar is not None:
                    bar.close()
        for found in results:
            answers.update(found)
        return answers

    # -- one job --------------------------------------------------------------------------
    async def _attach_or_start(
        self, client: httpx.AsyncClient, ids: list[str], data: bytes
    ) -> _Job:
        job_key = hashlib.sha256(
            "\n".join([self.base_url, self.engine.model, *ids]).encode()
        ).hexdigest()
        cache = self.cache
        record = cache.get_batch(job_key)
        if record is not None and record.get("status") not in TERMINAL:
            batch_id = str(record["batch_id"])
            try:  # the provider still knows the job: follow it instead of paying again
                await self._call(client, "GET", f"/batches/{batch_id}")
            except BatchError as exc:
                if exc.status != 404:
                    raise
            else:
                return _Job(job_key, ids, batch_id, str(record.get("status", "")))
            # 404: the job is gone (deleted, another account); start a new one
        uploaded = await self._call(
            client,
            "POST",
            "/files",
            data={"purpose": "batch"},
            files={"file": ("rubriclab-batch.jsonl", data, "application/jsonl")},
        )
        created = await self._call(
            client,
            "POST",
            "/batches",
            json={
                "input_file_id": uploaded["id"],
                "endpoint": _ENDPOINT,
                "completion_window": self.options.completion_window,
                "metadata": {"rubriclab_job": job_key[:64]},
            },
        )
        batch_id = str(created["id"])
        cache.put_batch(
            job_key,
            {
                "batch_id": batch_id,
                "input_file_id": uploaded["id"],
                "base_url": self.base_url,
                "model": self.engine.model,
                "requests": len(ids),
                "status": str(created.get("status", "validating")),
                "created": time.time(),
            },
        )
        return _Job(job_key, ids, batch_id)

    async def _watch(
        self, client: httpx.AsyncClient, job: _Job, jobs: list[_Job], bar: Any
    ) -> dict[str, Reply]:
        wait = self.options.poll_interval
        rng = random.Random()
        while True:
            try:
                batch = await self._call(client, "GET", f"/batches/{job.batch_id}")
            except BatchError as exc:
                raise BatchError(
                    f"{exc} (batch {job.batch_id} stays recorded in the cache: run the same "
                    "call again to re-attach to it without paying twice)",
                    exc.status,
                ) from None
            if not isinstance(batch, Mapping):
                return self._job_failed(job, "its status is not a JSON object")
            job.status = str(batch.get("status"))
            done = _done(batch.get("request_counts"))
            if done is None:
                return self._job_failed(
                    job, f"its request_counts are not counts: {_brief(batch.get('request_counts'))}"
                )
            job.done = done
            if bar is not None:
                bar.n = sum(j.done for j in jobs)
                bar.set_postfix_str(", ".join(sorted({j.status for j in jobs})), refresh=True)
            if job.status in TERMINAL:
                break
            await asyncio.sleep(wait * (0.9 + 0.2 * rng.random()))
            wait = min(wait * 1.5, self.options.poll_max)
        answers = await self._collect(client, job, batch)
        record = self.cache.get_batch(job.key) or {}
        record.update(status=job.status, finished=time.time())
        self.cache.put_batch(job.key, record)
        return answers

    def _job_failed(self, job: _Job, why: str) -> dict[str, Reply]:
        """Every row of ``job`` carries ``why`` (the provider's malformed answer about it);
        the job stays recorded as it was, so a later run re-attaches to it."""
        message = self.backend.scrub(f"batch {job.batch_id}: {why}")
        return {cid: self._failed(CallError("batch_failed", message)) for cid in job.custom_ids}

    async def _collect(
        self, client: httpx.AsyncClient, job: _Job, batch: Mapping[str, Any]
    ) -> dict[str, Reply]:
        answers: dict[str, Reply] = {}
        status = job.status
        if status == "failed":
            reasons = "; ".join(_reasons(batch.get("errors")))
            error = CallError(
                "batch_failed",
                self.backend.scrub(f"batch {job.batch_id} failed: {reasons or 'no reason given'}"),
            )
            return {cid: self._failed(error) for cid in job.custom_ids}
        wanted = set(job.custom_ids)
        seen: dict[str, int] = {}
        for file_key in ("output_file_id", "error_file_id"):
            file_id = batch.get(file_key)
            if not file_id:
                continue
            if not isinstance(file_id, str) or "/" in file_id or "?" in file_id:
                return self._job_failed(job, f"its {file_key} is not a file id: {_brief(file_id)}")
            # line by line: an output file may be far larger than this process's memory
            async for raw in self._lines(client, f"/files/{file_id}/content"):
                if not raw.strip():
                    continue
                cid, reply = self._line(raw)
                if cid is None or cid not in wanted:
                    continue  # (not this job's: never kept, so a hostile file cannot grow us)
                seen[cid] = seen.get(cid, 0) + 1
                answers[cid] = reply
        for cid, times in seen.items():
            if times > 1:  # which answer is meant? none is kept, nor cached
                answers[cid] = self._failed(
                    CallError(
                        "malformed_response",
                        f"batch {job.batch_id} answered this request {times} times (its "
                        "output and error files repeat its custom_id): ambiguous, so no "
                        "answer is used",
                    )
                )
        kind: ErrorType = "batch_cancelled" if status == "cancelled" else "batch_expired"
        never = (
            f"batch {job.batch_id} was cancelled before this request ran"
            if status == "cancelled"
            else f"batch {job.batch_id} ended ({status}) before this request ran"
        )
        cache = self.cache
        for cid in job.custom_ids:
            got = answers.get(cid)
            if got is None:
                answers[cid] = self._failed(CallError(kind, never))
            elif got.ok:
                assert got.text is not None
                cache.put(cid, CacheEntry(got.text, got.usage, got.model, got.finish_reason))
        return {cid: answers[cid] for cid in job.custom_ids}

    def _line(self, raw: bytes) -> tuple[str | None, Reply]:
        """One output or error file line -> (custom_id, reply).

        The boundary where a batch answer enters: the line is scrubbed whole (the key and
        credential headers, in every encoding) before anything is read from it, so every
        field kept (error message, raw line, answer, model, finish reason) is clean."""
        from .openai import read_chat

        text = self.backend.scrub(raw.decode("utf-8", "replace"))
        try:
            line = json.loads(text)
        except ValueError:
            return None, self._failed(CallError("malformed_response", "unreadable batch line"))
        if not isinstance(line, Mapping):
            return None, self._failed(CallError("malformed_response", "unreadable batch line"))
        cid = line.get("custom_id")
        cid = cid if isinstance(cid, str) else None
        error = line.get("error")
        response = line.get("response")
        if isinstance(error, Mapping):
            code = str(error.get("code") or "")
            kind: ErrorType = "batch_expired" if code == "batch_expired" else "http_error"
            message = clean_text(str(error.get("message") or code or "batch line failed"))
            return cid, self._failed(CallError(kind, message, raw=_trim(text)))
        if not isinstance(response, Mapping):
            return cid, self._failed(
                CallError("malformed_response", "batch line has no response", raw=_trim(text))
            )
        status = response.get("status_code")
        body = response.get("body")
        if status != 200:
            detail = body.get("error") if isinstance(body, Mapping) else None
            said = detail.get("message") if isinstance(detail, Mapping) else None
            http = status if isinstance(status, int) else None
            return cid, self._failed(
                CallError(
                    _status_kind(http),
                    clean_text(str(said or f"HTTP {status}")),
                    http,
                    raw=_trim(text),
                )
            )
        outcome = read_chat(self.backend, json.dumps(body).encode())  # (scrubbed above)
        from .backend import Success

        if isinstance(outcome, Success):
            cost = batch_cost_of(
                outcome.usage, outcome.model, self.engine.prices, local=self.engine.local
            )
            return cid, Reply(
                outcome.text,
                outcome.usage,
                attempts=1,
                model=outcome.model,
                cost=cost,
                finish_reason=outcome.finish_reason,
            )
        return cid, self._failed(
            CallError(outcome.type, outcome.message, outcome.status, raw=outcome.raw)
        )

    # -- replies --------------------------------------------------------------------------
    def _reply(self, entry: CacheEntry, cached: bool) -> Reply:
        engine = self.engine
        return Reply(
            entry.text,
            entry.usage,
            cached=cached,
            model=entry.model,
            cost=batch_cost_of(entry.usage, entry.model, engine.prices, local=engine.local),
            finish_reason=entry.finish_reason,
        )

    def _failed(self, error: CallError) -> Reply:
        return Reply(None, attempts=1, error=error, model=self.engine.model)

    # -- HTTP -----------------------------------------------------------------------------
    def _client(self) -> httpx.AsyncClient:
        headers = {"user-agent": "rubriclab"}
        for name, value in self.backend.extra_headers.items():
            revealed = value.reveal() if isinstance(value, Secret) else value
            if revealed:
                headers[name] = revealed
        key = self.backend.key.reveal()
        if key:
            headers["authorization"] = f"Bearer {key}"
        return httpx.AsyncClient(
            base_url=self.base_url, headers=headers, timeout=httpx.Timeout(self.backend.timeout)
        )

    async def _lines(self, client: httpx.AsyncClient, path: str) -> AsyncIterator[bytes]:
        """The lines of a file's content, as they arrive (never the whole file at once). A
        line longer than ``MAX_LINE`` bytes is dropped (its request then reads as never
        run); the opening is retried as ``_call`` is, a broken stream raises."""
        retry = self.engine.retry
        rng = random.Random()
        where = f"GET {self.base_url}{path}"
        for attempt in range(retry.max_retries + 1):
            try:
                async with client.stream("GET", path) as response:
                    status = response.status_code
                    if status == 200:
                        async for line in _split(response.aiter_bytes(), MAX_LINE):
                            yield line
                        return
                    if status in (429, 500, 502, 503, 504) and attempt < retry.max_retries:
                        pass  # retried below, once the response is closed
                    else:
                        body = await response.aread()
                        detail = self.backend.scrub(body[:300].decode("utf-8", "replace"))
                        raise BatchError(f"{where}: HTTP {status}: {detail}", status)
            except httpx.TransportError as exc:
                if attempt >= retry.max_retries:
                    raise BatchError(self.backend.scrub(f"{where} failed: {exc}")) from None
            await asyncio.sleep(retry.delay(attempt, None, rng))
        raise BatchError(f"{where}: no answer")  # pragma: no cover

    async def _call(
        self, client: httpx.AsyncClient, method: str, path: str, *, raw: bool = False, **kw: Any
    ) -> Any:
        """One batch API call, retried on 429/5xx/transport errors; any other failure raises."""
        retry = self.engine.retry
        rng = random.Random()
        for attempt in range(retry.max_retries + 1):
            try:
                response = await client.request(method, path, **kw)
            except httpx.TransportError as exc:
                if attempt >= retry.max_retries:
                    raise BatchError(
                        self.backend.scrub(f"{method} {self.base_url}{path} failed: {exc}")
                    ) from None
                await asyncio.sleep(retry.delay(attempt, None, rng))
                continue
            if response.status_code == 200:
                return response.content if raw else response.json()
            if response.status_code in (429, 500, 502, 503, 504) and attempt < retry.max_retries:
                await asyncio.sleep(retry.delay(attempt, None, rng))
                continue
            detail = self.backend.scrub(response.text[:300])
            raise BatchError(
                f"{method} {self.base_url}{path}: HTTP {response.status_code}: {detail}",
                response.status_code,
            )
        raise BatchError(f"{method} {self.base_url}{path}: no answer")  # pragma: no cover


def _body(backend: OpenAIBackend, request: Request, level: int) -> dict[str, Any]:
    from .openai import chat_body

    return chat_body(backend, request, level)


def _refused(reply: Reply) -> str | None:
    """The field a failed line's 400 says the model does not take (see ``refused_field``)."""
    from .openai import refused_field

    error = reply.error
    if error is None or error.status != 400 or not error.raw:
        return None
    try:
        line = json.loads(error.raw)
    except ValueError:  # trimmed: a refusal is short, so this is some other error
        return None
    response = line.get("response") if isinstance(line, dict) else None
    return refused_field(response.get("body")) if isinstance(response, dict) else None


def _status_kind(status: int | None) -> ErrorType:
    if status == 429:
        return "rate_limited"
    if status is not None and status >= 500:
        return "server_error"
    if status == 400:
        return "bad_request"
    if status in (401, 403):
        return "auth"
    if status == 404:
        return "not_found"
    return "http_error"


def _trim(text: str) -> str:
    return text[:2000]


async def _split(chunks: AsyncIterator[bytes], limit: int) -> AsyncIterator[bytes]:
    """Lines of a byte stream (without their newline); a line over ``limit`` bytes is
    skipped to its end rather than held."""
    buffer = bytearray()
    skipping = False
    async for chunk in chunks:
        start = 0
        while (end := chunk.find(b"\n", start)) >= 0:
            if not skipping:
                buffer += chunk[start:end]
                if len(buffer) <= limit:
                    yield bytes(buffer)
            buffer.clear()
            skipping = False
            start = end + 1
        if not skipping:
            buffer += chunk[start:]
            if len(buffer) > limit:
                buffer.clear()
                skipping = True
    if buffer and not skipping:
        yield bytes(buffer)


def _done(counts: Any) -> int | None:
    """Requests a job finished (completed + failed), or None when its ``request_counts``
    are not counts (a missing one counts as none so far)."""
    if counts is None:
        return 0
    if not isinstance(counts, Mapping):
        return None
    total = 0
    for name in ("completed", "failed"):
        value = counts.get(name)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return None
        if not 0 <= value < 1e12:  # (also NaN)
            return None
        total += int(value)
    return total


def _reasons(errors: Any) -> list[str]:
    """The reasons a failed job gives: ``{"data": [...]}`` as documented, or a bare list;
    anything else is quoted briefly."""
    items = errors.get("data") if isinstance(errors, Mapping) else errors
    if items is None:
        return []
    if not isinstance(items, list):
        return [_brief(items)]
    out = []
    for e in items[:20]:
        if isinstance(e, Mapping):
            line = e.get("line")
            where = f" (line {_brief(line)})" if line else ""
            out.append(clean_text(_brief(e.get("message") or e.get("code"), 300)) + where)
        elif e:
            out.append(_brief(e))
    return out


def _brief(value: Any, limit: int = 80) -> str:
    """``value`` as a short quote for a message (never a whole untrusted structure)."""
    text = value if isinstance(value, str) else repr(value)
    text = clean_text(" ".join(text[: limit * 2].split()))
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _progress_bar(total: int, desc: str) -> Any:
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=desc, unit="request", mininterval=0.5, leave=True)
