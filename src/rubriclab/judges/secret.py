"""An API key that cannot leak by accident: masked in repr/str/format, never pickled.

The key is only revealed where the Authorization header is built. Text that came back from
an endpoint passes through ``scrub`` before it is stored, because some providers (and many
gateways) echo the key, or every request header, in their error messages.

Every header value a user passes is treated the same way: a credential, unless it is marked
``Public("...")``. Header names say nothing reliable (``Ocp-Apim-Subscription-Key``,
``X-Portkey-Api-Key``, ``X-My-Token``...), so the safe default is the only default.
"""

from __future__ import annotations

import base64
import binascii
import json
import os
import re
import urllib.parse
from collections.abc import Mapping
from typing import Any

__all__ = ["SENSITIVE_HEADERS", "Public", "Secret", "protect_headers"]

#: Header names whose values are credentials (Azure's api-key, Gemini's x-goog-api-key...).
SENSITIVE_HEADERS = frozenset(
    {"authorization", "proxy-authorization", "api-key", "x-api-key", "x-goog-api-key", "cookie"}
)

_MASK = "***"
_MIN_SCRUB = 4  # shorter values are no credential, and scrubbing them would mangle text


class Public(str):
    """A header value that is not a credential and may be shown (``Public("my-app")``).

    ``Judge(..., headers={"X-Title": Public("grading run 7"), "X-Key": key})``: the title
    is sent and may appear in errors; the key is held as a ``Secret``.
    """

    __slots__ = ()

    def __repr__(self) -> str:
        return f"Public({str.__repr__(self)})"


class Secret:
    """Holds an API key; pickles as a pointer to its environment variable, never as the value."""

    __slots__ = ("_bases", "_encoded", "_env", "_forms", "_value")
    _env: str | None
    _value: str | None
    _forms: tuple[str, ...]
    _encoded: re.Pattern[str] | None
    _bases: tuple[str, ...]

    def __init__(self, value: str | None, env: str | None = None) -> None:
        object.__setattr__(self, "_value", value or None)
        object.__setattr__(self, "_env", env)
        forms = _forms(value) if value and len(value) >= _MIN_SCRUB else []
        object.__setattr__(self, "_forms", tuple(forms))  # worked out once, used per reply
        bases = _bases(value) if value and len(value) >= _MIN_SCRUB else []
        object.__setattr__(self, "_bases", tuple(bases))
        object.__setattr__(self, "_encoded", _encoded_pattern(bases))

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
        """Remove the key from ``text``: as is, in the forms an echo may take it (JSON-escaped,
        URL-encoded, base64, a "Bearer"/"Basic" credential's token and a Basic credential's
        decoded "user:key"), and provider-style partial echoes of it."""
        key = self._value
        if not key or not text or len(key) < _MIN_SCRUB:
            return text
        for form in self._forms:
            if form in text:
                text = text.replace(form, _MASK)
        if self._encoded is not None and _escapes(text) and self._hidden(text):
            # each character may be escaped on its own: "\u0073k-...", "\/", "%2f"
            text = self._encoded.sub(_MASK, text)
        if len(key) >= 12 and key[:8] in text:
            # e.g. "Incorrect API key provided: sk-abc123********xyz9"
            text = re.sub(re.escape(key[:8]) + r"[\w*.\-]*", _MASK, text)
        return text

    def _hidden(self, text: str) -> bool:
        """Whether ``text`` may hold the key with some characters escaped or encoded: its
        escapes decoded, does a base form show? (A cheap probe: the full pattern tries every
        position of the text, so it runs only when this says yes.)"""
        probe, count = _ESCAPE.subn(_unescape, text)
        if not count:
            return False
        return any(form in probe for form in self._bases)


def _escapes(text: str) -> bool:
    """Whether ``text`` holds a JSON escape or a percent-encoding a key's character could be
    written as (plain ``in`` tests first: this runs on every answer)."""
    if "\\" in text and ("\\u" in text or "\\/" in text or '\\"' in text or "\\\\" in text):
        return True
    return "%" in text and _PERCENT.search(text) is not None


_PERCENT = re.compile(r"%[0-9a-fA-F]{2}")
_ESCAPE = re.compile(r"\\u[0-9a-fA-F]{4}|\\[/\"\\]|%[0-9a-fA-F]{2}")


def _unescape(match: re.Match[str]) -> str:
    token = match[0]
    if token[0] == "%":
        return chr(int(token[1:], 16))
    if token[1] == "u":
        return chr(int(token[2:], 16))
    return token[1]


def _forms(value: str) -> list[str]:
    """``value`` and the encodings of it an echoed header or URL may show, longest first."""
    forms = {value}
    scheme, _, token = value.partition(" ")
    if token and scheme.lower() in ("bearer", "basic", "token", "apikey"):
        forms.add(token.strip())
        if scheme.lower() == "basic":
            try:
                decoded = base64.b64decode(token.strip(), validate=True).decode("utf-8")
            except (binascii.Error, UnicodeDecodeError):
                decoded = ""
            if decoded:
                forms.add(decoded)
                password = decoded.partition(":")[2]
                if len(password) >= _MIN_SCRUB:
                    forms.add(password)
    for form in list(forms):
        forms.add(json.dumps(form)[1:-1])  # as it sits inside a JSON string
        forms.add(json.dumps(form, ensure_ascii=False)[1:-1])
        forms.add(urllib.parse.quote(form, safe=""))
        forms.add(urllib.parse.quote_plus(form))
        forms.add(base64.b64encode(form.encode()).decode())
    return sorted((f for f in forms if len(f) >= _MIN_SCRUB), key=len, reverse=True)


def _bases(value: str) -> list[str]:
    """``value``, the token of a "Bearer ..."-style value and a Basic credential's decoded
    "user:key" and key: what an echo may spell character by character."""
    bases = {value}
    scheme, _, token = value.partition(" ")
    if token and scheme.lower() in ("bearer", "basic", "token", "apikey"):
        bases.add(token.strip())
        if scheme.lower() == "basic":
            try:
                decoded = base64.b64decode(token.strip(), validate=True).decode("utf-8")
            except (binascii.Error, UnicodeDecodeError):
                decoded = ""
            bases.update((decoded, decoded.partition(":")[2]) if decoded else ())
    return sorted((b for b in bases if len(b) >= _MIN_SCRUB), key=len, reverse=True)


def _encoded_pattern(bases: list[str]) -> re.Pattern[str] | None:
    """A pattern for each base form with any of its characters written as a JSON escape
    (``\\uXXXX``, ``\\/``, ``\\"``, ``\\\\``) or percent-encoded in either case: the forms
    ``_forms`` cannot list, as each character may be spelled its own way."""
    if not bases:
        return None
    return re.compile("|".join("".join(_char_forms(c) for c in b) for b in bases))


def _hex(text: str) -> str:
    """``text`` (hex digits) matching either case."""
    return "".join(f"[{c.lower()}{c.upper()}]" if c.isalpha() else c for c in text)


def _char_forms(char: str) -> str:
    code = ord(char)
    forms = [re.escape(char)]
    if code < 0x10000:
        forms.append(r"\\u" + _hex(f"{code:04x}"))
    if char in '/"\\':
        forms.append(re.escape("\\" + char))
    forms.append("".join("%" + _hex(f"{b:02x}") for b in char.encode("utf-8")))
    return "(?:" + "|".join(forms) + ")"


def protect_headers(headers: Mapping[str, str | Secret] | None) -> dict[str, str | Secret]:
    """Extra headers, every value held as a ``Secret`` unless marked ``Public`` (names are
    lower-cased). A credential header (``SENSITIVE_HEADERS``) cannot be marked public."""
    out: dict[str, str | Secret] = {}
    for name, value in (headers or {}).items():
        if not isinstance(name, str) or not isinstance(value, (str, Secret)):
            raise TypeError(f"headers must map str to str; got {name!r}: {type(value).__name__}")
        key = name.lower()
        if isinstance(value, Secret):
            out[key] = value
        elif isinstance(value, Public) and key not in SENSITIVE_HEADERS:
            out[key] = str(value)
        else:
            out[key] = Secret(str(value))
    return out
