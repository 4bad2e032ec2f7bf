"""Pacing from rate-limit headers, on a fake clock: what a reply teaches, and what a send waits."""

from __future__ import annotations

import asyncio

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
