"""The response cache: what makes two calls the same, what is kept, sharing, and broken files."""

from __future__ import annotations

import asyncio
import json
import multiprocessing
import os
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from rubriclab.judges import Judge, Request, Usage
from rubriclab.judges.cache import (
    Cache,
    CacheEntry,
    CacheError,
    MemoryCache,
    RunKeys,
    cache_key,
    default_cache_path,
    open_cache,
)
from rubriclab.testing import FakeJudgeServer, Faults

MESSAGES = [{"role": "user", "content": "Grade: Paris is the capital of France."}]
SETTINGS = {"temperature": 0.0, "seed": None, "max_tokens": None}


def key(**change: object) -> str:
    endpoint = str(change.pop("endpoint", "http://h/v1"))
    model = str(change.pop("model", "m"))
    settings = {**SETTINGS, **change.pop("settings", {})}  # type: ignore[dict-item]
    request = Request(**{"messages": MESSAGES, **change})  # type: ignore[arg-type]
    return cache_key(endpoint, model, request, settings)


def test_the_key_changes_with_everything_that_changes_the_answer() -> None:
    base = key()
    assert key() == base
    variants = {
        key(endpoint="http://other/v1"),
        key(model="m2"),
        key(messages=[{"role": "user", "content": "Grade: Paris is in France."}]),
        key(response_format={"type": "json_object"}),
        key(sample=1),
        key(settings={"temperature": 0.7}),
        key(params={"top_p": 0.5}),
    }
    assert base not in variants and len(variants) == 7
    reordered = [{"content": MESSAGES[0]["content"], "role": "user"}]
    assert key(messages=reordered) == base  # dict key order is not a different request


def test_keys_of_existing_cache_files_never_change() -> None:
    """A user's cache file is only worth its keys: these digests were written by the first
    cache_key (the JSON of the whole list, every part written per request), and the run-wide
    ``RunKeys`` must give the same, for a bare request and one with every part set."""
    fmt = {"type": "json_schema", "json_schema": {"name": "chk", "schema": {"type": "object"}}}
    bare = Request(MESSAGES)
    full = Request(MESSAGES, fmt, sample=2, params={"top_p": 0.5})
    pinned = {
        "b781f50f10be90a3c5e8a90cda7763ff49434fc6b90ecb9035ab4f3c0cd92e2d": bare,
        "0389e88c00c6dea75c4fa9c93476cb49f77a4b26572b92bed11e7b96636e6745": full,
    }
    keys = RunKeys("http://h/v1", "m", SETTINGS)
    for digest, request in pinned.items():
        assert cache_key("http://h/v1", "m", request, SETTINGS) == digest
        for _ in range(2):  # the second time from the run's memory of the format
            assert keys(request) == (
                digest,
                json.dumps(MESSAGES, separators=(",", ":"), sort_keys=True),
            )


def entry(text: str = "YES") -> CacheEntry:
    return CacheEntry(text, Usage(10, 2, 12), "m", "stop")


def test_entries_survive_reopening(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite3"
    cache = Cache(path)
    cache.put("k1", entry("first"))
    cache.close()
    again = Cache(path)
    assert again.get_many(["k1", "missing"]) == {"k1": entry("first")}
    assert len(again) == 1
    again.clear()
    assert len(again) == 0


def test_a_rerun_makes_no_call_and_samples_are_distinct_calls(
    fake_judge: FakeJudgeServer, tmp_path: Path
) -> None:
    path = tmp_path / "c.sqlite3"
    requests = [Request(MESSAGES, sample=s) for s in range(3)] + ["other question"]
    first = Judge(fake_judge.url, model="m", cache=path).map(requests, progress=False)
    assert fake_judge.calls == 4  # three samples are three calls
    fresh = Judge(fake_judge.url, model="m", cache=path)  # a new process would do the same
    again = fresh.map(requests, progress=False)
    assert fake_judge.calls == 4
    assert [r.text for r in again] == [r.text for r in first]
    assert all(r.cached and r.attempts == 0 for r in again)
    fresh.map([*requests, Request(MESSAGES, sample=3)], progress=False)
    assert fake_judge.calls == 5  # only the new sample was asked


def test_errors_are_never_cached(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite3"
    with FakeJudgeServer(faults=Faults(rate_500=1.0)) as server:
        judge = Judge(server.url, model="m", cache=path, max_retries=0)
        assert judge.complete("q").error is not None
        assert judge.complete("q").error is not None
        assert server.calls == 2
    assert len(Cache(path)) == 0


def test_a_different_judge_setting_is_a_different_entry(
    fake_judge: FakeJudgeServer, tmp_path: Path
) -> None:
    path = tmp_path / "c.sqlite3"
    Judge(fake_judge.url, model="m", cache=path).complete("q")
    Judge(fake_judge.url, model="m", cache=path, temperature=0.7).complete("q")
    Judge(fake_judge.url, model="m2", cache=path).complete("q")
    assert fake_judge.calls == 3


def _writer(path: str, start: int) -> None:
    cache = Cache(path)
    for i in range(start, start + 200):
        cache.put(f"k{i}", CacheEntry(f"text {i}", Usage(1, 1, 2), "m"))
    cache.close()


def test_concurrent_writers_from_processes_and_threads(tmp_path: Path) -> None:
    path = str(tmp_path / "shared.sqlite3")
    Cache(path).close()
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(path, n * 200)) for n in range(3)]
    threads = [threading.Thread(target=_writer, args=(path, 600 + n * 200)) for n in range(2)]
    for worker in [*procs, *threads]:
        worker.start()
    for proc in procs:
        proc.join(60)
        assert proc.exitcode == 0
    for thread in threads:
        thread.join(60)
    found = Cache(path).get_many(f"k{i}" for i in range(1000))
    assert len(found) == 1000
    assert found["k999"].text == "text 999"


def _damaged_cache(path: Path) -> bytes:
    """A cache rubriclab made, its pages overwritten after the header (a crash, a bad disk)."""
    made = Cache(path)
    made.put("k0", entry())
    made.close()
    for side in ("-wal", "-shm"):
        Path(str(path) + side).unlink(missing_ok=True)
    damaged = path.read_bytes()[:100] + b"\x13garbage pages" * 400
    path.write_bytes(damaged)
    return damaged


def test_a_corrupt_cache_we_made_is_set_aside_and_rebuilt(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite3"
    damaged = _damaged_cache(path)
    with pytest.warns(RuntimeWarning, match="was unreadable.*moved to"):
        cache = Cache(path)
    cache.put("k", entry())
    assert cache.get_many(["k"]) == {"k": entry()}
    aside = [p for p in tmp_path.iterdir() if ".corrupt-" in p.name]
    assert len(aside) == 1 and aside[0].read_bytes() == damaged


@pytest.mark.parametrize("kind", ["folder", "text", "other_sqlite"])
def test_a_cache_path_that_is_not_our_cache_is_never_moved_or_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "notes.md").write_text("mine")
    target = {"folder": project, "text": project / "notes.md", "other_sqlite": project / "app.db"}[
        kind
    ]
    if kind == "other_sqlite":
        with sqlite3.connect(target) as conn:
            conn.execute("CREATE TABLE users (name TEXT)")
        conn.close()
    before = {p.name: p.stat().st_mtime_ns for p in project.iterdir()}
    monkeypatch.chdir(project)
    with pytest.raises(CacheError, match=r"left as it is|folder or not a regular file"):
        Cache("." if kind == "folder" else target)
    assert {p.name: p.stat().st_mtime_ns for p in project.iterdir()} == before
    assert project.is_dir() and not list(tmp_path.glob("*corrupt*"))


def test_a_cache_from_before_the_mark_is_still_used(tmp_path: Path) -> None:
    # negative control: an old cache (our tables, no application id) opens and answers
    path = tmp_path / "old.sqlite3"
    made = Cache(path)
    made.put("k", entry())
    made.close()
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA application_id=0")
    conn.close()
    assert Cache(path).get_many(["k"]) == {"k": entry()}


def test_an_over_long_cache_path_is_a_one_line_error(tmp_path: Path) -> None:
    with pytest.raises(CacheError) as info:
        Cache(tmp_path / ("x" * 5000) / "c.sqlite3")
    assert "\n" not in str(info.value) and len(str(info.value)) < 400


def test_a_cache_that_breaks_mid_run_is_switched_off_not_fatal(
    fake_judge: FakeJudgeServer, tmp_path: Path
) -> None:
    judge = Judge(fake_judge.url, model="m", cache=tmp_path / "c.sqlite3")
    assert isinstance(judge.cache, Cache)
    judge.cache._conn.close()  # what a deleted or locked-out file looks like to sqlite
    with pytest.warns(RuntimeWarning, match="caching is off"):
        replies = judge.map([f"q{i}" for i in range(5)], progress=False)
    assert all(r.ok for r in replies)
    judge.map([f"q{i}" for i in range(5)], progress=False)
    assert fake_judge.calls == 10


def test_unusable_cache_locations_say_what_to_do(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(CacheError, match="cache=PATH somewhere writable, or cache=False"):
        Cache(blocker / "sub" / "c.sqlite3")


def test_cache_argument_forms(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RUBRICLAB_CACHE", str(tmp_path / "default.sqlite3"))
    assert default_cache_path() == tmp_path / "default.sqlite3"
    assert isinstance(open_cache(None), MemoryCache)
    assert open_cache(False) is None
    on = open_cache(True)
    assert isinstance(on, Cache) and on.path == tmp_path / "default.sqlite3"
    mine = Cache(tmp_path / "mine.sqlite3")
    assert open_cache(mine) is mine
    with pytest.raises(TypeError, match="cache= takes"):
        open_cache(42)  # type: ignore[arg-type]
    assert Judge("mock", cache=False).cache is None


def test_the_file_is_sqlite_in_wal_mode(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite3"
    Cache(path).put("k", entry())
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


# -- lone surrogates (issue 13) ------------------------------------------------------------------


def test_a_lone_surrogate_never_makes_put_raise(tmp_path: Path) -> None:
    cache = Cache(tmp_path / "c.sqlite3")
    cache.put("k", CacheEntry("half \ud800 text", Usage(1, 1, 2), "m\udfff", "stop\ud800"))
    entry = cache.get_many(["k"])["k"]
    assert entry.text == "half \ufffd text" and entry.model == "m\ufffd"
    assert entry.finish_reason == "stop\ufffd"


@pytest.mark.parametrize("transport", ["httpx", "aiohttp"])
def test_a_reply_with_a_lone_surrogate_is_cleaned_at_the_transport_and_cached(
    tmp_path: Path, transport: str
) -> None:
    with FakeJudgeServer(faults=Faults(rate_surrogate=1.0)) as server:
        judge = Judge(server.url, model="m", cache=tmp_path / "c.sqlite3", transport=transport)
        first = judge.map(["a", "b"], progress=False)
        again = judge.map(["a", "b"], progress=False)
        assert server.calls == 2  # the re-run came from the file
    assert all(r.ok and r.text is not None and "\ufffd" in r.text for r in first)
    assert [r.text for r in again] == [r.text for r in first]
    assert all(r.cached for r in again)
    for reply in first:
        assert reply.text is not None
        reply.text.encode("utf-8")  # no lone surrogate left anywhere


# -- answers written a group at a time ---------------------------------------------------------


def _rows_on_disk(path: Path) -> int:
    """What another process reading the file sees now."""
    conn = sqlite3.connect(path)
    try:
        (count,) = conn.execute("SELECT count(*) FROM replies").fetchone()
    finally:
        conn.close()
    return int(count)


def test_answers_are_written_a_group_at_a_time(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite3"
    cache = Cache(path)
    cache.FLUSH_SECONDS = 3600.0  # only the group size writes here
    for i in range(Cache.FLUSH_ROWS - 1):
        cache.put(f"k{i}", entry(f"t{i}"))
    assert _rows_on_disk(path) == 0  # still in this process
    cache.put("last", entry("last"))
    assert _rows_on_disk(path) == Cache.FLUSH_ROWS  # one transaction for the group
    cache.put("one more", entry())
    assert cache.get_many(["one more"]) == {"one more": entry()}  # a read writes first
    assert _rows_on_disk(path) == Cache.FLUSH_ROWS + 1
    cache.FLUSH_SECONDS = 0.0  # an old answer is written with the next put
    cache.put("late", entry())
    assert _rows_on_disk(path) == Cache.FLUSH_ROWS + 2
    cache.close()


def test_a_batch_record_is_never_written_before_its_answers(tmp_path: Path) -> None:
    """A restarted run that finds a job recorded as collected must find its answers too."""
    path = tmp_path / "c.sqlite3"
    cache = Cache(path)
    cache.put("answer", entry())
    cache.put_batch("job", {"status": "collected"})
    assert _rows_on_disk(path) == 1
    cache.close()


def test_every_answer_is_on_disk_when_a_run_ends_or_is_cancelled(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite3"
    questions = [f"question {i}" for i in range(40)]
    with FakeJudgeServer(latency=0.05) as server:
        judge = Judge(server.url, model="m", cache=path, max_concurrency=4)
        judge.map(questions[:5], progress=False)
        assert _rows_on_disk(path) == 5  # 5 answers: fewer than a group, written at the end

        async def cancelled() -> None:
            task = asyncio.ensure_future(judge.amap(questions, progress=False))
            while server.calls < 15:  # 10 of this run's calls have left (a poll, not a timer)
                await asyncio.sleep(0.01)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            await judge.aclose()

        asyncio.run(cancelled())
        finished = judge.last_run.succeeded
        assert judge.last_run.interrupted and finished >= 5
        assert _rows_on_disk(path) == finished  # Ctrl-C keeps every finished answer


_EXIT_WITHOUT_CLOSE = """
import sys
from rubriclab.judges.base import Usage
from rubriclab.judges.cache import Cache, CacheEntry
cache = Cache(sys.argv[1])
for i in range(3):
    cache.put(f"k{i}", CacheEntry("t", Usage(1, 1, 2), "m"))
"""


def test_a_process_that_exits_without_closing_its_cache_keeps_its_answers(
    tmp_path: Path,
) -> None:
    path = tmp_path / "c.sqlite3"
    done = subprocess.run(
        [sys.executable, "-c", _EXIT_WITHOUT_CLOSE, str(path)], capture_output=True, timeout=60
    )
    assert done.returncode == 0, done.stderr.decode()
    assert _rows_on_disk(path) == 3


class _InterruptedAt:
    """The cache's connection, with a Ctrl-C arriving just before one statement runs."""

    def __init__(self, conn: sqlite3.Connection, statement: str) -> None:
        self._conn = conn
        self._statement = statement

    def execute(self, sql: str, *args: object) -> sqlite3.Cursor:
        if sql == self._statement:
            self._statement = ""  # once
            raise KeyboardInterrupt
        return self._conn.execute(sql, *args)

    def __getattr__(self, name: str) -> object:
        return getattr(self._conn, name)


def test_ctrl_c_while_a_group_is_written_keeps_the_group(tmp_path: Path) -> None:
    """The interrupt rolls the group's transaction back; its answers wait for the next write
    (the end of the run, or exit) instead of being dropped."""
    path = tmp_path / "c.sqlite3"
    cache = Cache(path)
    cache.FLUSH_SECONDS = 3600.0
    for i in range(3):
        cache.put(f"k{i}", entry(f"t{i}"))
    real = cache._conn
    cache._conn = _InterruptedAt(real, "COMMIT")  # type: ignore[assignment]
    with pytest.raises(KeyboardInterrupt):
        cache.flush()
    assert _rows_on_disk(path) == 0
    cache._conn = real
    cache.flush()
    assert _rows_on_disk(path) == 3
    assert cache.get_many(["k0", "k2"]) == {"k0": entry("t0"), "k2": entry("t2")}
    cache.close()


def test_a_token_count_sqlite_cannot_hold_neither_raises_nor_loses_the_group(
    tmp_path: Path,
) -> None:
    """Usage comes from the endpoint (untrusted): a count past SQLite's 64-bit integers is
    kept as the largest it holds, and the answers written with it are kept too."""
    path = tmp_path / "c.sqlite3"
    cache = Cache(path)
    cache.FLUSH_SECONDS = 3600.0
    cache.put("before", entry())
    huge = CacheEntry("YES", Usage(10**30, -(10**30), 10**30), "m", "stop")
    cache.put("huge", huge)
    cache.put("after", entry())
    found = cache.get_many(["before", "huge", "after"])
    assert found["before"] == found["after"] == entry()
    top = 2**63 - 1
    assert found["huge"] == CacheEntry("YES", Usage(top, -top - 1, top), "m", "stop")
    cache.put("later", entry())  # the cache is still on
    assert cache.get_many(["later"]) == {"later": entry()}
    cache.close()


class _WritesFail:
    """The cache's connection on a disk that stopped taking rows (reads and small writes
    still work, as a full disk or a lost lock can leave it)."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

    def executemany(self, sql: str, rows: object) -> sqlite3.Cursor:
        raise sqlite3.OperationalError("disk I/O error")

    def __getattr__(self, name: str) -> object:
        return getattr(self._conn, name)


def test_a_batch_record_is_not_written_when_its_answers_could_not_be(tmp_path: Path) -> None:
    """Else the job is recorded as collected with no answers: the next run cannot re-attach
    to it and pays for every line again. Kept as it was, the next run re-collects them."""
    path = tmp_path / "c.sqlite3"
    cache = Cache(path)
    cache.put_batch("job", {"batch_id": "b1", "status": "in_progress"})
    cache.put("answer", entry())
    real = cache._conn
    cache._conn = _WritesFail(real)  # type: ignore[assignment]
    with pytest.warns(RuntimeWarning, match="disk I/O error"), pytest.raises(CacheError):
        cache.put_batch("job", {"batch_id": "b1", "status": "completed"})
    cache._conn = real
    cache.close()
    assert Cache(path).get_batch("job") == {"batch_id": "b1", "status": "in_progress"}


def test_a_cache_let_go_with_answers_waiting_writes_them(tmp_path: Path) -> None:
    """Code that puts answers itself and drops the cache (no close) keeps them, as at exit."""
    path = tmp_path / "c.sqlite3"
    cache = Cache(path)
    cache.put("k", entry())
    del cache
    assert _rows_on_disk(path) == 1


_FORK_WHILE_WRITING = """
import os, sys, threading, time
from rubriclab.judges.base import Usage
from rubriclab.judges.cache import Cache, CacheEntry
cache = Cache(sys.argv[1])
cache.FLUSH_SECONDS = 3600.0
cache.put("k", CacheEntry("t", Usage(1, 1, 2), "m"))
held, release = threading.Event(), threading.Event()
def writer():  # another thread in the middle of a write when the process forks
    with cache._lock:
        held.set()
        release.wait()
threading.Thread(target=writer).start()
held.wait()
pid = os.fork()
if pid == 0:
    sys.exit(0)  # a child that never uses the cache, ending normally (its atexit runs)
release.set()
deadline = time.monotonic() + 30
while not os.waitpid(pid, os.WNOHANG)[0]:  # a poll, bounded: a hung child is killed
    if time.monotonic() > deadline:
        os.kill(pid, 9)
        sys.exit("the child hung at exit")
    time.sleep(0.05)
"""


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_forked_child_neither_hangs_at_exit_nor_writes_its_parents_answers(
    tmp_path: Path,
) -> None:
    """A child forked while another thread was writing inherits the lock held: its exit
    must not wait on it. The answers waiting are the parent's, written once, by the parent."""
    path = tmp_path / "c.sqlite3"
    done = subprocess.run(
        [sys.executable, "-c", _FORK_WHILE_WRITING, str(path)], capture_output=True, timeout=120
    )
    assert done.returncode == 0, done.stderr.decode()
    assert _rows_on_disk(path) == 1
