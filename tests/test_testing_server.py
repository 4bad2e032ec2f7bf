"""The fake judge server, seen from a plain HTTP client: what each fault looks like on the wire."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from typing import Any

import httpx
import pytest

from rubriclab.testing import FakeJudgeServer, Faults, ServerReply

BODY = {"model": "m", "messages": [{"role": "user", "content": "grade this answer please"}]}


def post(server: FakeJudgeServer, body: Any = BODY, timeout: float = 5.0) -> httpx.Response:
    return httpx.post(f"{server.url}/chat/completions", json=body, timeout=timeout)


def test_default_answer_is_a_chat_completion_with_usage(fake_judge: FakeJudgeServer) -> None:
    response = post(fake_judge)
    assert response.status_code == 200
    data = response.json()
    assert data["choices"][0]["message"]["content"].startswith("[mock judge]")
    assert data["usage"]["prompt_tokens"] == 4 + 4  # 4 words + 4 per message
    assert data["usage"]["total_tokens"] == (
        data["usage"]["prompt_tokens"] + data["usage"]["completion_tokens"]
    )
    assert fake_judge.requests == [BODY]
    assert fake_judge.calls == 1
    assert fake_judge.log[0].succeeded


def test_default_answer_fills_a_json_schema(fake_judge: FakeJudgeServer) -> None:
    schema = {
        "type": "object",
        "properties": {"verdict": {"enum": ["YES", "NO"]}, "evidence": {"type": "string"}},
        "required": ["verdict", "evidence"],
    }
    body = {**BODY, "response_format": {"type": "json_schema", "json_schema": {"schema": schema}}}
    answer = json.loads(post(fake_judge, body).json()["choices"][0]["message"]["content"])
    assert answer["verdict"] in ("YES", "NO")
    assert answer["evidence"].startswith("[mock judge]")


def test_responder_and_scripted_replies(fake_judge: FakeJudgeServer) -> None:
    fake_judge.responder = lambda body: "echo: " + body["messages"][0]["content"]
    assert post(fake_judge).json()["choices"][0]["message"]["content"] == (
        "echo: grade this answer please"
    )
    fake_judge.responder = lambda body: {"choices": [{"message": {"content": "full"}}]}
    assert post(fake_judge).json() == {"choices": [{"message": {"content": "full"}}]}
    fake_judge.responder = lambda body: ServerReply(401, {"error": {"message": "bad key"}})
    response = post(fake_judge)
    assert response.status_code == 401
    assert response.json()["error"]["message"] == "bad key"
    assert fake_judge.log[-1].fault == "scripted_401"


def test_a_responder_that_raises_answers_500_with_the_reason(fake_judge: FakeJudgeServer) -> None:
    def broken(body: dict[str, Any]) -> str:
        raise KeyError("no such case")

    fake_judge.responder = broken
    response = post(fake_judge)
    assert response.status_code == 500
    assert "KeyError" in response.json()["error"]["message"]


@pytest.mark.parametrize(
    ("faults", "status", "header"),
    [
        (Faults(rate_429=1.0, retry_after=7), 429, "7"),
        (Faults(rate_500=1.0), 500, None),
        (Faults(rate_503=1.0, retry_after=2), 503, "2"),
    ],
)
def test_error_faults(faults: Faults, status: int, header: str | None) -> None:
    with FakeJudgeServer(faults=faults) as server:
        response = post(server)
    assert response.status_code == status
    assert response.headers.get("retry-after") == header
    assert server.log[0].fault == str(status)


def test_malformed_truncated_and_empty_bodies() -> None:
    with FakeJudgeServer(faults=Faults(rate_malformed=1.0)) as server:
        response = post(server)
        assert response.status_code == 200
        with pytest.raises(json.JSONDecodeError):
            response.json()
    with (
        FakeJudgeServer(faults=Faults(rate_truncated=1.0)) as server,
        pytest.raises(httpx.RemoteProtocolError),
    ):
        post(server)
    with FakeJudgeServer(faults=Faults(rate_empty=1.0)) as server:
        assert post(server).json()["choices"] == []


def test_a_hang_outlasts_the_client_timeout_and_ends_when_it_gives_up() -> None:
    with FakeJudgeServer(faults=Faults(rate_hang=1.0)) as server:
        with pytest.raises(httpx.ReadTimeout):
            post(server, timeout=0.3)
        assert server.log[0].fault == "hang"
        assert server.log[0].status is None  # nothing was ever sent back


def test_fault_rates_are_drawn_reproducibly() -> None:
    kinds = []
    for _ in range(2):
        with FakeJudgeServer(faults=Faults(rate_500=0.3, rate_empty=0.2, seed=5)) as server:
            with httpx.Client(timeout=5) as client:
                for _ in range(200):
                    client.post(f"{server.url}/chat/completions", json=BODY)
            kinds.append([r.fault for r in server.log])
    assert kinds[0] == kinds[1]
    assert 40 <= kinds[0].count("500") <= 80
    assert 20 <= kinds[0].count("empty") <= 60


def test_bad_fault_rates_are_refused() -> None:
    with pytest.raises(ValueError, match="more than 1"):
        Faults(rate_429=0.7, rate_500=0.5)
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        Faults(rate_hang=-0.1)


def test_peak_in_flight_counts_concurrent_requests() -> None:
    # the server answers none until all five are in flight: they overlap by construction
    with FakeJudgeServer(hold_until=5) as server:
        threads = [threading.Thread(target=post, args=(server,)) for _ in range(5)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert server.peak_in_flight == 5
        assert server.in_flight == 0
        server.reset()
        assert server.peak_in_flight == 0 and server.requests == []


def test_other_routes(fake_judge: FakeJudgeServer) -> None:
    root = fake_judge.url.rsplit("/v1", 1)[0]
    assert httpx.get(f"{fake_judge.url}/models").json()["data"][0]["id"] == "fake-judge"
    assert httpx.get(f"{root}/nowhere").status_code == 404
    post(fake_judge)
    assert httpx.get(f"{root}/_stats").json()["calls"] == 1
    httpx.post(f"{root}/_reset")
    assert fake_judge.calls == 0
    bad = httpx.post(f"{fake_judge.url}/chat/completions", content=b"{not json")
    assert bad.status_code == 400


def test_keep_alive_serves_many_requests_on_one_connection(fake_judge: FakeJudgeServer) -> None:
    with httpx.Client(timeout=5, limits=httpx.Limits(max_connections=1)) as client:
        for _ in range(20):
            client.post(f"{fake_judge.url}/chat/completions", json=BODY).raise_for_status()
    assert fake_judge.calls == 20


@pytest.mark.parametrize(
    ("flags", "body", "status"),
    [
        (["--rate-500", "1"], BODY, 500),
        (["--reasoning", "o1"], {**BODY, "max_tokens": 5}, 400),  # as o1 refuses max_tokens
    ],
)
def test_runs_as_its_own_process_and_prints_its_url(
    flags: list[str], body: dict[str, Any], status: int
) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "rubriclab.testing", "--port", "0", *flags],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:") and url.endswith("/v1")
        response = httpx.post(f"{url}/chat/completions", json=body, timeout=5)
        assert response.status_code == status
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=10)
    assert proc.returncode == 0
    assert "served 1 calls" in err


# -- faults grown for issue 13 -----------------------------------------------------------------


def test_a_token_bucket_limit_refuses_past_its_burst_and_says_so_in_headers() -> None:
    from rubriclab.judges.pacing import parse_duration
    from rubriclab.testing import RateLimit

    limit = RateLimit(requests_per_second=1, burst=3)
    with FakeJudgeServer(rate_limit=limit) as server, httpx.Client(timeout=5) as client:
        answers = [client.post(f"{server.url}/chat/completions", json=BODY) for _ in range(4)]
    assert [a.status_code for a in answers] == [200, 200, 200, 429]
    first, refused = answers[0].headers, answers[3].headers
    assert first["x-ratelimit-limit-requests"] == "3"
    assert first["x-ratelimit-remaining-requests"] == "2"
    assert 0 < (parse_duration(first["x-ratelimit-reset-requests"]) or 0) <= 1.0
    assert refused["x-ratelimit-remaining-requests"] == "0"
    assert 0 < float(refused["retry-after-ms"]) <= 1000 and refused["retry-after"] == "1"
    assert server.log[3].fault == "rate_limit"


def test_a_token_limit_counts_prompt_tokens() -> None:
    from rubriclab.testing import RateLimit

    limit = RateLimit(requests_per_second=100, tokens_per_second=1, token_burst=10)
    with FakeJudgeServer(rate_limit=limit) as server:
        first = post(server)  # 8 prompt tokens of 10
        second = post(server)
    assert first.status_code == 200 and first.headers["x-ratelimit-remaining-tokens"] == "2"
    assert second.status_code == 429


def test_reset_surrogate_401_and_header_echo() -> None:
    faults = Faults(rate_reset=1.0)
    with FakeJudgeServer(faults=faults) as server:
        with pytest.raises(httpx.TransportError) as info:
            post(server)
        assert "reset" in str(info.value).lower() or "disconnect" in str(info.value).lower()
        server.faults = Faults(rate_surrogate=1.0)
        raw = post(server).content
        assert b"\\ud800" in raw  # valid JSON, a lone surrogate once decoded
        assert "\ud800" in json.loads(raw)["choices"][0]["message"]["content"]
        server.faults = Faults(rate_401=1.0, echo_headers=True)
        echoed = httpx.post(
            f"{server.url}/chat/completions", json=BODY, headers={"x-secret-thing": "s3cr3t"}
        )
        assert echoed.status_code == 401
        assert echoed.json()["error"]["request_headers"]["x-secret-thing"] == "s3cr3t"
        assert "s3cr3t" in echoed.json()["error"]["message"]


def test_retry_after_ms_is_sent_when_asked() -> None:
    with FakeJudgeServer(faults=Faults(rate_429=1.0, retry_after=2, retry_after_ms=150)) as s:
        response = post(s)
    assert response.headers["retry-after"] == "2" and response.headers["retry-after-ms"] == "150"


def test_a_request_is_logged_when_it_arrives_even_if_the_client_leaves_at_once() -> None:
    with FakeJudgeServer(faults=Faults(rate_hang=1.0, hang_seconds=30)) as server:
        with pytest.raises(httpx.TimeoutException):
            post(server, timeout=0.2)
        assert server.calls == 1 and server.log[0].fault == "hang"
        stats = httpx.get(server.url.rsplit("/v1", 1)[0] + "/_stats", timeout=5).json()
        assert stats["calls"] == 1 and stats["faults"] == {"hang": 1}


@pytest.mark.parametrize(
    ("style", "body", "param", "code", "message"),
    [
        (
            "o1",
            {"max_tokens": 10, "temperature": 1},
            "max_tokens",
            "unsupported_parameter",
            "Unsupported parameter: 'max_tokens' is not supported with this model. "
            "Use 'max_completion_tokens' instead.",
        ),
        (
            "o1",
            {"max_completion_tokens": 10, "temperature": 0},
            "temperature",
            "unsupported_value",
            "Unsupported value: 'temperature' does not support 0 with this model. "
            "Only the default (1) value is supported.",
        ),
        (
            "o3-mini",
            {"temperature": 1},
            "temperature",
            "unsupported_parameter",
            "Unsupported parameter: 'temperature' is not supported with this model.",
        ),
    ],
)
def test_a_reasoning_server_refuses_with_openais_own_error_bodies(
    style: str, body: dict[str, Any], param: str, code: str, message: str
) -> None:
    with FakeJudgeServer(reasoning=style) as server:
        sent = {"model": "o3", "messages": [{"role": "user", "content": "hi"}], **body}
        response = httpx.post(f"{server.url}/chat/completions", json=sent)
        assert response.status_code == 400
        assert response.json() == {
            "error": {
                "message": message,
                "type": "invalid_request_error",
                "param": param,
                "code": code,
            }
        }
        taken = {"model": "o3", "messages": sent["messages"], "max_completion_tokens": 5}
        if style == "o1":
            taken["temperature"] = 1  # the default is the one value o1 takes
        assert httpx.post(f"{server.url}/chat/completions", json=taken).status_code == 200
        assert [rec.fault for rec in server.log] == ["refused_param", None]
