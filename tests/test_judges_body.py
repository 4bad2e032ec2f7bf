"""The request body as sent: ``BodyEncoder`` writes each response_format's JSON once per
run, and must send exactly what ``chat_body`` describes, whatever happens to the schema."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from rubriclab.judges import Request
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


def sent(encoder: BodyEncoder, request: Request, level: int = 2) -> dict[str, Any]:
    body: dict[str, Any] = json.loads(encoder.encode(request, level))
    return body


@pytest.mark.parametrize("level", [0, 1, 2])
@pytest.mark.parametrize(
    "settings",
    [
        {},
        {"seed": 7, "max_tokens": 300, "temperature": None},
        {"params": {"top_p": 0.5, "response_format": {"type": "text"}}},
    ],
)
def test_the_bytes_sent_are_chat_body(level: int, settings: dict[str, Any]) -> None:
    b = backend(**settings)
    encoder = BodyEncoder(b)
    for fmt in (schema("q1", "q2"), {"type": "json_object"}, None):
        request = Request(
            [{"role": "user", "content": 'say "hi" \u00e9\n'}], fmt, sample=2, params={"n": 1}
        )
        for _ in range(2):  # the second time the format's JSON is remembered
            assert sent(encoder, request, level) == chat_body(b, request, level)


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
