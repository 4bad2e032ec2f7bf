"""Batch API judges over real HTTP: the fake /v1/files + /v1/batches server on 127.0.0.1."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import rubriclab as rl
from rubriclab.judges import JudgeConfigError, Request
from rubriclab.judges.batch import BatchError, split_lines
from rubriclab.judges.pricing import PRICES, cost_of
from rubriclab.testing.batch_server import FakeBatchServer, ManualClock

PROMPTS = [f"Rate answer {i}: the capital of France is Paris." for i in range(7)]


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
def server(clock: ManualClock) -> Iterator[FakeBatchServer]:
    with FakeBatchServer(clock=clock, run_seconds=60, api_key="sk-batch-test") as s:
        yield s


def judge(server: FakeBatchServer, tmp_path: Path, **kw: Any) -> rl.Judge:
    return rl.Judge(
        server.url,
        model="gpt-4o-mini",
        api_key="sk-batch-test",
        batch=True,
        batch_poll_interval=0.01,
        cache=kw.pop("cache", tmp_path / "cache.sqlite3"),
        max_retries=0,
        **kw,
    )


def run_in_thread(fn: Any) -> tuple[threading.Thread, dict[str, Any]]:
    out: dict[str, Any] = {}

    def target() -> None:
        try:
            out["value"] = fn()
        except BaseException as exc:  # surfaced by the test
            out["error"] = exc

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    return thread, out


def test_batch_run_answers_in_order_at_batch_prices(
    server: FakeBatchServer, clock: ManualClock, tmp_path: Path
) -> None:
    j = judge(server, tmp_path)
    thread, out = run_in_thread(lambda: j.map([*PROMPTS, PROMPTS[0]], progress=False))
    assert server.wait_for_polls(1)
    clock.advance(61)  # the job finishes on the server's clock
    thread.join(60)
    replies = out["value"]
    assert [r.ok for r in replies] == [True] * 8
    for i, reply in enumerate(replies[:7]):  # each answer maps back to its own request
        assert f"It read: 'Rate answer {i}:" in reply.text
    assert replies[7].text == replies[0].text and replies[7].cached
    # one file, one batch, seven lines (the repeated prompt is asked once)
    assert server.uploads == 1 and len(server.batches) == 1
    batch = next(iter(server.batches.values()))
    assert len(batch.lines) == 7
    assert {line["url"] for line in batch.lines} == {"/v1/chat/completions"}
    assert batch.lines[0]["body"]["model"] == "gpt-4o-mini"
    # half the interactive price
    r = replies[0]
    assert r.cost == pytest.approx(cost_of(r.usage, "gpt-4o-mini", PRICES) / 2)
    # a second run of the same prompts is answered from the cache: no new batch
    again = j.map(PROMPTS, progress=False)
    assert [a.text for a in again] == [r.text for r in replies[:7]]
    assert all(a.cached for a in again) and len(server.batches) == 1


def test_failed_and_expired_lines_become_row_errors(clock: ManualClock, tmp_path: Path) -> None:
    with FakeBatchServer(clock=clock, run_seconds=100, expire_after=50) as server:
        j = judge(server, tmp_path)
        # nine distinct requests (the repeats are asked once); four run before the window ends
        thread, out = run_in_thread(lambda: j.map([*PROMPTS, *PROMPTS, "x", "y"], progress=False))
        assert server.wait_for_polls(1)
        (batch,) = server.batches.values()
        second = batch.lines[1]["custom_id"]
        server.fail = lambda cid: cid == second  # the second line fails with HTTP 500
        clock.advance(51)
        thread.join(60)
        replies = out["value"]
        kinds = [r.error.type if r.error else "ok" for r in replies]
        expired = ["batch_expired"] * 3
        assert kinds == ["ok", "server_error", "ok", "ok", *expired] * 2 + expired[:2]
        assert "error processing this request" in replies[1].error.message
        assert "completion window expired" in replies[4].error.message
        assert replies[4].text is None and replies[4].error.raw

        # only answers are cached: a re-run sends just the six failed requests, as a new batch
        server.fail = None
        server.expire_after = None
        thread, out = run_in_thread(lambda: j.map([*PROMPTS, "x", "y"], progress=False))
        assert server.wait_for_polls(server.polls + 1)
        clock.advance(101)
        thread.join(60)
    assert all(r.ok for r in out["value"])
    assert [len(b.lines) for b in server.batches.values()] == [9, 6]


def test_a_batch_that_fails_validation_is_reported_on_every_row(
    clock: ManualClock, tmp_path: Path
) -> None:
    with FakeBatchServer(clock=clock, max_requests=3) as server:
        j = judge(server, tmp_path)
        j.batcher.options = rl.judges.batch.BatchOptions(poll_interval=0.01, max_requests=5)
        replies = j.map(PROMPTS[:4], progress=False)
    assert all(r.error is not None and r.error.type == "batch_failed" for r in replies)
    assert "at most 3 requests" in str(replies[0].error)
    assert "batch-fake" in replies[0].error.message


def test_a_cancelled_batch_reports_the_rows_it_never_ran(
    server: FakeBatchServer, clock: ManualClock, tmp_path: Path
) -> None:
    import httpx

    j = judge(server, tmp_path)
    thread, out = run_in_thread(lambda: j.map(PROMPTS, progress=False))
    assert server.wait_for_polls(1)
    clock.advance(30)  # about half done
    (batch_id,) = server.batches
    cancel = httpx.post(
        f"{server.url}/batches/{batch_id}/cancel",
        headers={"authorization": "Bearer sk-batch-test"},
    )
    assert cancel.json()["status"] in ("cancelling", "cancelled")
    thread.join(60)
    replies = out["value"]
    assert any(r.ok for r in replies)
    never = [r for r in replies if not r.ok]
    assert never and all(r.error.type == "batch_cancelled" for r in never)
    assert "cancelled before this request ran" in never[0].error.message


def test_files_are_split_at_the_request_and_byte_limits() -> None:
    lines = [b"x" * 10 + b"\n"] * 7
    assert [len(f) for f in split_lines(lines, 3, 10_000)] == [3, 3, 1]
    assert [len(f) for f in split_lines(lines, 100, 25)] == [2, 2, 2, 1]
    with pytest.raises(BatchError, match="over the 5-byte limit"):
        split_lines(lines, 100, 5)


def test_a_big_run_goes_out_as_several_batches(
    server: FakeBatchServer, clock: ManualClock, tmp_path: Path
) -> None:
    j = judge(server, tmp_path)
    j.batcher.options = rl.judges.batch.BatchOptions(poll_interval=0.01, max_requests=3)
    thread, out = run_in_thread(lambda: j.map(PROMPTS, progress=False))
    assert server.wait_for_polls(3)
    clock.advance(61)
    thread.join(60)
    assert all(r.ok for r in out["value"])
    assert sorted(len(b.lines) for b in server.batches.values()) == [1, 3, 3]


CHILD = textwrap.dedent(
    """
    import sys
    import rubriclab as rl
    from tests.test_judges_batch import PROMPTS

    url, cache = sys.argv[1:3]
    judge = rl.Judge(url, model="gpt-4o-mini", api_key="sk-batch-test", batch=True,
                     batch_poll_interval=0.01, cache=cache, max_retries=0)
    judge.map(PROMPTS, progress=False)
    """
)


def test_a_restarted_process_reattaches_and_never_pays_twice(
    server: FakeBatchServer, clock: ManualClock, tmp_path: Path
) -> None:
    cache = tmp_path / "cache.sqlite3"
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, server.url, str(cache)],
        cwd=Path(__file__).resolve().parents[1],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        # the child polls only after it has written the batch id to the cache DB
        assert server.wait_for_polls(1, timeout=120)
        os.kill(child.pid, signal.SIGKILL)
        child.wait(timeout=30)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert len(server.batches) == 1 and server.uploads == 1

    j = judge(server, tmp_path, cache=cache)  # the restarted run
    thread, out = run_in_thread(lambda: j.map(PROMPTS, progress=False))
    polls = server.polls
    assert server.wait_for_polls(polls + 1)
    clock.advance(61)
    thread.join(60)
    assert all(r.ok for r in out["value"])
    assert len(server.batches) == 1 and server.uploads == 1  # re-attached, paid once


def test_stopping_the_client_mid_poll_then_rerunning_reattaches(
    server: FakeBatchServer, clock: ManualClock, tmp_path: Path
) -> None:
    import asyncio

    j = judge(server, tmp_path)

    async def stop_mid_poll() -> None:
        task = asyncio.ensure_future(j.amap(PROMPTS, progress=False))
        while server.polls < 2:
            await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(stop_mid_poll())
    clock.advance(61)
    replies = judge(server, tmp_path).map(PROMPTS, progress=False)
    assert all(r.ok for r in replies)
    assert len(server.batches) == 1


def test_evaluate_runs_through_a_batch_judge(
    server: FakeBatchServer, clock: ManualClock, tmp_path: Path
) -> None:
    rubric = rl.Rubric.checklist(["Is it correct?", "Is it short?"])
    metric = rl.metrics.RubricMetric(rubric=rubric, name="check")
    data = [{"prompt": p, "response": "Paris."} for p in PROMPTS[:4]]
    j = judge(server, tmp_path)
    thread, out = run_in_thread(lambda: rl.evaluate(data, [metric], judge=j))
    assert server.wait_for_polls(1)
    clock.advance(61)
    thread.join(60)
    result = out["value"]
    assert result.table["check/error"].isna().all()
    assert result.summary.loc["check", "cost"] > 0


def test_batch_needs_an_http_judge_and_a_cache(tmp_path: Path) -> None:
    with pytest.raises(JudgeConfigError, match="needs an HTTP judge"):
        rl.Judge("mock", batch=True)
    with pytest.raises(JudgeConfigError, match="not cache=False"):
        rl.Judge("http://127.0.0.1:9/v1", model="m", batch=True, cache=False)


def test_a_rejected_key_is_a_clear_error_without_the_key(
    server: FakeBatchServer, tmp_path: Path
) -> None:
    j = rl.Judge(
        server.url, model="m", api_key="sk-wrong-secret", batch=True, cache=tmp_path / "c.db"
    )
    with pytest.raises(BatchError, match="HTTP 401") as info:
        j.map(PROMPTS[:1], progress=False)
    assert "sk-wrong-secret" not in str(info.value)


def test_a_recorded_job_the_provider_no_longer_knows_is_started_again(
    server: FakeBatchServer, clock: ManualClock, tmp_path: Path
) -> None:
    j = judge(server, tmp_path)
    thread, out = run_in_thread(lambda: j.map(PROMPTS[:2], progress=False))
    assert server.wait_for_polls(1)
    clock.advance(61)
    thread.join(60)
    # the job is forgotten by the provider, and its answers are not in this new cache
    (record,) = [j.cache.get_batch(k) for k in _job_keys(tmp_path / "cache.sqlite3")]
    fresh = tmp_path / "fresh.sqlite3"
    other = judge(server, tmp_path, cache=fresh)
    other.cache.put_batch(
        _job_keys(tmp_path / "cache.sqlite3")[0], {**record, "status": "in_progress"}
    )
    server.batches.clear()
    thread, out = run_in_thread(lambda: other.map(PROMPTS[:2], progress=False))
    assert server.wait_for_polls(server.polls + 1)
    clock.advance(61)
    thread.join(60)
    assert all(r.ok for r in out["value"])
    assert len(server.batches) == 1 and server.uploads == 2


def _job_keys(path: Path) -> list[str]:
    import sqlite3

    with sqlite3.connect(path) as conn:
        return [row[0] for row in conn.execute("SELECT key FROM batch_jobs")]


def test_a_reasoning_models_batch_lines_carry_the_fields_it_takes(
    clock: ManualClock, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """o4-mini refuses max_tokens and a temperature: every line says max_completion_tokens
    and no temperature, so no line comes back as a 400."""
    with FakeBatchServer(clock=clock, run_seconds=60, reasoning="o1") as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        j = rl.Judge(
            "openai:o4-mini",
            api_key="sk-batch-test",
            max_tokens=256,
            batch=True,
            batch_poll_interval=0.01,
            cache=tmp_path / "cache.sqlite3",
        )
        thread, out = run_in_thread(lambda: j.map(PROMPTS[:3], progress=False))
        assert server.wait_for_polls(1)
        clock.advance(61)
        thread.join(60)
    assert [r.ok for r in out["value"]] == [True] * 3
    (batch,) = server.batches.values()
    for line in batch.lines:
        assert line["body"]["max_completion_tokens"] == 256
        assert "max_tokens" not in line["body"] and "temperature" not in line["body"]


def test_an_unknown_model_refusing_fields_in_a_batch_adapts_and_resends_those_lines_once(
    clock: ManualClock, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """An Azure-style name gives no hint: the first job's lines come back as 400s naming
    max_tokens, the next job's naming the temperature; the judge adapts to each once and
    every row ends answered, the way an interactive 400 is handled."""
    with FakeBatchServer(clock=clock, api_key="sk-batch-test", reasoning="o1") as server:
        j = rl.Judge(
            server.url,
            model="my-deployment",
            api_key="sk-batch-test",
            max_tokens=128,
            batch=True,
            batch_poll_interval=0.01,
            cache=tmp_path / "cache.sqlite3",
        )
        replies = j.map(PROMPTS[:3], progress=False)
        assert [r.ok for r in replies] == [True] * 3
        bodies = [[line["body"] for line in b.lines] for b in server.batches.values()]
        assert [len(b) for b in bodies] == [3, 3, 3]
        assert all(b["max_tokens"] == 128 for b in bodies[0])
        assert all(b["max_completion_tokens"] == 128 and b["temperature"] == 0 for b in bodies[1])
        assert all("temperature" not in b and "max_tokens" not in b for b in bodies[2])
        # adapted for good: the next run is one job, its lines spelled right at once
        assert j.map(["one more"], progress=False)[0].ok
        assert len(server.batches) == 4
    said = [r.getMessage() for r in caplog.records if r.name == "rubriclab.judges.engine"]
    assert len(said) == 2 and "refused max_tokens" in said[0]


def test_a_batch_line_whose_error_code_is_not_a_string_fails_its_row_not_the_run(
    clock: ManualClock, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The error file is the provider's: a 400 line with a list as its code is that row's
    error, and the other rows keep their answers."""
    from rubriclab.testing import batch_server

    def odd(body: Any, style: str) -> dict[str, Any] | None:
        return {"error": {"message": "no", "code": []}} if "odd" in json.dumps(body) else None

    monkeypatch.setattr(batch_server, "reasoning_refusal", odd)
    with FakeBatchServer(clock=clock, api_key="sk-batch-test", reasoning="o1") as server:
        j = rl.Judge(
            server.url,
            model="m",
            api_key="sk-batch-test",
            batch=True,
            batch_poll_interval=0.01,
            cache=tmp_path / "cache.sqlite3",
        )
        replies = j.map(["fine", "an odd one"], progress=False)
    assert replies[0].ok
    assert replies[1].error is not None and replies[1].error.status == 400


def test_a_request_no_json_can_hold_is_its_rows_error_not_the_runs(
    server: FakeBatchServer, clock: ManualClock, tmp_path: Path
) -> None:
    unwritable = Request([{"role": "user", "content": [{"type": "text", "text": 10**5000}]}])
    j = judge(server, tmp_path)
    thread, out = run_in_thread(lambda: j.map([unwritable, PROMPTS[0]], progress=False))
    assert server.wait_for_polls(1)
    clock.advance(61)
    thread.join(60)
    assert "error" not in out, out.get("error")
    bad, good = out["value"]
    assert bad.error is not None and "cannot be written as JSON" in bad.error.message
    assert good.ok
    assert len(next(iter(server.batches.values())).lines) == 1  # only the writable line went


# -- a provider's output is untrusted (issue 25, finding 8) ---------------------------------------


def _finished_run(server: FakeBatchServer, tmp_path: Path, prompts: list[str]) -> list[rl.Reply]:
    j = rl.Judge(
        server.url,
        model="m",
        api_key="sk-batch-test",
        batch=True,
        batch_poll_interval=0.01,
        cache=tmp_path / "cache.sqlite3",
        max_retries=0,
    )
    replies: list[rl.Reply] = j.map(prompts, progress=False)
    return replies


def test_a_repeated_custom_id_is_an_ambiguous_row_error_not_the_last_line(tmp_path: Path) -> None:
    """Two answers for one request: which is meant? The last line used to win silently."""

    def repeat_first(kind: str, lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
        if kind != "output" or not lines:
            return lines
        twin = json.loads(json.dumps(lines[0]))
        twin["response"]["body"]["choices"][0]["message"]["content"] = "a different verdict"
        return [*lines, twin]

    with FakeBatchServer(api_key="sk-batch-test", lines_hook=repeat_first) as server:
        replies = _finished_run(server, tmp_path, ["first", "second", "third"])
        assert replies[0].error is not None and replies[0].error.type == "malformed_response"
        assert "ambiguous" in replies[0].error.message and "2 times" in replies[0].error.message
        assert replies[1].ok and replies[2].ok
        server.lines_hook = None  # the ambiguous row was not cached: a re-run asks it again
        again = _finished_run(server, tmp_path, ["first", "second", "third"])
    assert all(r.ok for r in again) and not again[0].cached and again[1].cached
    assert [len(b.lines) for b in server.batches.values()] == [3, 1]


@pytest.mark.parametrize(
    ("field", "value", "said"),
    [
        ("request_counts", {"completed": "lots", "failed": 0}, "request_counts are not counts"),
        ("request_counts", {"completed": [1], "failed": 0}, "request_counts are not counts"),
        ("request_counts", ["completed", 3], "request_counts are not counts"),
        ("request_counts", {"completed": True, "failed": 0}, "request_counts are not counts"),
    ],
)
def test_malformed_job_counts_are_that_jobs_error_not_a_crash(
    tmp_path: Path, field: str, value: Any, said: str
) -> None:
    def malformed(view: dict[str, Any]) -> dict[str, Any]:
        return {**view, field: value}

    with FakeBatchServer(api_key="sk-batch-test", view_hook=malformed) as server:
        replies = _finished_run(server, tmp_path, ["a", "b"])
    for reply in replies:
        assert reply.error is not None and reply.error.type == "batch_failed"
        assert said in reply.error.message and "batch-fake" in reply.error.message


@pytest.mark.parametrize(
    ("errors", "said"),
    [
        ([{"code": "invalid_file", "message": "line 2 is not JSON", "line": 2}], "not JSON"),
        ("the input file was rejected", "input file was rejected"),
        ({"object": "list", "data": "nope"}, "nope"),
    ],
)
def test_a_failed_job_with_malformed_errors_reports_them_on_its_rows(
    tmp_path: Path, errors: Any, said: str
) -> None:
    def failed(view: dict[str, Any]) -> dict[str, Any]:
        return {**view, "status": "failed", "errors": errors}

    with FakeBatchServer(api_key="sk-batch-test", view_hook=failed) as server:
        replies = _finished_run(server, tmp_path, ["a", "b"])
    for reply in replies:
        assert reply.error is not None and reply.error.type == "batch_failed"
        assert said in reply.error.message


_STREAMED_CHILD = textwrap.dedent(
    """
    import resource, sys
    import rubriclab as rl

    url, cache, lines, cap = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    j = rl.Judge(url, model="m", api_key="sk-batch-test", batch=True,
                 batch_poll_interval=0.01, cache=cache, max_retries=0)
    assert all(r.ok for r in j.map(["warm a", "warm b"], progress=False))  # threads, imports

    def vm():
        with open("/proc/self/status") as f:
            line = next(x for x in f if x.startswith("VmSize"))
        return int(line.split()[1]) * 1024

    limit = vm() + cap
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    replies = j.map([f"BIG {i}" for i in range(lines)], progress=False)
    print(sum(r.ok for r in replies), flush=True)
    """
)


def test_the_output_file_is_read_line_by_line_under_a_memory_cap(tmp_path: Path) -> None:
    """An output file larger than the memory the client may use (here 12 lines of 8 MB, the
    client capped at 64 MB more than it had): read whole, it was a MemoryError and a crash."""
    pad = "x" * (8 * 1024 * 1024)

    def padded(kind: str, lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
        for line in lines:
            if kind == "output" and "BIG" in json.dumps(line["response"]["body"]["choices"]):
                line["response"]["body"]["system_fingerprint"] = pad
        return lines

    with FakeBatchServer(api_key="sk-batch-test", lines_hook=padded) as server:
        env = {**os.environ, "MALLOC_ARENA_MAX": "1", "PYTHONHASHSEED": "0"}
        done = subprocess.run(
            [sys.executable, "-c", _STREAMED_CHILD, server.url, str(tmp_path / "c.sqlite3"),
             "12", str(64 * 1024 * 1024)],
            capture_output=True, text=True, timeout=300, env=env,
        )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "12"
