"""Judge specs ("openai:gpt-4o-mini", "ollama:qwen2.5:7b", "mock", a base URL) -> endpoints.

Every way a spec can be wrong ends in one ``JudgeConfigError`` line that says what to set.
"""

from __future__ import annotations

import difflib
import os
import urllib.parse
from dataclasses import dataclass

from .base import JudgeConfigError
from .secret import Secret

__all__ = ["PROVIDERS", "Endpoint", "check_url", "parse_spec"]

#: Query parameters that carry credentials; a URL holding one is refused.
CREDENTIAL_PARAMS = frozenset(
    {
        "key",
        "api-key",
        "api_key",
        "apikey",
        "token",
        "access_token",
        "access-token",
        "auth",
        "auth_token",
        "password",
        "secret",
        "sig",
        "signature",
        "code",
        "subscription-key",
        "subscription_key",
    }
)


def check_url(url: str, where: str = "the judge URL") -> None:
    """Refuse a base URL that carries a credential: URLs are shown in logs, results and
    reports, so a key in one leaks; it also breaks every call. Say where the key goes."""
    try:
        parts = urllib.parse.urlsplit(url)
    except ValueError as exc:
        raise JudgeConfigError(f"{where} is not a valid URL: {exc}") from None
    if parts.username is not None or parts.password is not None or "@" in parts.netloc:
        raise JudgeConfigError(
            f"{where} carries credentials (user:key@host); remove them and pass the key as "
            "api_key=... (sent as 'Authorization: Bearer ...') or as a header, e.g. "
            "headers={'api-key': key}"
        )
    for name, _ in urllib.parse.parse_qsl(parts.query, keep_blank_values=True):
        if name.lower().replace(" ", "") in CREDENTIAL_PARAMS or name.lower().endswith(
            ("key", "token", "secret", "password")
        ):
            raise JudgeConfigError(
                f"{where} carries a credential in its query (?{name}=...); remove it and pass "
                f"the key as api_key=... or as a header, e.g. headers={{'{name}': key}}"
            )


@dataclass(frozen=True)
class _Provider:
    base_url: str
    key_env: str | None
    base_env: str | None = None  # env var that overrides the base URL
    local: bool = False


PROVIDERS: dict[str, _Provider] = {
    "openai": _Provider("https://api.openai.com/v1", "OPENAI_API_KEY", "OPENAI_BASE_URL"),
    "gemini": _Provider(
        "https://generativelanguage.googleapis.com/v1beta/openai", "GEMINI_API_KEY"
    ),
    "ollama": _Provider("http://127.0.0.1:11434/v1", None, "OLLAMA_BASE_URL", local=True),
}

_USAGE = (
    "use 'openai:MODEL', 'gemini:MODEL', 'ollama:MODEL', 'mock', or a base URL such as "
    "'http://127.0.0.1:8000/v1' with model='...'"
)


@dataclass(frozen=True)
class Endpoint:
    """Where calls go. ``provider`` is 'openai', 'gemini', 'ollama', 'url' or 'mock'."""

    provider: str
    model: str
    base_url: str | None
    key: Secret
    local: bool = False

    @property
    def is_mock(self) -> bool:
        return self.provider == "mock"


def parse_spec(spec: str, model: str | None = None, api_key: str | None = None) -> Endpoint:
    """Resolve a spec and optional overrides; raise one clear line when something is missing."""
    if not isinstance(spec, str) or not spec.strip():
        raise JudgeConfigError(f"judge spec must be a non-empty string: {_USAGE}")
    spec = spec.strip()
    explicit = Secret(api_key) if api_key else None

    if spec == "mock" or spec.startswith("mock:"):
        name = spec.partition(":")[2] or model or "mock"
        return Endpoint("mock", name, None, Secret(None), local=True)

    if spec.startswith(("http://", "https://")):
        check_url(spec)
        if not model:
            raise JudgeConfigError(
                f"Judge({spec!r}) needs model='...': the endpoint does not say which model to use"
            )
        return Endpoint("url", model, spec.rstrip("/"), explicit or Secret(None))

    provider, _, rest = spec.partition(":")
    if provider not in PROVIDERS:
        close = difflib.get_close_matches(provider.lower(), [*PROVIDERS, "mock"], n=1, cutoff=0.6)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise JudgeConfigError(f"unknown judge spec {spec!r}{hint}: {_USAGE}")
    model_name = rest or model
    if not model_name:
        raise JudgeConfigError(f"judge spec {spec!r} names no model: write '{provider}:MODEL'")
    info = PROVIDERS[provider]
    base: str = (os.environ.get(info.base_env) if info.base_env else None) or info.base_url
    check_url(base, f"${info.base_env}" if base != info.base_url else "the base URL")
    if info.key_env is None:
        key = explicit or Secret(None)
    else:
        key = explicit or Secret.from_env(info.key_env)
        if not key:
            raise JudgeConfigError(
                f"{info.key_env} is not set: export {info.key_env}=... (or pass api_key=...) "
                f"to use {provider}:{model_name}, or use Judge('mock') to run offline"
            )
    return Endpoint(provider, model_name, base.rstrip("/"), key, local=info.local)
