"""Write the trace fixtures in tests/fixtures/traces/real/ with the real tracing libraries.

    pip install -e '.[traces-test]'
    python tests/traces_fixtures/generate.py            # every scenario
    python tests/traces_fixtures/generate.py genai_events

A small agent answers "what is the weather in Paris, and 2 + 3?" through the OpenAI SDK against
rubriclab's fake server (``tool_call_responder``: the "model" asks for the two tool calls the
user's message lists, then answers from their results). The agent runs each tool itself inside
a tool span, as agent frameworks do. Each scenario instruments the run one way and exports it
with the SDK's own exporters:

* ``openinference``: OpenInference's OpenAI instrumentor; tool and agent spans carry
  OpenInference attributes (``openinference.span.kind``, ``tool.name``, ``input.value``...).
* ``genai_spans``: the OpenTelemetry GenAI instrumentation (opentelemetry-instrumentation-openai-v2)
  with ``OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental`` and content on spans.
* ``genai_events``: the same instrumentation with content as events
  (``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=EVENT_ONLY``; older releases took
  ``true``): spans without content, the messages as OTLP log records carrying the span ids.
* ``genai_nocontent``: the instrumentation's default, content not captured.
* ``mlflow``: MLflow's tracing (``mlflow.openai.autolog()``, tool and agent spans through
  ``mlflow.start_span``), written as ``mlflow.trace.json`` (``trace.to_json()``) and
  ``mlflow.search_traces.json`` (``mlflow.search_traces()`` as JSON records).

Each writes ``<scenario>.otlp.json`` (the OTLP encoder's protobuf as JSON, as a collector's file
exporter writes), ``<scenario>.otlp.pb`` (the protobuf bytes the OTLP exporters send),
``<scenario>.console.txt`` (``ConsoleSpanExporter``), logs as ``<scenario>.logs.otlp.json`` /
``.logs.otlp.pb`` when there are any, and ``<scenario>.truth.json``: what the program did (tool
names, arguments, results, the model's finish reasons and token counts as the server sent them,
and the wall-clock bounds of each step as the program measured them), which the tests check the
loaded traces against.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

# RUBRICLAB_TRACE_FIXTURES: write somewhere else (the tests regenerate into a temporary folder)
OUT = Path(
    os.environ.get("RUBRICLAB_TRACE_FIXTURES")
    or Path(__file__).resolve().parent.parent / "fixtures" / "traces" / "real"
)
SCENARIOS = ("openinference", "genai_spans", "genai_events", "genai_nocontent", "mlflow")
QUESTION = (
    "What is the weather in Paris, and what is 2 + 3?\n"
    'call get_weather {"city": "Paris"}\n'
    'call add {"a": 2, "b": 3}'
)
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "The weather in a city now.",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}},
                "required": ["city"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "add",
            "description": "a + b",
            "parameters": {
                "type": "object",
                "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
                "required": ["a", "b"],
            },
        },
    },
]
ENV = {
    "openinference": {},
    "genai_spans": {
        "OTEL_SEMCONV_STABILITY_OPT_IN": "gen_ai_latest_experimental",
        "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "SPAN_ONLY",
    },
    "genai_events": {
        "OTEL_SEMCONV_STABILITY_OPT_IN": "gen_ai_latest_experimental",
        "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "EVENT_ONLY",
    },
    "genai_nocontent": {},
    "mlflow": {"MLFLOW_ENABLE_ASYNC_TRACE_LOGGING": "false"},
}


def get_weather(city: str) -> dict[str, Any]:
    time.sleep(0.02)  # a tool that takes time, so its span's duration is checkable
    return {"city": city, "temp_c": 21, "sky": "clear"}


def add(a: float, b: float) -> float:
    time.sleep(0.01)
    return a + b


def _now_ns() -> int:
    return time.time_ns()


def _llm_truth(response: Any, started: int) -> dict[str, Any]:
    """What one model call returned, as the truth file records it (the tests check the trace
    against it)."""
    choice = response.choices[0]
    return {
        "finish_reason": choice.finish_reason,
        "input_tokens": response.usage.prompt_tokens,
        "output_tokens": response.usage.completion_tokens,
        "text": choice.message.content,
        "tool_calls": [
            {"id": c.id, "name": c.function.name, "arguments": json.loads(c.function.arguments)}
            for c in choice.message.tool_calls or []
        ],
        "within_ns": [started, _now_ns()],
    }


def run(scenario: str) -> None:
    from google.protobuf.json_format import MessageToJson
    from openai import OpenAI
    from opentelemetry import trace
    from opentelemetry.exporter.otlp.proto.common._log_encoder import encode_logs
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import ConsoleSpanExporter, SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from rubriclab.testing import FakeJudgeServer, tool_call_responder

    resource = Resource.create({"service.name": f"rubriclab-fixture-{scenario}"})
    provider = TracerProvider(resource=resource)
    memory = InMemorySpanExporter()
    console_path = OUT / f"{scenario}.console.txt"
    console_file = console_path.open("w", encoding="utf-8")
    provider.add_span_processor(SimpleSpanProcessor(memory))
    provider.add_span_processor(SimpleSpanProcessor(ConsoleSpanExporter(out=console_file)))
    trace.set_tracer_provider(provider)

    log_memory = None
    if scenario.startswith("genai"):
        from opentelemetry import _logs
        from opentelemetry.sdk._logs import LoggerProvider
        from opentelemetry.sdk._logs.export import SimpleLogRecordProcessor

        try:
            from opentelemetry.sdk._logs.export import InMemoryLogExporter
        except ImportError:  # older SDKs keep it here
            from opentelemetry.sdk._logs.export.in_memory_log_exporter import (
                InMemoryLogExporter,
            )
        log_memory = InMemoryLogExporter()
        logger_provider = LoggerProvider(resource=resource)
        logger_provider.add_log_record_processor(SimpleLogRecordProcessor(log_memory))
        _logs.set_logger_provider(logger_provider)
        try:  # SDKs before the logs API took events kept a separate event-logger provider
            from opentelemetry import _events  # type: ignore[attr-defined]
            from opentelemetry.sdk._events import EventLoggerProvider

            _events.set_event_logger_provider(EventLoggerProvider(logger_provider))
        except ImportError:
            pass
        from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor

        OpenAIInstrumentor().instrument()
    else:
        from openinference.instrumentation.openai import OpenAIInstrumentor as OIInstrumentor

        OIInstrumentor().instrument(tracer_provider=provider)

    tracer = trace.get_tracer("rubriclab.fixture.agent")
    truth: dict[str, Any] = {"scenario": scenario, "question": QUESTION, "llm": [], "tools": []}
    functions = {"get_weather": get_weather, "add": add}
    with FakeJudgeServer(tool_call_responder) as server:
        client = OpenAI(base_url=server.url, api_key="sk-fixture-not-a-key", max_retries=0)
        agent_start = _now_ns()
        with tracer.start_as_current_span("agent") as agent:
            if scenario == "openinference":
                agent.set_attribute("openinference.span.kind", "AGENT")
                agent.set_attribute("input.value", QUESTION)
            else:
                agent.set_attribute("gen_ai.operation.name", "invoke_agent")
                agent.set_attribute("gen_ai.agent.name", "weather-and-sums")
            messages: list[dict[str, Any]] = [{"role": "user", "content": QUESTION}]
            answer = ""
            for _turn in range(3):
                started = _now_ns()
                response = client.chat.completions.create(
                    model="fake-model",
                    messages=messages,
                    tools=TOOLS,  # type: ignore[arg-type]
                )
                choice = response.choices[0]
                assert response.usage is not None
                truth["llm"].append(_llm_truth(response, started))
                if not choice.message.tool_calls:
                    answer = choice.message.content or ""
                    break
                messages.append(choice.message.model_dump(exclude_none=True))
                for call in choice.message.tool_calls:
                    arguments = json.loads(call.function.arguments)
                    started = _now_ns()
                    with tracer.start_as_current_span(f"execute_tool {call.function.name}") as s:
                        if scenario == "openinference":
                            s.set_attribute("openinference.span.kind", "TOOL")
                            s.set_attribute("tool.name", call.function.name)
                            s.set_attribute("input.value", call.function.arguments)
                            s.set_attribute("input.mime_type", "application/json")
                        else:
                            s.set_attribute("gen_ai.operation.name", "execute_tool")
                            s.set_attribute("gen_ai.tool.name", call.function.name)
                            s.set_attribute("gen_ai.tool.call.id", call.id)
                            s.set_attribute("gen_ai.tool.type", "function")
                        result = functions[call.function.name](**arguments)
                        if scenario == "genai_spans":  # opt-in content, as with SPAN_ONLY
                            s.set_attribute("gen_ai.tool.call.arguments", call.function.arguments)
                            s.set_attribute("gen_ai.tool.call.result", json.dumps(result))
                        if scenario == "openinference":
                            s.set_attribute("output.value", json.dumps(result))
                            s.set_attribute("output.mime_type", "application/json")
                    truth["tools"].append(
                        {
                            "id": call.id,
                            "name": call.function.name,
                            "arguments": arguments,
                            "result": result,
                            "within_ns": [started, _now_ns()],
                        }
                    )
                    messages.append(
                        {"role": "tool", "tool_call_id": call.id, "content": json.dumps(result)}
                    )
            if scenario == "openinference":
                agent.set_attribute("output.value", answer)
        truth["answer"] = answer
        truth["within_ns"] = [agent_start, _now_ns()]
    provider.shutdown()
    console_file.close()
    spans = memory.get_finished_spans()
    request = encode_spans(spans)
    (OUT / f"{scenario}.otlp.pb").write_bytes(request.SerializeToString())
    (OUT / f"{scenario}.otlp.json").write_text(MessageToJson(request, indent=1) + "\n")
    if log_memory is not None:
        records = log_memory.get_finished_logs()
        if records:
            logs = encode_logs(records)
            (OUT / f"{scenario}.logs.otlp.pb").write_bytes(logs.SerializeToString())
            (OUT / f"{scenario}.logs.otlp.json").write_text(MessageToJson(logs, indent=1) + "\n")
    (OUT / f"{scenario}.truth.json").write_text(json.dumps(truth, indent=1) + "\n")
    print(f"{scenario}: {len(spans)} spans", file=sys.stderr)


def run_mlflow() -> None:
    import tempfile

    import mlflow
    from mlflow.entities import SpanType
    from openai import OpenAI

    from rubriclab.testing import FakeJudgeServer, tool_call_responder

    store = tempfile.mkdtemp(prefix="rubriclab-mlflow-")
    mlflow.set_tracking_uri(f"sqlite:///{store}/mlflow.db")
    mlflow.openai.autolog()
    truth: dict[str, Any] = {"scenario": "mlflow", "question": QUESTION, "llm": [], "tools": []}
    functions = {"get_weather": get_weather, "add": add}
    with FakeJudgeServer(tool_call_responder) as server:
        client = OpenAI(base_url=server.url, api_key="sk-fixture-not-a-key", max_retries=0)
        agent_start = _now_ns()
        with mlflow.start_span("agent", span_type=SpanType.AGENT) as agent:
            agent.set_inputs({"question": QUESTION})
            messages: list[dict[str, Any]] = [{"role": "user", "content": QUESTION}]
            answer = ""
            for _turn in range(3):
                started = _now_ns()
                response = client.chat.completions.create(
                    model="fake-model",
                    messages=messages,  # type: ignore[arg-type]
                    tools=TOOLS,  # type: ignore[arg-type]
                )
                choice = response.choices[0]
                assert response.usage is not None
                truth["llm"].append(_llm_truth(response, started))
                if not choice.message.tool_calls:
                    answer = choice.message.content or ""
                    break
                messages.append(choice.message.model_dump(exclude_none=True))
                for call in choice.message.tool_calls:
                    arguments = json.loads(call.function.arguments)
                    started = _now_ns()
                    with mlflow.start_span(call.function.name, span_type=SpanType.TOOL) as span:
                        span.set_inputs(arguments)
                        result = functions[call.function.name](**arguments)
                        span.set_outputs(result)
                    truth["tools"].append(
                        {
                            "id": call.id,
                            "name": call.function.name,
                            "arguments": arguments,
                            "result": result,
                            "within_ns": [started, _now_ns()],
                        }
                    )
                    messages.append(
                        {"role": "tool", "tool_call_id": call.id, "content": json.dumps(result)}
                    )
            agent.set_outputs(answer)
        truth["answer"] = answer
        truth["within_ns"] = [agent_start, _now_ns()]
    trace_id = mlflow.get_last_active_trace_id()
    trace = mlflow.get_trace(trace_id)
    (OUT / "mlflow.trace.json").write_text(trace.to_json(pretty=True) + "\n")
    frame = mlflow.search_traces()
    (OUT / "mlflow.search_traces.json").write_text(
        frame[["trace_id", "trace", "state", "request", "response"]].to_json(
            orient="records", indent=1
        )
        + "\n"
    )
    (OUT / "mlflow.truth.json").write_text(json.dumps(truth, indent=1) + "\n")
    print(f"mlflow: {len(trace.data.spans)} spans", file=sys.stderr)


def main(argv: list[str]) -> int:
    OUT.mkdir(parents=True, exist_ok=True)
    if len(argv) == 2 and argv[0] == "--child":
        run_mlflow() if argv[1] == "mlflow" else run(argv[1])
        return 0
    wanted = argv or list(SCENARIOS)
    for scenario in wanted:
        if scenario not in SCENARIOS:
            print(f"unknown scenario {scenario!r}: one of {', '.join(SCENARIOS)}", file=sys.stderr)
            return 2
        # one process per scenario: instrumentors and providers are process-wide
        env = {**os.environ, **ENV[scenario]}
        for key in ENV["genai_spans"]:
            if key not in ENV[scenario]:
                env.pop(key, None)
        subprocess.run([sys.executable, __file__, "--child", scenario], check=True, env=env)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
