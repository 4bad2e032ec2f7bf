"""Judge specs ("openai:gpt-4o-mini", "ollama:qwen2.5:7b", "mock", a base URL) -> endpoints.

Every way a spec can be wrong ends in one ``JudgeConfigError`` line that says what to set.
"""

from __future__ import annotations

import difflib
import os
import urllib.parse
from collections.abc import Collection, Iterable
from dataclasses import dataclass

from .base import JudgeConfigError
from .secret import Secret

__all__ = [
    "KEY_HOMES",
    "PROVIDERS",
    "Endpoint",
    "KeyDestinationWarning",
    "KeyHome",
    "check_url",
    "foreign_key_destination",
    "key_destination_error",
    "parse_spec",
]

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


# -- where a key may go -----------------------------------------------------------------------


@dataclass(frozen=True)
class KeyHome:
    """A provider whose keys are known by their variable: the hosts they belong to."""

    name: str
    envs: tuple[str, ...]
    hosts: tuple[str, ...]
    base_env: str | None = None
    """The variable that moves the provider's endpoint (the user's own setting, so its host
    is the provider's too)."""


#: Providers whose key variables are well known, and the (https) hosts their keys go to.
KEY_HOMES: tuple[KeyHome, ...] = (
    KeyHome("OpenAI", ("OPENAI_API_KEY",), ("api.openai.com",), "OPENAI_BASE_URL"),
    KeyHome(
        "Google Gemini",
        ("GEMINI_API_KEY", "GOOGLE_API_KEY"),
        ("generativelanguage.googleapis.com",),
    ),
    KeyHome("Anthropic", ("ANTHROPIC_API_KEY",), ("api.anthropic.com",)),
    KeyHome(
        "GitHub",
        ("GITHUB_TOKEN", "GH_TOKEN"),
        ("models.github.ai", "models.inference.ai.azure.com"),
    ),
    KeyHome("Mistral", ("MISTRAL_API_KEY",), ("api.mistral.ai",)),
    KeyHome("Groq", ("GROQ_API_KEY",), ("api.groq.com",)),
    KeyHome("Together", ("TOGETHER_API_KEY",), ("api.together.xyz", "api.together.ai")),
    KeyHome("OpenRouter", ("OPENROUTER_API_KEY",), ("openrouter.ai",)),
    KeyHome("DeepSeek", ("DEEPSEEK_API_KEY",), ("api.deepseek.com",)),
    KeyHome("Fireworks", ("FIREWORKS_API_KEY",), ("api.fireworks.ai",)),
    KeyHome("xAI", ("XAI_API_KEY",), ("api.x.ai",)),
    KeyHome("Cerebras", ("CEREBRAS_API_KEY",), ("api.cerebras.ai",)),
    KeyHome("Perplexity", ("PERPLEXITY_API_KEY",), ("api.perplexity.ai",)),
    KeyHome(
        "Hugging Face",
        ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN"),
        ("router.huggingface.co", "api-inference.huggingface.co"),
    ),
)


class KeyDestinationWarning(UserWarning):
    """Code sends a known provider's key to a host that is not that provider's."""


def _home_of(env: str) -> KeyHome | None:
    upper = env.upper()
    for home in KEY_HOMES:
        if upper in home.envs:
            return home
    return None


def _where(url: str) -> tuple[str, str, int | None]:
    """(scheme, host, port) of ``url``; the port is None when it is the scheme's default."""
    try:
        parts = urllib.parse.urlsplit(url)
        port = parts.port
    except ValueError:
        return ("", "", None)
    scheme = parts.scheme.lower()
    if port == {"https": 443, "http": 80}.get(scheme):
        port = None
    return scheme, (parts.hostname or "").lower().rstrip("."), port


def host_label(url: str) -> str:
    """``url``'s host as a user writes it for ``--allow-key-for`` (with a port if not default)."""
    _, host, port = _where(url)
    return host if port is None else f"{host}:{port}"


def _in_home(home: KeyHome, url: str) -> bool:
    scheme, host, port = _where(url)
    if scheme == "https" and port is None and host in home.hosts:
        return True
    moved = os.environ.get(home.base_env) if home.base_env else None
    return (
        moved is not None
        and bool(moved.strip())
        and _where(moved.strip())
        == (
            scheme,
            host,
            port,
        )
    )


def _allowed(url: str, allowed: Collection[str]) -> bool:
    """``url``'s host is one the user named: "host" (any port), "host:port", or a URL."""
    _, host, port = _where(url)
    for entry in allowed:
        text = entry.strip().lower()
        if "://" in text:
            _, want, want_port = _where(text)
            if want == host and (want_port == port):
                return True
            continue
        name, sep, number = text.rpartition(":")
        if sep and number.isdigit() and name and not name.endswith(":"):
            if name.strip("[]") == host and int(number) == (port or _default_port(url)):
                return True
        elif text.strip("[]").rstrip(".") == host:
            return True
    return False


def _default_port(url: str) -> int:
    return 80 if url.lower().startswith("http://") else 443


def key_destination_error(
    env: str, url: str, allowed: Collection[str] = (), flag: str = "--allow-key-for"
) -> str | None:
    """Why the key in ``$env`` may not be sent to ``url`` (one line naming the fix), or None.

    A key goes to its provider's hosts (``KEY_HOMES``; over https), or to a host the user
    named (``allowed``). A key no provider is known for goes only to a named host: a config
    file is someone else's, and must not choose where the user's tokens go.
    """
    if _allowed(url, allowed):
        return None
    home = _home_of(env)
    label = host_label(url) or url
    if home is not None:
        if _in_home(home, url):
            return None
        return (
            f"${env} is {home.name}'s key, and {label} is not {home.name}'s host "
            f"({', '.join(home.hosts)}), so it is not sent; if you trust this config and "
            f"that host, run again with {flag} {label}"
        )
    return (
        f"${env} would be sent to {label}, a host no provider's key is known to belong to, "
        f"so it is not sent; if you trust this config and that host, run again with "
        f"{flag} {label}"
    )


_warned: set[tuple[str, str]] = set()


def foreign_key_destination(
    values: Iterable[str], url: str | None, allowed: Collection[str] = ()
) -> str | None:
    """The first known provider variable whose value is among ``values`` but whose provider
    does not live at ``url`` (once per variable and host in a process), else None."""
    if not url or _allowed(url, allowed):
        return None
    sent = {v for v in values if v}
    if not sent:
        return None
    for home in KEY_HOMES:
        for env in home.envs:
            value = os.environ.get(env)
            if value and value in sent and not _in_home(home, url):
                said = (env, host_label(url))
                if said in _warned:
                    return None
                _warned.add(said)
                return (
                    f"rubriclab: this judge sends ${env} ({home.name}'s key) to "
                    f"{host_label(url)}, which is not {home.name}'s host; pass "
                    f"allow_key_for=[{host_label(url)!r}] if that is meant"
                )
    return None
