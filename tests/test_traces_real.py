"""Traces written by the real tracing libraries load with everything the program did.

The fixtures in tests/fixtures/traces/real/ come from tests/traces_fixtures/generate.py: an agent
on the OpenAI SDK calls rubriclab's fake server (which answers with two tool calls, then with
text), instrumented by OpenInference or by the OpenTelemetry GenAI instrumentation, exported by
the SDK's own exporters. Each ``*.truth.json`` is what the program itself saw (tool names,
arguments, results, finish reasons, token counts, when each step ran); every test checks the
loaded trace against it, never against numbers written here.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import warnings
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import rubriclab as rl
from rubriclab.metrics import TemplateMetric
from rubriclab.traces import Trace, TraceError, TraceWarning, load_traces

REAL = Path(__file__).parent / "fixtures" / "traces" / "real"
EXPORTS = ("otlp.json", "otlp.pb", "console.txt")
# (truth, what is loaded): every export of every generated scenario, then the other producers
GENERATED = [
    (scenario, f"{scenario}.{export}")
    for scenario in ("openinference", "genai_spans", "genai_events", "genai_nocontent")
    for export in EXPORTS
] + [("mlflow", "mlflow.trace.json"), ("mlflow", "mlflow.search_traces.json")]
# written from the producers' documented formats (tests/traces_fixtures/from_docs.py), over the
# generated OpenInference run: its truth applies
FROM_DOCS = [
    ("openinference", "phoenix.spans.json"),
    ("openinference", "phoenix.dataframe"),
    ("openinference", "langfuse.otlp.json"),
    ("openinference", "langsmith.otlp.json"),
]
ALL = GENERATED + FROM_DOCS
WITH_CONTENT = [case for case in ALL if case[0] != "genai_nocontent"]
# these formats keep no finish reason apart from a ChatCompletion
NO_FINISH_REASON = {"langfuse.otlp.json", "langsmith.otlp.json"}


def _truth(scenario: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((REAL / f"{scenario}.truth.json").read_text("utf-8"))
    return data


def _phoenix_frame() -> pd.DataFrame:
    """Phoenix's get_spans_dataframe(): times as UTC timestamps, indexed by span id."""
    frame = pd.DataFrame(json.loads((REAL / "phoenix.dataframe.json").read_text("utf-8")))
    for column in ("start_time", "end_time"):
        frame[column] = pd.to_datetime(frame[column], utc=True)
    return frame.set_index("context.span_id", drop=False)


def _sources(name: str) -> Any:
    if name == "phoenix.dataframe":
        return _phoenix_frame()
    spans = REAL / name
    logs = REAL / name.replace(".otlp.", ".logs.otlp.").replace(".console.txt", ".logs.otlp.pb")
    return [spans, logs] if logs != spans and logs.exists() else spans


def _load(name: str) -> Trace:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TraceWarning)
        [trace] = load_traces(_sources(name))
    return trace


def _ns(moment: datetime) -> int:
    delta = moment - datetime(1970, 1, 1, tzinfo=timezone.utc)
    return (delta.days * 86400 + delta.seconds) * 1_000_000_000 + delta.microseconds * 1000


@pytest.mark.parametrize(("scenario", "name"), ALL)
def test_tree_kinds_tokens_and_timings(scenario: str, name: str) -> None:
    truth = _truth(scenario)
    trace = _load(name)
    [root] = trace.roots()
    assert (root.name, root.kind) == ("agent", "AGENT")
    llm = trace.find(kind="LLM")
    tools = trace.find(kind="TOOL")
    assert len(llm) == len(truth["llm"]) == 2
    assert len(tools) == len(truth["tools"]) == 2
    # parentage: every model call and tool run is a child of the agent span
    assert all(trace.parent(s) == root for s in [*llm, *tools])
    assert len(trace.spans) == 1 + len(llm) + len(tools)
    assert [s.kind for s in trace.walk()] == ["AGENT", "LLM", "TOOL", "TOOL", "LLM"]
    for span, seen in zip(llm, truth["llm"], strict=True):
        assert span.usage is not None
        assert (span.usage.input_tokens, span.usage.output_tokens) == (
            seen["input_tokens"],
            seen["output_tokens"],
        )
        assert span.model == "fake-model"
    # timings: each span lies within the wall-clock bounds the program measured around it (the
    # SDK stamps microseconds here, so allow one) and lasts at least as long as the tool slept
    pairs = [*zip(llm, truth["llm"], strict=True), *zip(tools, truth["tools"], strict=True)]
    for span, seen in pairs:
        low, high = seen["within_ns"]
        assert low - 1000 <= _ns(span.start) <= _ns(span.end) <= high + 1000, span.name
    weather, add = tools
    assert weather.duration_ms >= 20 and add.duration_ms >= 10
    low, high = truth["within_ns"]
    assert low - 1000 <= _ns(trace.start) and _ns(trace.end) <= high + 1000


@pytest.mark.parametrize(("scenario", "name"), WITH_CONTENT)
def test_each_tool_call_once_with_its_arguments_and_result(scenario: str, name: str) -> None:
    truth = _truth(scenario)
    trace = _load(name)
    calls = trace.tool_calls()
    assert [(c.id, c.name, c.arguments, c.result) for c in calls] == [
        (t["id"], t["name"], t["arguments"], t["result"]) for t in truth["tools"]
    ]
    assert isinstance(calls[1].result, int)  # add -> 5 stays a number
    # the model's request and the tool span describe the same two calls
    first = trace.find(kind="LLM")[0]
    assert [(c.id, c.name, c.arguments, c.result) for c in first.tool_calls] == [
        (t["id"], t["name"], t["arguments"], t["result"]) for t in truth["tools"]
    ]
    for span, told in zip(trace.find(kind="TOOL"), truth["tools"], strict=True):
        assert span.tool_calls[0].id == told["id"]  # OpenInference records none: matched
        assert span.tool_calls[0].result == told["result"]


@pytest.mark.parametrize(("scenario", "name"), WITH_CONTENT)
def test_messages_finish_reasons_and_answer(scenario: str, name: str) -> None:
    truth = _truth(scenario)
    trace = _load(name)
    llm = trace.find(kind="LLM")
    for span, seen in zip(llm, truth["llm"], strict=True):
        assert span.input_messages[0].role == "user"
        assert span.input_messages[0].text == truth["question"]
        [out] = span.output_messages
        if name not in NO_FINISH_REASON:
            assert out.finish_reason == seen["finish_reason"]
        assert out.text == (seen["text"] or "")
        assert [(c.id, c.name, c.arguments) for c in out.tool_calls] == [
            (c["id"], c["name"], c["arguments"]) for c in seen["tool_calls"]
        ]
    # the second call saw the tool results the agent sent back
    tool_messages = [m for m in llm[1].input_messages if m.role == "tool"]
    assert [m.tool_call_id for m in tool_messages] == [t["id"] for t in truth["tools"]]
    assert trace.final_answer == truth["answer"]


def test_the_grounded_template_sees_two_tool_calls_not_four() -> None:
    trace = _load("openinference.otlp.json")
    rendered = rl.templates.render(
        "Tool calls ({{ input_trace.tool_calls() | length }})", {"input_trace": trace}
    )
    assert rendered == "Tool calls (2)"


# ---------------------------------------------------------------------------- content capture


def test_genai_without_content_warns_with_the_setting_that_records_it() -> None:
    with pytest.warns(TraceWarning) as caught:
        [trace] = load_traces(REAL / "genai_nocontent.otlp.pb")
    [message] = [str(w.message) for w in caught]
    assert "2 of 2 model call span(s)" in message
    assert "no input messages and no output messages" in message
    assert "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT" in message
    assert trace.final_answer is None
    # the tree, tokens and tool names are still there
    assert [c.name for c in trace.tool_calls()] == ["get_weather", "add"]


def test_events_mode_spans_alone_warn_and_with_their_logs_do_not() -> None:
    with pytest.warns(TraceWarning, match="pass the logs export to load_traces"):
        load_traces(REAL / "genai_events.otlp.json")
    with warnings.catch_warnings():
        warnings.simplefilter("error", TraceWarning)
        [trace] = load_traces(
            [REAL / "genai_events.otlp.json", REAL / "genai_events.logs.otlp.json"]
        )
    assert trace.final_answer == _truth("genai_events")["answer"]


def test_content_less_trace_is_a_row_error_not_a_judgment() -> None:
    with pytest.warns(TraceWarning):
        traces = load_traces(REAL / "genai_nocontent.otlp.json")
    with_content = _load("genai_spans.otlp.json")
    metric = TemplateMetric(
        name="grounded",
        prompt_template="Final answer: {{ input_trace.final_answer }}",
        expected_variables=["input_trace"],
    )
    judge = rl.Judge("mock")
    result = rl.evaluate([*traces, with_content], metrics=[metric], judge=judge, partition="trace")
    errors = result.table["grounded/error"]
    empty = errors.loc[traces[0].trace_id]
    assert "recorded no content" in empty
    assert "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT" in empty
    assert result.table["grounded/score"].isna().loc[traces[0].trace_id]
    # the trace with content is judged as usual (the control)
    assert errors.isna().loc[with_content.trace_id]
    assert not result.table["grounded/score"].isna().loc[with_content.trace_id]


# ------------------------------------------------------------------------------------ sources


def test_a_folder_of_spans_and_logs_loads_in_one_call(tmp_path: Path) -> None:
    for name in ("genai_events.otlp.pb", "genai_events.logs.otlp.pb"):
        shutil.copy(REAL / name, tmp_path / name)
    with warnings.catch_warnings():
        warnings.simplefilter("error", TraceWarning)
        [trace] = load_traces(tmp_path)
    assert trace.final_answer == _truth("genai_events")["answer"]
    assert len(trace.tool_calls()) == 2


def test_several_files_give_several_traces() -> None:
    traces = load_traces([REAL / "openinference.otlp.pb", REAL / "genai_spans.console.txt"])
    assert len(traces) == 2
    assert [len(t.tool_calls()) for t in traces] == [2, 2]


def test_protobuf_bytes_load_and_a_protobuf_file_under_another_name(tmp_path: Path) -> None:
    data = (REAL / "openinference.otlp.pb").read_bytes()
    [from_bytes] = load_traces(data)
    odd = tmp_path / "export.dat"
    odd.write_bytes(data)
    [from_file] = load_traces(odd)
    assert from_bytes.tree() == from_file.tree() == _load("openinference.otlp.json").tree()


def test_protobuf_without_opentelemetry_proto_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(
        sys.modules, "opentelemetry.proto.collector.trace.v1.trace_service_pb2", None
    )
    with pytest.raises(TraceError, match=r"pip install 'rubriclab\[traces\]'"):
        load_traces(REAL / "openinference.otlp.pb")


def test_bytes_that_are_neither_json_nor_otlp_are_refused(tmp_path: Path) -> None:
    junk = tmp_path / "junk.pb"
    junk.write_bytes(b"\xff\x00\x13 definitely not protobuf \xfe")
    with pytest.raises(TraceError, match="neither JSON nor an OTLP protobuf export"):
        load_traces(junk)


def test_console_output_with_one_span_and_with_many() -> None:
    text = (REAL / "openinference.console.txt").read_text("utf-8")
    [trace] = load_traces(text)
    assert len(trace.spans) == 5
    first = text[: text.index("\n}\n") + 3]
    [one] = load_traces(first)
    assert len(one.spans) == 1


# ------------------------------------------------------------------------------ MLflow objects


def test_mlflow_trace_objects_and_search_traces_frame() -> None:
    entities = pytest.importorskip("mlflow.entities")
    text = (REAL / "mlflow.trace.json").read_text("utf-8")
    obj = entities.Trace.from_json(text)
    [from_object] = load_traces(obj)
    [from_list] = load_traces([obj])
    frame = pd.DataFrame(json.loads((REAL / "mlflow.search_traces.json").read_text("utf-8")))
    [from_frame] = load_traces(frame)
    expected = _load("mlflow.trace.json")
    assert from_object.tree() == from_list.tree() == from_frame.tree() == expected.tree()
    assert len(from_frame.tool_calls()) == 2


def test_a_frame_that_is_no_span_export_is_refused_by_name() -> None:
    with pytest.raises(TraceError, match="not a span export"):
        load_traces(pd.DataFrame({"question": ["hi"], "answer": ["hello"]}))


def test_hostile_nesting_is_a_one_line_error(tmp_path: Path) -> None:
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 200_000 + "]" * 200_000, encoding="utf-8")
    with pytest.raises(TraceError, match="nests JSON too deeply"):
        load_traces(deep)


def _span(span_id: str, kind: str, second: int, **fields: Any) -> dict[str, Any]:
    return {
        "trace_id": "t1",
        "span_id": span_id,
        "parent_id": None if span_id == "root" else "root",
        "name": span_id,
        "kind": kind,
        "start": f"2025-06-12T09:30:{second:02d}Z",
        "end": f"2025-06-12T09:30:{second:02d}.500000Z",
        **fields,
    }


def test_tool_spans_without_ids_match_by_arguments_then_by_order() -> None:
    asked = [
        {"id": "c1", "name": "add", "arguments": {"a": 1, "b": 2}},
        {"id": "c2", "name": "add", "arguments": {"a": 3, "b": 4}},
        {"id": "c3", "name": "lookup", "arguments": {"q": "x"}},
    ]
    spans = [
        _span("root", "AGENT", 0),
        _span("llm", "LLM", 1, tool_calls=asked),
        # run in another order than asked, no ids; lookup recorded no arguments
        _span(
            "t_second",
            "TOOL",
            2,
            tool_calls=[{"name": "add", "arguments": {"a": 3, "b": 4}, "result": 7}],
        ),
        _span(
            "t_first",
            "TOOL",
            3,
            tool_calls=[{"name": "add", "arguments": {"a": 1, "b": 2}, "result": 3}],
        ),
        _span("t_lookup", "TOOL", 4, tool_calls=[{"name": "lookup", "result": "found"}]),
    ]
    [trace] = load_traces(spans)
    assert [(c.id, c.arguments, c.result) for c in trace.tool_calls()] == [
        ("c1", {"a": 1, "b": 2}, 3),
        ("c2", {"a": 3, "b": 4}, 7),
        ("c3", {"q": "x"}, "found"),
    ]
    assert [trace.get(s).tool_calls[0].id for s in ("t_second", "t_first", "t_lookup")] == [
        "c2",
        "c1",
        "c3",
    ]


def test_a_tool_span_that_no_request_names_is_kept_once() -> None:
    spans = [
        _span("root", "AGENT", 0),
        _span("llm", "LLM", 1, tool_calls=[{"id": "c1", "name": "add", "arguments": {"a": 1}}]),
        _span("t1", "TOOL", 2, tool_calls=[{"name": "search", "arguments": {"q": "y"}}]),
    ]
    [trace] = load_traces(spans)
    assert [(c.id, c.name) for c in trace.tool_calls()] == [("c1", "add"), (None, "search")]


@pytest.mark.timeout(300)
@pytest.mark.parametrize("scenario", ["openinference", "genai_events"])
def test_the_generator_still_writes_what_the_tests_check(scenario: str, tmp_path: Path) -> None:
    """Run the real libraries again (the traces-test extra): fresh output passes the same checks."""
    for module in ("openai", "opentelemetry.sdk", "openinference.instrumentation.openai"):
        pytest.importorskip(module)
    pytest.importorskip("opentelemetry.instrumentation.openai_v2")
    script = Path(__file__).parent / "traces_fixtures" / "generate.py"
    env = {**os.environ, "RUBRICLAB_TRACE_FIXTURES": str(tmp_path)}
    subprocess.run([sys.executable, str(script), scenario], check=True, env=env, timeout=240)
    truth = json.loads((tmp_path / f"{scenario}.truth.json").read_text("utf-8"))
    for export in EXPORTS:
        spans = tmp_path / f"{scenario}.{export}"
        logs = tmp_path / f"{scenario}.logs.otlp.pb"
        with warnings.catch_warnings():
            warnings.simplefilter("error", TraceWarning)  # content was captured: no warning
            [trace] = load_traces([spans, logs] if logs.exists() else spans)
        assert [(c.id, c.name, c.arguments, c.result) for c in trace.tool_calls()] == [
            (t["id"], t["name"], t["arguments"], t["result"]) for t in truth["tools"]
        ]
        assert trace.final_answer == truth["answer"]
        assert [s.usage.input_tokens for s in trace.find(kind="LLM") if s.usage] == [
            m["input_tokens"] for m in truth["llm"]
        ]


def test_only_some_content_missing_warns_about_what_is_missing() -> None:
    spans = [
        _span("root", "AGENT", 0),
        _span(
            "llm",
            "LLM",
            1,
            input_messages=[{"role": "user", "content": "2+2?"}],
            output_messages=[{"role": "assistant", "content": "4"}],
        ),
        _span("t1", "TOOL", 2, tool_calls=[{"name": "add", "arguments": {"a": 2, "b": 2}}]),
    ]
    with pytest.warns(TraceWarning, match=r"1 tool span\(s\) \('t1'\) recorded no result"):
        load_traces(spans)
    spans[2]["tool_calls"][0]["result"] = 4
    with warnings.catch_warnings():
        warnings.simplefilter("error", TraceWarning)
        load_traces(spans)  # the control: everything recorded, nothing said


def test_span_rows_without_messages_are_row_errors() -> None:
    with pytest.warns(TraceWarning):
        [trace] = load_traces(REAL / "genai_nocontent.otlp.pb")
    metric = TemplateMetric(name="step", prompt_template="Step {{ input_span.output_text }}")
    result = rl.evaluate(trace, metrics=[metric], judge=rl.Judge("mock"), partition="span")
    table = result.table.set_index("name", append=True)
    errors = table["step/error"]
    llm_rows = [row for row in errors.index if row[1].startswith("chat")]
    assert len(llm_rows) == 2
    assert all("recorded no messages to judge" in errors.loc[row] for row in llm_rows)
    # the agent and tool spans are judged (their structure is what the trace has)
    assert errors.drop(llm_rows).isna().all()


def test_trace_from_otlp_takes_protobuf_bytes() -> None:
    data = (REAL / "genai_spans.otlp.pb").read_bytes()
    assert Trace.from_otlp(data).tree() == _load("genai_spans.otlp.json").tree()
