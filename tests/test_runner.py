"""The engine over real HTTP: limits, retries, timeouts, interruption and resume, progress, cost."""

from __future__ import annotations

import _thread
import asyncio
import time
import warnings
from collections import defaultdict
from email.utils import formatdate
from typing import Any

import pytest

from rubriclab.judges import Judge
from rubriclab.judges.openai import parse_retry_after
from rubriclab.runner import AdaptiveLimit, RetryPolicy, run_sync
from rubriclab.testing import FakeJudgeServer, Faults, ServerReply

TRANSPORTS = ["httpx", "aiohttp"]


def judge_for(server: FakeJudgeServer, **kw: Any) -> Judge:
    kw.setdefault("backoff_base", 0.01)
    return Judge(server.url, model="judge-model", **kw)


def content(body: dict[str, Any]) -> str:
    text: str = body["messages"][-1]["content"]
    return text


# -- sync entry points ------------------------------------------------------------------------


def test_run_sync_in_a_script_and_inside_a_running_loop(capfd: pytest.CaptureFixture[str]) -> None:
    async def answer() -> int:
        await asyncio.sleep(0)
        return 42

    assert run_sync(answer()) == 42

    async def notebook_cell() -> list[str | None]:
        assert run_sync(answer()) == 42  # a loop is running here, as in Jupyter
        return [r.text for r in Judge("mock").map(["a", "b"], progress=False)]

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no event-loop or never-awaited warnings
        texts = asyncio.run(notebook_cell())
    assert all(t and t.startswith("[mock judge]") for t in texts)
    err = capfd.readouterr().err
    assert "never awaited" not in err and "Event loop" not in err


def test_run_sync_raises_what_the_coroutine_raises() -> None:
    async def fail() -> None:
        raise ValueError("bad row 3")

    with pytest.raises(ValueError, match="bad row 3"):
        run_sync(fail())

    async def in_loop() -> None:
        run_sync(fail())

    with pytest.raises(ValueError, match="bad row 3"):
        asyncio.run(in_loop())


# -- interruption and resume -------------------------------------------------------------------


def _succeeded_before(server: FakeJudgeServer, upto: int) -> set[str]:
    return {content(r.body) for r in server.log[:upto] if r.succeeded}


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_cancelling_a_run_keeps_finished_calls_and_the_rerun_resumes(
    transport: str, capsys: pytest.CaptureFixture[str]
) -> None:
    questions = [f"question {i}" for i in range(40)]
    with FakeJudgeServer(latency=0.1) as server:
        judge = judge_for(server, max_concurrency=4, transport=transport)

        async def scenario() -> None:
            task = asyncio.ensure_future(judge.amap(questions, progress=False))
            await asyncio.sleep(0.35)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            finished = judge.last_run.succeeded
            assert judge.last_run.interrupted and 0 < finished < 40
            before = server.calls
            delivered = _succeeded_before(server, before)
            replies = await judge.amap(questions, progress=False)
            assert [r.ok for r in replies] == [True] * 40
            kept = {q for q, r in zip(questions, replies, strict=True) if r.cached}
            assert len(kept) == finished and kept <= delivered
            rerun = [content(r.body) for r in server.log[before:]]
            assert len(rerun) == 40 - finished  # nothing that finished was asked again
            assert not set(rerun) & kept
            await judge.aclose()

        asyncio.run(scenario())
    err = capsys.readouterr().err
    assert "run interrupted after" in err and "resume" in err


def _sync_map(judge: Judge, questions: list[str], inside_loop: bool) -> None:
    if not inside_loop:
        judge.map(questions, progress=False)
        return
    loop = asyncio.new_event_loop()  # Jupyter: the sync call runs inside a running loop

    async def cell() -> None:
        judge.map(questions, progress=False)

    try:
        loop.run_until_complete(cell())
    finally:
        loop.close()


@pytest.mark.parametrize("inside_loop", [False, True])
def test_ctrl_c_in_a_sync_run_keeps_finished_calls(inside_loop: bool) -> None:
    questions = [f"q{i}" for i in range(40)]
    seen = {"n": 0}

    def interrupt_at_the_twelfth(body: dict[str, Any]) -> str:
        # Ctrl-C while calls are in flight, tied to progress rather than to a wall-clock timer,
        # so a slow or loaded machine interrupts at the same point of the run
        seen["n"] += 1
        if seen["n"] == 12:
            _thread.interrupt_main()
        return "ok"

    with FakeJudgeServer(latency=0.1, responder=interrupt_at_the_twelfth) as server:
        judge = judge_for(server, max_concurrency=4)
        with pytest.raises(KeyboardInterrupt):
            _sync_map(judge, questions, inside_loop)
        finished = judge.last_run.succeeded
        assert 0 < finished < 40
        before = server.calls
        replies = judge.map(questions, progress=False)
        assert all(r.ok for r in replies)
        assert server.calls - before == 40 - finished


# -- retries ------------------------------------------------------------------------------------


def test_parse_retry_after_seconds_dates_and_milliseconds() -> None:
    now = time.time()
    assert parse_retry_after({"retry-after": "3"}) == 3.0
    assert parse_retry_after({"retry-after": "0.25"}) == 0.25
    assert parse_retry_after({"retry-after-ms": "1500", "retry-after": "9"}) == 1.5
    date = formatdate(now + 30, usegmt=True)
    assert parse_retry_after({"retry-after": date}, now=now) == pytest.approx(30, abs=1)
    assert parse_retry_after({"retry-after": formatdate(now - 60, usegmt=True)}, now=now) == 0
    assert parse_retry_after({"retry-after": "soon"}) is None
    assert parse_retry_after({}) is None


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_429_waits_for_retry_after_then_succeeds(
    fake_judge: FakeJudgeServer, transport: str
) -> None:
    count = {"n": 0}

    def limited_twice(body: dict[str, Any]) -> Any:
        count["n"] += 1
        if count["n"] <= 2:
            return ServerReply(429, {"error": {"message": "slow down"}}, {"retry-after": "0.3"})
        return "ok"

    fake_judge.responder = limited_twice
    reply = judge_for(fake_judge, transport=transport).complete("x")
    assert reply.ok and reply.attempts == 3
    times = [r.received for r in fake_judge.log]
    assert times[1] - times[0] >= 0.3 and times[2] - times[1] >= 0.3
    assert reply.latency >= 0.6


def test_retry_after_is_capped(fake_judge: FakeJudgeServer) -> None:
    fake_judge.faults = Faults(rate_503=1.0, retry_after=3600)
    start = time.perf_counter()
    reply = judge_for(fake_judge, max_retries=2, retry_after_cap=0.05).complete("x")
    assert time.perf_counter() - start < 5
    assert reply.error is not None and reply.error.type == "server_error"
    assert reply.error.attempts == 3 and fake_judge.calls == 3


def test_full_jitter_backoff_stays_under_its_cap() -> None:
    import random

    policy = RetryPolicy(max_retries=8, backoff_base=0.5, backoff_cap=4.0)
    rng = random.Random(1)
    delays = [policy.delay(n, None, rng) for n in range(8) for _ in range(50)]
    assert all(0 <= d <= 4.0 for d in delays)
    assert max(delays) > 3.0  # later retries really wait longer
    assert policy.delay(0, 2.0, rng) >= 2.0  # Retry-After wins over backoff


def test_a_call_that_keeps_failing_is_recorded_with_its_raw_body(
    fake_judge: FakeJudgeServer,
) -> None:
    fake_judge.faults = Faults(rate_500=1.0)
    reply = judge_for(fake_judge, max_retries=2).complete("x")
    assert reply.text is None and reply.error is not None
    assert (reply.error.type, reply.error.status, reply.error.attempts) == ("server_error", 500, 3)
    assert "fake server error" in (reply.error.raw or "")
    assert reply.attempts == 3 and fake_judge.calls == 3


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize(
    ("faults", "kind"),
    [
        (Faults(rate_429=1.0, retry_after=0), "rate_limited"),
        (Faults(rate_503=1.0, retry_after=0), "server_error"),
        (Faults(rate_hang=1.0), "timeout"),
        (Faults(rate_malformed=1.0), "malformed_response"),
        (Faults(rate_truncated=1.0), "transport"),
        (Faults(rate_empty=1.0), "empty_response"),
    ],
)
def test_each_fault_is_retried_then_recorded_by_type(
    transport: str, faults: Faults, kind: str
) -> None:
    with FakeJudgeServer(faults=faults) as server:
        judge = judge_for(server, max_retries=1, timeout=0.3, transport=transport)
        replies = judge.map(["a", "b"], progress=False)
        assert [r.error.type if r.error else None for r in replies] == [kind, kind]
        assert [r.attempts for r in replies] == [2, 2]
        assert server.calls == 4


# -- concurrency --------------------------------------------------------------------------------


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_peak_in_flight_reaches_the_limit_and_never_passes_it(transport: str) -> None:
    with FakeJudgeServer(latency=0.05) as server:
        judge = judge_for(server, max_concurrency=8, transport=transport)
        replies = judge.map([f"q{i}" for i in range(60)], progress=False)
        assert all(r.ok for r in replies)
        assert server.peak_in_flight == 8
        assert judge.last_run.peak_in_flight == 8


def test_adaptive_limit_halves_once_per_window_and_grows_back() -> None:
    async def scenario() -> None:
        limit = AdaptiveLimit(16)
        epochs = [await limit.acquire() for _ in range(16)]
        assert limit.in_flight == 16 and limit.peak == 16
        for epoch in epochs[:10]:  # ten 429s from the same window: one cut
            limit.throttled(epoch)
        assert limit.limit == 8 and limit.throttles == 1
        for _ in range(16):
            limit.release()
        newer = await limit.acquire()
        limit.throttled(newer)  # a call started after the cut: cut again
        assert limit.limit == 4
        limit.release()
        for _ in range(200):
            limit.succeeded()
        assert limit.limit == 16  # grown back, never above the maximum
        limit.succeeded()
        assert limit.limit == 16

    asyncio.run(scenario())


def test_waiters_get_slots_in_order_and_cancelled_waiters_give_theirs_back() -> None:
    async def scenario() -> None:
        limit = AdaptiveLimit(1)
        await limit.acquire()
        order: list[int] = []

        async def wait(i: int) -> None:
            await limit.acquire()
            order.append(i)
            limit.release()

        tasks = [asyncio.ensure_future(wait(i)) for i in range(3)]
        await asyncio.sleep(0)
        tasks[1].cancel()
        limit.release()
        await asyncio.gather(*tasks, return_exceptions=True)
        assert order == [0, 2] and limit.in_flight == 0

    asyncio.run(scenario())


def test_rate_limiting_cuts_the_number_in_flight(fake_judge: FakeJudgeServer) -> None:
    seen: list[tuple[int, bool]] = []

    def limited_at_first(body: dict[str, Any]) -> Any:
        limited = len(fake_judge.log) <= 40
        seen.append((fake_judge.in_flight, limited))
        if limited:
            return ServerReply(429, {"error": {"message": "slow"}}, {"retry-after": "0.05"})
        return "ok"

    fake_judge.responder = limited_at_first
    fake_judge.latency = 0.02
    judge = judge_for(fake_judge, max_concurrency=16, max_retries=10)
    replies = judge.map([f"q{i}" for i in range(120)], progress=False)
    assert all(r.ok for r in replies)
    assert judge.last_run.throttles >= 2
    assert fake_judge.peak_in_flight <= 16
    after = [n for n, limited in seen if not limited][:20]
    assert max(after) < 16  # the engine backed off after the 429s


# -- cache, progress and accounting -----------------------------------------------------------


def test_identical_calls_in_one_run_are_made_once(fake_judge: FakeJudgeServer) -> None:
    replies = judge_for(fake_judge).map(["same", "same", "other", "same"], progress=False)
    assert fake_judge.calls == 2
    assert [r.cached for r in replies] == [False, True, False, True]
    assert len({r.text for r in replies}) == 2


def test_progress_bar_only_for_runs_of_more_than_a_few_calls(
    capsys: pytest.CaptureFixture[str],
) -> None:
    judge = Judge("mock", cache=False)
    judge.map([f"q{i}" for i in range(20)], desc="grading")
    err = capsys.readouterr().err
    assert "grading" in err and "20/20" in err
    judge.map([f"q{i}" for i in range(5)])
    judge.map([f"q{i}" for i in range(20)], progress=False)
    assert capsys.readouterr().err == ""


def test_tokens_and_cost_per_run(fake_judge: FakeJudgeServer) -> None:
    judge = judge_for(fake_judge, prices={"judge-model": (1.0, 4.0)})
    replies = judge.map([f"q{i}" for i in range(10)], progress=False)
    stats = judge.last_run
    assert stats.calls == 10 and stats.succeeded == 10 and stats.failed == 0
    assert stats.usage.prompt_tokens == sum(r.usage.prompt_tokens for r in replies)
    assert stats.cost == pytest.approx(sum(r.cost or 0 for r in replies))
    expected = sum(r.usage.prompt_tokens * 1 + r.usage.completion_tokens * 4 for r in replies)
    assert stats.cost == pytest.approx(expected / 1e6)
    judge.map([f"q{i}" for i in range(10)], progress=False)
    assert judge.last_run.cached == 10 and judge.last_run.cost == 0.0  # the re-run was free
    assert "10 calls (10 cached, 0 failed" in judge.last_run.describe()


# -- reliability under a fault mix ----------------------------------------------------------------

MIX = Faults(
    rate_429=0.20, rate_500=0.05, rate_hang=0.02, rate_malformed=0.05, retry_after=0.02, seed=9
)


def _by_question(server: FakeJudgeServer) -> dict[str, list[Any]]:
    grouped: dict[str, list[Any]] = defaultdict(list)
    for record in server.log:
        grouped[content(record.body)].append(record)
    return grouped


@pytest.mark.slow
@pytest.mark.parametrize("transport", TRANSPORTS)
def test_a_thousand_calls_under_a_fault_mix_all_succeed_with_enough_retries(
    transport: str,
) -> None:
    questions = [f"question {i}" for i in range(1000)]
    with FakeJudgeServer(faults=MIX) as server:
        judge = judge_for(
            server,
            transport=transport,
            max_concurrency=32,
            timeout=0.3,
            max_retries=12,
            backoff_base=0.02,
            backoff_cap=0.2,
            cache=False,
        )
        replies = judge.map(questions, progress=False)
        assert [r.ok for r in replies] == [True] * 1000
        assert [r.text for r in replies] == [
            server.responder({"messages": [{"role": "user", "content": q}]}) for q in questions
        ]
        grouped = _by_question(server)
        for question, reply in zip(questions, replies, strict=True):
            records = grouped[question]
            assert [r.succeeded for r in records] == [False] * (len(records) - 1) + [True]
            assert reply.attempts == len(records)  # the server saw exactly our attempts
        kinds = {r.fault for r in server.log}
        assert {"429", "500", "hang", "malformed"} <= kinds
        assert server.peak_in_flight <= 32


@pytest.mark.slow
@pytest.mark.parametrize("transport", TRANSPORTS)
def test_with_few_retries_every_call_ends_as_a_success_or_a_recorded_error(
    transport: str,
) -> None:
    questions = [f"question {i}" for i in range(1000)]
    with FakeJudgeServer(faults=MIX) as server:
        judge = judge_for(
            server, transport=transport, max_concurrency=32, timeout=0.3, max_retries=1
        )
        replies = judge.map(questions, progress=False)
        assert len(replies) == 1000
        failed = [r for r in replies if not r.ok]
        assert failed and len(failed) < 200
        for reply in failed:
            assert reply.error is not None and reply.text is None
            assert reply.error.type in {
                "rate_limited",
                "server_error",
                "timeout",
                "malformed_response",
            }
            assert reply.error.attempts == 2
        assert server.calls == sum(r.attempts for r in replies)
        grouped = _by_question(server)
        for question in questions:
            outcomes = [r.succeeded for r in grouped[question]]
            assert True not in outcomes[:-1]  # no call after a success


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_async_use_without_aclose_leaves_no_unclosed_connections(
    fake_judge: FakeJudgeServer, transport: str, capfd: pytest.CaptureFixture[str]
) -> None:
    import gc

    judge = judge_for(fake_judge, transport=transport)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ResourceWarning)
        assert len(asyncio.run(judge.amap(["a", "b"], progress=False))) == 2
        del judge
        gc.collect()
    assert "Unclosed" not in capfd.readouterr().err


def test_a_run_leaves_the_garbage_collector_as_it_found_it() -> None:
    import gc

    before = (gc.get_threshold(), gc.get_freeze_count(), gc.isenabled())
    Judge("mock", cache=False).map([f"q{i}" for i in range(50)], progress=False)
    assert (gc.get_threshold(), gc.get_freeze_count(), gc.isenabled()) == before


def test_many_concurrent_acomplete_calls_share_one_limit() -> None:
    with FakeJudgeServer(latency=0.05) as server:
        judge = judge_for(server, max_concurrency=8)

        async def fan_out() -> list[Any]:
            replies = await asyncio.gather(*(judge.acomplete(f"q{i}") for i in range(40)))
            await judge.aclose()
            return list(replies)

        replies = asyncio.run(fan_out())
        assert [r.text is not None for r in replies] == [True] * 40
        assert server.peak_in_flight == 8


def test_a_data_error_in_a_plain_script_is_raised_alone(tmp_path: Any) -> None:
    """No "no running event loop ... During handling of the above exception" noise first."""
    import subprocess
    import sys

    script = tmp_path / "judge.py"
    script.write_text(
        "import pandas as pd\n"
        "import rubriclab as rl\n"
        "rl.evaluate(pd.DataFrame({'prompt': ['p']}), [rl.metrics.TEXT_QUALITY], judge='mock')\n",
        encoding="utf-8",
    )
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 1
    assert "no 'response' column" in done.stderr
    assert "During handling of the above exception" not in done.stderr
    assert "no running event loop" not in done.stderr
