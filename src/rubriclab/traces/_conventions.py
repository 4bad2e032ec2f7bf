"""Reading span attributes in the GenAI semantic conventions and in OpenInference.

Both describe the same things (kind, model, tokens, messages, tool calls) under different
keys; this module maps either onto canonical ``Span`` fields.
"""

from __future__ import annotations

import json
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


def _derive(
    attrs: Mapping[str, Any], events: Sequence[SpanEvent], kind_hint: Any = None
) -> dict[str, Any]:
    """Canonical fields read from a span's attributes and events, whichever convention they use.

    ``kind_hint`` is a kind the envelope gives outside the attributes (Phoenix's ``span_kind``).
    """
    out: dict[str, Any] = {}
    kind_value = _maybe_json(
        _first(
            attrs,
            "openinference.span.kind",
            "gen_ai.operation.name",
            "mlflow.spanType",
            "langfuse.observation.type",
            "langsmith.span.kind",
        )
    )
    if isinstance(kind_value, str) and kind_value.startswith('"'):
        kind_value = kind_value.strip('"')  # MLflow stores attribute values as JSON text
    kind: str | None = None
    if kind_value is not None:
        try:
            kind = _normalise_kind(kind_value)
        except ValueError:
            kind = None
    if kind is None and kind_hint not in (None, "", "UNKNOWN"):
        try:
            kind = _normalise_kind(kind_hint)
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
        "langfuse.observation.model.name",
    )
    if model is None:
        model = _foreign_model(attrs)
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
    if (tokens_in, tokens_out) == (None, None):
        tokens_in, tokens_out, tokens_total = _foreign_usage(attrs)
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
    if not inputs and not outputs and kind != "TOOL":
        inputs, outputs = _foreign_messages(attrs)
    _finish_reasons(attrs, outputs)
    system = attrs.get("gen_ai.system_instructions")
    if system is not None:
        system = _maybe_json(system)
        inputs.insert(
            0,
            {"role": "system", "content": system if isinstance(system, list) else _as_text(system)},
        )

    if kind == "TOOL":
        result = _first(attrs, "gen_ai.tool.call.result", "output.value")
        if attrs.get("gen_ai.tool.call.result") is not None or (
            attrs.get("output.mime_type") == "application/json"
        ):
            # GenAI records the result as an object (serialized), OpenInference says its value
            # is JSON: either way a result of 5 is the number 5
            result = _json_value(result)
        if result is None:
            result = _json_value(
                _first(
                    attrs, "mlflow.spanOutputs", "langfuse.observation.output", "gen_ai.completion"
                )
            )
        arguments = _first(attrs, "gen_ai.tool.call.arguments", "input.value")
        if arguments is None:
            arguments = _json_value(
                _first(attrs, "mlflow.spanInputs", "langfuse.observation.input", "gen_ai.prompt")
            )
        call = {
            "id": _first(attrs, "gen_ai.tool.call.id", "tool.id", "tool_call.id"),
            "name": _first(attrs, "gen_ai.tool.name", "tool.name") or "",
            "arguments": arguments,
            "result": result,
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


def _json_value(value: Any) -> Any:
    """A value recorded as JSON text, decoded (numbers and strings too); else as it is."""
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def _finish_reasons(attrs: Mapping[str, Any], outputs: list[dict[str, Any]]) -> None:
    """Give output messages the finish reasons the span recorded apart from them."""
    reasons = _maybe_json(_first(attrs, "gen_ai.response.finish_reasons", "llm.finish_reason"))
    if reasons is None:
        return
    listed = [reasons] if isinstance(reasons, str) else list(reasons)
    for message, reason in zip(outputs, listed, strict=False):
        if message.get("finish_reason") is None and reason is not None:
            message["finish_reason"] = str(reason)


def _chat_messages(value: Any, default_role: str) -> list[dict[str, Any]]:
    """Messages in the shapes other tools log a model call's input or output in: a message
    list, ``{"messages": [...]}``, an OpenAI ChatCompletion (``choices``), or plain text."""
    value = _json_value(value)
    if isinstance(value, Mapping):
        if isinstance(value.get("messages"), list):
            return _message_list(value["messages"], default_role)
        if isinstance(value.get("choices"), list):
            out = []
            for choice in value["choices"]:
                if isinstance(choice, Mapping) and isinstance(choice.get("message"), Mapping):
                    message = dict(choice["message"])
                    if choice.get("finish_reason") is not None:
                        message.setdefault("finish_reason", str(choice["finish_reason"]))
                    out.extend(_message_list(message, default_role))
            return out
        if "role" in value and ("content" in value or "tool_calls" in value):
            return _message_list(value, default_role)
        texts = [v for v in value.values() if isinstance(v, str)]
        if len(value) == 1 and texts:  # {"question": "..."}: the text is the message
            return [{"role": default_role, "content": texts[0]}]
        return [{"role": default_role, "content": _as_text(value)}]
    return _message_list(value, default_role)


def _foreign_messages(attrs: Mapping[str, Any]) -> tuple[list[Any], list[Any]]:
    """Inputs and outputs as MLflow, Langfuse and LangSmith (over OTel) record them."""
    for input_key, output_key in (
        ("mlflow.spanInputs", "mlflow.spanOutputs"),
        ("langfuse.observation.input", "langfuse.observation.output"),
        ("gen_ai.prompt", "gen_ai.completion"),
    ):
        given, made = attrs.get(input_key), attrs.get(output_key)
        if given is not None or made is not None:
            inputs = _chat_messages(given, "user") if given is not None else []
            outputs = _chat_messages(made, "assistant") if made is not None else []
            return inputs, outputs
    chat = _json_value(attrs.get("mlflow.chat.messages"))
    if isinstance(chat, list) and chat:
        messages = _message_list(chat, "user")
        split = len(messages)
        while split > 0 and messages[split - 1].get("role") == "assistant":
            split -= 1
        return messages[:split], messages[split:]
    return [], []


def _foreign_model(attrs: Mapping[str, Any]) -> Any:
    for key in ("mlflow.spanOutputs", "mlflow.spanInputs"):
        value = _json_value(attrs.get(key))
        if isinstance(value, Mapping) and isinstance(value.get("model"), str):
            return value["model"]
    return None


def _foreign_usage(attrs: Mapping[str, Any]) -> tuple[int | None, int | None, int | None]:
    usage = _json_value(
        _first(attrs, "mlflow.chat.tokenUsage", "langfuse.observation.usage_details")
    )
    if not isinstance(usage, Mapping):
        outputs = _json_value(attrs.get("mlflow.spanOutputs"))
        usage = outputs.get("usage") if isinstance(outputs, Mapping) else None
    if not isinstance(usage, Mapping):
        return None, None, None
    return (
        _int_or_none(_first(usage, "input_tokens", "input", "prompt_tokens")),
        _int_or_none(_first(usage, "output_tokens", "output", "completion_tokens")),
        _int_or_none(_first(usage, "total_tokens", "total")),
    )


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
