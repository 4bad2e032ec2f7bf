"""A sentinel API key never leaks: not in results, reprs, errors, logs, cache files or pickles."""

from __future__ import annotations

import gc
import logging
import pickle
import traceback
import types
from pathlib import Path
from typing import Any

import pytest

from rubriclab.judges import Judge, JudgeConfigError
from rubriclab.testing import FakeJudgeServer, ServerReply

SENTINEL = "sk-SENTINEL-0123456789abcdefXYZ"


def leaks(*things: Any) -> list[str]:
    """Every rendering of ``things`` that contains the sentinel (or its first 12 chars)."""
    found = []
    for thing in things:
        for render in (repr(thing), str(thing), f"{thing}"):
            if SENTINEL in render or SENTINEL[:12] in render:
                found.append(render[:200])
        blob = pickle.dumps(thing)
        if SENTINEL.encode() in blob:
            found.append(f"pickle of {type(thing).__name__}")
    return found


def holders(root: object) -> set[str]:
    """Types of the objects reachable from ``root`` that hold the key as a string."""
    seen: set[int] = set()
    stack: list[tuple[object, object]] = [(root, None)]
    found: set[str] = set()
    while stack:
        obj, parent = stack.pop()
        if id(obj) in seen or isinstance(obj, (type, types.ModuleType, types.FunctionType)):
            continue
        seen.add(id(obj))
        if isinstance(obj, str):
            if SENTINEL[:12] in obj:
                found.add(type(parent).__name__)
            continue
        stack.extend((child, obj) for child in gc.get_referents(obj))
    return found


@pytest.mark.parametrize("transport", ["httpx", "aiohttp"])
def test_the_key_is_sent_but_never_kept_anywhere_visible(
    fake_judge: FakeJudgeServer,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    transport: str,
) -> None:
    caplog.set_level(logging.DEBUG)  # httpx, httpcore, aiohttp and rubriclab at their noisiest
    calls = {"n": 0}

    def echo_key_on_first_call(body: dict[str, Any]) -> Any:
        calls["n"] += 1
        if calls["n"] == 1:  # some providers echo the key back in their 401 message
            return ServerReply(401, {"error": {"message": f"Incorrect API key: {SENTINEL}"}})
        if calls["n"] == 2:
            return ServerReply(500, {"error": {"message": f"upstream said {SENTINEL}"}})
        return "fine"

    fake_judge.responder = echo_key_on_first_call
    cache = tmp_path / "cache.sqlite3"
    judge = Judge(
        fake_judge.url,
        model="m",
        api_key=SENTINEL,
        cache=cache,
        transport=transport,
        max_retries=1,
        backoff_base=0.01,
    )
    rejected = judge.complete("first")
    retried = judge.complete("second")
    replies = judge.map([f"q{i}" for i in range(12)], progress=False)

    assert fake_judge.log[0].headers["authorization"] == f"Bearer {SENTINEL}"  # it was used
    assert rejected.error is not None and rejected.error.type == "auth"
    assert retried.ok and retried.attempts == 2
    assert all(r.ok for r in replies)

    errors = [rejected.error]
    assert not leaks(judge, judge.describe(), rejected, retried, replies, *errors)
    assert SENTINEL not in repr(vars(judge))
    assert holders(judge) == {"Secret"}  # the one place the key lives
    assert not leaks(rejected.to_dict(), judge.last_run)
    assert SENTINEL not in "".join(traceback.format_exception(rejected.error))
    assert SENTINEL not in caplog.text
    judge.cache.close()  # type: ignore[union-attr]
    for path in tmp_path.iterdir():  # the SQLite file and its WAL side files
        assert SENTINEL.encode() not in path.read_bytes(), path.name


def test_a_pickled_judge_rereads_its_key_from_the_environment(
    monkeypatch: pytest.MonkeyPatch, fake_judge: FakeJudgeServer
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SENTINEL)
    monkeypatch.setenv("OPENAI_BASE_URL", fake_judge.url)
    judge = Judge("openai:gpt-4o-mini")
    blob = pickle.dumps(judge)
    assert SENTINEL.encode() not in blob
    assert not leaks(judge, judge.describe())
    revived = pickle.loads(blob)
    assert revived.complete("x").ok
    assert fake_judge.log[-1].headers["authorization"] == f"Bearer {SENTINEL}"


def test_an_explicit_key_is_dropped_from_pickles(fake_judge: FakeJudgeServer) -> None:
    judge = Judge(fake_judge.url, model="m", api_key=SENTINEL)
    revived = pickle.loads(pickle.dumps(judge))
    assert SENTINEL.encode() not in pickle.dumps(judge)
    revived.complete("x")
    assert "authorization" not in fake_judge.log[-1].headers


def test_configuration_errors_do_not_echo_the_key() -> None:
    for spec, kwargs in [
        ("nonsense:model", {}),
        ("http://127.0.0.1:9/v1", {}),  # missing model
        ("mock", {"max_concurrency": -1}),
    ]:
        with pytest.raises(JudgeConfigError) as info:
            Judge(spec, api_key=SENTINEL, **kwargs)
        assert SENTINEL not in str(info.value)
        assert SENTINEL not in "".join(traceback.format_exception(info.value))


def test_credential_headers_are_held_like_the_key(fake_judge: FakeJudgeServer) -> None:
    fake_judge.responder = lambda body: ServerReply(403, {"error": {"message": SENTINEL}})
    judge = Judge(fake_judge.url, model="m", headers={"Api-Key": SENTINEL, "X-Team": "evals"})
    reply = judge.complete("x")
    assert fake_judge.log[0].headers["api-key"] == SENTINEL
    assert fake_judge.log[0].headers["x-team"] == "evals"
    assert reply.error is not None and reply.error.type == "auth"
    assert not leaks(judge, reply, judge.describe())
    assert holders(judge) == {"Secret"}
    pickle.loads(pickle.dumps(judge)).complete("y")
    assert "api-key" not in fake_judge.log[-1].headers  # dropped from the pickle, on purpose
