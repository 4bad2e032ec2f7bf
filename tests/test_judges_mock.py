"""The mock judge: offline, deterministic, well-formed for any schema, and labelled as a mock."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import Any, Literal

import pytest
from pydantic import BaseModel, Field

from rubriclab.judges import Judge
from rubriclab.judges.mock import LABEL, mock_answer, register_responder, unregister_responder

USER = "Summarise: the deadline is August 15th and Chloe leads marketing from August 1st."


def schema_format(schema: dict[str, Any]) -> dict[str, Any]:
    return {"type": "json_schema", "json_schema": {"name": "out", "schema": schema, "strict": True}}


def strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from strings(v)


class Level(BaseModel):
    criterion: Literal["accuracy", "completeness", "concision", "tone"]
    level: int = Field(ge=1, le=4)
    evidence: str
    rationale: str


class Critique(BaseModel):
    criteria: list[Level]
    overall: float = Field(ge=0, le=1)
    passed: bool
    notes: str | None


class GeneratedRubric(BaseModel):
    class Item(BaseModel):
        name: str
        description: str
        weight: float = Field(ge=0, le=1)
        levels: list[str] = Field(min_length=2, max_length=5)

    criteria: list[Item] = Field(min_length=4, max_length=6)


class Pairwise(BaseModel):
    choice: Literal["A", "B", "tie"]
    confidence: int = Field(ge=1, le=5)
    explanation: str


@pytest.mark.parametrize("model", [Critique, GeneratedRubric, Pairwise])
def test_pydantic_schemas_get_valid_labelled_instances(model: type[BaseModel]) -> None:
    reply = Judge("mock").complete(USER, response_format=schema_format(model.model_json_schema()))
    parsed = model.model_validate_json(reply.text or "")
    texts = list(strings(parsed.model_dump()))
    enums = {"A", "B", "tie", "accuracy", "completeness", "concision", "tone"}
    assert texts and all(t.startswith(LABEL) for t in texts if t not in enums)
    assert reply.is_mock


def test_every_enumerated_criterion_is_scored_once() -> None:
    reply = Judge("mock").complete(
        USER, response_format=schema_format(Critique.model_json_schema())
    )
    parsed = Critique.model_validate_json(reply.text or "")
    assert [c.criterion for c in parsed.criteria] == [
        "accuracy",
        "completeness",
        "concision",
        "tone",
    ]


def test_evidence_is_neutral_canned_text_that_says_it_is_a_mock() -> None:
    """Issue 26: the mock's evidence quoted 8 words of the prompt (often the judge template's
    own instructions) as if it had found them in the answer; it is canned text now, labelled."""
    template = (
        "You are an impartial judge. Use the criterion ids exactly as given. <response> "
        + USER
        + " </response>"
    )
    reply = Judge("mock").complete(
        template, response_format=schema_format(Critique.model_json_schema())
    )
    parsed = Critique.model_validate_json(reply.text or "")
    assert parsed.criteria
    for item in parsed.criteria:
        assert item.evidence.startswith(f"{LABEL} canned evidence: ")
        words = item.evidence.removeprefix(LABEL).split()
        # no run of three of the prompt's words (a quote) in it
        runs = {" ".join(words[i : i + 3]) for i in range(len(words) - 2)}
        assert not any(run in template for run in runs), item.evidence


def test_bounds_and_array_sizes_are_respected() -> None:
    schema = {
        "type": "object",
        "properties": {
            "few": {"type": "array", "items": {"type": "integer", "minimum": -3, "maximum": -1}},
            "many": {"type": "array", "items": {"type": "number"}, "minItems": 7},
            "capped": {"type": "array", "items": {"type": "string"}, "maxItems": 1},
            "short": {"type": "string", "maxLength": 8},
            "nullable": {"type": ["null", "integer"], "exclusiveMinimum": 10},
        },
    }
    value = json.loads(mock_answer([{"role": "user", "content": "x"}], schema_format(schema)))
    assert len(value["few"]) == 3 and all(-3 <= v <= -1 for v in value["few"])
    assert len(value["many"]) == 7 and all(0 <= v <= 1 for v in value["many"])
    assert len(value["capped"]) == 1
    assert len(value["short"]) <= 8
    assert isinstance(value["nullable"], int) and value["nullable"] >= 11


def test_same_input_same_answer_and_samples_differ() -> None:
    fmt = schema_format(Critique.model_json_schema())
    judge, other = Judge("mock"), Judge("mock", cache=False)
    first = judge.complete(USER, response_format=fmt).text
    assert other.complete(USER, response_format=fmt).text == first  # not from a shared cache
    draws = {other.complete(USER, response_format=fmt, sample=s).text for s in range(5)}
    assert len(draws) > 1
    assert Judge("mock:other").complete(USER, response_format=fmt).text != first


def test_free_text_and_json_object_answers_say_they_are_mock() -> None:
    text = Judge("mock").complete(USER).text or ""
    assert text.startswith(LABEL) and "no language model was called" in text
    obj = json.loads(Judge("mock").complete(USER, response_format={"type": "json_object"}).text)
    assert obj["mock_judge"] is True and obj["answer"].startswith(LABEL)


def test_registered_responders_teach_the_mock_a_text_format() -> None:
    def verdict_lines(messages: Sequence[Any], sample: int) -> str | None:
        last = messages[-1]["content"]
        if "Verdict:" not in last:
            return None
        return f"{LABEL} rationale\nVerdict: YES (sample {sample})"

    register_responder(verdict_lines)
    try:
        judge = Judge("mock", cache=False)
        assert judge.complete("Answer with a line 'Verdict:'", sample=1).text == (
            f"{LABEL} rationale\nVerdict: YES (sample 1)"
        )
        assert "Verdict" not in (judge.complete("unrelated").text or "")
    finally:
        unregister_responder(verdict_lines)
    assert "Verdict: YES" not in (Judge("mock").complete("Verdict: please").text or "")


def test_a_broken_responder_is_a_recorded_error_not_a_crash() -> None:
    def broken(messages: Sequence[Any], sample: int) -> str | None:
        raise RuntimeError("bad format code")

    register_responder(broken)
    try:
        reply = Judge("mock").complete("x")
    finally:
        unregister_responder(broken)
    assert reply.error is not None and reply.error.type == "internal"
    assert "bad format code" in reply.error.message


def test_usage_counts_words_deterministically() -> None:
    reply = Judge("mock").complete(
        [
            {"role": "system", "content": "be strict"},
            {"role": "user", "content": [{"type": "text", "text": "one two three"}]},
        ]
    )
    assert reply.usage.prompt_tokens == (4 + 2) + (4 + 3)
    assert reply.usage.completion_tokens == len((reply.text or "").split())


def test_mock_calls_run_through_the_engine_cache_and_accounting() -> None:
    judge = Judge("mock")
    first = judge.map([f"case {i}" for i in range(20)], progress=False)
    assert judge.last_run.calls == 20 and judge.last_run.cached == 0
    again = judge.map([f"case {i}" for i in range(20)], progress=False)
    assert all(r.cached for r in again)
    assert [r.text for r in again] == [r.text for r in first]
    assert judge.last_run.cached == 20 and judge.last_run.cost == 0.0
