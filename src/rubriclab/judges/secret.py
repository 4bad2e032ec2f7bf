"""An API key that cannot leak by accident: masked in repr/str/format, never pickled.

The key is only revealed where the Authorization header is built. Text that came back from
an endpoint passes through ``scrub`` before it is stored, because some providers echo the key
in their 401 messages.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Any

__all__ = ["SENSITIVE_HEADERS", "Secret", "protect_headers"]

#: Header names whose values are credentials (Azure's api-key, Gemini's x-goog-api-key...).
SENSITIVE_HEADERS = frozenset(
    {"authorization", "proxy-authorization", "api-key", "x-api-key", "x-goog-api-key", "cookie"}
)

_MASK = "***"


class Secret:
    """Holds an API key; pickles as a pointer to its environment variable, never as the value."""

    __slots__ = ("_env", "_value")
    _env: str | None
    _value: str | None

    def __init__(self, value: str | None, env: str | None = None) -> None:
        object.__setattr__(self, "_value", value or None)
        object.__setattr__(self, "_env", env)

    @classmethod
    def from_env(cls, env: str) -> Secret:
        return cls(os.environ.get(env), env)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("Secret is immutable")

    @property
    def env(self) -> str | None:
        """Name of the environment variable the key came from (safe to show)."""
        return self._env

    def __bool__(self) -> bool:
        return self._value is not None

    def reveal(self) -> str | None:
        """The key itself; call only to build the request header."""
        return self._value

    def __repr__(self) -> str:
        if self._value is None:
            return "Secret(unset)"
        return f"Secret({_MASK} from ${self._env})" if self._env else f"Secret({_MASK})"

    __str__ = __repr__

    def __format__(self, spec: str) -> str:
        return repr(self)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Secret) and other._value == self._value

    def __hash__(self) -> int:
        return hash((Secret, self._env))

    def __reduce__(self) -> tuple[Any, ...]:
        # A pickled judge re-reads its key from the same environment variable; an explicit
        # key is dropped on purpose (pass api_key= again after unpickling).
        if self._env:
            return (Secret.from_env, (self._env,))
        return (Secret, (None, None))

    def scrub(self, text: str) -> str:
        """Remove the key (and provider-style partial echoes of it) from ``text``."""
        key = self._value
        if not key or not text:
            return text
        text = text.replace(key, _MASK)
        if len(key) >= 12:
            # e.g. "Incorrect API key provided: sk-abc123********xyz9"
            text = re.sub(re.escape(key[:8]) + r"[\w*.\-]*", _MASK, text)
        return text


def protect_headers(headers: Mapping[str, str] | None) -> dict[str, str | Secret]:
    """Extra headers with credential values wrapped in ``Secret`` (names are lower-cased)."""
    out: dict[str, str | Secret] = {}
    for name, value in (headers or {}).items():
        if not isinstance(name, str) or not isinstance(value, str):
            raise TypeError(f"headers must map str to str; got {name!r}: {type(value).__name__}")
        key = name.lower()
        out[key] = Secret(value) if key in SENSITIVE_HEADERS else value
    return out
