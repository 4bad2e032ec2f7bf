"""Pace calls from the provider's own rate-limit headers, before a 429 has to say so.

OpenAI (and the gateways that copy it) send on every reply how much of each quota is left
and when it refills: ``x-ratelimit-limit-requests``, ``x-ratelimit-remaining-requests``,
``x-ratelimit-reset-requests`` (a duration such as "1s", "6m0s" or "20ms"), and the same for
``-tokens``. Those describe a token bucket; ``Pacer`` keeps a local copy of each bucket,
takes from it before every send and waits for the refill when it is empty, so a run settles
at the limit instead of bouncing off it.
"""

from __future__ import annotations

import asyncio
import re
import time
import weakref
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = [
    "IMAGE_TOKENS",
    "BareLimit",
    "Pacer",
    "RateHeaders",
    "Ticket",
    "estimate_tokens",
    "parse_duration",
    "parse_rate_headers",
]

_KINDS = ("requests", "tokens")
_SLACK = 0.001  # seconds of waiting not worth a sleep
_UNIT = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 0.001, "us": 1e-6, "µs": 1e-6, "ns": 1e-9}
_PART = re.compile(r"(\d+(?:\.\d+)?)(ms|us|µs|ns|h|m|s)")


def parse_duration(text: str) -> float | None:
    """Seconds in OpenAI's reset form ("1s", "6m0s", "20ms", "1h2m3.5s"), or a bare number."""
    text = text.strip()
    if not text:
        return None
    try:
        return max(0.0, float(text))
    except ValueError:
        pass
    total = 0.0
    pos = 0
    for match in _PART.finditer(text):
        if match.start() != pos:
            return None
        total += float(match.group(1)) * _UNIT[match.group(2)]
        pos = match.end()
    return total if pos == len(text) and pos > 0 else None


@dataclass(frozen=True, slots=True)
class Quota:
    """One bucket as a reply described it."""

    remaining: float
    reset: float | None
    limit: float | None


@dataclass(frozen=True, slots=True)
class RateHeaders:
    """The rate-limit headers of one reply (``requests`` and/or ``tokens``)."""

    quotas: tuple[tuple[str, Quota], ...]

    def exhausted(self) -> bool:
        """Some quota is at zero: a 429 now is about our own use, not noise."""
        return any(q.remaining < 1 for _, q in self.quotas)


def parse_rate_headers(headers: Mapping[str, str]) -> RateHeaders | None:
    """The ``x-ratelimit-*`` headers of a reply, or None when it sent none."""
    quotas: list[tuple[str, Quota]] = []
    for kind in _KINDS:
        remaining = _number(headers.get(f"x-ratelimit-remaining-{kind}"))
        if remaining is None:
            continue
        reset_text = headers.get(f"x-ratelimit-reset-{kind}")
        reset = parse_duration(reset_text) if reset_text else None
        limit = _number(headers.get(f"x-ratelimit-limit-{kind}"))
        quotas.append((kind, Quota(remaining, reset, limit)))
    return RateHeaders(tuple(quotas)) if quotas else None


def _number(text: str | None) -> float | None:
    if text is None:
        return None
    try:
        value = float(text.strip())
    except ValueError:
        return None
    return value if value >= 0 else None


@dataclass(frozen=True, slots=True)
class Ticket:
    """One send: its order, the running totals just after it, and what it cost."""

    seq: int
    sent: dict[str, float]
    costs: dict[str, float]
    at: float
    informed: bool = False
    """Sent while the pacer knew the buckets: a refusal of it means our estimate was off."""


class _Bucket:
    """Our copy of one provider bucket: level now, refill rate, and what we sent since."""

    def __init__(self) -> None:
        self.level: float | None = None  # None until a reply tells us
        self.capacity: float | None = None
        self.rate: float | None = None
        self.stamp = 0.0
        self.sent = 0.0  # cost sent so far (a running total, refunds included)
        self.seen_seq = -1
        # refunds of sends newer than the last reply we heard of: a later reply about an
        # older send must not count them as taken from the bucket
        self.refunds: list[tuple[int, float]] = []

    def observe(
        self,
        quota: Quota,
        seq: int,
        sent_before: float,
        sent_at: float,
        now: float,
        staleness: float = 0.0,
    ) -> None:
        """Reconcile our copy with a reply's view of the bucket.

        Providers send whole numbers: the true level is in [remaining, remaining + 1), and
        the refill rate in the matching interval. Our own estimate is kept when it lies in
        the interval and moved to its nearest edge when not, so the rounding of each reply
        does not cost a fraction of a request every time.
        """
        if seq <= self.seen_seq:
            return  # an older request's view of the bucket; a newer one already spoke
        self.seen_seq = seq
        self.refill(now)
        if quota.limit is not None:
            self.capacity = quota.limit
        reset = quota.reset
        if reset is not None and reset > 0:
            top = self.capacity if self.capacity is not None else quota.remaining + 1.0
            high = (top - quota.remaining) / reset
            low = max(0.0, top - quota.remaining - 1.0) / reset
            if high > 0:
                if self.rate is None:
                    self.rate = (low + high) / 2 if low > 0 else high
                else:
                    self.rate = min(max(self.rate, low), high)
        # The server counted this request (and those before it) about when we sent it: a
        # model answers long after it is counted. The ones we sent after it were not in its
        # count (less those refused since: they took nothing), and it has been refilling since.
        after = self.sent - sent_before - sum(c for s, c in self.refunds if s > seq)
        self.refunds = [(s, c) for s, c in self.refunds if s > seq]
        elapsed = max(0.0, now - sent_at) * (1.0 - staleness)
        low_level = quota.remaining - after + (self.rate or 0.0) * elapsed
        high_level = low_level + 1.0
        if self.capacity is not None:
            low_level = min(low_level, self.capacity - 1.0)
            high_level = min(high_level, self.capacity)
        if self.level is None or not low_level <= self.level < high_level:
            self.level = (
                low_level if self.level is None or self.level < low_level else (high_level - 1e-6)
            )
        self.stamp = now

    def refill(self, now: float) -> None:
        if self.level is None:
            return
        if self.rate is not None:
            self.level += self.rate * (now - self.stamp)
            if self.capacity is not None:
                self.level = min(self.level, self.capacity)
        self.stamp = now

    def refund(self, seq: int, cost: float) -> None:
        """The send ``seq`` was refused: it took nothing from the bucket.

        Our level took its cost at the send, and so did every estimate since, unless a reply
        about a newer send has set the level since: the server never counted this one, so
        that reply's view did not either (giving it back then would count it twice).
        """
        if seq > self.seen_seq:
            if self.level is not None:
                self.level += cost
            self.refunds.append((seq, cost))

    def wait_for(self, cost: float) -> float:
        """Seconds until ``cost`` is there; 0 when it is (or when we know nothing yet)."""
        if self.level is None or self.level >= cost:
            return 0.0
        if self.rate is None or self.rate <= 0:
            return 0.0  # no refill rate known: the 429 path handles it
        return (cost - self.level) / self.rate


IMAGE_TOKENS = 765.0
"""What an image is guessed to cost before a reply says (OpenAI's price of a detailed
512-pixel image: its base 85 plus four 170-token tiles)."""


def estimate_tokens(messages: Sequence[Mapping[str, Any]]) -> float:
    """A request's tokens before any reply told us better: about 4 characters a token of its
    text, and a flat guess per image (an image's data URL says nothing of its tokens)."""
    chars = 0
    images = 0
    for message in messages:
        content = message.get("content")
        if isinstance(content, str):
            chars += len(content)
        elif isinstance(content, (list, tuple)):
            for part in content:
                if not isinstance(part, Mapping):
                    continue
                if part.get("type") == "image_url":
                    images += 1
                else:
                    chars += len(str(part.get("text", "")))
    return chars / 4.0 + 4.0 * len(messages) + IMAGE_TOKENS * images


class BareLimit:
    """A limiter that says only "429, Retry-After: w": its refill rate, learned from
    successive refusals, and the time the next send may go.

    A token bucket refusing a send at ``s`` says when its next token is there: ``s + w``
    (dated by the refusal's arrival: a 429 is answered at once).
    Between two refusals at ``s1`` and ``s2`` with ``k`` sends let through in between, that
    time moved by exactly ``k / rate`` (``(s2 + w2) - (s1 + w1) = k / rate``), whatever the
    bucket's size; so the rate is read off pairs of refusals at least ``SPAN`` seconds apart.
    Sends are then spaced a little more than ``1 / rate`` apart (``PACE``), from the next
    token on, and the rate creeps up while nothing is refused (a limit may rise, an estimate
    may be low): the odd refusal that follows re-learns it.

    A limiter that says Retry-After in whole seconds only ("1" when its next token is 10 ms
    away) hides the token's time; but at its edge a bucket's level is in [0, 1) at every
    refusal, so the ``k`` sends it let through between refusals sent at ``t1`` and ``t2``
    are its refill, give or take one: ``rate = k / (t2 - t1)``, read over at
    least ``SPAN_COARSE`` seconds. Such a Retry-After says nothing of whether a refusal is a
    bucket's, so the check that the paced sends are (almost) never refused is stricter
    (``NOISE_COARSE``, two checks in a row): random 429s go on at their share whatever the
    pace, so a gateway's stray "Retry-After: 1" costs two checks' worth of sends paced a
    little below the client's own pace.
    """

    SPAN = 0.05
    """Least seconds between the two refusals of an estimate (the longest pair kept is used)."""
    SPAN_COARSE = 0.5
    """The same, when Retry-After is in whole seconds (a reading is good to a send or two:
    the sends between two refusals, by their send times)."""
    KEEP = 10.0
    """Seconds of refusals kept to pair with a new one."""
    CREEP = 0.05
    """How much the rate rises for each second without a refusal."""
    TOLERANCE = 2.0
    """How many tokens' time a Retry-After may say and still be a bucket's (timing noise)."""
    CHECK = 100
    """Paced sends between two checks that the refusals are a bucket's."""
    NOISE = 0.12
    """A share of paced sends refused above which the refusals are not a bucket's."""
    NOISE_COARSE = 0.03
    """The same, for refusals with a whole-second Retry-After."""
    STRIKES = 3
    """Checks in a row over ``NOISE`` before the pacing stops."""
    STRIKES_COARSE = 2
    """Checks in a row over ``NOISE_COARSE`` before the pacing stops."""
    ENDGAME = 2.0
    """Seconds of calls left (at the learned rate) under which the rate no longer creeps."""
    PACE = 0.97
    """Sends go at this share of the rate learned: the bucket keeps a few tokens, which
    absorb a client's jitter (a stalled event loop sends two at once); refusals, which
    re-learn the rate, come from the creep upward."""

    def __init__(self) -> None:
        self.rate: float | None = None
        self.next = 0.0  # (monotonic) when the next send may go
        #: (send time, seq, next token, Retry-After) of recent refusals, in send order
        self.refusals: deque[tuple[float, int, float, float]] = deque()
        self.last_refusal = 0.0
        self.paced = 0  # sends made at a learned rate, since the last check
        self.paced_refused = 0  # and how many of those a 429 refused
        self.off_until = 0.0  # (monotonic) no rate is learned before then
        self.strikes = 0  # checks in a row that found too many refused
        self.since = 0.0  # (monotonic) when the rate was learned (sends before: not paced)
        self.coarse = False  # the last refusal's Retry-After was in whole seconds
        #: (time, rate) read at recent whole-second refusals (``_estimate_coarse``)
        self.readings: deque[tuple[float, float]] = deque()
        self.learned: float | None = None  # the rate the last estimate set (before creep)
        #: the run's last calls: no creep (``Pacer.remaining``)
        self.endgame = False

    def slot(self, now: float) -> float:
        """Take the next send slot; seconds to wait for it (0: go now)."""
        rate = self.rate
        if (
            rate is not None
            and not self.endgame
            and self.last_refusal
            and now - self.last_refusal > 1.0
        ):
            grown = rate * (1.0 + self.CREEP * min(now - self.last_refusal - 1.0, 1.0))
            self.rate = rate = grown
            self.last_refusal = now - 1.0  # (creep again in a second)
        start = self.next if self.next > now else now
        if rate is not None:
            self.next = start + 1.0 / (rate * self.PACE)
            self.paced += 1
            if self.paced >= self.CHECK:
                self._check(now)
        return start - now

    def _check(self, now: float) -> None:
        """Paced below its rate, a bucket refuses almost nothing. Refusals that go on at a
        steady share whatever the pace are not a bucket's (a gateway refusing a fifth of all
        calls at random, with a short Retry-After): pacing to them would only slow the run
        down (each estimate is the pace it was held to), so it stops for ``KEEP`` seconds."""
        noise = self.NOISE_COARSE if self.coarse else self.NOISE
        if self.paced_refused > noise * self.paced:
            self.strikes += 1  # (one window may be a rate learned too high, soon re-learned)
        else:
            self.strikes = 0
        # a whole-second Retry-After proves nothing of a bucket: two checks decide (one
        # may hold the creep's overshoot, whose refusals re-learn the rate)
        if self.strikes >= (self.STRIKES_COARSE if self.coarse else self.STRIKES):
            self.rate = None
            self.next = 0.0
            self.off_until = now + self.KEEP
            self.refusals.clear()
            self.readings.clear()
            self.strikes = 0
        self.paced = self.paced_refused = 0

    def refused(self, seq: int, sent_at: float, retry_after: float, now: float) -> None:
        """The send ``seq`` (made at ``sent_at``) was refused with ``retry_after``, which
        came back at ``now``. A refusal is answered at once, so ``now`` dates the server's
        count better than the send (a first flight waits for its connections)."""
        # "1" may mean 10 ms: a whole-second Retry-After dates nothing but the refusal itself
        self.coarse = retry_after >= 1.0 and float(retry_after).is_integer()
        token = now if self.coarse else now + retry_after
        if self.rate is not None and sent_at >= self.since:
            self.paced_refused += 1
        if now < self.off_until:
            return
        wait = 0.0 if self.coarse else retry_after
        if self.refusals and seq <= self.refusals[-1][1]:
            # replies may come back out of order: keep the refusals in send order
            self._insert((sent_at, seq, token, wait))
        else:
            self.refusals.append((sent_at, seq, token, wait))
        self.last_refusal = now
        while self.refusals[0][0] < now - self.KEEP:
            self.refusals.popleft()
        self._estimate()
        rate = self.rate
        if rate is not None and token - now <= 2.0 / rate and self.next < token:
            # the next token a slot or two away: a bucket at its edge (a Retry-After far
            # beyond the spacing is a penalty or noise, which holds only the retries)
            self.next = token

    def _estimate_coarse(self) -> None:
        """The rate from refusal times alone (whole-second Retry-After). Between two refusals
        at a bucket's edge the sends let through are its refill, give or take one, unless it
        sat idle in between (then they are fewer: the refill overflowed): so each refusal
        reads the rate over the shortest span of at least ``SPAN_COARSE`` seconds back, and
        the rate is the largest such reading of the last ``KEEP`` seconds (an idle stretch
        reads low, a saturated one reads the bucket)."""
        refusals = self.refusals
        last = refusals[-1]
        through = 0
        for i in range(len(refusals) - 2, -1, -1):
            first = refusals[i]
            through += refusals[i + 1][1] - first[1] - 1  # sends let through between the two
            span = last[0] - first[0]  # by the sends: k sends went between these two
            if span >= self.SPAN_COARSE:
                if through >= 3:
                    self.readings.append((last[2], through / span))
                break
        while self.readings and self.readings[0][0] < last[2] - self.KEEP:
            self.readings.popleft()
        if not self.readings:
            return
        if self.rate is None:
            self.since = self.last_refusal
            self.paced = self.paced_refused = 0
        self.rate = self.learned = max(r for _, r in self.readings)

    def _insert(self, refusal: tuple[float, int, float, float]) -> None:
        items = list(self.refusals)
        at = len(items)
        while at and items[at - 1][1] > refusal[1]:
            at -= 1
        items.insert(at, refusal)
        self.refusals = deque(items)

    def _estimate(self) -> None:
        if self.coarse:
            self._estimate_coarse()
            return
        refusals = self.refusals
        last = refusals[-1]
        first = refusals[0]  # the longest span kept: the most sends counted
        if last[0] - first[0] < (self.SPAN_COARSE if self.coarse else self.SPAN):
            return
        moved = last[2] - first[2]
        refused_between = len(refusals) - 2
        let_through = (last[1] - first[1] - 1) - refused_between
        if moved <= 0 or let_through < 3:
            return
        rate = let_through / moved
        # A bucket's next token is at most one token's time away (its level is in [0, 1) when
        # it refuses); a Retry-After far longer than that while sends keep getting through is
        # not a bucket's (random 429s with "Retry-After: 1", a gateway's penalty): no pacing.
        if max(first[3], last[3]) * rate > self.TOLERANCE:
            return
        if self.rate is None:
            self.since = self.last_refusal  # (now: the sends paced are the ones after it)
            self.paced = self.paced_refused = 0
        self.rate = self.learned = rate


class Pacer:
    """Waits before a send until the provider's buckets (as last described) hold its cost.

    One per judge, kept across runs: a second ``judge.map`` starts from what the first
    learned. Cheap when a provider sends no rate headers: nothing is known, nothing waits.
    """

    def __init__(self) -> None:
        self._buckets = {kind: _Bucket() for kind in _KINDS}
        # one judge may run in several event loops (each asyncio.run, Jupyter's worker
        # thread); what it learned of the provider's buckets is shared, the queue is per loop
        self._locks: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock] = (
            weakref.WeakKeyDictionary()
        )
        self._seq = 0
        self._token_cost = 0.0
        self.staleness = 0.0
        """Where between send (0) and reply (1) the provider counts a request, as learned."""
        self.waited = 0.0
        self.bare: BareLimit | None = None
        """What a limiter that sends no rate headers taught (only its 429s' Retry-After)."""

    def token_cost(self, estimate: Callable[[], float]) -> float:
        """What a request will take from the token bucket: the mean of what replies used, or
        ``estimate()`` before any reply said (called only then: it reads the whole prompt)."""
        return self._token_cost or estimate()

    def used(self, tokens: int) -> None:
        if tokens > 0:
            mean = self._token_cost
            self._token_cost = tokens if mean == 0 else 0.9 * mean + 0.1 * tokens

    async def before_send(self, tokens: float, max_wait: float = 60.0) -> Ticket:
        """Wait for room, take this request's cost; returns its ticket for ``observe``.

        Waits at most ``max_wait`` seconds per send (a daily quota says "6h"): past that the
        request goes, and a 429 with its Retry-After decides, under the retry policy's caps.
        """
        costs = {"requests": 1.0, "tokens": tokens}
        bare = self.bare
        if bare is not None:
            wait = min(bare.slot(time.monotonic()), max_wait)
            if wait > _SLACK:
                self.waited += wait
                await asyncio.sleep(wait)
        if all(b.level is None for b in self._buckets.values()):
            return self._take(costs)
        loop = asyncio.get_running_loop()
        lock = self._locks.get(loop)
        if lock is None:
            lock = self._locks.setdefault(loop, asyncio.Lock())
        waited = 0.0
        async with lock:  # first come, first served
            while True:
                now = time.monotonic()
                wait = 0.0
                for kind, bucket in self._buckets.items():
                    bucket.refill(now)
                    wait = max(wait, bucket.wait_for(costs[kind]))
                if wait <= _SLACK or waited >= max_wait:  # (float dust must not loop)
                    return self._take(costs)
                wait = min(wait, max_wait - waited)
                waited += wait
                self.waited += wait
                await asyncio.sleep(wait)

    def _take(self, costs: Mapping[str, float]) -> Ticket:
        self._seq += 1
        before: dict[str, float] = {}
        informed = False
        for kind, bucket in self._buckets.items():
            bucket.sent += costs[kind]
            before[kind] = bucket.sent
            if bucket.level is not None:
                bucket.level -= costs[kind]
                informed = True
        return Ticket(self._seq, before, dict(costs), time.monotonic(), informed)

    def refund(self, ticket: Ticket) -> None:
        """A refused request took nothing from the provider's buckets: give its cost back.

        Call it before ``observe`` of the same reply: the refusal's headers describe the
        bucket without it. A refusal of a send made while we knew the buckets also says our
        dating of the replies was too kind: a provider counts a request between its send
        and its reply; we start by assuming at the send (right for models that think for
        seconds) and move toward the reply. Sends made before any reply taught us anything
        (the first flight) say nothing about that.
        """
        if ticket.informed:
            self.staleness = min(1.0, self.staleness + 0.2)
        for kind, bucket in self._buckets.items():
            bucket.refund(ticket.seq, ticket.costs.get(kind, 0.0))

    def refused(self, ticket: Ticket, retry_after: float) -> None:
        """The send holding ``ticket`` met a 429 with Retry-After and no rate headers: a bare
        limiter, whose refill rate successive refusals teach (``BareLimit``)."""
        bare = self.bare
        if bare is None:
            bare = self.bare = BareLimit()
        bare.refused(ticket.seq, ticket.at, retry_after, time.monotonic())

    def remaining(self, calls: int | None) -> None:
        """The run has ``calls`` left to send (None: unknown, or a new run).

        The creep above a bare limiter's learned rate finds a risen limit at the price of
        the odd refusal, and a refused call waits its Retry-After, a whole second when the
        limiter says whole seconds. In a run's last seconds no gain repays that: a refusal
        there leaves the run's tail waiting on it (about a tenth of an 8-second run). So
        the run's last ``ENDGAME`` seconds of calls go at the rate last learned."""
        bare = self.bare
        if bare is None:
            return
        rate = bare.learned
        end = calls is not None and rate is not None and calls < rate * bare.ENDGAME
        if end and not bare.endgame and bare.rate is not None and rate is not None:
            bare.rate = min(bare.rate, rate)
        bare.endgame = end

    @property
    def paces_bare_limit(self) -> bool:
        """A bare limiter's rate is learned: every send waits for its slot."""
        return self.bare is not None and self.bare.rate is not None

    def observe(self, headers: RateHeaders | None, ticket: Ticket) -> None:
        """A reply (to the request holding ``ticket``) described the buckets."""
        if headers is None:
            return
        now = time.monotonic()
        for kind, quota in headers.quotas:
            self._buckets[kind].observe(
                quota, ticket.seq, ticket.sent[kind], ticket.at, now, self.staleness
            )
        self.staleness = max(0.0, self.staleness - 0.01)  # about 5% refused at balance
