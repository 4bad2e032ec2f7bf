"""Pacing from rate-limit headers, on a fake clock: what a reply teaches, and what a send waits."""

from __future__ import annotations

import asyncio
import math

import pytest

from rubriclab.judges import pacing
from rubriclab.judges.pacing import Pacer, parse_rate_headers


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0
        self.slept: list[float] = []

    def monotonic(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    c = Clock()
    monkeypatch.setattr(pacing.time, "monotonic", c.monotonic)
    monkeypatch.setattr(pacing.asyncio, "sleep", c.sleep)
    return c


def headers(remaining: int, reset: str, limit: int = 10) -> pacing.RateHeaders:
    parsed = parse_rate_headers(
        {
            "x-ratelimit-limit-requests": str(limit),
            "x-ratelimit-remaining-requests": str(remaining),
            "x-ratelimit-reset-requests": reset,
        }
    )
    assert parsed is not None
    return parsed


def test_without_headers_nothing_waits(clock: Clock) -> None:
    async def run() -> None:
        pacer = Pacer()
        for _ in range(100):
            ticket = await pacer.before_send(50)
            pacer.observe(parse_rate_headers({}), ticket)

    asyncio.run(run())
    assert clock.slept == []


def test_an_empty_bucket_is_waited_for_at_its_refill_rate(clock: Clock) -> None:
    async def run() -> None:
        pacer = Pacer()
        first = await pacer.before_send(1)
        # the provider: 10 a second, the bucket is empty, full again in 1 s
        pacer.observe(headers(0, "1s"), first)
        for _ in range(5):
            await pacer.before_send(1)

    asyncio.run(run())
    assert sum(clock.slept) == pytest.approx(0.5, abs=0.11)  # 5 sends at ~10/s
    assert all(s <= 0.11 for s in clock.slept)


def test_a_reply_about_an_older_send_does_not_overrule_a_newer_one(clock: Clock) -> None:
    async def run() -> None:
        pacer = Pacer()
        older = await pacer.before_send(1)
        newer = await pacer.before_send(1)
        pacer.observe(headers(9, "100ms"), newer)
        pacer.observe(headers(0, "1s"), older)  # stale: a newer reply already spoke
        await pacer.before_send(1)

    asyncio.run(run())
    assert clock.slept == []


def test_headers_parse_remaining_reset_and_limit() -> None:
    parsed = parse_rate_headers(
        {
            "x-ratelimit-remaining-requests": "59",
            "x-ratelimit-reset-requests": "6m0s",
            "x-ratelimit-limit-tokens": "150000",
            "x-ratelimit-remaining-tokens": "0",
            "x-ratelimit-reset-tokens": "20ms",
        }
    )
    assert parsed is not None and parsed.exhausted()
    quotas = dict(parsed.quotas)
    assert quotas["requests"].reset == 360.0 and quotas["requests"].remaining == 59
    assert quotas["tokens"].limit == 150000 and quotas["tokens"].reset == 0.02
    assert parse_rate_headers({"x-ratelimit-remaining-requests": "lots"}) is None


def test_a_long_quota_reset_is_waited_at_most_max_wait(clock: Clock) -> None:
    async def run() -> None:
        pacer = Pacer()
        first = await pacer.before_send(1)
        pacer.observe(headers(0, "6h0m0s", limit=1), first)  # one a day, spent
        await pacer.before_send(1, max_wait=60)

    asyncio.run(run())
    assert sum(clock.slept) == pytest.approx(60)


def test_a_refused_send_is_not_counted_against_an_older_sends_reply(clock: Clock) -> None:
    async def run() -> None:
        pacer = Pacer()
        first = await pacer.before_send(1)
        pacer.observe(headers(2, "1s"), first)  # 2 left, 10 a second
        older = await pacer.before_send(1)
        newer = await pacer.before_send(1)
        pacer.refund(newer)  # refused: it took nothing
        pacer.observe(headers(1, "1s"), older)  # 1 left after the older one, none after
        await pacer.before_send(1)  # that one is there: no wait

    asyncio.run(run())
    assert clock.slept == []


def test_a_refusal_counts_once_and_its_own_headers_set_the_level(clock: Clock) -> None:
    async def run() -> None:
        pacer = Pacer()
        first = await pacer.before_send(1)
        pacer.observe(headers(1, "1s"), first)
        sent = await pacer.before_send(1)
        refused = await pacer.before_send(1)  # our copy said empty, yet we had to send
        pacer.observe(headers(0, "1s"), sent)
        pacer.refund(refused)
        pacer.observe(headers(0, "1s"), refused)  # empty, not counting the refused send
        await pacer.before_send(1)

    asyncio.run(run())
    # the bucket is empty: one request's refill (0.1 s at 10/s), not none and not two
    assert sum(clock.slept) == pytest.approx(0.1, abs=0.02)


def test_refusals_of_the_first_flight_teach_nothing_about_staleness(clock: Clock) -> None:
    async def run() -> Pacer:
        pacer = Pacer()
        flight = [await pacer.before_send(1) for _ in range(8)]  # nothing known yet
        pacer.observe(headers(0, "1s"), flight[0])
        for ticket in flight[1:]:
            pacer.refund(ticket)
            pacer.observe(headers(0, "1s"), ticket)
        informed = await pacer.before_send(1)
        pacer.refund(informed)  # refused although we waited for room: our dating was off
        return pacer

    pacer = asyncio.run(run())
    assert pacer.staleness == pytest.approx(0.2)


def test_older_sends_refusals_do_not_make_room_in_a_newer_sends_reply(clock: Clock) -> None:
    async def run() -> None:
        pacer = Pacer()
        first = await pacer.before_send(1)
        pacer.observe(headers(3, "1s"), first)  # 3 left
        a, b, c = [await pacer.before_send(1) for _ in range(3)]
        pacer.refund(a)  # a and b refused (their replies' headers lost or late)
        pacer.refund(b)
        pacer.observe(headers(2, "1s"), c)  # c took one of the 3: 2 left, as we had it
        for _ in range(3):
            await pacer.before_send(1)  # the third waits for a refill

    asyncio.run(run())
    assert 0.1 < sum(clock.slept) < 0.2  # one request's refill at 7 a second


def test_an_image_costs_a_flat_guess_not_the_length_of_its_data_url() -> None:
    """A pasted screenshot's data URL is megabytes of base64: read as text it would look like
    a million tokens and hold the run until a bucket that size refilled."""
    url = "data:image/png;base64," + "A" * 2_000_000
    text = {"type": "text", "text": "x" * 400}
    messages = [
        {"role": "system", "content": "y" * 40},
        {"role": "user", "content": [text, {"type": "image_url", "image_url": {"url": url}}]},
    ]
    assert pacing.estimate_tokens(messages) == 440 / 4 + 2 * 4 + pacing.IMAGE_TOKENS


def test_the_prompt_is_read_for_an_estimate_only_until_replies_said_what_calls_cost() -> None:
    pacer = Pacer()
    asked: list[int] = []

    def estimate() -> float:
        asked.append(1)
        return 50.0

    assert pacer.token_cost(estimate) == 50.0 and asked == [1]
    pacer.used(120)
    assert pacer.token_cost(estimate) == 120.0 and asked == [1]  # not read again


# -- a limiter that sends only Retry-After (issue 25, finding 10) ---------------------------------


class Bucket:
    """A provider's token bucket on the test's clock: refuses with the exact wait."""

    def __init__(
        self, clock: Clock, rate: float, burst: float, whole_seconds: bool = False
    ) -> None:
        self.clock, self.rate, self.capacity = clock, rate, burst
        self.level, self.stamp = burst, clock.now
        self.whole_seconds = whole_seconds  # Retry-After rounded up to whole seconds

    def admit(self) -> float | None:
        """None when the send is let through, else its Retry-After."""
        now = self.clock.now
        self.level = min(self.capacity, self.level + (now - self.stamp) * self.rate)
        self.stamp = now
        if self.level >= 1.0:
            self.level -= 1.0
            return None
        wait = (1.0 - self.level) / self.rate
        return float(math.ceil(wait)) if self.whole_seconds else wait


def drive(
    pacer: Pacer,
    clock: Clock,
    bucket: Bucket | None,
    n: int,
    noise: int = 0,
    noise_wait: float = 1.0,
) -> int:
    """``n`` sends as a fast client makes them (2 ms apart unless the pacer waits); every
    ``noise``-th is refused with ``noise_wait`` by a gateway (no bucket). Refusals counted."""

    async def run() -> int:
        refused = 0
        for i in range(n):
            ticket = await pacer.before_send(1)
            wait = bucket.admit() if bucket is not None else None
            if noise and i % noise == noise - 1:
                wait = noise_wait
            if wait is not None:
                refused += 1
                pacer.refund(ticket)
                pacer.refused(ticket, wait)
            pacer.observe(None, ticket)
            clock.now += 0.002
        return refused

    return asyncio.run(run())


def test_a_bare_buckets_rate_is_learned_and_paced_to(clock: Clock) -> None:
    pacer = Pacer()
    bucket = Bucket(clock, rate=50.0, burst=5)
    start = clock.now
    first = drive(pacer, clock, bucket, 100)
    assert pacer.bare is not None and pacer.bare.rate == pytest.approx(50.0, rel=0.05)
    steady = drive(pacer, clock, bucket, 500)
    assert steady <= 500 * 0.08  # about one in twenty: the margin that keeps it learning
    sent = 600 - first - steady
    assert sent / (clock.now - start) >= 0.9 * 50.0  # at the limit, not below it


def test_a_bare_bucket_without_the_pacer_is_refused_most_of_the_time(clock: Clock) -> None:
    """The negative control: the same client and bucket, no learning (a pacer that is told
    nothing), refused on most sends."""
    pacer = Pacer()
    bucket = Bucket(clock, rate=50.0, burst=5)

    async def run() -> int:
        refused = 0
        for _ in range(500):
            await pacer.before_send(1)
            refused += bucket.admit() is not None
            clock.now += 0.002
        return refused

    assert asyncio.run(run()) >= 500 * 0.8


def test_random_429s_with_a_long_retry_after_teach_no_pace(clock: Clock) -> None:
    """A gateway's stray 429s ("Retry-After: 1.5" while every other send gets through) are
    not a bucket's: a bucket's next token is at most one token's time away."""
    pacer = Pacer()
    refused = drive(pacer, clock, None, 1000, noise=20, noise_wait=1.5)
    assert refused == 50
    assert pacer.bare is not None and pacer.bare.rate is None
    assert clock.slept == []  # nothing was held


def test_a_bare_bucket_with_whole_second_retry_after_is_paced_near_its_rate(
    clock: Clock,
) -> None:
    """Issue 25: a limiter saying only "Retry-After: 1" (its next token 20 ms away) was not
    paced at all. The sends let through between refusals, by their send times, read its rate;
    paced to it, the bucket refuses few and passes near its limit."""
    pacer = Pacer()
    bucket = Bucket(clock, rate=50.0, burst=5, whole_seconds=True)
    start = clock.now
    first = drive(pacer, clock, bucket, 400)  # 0.8 s unpaced: a reading needs 0.5 s
    assert pacer.bare is not None and pacer.bare.rate == pytest.approx(50.0, rel=0.1)
    steady = drive(pacer, clock, bucket, 1000)
    assert steady <= 1000 * 0.05, steady
    sent = 1400 - first - steady
    assert sent / (clock.now - start) >= 0.9 * 50.0


def test_a_whole_second_bucket_without_the_pacer_is_refused_most_of_the_time(
    clock: Clock,
) -> None:
    """The negative control: the same bucket and client, every refusal told to a pacer that
    reads nothing from whole seconds (the old rule: no reading past the token-time check)."""
    pacer = Pacer()
    bucket = Bucket(clock, rate=50.0, burst=5, whole_seconds=True)
    pacing.BareLimit.SPAN_COARSE, saved = math.inf, pacing.BareLimit.SPAN_COARSE
    try:
        refused = drive(pacer, clock, bucket, 1000)
    finally:
        pacing.BareLimit.SPAN_COARSE = saved
    assert refused >= 1000 * 0.8
    assert pacer.bare is not None and pacer.bare.rate is None


def test_random_429s_with_whole_second_retry_after_are_tried_then_left_unpaced(
    clock: Clock,
) -> None:
    """ "Retry-After: 1" at random (a gateway, every 20th send) reads like a bucket at first;
    paced below what it read, the refusals go on at their share, which no bucket does: two
    checks (200 sends) and the pacing stops, having cost little."""
    pacer = Pacer()
    start = clock.now
    refused = drive(pacer, clock, None, 2000, noise=20)
    assert refused == 100
    assert pacer.bare is not None and pacer.bare.rate is None  # stopped
    unpaced = 2000 * 0.002
    assert clock.now - start <= 1.06 * unpaced  # at most a few per cent slower


def test_a_fifth_of_calls_refused_at_random_with_a_short_retry_after_is_not_paced_down(
    clock: Clock,
) -> None:
    """With a Retry-After of 3 ms the refusals can look like a bucket's edge at first; but paced
    below the rate learned, a bucket refuses almost nothing, and these go on at a fifth: the
    pacer stops (before, each estimate was the pace it had held the run to, down and down)."""
    pacer = Pacer()
    start = clock.now
    refused = drive(pacer, clock, None, 3000, noise=5, noise_wait=0.003)
    assert refused == 600
    assert 3000 / (clock.now - start) >= 0.8 * 500  # the client's own pace: one per 2 ms


@pytest.mark.parametrize("endgame", [True, False])
def test_a_runs_last_calls_do_not_creep_past_a_whole_second_buckets_rate(
    clock: Clock, endgame: bool
) -> None:
    """Issue 25: a refusal in a run's last second left its tail waiting a whole second on
    the refused call (Retry-After: 1), about a tenth of the ratelimit benchmark's run. The
    creep that causes those refusals stops for the last calls (the negative control: with
    calls left to send, it goes on and the odd send is refused, as it should)."""
    pacer = Pacer()
    bucket = Bucket(clock, rate=50.0, burst=5, whole_seconds=True)
    drive(pacer, clock, bucket, 400)
    drive(pacer, clock, bucket, 500)
    assert pacer.bare is not None and pacer.bare.learned is not None
    pacer.remaining(60 if endgame else 10_000)  # 60 calls: 1.2 s at 50/s
    refused = drive(pacer, clock, bucket, 400)  # 8 s of sends: the creep would find the edge
    if endgame:
        assert refused == 0
        assert pacer.bare.rate == pacer.bare.learned
    else:
        assert refused >= 1
    pacer.remaining(None)  # a new run: the creep is back
    assert not pacer.bare.endgame
