"""Loading agent traces (OTLP/GenAI, OpenInference, canonical) and reading them as a tree."""

from __future__ import annotations

import base64
import copy
import json
import warnings
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from jinja2 import StrictUndefined
from jinja2.exceptions import SecurityError
from jinja2.sandbox import SandboxedEnvironment

from rubriclab.traces import (
    Message,
    Span,
    ToolCall,
    Trace,
    TraceError,
    TraceWarning,
    example_trace,
    load_traces,
)

FIXTURES = Path(__file__).parent / "fixtures" / "traces"
OTLP_FILE = FIXTURES / "agent_run_otlp.json"
OI_FILE = FIXTURES / "agent_run_openinference.json"

FINAL_START = "Pack light summer clothes, sunglasses and sunscreen"


def _otlp() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(OTLP_FILE.read_text(encoding="utf-8"))
    return data


def _otlp_spans(export: dict[str, Any]) -> list[dict[str, Any]]:
    spans: list[dict[str, Any]] = export["resourceSpans"][0]["scopeSpans"][0]["spans"]
    return spans


def _any_value(value: Any) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    if isinstance(value, float):
        return {"doubleValue": value}
    return {"stringValue": str(value)}


def _flat(attrs: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in attrs.items():
        if isinstance(value, dict):
            out.update(_flat(value, f"{prefix}{key}."))
        elif isinstance(value, list):
            for i, item in enumerate(value):
                out.update(_flat(item, f"{prefix}{key}.{i}."))
        else:
            out[prefix + key] = value
    return out


def _ns(iso: str) -> str:
    t = datetime.fromisoformat(iso.replace("Z", "+00:00"))
    return str(int(t.timestamp()) * 1_000_000_000 + t.microsecond * 1000)


def _records_as_otlp(records: list[dict[str, Any]]) -> dict[str, Any]:
    """The OpenInference records re-exported the way an OTel collector would: OTLP, flat keys."""
    spans = []
    for r in records:
        spans.append(
            {
                "traceId": r["context"]["trace_id"],
                "spanId": r["context"]["span_id"],
                "parentSpanId": r["parent_id"] or "",
                "name": r["name"],
                "startTimeUnixNano": _ns(r["start_time"]),
                "endTimeUnixNano": _ns(r["end_time"]),
                "attributes": [
                    {"key": k, "value": _any_value(v)} for k, v in _flat(r["attributes"]).items()
                ],
                "status": {"code": 2 if r["status_code"] == "ERROR" else 1},
                "events": [
                    {
                        "name": e["name"],
                        "timeUnixNano": _ns(e["timestamp"]),
                        "attributes": [
                            {"key": k, "value": _any_value(v)} for k, v in e["attributes"].items()
                        ],
                    }
                    for e in r["events"]
                ],
            }
        )
    return {"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}


def _shape(trace: Trace) -> list[tuple[int, str, str, str]]:
    """What must not depend on the file format: depth, kind, tool name, status, in walk order."""
    shape = []
    for span in trace.walk():
        tool = span.tool_calls[0].name if span.kind == "TOOL" else ""
        status = "error" if span.is_error else "fine"
        shape.append((trace.depth(span), span.kind, tool, status))
    return shape


@pytest.fixture(scope="module")
def otlp_trace() -> Trace:
    traces = load_traces(OTLP_FILE)
    assert len(traces) == 1
    return traces[0]


@pytest.fixture(scope="module")
def oi_trace() -> Trace:
    traces = load_traces(OI_FILE)
    assert len(traces) == 1
    return traces[0]


# ------------------------------------------------------------------------------ OTLP / GenAI


def test_otlp_export_loads_as_one_tree(otlp_trace: Trace) -> None:
    assert otlp_trace.trace_id == "4bf92f3577b34da6a3ce929d0e0e4736"
    [root] = otlp_trace.roots()
    assert root.name == "invoke_agent travel_assistant"
    assert root.kind == "AGENT"
    assert root.parent_id is None
    assert [s.name for s in otlp_trace.children(root)] == [
        "chat gpt-4o-mini",
        "execute_tool get_weather",
        "execute_tool search_web",
        "chat gpt-4o-mini",
        "execute_tool search_web",
        "chat gpt-4o-mini",
    ]
    assert [s.kind for s in otlp_trace.walk()] == [
        "AGENT", "LLM", "TOOL", "TOOL", "LLM", "TOOL", "LLM", "LLM"
    ]  # fmt: skip
    summariser = otlp_trace.walk()[6]
    assert otlp_trace.depth(summariser) == 2
    assert otlp_trace.parent(summariser) == otlp_trace.get("e5f60718293a4b5c")
    assert otlp_trace.parent(root) is None
    assert otlp_trace.children("e5f60718293a4b5c") == [summariser]


def test_walk_is_depth_first_in_start_order_whatever_the_file_order() -> None:
    export = _otlp()
    spans = _otlp_spans(export)
    spans.reverse()  # exporters write children before parents, often out of order
    trace = Trace.from_otlp(export)
    expected = load_traces(OTLP_FILE)[0]
    assert [s.span_id for s in trace.walk()] == [s.span_id for s in expected.walk()]
    assert [s.start for s in trace.walk()[1:4]] == sorted(s.start for s in trace.walk()[1:4])


def test_messages_model_and_tokens_from_genai_attributes(otlp_trace: Trace) -> None:
    first_chat = otlp_trace.find(kind="llm")[0]
    assert first_chat.model == "gpt-4o-mini-2024-07-18"  # the response model wins
    assert first_chat.usage is not None
    assert (first_chat.usage.input_tokens, first_chat.usage.output_tokens) == (412, 58)
    assert first_chat.usage.total_tokens == 470
    assert [m.role for m in first_chat.input_messages] == ["system", "user"]
    assert first_chat.input_messages[0].text.startswith("You are a travel assistant")
    assert "tram 28" in first_chat.input_text
    [answer] = first_chat.output_messages
    assert answer.finish_reason == "tool_call"
    assert [c.name for c in answer.tool_calls] == ["get_weather", "search_web"]
    assert answer.tool_calls[0].arguments == {"city": "Lisbon", "date": "2025-06-13"}

    second_chat = otlp_trace.find(kind="LLM")[1]
    tool_messages = [m for m in second_chat.input_messages if m.role == "tool"]
    assert [m.tool_call_id for m in tool_messages] == ["call_weather_1", "call_search_1"]
    assert json.loads(tool_messages[0].text)["conditions"] == "sunny"
    assert tool_messages[1].text.startswith("error: TimeoutError")


def test_tool_spans_carry_arguments_results_and_errors(otlp_trace: Trace) -> None:
    weather, failed, search = otlp_trace.find(kind="tool")
    [call] = weather.tool_calls
    assert (call.id, call.name) == ("call_weather_1", "get_weather")
    assert call.arguments == {"city": "Lisbon", "date": "2025-06-13"}  # OTLP kvlistValue
    assert call.result["high_c"] == 27  # JSON string attribute, parsed
    assert call.error is None

    assert failed.is_error
    assert failed.status.code == "error"
    assert failed.status.message == "TimeoutError: search backend did not answer within 2.0 s"
    assert failed.tool_calls[0].error == failed.status.message
    assert failed.tool_calls[0].result is None
    assert failed.events[0].name == "exception"

    assert search.tool_calls[0].result[1]["title"] == "Service notice: tram 28E diversion"
    assert otlp_trace.errors == [failed]
    assert otlp_trace.find(status="error") == [failed]


def test_llm_tool_requests_are_linked_to_their_results(otlp_trace: Trace) -> None:
    first_chat = otlp_trace.find(kind="LLM")[0]
    weather_call, search_call = first_chat.tool_calls
    assert weather_call.result["conditions"] == "sunny"
    assert search_call.result is None
    assert search_call.error is not None and "TimeoutError" in search_call.error
    # the messages stay as the model wrote them
    assert first_chat.output_messages[0].tool_calls[0].result is None
    assert [c.id for c in otlp_trace.tool_calls()] == [
        "call_weather_1",
        "call_search_1",
        "call_search_2",
    ]


def test_tool_span_without_recorded_arguments_learns_them_from_the_request() -> None:
    export = _otlp()
    weather = _otlp_spans(export)[2]
    weather["attributes"] = [
        a for a in weather["attributes"] if a["key"] != "gen_ai.tool.call.arguments"
    ]
    trace = Trace.from_otlp(export)
    assert trace.find(kind="TOOL")[0].tool_calls[0].arguments == {
        "city": "Lisbon",
        "date": "2025-06-13",
    }


def test_durations(otlp_trace: Trace) -> None:
    root = otlp_trace.roots()[0]
    assert root.duration == timedelta(seconds=6.1)
    assert root.duration_ms == pytest.approx(6100.0)
    assert otlp_trace.duration == timedelta(seconds=6.1)
    failed = otlp_trace.find(status="error")[0]
    assert failed.duration_ms == pytest.approx(2005.0)
    assert root.start.tzinfo is not None
    assert root.start == datetime(2025, 6, 12, 9, 30, tzinfo=timezone.utc)


def test_final_answer_is_the_roots_last_output(otlp_trace: Trace) -> None:
    answer = otlp_trace.final_answer
    assert answer is not None and answer.startswith(FINAL_START)
    assert answer == otlp_trace.roots()[0].output_messages[-1].text


def test_ids_in_protobuf_base64_are_read_as_hex() -> None:
    export = _otlp()
    for span in _otlp_spans(export):
        for key in ("traceId", "spanId", "parentSpanId"):
            if span[key]:
                span[key] = base64.b64encode(bytes.fromhex(span[key])).decode()
    trace = Trace.from_otlp(export)
    expected = load_traces(OTLP_FILE)[0]
    assert trace.trace_id == expected.trace_id
    assert [s.span_id for s in trace.walk()] == [s.span_id for s in expected.walk()]


def test_genai_message_events_become_messages() -> None:
    def attr(key: str, value: Any) -> dict[str, Any]:
        return {"key": key, "value": _any_value(value)}

    span = {
        "traceId": "0af7651916cd43dd8448eb211c80319c",
        "spanId": "b7ad6b7169203331",
        "name": "chat gpt-4o",
        "startTimeUnixNano": "1749720600000000000",
        "endTimeUnixNano": "1749720601500000000",
        "attributes": [
            attr("gen_ai.operation.name", "chat"),
            attr("gen_ai.request.model", "gpt-4o"),
            attr("gen_ai.usage.input_tokens", 50),
        ],
        "events": [
            {"name": "gen_ai.system.message", "attributes": [attr("content", "Be brief.")]},
            {"name": "gen_ai.user.message", "attributes": [attr("content", "Weather in Paris?")]},
            {
                "name": "gen_ai.tool.message",
                "attributes": [attr("content", "rainy, 57F"), attr("id", "call_1")],
            },
            {
                "name": "gen_ai.choice",
                "attributes": [
                    attr("index", 0),
                    attr("finish_reason", "tool_calls"),
                    attr(
                        "message",
                        json.dumps(
                            {
                                "tool_calls": [
                                    {
                                        "id": "call_2",
                                        "type": "function",
                                        "function": {
                                            "name": "get_weather",
                                            "arguments": '{"city": "Lyon"}',
                                        },
                                    }
                                ]
                            }
                        ),
                    ),
                ],
            },
        ],
    }
    trace = Trace.from_otlp({"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]})
    [chat] = trace.spans
    assert chat.kind == "LLM"
    assert [(m.role, m.text) for m in chat.input_messages] == [
        ("system", "Be brief."),
        ("user", "Weather in Paris?"),
        ("tool", "rainy, 57F"),
    ]
    assert chat.input_messages[2].tool_call_id == "call_1"
    [choice] = chat.output_messages
    assert (choice.role, choice.finish_reason) == ("assistant", "tool_calls")
    assert choice.tool_calls[0].arguments == {"city": "Lyon"}
    assert chat.tool_calls[0].name == "get_weather"
    assert chat.usage is not None and chat.usage.output_tokens is None


def test_flattened_openllmetry_prompt_attributes() -> None:
    attrs = {
        "gen_ai.request.model": "gpt-4o-mini",
        "gen_ai.prompt.0.role": "user",
        "gen_ai.prompt.0.content": "What is 2+2?",
        "gen_ai.completion.0.role": "assistant",
        "gen_ai.completion.0.content": "4",
        "gen_ai.completion.0.finish_reason": "stop",
    }
    span = {
        "traceId": "0af7651916cd43dd8448eb211c80319c",
        "spanId": "b7ad6b7169203331",
        "name": "openai.chat",
        "startTimeUnixNano": "1749720600000000000",
        "endTimeUnixNano": "1749720600400000000",
        "attributes": [{"key": k, "value": _any_value(v)} for k, v in attrs.items()],
    }
    trace = load_traces([{"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}])[0]
    [chat] = trace.spans
    assert chat.kind == "LLM"  # inferred from the request model
    assert chat.input_text == "What is 2+2?"
    assert chat.output_messages[0].finish_reason == "stop"
    assert trace.final_answer == "4"


# ------------------------------------------------------------------------------ OpenInference


def test_openinference_export_has_the_same_tree_as_otlp(oi_trace: Trace, otlp_trace: Trace) -> None:
    assert _shape(oi_trace) == _shape(otlp_trace)
    assert oi_trace.final_answer == otlp_trace.final_answer
    [root] = oi_trace.roots()
    assert (root.name, root.kind) == ("travel_assistant", "AGENT")
    assert root.input_messages[0].role == "user"
    assert "tram 28" in root.input_text


def test_openinference_llm_messages_tools_and_tokens(oi_trace: Trace) -> None:
    first_chat, second_chat, summariser, last_chat = oi_trace.find(kind="LLM")
    assert first_chat.model == "gpt-4o-mini-2024-07-18"
    assert first_chat.usage is not None and first_chat.usage.total_tokens == 470
    assert [m.role for m in first_chat.input_messages] == ["system", "user"]
    assert [c.name for c in first_chat.output_messages[0].tool_calls] == [
        "get_weather",
        "search_web",
    ]
    assert first_chat.tool_calls[0].arguments == {"city": "Lisbon", "date": "2025-06-13"}
    assert first_chat.tool_calls[0].result["uv_index"] == 9  # linked from the TOOL span
    tool_messages = [m for m in second_chat.input_messages if m.role == "tool"]
    assert [(m.tool_call_id, m.name) for m in tool_messages] == [
        ("call_weather_1", "get_weather"),
        ("call_search_1", "search_web"),
    ]
    assert oi_trace.depth(summariser) == 2
    assert last_chat.output_messages[0].content[0].type == "text"  # message.contents form
    assert last_chat.output_text.startswith(FINAL_START)


def test_openinference_tool_spans(oi_trace: Trace) -> None:
    weather, failed, search = oi_trace.find(kind="TOOL")
    assert weather.tool_calls[0].id == "call_weather_1"
    assert weather.tool_calls[0].arguments == {"city": "Lisbon", "date": "2025-06-13"}
    assert weather.tool_calls[0].result["conditions"] == "sunny"
    assert weather.attributes["tool.parameters"].startswith('{"type": "object"')
    assert failed.status.code == "error"
    assert failed.status.message is not None and "did not answer" in failed.status.message
    assert failed.tool_calls[0].error == failed.status.message
    assert search.tool_calls[0].result[0]["url"] == "https://www.carris.pt/en/tram-28e"


def test_openinference_attributes_inside_an_otlp_envelope(oi_trace: Trace) -> None:
    records = json.loads(OI_FILE.read_text(encoding="utf-8"))
    from_otlp = Trace.from_openinference(_records_as_otlp(records))
    assert _shape(from_otlp) == _shape(oi_trace)
    assert from_otlp.final_answer == oi_trace.final_answer
    failed = from_otlp.find(status="error")[0]
    assert failed.status.message == "TimeoutError: search backend did not answer within 2.0 s"


def test_opentelemetry_python_console_json() -> None:
    # the JSON that opentelemetry-sdk's ConsoleSpanExporter prints: 0x ids, ISO times, flat attrs
    record = {
        "name": "execute_tool get_weather",
        "context": {
            "trace_id": "0x5b8aa5a2d2c872e8321cf37308d69df2",
            "span_id": "0x051581bf3cb55c13",
            "trace_state": "[]",
        },
        "kind": "SpanKind.INTERNAL",
        "parent_id": None,
        "start_time": "2025-06-12T09:30:01.300000Z",
        "end_time": "2025-06-12T09:30:01.720000Z",
        "status": {"status_code": "ERROR", "description": "HTTP 503 from weather service"},
        "attributes": {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": "get_weather",
            "gen_ai.tool.call.id": "call_9",
        },
        "events": [],
    }
    [trace] = load_traces([record])
    [span] = trace.spans
    assert (span.trace_id, span.span_id) == ("5b8aa5a2d2c872e8321cf37308d69df2", "051581bf3cb55c13")
    assert span.kind == "TOOL"
    assert span.status.message == "HTTP 503 from weather service"
    assert span.tool_calls[0].error == "HTTP 503 from weather service"


# ------------------------------------------------------------------------------ sources & formats


def test_load_traces_sources(tmp_path: Path) -> None:
    text = OTLP_FILE.read_text(encoding="utf-8")
    for source in (OTLP_FILE, str(OTLP_FILE), text, json.loads(text)):
        [trace] = load_traces(source)
        assert len(trace.spans) == 8
    [trace] = load_traces(OTLP_FILE, format="otlp")
    assert load_traces(trace) == [trace]
    with pytest.raises(TraceError, match="not OTLP JSON"):
        load_traces(OI_FILE, format="otlp")
    with pytest.raises(TraceError, match="format 'jaeger'"):
        load_traces(OTLP_FILE, format="jaeger")  # type: ignore[arg-type]
    with pytest.raises(TraceError, match="no trace file at"):
        load_traces(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text('{"resourceSpans": [', encoding="utf-8")
    with pytest.raises(TraceError, match=r"bad\.json is not valid JSON"):
        load_traces(bad)


def test_several_traces_in_one_jsonl_file_are_split_by_trace_id(tmp_path: Path) -> None:
    example = Path(__file__).parents[1] / "src" / "rubriclab" / "examples" / "agent_trace_otlp.json"
    lines = [
        json.dumps(json.loads(OTLP_FILE.read_text("utf-8"))),
        json.dumps(json.loads(example.read_text("utf-8"))),
    ]
    path = tmp_path / "collector.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    traces = load_traces(path)
    assert [len(t.spans) for t in traces] == [8, 4]
    assert traces[1].trace_id == "0af7651916cd43dd8448eb211c80319c"

    merged = _otlp()
    _otlp_spans(merged).extend(_otlp_spans(json.loads(example.read_text("utf-8"))))
    assert len(load_traces(merged)) == 2
    with pytest.raises(TraceError, match=r"holds 2 traces .*load_traces"):
        Trace.from_otlp(merged)


def test_canonical_dump_round_trips(otlp_trace: Trace) -> None:
    dumped = otlp_trace.model_dump(mode="json")
    json.dumps(dumped)  # what a template's tojson sees is plain JSON
    assert dumped["spans"][0]["output_messages"][0]["text"].startswith(FINAL_START)
    assert dumped["spans"][0]["duration_ms"] == 6100.0
    [again] = load_traces(dumped)
    assert again.spans == otlp_trace.spans
    rebuilt = Trace.from_spans(dumped["spans"])
    assert rebuilt.final_answer == otlp_trace.final_answer


def _canonical(
    span_id: str, parent: str | None, start_s: float, end_s: float, **extra: Any
) -> dict[str, Any]:
    base = datetime(2025, 6, 12, 9, 0, tzinfo=timezone.utc)
    record = {
        "trace_id": "t1",
        "span_id": span_id,
        "parent_id": parent,
        "name": extra.pop("name", f"step {span_id}"),
        "kind": extra.pop("kind", "chain"),
        "start": (base + timedelta(seconds=start_s)).isoformat(),
        "end": (base + timedelta(seconds=end_s)).isoformat(),
    }
    record.update(extra)
    return record


def test_canonical_dicts_accept_friendly_shapes() -> None:
    trace = Trace.from_spans(
        [
            _canonical("a", None, 0, 3, kind="agent", name="run"),
            _canonical(
                "b",
                "a",
                0.5,
                1,
                kind="chat",
                input_messages=[{"role": "User", "content": "hi"}],
                output_messages=[
                    {"role": "assistant", "content": [{"type": "text", "text": "hello"}]}
                ],
                status="ok",
                usage={"input_tokens": 3, "output_tokens": 1},
            ),
            _canonical(
                "c",
                "a",
                1.5,
                2,
                kind="execute_tool",
                tool_calls=[{"id": "1", "name": "lookup", "arguments": '{"q": "x"}', "result": 42}],
                status={"code": "error", "message": "boom"},
            ),
        ]
    )
    run, chat, tool = trace.walk()
    assert (run.kind, chat.kind, tool.kind) == ("AGENT", "LLM", "TOOL")
    assert chat.input_messages[0].role == "user"
    assert chat.usage is not None and chat.usage.total_tokens == 4
    assert tool.tool_calls[0].arguments == {"q": "x"}
    assert tool.tool_calls[0].error == "boom"
    assert tool.status.message == "boom"


def test_final_answer_falls_back_to_the_last_llm_span() -> None:
    trace = Trace.from_spans(
        [
            _canonical("a", None, 0, 5, kind="agent"),
            _canonical(
                "b", "a", 1, 2, kind="llm", output_messages=[{"role": "assistant", "text": "draft"}]
            ),
            _canonical(
                "c", "a", 3, 4, kind="llm", output_messages=[{"role": "assistant", "text": "final"}]
            ),
            _canonical("d", "a", 4, 4.5, kind="tool", tool_calls=[{"name": "log"}]),
        ]
    )
    assert trace.roots()[0].output_messages == []
    assert trace.final_answer == "final"
    silent = Trace.from_spans([_canonical("a", None, 0, 1)])
    assert silent.final_answer is None


def test_message_text_joins_parts_and_skips_reasoning() -> None:
    message = Message.model_validate(
        {
            "role": "assistant",
            "content": [
                {"type": "reasoning", "text": "let me think"},
                {"type": "text", "text": "first"},
                {"type": "image_url", "image_url": {"url": "https://x/y.png"}},
                {"type": "text", "text": "second"},
            ],
        }
    )
    assert message.text == "first\nsecond"
    assert message.content[2].url == "https://x/y.png"
    assert ToolCall(name="f", arguments="not json").arguments == "not json"
    assert ToolCall(name="f", result="2024").result == "2024"  # only objects/arrays are parsed


def test_dataframe_view(otlp_trace: Trace) -> None:
    frame = otlp_trace.to_dataframe()
    assert list(frame["span_id"]) == [s.span_id for s in otlp_trace.walk()]
    for column in ("trace_id", "parent_id", "depth", "name", "kind", "start", "duration_ms",
                   "status", "model", "input_tokens", "output_tokens", "total_tokens",
                   "input_preview", "output_preview"):  # fmt: skip
        assert column in frame.columns
    assert list(frame["depth"]) == [0, 1, 1, 1, 1, 1, 2, 1]
    assert frame.loc[3, "status"] == "error"
    assert frame.loc[3, "output_preview"].startswith("error: TimeoutError")
    assert frame.loc[1, "output_preview"].startswith("calls get_weather(")
    assert frame.loc[1, "total_tokens"] == 470
    assert frame["input_tokens"].isna().sum() == 3  # the tool spans used no tokens
    assert frame.loc[0, "duration_ms"] == pytest.approx(6100.0)
    assert frame["output_preview"].str.len().max() <= 120


def test_example_trace_for_notebooks() -> None:
    trace = example_trace()
    assert len(trace.spans) == 4
    assert trace.final_answer is not None and trace.final_answer.startswith("Yes: take an umbrella")
    assert trace.find(kind="TOOL")[0].tool_calls[0].result["precipitation_chance"] == 0.8
    assert "get_weather" in str(trace)  # prints as an outline


# ------------------------------------------------------------------------------ malformed traces


def test_missing_parent_loads_with_a_warning_and_becomes_a_root() -> None:
    records = [_canonical("a", None, 0, 3), _canonical("b", "ghost", 1, 2, name="orphan")]
    with pytest.warns(TraceWarning, match=r"'orphan' \(id b\) names parent ghost"):
        trace = Trace.from_spans(records)
    assert [s.span_id for s in trace.roots()] == ["a", "b"]
    orphan = trace.get("b")
    assert orphan is not None and orphan.parent_id == "ghost"
    assert trace.parent(orphan) is None
    assert trace.depth(orphan) == 0


def test_cycle_is_an_error_naming_the_spans() -> None:
    records = [
        _canonical("root", None, 0, 9),
        _canonical("x", "z", 1, 2, name="plan"),
        _canonical("y", "x", 2, 3, name="act"),
        _canonical("z", "y", 3, 4, name="reflect"),
    ]
    with pytest.raises(TraceError, match="parent cycle") as info:
        Trace.from_spans(records)
    for name in ("'plan' (id x)", "'act' (id y)", "'reflect' (id z)"):
        assert name in str(info.value)
    with pytest.raises(TraceError, match=r"'self' \(id s\) -> 'self' \(id s\)"):
        Trace.from_spans([_canonical("s", "s", 0, 1, name="self")])


def test_bad_timestamp_names_the_span_and_field() -> None:
    export = _otlp()
    _otlp_spans(export)[2]["startTimeUnixNano"] = "yesterday"
    with pytest.raises(
        TraceError, match=r"'execute_tool get_weather'.*startTimeUnixNano 'yesterday'"
    ):
        Trace.from_otlp(export)
    export = _otlp()
    del _otlp_spans(export)[4]["endTimeUnixNano"]
    with pytest.raises(TraceError, match=r"id d4e5f60718293a4b.*endTimeUnixNano is missing"):
        Trace.from_otlp(export)
    with pytest.raises(TraceError, match=r"'late' \(id a\): start: .*no UTC offset"):
        Trace.from_spans(
            [_canonical("a", None, 0, 1, name="late") | {"start": "2025-06-12T09:00:00"}]
        )
    records = json.loads(OI_FILE.read_text(encoding="utf-8"))
    records[1]["end_time"] = "12/06/2025 09:30"
    with pytest.raises(TraceError, match=r"'ChatCompletion' \(id 2b3c4d5e6f708192\): end: "):
        Trace.from_openinference(records)


def test_end_before_start_is_a_warning() -> None:
    with pytest.warns(TraceWarning, match=r"'rewind' \(id a\) ends before it starts"):
        trace = Trace.from_spans([_canonical("a", None, 5, 2, name="rewind")])
    assert trace.spans[0].duration == timedelta(seconds=-3)


def test_duplicate_span_ids_are_an_error_naming_the_id() -> None:
    records = [
        _canonical("a", None, 0, 3, name="first"),
        _canonical("a", None, 1, 2, name="second"),
    ]
    with pytest.raises(TraceError, match=r"span id a is used twice \(spans 'first' and 'second'\)"):
        Trace.from_spans(records)


def test_other_bad_input_is_named() -> None:
    with pytest.raises(TraceError, match=r"'x' \(id a\): unknown field\(s\) 'colour'"):
        Trace.from_spans([_canonical("a", None, 0, 1, name="x", colour="red")])
    with pytest.raises(TraceError, match=r"kind: .*unknown span kind 'banana'"):
        Trace.from_spans([_canonical("a", None, 0, 1, kind="banana")])
    export = _otlp()
    _otlp_spans(export)[0]["spanId"] = "xyz"
    with pytest.raises(TraceError, match="spanId 'xyz' is neither 16 hex digits nor base64"):
        Trace.from_otlp(export)
    with pytest.raises(TraceError, match="is not a span or trace export"):
        load_traces([{"hello": "world"}])
    with pytest.raises(TraceError, match=r"to read a file use rubriclab\.load_traces"):
        Trace.from_otlp("traces/run.json")
    trace = example_trace()
    with pytest.raises(TraceError, match="span nope is not in trace"):
        trace.children("nope")


def test_spans_need_aware_times() -> None:
    with pytest.raises(ValueError, match="no timezone"):
        Span(
            trace_id="t",
            span_id="s",
            name="n",
            start=datetime(2025, 1, 1),
            end=datetime(2025, 1, 1),
        )


# ------------------------------------------------------------------------------ templates


def _render(template: str, **context: Any) -> str:
    env = SandboxedEnvironment(undefined=StrictUndefined, autoescape=False)
    return env.from_string(template).render(**context)


def test_seed_worked_example_renders_the_final_answer(otlp_trace: Trace, oi_trace: Trace) -> None:
    template = "Answer: {{ input_trace.roots()[0].output_messages[-1].text }}"
    for trace in (otlp_trace, oi_trace, example_trace()):
        assert _render(template, input_trace=trace) == f"Answer: {trace.final_answer}"


def test_templates_can_walk_the_tree_and_read_tool_calls(otlp_trace: Trace) -> None:
    template = (
        "{% for s in input_trace.walk() %}{{ '  ' * input_trace.depth(s) }}{{ s.kind }} {{ s.name }}"
        "{% if s.is_error %} FAILED: {{ s.status.message }}{% endif %}\n{% endfor %}"
        "{% for c in input_trace.tool_calls() %}{{ c.name }} {{ c.arguments | tojson }}"
        " -> {{ c.error or c.result | tojson }}\n{% endfor %}"
        "{{ input_trace.find(kind='tool')[0].tool_calls[0].arguments.city }}"
        "|{{ input_trace.final_answer[:10] }}|{{ '%.1f' | format(input_trace.roots()[0].duration_ms) }}"
    )
    text = _render(template, input_trace=otlp_trace)
    assert "    LLM chat gpt-4o-mini\n" in text  # the nested summariser, two levels down
    assert "TOOL execute_tool search_web FAILED: TimeoutError" in text
    assert 'get_weather {"city": "Lisbon", "date": "2025-06-13"} -> {"city": "Lisbon"' in text
    assert text.endswith("Lisbon|Pack light|6100.0")
    span_text = _render("{{ s.summary() }}", s=otlp_trace.find(status="error")[0])
    assert span_text.startswith("TOOL 'execute_tool search_web' error 2.00s")


@pytest.mark.parametrize(
    "expression",
    [
        "input_trace.to_dataframe()",
        "input_trace.from_otlp({})",
        "input_trace.from_spans([])",
        "input_trace.parse_file('/etc/passwd')",
        "input_trace.roots()[0].parse_raw('x')",
    ],
)
def test_templates_cannot_load_files_or_build_writers(otlp_trace: Trace, expression: str) -> None:
    with pytest.raises(SecurityError):
        _render("{{ " + expression + " }}", input_trace=otlp_trace)


def test_private_indexes_are_out_of_reach(otlp_trace: Trace) -> None:
    with pytest.raises(SecurityError):
        _render("{{ input_trace._by_id }}", input_trace=otlp_trace)


def test_disabled_pydantic_loaders_refuse_outside_templates_too() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        with pytest.raises(TypeError, match="disabled"):
            Trace.parse_file("anything.json")


def test_models_are_read_only_and_hashable(otlp_trace: Trace) -> None:
    span = copy.copy(otlp_trace.spans[0])
    with pytest.raises(ValueError, match="frozen"):
        span.name = "renamed"
    highlighted = {otlp_trace.find(status="error")[0]}
    assert [s.name for s in otlp_trace.walk() if s in highlighted] == ["execute_tool search_web"]
    assert {otlp_trace: "judged"}[load_traces(OTLP_FILE)[0]] == "judged"


def test_tree_of_a_deep_chain_grows_with_its_length_not_its_square() -> None:
    """Indentation stops growing (deeper spans show their depth): a 3,000-span chain would
    otherwise print 9M characters of indentation (and a 20,000-span one 400M)."""
    t0 = datetime(2025, 1, 1, tzinfo=timezone.utc)
    chain = Trace(
        Span(
            trace_id="t",
            span_id=f"s{i}",
            parent_id=f"s{i - 1}" if i else None,
            name=f"step {i}",
            kind="CHAIN",
            start=t0,
            end=t0,
        )
        for i in range(3000)
    )
    lines = chain.tree().split("\n")
    assert len(lines) == 3000 and len(chain.tree()) < 3000 * 120
    assert lines[1].startswith("  CHAIN 'step 1'")
    deep = lines[2999]
    assert deep.lstrip(" ").startswith("[depth 2999] CHAIN 'step 2999'") and len(deep) < 200
    assert list(chain.outline()) == lines
