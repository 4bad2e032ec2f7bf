"""Reading span attributes in the GenAI semantic conventions and in OpenInference.

Both describe the same things (kind, model, tokens, messages, tool calls) under different
keys; this module maps either onto canonical ``Span`` fields.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ._base import _as_text, _maybe_json, _normalise_kind
from ._model import _MESSAGE_KEYS, SpanEvent, _status_code


def _first(attrs: Mapping[str, Any], *keys: str) -> Any:
    for key in keys:
        value = attrs.get(key)
        if value is not None and value != "":
            return value
    return None


def _int_or_none(value: Any) -> int | None:
    if value is None or isinstance(value, bool):
        return None
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def _indexed(flat: Mapping[str, Any], prefix: str) -> list[dict[str, Any]]:
    """Regroup flattened ``prefix.{i}.rest`` attributes into a list of ``{rest: value}``."""
    groups: dict[int, dict[str, Any]] = {}
    lead = prefix + "."
    for key, value in flat.items():
        if not key.startswith(lead):
            continue
        index, _, rest = key[len(lead) :].partition(".")
        if index.isdigit() and rest:
            groups.setdefault(int(index), {})[rest] = value
    return [groups[i] for i in sorted(groups)]


def _openinference_message(flat: Mapping[str, Any], default_role: str) -> dict[str, Any]:
    contents: list[dict[str, Any]] = []
    for c in _indexed(flat, "message.contents"):
        url = _first(c, "message_content.image.image.url", "message_content.image.url")
        contents.append(
            {
                "type": c.get("message_content.type", "image" if url else "text"),
                "text": c.get("message_content.text"),
                "url": url,
            }
        )
    if not contents and flat.get("message.content") is not None:
        contents = [{"type": "text", "text": _as_text(flat["message.content"])}]
    calls = [
        {
            "id": c.get("tool_call.id"),
            "name": c.get("tool_call.function.name"),
            "arguments": c.get("tool_call.function.arguments"),
        }
        for c in _indexed(flat, "message.tool_calls")
    ]
    if flat.get("message.function_call_name"):
        calls.append(
            {
                "name": flat["message.function_call_name"],
                "arguments": flat.get("message.function_call_arguments_json"),
            }
        )
    return {
        "role": flat.get("message.role") or default_role,
        "content": contents,
        "tool_calls": calls,
        "tool_call_id": flat.get("message.tool_call_id"),
        "name": flat.get("message.name"),
    }


def _legacy_genai_message(flat: Mapping[str, Any], default_role: str) -> dict[str, Any]:
    # the flattened ``gen_ai.prompt.{i}.*`` / ``gen_ai.completion.{i}.*`` form (OpenLLMetry)
    calls = [
        {"id": c.get("id"), "name": c.get("name"), "arguments": c.get("arguments")}
        for c in _indexed(flat, "tool_calls")
    ]
    return {
        "role": flat.get("role") or default_role,
        "content": _as_text(flat.get("content")) if flat.get("content") is not None else [],
        "tool_calls": calls,
        "tool_call_id": flat.get("tool_call_id"),
        "finish_reason": flat.get("finish_reason"),
    }


def _message_list(value: Any, default_role: str) -> list[dict[str, Any]]:
    """Messages from a GenAI JSON attribute (string or structured) or an already-built list."""
    value = _maybe_json(value)
    if isinstance(value, Mapping):
        value = [value]
    if not isinstance(value, Sequence) or isinstance(value, str):
        return [] if value in (None, "") else [{"role": default_role, "content": _as_text(value)}]
    out = []
    for item in value:
        if isinstance(item, Mapping):
            d = {k: item[k] for k in (*_MESSAGE_KEYS, "parts", "text", "id") if k in item}
            d.setdefault("role", default_role)
            out.append(d)
        elif item is not None:
            out.append({"role": default_role, "content": _as_text(item)})
    return out


_GENAI_EVENT_ROLES = {
    "gen_ai.system.message": "system",
    "gen_ai.user.message": "user",
    "gen_ai.assistant.message": "assistant",
    "gen_ai.tool.message": "tool",
}


def _event_body(event: SpanEvent) -> dict[str, Any]:
    """A GenAI event's body: from ``gen_ai.event.content`` JSON, else its plain attributes."""
    body = _maybe_json(event.attributes.get("gen_ai.event.content"))
    if isinstance(body, Mapping):
        return dict(body)
    return {k: _maybe_json(v) for k, v in event.attributes.items() if not k.startswith("gen_ai.")}


def _messages_from_events(events: Sequence[SpanEvent]) -> tuple[list[Any], list[Any]]:
    inputs: list[Any] = []
    outputs: list[Any] = []
    for event in events:
        if event.name in _GENAI_EVENT_ROLES:
            body = _event_body(event)
            body.setdefault("role", _GENAI_EVENT_ROLES[event.name])
            inputs.extend(_message_list(body, _GENAI_EVENT_ROLES[event.name]))
        elif event.name == "gen_ai.choice":
            body = _event_body(event)
            message = body.get("message")
            message = dict(message) if isinstance(message, Mapping) else {}
            message.setdefault("role", "assistant")
            if body.get("finish_reason") is not None:
                message.setdefault("finish_reason", str(body["finish_reason"]))
            outputs.extend(_message_list(message, "assistant"))
        elif event.name in ("gen_ai.client.inference.operation.details", "gen_ai.content.prompt"):
            attrs = event.attributes
            inputs.extend(
                _message_list(_first(attrs, "gen_ai.input.messages", "gen_ai.prompt"), "user")
            )
            outputs.extend(_message_list(attrs.get("gen_ai.output.messages"), "assistant"))
        elif event.name == "gen_ai.content.completion":
            outputs.extend(_message_list(event.attributes.get("gen_ai.completion"), "assistant"))
    return inputs, outputs


def _derive(attrs: Mapping[str, Any], events: Sequence[SpanEvent]) -> dict[str, Any]:
    """Canonical fields read from a span's attributes and events, whichever convention they use."""
    out: dict[str, Any] = {}
    kind_value = _first(attrs, "openinference.span.kind", "gen_ai.operation.name")
    kind: str | None = None
    if kind_value is not None:
        try:
            kind = _normalise_kind(kind_value)
        except ValueError:
            kind = None
    if kind is None and _first(attrs, "gen_ai.tool.name") is not None:
        kind = "TOOL"
    elif kind is None and _first(attrs, "gen_ai.request.model", "llm.model_name") is not None:
        kind = "LLM"
    if kind is not None:
        out["kind"] = kind

    model = _first(
        attrs,
        "gen_ai.response.model",
        "gen_ai.request.model",
        "llm.model_name",
        "llm.response.model_name",
        "llm.request.model_name",
        "embedding.model_name",
    )
    if model is not None:
        out["model"] = str(model)

    tokens_in = _int_or_none(
        _first(
            attrs,
            "gen_ai.usage.input_tokens",
            "gen_ai.usage.prompt_tokens",
            "llm.token_count.prompt",
        )
    )
    tokens_out = _int_or_none(
        _first(
            attrs,
            "gen_ai.usage.output_tokens",
            "gen_ai.usage.completion_tokens",
            "llm.token_count.completion",
        )
    )
    tokens_total = _int_or_none(_first(attrs, "gen_ai.usage.total_tokens", "llm.token_count.total"))
    if (tokens_in, tokens_out, tokens_total) != (None, None, None):
        out["usage"] = {
            "input_tokens": tokens_in,
            "output_tokens": tokens_out,
            "total_tokens": tokens_total,
        }

    inputs = _message_list(attrs.get("gen_ai.input.messages"), "user")
    outputs = _message_list(attrs.get("gen_ai.output.messages"), "assistant")
    if not inputs:
        inputs = [_openinference_message(m, "user") for m in _indexed(attrs, "llm.input_messages")]
    if not outputs:
        outputs = [
            _openinference_message(m, "assistant") for m in _indexed(attrs, "llm.output_messages")
        ]
    if not inputs and not outputs:
        inputs, outputs = _messages_from_events(events)
    if not inputs:
        inputs = [_legacy_genai_message(m, "user") for m in _indexed(attrs, "gen_ai.prompt")]
    if not outputs:
        outputs = [
            _legacy_genai_message(m, "assistant") for m in _indexed(attrs, "gen_ai.completion")
        ]
    system = attrs.get("gen_ai.system_instructions")
    if system is not None:
        system = _maybe_json(system)
        inputs.insert(
            0,
            {"role": "system", "content": system if isinstance(system, list) else _as_text(system)},
        )

    if kind == "TOOL":
        call = {
            "id": _first(attrs, "gen_ai.tool.call.id", "tool.id", "tool_call.id"),
            "name": _first(attrs, "gen_ai.tool.name", "tool.name") or "",
            "arguments": _first(attrs, "gen_ai.tool.call.arguments", "input.value"),
            "result": _first(attrs, "gen_ai.tool.call.result", "output.value"),
        }
        out["tool_calls"] = [call]
    else:
        # OpenInference agent/chain spans carry their input and answer as plain values
        if not inputs and attrs.get("input.value") is not None:
            inputs = [{"role": "user", "content": _as_text(attrs["input.value"])}]
        if not outputs and attrs.get("output.value") is not None:
            outputs = [{"role": "assistant", "content": _as_text(attrs["output.value"])}]
    if inputs:
        out["input_messages"] = inputs
    if outputs:
        out["output_messages"] = outputs
    return out


def _code_or_none(code: Any) -> str | None:
    try:
        return _status_code(code) if isinstance(code, (str, int)) else None
    except ValueError:
        return None  # left for SpanStatus to report with the span's name


def _error_message(
    status: dict[str, Any], attrs: Mapping[str, Any], events: Sequence[SpanEvent]
) -> dict[str, Any]:
    """Fill in an error status's message from exception events or ``error.type``.

    A span with ``error.type`` but no status is an error too: the GenAI conventions set one
    without the other in some instrumentations.
    """
    code = _code_or_none(status.get("code"))
    if (
        code in (None, "unset")
        and status.get("code") in (None, "", 0, "unset", "UNSET")
        and attrs.get("error.type")
    ):
        status = {**status, "code": "error"}
        code = "error"
    if code == "error" and not status.get("message"):
        for event in events:
            if event.name == "exception":
                kind = event.attributes.get("exception.type")
                text = event.attributes.get("exception.message")
                message = ": ".join(str(x) for x in (kind, text) if x)
                if message:
                    return {**status, "message": message}
        if attrs.get("error.type"):
            return {**status, "message": str(attrs["error.type"])}
    return status
