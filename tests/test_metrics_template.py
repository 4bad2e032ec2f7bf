"""TemplateMetric: the seed 002 config contract, and the metric judging real traces over HTTP.

The judge is the fake OpenAI-compatible server on 127.0.0.1; its scripted answers are functions
of the request body, so rendering in the sandbox, the appended format instruction, the JSON
schema, parsing, re-asking and score validation all run for real.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from pydantic import ValidationError

import rubriclab as rl
from rubriclab.metrics import TemplateMetric
from rubriclab.metrics.template import OUTPUT_FORMAT_INSTRUCTION
from rubriclab.testing import FakeJudgeServer
from rubriclab.traces import Trace, example_trace, load_traces

FIXTURES = Path(__file__).parent / "fixtures" / "traces"

# The seed's worked example: the template reads the run's final answer straight off the trace.
WORKED_EXAMPLE = (
    "Score 1.0 if the final answer is fully supported by the tool results below, 0.0 if it is "
    "fabricated.\n"
    "Final answer: {{ input_trace.roots()[0].output_messages[-1].text }}\n"
    "Tool results:\n"
    "{% for call in input_trace.tool_calls() %}- {{ call.name }}: "
    "{{ call.result | tojson(max_chars=400) }}\n{% endfor %}"
)

SEED_DEFAULT_TEMPLATE = (
    "You are a strict evaluator assessing a single step (span) from an AI agent's execution "
    "trace.\n\nJudge the overall quality of this step:\n  - Was the action appropriate for the "
    "agent's apparent goal?\n  - Were any tool inputs well-formed and sensible?\n  - Is the "
    "output correct, relevant, and free of errors or hallucination?\n\nStep (raw canonical "
    "span):\n{{ input_span | tojson(2, max_chars=12000) }}\n\nScore 1.0 if the step was fully "
    "correct and useful, 0.0 if it was wrong, harmful, or entirely\nunproductive, and a value in "
    "between for partial quality.\n"
)

# properties of the seed's config schema, as published (plus our `name`, checked separately)
SEED_PROPERTIES: dict[str, Any] = {
    "concurrency_limit": {
        "default": 10,
        "description": "Max concurrent judge API calls",
        "title": "Concurrency Limit",
        "type": "integer",
        "x-aip-param-role": "operational",
    },
    "expected_variables": {
        "default": ["input_span"],
        "items": {"type": "string"},
        "title": "Expected Variables",
        "type": "array",
        "x-aip-param-role": "prompt_slots",
    },
    "judge_temperature": {
        "default": 0.0,
        "description": "Sampling temperature for the judge model",
        "title": "Judge Temperature",
        "type": "number",
    },
    "max_prompt_chars": {
        "default": 100000,
        "description": (
            "Max chars the rendered prompt may reach before the occurrence is refused. Raise it "
            "for traces that are genuinely large; the prompt is never silently truncated to fit."
        ),
        "maximum": 1000000,
        "minimum": 1000,
        "title": "Max Prompt Chars",
        "type": "integer",
    },
    "model": {
        "anyOf": [{"type": "string"}, {"type": "null"}],
        "default": None,
        "description": "Judge model id; falls back to the evaluator_system model if unset",
        "title": "Model",
    },
    "prompt_template": {
        "default": SEED_DEFAULT_TEMPLATE,
        "title": "Prompt Template",
        "type": "string",
        "x-aip-param-role": "prompt_slots",
    },
    "timeout_seconds": {
        "default": 60.0,
        "description": "Timeout per judge API call, in seconds",
        "title": "Timeout Seconds",
        "type": "number",
        "x-aip-param-role": "operational",
    },
    "version": {
        "default": "1.0.0",
        "maxLength": 64,
        "minLength": 1,
        "title": "Version",
        "type": "string",
        "x-aip-param-role": "scoring_metadata",
    },
}


def _judge(server: FakeJudgeServer, **kw: Any) -> rl.Judge:
    # no cache: identical prompts (two spans with the same name) must each reach the server
    return rl.Judge(server.url, model="judge-model", max_retries=0, cache=False, **kw)


def _prompt(body: dict[str, Any]) -> str:
    return str(body["messages"][0]["content"])


def _answer(score: Any, rationale: str = "looked at it") -> str:
    return json.dumps({"rationale": rationale, "score": score})


@pytest.fixture(scope="module")
def lisbon() -> Trace:
    return load_traces(FIXTURES / "agent_run_otlp.json")[0]


# -- the config contract ----------------------------------------------------------------------


def test_default_config_keeps_the_seed_defaults() -> None:
    m = TemplateMetric()
    assert m.prompt_template == SEED_DEFAULT_TEMPLATE
    assert m.expected_variables == ["input_span"]
    assert (m.model, m.judge_temperature, m.timeout_seconds) == (None, 0.0, 60.0)
    assert (m.concurrency_limit, m.max_prompt_chars, m.version) == (10, 100_000, "1.0.0")
    assert m.name == "custom_judge_rubric"
    assert m.kind == "template" and TemplateMetric.kind == "template"
    assert m.partition == "span"
    assert TemplateMetric(expected_variables=["input_trace"]).partition == "trace"


def test_config_schema_is_the_seed_contract_plus_name() -> None:
    schema = TemplateMetric.config_schema()
    assert schema["type"] == "object"
    assert schema["additionalProperties"] is False
    assert schema["title"] == "CustomJudgeRubricConfig"
    props = dict(schema["properties"])
    name = props.pop("name")
    timeout = props.pop("render_timeout")  # ours: the sandbox's time budget per render
    assert timeout["default"] == 2.0 and timeout["type"] == "number"
    assert props == SEED_PROPERTIES
    assert name["default"] == "custom_judge_rubric" and name["type"] == "string"
    # every property defaulted: a default config can be derived from the schema alone
    derived = {k: v["default"] for k, v in schema["properties"].items()}
    assert TemplateMetric.model_validate(derived) == TemplateMetric()
    json.dumps(schema)  # the schema is plain JSON


@pytest.mark.parametrize(
    ("key", "hint"),
    [("prompt_templat", "prompt_template"), ("temperature", "judge_temperature"), ("rubric", "")],
)
def test_unknown_keys_are_errors_naming_the_key(key: str, hint: str) -> None:
    with pytest.raises(ValidationError) as info:
        TemplateMetric.model_validate({key: "x"})
    message = str(info.value)
    assert repr(key) in message
    if hint:
        assert f"did you mean {hint!r}" in message


@pytest.mark.parametrize(
    ("changes", "fragment"),
    [
        ({"max_prompt_chars": 999}, "greater than or equal to 1000"),
        ({"max_prompt_chars": 1_000_001}, "less than or equal to 1000000"),
        ({"expected_variables": ["input_case"]}, "use 'input_span' or 'input_trace'"),
        ({"expected_variables": ["input_span", "input_trace"]}, "exactly one variable"),
        ({"expected_variables": []}, "exactly one variable"),
        ({"name": "a/b"}, "contain no '/'"),
        ({"render_timeout": 0}, "render_timeout"),
        ({"render_timeout": True}, "expected a number"),
        ({"judge_temperature": 2.5}, "between 0 and 2"),
        ({"timeout_seconds": 0}, "positive number"),
        ({"concurrency_limit": 0}, "at least 1"),
        ({"concurrency_limit": True}, "expected a number"),
        ({"version": ""}, "at least 1 character"),
        ({"version": "v" * 65}, "at most 64 characters"),
        ({"model": "  "}, "model id"),
    ],
)
def test_out_of_range_values_are_refused(changes: dict[str, Any], fragment: str) -> None:
    with pytest.raises(ValidationError, match=fragment.replace("(", r"\(")):
        TemplateMetric(**changes)


def test_bounds_are_inclusive_and_configs_round_trip() -> None:
    low = TemplateMetric(max_prompt_chars=1_000)
    high = TemplateMetric(max_prompt_chars=1_000_000, model="gpt-4o-mini", judge_temperature=0.7)
    assert low.max_prompt_chars == 1_000
    assert TemplateMetric.model_validate_json(high.model_dump_json()) == high
    changed = high.with_options(version="2.0.0")
    assert changed.version == "2.0.0" and changed.model == "gpt-4o-mini"
    with pytest.raises(ValidationError, match="unknown TemplateMetric parameter"):
        high.with_options(tempreature=1.0)
    with pytest.raises(ValidationError):
        low.max_prompt_chars = 5_000  # type: ignore[misc]  # configs are immutable


# -- the worked example, end to end -------------------------------------------------------------


def test_worked_example_renders_the_final_answer_and_reads_score_and_rationale(
    fake_judge: FakeJudgeServer, lisbon: Trace
) -> None:
    rationale = "the figure is grounded in the tool_call_response, one qualifier is unverifiable"
    fake_judge.responder = lambda body: _answer(0.8, rationale)
    metric = TemplateMetric(
        name="grounded", prompt_template=WORKED_EXAMPLE, expected_variables=["input_trace"]
    )
    result = rl.evaluate(lisbon, metrics=[metric], judge=_judge(fake_judge), partition="trace")

    (body,) = fake_judge.requests
    prompt = _prompt(body)
    assert lisbon.final_answer is not None
    assert f"Final answer: {lisbon.final_answer}\n" in prompt
    assert '- get_weather: {"city": "Lisbon"' in prompt
    # the template defines the rubric only; the answer format is ours, appended at the end
    assert prompt.endswith(OUTPUT_FORMAT_INSTRUCTION)
    assert '{"rationale": "<your reasoning' in OUTPUT_FORMAT_INSTRUCTION
    schema = body["response_format"]["json_schema"]["schema"]
    assert list(schema["properties"]) == ["rationale", "score"]  # reasoning first
    assert schema["properties"]["score"] == {
        "type": "number",
        "minimum": 0,
        "maximum": 1,
        "description": schema["properties"]["score"]["description"],
    }
    assert body["temperature"] == 0.0

    row = result.table.loc[lisbon.trace_id]
    assert row["grounded/score"] == 0.8
    assert row["grounded/rationale"] == rationale
    assert json.loads(row["grounded/raw_output"]) == {"rationale": rationale, "score": 0.8}
    assert row["grounded/error"] is None
    assert row["grounded/tokens"] > 0
    assert result.metric("grounded").kind == "template"
    assert result.summary.loc["grounded", "mean"] == 0.8


def test_answers_in_fences_or_prose_are_read(fake_judge: FakeJudgeServer) -> None:
    fake_judge.responder = lambda body: (
        'Sure.\n```json\n{"rationale": "supported by the forecast", "score": 1}\n```'
    )
    metric = TemplateMetric(prompt_template="Judge: {{ input_span.name }}")
    result = rl.evaluate(
        example_trace(), metrics=[metric], judge=_judge(fake_judge), partition="span"
    )
    assert result.table["custom_judge_rubric/score"].tolist() == [1.0] * 4
    assert set(result.table["custom_judge_rubric/rationale"]) == {"supported by the forecast"}


# -- refusals that stay on their row --------------------------------------------------------------


def test_over_long_prompt_is_refused_on_its_row_without_a_call(
    fake_judge: FakeJudgeServer, lisbon: Trace
) -> None:
    fake_judge.responder = lambda body: _answer(0.5)
    metric = TemplateMetric(
        prompt_template="Conversation:\n{{ input_span.input_messages | tojson(2) }}",
        max_prompt_chars=1_000,
    )
    result = rl.evaluate(lisbon, metrics=[metric], judge=_judge(fake_judge), partition="span")
    t = result.table
    errors = t["custom_judge_rubric/error"]
    too_long = errors.notna()
    assert 0 < too_long.sum() < len(t)  # big spans refused, small ones judged
    for message in errors[too_long]:
        assert "over the limit of 1,000 (max_prompt_chars)" in message
        assert "never truncated" in message
    assert t.loc[too_long, "custom_judge_rubric/score"].isna().all()
    assert t.loc[too_long, "custom_judge_rubric/raw_output"].isna().all()
    assert t.loc[~too_long, "custom_judge_rubric/score"].eq(0.5).all()
    # no call for a refused row: one request per judged span, none of them truncated
    assert len(fake_judge.requests) == (~too_long).sum()
    for body in fake_judge.requests:
        assert len(_prompt(body)) == len(_prompt(body).split("\n\n---\n")[0]) + len(
            OUTPUT_FORMAT_INSTRUCTION
        )


def _by_span_name(body: dict[str, Any]) -> str:
    prompt = _prompt(body)
    if "execute_tool" in prompt:
        return _answer(1.7)
    if "invoke_agent" in prompt:
        return '{"rationale": "good", "score": "high"}'
    return _answer(0.25)


def test_score_outside_0_1_or_not_a_number_is_a_row_error_with_raw_text(
    fake_judge: FakeJudgeServer,
) -> None:
    fake_judge.responder = _by_span_name
    metric = TemplateMetric(prompt_template="Step {{ input_span.name }}")
    result = rl.evaluate(
        example_trace(), metrics=[metric], judge=_judge(fake_judge), partition="span"
    )
    t = result.table.set_index("name", append=True).droplevel(0)
    tool = t.loc["execute_tool get_weather"]
    assert pd.isna(tool["custom_judge_rubric/score"])
    assert "score 1.7 is outside 0.0-1.0" in tool["custom_judge_rubric/error"]
    assert json.loads(tool["custom_judge_rubric/raw_output"])["score"] == 1.7
    agent = t.loc["invoke_agent weather_helper"]
    assert pd.isna(agent["custom_judge_rubric/score"])
    assert "score 'high' is not a number" in agent["custom_judge_rubric/error"]
    assert '"score": "high"' in agent["custom_judge_rubric/raw_output"]
    # the two LLM spans still score
    assert t.loc["chat gpt-4o-mini", "custom_judge_rubric/score"].tolist() == [0.25, 0.25]
    assert result.summary.loc["custom_judge_rubric", "errors"] == 2
    # each bad answer was asked again once, telling the judge what was wrong
    assert len(fake_judge.requests) == 4 + 2
    reasks = [b for b in fake_judge.requests if len(b["messages"]) == 3]
    assert len(reasks) == 2
    assert all(b["messages"][1]["role"] == "assistant" for b in reasks)
    assert any("outside 0.0-1.0" in b["messages"][2]["content"] for b in reasks)


def test_a_reasked_answer_that_is_fixed_scores(fake_judge: FakeJudgeServer) -> None:
    def first_prose_then_json(body: dict[str, Any]) -> str:
        return _answer(0.9, "fixed") if len(body["messages"]) > 1 else "I would say: quite good."

    fake_judge.responder = first_prose_then_json
    metric = TemplateMetric(
        prompt_template="{{ input_trace.final_answer }}", expected_variables=["input_trace"]
    )
    result = rl.evaluate(example_trace(), metrics=[metric], judge=_judge(fake_judge))
    row = result.table.iloc[0]
    assert row["custom_judge_rubric/score"] == 0.9
    assert row["custom_judge_rubric/error"] is None
    assert row["custom_judge_rubric/attempts"] == 2
    assert len(fake_judge.requests) == 2


# -- the sandbox, at the metric level ----------------------------------------------------------

SANDBOX_CASES = [
    ("{{ input_span.__class__ }}", "access to attribute '__class__'"),
    ("{{ input_span.__class__.__mro__[1].__subclasses__() }}", "access to attribute '__class__'"),
    ("{{ input_span.__mro__ }}", "'__mro__'"),
    ("{{ input_span.summary.__globals__ }}", "access to attribute '__globals__'"),
    ("{{ input_span.__init__.__globals__['os'] }}", "access to attribute '__init__'"),
    ("{{ input_span.mro() }}", "has no attribute 'mro'"),
    ("{{ self.__init__.__globals__ }}", "access to attribute '__init__'"),
    ("{{ self._TemplateReference__context }}", "_TemplateReference__context"),
    ("{{ '{0.__class__}'.format(input_span) }}", "str.format() is not available"),
    ("{{ '{0.__class__}'.format_map({0: input_span}) }}", "str.format_map() is not available"),
    ("{{ '%s' % input_span }}", "% operator on text"),
    ("{{ input_span | attr('__class__') }}", "filter 'attr' is not allowed"),
    ("{{ input_span | pprint }}", "filter 'pprint' is not allowed"),
    ("{{ input_span.name | safe }}", "filter 'safe' is not allowed"),
    ("{{ range(10 ** 9) | list }}", "range() of 1,000,000,000 items is over the limit"),
    ("{{ 'x' * 10 ** 9 }}", "'*' would build a string of about 1,000,000,000 characters"),
    ("{% for i in range(9999) %}{% for j in range(9999) %}{% endfor %}{% endfor %}", "steps"),
    ("{{ input_span.parse_file('/etc/passwd') }}", "access to attribute 'parse_file'"),
    # the process-ending one: pydantic-core aborted on a huge indent; the method is unreachable
    ("{{ input_span.model_dump_json(indent=10**9) }}", "access to attribute 'model_dump_json'"),
    ("{{ input_span.parse_raw('x', allow_pickle=True) }}", "access to attribute 'parse_raw'"),
    ("{{ input_span.status.model_dump_json(indent=10**9) }}", "'model_dump_json'"),
    ("{{ (['a' * 1999999] * 99999) | join }}", "would build"),
    ("{{ ['a' * 1999999] * 99999 }}", "would build"),
    (
        "{% for i in range(10000) %}{{ range(10000) | list | sort | length }}{% endfor %}",
        "time budget",
    ),
]


@pytest.mark.timeout(60)
@pytest.mark.parametrize(("source", "fragment"), SANDBOX_CASES)
def test_sandbox_refusals_land_on_rows_and_never_stop_the_run(
    fake_judge: FakeJudgeServer, source: str, fragment: str
) -> None:
    fake_judge.responder = lambda body: _answer(0.6)
    # the time-budget case gets a short budget; the others a long one, so that the check each
    # is about is the one that stops it even on a busy machine
    budget = 0.5 if fragment == "time budget" else 60.0
    hostile = TemplateMetric(name="hostile", prompt_template=source, render_timeout=budget)
    honest = TemplateMetric(name="honest", prompt_template="Step {{ input_span.name }}")
    result = rl.evaluate(
        example_trace(), metrics=[hostile, honest], judge=_judge(fake_judge), partition="span"
    )
    t = result.table
    for message in t["hostile/error"]:
        assert fragment in message, message
        assert "hostile prompt_template" in message  # the error names the template
    assert t["hostile/score"].isna().all()
    # the other metric in the same run scored every row, and only it called the judge
    assert t["honest/score"].tolist() == [0.6] * 4
    assert len(fake_judge.requests) == 4
    assert all("Step " in _prompt(b) for b in fake_judge.requests)


def test_a_template_failing_on_some_rows_fails_only_those(fake_judge: FakeJudgeServer) -> None:
    fake_judge.responder = lambda body: _answer(1.0)
    # tool spans have no output messages: indexing [-1] is undefined there
    metric = TemplateMetric(prompt_template="Said: {{ input_span.output_messages[-1].text }}")
    result = rl.evaluate(
        example_trace(), metrics=[metric], judge=_judge(fake_judge), partition="span"
    )
    t = result.table
    failed = t["custom_judge_rubric/error"].notna()
    assert t.loc[failed, "kind"].tolist() == ["TOOL"]
    assert "list object has no element -1" in t.loc[failed, "custom_judge_rubric/error"].iloc[0]
    assert t.loc[~failed, "custom_judge_rubric/score"].tolist() == [1.0, 1.0, 1.0]


def test_a_template_reading_the_wrong_variable_says_what_the_row_binds(
    fake_judge: FakeJudgeServer,
) -> None:
    metric = TemplateMetric(prompt_template="{{ input_trace.final_answer }}")  # binds input_span
    result = rl.evaluate(
        example_trace(), metrics=[metric], judge=_judge(fake_judge), partition="span"
    )
    message = result.table["custom_judge_rubric/error"].iloc[0]
    assert "'input_trace' is undefined" in message
    assert "this row binds: input_span" in message
    assert fake_judge.requests == []


def test_a_template_that_does_not_compile_fails_every_row_without_calls(
    fake_judge: FakeJudgeServer,
) -> None:
    metric = TemplateMetric(prompt_template="{% for x in %}")
    result = rl.evaluate(
        example_trace(), metrics=[metric], judge=_judge(fake_judge), partition="span"
    )
    assert result.table["custom_judge_rubric/error"].str.contains("syntax error").all()
    assert fake_judge.requests == []


# -- the metric's own call settings ----------------------------------------------------------------


def test_model_and_temperature_of_the_metric_reach_its_calls(fake_judge: FakeJudgeServer) -> None:
    fake_judge.responder = lambda body: _answer(0.4)
    metric = TemplateMetric(
        prompt_template="{{ input_span.name }}", model="judge-b", judge_temperature=0.3
    )
    default = TemplateMetric(name="default_settings", prompt_template="{{ input_span.name }}")
    rl.evaluate(
        example_trace(), metrics=[metric, default], judge=_judge(fake_judge), partition="span"
    )
    sent = [(b["model"], b["temperature"]) for b in fake_judge.requests]
    assert sent == [("judge-b", 0.3)] * 4 + [("judge-model", 0.0)] * 4


def test_concurrency_limit_caps_calls_in_flight(fake_judge: FakeJudgeServer, lisbon: Trace) -> None:
    fake_judge.responder = lambda body: _answer(0.4)
    fake_judge.latency = 0.05
    metric = TemplateMetric(prompt_template="{{ input_span.name }}", concurrency_limit=2)
    rl.evaluate(lisbon, metrics=[metric], judge=_judge(fake_judge), partition="span")
    assert len(fake_judge.requests) == 8
    assert 1 <= fake_judge.peak_in_flight <= 2


def test_a_call_slower_than_timeout_seconds_is_that_rows_error(
    fake_judge: FakeJudgeServer,
) -> None:
    fake_judge.responder = lambda body: _answer(0.4)
    fake_judge.latency = 3.0
    metric = TemplateMetric(
        prompt_template="{{ input_trace.final_answer }}",
        expected_variables=["input_trace"],
        timeout_seconds=0.3,
    )
    result = rl.evaluate(example_trace(), metrics=[metric], judge=_judge(fake_judge))
    row = result.table.iloc[0]
    assert pd.isna(row["custom_judge_rubric/score"])
    assert "judge call failed" in row["custom_judge_rubric/error"]
    assert "time" in row["custom_judge_rubric/error"].lower()


def test_template_metric_on_ordinary_rows_reads_their_columns(fake_judge: FakeJudgeServer) -> None:
    fake_judge.responder = lambda body: _answer(0.7 if "A: Yes" in _prompt(body) else 0.1)
    frame = pd.DataFrame(
        {
            "prompt": ["Do I need an umbrella?", "Do I need an umbrella?"],
            "response": ["Yes, take an umbrella.", "No idea."],
        }
    )
    metric = TemplateMetric(prompt_template="Q: {{ prompt }}\nA: {{ response }}")
    result = rl.evaluate(frame, metrics=[metric], judge=_judge(fake_judge))
    assert result.table["custom_judge_rubric/score"].tolist() == [0.7, 0.1]
    assert "A: Yes, take an umbrella." in _prompt(fake_judge.requests[0])


def test_an_answer_cut_off_at_max_tokens_is_a_row_error_not_a_zero(
    fake_judge: FakeJudgeServer,
) -> None:
    cut = '{"rationale": "the step looks wrong", "score": 0'
    fake_judge.responder = lambda body: {
        "model": "judge-model",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": cut},
                "finish_reason": "length",
            }
        ],
        "usage": {"prompt_tokens": 5, "completion_tokens": 12, "total_tokens": 17},
    }
    metric = TemplateMetric(
        prompt_template="{{ input_trace.final_answer }}", expected_variables=["input_trace"]
    )
    result = rl.evaluate(example_trace(), metrics=[metric], judge=_judge(fake_judge))
    row = result.table.iloc[0]
    assert pd.isna(row["custom_judge_rubric/score"])
    assert row["custom_judge_rubric/error"].startswith("judge answer cut off at max_tokens")
    assert row["custom_judge_rubric/raw_output"] == cut
    assert [b.get("max_tokens") for b in fake_judge.requests] == [None, 1036]
