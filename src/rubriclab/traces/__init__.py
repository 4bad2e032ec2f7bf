"""Agent traces as one canonical model: ``Span`` and ``Trace``, and loaders for what agents emit.

Agents are traced in several dialects: OpenTelemetry OTLP JSON following the GenAI semantic
conventions (``gen_ai.*`` attributes, message events, ``gen_ai.input.messages``), OpenInference
(``llm.input_messages.*``, ``tool.*``, ``input.value``), and plain span dicts. A judge template
should not care which: every loader lands on the same ``Span``/``Trace``, so
``{{ input_trace.roots()[0].output_messages[-1].text }}`` reads the same run whatever emitted it.

The models are bound raw into user-written Jinja2 templates, so everything a template can reach
is read-only: plain fields, properties and pure methods. The few methods that build objects from
outside data or hand back objects with writing methods (a DataFrame) are marked
``jinja2.sandbox.unsafe`` so the sandbox refuses them; files are read only by the module-level
:func:`load_traces` and :func:`example_trace`, which templates never see.

What real tools write loads through :func:`load_traces`: OTLP JSON and protobuf, the SDK's
console exporter, GenAI log records joined to their spans, Phoenix span records and frames,
MLflow traces, Langfuse and LangSmith attributes, folders and lists of files (the README's
"Agent traces from the tools you use" lists how to export from each).

``trace_cases`` is the data adapter ``evaluate`` uses: traces in, one row (and case) per span or
per trace out, judged by the same metric loop as any table. ``trace_conversations`` turns the
model calls' messages into a ``conversation`` column (per trace or per session) for the
conversation metrics.
"""

from ._base import SPAN_KINDS, SpanKind, TraceError, TraceWarning
from ._cases import (
    PARTITIONS,
    TraceCases,
    check_partition,
    default_partition,
    is_traces,
    span_io,
    trace_cases,
    trace_io,
)
from ._conversations import SESSION_KEYS, trace_conversation, trace_conversations
from ._formats import otlp_span_key
from ._load import TraceFormat, example_trace, load_traces
from ._model import ContentPart, Message, Span, SpanEvent, SpanStatus, TokenUsage, ToolCall
from ._rows import EVALUATION_EVENT, TREE_KEYS, span_evaluations, trace_tree
from ._sources import read_trace_path
from ._tree import Trace

__all__ = [
    "EVALUATION_EVENT",
    "PARTITIONS",
    "SESSION_KEYS",
    "SPAN_KINDS",
    "TREE_KEYS",
    "ContentPart",
    "Message",
    "Span",
    "SpanEvent",
    "SpanKind",
    "SpanStatus",
    "TokenUsage",
    "ToolCall",
    "Trace",
    "TraceCases",
    "TraceError",
    "TraceFormat",
    "TraceWarning",
    "check_partition",
    "default_partition",
    "example_trace",
    "is_traces",
    "load_traces",
    "otlp_span_key",
    "read_trace_path",
    "span_evaluations",
    "span_io",
    "trace_cases",
    "trace_conversation",
    "trace_conversations",
    "trace_io",
    "trace_tree",
]
