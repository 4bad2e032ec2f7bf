"""The request body as sent: ``BodyEncoder`` writes each response_format's JSON once per
run, reuses the messages' JSON written for the cache key, and must send exactly what
``chat_body`` describes, whatever happens to the schema."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from rubriclab.judges import Request
from rubriclab.judges.cache import RunKeys
from rubriclab.judges.openai import BodyEncoder, OpenAIBackend, chat_body
from rubriclab.judges.secret import Secret
from rubriclab.judges.specs import Endpoint


def backend(**settings: Any) -> OpenAIBackend:
    defaults: dict[str, Any] = {
        "temperature": 0.0,
        "seed": None,
        "max_tokens": None,
        "params": None,
        "headers": None,
        "timeout": 5.0,
        "max_concurrency": 4,
    }
    endpoint = Endpoint("url", "m", "http://127.0.0.1:1/v1", Secret(""))
    return OpenAIBackend(endpoint, **{**defaults, **settings})


def schema(*ids: str) -> dict[str, Any]:
    props = {i: {"type": "string", "enum": ["YES", "NO"]} for i in ids}
    return {
        "type": "json_schema",
        "json_schema": {"name": "chk", "schema": {"type": "object", "properties": props}},
    }


def sent(
    encoder: BodyEncoder, request: Request, level: int = 2, shared: bool = False
) -> dict[str, Any]:
    """The body as the server reads it; ``shared``: with the key's messages JSON, as a run
    with a cache sends it."""
    messages = RunKeys("e", "m", {})(request)[1] if shared else None
    assert messages is not None or not shared
    body: dict[str, Any] = json.loads(encoder.encode(request, level, messages))
    return body


@pytest.mark.parametrize("shared", [False, True])
@pytest.mark.parametrize("level", [0, 1, 2])
@pytest.mark.parametrize(
    "settings",
    [
        {},
        {"seed": 7, "max_tokens": 300, "temperature": None},
        {"params": {"top_p": 0.5, "response_format": {"type": "text"}}},
    ],
)
def test_the_bytes_sent_are_chat_body(level: int, settings: dict[str, Any], shared: bool) -> None:
    b = backend(**settings)
    encoder = BodyEncoder(b)
    for fmt in (schema("q1", "q2"), {"type": "json_object"}, None):
        messages = [
            {"role": "system", "content": "judge </script> \u2028"},
            {"role": "user", "content": [{"type": "text", "text": 'say "hi" \u00e9\n'}]},
        ]
        request = Request(messages, fmt, sample=2, params={"n": 1})
        for _ in range(2):  # the second time the format's JSON is remembered
            assert sent(encoder, request, level, shared) == chat_body(b, request, level)


def test_a_schema_changed_in_place_is_sent_as_it_is_now_in_the_next_run() -> None:
    encoder = BodyEncoder(backend())
    fmt = schema("q1")
    request = Request([{"role": "user", "content": "x"}], fmt)
    props = lambda: sent(encoder, request)["response_format"]["json_schema"]["schema"]["properties"]  # noqa: E731
    assert list(props()) == ["q1"]
    fmt["json_schema"]["schema"]["properties"]["q2"] = {"type": "string"}
    encoder.new_run()
    assert list(props()) == ["q1", "q2"]
    fmt["json_schema"]["name"] = "renamed"
    encoder.new_run()
    assert sent(encoder, request)["response_format"]["json_schema"]["name"] == "renamed"


def test_a_notebook_that_edits_its_schema_between_runs_sends_the_new_one() -> None:
    """Over real HTTP, on both transports: one judge, one dict edited between two runs in
    one event loop (a notebook's: the judge's connections, and its session, are kept)."""
    import rubriclab as rl
    from rubriclab.testing import FakeJudgeServer

    fmt = schema("q1")

    async def two_runs(judge: rl.Judge, server: FakeJudgeServer, transport: str) -> None:
        for ids in (["q1"], ["q1", "q2"]):
            fmt["json_schema"]["schema"]["properties"] = {i: {"type": "string"} for i in ids}
            request = Request([{"role": "user", "content": f"{transport} {ids}"}], fmt)
            assert all(r.ok for r in await judge.amap([request], progress=False))
            got = server.requests[-1]["response_format"]["json_schema"]["schema"]
            assert list(got["properties"]) == ids

    with FakeJudgeServer() as server:
        for transport in ("httpx", "aiohttp"):
            judge = rl.Judge(server.url, model="m", transport=transport, cache=False)
            asyncio.run(two_runs(judge, server, transport))


def test_formats_that_json_does_not_round_trip_are_still_sent_right() -> None:
    encoder = BodyEncoder(backend())
    fmt = {"type": "json_schema", "json_schema": {"name": "t", "enum": ("A", "B")}}
    request = Request([{"role": "user", "content": "x"}], fmt)
    for _ in range(3):
        assert sent(encoder, request)["response_format"]["json_schema"]["enum"] == ["A", "B"]


def test_many_formats_stay_bounded_and_right() -> None:
    encoder = BodyEncoder(backend())
    formats = [schema(f"q{i}") for i in range(BodyEncoder.LIMIT * 2 + 3)]
    for fmt in formats + formats[:5]:
        request = Request([{"role": "user", "content": "x"}], fmt)
        assert sent(encoder, request)["response_format"] == fmt
    assert len(encoder) <= BodyEncoder.LIMIT


def test_a_body_that_is_not_json_fails_as_before() -> None:
    encoder = BodyEncoder(backend())
    with pytest.raises(TypeError):
        encoder.encode(Request([{"role": "user", "content": "x"}], {"type": object()}), 2)


def test_params_named_messages_win_over_the_shared_json_as_in_chat_body() -> None:
    b = backend(params={"messages": [{"role": "user", "content": "from params"}]})
    encoder = BodyEncoder(b)
    request = Request([{"role": "user", "content": "asked"}], schema("q1"))
    body = sent(encoder, request, shared=True)
    assert body == chat_body(b, request)
    assert body["messages"][0]["content"] == "from params"


def test_messages_that_are_not_plain_json_are_not_shared_and_fail_their_row() -> None:
    """The key writes odd values with str(); the body must not send that text: the request
    fails on its row as it did before the key's JSON was shared."""
    import datetime

    import rubriclab as rl
    from rubriclab.testing import FakeJudgeServer

    odd = Request(
        [{"role": "user", "content": [{"type": "text", "text": datetime.date(2026, 1, 1)}]}]
    )
    assert RunKeys("e", "m", {})(odd)[1] is None
    with FakeJudgeServer() as server:
        judge = rl.Judge(server.url, model="m")  # a memory cache: keys are made
        fine = Request([{"role": "user", "content": "fine"}])
        odd_reply, fine_reply = judge.map([odd, fine], progress=False)
        assert odd_reply.error is not None and odd_reply.error.type == "internal"
        assert "not JSON serializable" in odd_reply.error.message
        assert fine_reply.ok and len(server.requests) == 1


@pytest.mark.parametrize("transport", ["httpx", "aiohttp"])
def test_the_server_reads_the_messages_asked_when_the_key_json_is_shared(transport: str) -> None:
    import rubriclab as rl
    from rubriclab.testing import FakeJudgeServer

    asked = [[{"role": "user", "content": f'row {i} \u00e9 "q" </script>'}] for i in range(5)] + [
        [
            {"role": "system", "content": "sys"},
            {"content": [{"text": "t", "type": "text"}], "role": "user"},
        ]
    ]
    with FakeJudgeServer() as server:
        judge = rl.Judge(server.url, model="m", transport=transport)
        replies = judge.map([Request(m, schema("q1")) for m in asked], progress=False)
        assert all(r.ok for r in replies)
        got = sorted(json.dumps(r["messages"], sort_keys=True) for r in server.requests)
        assert got == sorted(json.dumps(m, sort_keys=True) for m in asked)
