"""Judges on OpenAI's reasoning models (o1, o3, o4-mini, gpt-5 ...), over real HTTP.

Those models refuse ``max_tokens`` and a temperature other than their default. A known model
name on OpenAI's endpoint sends the body they take from the first call; any other endpoint
(Azure deployment names, gateways, new models) is adapted to on its own 400, once per judge.
"""

from __future__ import annotations

import logging
from typing import Any

import pytest

from rubriclab.judges import Judge, Request, Usage
from rubriclab.judges.cache import CacheEntry, MemoryCache, cache_key
from rubriclab.judges.dialect import COMPLETION_LIMIT, PLAIN, Dialect, dialect_for
from rubriclab.judges.openai import refused_field
from rubriclab.testing import (
    FakeJudgeServer,
    ServerReply,
    both_limits_refusal,
    reasoning_refusal,
)

PROMPTS = [f"Rate answer {i}: the sky is blue." for i in range(12)]
ENGINE_LOG = "rubriclab.judges.engine"


@pytest.fixture
def openai_at(monkeypatch: pytest.MonkeyPatch) -> Any:
    """``openai_at(server)``: 'openai:MODEL' specs go to ``server`` (as OPENAI_BASE_URL does)."""

    def point(server: FakeJudgeServer) -> None:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test-reasoning")

    return point


def warnings_of(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == ENGINE_LOG]


# -- which models are known ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("model", "temperature"),
    [
        ("o1", False),
        ("o1-mini", False),
        ("o3-mini-2025-01-31", False),
        ("o3", False),
        ("o4-mini", False),
        ("gpt-5", False),
        ("gpt-5-mini", False),
        ("gpt-5.1", False),
        ("ft:o4-mini-2025-04-16:acme::abc123", False),
        ("gpt-5-chat-latest", True),  # not a reasoning model: it takes a temperature
    ],
)
def test_openai_reasoning_families_are_known_by_name(model: str, temperature: bool) -> None:
    assert dialect_for(model, openai=True) == Dialect(COMPLETION_LIMIT, temperature)
    # a gateway that names OpenAI's models openai/... (OpenRouter, LiteLLM)
    assert dialect_for(f"openai/{model}", openai=False) == Dialect(COMPLETION_LIMIT, temperature)


@pytest.mark.parametrize("model", ["gpt-4o-mini", "gpt-4.1", "gpt-4o", "omni-x", "qwen2.5:7b"])
def test_other_models_and_other_endpoints_keep_the_plain_body(model: str) -> None:
    assert dialect_for(model, openai=True) == PLAIN
    # another server's "o3" is not assumed to be OpenAI's: it is adapted to on its word
    assert dialect_for("o3-mini", openai=False) == PLAIN


def test_reasoning_effort_none_keeps_the_temperature() -> None:
    """gpt-5.1 and later take a temperature when they do not reason."""
    kept = dialect_for("gpt-5.1", openai=True, params={"reasoning_effort": "none"})
    assert kept == Dialect(COMPLETION_LIMIT, True)


def test_a_derived_judge_keeps_what_was_learned_not_what_its_own_params_change(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """with_options(params=...) may change what the name rule gives (gpt-5.1 without
    reasoning takes a temperature); only refusals the endpoint itself sent carry over."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-reasoning")
    judge = Judge("openai:gpt-5.1", temperature=0.2)
    assert judge.dialect == Dialect(COMPLETION_LIMIT, False)
    no_reasoning = {"reasoning_effort": "none"}
    fresh = Judge("openai:gpt-5.1", temperature=0.2, params=no_reasoning)
    assert fresh.dialect == Dialect(COMPLETION_LIMIT, True)
    assert judge.with_options(params=no_reasoning).dialect == fresh.dialect
    # a refusal the endpoint sent does carry over (same endpoint, same model)
    fresh._backend.adapt("temperature")
    assert fresh.with_options(timeout=9).dialect == Dialect(COMPLETION_LIMIT, False)
    assert fresh.with_cache(False).dialect == Dialect(COMPLETION_LIMIT, False)


# -- a known model: the right body from the first call ------------------------------------


@pytest.mark.parametrize("style", ["o1", "o3-mini"])
@pytest.mark.parametrize("model", ["o3-mini", "o4-mini", "gpt-5-mini"])
def test_a_known_reasoning_model_sends_the_body_it_takes_from_the_first_call(
    openai_at: Any, model: str, style: str, caplog: pytest.LogCaptureFixture
) -> None:
    with FakeJudgeServer(reasoning=style) as server:
        openai_at(server)
        judge = Judge(f"openai:{model}", max_tokens=500, max_retries=0, cache=False)
        replies = judge.map(PROMPTS[:4], progress=False)
        assert [r.ok for r in replies] == [True] * 4
        assert server.calls == 4  # not one refused call
        for body in server.requests:
            assert body["max_completion_tokens"] == 500
            assert "max_tokens" not in body and "temperature" not in body
    assert warnings_of(caplog) == []


def test_describe_says_what_a_reasoning_judge_sends(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-reasoning")
    said = Judge("openai:o3-mini").describe()
    assert "temperature not sent" in said and "temperature 0" not in said
    assert "token limit sent as max_completion_tokens" in said
    plain = Judge("openai:gpt-4o-mini").describe()
    assert "temperature 0," in plain and "max_completion" not in plain


def test_cache_keys_hash_the_settings_as_given_for_every_model(openai_at: Any) -> None:
    """An earlier run's answers (keys from the judge's settings: temperature 0 and
    max_tokens, however they went out) are found again: no call is made."""
    request = Request([{"role": "user", "content": "hi"}])
    settings = {"temperature": 0.0, "seed": None, "max_tokens": 300}
    cache = MemoryCache()
    with FakeJudgeServer(reasoning="o1") as server:
        openai_at(server)
        for model in ("gpt-4o-mini", "o3-mini"):
            key = cache_key(server.url, model, request, settings)
            cache.put(key, CacheEntry(f"{model} earlier", Usage(), model))
            judge = Judge(f"openai:{model}", max_tokens=300, cache=cache)
            (reply,) = judge.map([request], progress=False)
            assert reply.cached and reply.text == f"{model} earlier"
        assert server.calls == 0


# -- an unknown model: adapted on the endpoint's word --------------------------------------


@pytest.mark.parametrize("style", ["o1", "o3-mini"])
def test_an_unknown_model_on_a_strict_endpoint_adapts_once_and_every_row_succeeds(
    style: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, ENGINE_LOG)
    with FakeJudgeServer(reasoning=style) as server:
        # an Azure deployment name: nothing says it is a reasoning model
        cache = MemoryCache()
        judge = Judge(server.url, model="my-deployment", max_tokens=300, max_retries=0, cache=cache)
        replies = judge.map(PROMPTS, progress=False)
        assert [r.ok for r in replies] == [True] * len(PROMPTS)
        assert judge.last_run.errors == {}
        refused = [rec for rec in server.log if rec.status == 400]
        # each call adapts at most once a field: bounded, whatever was in flight
        assert 2 <= len(refused) <= 2 * len(PROMPTS)
        ok = [rec.body for rec in server.log if rec.status == 200]
        assert len(ok) == len(PROMPTS)
        for body in ok:
            assert body["max_completion_tokens"] == 300
            assert "max_tokens" not in body and "temperature" not in body
        # one clear warning a field, saying what the judge sends now
        said = warnings_of(caplog)
        assert len(said) == 2
        assert any("refused max_tokens" in s and "as max_completion_tokens" in s for s in said)
        assert any("refused temperature" in s and "no temperature" in s for s in said)
        assert "temperature not sent" in judge.describe()
        # the keys did not move with the adaptation: a fresh judge finds every answer
        before = server.calls
        fresh = Judge(server.url, model="my-deployment", max_tokens=300, cache=cache)
        assert all(r.cached for r in fresh.map(PROMPTS, progress=False))
        assert server.calls == before
        # learned for good: the next run and a derived judge send the right body at once
        judge.map(["new 1", "new 2", "new 3"], progress=False)
        judge.with_options(timeout=30).complete("one more")
        assert server.calls == before + 4
        assert all(rec.status == 200 for rec in server.log[before:])
    assert len(warnings_of(caplog)) == 2


def test_a_refusal_that_persists_ends_the_call_without_a_loop(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A gateway that refuses max_tokens whatever is sent: one adapted retry, then the 400
    is the row's error (never a loop, whatever the retry budget)."""
    refusal = reasoning_refusal({"max_tokens": 1})
    with FakeJudgeServer(lambda body: ServerReply(400, refusal)) as server:
        judge = Judge(server.url, model="gw", max_tokens=50, max_retries=4, cache=False)
        reply = judge.complete("x")
        assert reply.error is not None and reply.error.type == "bad_request"
        assert "max_tokens" in reply.error.message and reply.error.status == 400
        assert server.calls == 2 and reply.attempts == 2
        assert "max_tokens" in server.requests[0]
        assert server.requests[1]["max_completion_tokens"] == 50
        judge.complete("y")  # adapted already: one call, no new warning
        assert server.calls == 3
    assert len(warnings_of(caplog)) == 1


def test_a_limit_out_of_range_is_not_a_refused_field() -> None:
    """'max_tokens is too large' is about the value: the field stays, the row gets the 400."""
    too_large = {
        "error": {
            "message": "max_tokens is too large: 100000. This model supports at most 16384 "
            "completion tokens, whereas you provided 100000.",
            "type": "invalid_request_error",
            "param": "max_tokens",
            "code": "invalid_value",
        }
    }
    with FakeJudgeServer(lambda body: ServerReply(400, too_large)) as server:
        judge = Judge(server.url, model="m", max_tokens=100000, cache=False)
        reply = judge.complete("x")
        assert reply.error is not None and server.calls == 1
        assert judge.dialect == PLAIN


def test_a_gateway_that_keeps_only_the_message_is_understood() -> None:
    said = "Unsupported parameter: 'max_tokens' is not supported with this model."
    bare = {"error": {"message": said, "code": "invalid_request_body"}}

    def strict(body: dict[str, Any]) -> Any:
        return ServerReply(400, bare) if "max_tokens" in body else "fine"

    with FakeJudgeServer(strict) as server:
        judge = Judge(server.url, model="m", max_tokens=64, cache=False)
        assert judge.complete("x").text == "fine"
        assert server.requests[-1]["max_completion_tokens"] == 64


def test_a_request_limit_wins_over_the_judges_whichever_field_names_it() -> None:
    with FakeJudgeServer(reasoning="o1") as server:
        judge = Judge(
            server.url,
            model="openai/o4-mini",  # a gateway's name for OpenAI's model: known
            max_tokens=100,
            params={"max_completion_tokens": 200},
            cache=False,
        )
        assert judge.complete("x").ok
        raised = Request([{"role": "user", "content": "y"}], params={"max_tokens": 400})
        assert judge.map([raised], progress=False)[0].ok
        assert [b["max_completion_tokens"] for b in server.requests] == [200, 400]
        assert server.calls == 2 and judge.token_limit == 200


def test_a_body_naming_both_limits_is_adapted_to_one() -> None:
    """OpenAI refuses max_tokens next to max_completion_tokens ('invalid_parameter_combination'):
    the judge keeps the one its params name, the higher layer, and sends only that."""

    def strict(body: dict[str, Any]) -> Any:
        refusal = both_limits_refusal(body)
        return "fine" if refusal is None else ServerReply(400, refusal)

    with FakeJudgeServer(strict) as server:
        params = {"max_completion_tokens": 1000}
        judge = Judge(server.url, model="gpt-4.1", max_tokens=500, params=params, cache=False)
        assert judge.complete("x").text == "fine"
        assert server.calls == 2
        assert server.requests[-1]["max_completion_tokens"] == 1000
        assert "max_tokens" not in server.requests[-1]


ODD_CODES = [[], {"k": 1}, ["unsupported_parameter"]]


@pytest.mark.parametrize("code", ODD_CODES)
def test_an_error_code_that_is_not_a_string_is_the_rows_400_not_a_crash(code: Any) -> None:
    """Error bodies are the endpoint's: a list or object as the code is read as no code."""
    odd = {"error": {"message": "Unsupported: 'max_tokens' is odd", "code": code}}
    assert refused_field({"error": {"message": "bad", "code": code}}) is None
    assert refused_field(odd) == "max_tokens"  # the words still say it
    with FakeJudgeServer(lambda body: ServerReply(400, {"error": {"code": code}})) as server:
        judge = Judge(server.url, model="m", max_tokens=50, cache=False)
        reply = judge.complete("x")
        assert reply.error is not None and reply.error.type == "bad_request"
        assert reply.error.status == 400 and server.calls == 1
