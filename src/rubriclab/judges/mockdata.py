"""Deterministic instances of a JSON schema, so the mock judge answers any structured prompt.

The mock does not know our templates: it reads the ``response_format`` schema a prompt sends
and fills it in. Strings are labelled "[mock judge]" so mock output can never pass for a real
model's. "Evidence"-like fields get neutral canned text that says no passage was quoted:
fragments of the prompt there read as if the mock had found them in the answer (they were
often the judge template's own instructions).
"""

from __future__ import annotations

import hashlib
import random
import re
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["LABEL", "SchemaFiller", "message_text", "stable_hash", "stable_unit", "word_count"]

LABEL = "[mock judge]"

_QUOTE_NAMES = ("evidence", "quote", "excerpt", "citation", "span")
_ID_NAMES = ("criterion", "name", "id", "key", "label", "item")
_WORDS = (
    "the response covers the main point",
    "the answer is partly supported",
    "key details are stated clearly",
    "one requirement is not addressed",
    "the reasoning follows from the input",
    "the wording is concise and relevant",
)
_EVIDENCE = (
    "canned evidence: a real judge quotes the passage it relied on here",
    "canned evidence: no passage was read or quoted (offline mock)",
    "canned evidence: this stands where the quoted passage would be",
)
_WORD_RE = re.compile(r"\S+")
_MAX_DEPTH = 12


def message_text(messages: Sequence[Mapping[str, Any]], role: str | None = None) -> str:
    """All text content of the messages (optionally of one role), content parts included."""
    chunks: list[str] = []
    for message in messages:
        if role is not None and message.get("role") != role:
            continue
        content = message.get("content")
        if isinstance(content, str):
            chunks.append(content)
        elif isinstance(content, (list, tuple)):
            for part in content:
                if isinstance(part, Mapping) and isinstance(part.get("text"), str):
                    chunks.append(part["text"])
    return "\n".join(chunks)


def word_count(text: str) -> int:
    return len(_WORD_RE.findall(text))


def stable_hash(*parts: str) -> bytes:
    """SHA-256 of the texts joined by a unit separator: the mock's answers are a function of
    their input, the same in every process (unlike ``hash()``)."""
    # surrogatepass: a lone surrogate in a response is hashed, not an error
    return hashlib.sha256("\x1f".join(parts).encode("utf-8", "surrogatepass")).digest()


def stable_unit(*parts: str) -> float:
    """A stable number in [0, 1) for the given texts (a verdict, a level, a lean)."""
    return int.from_bytes(stable_hash(*parts)[:8], "big") / 2**64


class SchemaFiller:
    """Fill one JSON schema with values drawn from a seeded RNG and the prompt's own words."""

    def __init__(self, root: Mapping[str, Any], rng: random.Random, source_text: str) -> None:
        self.root = root
        self.rng = rng
        self.words = _WORD_RE.findall(source_text)

    def fill(self) -> Any:
        return self.value(self.root, "value", None, 0)

    # -- schema plumbing -------------------------------------------------------------------
    def resolve(self, schema: Mapping[str, Any], depth: int = 0) -> Mapping[str, Any]:
        """Inline local ``$ref`` and ``allOf`` so the generator sees one flat schema."""
        if depth > _MAX_DEPTH:
            return {}
        out: dict[str, Any] = dict(schema)
        ref = out.pop("$ref", None)
        if isinstance(ref, str):
            out = {**self._pointer(ref), **out}
            out = dict(self.resolve(out, depth + 1))
        parts = out.pop("allOf", None)
        if isinstance(parts, list):
            for part in parts:
                if isinstance(part, Mapping):
                    merged = self.resolve(part, depth + 1)
                    props = {**merged.get("properties", {}), **out.get("properties", {})}
                    required = [*merged.get("required", []), *out.get("required", [])]
                    out = {**merged, **out}
                    if props:
                        out["properties"] = props
                    if required:
                        out["required"] = list(dict.fromkeys(required))
        return out

    def _pointer(self, ref: str) -> Mapping[str, Any]:
        if not ref.startswith("#"):
            return {}
        node: Any = self.root
        for token in ref.lstrip("#").split("/"):
            if not token:
                continue
            token = token.replace("~1", "/").replace("~0", "~")
            if not isinstance(node, Mapping) or token not in node:
                return {}
            node = node[token]
        return node if isinstance(node, Mapping) else {}

    @staticmethod
    def _type(schema: Mapping[str, Any]) -> str:
        kind = schema.get("type")
        if isinstance(kind, list):
            non_null = [k for k in kind if k != "null"]
            kind = non_null[0] if non_null else "null"
        if isinstance(kind, str):
            return kind
        if "properties" in schema:
            return "object"
        if "items" in schema or "prefixItems" in schema:
            return "array"
        return "string"

    # -- values ----------------------------------------------------------------------------
    def value(
        self,
        schema: Mapping[str, Any],
        name: str,
        index: int | None,
        depth: int,
        forced: Mapping[str, Any] | None = None,
    ) -> Any:
        schema = self.resolve(schema)
        if depth > _MAX_DEPTH:
            return None
        for key in ("anyOf", "oneOf"):
            options = schema.get(key)
            if isinstance(options, list) and options:
                usable = [o for o in options if isinstance(o, Mapping) and o.get("type") != "null"]
                pick = usable[0] if usable else options[0]
                rest = {k: v for k, v in schema.items() if k != key}
                return self.value({**rest, **pick}, name, index, depth + 1, forced)
        if "const" in schema:
            return schema["const"]
        enum = schema.get("enum")
        if isinstance(enum, list) and enum:
            return self.rng.choice(enum)
        kind = self._type(schema)
        if kind == "object":
            return self._object(schema, depth, forced)
        if kind == "array":
            return self._array(schema, name, depth)
        if kind == "integer":
            return self._integer(schema)
        if kind == "number":
            return self._number(schema)
        if kind == "boolean":
            return self.rng.random() < 0.5
        if kind == "null":
            return None
        return self._string(schema, name, index)

    def _object(
        self, schema: Mapping[str, Any], depth: int, forced: Mapping[str, Any] | None
    ) -> dict[str, Any]:
        props = schema.get("properties")
        if not isinstance(props, Mapping):
            return {}
        required = schema.get("required")
        names = [n for n in props if n in required] if isinstance(required, list) else list(props)
        out: dict[str, Any] = {}
        for prop in names:
            if forced and prop in forced:
                out[prop] = forced[prop]
                continue
            sub = props[prop] if isinstance(props[prop], Mapping) else {}
            out[prop] = self.value(sub, prop, None, depth + 1)
        return out

    def _array(self, schema: Mapping[str, Any], name: str, depth: int) -> list[Any]:
        lo = _int(schema.get("minItems"), 0)
        hi_given = _int(schema.get("maxItems"), -1)
        prefix = schema.get("prefixItems")
        if isinstance(prefix, list) and prefix:
            return [self.value(s, name, i, depth + 1) for i, s in enumerate(prefix)]
        items = schema.get("items")
        item = self.resolve(items) if isinstance(items, Mapping) else {}
        # An item with an enum field (e.g. a criterion name): one item per enum value, in
        # order, so "score every criterion" prompts get every criterion exactly once.
        cycle = self._enum_field(item)
        if cycle is not None:
            field, values = cycle
            count = _clamp(len(values), lo, hi_given)
            return [
                self.value(item, name, i, depth + 1, {field: values[i % len(values)]})
                for i in range(count)
            ]
        enum = item.get("enum")
        if isinstance(enum, list) and enum and schema.get("uniqueItems"):
            count = min(_clamp(min(3, len(enum)), lo, hi_given), len(enum))
            return self.rng.sample(list(enum), count)
        count = _clamp(3, lo, hi_given)
        return [self.value(item, name, i, depth + 1) for i in range(count)]

    def _enum_field(self, item: Mapping[str, Any]) -> tuple[str, list[Any]] | None:
        """The item field that names what the item is about (criterion, name, id...), if any."""
        props = item.get("properties")
        if not isinstance(props, Mapping):
            return None
        required = item.get("required")
        found: dict[str, list[Any]] = {}
        for prop, sub in props.items():
            if isinstance(required, list) and prop not in required:
                continue
            enum = self.resolve(sub).get("enum") if isinstance(sub, Mapping) else None
            if isinstance(enum, list) and len(enum) > 1 and all(isinstance(e, str) for e in enum):
                found[prop] = enum
        if not found:
            return None
        for prop in found:
            if any(k in prop.lower() for k in _ID_NAMES):
                return prop, found[prop]
        prop = max(found, key=lambda p: len(found[p]))
        return prop, found[prop]

    def _integer(self, schema: Mapping[str, Any]) -> int:
        lo_raw = schema.get("minimum")
        if lo_raw is None and isinstance(schema.get("exclusiveMinimum"), (int, float)):
            lo_raw = int(schema["exclusiveMinimum"]) + 1
        hi_raw = schema.get("maximum")
        if hi_raw is None and isinstance(schema.get("exclusiveMaximum"), (int, float)):
            hi_raw = int(schema["exclusiveMaximum"]) - 1
        lo = int(lo_raw) if isinstance(lo_raw, (int, float)) else None
        hi = int(hi_raw) if isinstance(hi_raw, (int, float)) else None
        if lo is None:
            lo = 0 if hi is None or hi >= 0 else hi - 10
        if hi is None:
            hi = lo + 10
        return self.rng.randint(lo, max(lo, hi))

    def _number(self, schema: Mapping[str, Any]) -> float:
        lo = schema.get("minimum", schema.get("exclusiveMinimum"))
        hi = schema.get("maximum", schema.get("exclusiveMaximum"))
        low = float(lo) if isinstance(lo, (int, float)) else 0.0
        high = float(hi) if isinstance(hi, (int, float)) else low + 1.0
        value = round(self.rng.uniform(low, max(low, high)), 2)
        return min(max(value, low), max(low, high))

    def _string(self, schema: Mapping[str, Any], name: str, index: int | None) -> str:
        fmt = schema.get("format")
        if fmt == "date-time":
            return "2024-01-01T00:00:00Z"
        if fmt == "date":
            return "2024-01-01"
        if fmt in ("uri", "url"):
            return "https://example.invalid/mock-judge"
        if fmt == "email":
            return "mock-judge@example.invalid"
        description = str(schema.get("description", "")).lower()
        label = name.replace("_", " ").strip() or "value"
        if any(q in name.lower() for q in _QUOTE_NAMES) or "quote" in description:
            text = f"{LABEL} {self._evidence()}"
        else:
            suffix = f" {index + 1}" if index is not None else ""
            text = f"{LABEL} {label}{suffix}: {self.rng.choice(_WORDS)}"
        lo = _int(schema.get("minLength"), 0)
        hi = _int(schema.get("maxLength"), 0)
        if len(text) < lo:
            text += "." * (lo - len(text))
        if hi and len(text) > hi:
            text = text[:hi]
        return text

    def _evidence(self) -> str:
        """One of the canned evidence texts. The draw is the one a quote of the prompt used
        to take, so every other value of an answer (verdicts, levels) stays as it was."""
        if not self.words:
            return _EVIDENCE[0]
        size = min(8, len(self.words))
        start = self.rng.randrange(0, len(self.words) - size + 1)
        return _EVIDENCE[start % len(_EVIDENCE)]


def _int(value: object, default: int) -> int:
    return (
        int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else default
    )


def _clamp(value: int, lo: int, hi: int) -> int:
    """``value`` within [lo, hi]; ``hi`` < 0 means no upper bound."""
    value = max(value, lo)
    return min(value, max(hi, lo)) if hi >= 0 else value
