"""The async engine every judge call goes through.

It bounds the number of calls in flight (and adapts that bound when the endpoint rate-limits:
halve when a window's 429s pass a tolerance, at most once per window, grow back by one per
window of successes, never above the configured limit), paces sends from the provider's
``x-ratelimit-*`` headers before a 429 comes, retries what a retry can fix (429, 5xx,
timeouts, dropped connections, malformed bodies) with full-jitter exponential backoff or the
server's Retry-After (a waiting call holds no slot), answers repeats from the cache,
shows progress, and counts tokens and cost. A call that still fails comes back as a reply with
its error; only cancellation (Ctrl-C, task.cancel()) stops a run, and then every finished call
is already in the cache so the same run resumes where it stopped.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import itertools
import logging
import random
import sys
import threading
import time
import weakref
from collections import deque
from collections.abc import AsyncGenerator, Callable, Iterable, Iterator, Mapping, Sequence, Sized
from dataclasses import dataclass, field, replace
from typing import Any

from .backend import Backend, Failure, Session, Success
from .base import CallError, Reply, Request, Usage
from .cache import CacheEntry, ResponseCache, RunKeys
from .pacing import Pacer, estimate_tokens
from .pricing import Price, PriceTable, cost_at, lookup

__all__ = [
    "UNWRITABLE",
    "AdaptiveLimit",
    "Engine",
    "RetryPolicy",
    "RunStats",
    "run_scope",
    "summarize",
    "unwritable",
]

log = logging.getLogger("rubriclab.judges.engine")

PROGRESS_MIN_CALLS = 8
"""Runs of more calls than this show a progress bar (when progress=True)."""


# --------------------------------------------------------------------------------------------
# Concurrency: an AIMD limit
# --------------------------------------------------------------------------------------------


class AdaptiveLimit:
    """A semaphore whose size is cut on congestion and grows back by ~1 per window.

    Congestion control as TCP does it, made robust to noise: attempts are counted per
    window (about ``limit`` attempts, each tagged with the epoch it was sent in), and the
    limit is halved at most once per window; refusals of attempts sent before the last
    change are ignored (they describe the old limit). A window is congested when more than
    ``tolerance`` of its attempts met a hard signal (a timeout, a bare 429, a 429 saying our
    quota is spent), or more than half met any 429: a 429 that came with the server's own
    guidance (Retry-After) is mostly noise at low rates, and the refused call waits as told.
    So scattered 429s cost their callers a wait, never the run its concurrency.
    """

    MIN_WINDOW = 8

    def __init__(self, maximum: int, tolerance: float = 0.25) -> None:
        if maximum < 1:
            raise ValueError("max_concurrency must be >= 1")
        self.maximum = maximum
        self.tolerance = tolerance
        self._limit = float(maximum)
        self.in_flight = 0
        self.peak = 0
        self.throttles = 0
        self._epoch = 0
        self._done = 0
        self._hard = 0
        self._soft = 0
        self._waiters: deque[asyncio.Future[None]] = deque()

    @property
    def limit(self) -> int:
        return max(1, int(self._limit))

    async def acquire(self) -> int:
        """Wait for a slot; returns the epoch to hand back to ``ended``."""
        if not self._waiters and self.in_flight < self.limit:
            self.in_flight += 1
            if self.in_flight > self.peak:
                self.peak = self.in_flight
            return self._epoch
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        try:
            await waiter
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled():
                self.release()  # the slot was handed to us just before the cancel
            else:
                with contextlib.suppress(ValueError):
                    self._waiters.remove(waiter)
            raise
        return self._epoch

    def release(self) -> None:
        self.in_flight -= 1
        self._wake()

    def _wake(self) -> None:
        limit = self.limit
        while self._waiters and self.in_flight < limit:
            waiter = self._waiters.popleft()
            if waiter.done():
                continue
            self.in_flight += 1
            if self.in_flight > self.peak:
                self.peak = self.in_flight
            waiter.set_result(None)

    @property
    def window(self) -> int:
        return max(self.limit, self.MIN_WINDOW)

    def ended(self, epoch: int, refused: bool = False, *, guided: bool = False) -> None:
        """An attempt sent in ``epoch`` ended. ``refused``: a congestion signal (timeout, 429);
        ``guided``: a 429 that told the call when to come back (a soft signal)."""
        if epoch != self._epoch:
            return  # sent before the last change: it describes the old limit
        self._done += 1
        if refused:
            if guided:
                self._soft += 1
            else:
                self._hard += 1
            window = self.window
            if self._hard > self.tolerance * window or self._hard + self._soft > window / 2:
                self._cut()
                return
        if self._done >= self.window:
            self._next_window()

    def _cut(self) -> None:
        self.throttles += 1
        self._limit = max(1.0, self._limit / 2.0)
        self._next_window()

    def _next_window(self) -> None:
        self._epoch += 1
        self._done = 0
        self._hard = 0
        self._soft = 0

    def throttled(self, epoch: int) -> None:
        """A call sent in ``epoch`` was rate limited (counted as a refused attempt)."""
        self.ended(epoch, refused=True)

    def succeeded(self) -> None:
        """Additive increase: +1 after about ``limit`` successes."""
        if self._limit < self.maximum:
            self._limit = min(float(self.maximum), self._limit + 1.0 / self._limit)
            self._wake()


# --------------------------------------------------------------------------------------------
# Retries
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how long to retry. Delays are full-jitter exponential backoff
    (uniform in [0, min(cap, base * 2**n)]) unless the server sent Retry-After."""

    max_retries: int = 4
    backoff_base: float = 0.5
    backoff_cap: float = 30.0
    retry_after_cap: float = 60.0

    def __post_init__(self) -> None:
        if self.max_retries < 0:
            raise ValueError("max_retries must be >= 0")
        if self.backoff_base < 0 or self.backoff_cap < 0 or self.retry_after_cap < 0:
            raise ValueError("backoff_base, backoff_cap and retry_after_cap must be >= 0")

    def delay(self, retry: int, retry_after: float | None, rng: random.Random) -> float:
        if retry_after is not None:
            wait = min(retry_after, self.retry_after_cap)
            return wait + rng.uniform(0.0, 0.1 * wait)  # spread a herd told the same time
        return rng.uniform(0.0, min(self.backoff_cap, self.backoff_base * (2.0**retry)))


# --------------------------------------------------------------------------------------------
# Accounting
# --------------------------------------------------------------------------------------------


@dataclass
class RunStats:
    """What one run did and cost. ``cost`` is money spent by this run (cache hits are free);
    ``cost`` is None when some call's model has no known price (pass prices=)."""

    calls: int = 0
    succeeded: int = 0
    failed: int = 0
    cached: int = 0
    attempts: int = 0
    usage: Usage = field(default_factory=Usage)
    cost: float | None = 0.0
    wall: float = 0.0
    peak_in_flight: int = 0
    throttles: int = 0
    interrupted: bool = False
    errors: dict[str, int] = field(default_factory=dict)
    failed_attempts: dict[str, int] = field(default_factory=dict)
    """Attempts that failed, by error type, whether retried or final (429s absorbed...)."""

    def describe(self) -> str:
        cost = "unknown cost" if self.cost is None else f"${self.cost:.4f}"
        errs = ", ".join(f"{k}: {v}" for k, v in sorted(self.errors.items())) or "none"
        return (
            f"{self.calls} calls ({self.cached} cached, {self.failed} failed; errors: {errs}) "
            f"in {self.wall:.2f}s, {self.usage.total_tokens} tokens, {cost}"
        )


def _merge(a: RunStats, b: RunStats, wall: float) -> RunStats:
    def add(x: Mapping[str, int], y: Mapping[str, int]) -> dict[str, int]:
        out = dict(x)
        for name, n in y.items():
            out[name] = out.get(name, 0) + n
        return out

    return RunStats(
        calls=a.calls + b.calls,
        succeeded=a.succeeded + b.succeeded,
        failed=a.failed + b.failed,
        cached=a.cached + b.cached,
        attempts=a.attempts + b.attempts,
        usage=a.usage + b.usage,
        cost=None if a.cost is None or b.cost is None else a.cost + b.cost,
        wall=wall,
        peak_in_flight=max(a.peak_in_flight, b.peak_in_flight),
        throttles=a.throttles + b.throttles,
        interrupted=a.interrupted or b.interrupted,
        errors=add(a.errors, b.errors),
        failed_attempts=add(a.failed_attempts, b.failed_attempts),
    )


@dataclass
class _Scope:
    started: float
    stats: dict[int, RunStats] = field(default_factory=dict)


_scope: contextvars.ContextVar[_Scope | None] = contextvars.ContextVar(
    "rubriclab_run_scope", default=None
)


@contextlib.contextmanager
def run_scope() -> Iterator[None]:
    """Within this block, each judge's ``last_run`` sums every run it made (an evaluate's
    first asks and all its re-ask rounds), with the wall time of the whole block."""
    token = _scope.set(_Scope(time.perf_counter()))
    try:
        yield
    finally:
        _scope.reset(token)


def summarize(replies: Sequence[Reply | None], wall: float = 0.0) -> RunStats:
    """Token, cost and error totals over replies (None = a call that never finished)."""
    stats = RunStats(wall=wall)
    usage = Usage()
    cost: float | None = 0.0
    for reply in replies:
        if reply is None:
            continue
        stats.calls += 1
        stats.attempts += reply.attempts
        if reply.cached:
            stats.cached += 1
        if reply.error is not None:
            stats.failed += 1
            stats.errors[reply.error.type] = stats.errors.get(reply.error.type, 0) + 1
        else:
            stats.succeeded += 1
        if not reply.cached:
            usage = usage + reply.usage
            if reply.error is None:
                cost = None if cost is None or reply.cost is None else cost + reply.cost
    stats.usage = usage
    stats.cost = cost
    return stats


# --------------------------------------------------------------------------------------------
# The engine
# --------------------------------------------------------------------------------------------


def _close_abandoned(loop_ref: weakref.ref[asyncio.AbstractEventLoop], session: Session) -> None:
    """An engine was dropped unclosed while its loop lives on (a notebook's, one a caller
    keeps): its pool is closed on that loop. Left to the collector, aiohttp's session said
    "Unclosed client session" (a ResourceWarning) and its sockets waited for the collector:
    the shutdown guard's own close is only scheduled by then, and ran after the session's
    ``__del__``. Holding the session here keeps it alive until the close has run."""
    loop = loop_ref()
    if loop is None or loop.is_closed():
        return

    def close() -> None:
        loop.create_task(session.aclose())

    with contextlib.suppress(RuntimeError):  # the loop closed in the meantime
        loop.call_soon_threadsafe(close)


@dataclass
class _LoopState:
    session: Session
    limit: AdaptiveLimit
    pacer: Pacer
    guard: AsyncGenerator[None, None] | None = None
    #: closes the pool on its loop if the engine is dropped while that loop lives
    abandoned: weakref.finalize[Any, Any] | None = None
    failed_attempts: dict[str, int] = field(default_factory=dict)
    #: no retry leaves before this (monotonic) time: a 429 that says "retry after" and no
    #: quota headers speaks for the endpoint's shared bucket, not only for that one call.
    #: Fresh calls are not held: a stray 429 (a noisy gateway) must not pause the run.
    hold_until: float = 0.0


class _Run:
    """One ``Engine.run``'s requests and answers, taken from the source a chunk at a time.

    Each chunk is keyed and looked up in the cache in one query; hits and repeats of a call
    already made in this run are answered without a call. Chunks start small (the first call
    leaves at once) and grow while building them stays cheap (a chunk of lazily rendered
    prompts holds the event loop while it renders, so it must stay short).
    """

    FIRST_CHUNK = 8
    MAX_CHUNK = 1024
    CHUNK_SECONDS = 0.005

    def __init__(
        self,
        engine: Engine,
        source: Iterator[Request],
        on_reply: Callable[[int, Reply], None] | None,
    ) -> None:
        self.engine = engine
        self.source = source
        self.on_reply = on_reply
        self.requests: list[Request] = []
        self.keys: list[str] = []
        self.results: list[Reply | None] = []
        self.bar: Any = None
        self._first: dict[str, int] = {}
        self._copies: dict[int, list[int]] = {}
        self._keys = engine.run_keys() if engine.cache is not None else None
        #: the messages' JSON the key was made from, until the call is sent: the body reuses it
        self.wire: dict[int, str] = {}

    def feed(self) -> Iterator[int]:
        """Indexes of the requests that need a call, pulling the source as they are taken."""
        engine = self.engine
        cache = engine.cache
        run_keys = self._keys
        wire = self.wire
        size = self.FIRST_CHUNK
        while True:
            began = time.perf_counter()
            chunk = list(itertools.islice(self.source, size))
            if not chunk:
                return
            base = len(self.requests)
            self.requests.extend(chunk)
            self.results.extend([None] * len(chunk))
            fresh: list[int] = []
            if cache is None or run_keys is None:
                fresh = list(range(base, base + len(chunk)))
            else:
                made = [_keyed(run_keys, r) for r in chunk]
                keys = [key for key, _ in made]
                self.keys.extend(keys)
                hits = cache.get_many({key for key, _ in made if key})
                for i, key in enumerate(keys, base):
                    entry = hits.get(key)
                    original = self._first.get(key)
                    if not key:  # a request no JSON can hold: its row's error, not the run's
                        self.settle(i, unwritable(engine.model, made[i - base][1]))
                    elif entry is not None:
                        self.settle(i, engine._reply_from_cache(entry))
                    elif original is None:
                        self._first[key] = i
                        fresh.append(i)
                        messages = made[i - base][1]
                        if messages is not None:
                            wire[i] = messages
                    elif self.results[original] is not None:
                        self.settle(i, _repeat(self.results[original]))
                    else:  # same call twice in one run: make it once, answer both
                        self._copies.setdefault(original, []).append(i)
            took = time.perf_counter() - began
            if took < self.CHUNK_SECONDS:
                size = min(size * 2, self.MAX_CHUNK)
            elif took > 2 * self.CHUNK_SECONDS:
                size = max(size // 2, self.FIRST_CHUNK)
            yield from fresh

    def settle(self, i: int, reply: Reply) -> None:
        """Request ``i`` has its final answer (and so has every repeat of it)."""
        self.results[i] = reply
        if self.bar is not None:
            self.bar.update(1)
        if self.on_reply is not None:
            self.on_reply(i, reply)
        for copy in self._copies.pop(i, ()):
            self.settle(copy, _repeat(reply))


UNWRITABLE = (TypeError, ValueError, RecursionError)
"""What writing a request as JSON raises when no JSON can hold it (dict keys of mixed types,
an int past Python's digit limit, nesting past the recursion limit)."""


def unwritable(model: str, why: str | None) -> Reply:
    """The reply of a request no JSON can hold: its row's error, never the run's."""
    return Reply(
        None,
        error=CallError("internal", f"the request cannot be written as JSON ({why})"),
        model=model,
    )


def _keyed(run_keys: RunKeys, request: Request) -> tuple[str, str | None]:
    """``run_keys(request)``, or ``("", why)`` for a request that cannot be written."""
    try:
        return run_keys(request)
    except UNWRITABLE as exc:
        return "", f"{type(exc).__name__}: {exc}"


def _repeat(original: Reply | None) -> Reply:
    """The answer to a call repeated within one run: the first one's, marked cached."""
    assert original is not None
    if original.ok:
        return replace(original, cached=True, attempts=0, latency=0.0)
    return original


class Engine:
    """Runs requests for one judge: per-loop sessions and limits, retries, cache, accounting."""

    def __init__(
        self,
        backend: Backend,
        *,
        model: str,
        endpoint_id: str,
        max_concurrency: int,
        retry: RetryPolicy,
        cache: ResponseCache | None,
        settings: Mapping[str, Any],
        prices: PriceTable,
        local: bool,
    ) -> None:
        self.backend = backend
        self.model = model
        self.endpoint_id = endpoint_id
        self.max_concurrency = max_concurrency
        self.retry = retry
        self.cache = cache
        self.settings = dict(settings)
        self.prices = prices
        self.local = local
        self.format_level = 2
        self.last_run = RunStats()
        #: calls answered by the endpoint (not the cache) over this engine's life, counted as
        #: each one ends: what a run's progress reads while ``last_run`` waits for the end
        self.calls_made = 0
        self._states: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _LoopState] = (
            weakref.WeakKeyDictionary()
        )
        self._lock = threading.Lock()
        self._rng = random.Random()
        self.pacer = Pacer()  # what the provider's rate headers said, shared by every loop
        self._price_known = lookup(prices, model) is not None
        self._price_of: dict[str, Price | None] = {}

    # -- per-loop state ------------------------------------------------------------------
    async def _state(self) -> _LoopState:
        """This loop's session and limit, created on first use.

        The session is closed when the loop shuts down: an async generator parked at its
        ``yield`` is finalized by ``asyncio.run`` (and by ``run_sync``'s own loop) through
        ``shutdown_asyncgens``, so nobody has to remember ``aclose()`` and no "unclosed
        session" warnings appear. A loop that never ends (Jupyter's) keeps its pool.
        """
        loop = asyncio.get_running_loop()
        state = self._states.get(loop)
        if state is None:
            with self._lock:
                state = self._states.get(loop)
                if state is None:
                    state = _LoopState(
                        self.backend.open_session(),
                        AdaptiveLimit(self.max_concurrency),
                        self.pacer,
                    )
                    self._states[loop] = state
                    created = True
                else:
                    created = False
            if created:
                guard = self._close_at_shutdown()
                await guard.__anext__()
                state.guard = guard
                state.abandoned = weakref.finalize(
                    self, _close_abandoned, weakref.ref(loop), state.session
                )
        return state

    async def _close_at_shutdown(self) -> AsyncGenerator[None, None]:
        try:
            yield
        finally:
            await self.aclose()

    async def aclose(self) -> None:
        """Close this loop's connection pool (the next call opens a new one)."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # pragma: no cover - only called from coroutines
            return
        with self._lock:
            state = self._states.pop(loop, None)
        if state is not None:
            if state.abandoned is not None:
                state.abandoned.detach()
            await state.session.aclose()

    def run_keys(self) -> RunKeys:
        """Cache keys for one run's requests (what they share written once)."""
        return RunKeys(self.endpoint_id, self.model, self.settings)

    # -- one call ------------------------------------------------------------------------
    def _cost(self, usage: Usage, model: str) -> float | None:
        if self.local:
            return 0.0
        name = self.model if self._price_known else model
        try:
            price = self._price_of[name]
        except KeyError:  # looked up once a model: an unknown name scans the whole table
            price = lookup(self.prices, name)
            if len(self._price_of) < 64:  # model names come from replies: keep a few
                self._price_of[name] = price
        return cost_at(usage, price)

    def _reply_from_cache(self, entry: CacheEntry) -> Reply:
        return Reply(
            text=entry.text,
            usage=entry.usage,
            latency=0.0,
            attempts=0,
            cached=True,
            model=entry.model,
            is_mock=self.backend.is_mock,
            cost=self._cost(entry.usage, entry.model),
            finish_reason=entry.finish_reason,
        )

    async def call(
        self,
        state: _LoopState,
        request: Request,
        waiting: Callable[[bool], None] | None = None,
        messages_json: str | None = None,
    ) -> Reply:
        """One logical call: attempts until success, a final error, or the retry budget is spent.

        Between attempts the call holds no slot; ``waiting(True/False)`` tells the caller
        when it starts and stops waiting, so the run can use the time for other calls.
        ``messages_json``: the messages' JSON already written for the cache key, for the body.
        """
        start = time.perf_counter()
        limit = state.limit
        pacer = state.pacer
        session = state.session
        attempts = 0
        retries = 0
        adapted: tuple[str, ...] = ()  # fields this call already adapted to (never twice)
        while True:
            attempts += 1
            level = self.format_level
            # a retry held by another call's Retry-After waits without a slot: a slot held
            # idle is a fresh call not sent (the held retries took every slot and the run
            # stalled while the paced fresh calls could have gone)
            while retries and (hold := state.hold_until - time.monotonic()) > 0:
                await asyncio.sleep(hold)
            epoch = await limit.acquire()
            try:
                ticket = await pacer.before_send(
                    pacer.token_cost(lambda: estimate_tokens(request.messages)),
                    self.retry.retry_after_cap,
                )
                outcome = await session.send(request, level, messages_json)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # a bug must become a recorded error, not a lost run
                outcome = Failure("internal", f"{type(exc).__name__}: {exc}")
                ticket = None
            finally:
                limit.release()
            if ticket is not None:
                if outcome.status == 429 if type(outcome) is Failure else False:
                    pacer.refund(ticket)  # first: the refusal's headers count it out
                pacer.observe(outcome.rate, ticket)
            if type(outcome) is Success:
                limit.ended(epoch)
                limit.succeeded()
                pacer.used(outcome.usage.total_tokens)
                return Reply(
                    text=outcome.text,
                    usage=outcome.usage,
                    latency=time.perf_counter() - start,
                    attempts=attempts,
                    model=outcome.model,
                    is_mock=self.backend.is_mock,
                    cost=self._cost(outcome.usage, outcome.model),
                    finish_reason=outcome.finish_reason,
                )
            assert isinstance(outcome, Failure)
            if outcome.format_rejected and level > 0:
                self._downgrade_format(request, level)
                continue  # the endpoint told us what it cannot do; not a retry
            if outcome.adapt is not None and outcome.adapt not in adapted:
                adapted = (*adapted, outcome.adapt)
                self.adapt(outcome.adapt)
                continue  # the same: the backend now builds the body the endpoint takes
            # A 429 whose own headers show quota left is not about our rate (a provider's
            # overload, a noisy gateway): no signal; the call waits, the run keeps its
            # concurrency. One with Retry-After (and no headers saying our quota is spent) is a
            # soft signal. A timeout is congestion too (an overloaded server, or this process
            # too busy to keep up).
            rate = outcome.rate
            limited = outcome.status == 429 and (rate is None or rate.exhausted())
            guided = limited and outcome.retry_after is not None and rate is None
            limit.ended(epoch, limited or outcome.type == "timeout", guided=guided)
            if guided:
                # Every retry waits it out, not only this call's: the next token is that far
                # away for every request, and a fast client that sent the queued retries
                # meanwhile would only be refused again (they became a 429 storm). Once the
                # limiter's rate is learned from them, the pacer spaces every send, retries
                # included, and a refusal holds only its own call: a whole-second "1" held
                # every retry a second each time and left the run's tail idle.
                assert outcome.retry_after is not None
                wait = min(outcome.retry_after, self.retry.retry_after_cap)
                if ticket is not None:
                    pacer.refused(ticket, wait)
                if not pacer.paces_bare_limit:
                    state.hold_until = max(state.hold_until, time.monotonic() + wait)
            state.failed_attempts[outcome.type] = state.failed_attempts.get(outcome.type, 0) + 1
            if not outcome.retryable or retries >= self.retry.max_retries:
                return Reply(
                    text=None,
                    latency=time.perf_counter() - start,
                    attempts=attempts,
                    error=CallError(
                        outcome.type, outcome.message, outcome.status, attempts, outcome.raw
                    ),
                    model=self.model,
                    is_mock=self.backend.is_mock,
                )
            delay = self.retry.delay(retries, outcome.retry_after, self._rng)
            retries += 1
            log.debug("retry %d in %.2fs after %s", retries, delay, outcome.type)
            if waiting is not None:
                waiting(True)
            try:
                await asyncio.sleep(delay)
            finally:
                if waiting is not None:
                    waiting(False)

    def _downgrade_format(self, request: Request, level: int) -> None:
        fmt = request.response_format or {}
        new = 1 if level >= 2 and fmt.get("type") == "json_schema" else 0
        if new < self.format_level:
            self.format_level = new
            what = "json_object only" if new == 1 else "no response_format"
            log.warning(
                "rubriclab: %s rejected response_format; this judge now sends %s "
                "(the prompt still describes the JSON it wants)",
                self.backend.describe(),
                what,
            )

    def adapt(self, refused: str) -> None:
        """The endpoint refused a field (``Failure.adapt``): the backend builds later bodies
        without it, and the change is said once (a warning) per judge."""
        said = self.backend.adapt(refused)
        if said:  # once per judge: calls already in flight find it adapted
            log.warning(
                "rubriclab: %s refused %s; this judge now sends %s",
                self.backend.describe(),
                refused,
                said,
            )

    # -- many calls ----------------------------------------------------------------------
    async def run(
        self,
        requests: Iterable[Request],
        *,
        progress: bool = True,
        desc: str = "judging",
        on_reply: Callable[[int, Reply], None] | None = None,
        total: int | None = None,
    ) -> list[Reply]:
        """Answer every request, in input order; failures come back as replies with errors.

        ``requests`` may be lazy (a generator that renders each prompt when asked): they are
        pulled a small chunk at a time as calls start, so the first call leaves before the
        rest exist and building them overlaps waiting for answers. ``on_reply(i, reply)``
        is called as each answer is final (a fresh call, a cache hit, or a repeat of a call
        made earlier in the run), so callers can use it while the rest are in flight.
        ``total`` sizes the progress bar when ``requests`` has no length.
        """
        started = time.perf_counter()
        if total is None and isinstance(requests, Sized):
            total = len(requests)
        run = _Run(self, iter(requests), on_reply)
        bar = _progress_bar(total, 0, desc) if progress and total is not None else None
        run.bar = bar
        state = await self._state()
        state.session.new_run()
        failed_before = dict(state.failed_attempts)
        interrupted = False
        try:
            await self._work(state, run, total)
        except (asyncio.CancelledError, KeyboardInterrupt):
            interrupted = True
            raise
        finally:
            flush = getattr(self.cache, "flush", None)
            if flush is not None:  # a file cache writes its answers a group at a time
                flush()
            if bar is not None:
                if bar.total != len(run.results):  # a lazy source gave fewer than announced
                    bar.total = len(run.results)
                    bar.refresh()
                bar.close()
            results = run.results
            stats = summarize(results, time.perf_counter() - started)
            stats.peak_in_flight = state.limit.peak
            stats.throttles = state.limit.throttles
            stats.failed_attempts = {
                k: v - failed_before.get(k, 0)
                for k, v in state.failed_attempts.items()
                if v > failed_before.get(k, 0)
            }
            stats.interrupted = interrupted
            scope = _scope.get()
            if scope is not None:
                before = scope.stats.get(id(self))
                if before is not None:
                    stats = _merge(before, stats, time.perf_counter() - scope.started)
                scope.stats[id(self)] = stats
            self.last_run = stats
            if interrupted:
                self._say_interrupted(stats, total if total is not None else len(results))
        return [r if r is not None else _lost(self.model) for r in run.results]

    async def _work(self, state: _LoopState, run: _Run, total: int | None) -> None:
        pending = run.feed()
        cache = self.cache
        keys = run.keys
        requests = run.requests
        wire = run.wire
        # Workers take indexes from one shared iterator. A worker whose call is waiting out a
        # Retry-After or a backoff gives its place to a new worker, so waits never lower the
        # number of calls being made; the extra workers retire once the waits are over.
        target = self.max_concurrency if total is None else min(self.max_concurrency, total)
        target = max(target, 1)
        tasks: set[asyncio.Future[None]] = set()
        # workers start one after another, each once the one before has its request: the
        # first request leaves at once instead of after every worker has built its own
        counts = {"live": 0, "waiting": 0, "to_start": target - 1, "taken": 0}
        state.pacer.remaining(None)  # (a new run: what the last one had left is moot)

        def waiting(now_waiting: bool) -> None:
            counts["waiting"] += 1 if now_waiting else -1
            if now_waiting and counts["live"] - counts["waiting"] < target:
                spawn()

        ended = asyncio.Event()  # set whenever a worker ends, so a failure is seen at once

        def spawn() -> None:
            counts["live"] += 1
            task = asyncio.ensure_future(worker())
            task.add_done_callback(lambda _: ended.set())
            tasks.add(task)

        async def worker() -> None:
            try:
                while counts["live"] - counts["waiting"] <= target:
                    i = next(pending, None)
                    if i is None:
                        return
                    counts["taken"] += 1
                    if total is not None:
                        state.pacer.remaining(total - counts["taken"])
                    if counts["to_start"] > 0:
                        counts["to_start"] -= 1
                        spawn()
                    reply = await self.call(state, requests[i], waiting, wire.pop(i, None))
                    if not reply.cached:
                        with self._lock:
                            self.calls_made += 1
                    if cache is not None and reply.error is None and reply.text is not None:
                        cache.put(
                            keys[i],
                            CacheEntry(reply.text, reply.usage, reply.model, reply.finish_reason),
                        )
                    run.settle(i, reply)
            finally:
                counts["live"] -= 1

        spawn()
        try:
            while True:
                for task in list(tasks):
                    error = task.exception() if task.done() and not task.cancelled() else None
                    if error is not None:
                        raise error
                if all(t.done() for t in tasks):
                    break
                ended.clear()
                await ended.wait()
        finally:
            for task in tasks:  # on cancellation or a bug, no worker outlives the run
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

    def _say_interrupted(self, stats: RunStats, total: int) -> None:
        kept = stats.succeeded - stats.cached
        if self.cache is not None:
            where = f"saved in the {self.cache.describe()}"
            how = (
                "Run the same code again with this judge to resume: finished calls are "
                "answered from the cache, not repeated."
            )
        else:
            where = "not saved (this judge has cache=False)"
            how = "Use cache=None (memory) or cache=True (a file) so an interrupted run resumes."
        sys.stderr.write(
            f"rubriclab: run interrupted after {stats.calls} of {total} judge calls; "
            f"{kept} new answers are {where}. {how}\n"
        )

    async def complete(self, request: Request) -> Reply:
        """One call through the same cache, limit and retry path as ``run``."""
        replies = await self.run([request], progress=False)
        return replies[0]


def _lost(model: str) -> Reply:
    return Reply(
        None,
        error=CallError("internal", "the engine finished without an answer for this call"),
        model=model,
    )


def _progress_bar(total: int, done: int, desc: str) -> Any:
    if total <= PROGRESS_MIN_CALLS:
        return None
    from tqdm.auto import tqdm

    return tqdm(total=total, initial=done, desc=desc, unit="call", mininterval=0.2, leave=True)
