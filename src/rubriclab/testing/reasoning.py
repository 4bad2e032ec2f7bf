"""What an OpenAI reasoning model (o1, o3, o4-mini, gpt-5 ...) answers a body it does not take.

The fake servers use it to act like one: ``max_tokens`` and a temperature other than the
default are refused with HTTP 400 and OpenAI's own error bodies, word for word, so a client's
handling is tested against what the real API sends.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["REASONING_STYLES", "both_limits_refusal", "reasoning_refusal"]

REASONING_STYLES = ("o1", "o3-mini")
"""How the temperature is refused: o1 and gpt-5 take only the default value (1), o3-mini takes
no temperature field at all."""


def reasoning_refusal(body: Mapping[str, Any], style: str = "o1") -> dict[str, Any] | None:
    """The 400 error body a reasoning model sends for ``body``, or None when it takes it."""
    if style not in REASONING_STYLES:
        raise ValueError(f"style must be one of {REASONING_STYLES}, got {style!r}")
    if "max_tokens" in body:
        return _error(
            "Unsupported parameter: 'max_tokens' is not supported with this model. "
            "Use 'max_completion_tokens' instead.",
            "max_tokens",
            "unsupported_parameter",
        )
    if "temperature" not in body:
        return None
    value = body["temperature"]
    if style == "o3-mini":
        return _error(
            "Unsupported parameter: 'temperature' is not supported with this model.",
            "temperature",
            "unsupported_parameter",
        )
    if value == 1:
        return None
    return _error(
        f"Unsupported value: 'temperature' does not support {value} with this model. "
        "Only the default (1) value is supported.",
        "temperature",
        "unsupported_value",
    )


def both_limits_refusal(body: Mapping[str, Any]) -> dict[str, Any] | None:
    """The 400 error body OpenAI sends (any model) for a body naming both token limits."""
    if "max_tokens" not in body or "max_completion_tokens" not in body:
        return None
    return _error(
        "Setting 'max_tokens' and 'max_completion_tokens' at the same time is not supported.",
        "max_tokens",
        "invalid_parameter_combination",
    )


def _error(message: str, param: str, code: str) -> dict[str, Any]:
    return {
        "error": {
            "message": message,
            "type": "invalid_request_error",
            "param": param,
            "code": code,
        }
    }
