"""Saying so when a trace recorded no message content, and how to turn capture on.

Instrumentations leave prompts and completions out by default (the OpenTelemetry GenAI ones)
or on request (OpenInference's hide settings), and some send them as log records beside the
spans. Such a trace still has its tree, tokens and timings, but a judge asked about its text
would be judging nothing: load it with a warning naming what is missing and the setting that
records it, and let the rows that need the text fail (see ``missing_text``).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

from ._base import TraceWarning
from ._model import Span
from ._tree import Trace

__all__ = ["capture_hint", "missing_content", "missing_text", "warn_missing_content"]


def _instrumentation(span: Span) -> str:
    attrs = span.attributes
    if any(k.startswith(("llm.", "openinference.")) for k in attrs):
        return "openinference"
    if any(k.startswith("gen_ai.") for k in attrs):
        return "genai"
    return "other"


def capture_hint(span: Span) -> str:
    """The setting that records message content for the instrumentation that wrote ``span``."""
    kind = _instrumentation(span)
    if kind == "openinference":
        return (
            "OpenInference hid it: unset OPENINFERENCE_HIDE_INPUTS / OPENINFERENCE_HIDE_OUTPUTS "
            "(and the HIDE_*_MESSAGES settings, or TraceConfig(hide_inputs=False, ...))"
        )
    if kind == "genai":
        return (
            "the OpenTelemetry GenAI instrumentation records no content by default: with "
            "OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental set "
            "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=SPAN_ONLY (content on the spans) "
            "or EVENT_ONLY (older releases: true; content as log records: pass the logs export "
            "to load_traces with the spans, e.g. load_traces([spans_file, logs_file]))"
        )
    return "turn on your instrumentation's prompt/completion capture"


def missing_content(span: Span) -> list[str]:
    """What a model or tool span lacks: 'input messages', 'output messages', 'tool result'."""
    missing: list[str] = []
    if span.kind == "LLM":
        if not span.input_messages:
            missing.append("input messages")
        if not span.output_messages:
            missing.append("output messages")
    elif span.kind == "TOOL" and span.tool_calls:
        call = span.tool_calls[0]
        if call.result is None and call.error is None and not span.output_text:
            missing.append("tool result")
    return missing


def warn_missing_content(traces: Sequence[Trace]) -> None:
    """One ``TraceWarning`` per trace whose model spans recorded no message content."""
    for trace in traces:
        lacking = [(s, missing_content(s)) for s in trace.walk() if s.kind == "LLM"]
        lacking = [(s, m) for s, m in lacking if m]
        no_result = [s for s in trace.walk() if s.kind == "TOOL" and missing_content(s)]
        if no_result and not lacking:
            names = ", ".join(repr(s.name) for s in no_result[:3])
            warnings.warn(
                f"trace {trace.trace_id}: {len(no_result)} tool span(s) ({names}) recorded no "
                f"result, and no tool message in the trace holds one; "
                f"{capture_hint(no_result[0])}",
                TraceWarning,
                stacklevel=3,
            )
        if not lacking:
            continue
        llm_count = sum(1 for s in trace.walk() if s.kind == "LLM")
        what = sorted({item for _, m in lacking for item in m})
        names = ", ".join(repr(s.name) for s, _ in lacking[:3])
        more = f" and {len(lacking) - 3} more" if len(lacking) > 3 else ""
        warnings.warn(
            f"trace {trace.trace_id}: {len(lacking)} of {llm_count} model call span(s) "
            f"({names}{more}) recorded no {' and no '.join(what)}, so a judge of their text "
            f"would judge nothing; {capture_hint(lacking[0][0])}",
            TraceWarning,
            stacklevel=3,
        )


def missing_text(target: Span | Trace) -> str | None:
    """Why a row over ``target`` has no text to judge (None when it has some).

    A span needs its input or output; a trace needs a final answer. The reason names what is
    missing and how to record it, for the row's error.
    """
    if isinstance(target, Trace):
        if target.final_answer:
            return None
        llm = [s for s in target.walk() if s.kind == "LLM"]
        if llm and all("output messages" in missing_content(s) for s in llm):
            return (
                f"trace {target.trace_id} has no final answer: its model calls recorded no "
                f"content; {capture_hint(llm[0])}"
            )
        return None
    missing = missing_content(target)
    if target.kind == "LLM" and len(missing) == 2:
        return f"span {target.name!r} recorded no messages to judge; {capture_hint(target)}"
    return None
