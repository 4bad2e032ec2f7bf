"""Write the fixtures for producers that cannot run here, from their documented formats.

    python tests/traces_fixtures/from_docs.py

Phoenix (a server), Langfuse and LangSmith (hosted services) are not installed in tests. Their
fixtures are the real OpenInference run (``openinference.otlp.json``, written by
generate.py) re-expressed the way each documents its export, so the same ``*.truth.json``
checks them:

* ``phoenix.spans.json``: Phoenix's span records (``span_kind`` as a top-level field and taken
  out of the attributes, which are nested: ``{"llm": {"input_messages": [...]}}``).
* ``phoenix.dataframe.json``: ``get_spans_dataframe()`` as JSON records (``context.*`` and
  flattened ``attributes.*`` columns, list-valued message columns); the test builds the frame.
* ``langfuse.otlp.json``: Langfuse's OTel attributes (``langfuse.observation.type`` /
  ``input`` / ``output`` / ``model.name`` / ``usage_details``).
* ``langsmith.otlp.json``: LangSmith's OTel attributes (``langsmith.span.kind``,
  ``gen_ai.prompt`` / ``gen_ai.completion`` as JSON, ``gen_ai.usage.*``).

These are written from documentation, not produced by the tools; the report says so.
"""

from __future__ import annotations

import base64
import json
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

OUT = Path(__file__).resolve().parent.parent / "fixtures" / "traces" / "real"


def _value(v: dict[str, Any]) -> Any:
    if "stringValue" in v:
        return v["stringValue"]
    if "intValue" in v:
        return int(v["intValue"])
    if "doubleValue" in v:
        return v["doubleValue"]
    if "boolValue" in v:
        return v["boolValue"]
    if "arrayValue" in v:
        return [_value(x) for x in v["arrayValue"].get("values", [])]
    return None


def _spans() -> list[dict[str, Any]]:
    export = json.loads((OUT / "openinference.otlp.json").read_text("utf-8"))
    spans = []
    for rs in export["resourceSpans"]:
        for ss in rs["scopeSpans"]:
            for raw in ss["spans"]:
                attrs = {a["key"]: _value(a["value"]) for a in raw.get("attributes", [])}
                spans.append({**raw, "attrs": attrs})
    return spans


def _hex(b64: str | None) -> str | None:
    return None if not b64 else base64.b64decode(b64).hex()


def _iso(nanos: str) -> str:
    moment = datetime.fromtimestamp(int(nanos) // 1000 / 1e6, tz=timezone.utc)
    return moment.isoformat()


def _nest(flat: dict[str, Any]) -> dict[str, Any]:
    """Phoenix nests dotted keys; indexed lists become lists of nested dicts."""
    root: dict[str, Any] = {}
    for key, value in flat.items():
        node: Any = root
        parts = key.split(".")
        for i, part in enumerate(parts):
            last = i == len(parts) - 1
            nxt = None if last else parts[i + 1]
            if isinstance(node, list):
                index = int(part)
                while len(node) <= index:
                    node.append({})
                if last:
                    node[index] = value
                else:
                    node = node[index]
                continue
            if last:
                node[part] = value
            else:
                node = node.setdefault(part, [] if nxt is not None and nxt.isdigit() else {})
    return root


def _messages(attrs: dict[str, Any], prefix: str) -> list[dict[str, Any]]:
    rows: dict[int, dict[str, Any]] = {}
    for key, value in attrs.items():
        if key.startswith(prefix + "."):
            index, _, rest = key[len(prefix) + 1 :].partition(".")
            rows.setdefault(int(index), {})[rest] = value
    return [rows[i] for i in sorted(rows)]


def phoenix() -> None:
    records = []
    frame_rows = []
    for span in _spans():
        attrs = dict(span["attrs"])
        kind = attrs.pop("openinference.span.kind")
        status = span.get("status", {})
        code = {"STATUS_CODE_OK": "OK", "STATUS_CODE_ERROR": "ERROR"}.get(
            status.get("code", ""), "UNSET"
        )
        base = {
            "name": span["name"],
            "span_kind": kind,
            "parent_id": _hex(span.get("parentSpanId")),
            "start_time": _iso(span["startTimeUnixNano"]),
            "end_time": _iso(span["endTimeUnixNano"]),
            "status_code": code,
            "status_message": status.get("message", ""),
            "events": [],
        }
        context = {"trace_id": _hex(span["traceId"]), "span_id": _hex(span["spanId"])}
        records.append({**base, "context": context, "attributes": _nest(attrs)})
        row: dict[str, Any] = {**base, "context.span_id": context["span_id"]}
        row["context.trace_id"] = context["trace_id"]
        for key, value in attrs.items():
            if key.startswith(("llm.input_messages.", "llm.output_messages.")):
                continue
            row[f"attributes.{key}"] = value
        for prefix in ("llm.input_messages", "llm.output_messages"):
            listed = _messages(attrs, prefix)
            if listed:
                row[f"attributes.{prefix}"] = listed
        frame_rows.append(row)
    (OUT / "phoenix.spans.json").write_text(json.dumps(records, indent=1) + "\n")
    (OUT / "phoenix.dataframe.json").write_text(json.dumps(frame_rows, indent=1) + "\n")


def _otlp_with(spans: list[dict[str, Any]], service: str) -> dict[str, Any]:
    def attr(key: str, value: Any) -> dict[str, Any]:
        if isinstance(value, bool):
            return {"key": key, "value": {"boolValue": value}}
        if isinstance(value, int):
            return {"key": key, "value": {"intValue": str(value)}}
        return {"key": key, "value": {"stringValue": str(value)}}

    out = []
    for span in spans:
        raw = {k: v for k, v in span.items() if k not in ("attrs", "new")}
        raw["attributes"] = [attr(k, v) for k, v in span["new"].items() if v is not None]
        out.append(raw)
    resource = {"attributes": [attr("service.name", service)]}
    return {"resourceSpans": [{"resource": resource, "scopeSpans": [{"spans": out}]}]}


def _chat(attrs: dict[str, Any], prefix: str) -> list[dict[str, Any]]:
    out = []
    for m in _messages(attrs, prefix):
        message: dict[str, Any] = {"role": m.get("message.role")}
        if m.get("message.content") is not None:
            message["content"] = m["message.content"]
        calls = [
            {
                "id": c.get("tool_call.id"),
                "type": "function",
                "function": {
                    "name": c.get("tool_call.function.name"),
                    "arguments": c.get("tool_call.function.arguments"),
                },
            }
            for c in _messages({k.removeprefix("message."): v for k, v in m.items()}, "tool_calls")
        ]
        if calls:
            message["tool_calls"] = calls
        if m.get("message.tool_call_id"):
            message["tool_call_id"] = m["message.tool_call_id"]
        out.append(message)
    return out


def langfuse_and_langsmith() -> None:
    spans = _spans()
    for producer in ("langfuse", "langsmith"):
        converted = []
        for span in spans:
            a = span["attrs"]
            kind = a["openinference.span.kind"]
            usage = {
                "input": a.get("llm.token_count.prompt"),
                "output": a.get("llm.token_count.completion"),
                "total": a.get("llm.token_count.total"),
            }
            if kind == "LLM":
                given: Any = json.dumps({"messages": _chat(a, "llm.input_messages")})
                made: Any = json.dumps({"messages": _chat(a, "llm.output_messages")})
            else:
                given, made = a.get("input.value"), a.get("output.value")
            if producer == "langfuse":
                new = {
                    "langfuse.observation.type": {
                        "LLM": "generation",
                        "TOOL": "tool",
                        "AGENT": "agent",
                    }[kind],
                    "langfuse.observation.input": given,
                    "langfuse.observation.output": made,
                    "langfuse.observation.model.name": a.get("llm.model_name"),
                    "langfuse.observation.usage_details": json.dumps(usage)
                    if kind == "LLM"
                    else None,
                }
            else:
                new = {
                    "langsmith.span.kind": kind.lower(),
                    "gen_ai.prompt": given,
                    "gen_ai.completion": made,
                    "gen_ai.system": "openai" if kind == "LLM" else None,
                    "gen_ai.request.model": a.get("llm.model_name"),
                    "gen_ai.usage.input_tokens": usage["input"],
                    "gen_ai.usage.output_tokens": usage["output"],
                }
            if kind == "TOOL" and producer == "langsmith":
                new["gen_ai.tool.name"] = a.get("tool.name")  # LangSmith's tool-run name
            renamed = {"name": a["tool.name"]} if kind == "TOOL" and producer == "langfuse" else {}
            converted.append({**span, **renamed, "new": new})  # Langfuse names a tool's span so
        export = _otlp_with(converted, f"rubriclab-fixture-{producer}")
        (OUT / f"{producer}.otlp.json").write_text(json.dumps(export, indent=1) + "\n")


if __name__ == "__main__":
    phoenix()
    langfuse_and_langsmith()
