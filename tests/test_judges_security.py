"""A sentinel API key never leaks: not in results, reprs, errors, logs, cache files or pickles."""

from __future__ import annotations

import contextlib
import gc
import logging
import pickle
import re
import traceback
import types
from pathlib import Path
from typing import Any
from urllib.parse import quote

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


# -- every header value is a secret unless marked public (issue 13) -------------------------------

SUBSCRIPTION = "4f1c9e0b7a2d4e6f8a1b3c5d7e9f0a2b"  # an Azure APIM-style key, in no known header


def _every_output(result: Any, tmp_path: Path) -> dict[str, str]:
    """What a user keeps or shows of a result: table, JSONL, Parquet, report, widget state."""
    import json

    from rubriclab.widgets import Explanation, ResultTable
    from rubriclab.widgets.report import write_report_html

    jsonl = result.save(tmp_path / "r.jsonl")
    parquet = result.save(tmp_path / "r.parquet")
    page = write_report_html(tmp_path / "report.html", {"run": result})
    table = ResultTable(result)
    explanation = Explanation(result)
    return {
        "table": result.table.to_csv() + repr(result.table.to_dict()),
        "jsonl": jsonl.read_text(encoding="utf-8"),
        "parquet": parquet.read_bytes().decode("latin-1"),
        "report": page.read_text(encoding="utf-8"),
        "widget state": json.dumps(table.get_state(), default=str)
        + json.dumps(explanation.get_state(), default=str),
        "result pickle": pickle.dumps(result).decode("latin-1"),
    }


@pytest.mark.parametrize("status", ["401", "500"])
def test_a_header_echoed_by_a_gateway_never_reaches_any_output(tmp_path: Path, status: str) -> None:
    import rubriclab as rl
    from rubriclab.judges import Public
    from rubriclab.testing import Faults

    faults = Faults(echo_headers=True, **{f"rate_{status}": 1.0})
    with FakeJudgeServer(faults=faults) as server:
        judge = Judge(
            server.url,
            model="m",
            headers={"Ocp-Apim-Subscription-Key": SUBSCRIPTION, "X-Title": Public("run 7")},
            max_retries=1,
            backoff_base=0.01,
        )
        metric = rl.metrics.RubricMetric(name="chk", rubric=rl.Rubric.checklist(["Right?"]))
        data = [{"prompt": f"q{i}", "response": f"a{i}"} for i in range(3)]
        result = rl.evaluate(data, metrics=[metric], judge=judge)
        sent = server.log[0].headers
    assert sent["ocp-apim-subscription-key"] == SUBSCRIPTION  # it was used
    echoed = [r for r in server.log if r.status == int(status)]
    assert echoed  # and the server really quoted it back
    errors = result.table["chk/error"].tolist()
    assert all(e for e in errors)  # every row records its failure...
    assert "run 7" in result.table["chk/raw_output"].iloc[0]  # ...with the public header kept
    for where, text in _every_output(result, tmp_path).items():
        assert SUBSCRIPTION not in text, where
        assert SUBSCRIPTION[:12] not in text, where
    assert SUBSCRIPTION.encode() not in pickle.dumps(judge)
    assert SUBSCRIPTION not in repr(judge) + judge.describe() + repr(vars(judge))


def test_echoes_in_json_escaped_url_encoded_and_base64_forms_are_scrubbed(
    fake_judge: FakeJudgeServer,
) -> None:
    import base64
    import json
    import urllib.parse

    key = 'k3y/with+odd"chars\\and=more'
    basic = base64.b64encode(b"alice:" + key.encode()).decode()
    forms = {
        "json": json.dumps(key)[1:-1],
        "url": urllib.parse.quote(key, safe=""),
        "b64": base64.b64encode(key.encode()).decode(),
        "basic": basic,
        "pair": "alice:" + key,
    }
    fake_judge.responder = lambda body: ServerReply(
        500, {"error": {"message": " | ".join(f"{k}={v}" for k, v in forms.items())}}
    )
    judge = Judge(
        fake_judge.url,
        model="m",
        headers={"X-Custom-Auth": key, "Authorization-Extra": f"Basic {basic}"},
        max_retries=0,
    )
    reply = judge.complete("x")
    assert reply.error is not None
    kept = reply.error.message + (reply.error.raw or "")
    for name, form in forms.items():
        assert form not in kept, name
    assert "json=***" in kept and "url=***" in kept


@pytest.mark.parametrize(
    "url",
    [
        "https://alice:sk-secret@api.example.com/v1",
        "https://api.example.com/v1?api-key=sk-secret",
        "https://api.example.com/v1?key=sk-secret",
        "https://api.example.com/v1?api-version=2024-06-01&token=sk-secret",
        "https://api.example.com/v1?subscription-key=sk-secret",
    ],
)
def test_urls_carrying_credentials_are_refused_saying_where_the_key_goes(url: str) -> None:
    with pytest.raises(JudgeConfigError) as info:
        Judge(url, model="m")
    message = str(info.value)
    assert "sk-secret" not in message
    assert "api_key=" in message and "header" in message


def test_a_url_with_an_ordinary_query_is_accepted(fake_judge: FakeJudgeServer) -> None:
    judge = Judge(fake_judge.url + "?api-version=2024-06-01", model="m")
    assert judge.base_url is not None and "api-version" in judge.base_url


def test_a_base_url_variable_carrying_credentials_is_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SENTINEL)
    monkeypatch.setenv("OPENAI_BASE_URL", "https://u:p4ssw0rd@proxy.example.com/v1")
    with pytest.raises(JudgeConfigError, match=r"\$OPENAI_BASE_URL carries credentials"):
        Judge("openai:gpt-4o-mini")


@pytest.mark.parametrize("transport", ["httpx", "aiohttp"])
def test_a_redirect_is_not_followed_so_the_key_stays_with_its_endpoint(
    transport: str,
) -> None:
    with FakeJudgeServer() as elsewhere, FakeJudgeServer() as server:
        server.responder = lambda body: ServerReply(
            307, {"error": {"message": "moved"}}, {"location": f"{elsewhere.url}/chat/completions"}
        )
        judge = Judge(server.url, model="m", api_key=SENTINEL, transport=transport)
        reply = judge.complete("x")
        assert reply.error is not None and reply.error.status == 307
        assert server.calls == 1 and elsewhere.calls == 0
        assert not leaks(reply)


# -- five more gaps (issue 25, finding 5): each fails on the code before it ------------------------

ODD_KEY = "sk-proj/Ab+cd=EF0123456789xyz"  # a key with characters that escape and encode


def _kept(reply: Any) -> str:
    error = reply.error
    parts = [reply.text or "", reply.model or "", reply.finish_reason or ""]
    if error is not None:
        parts += [error.message, error.raw or "", str(error), repr(reply.to_dict())]
    return "\n".join(parts)


def _decoded(text: str) -> str:
    """``text`` and what a reader gets by decoding it as JSON or as a URL."""
    import json
    import urllib.parse

    out = [text, urllib.parse.unquote(text)]
    with contextlib.suppress(ValueError):
        out.append(json.dumps(json.loads(text), ensure_ascii=False))
    return "\n".join(out)


@pytest.mark.parametrize("transport", ["httpx", "aiohttp"])
def test_the_http_reason_phrase_is_scrubbed_before_it_becomes_the_error(
    transport: str, tmp_path: Path
) -> None:
    """A gateway puts the key in the status line and sends no body: the reason phrase was the
    error message, unscrubbed, in the error column and every file made from it."""
    import rubriclab as rl
    from rubriclab.result.junit import write_junit

    with FakeJudgeServer() as server:
        server.responder = lambda body: ServerReply(
            502, b"", reason=f"Bad Gateway (upstream refused Bearer {SENTINEL})"
        )
        judge = Judge(server.url, model="m", api_key=SENTINEL, max_retries=0, transport=transport)
        reply = judge.complete("x")
        assert reply.error is not None and "Bad Gateway" in reply.error.message
        assert SENTINEL not in _kept(reply) and SENTINEL[:12] not in _kept(reply)
        metric = rl.metrics.RubricMetric(name="chk", rubric=rl.Rubric.checklist(["Right?"]))
        result = rl.evaluate([{"prompt": "q", "response": "a"}], metrics=[metric], judge=judge)
    assert "Bad Gateway" in result.table["chk/error"].iloc[0]
    outputs = _every_output(result, tmp_path)
    outputs["junit"] = write_junit({"run": result}, tmp_path / "j.xml").read_text(encoding="utf-8")
    for where, text in outputs.items():
        assert SENTINEL[:12] not in text, where


@pytest.mark.parametrize(
    "spelling",
    [
        pytest.param(lambda k: k.replace("/", "\\/"), id="solidus-escape"),
        pytest.param(lambda k: "".join(f"\\u{ord(c):04x}" for c in k), id="unicode-escapes"),
        pytest.param(lambda k: "".join(f"\\u{ord(c):04X}" for c in k[:5]) + k[5:], id="mixed"),
        pytest.param(
            lambda k: re.sub(r"%[0-9A-F]{2}", lambda m: m[0].lower(), quote(k, safe="")),
            id="pct-lower",
        ),
        pytest.param(lambda k: k.replace("/", "%2f").replace("+", "%2b"), id="pct-some"),
    ],
)
def test_escaped_and_encoded_echoes_are_scrubbed_from_the_raw_body(
    fake_judge: FakeJudgeServer, spelling: Any
) -> None:
    """The raw body is kept as sent: a key spelled with JSON escapes or lower-case
    percent-encoding slipped past the scrub and decoded back to the key."""
    echoed = spelling(ODD_KEY)
    body = ('{"error": {"message": "denied"}, "echo": "' + echoed + '"}').encode()
    fake_judge.responder = lambda b: ServerReply(500, body)
    judge = Judge(fake_judge.url, model="m", api_key=ODD_KEY, max_retries=0)
    reply = judge.complete("x")
    assert reply.error is not None and reply.error.raw and "denied" in reply.error.raw
    kept = _kept(reply)
    assert echoed not in kept
    assert ODD_KEY not in _decoded(reply.error.raw)


def test_a_replys_model_and_finish_reason_are_scrubbed_before_the_cache(
    fake_judge: FakeJudgeServer, tmp_path: Path
) -> None:
    """They went to the cache DB (and the result) as the endpoint wrote them."""
    from rubriclab.testing.server import completion_body

    def echo(body: dict[str, Any]) -> dict[str, Any]:
        answer = completion_body(body, "fine", 0)
        answer["model"] = f"gpt-x (key {SENTINEL})"
        answer["choices"][0]["finish_reason"] = f"stop:{SENTINEL}"
        return answer

    fake_judge.responder = echo
    judge = Judge(fake_judge.url, model="m", api_key=SENTINEL, cache=tmp_path / "c.sqlite3")
    reply = judge.complete("x")
    assert reply.ok and reply.text == "fine" and reply.model.startswith("gpt-x")
    assert SENTINEL[:12] not in _kept(reply)
    judge.cache.close()  # type: ignore[union-attr]
    for path in tmp_path.iterdir():
        assert SENTINEL[:12].encode() not in path.read_bytes(), path.name
    again = Judge(fake_judge.url, model="m", api_key=SENTINEL, cache=tmp_path / "c.sqlite3")
    assert again.complete("x").cached


def test_a_batch_error_lines_raw_output_is_scrubbed(tmp_path: Path) -> None:
    """A provider's error line quoting the key: its message was scrubbed, its raw line (the
    row's raw_output) was not."""
    from rubriclab.testing.batch_server import FakeBatchServer

    def echo(kind: str, lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
        for line in lines:
            if kind == "error" and line.get("response"):
                line["response"]["body"]["error"]["message"] = f"bad key {SENTINEL}"
                line["response"]["body"]["echo"] = SENTINEL.replace("-", "\\u002d")
        return lines

    with FakeBatchServer(api_key=SENTINEL, fail=lambda cid: True, lines_hook=echo) as server:
        judge = Judge(
            server.url,
            model="m",
            api_key=SENTINEL,
            batch=True,
            batch_poll_interval=0.01,
            cache=tmp_path / "c.sqlite3",
            max_retries=0,
        )
        replies = judge.map(["a", "b"], progress=False)
    for reply in replies:
        assert reply.error is not None and reply.error.raw and "bad key" in reply.error.raw
        assert SENTINEL[:12] not in _decoded(_kept(reply))
        assert SENTINEL[:12] not in _decoded(reply.error.raw)
