"""The ask-parse-reask loop every judged step uses, over a real HTTP judge server."""

from __future__ import annotations

import json
from typing import Any

import pytest

import rubriclab as rl
from rubriclab.ask import REASK_MESSAGE, Ask, InvalidAnswer, ask_all, user_messages
from rubriclab.judges.sync import run_sync
from rubriclab.parse import extract_json
from rubriclab.testing import FakeJudgeServer, both_limits_refusal
from rubriclab.testing.server import ServerReply, completion_body

FORMAT = {"type": "json_schema", "json_schema": {"name": "t", "schema": {"type": "object"}}}


def _read_number(text: str) -> int:
    data = extract_json(text, expect=dict)
    if not isinstance(data, dict) or not isinstance(data.get("n"), int):
        raise InvalidAnswer("no integer 'n'")
    return int(data["n"])


def _ask(text: str = "give n") -> Ask:
    return Ask(user_messages(text), FORMAT, 0, _read_number)


def _judge(server: FakeJudgeServer) -> rl.Judge:
    return rl.Judge(server.url, model="m", max_retries=0, cache=False)


def test_a_good_answer_is_read_once() -> None:
    with FakeJudgeServer(lambda body: json.dumps({"n": 7})) as server:
        ask = _ask()
        run_sync(ask_all([ask], _judge(server), reask=1, desc="t"))
        assert ask.parsed == 7 and ask.error is None
        assert len(server.requests) == 1 and ask.raw == '{"n": 7}'


def test_an_unreadable_answer_is_asked_again_with_the_reason_in_the_conversation() -> None:
    answers = iter(["not json at all", json.dumps({"n": "x"}), json.dumps({"n": 3})])
    with FakeJudgeServer(lambda body: next(answers)) as server:
        ask = _ask()
        run_sync(ask_all([ask], _judge(server), reask=2, desc="t"))
        assert ask.parsed == 3 and ask.error is None and len(ask.replies) == 3
        last = server.requests[-1]["messages"]
        assert [m["role"] for m in last] == ["user", "assistant", "user", "assistant", "user"]
        assert last[-1]["content"] == REASK_MESSAGE.format(reason="no integer 'n'")


def test_after_the_last_reask_the_row_keeps_its_error_and_raw_answer() -> None:
    with FakeJudgeServer(lambda body: "still not json") as server:
        ask = _ask()
        run_sync(ask_all([ask], _judge(server), reask=1, desc="t"))
        assert ask.parsed is None and len(server.requests) == 2
        assert ask.error is not None and ask.error.startswith("unreadable judge answer")
        assert ask.raw == "still not json"


def test_a_failed_call_is_recorded_and_not_reasked() -> None:
    reply = ServerReply(400, {"error": {"message": "context too long"}})
    with FakeJudgeServer(lambda body: reply) as server:
        ask = _ask()
        run_sync(ask_all([ask], _judge(server), reask=3, desc="t"))
        assert len(server.requests) == 1
        assert ask.error is not None and "judge call failed" in ask.error


def _cut_below(field: str, used: int | None = None) -> Any:
    """A responder that cuts its answer off while the body's ``field`` is under 2000 (and
    refuses a body naming both token limits, as OpenAI does)."""

    def respond(body: dict[str, Any]) -> Any:
        refusal = both_limits_refusal(body)
        if refusal is not None:
            return ServerReply(400, refusal)
        if body.get(field, 0) < 2000:
            full = completion_body(body, '{"n": 1', 0)
            full["choices"][0]["finish_reason"] = "length"
            if used is not None:
                full["usage"]["completion_tokens"] = used
            return full
        return json.dumps({"n": 1})

    return respond


def test_a_cut_off_answer_is_asked_again_with_a_larger_max_tokens() -> None:
    with FakeJudgeServer(_cut_below("max_tokens")) as server:
        ask = _ask()
        judge = rl.Judge(server.url, model="m", max_retries=0, cache=False, max_tokens=1000)
        run_sync(ask_all([ask], judge, reask=1, desc="t"))
        assert ask.parsed == 1 and ask.error is None
        assert [r.get("max_tokens") for r in server.requests] == [1000, 2024]


@pytest.mark.parametrize("model", ["o3-mini", "my-deployment"])
def test_a_cut_off_reasoning_answer_is_asked_again_with_a_larger_max_completion_tokens(
    model: str,
) -> None:
    """A reasoning model takes max_completion_tokens only: a known one from the first call,
    an unknown one once its endpoint said so; the re-ask raises that field."""
    # reasoning tokens count in completion_tokens too: a cut answer used all of the limit
    respond = _cut_below("max_completion_tokens", used=1000)
    with FakeJudgeServer(respond, reasoning="o1") as server:
        ask = _ask()
        name = f"openai/{model}" if model == "o3-mini" else model  # a gateway's name: known
        judge = rl.Judge(server.url, model=name, max_retries=0, cache=False, max_tokens=1000)
        run_sync(ask_all([ask], judge, reask=1, desc="t"))
        assert ask.parsed == 1 and ask.error is None
        answered = [rec.body for rec in server.log if rec.status == 200]
        assert [b["max_completion_tokens"] for b in answered] == [1000, 2024]
        assert not any("max_tokens" in b for b in answered)
        assert ask.params == {"max_completion_tokens": 2024}
        stuck = _ask("another")  # not asked again: the row says which limit it hit
        run_sync(ask_all([stuck], judge, reask=0, desc="t"))
        assert stuck.error is not None
        assert "cut off at max_completion_tokens 1000 after 1000 tokens" in stuck.error


def test_a_re_ask_raises_the_limit_field_the_judges_params_already_use() -> None:
    """OpenAI refuses a body naming both max_tokens and max_completion_tokens: a judge set up
    with params={"max_completion_tokens": ...} is re-asked with that field only."""
    with FakeJudgeServer(_cut_below("max_completion_tokens")) as server:
        ask = _ask()
        params = {"max_completion_tokens": 1000}
        judge = rl.Judge(server.url, model="gpt-4.1", max_retries=0, cache=False, params=params)
        run_sync(ask_all([ask], judge, reask=1, desc="t"))
        assert ask.parsed == 1 and ask.error is None
        assert [b.get("max_completion_tokens") for b in server.requests] == [1000, 2024]
        assert not any("max_tokens" in b for b in server.requests)


@pytest.mark.parametrize("media", [False, True])
def test_user_messages_carry_a_cases_images_as_content_parts(media: bool) -> None:
    from rubriclab.data import to_cases

    png = "data:image/png;base64,iVBORw0KGgo="
    frame = {"prompt": ["look"], "response": ["ok"]}
    if media:
        frame["image"] = [png]
    import pandas as pd

    case = to_cases(pd.DataFrame(frame))[0]
    content = user_messages("hello", case)[0]["content"]
    if media:
        assert content[0] == {"type": "text", "text": "hello"}
        assert content[1]["type"] == "image_url"
    else:
        assert content == "hello"
