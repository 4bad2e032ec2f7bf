"""``Judge``: the one object notebooks hold. Settings in, replies out; the engine does the work.

A judge never raises for a failed call (the reply carries the error); it raises only for bad
input or a configuration it cannot use, with one line that says what to set.
"""

from __future__ import annotations

import os
import threading
import warnings
from collections.abc import Callable, Collection, Iterable, Mapping, Sized
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from .backend import Backend
from .base import JudgeConfigError, Messages, Reply, Request, RequestLike, coerce_request
from .cache import CacheArg, ResponseCache, open_cache
from .dialect import COMPLETION_LIMIT, PLAIN, TOKEN_LIMIT, Dialect
from .engine import Engine, RetryPolicy, RunStats
from .mock import MockBackend
from .pricing import PricesArg, resolve_prices
from .secret import Secret, protect_headers
from .specs import Endpoint, KeyDestinationWarning, foreign_key_destination, parse_spec
from .sync import run_sync

if TYPE_CHECKING:
    from .batch import BatchRunner

__all__ = ["Judge", "get_judge", "set_judge"]


class Judge:
    """A judge model behind an OpenAI-compatible endpoint, or the offline mock.

    ``Judge("openai:gpt-4o-mini")``, ``Judge("gemini:gemini-2.0-flash")``,
    ``Judge("ollama:qwen2.5:7b")``, ``Judge("http://127.0.0.1:8000/v1", model="m")``,
    ``Judge("mock")``. ``cache``: None keeps answers in memory for this judge (an interrupted
    cell resumes on re-run), True uses the default cache file, a path uses that file, False
    turns caching off. ``headers``: extra request headers; every value is kept as a secret
    (sent, never shown, scrubbed from anything kept) unless wrapped in ``Public("...")``.
    ``batch=True`` sends ``map``/``amap`` runs (so ``evaluate``) through the provider's batch
    API (``/v1/files`` + ``/v1/batches``: half price, no rate limits, answers within the
    completion window); job ids go to the cache, so a restarted run re-attaches.
    OpenAI's reasoning models (o1, o3, o4-mini, gpt-5 ...) are sent ``max_completion_tokens``
    and no temperature; an endpoint that refuses either with a 400 is adapted to once
    (``judges.dialect``). A known provider's key (``$OPENAI_API_KEY``'s value, ...) passed
    to another host is sent, with one ``KeyDestinationWarning``; ``allow_key_for=["host"]``
    says it is meant.
    """

    def __init__(
        self,
        spec: str,
        model: str | None = None,
        *,
        api_key: str | None = None,
        temperature: float | None = 0.0,
        seed: int | None = None,
        max_tokens: int | None = None,
        max_concurrency: int = 16,
        timeout: float = 60.0,
        max_retries: int = 4,
        cache: CacheArg = None,
        headers: Mapping[str, str] | None = None,
        prices: PricesArg = None,
        params: Mapping[str, Any] | None = None,
        transport: str = "auto",
        backoff_base: float = 0.5,
        backoff_cap: float = 30.0,
        retry_after_cap: float = 60.0,
        batch: bool = False,
        batch_poll_interval: float = 5.0,
        allow_key_for: Collection[str] = (),
    ) -> None:
        endpoint = parse_spec(spec, model, api_key)
        config: dict[str, Any] = {
            "spec": spec,
            "temperature": temperature,
            "seed": seed,
            "max_tokens": max_tokens,
            "max_concurrency": max_concurrency,
            "timeout": timeout,
            "max_retries": max_retries,
            "headers": protect_headers(headers),  # values held as Secret unless Public
            "prices": prices,
            "params": dict(params or {}),
            "transport": transport,
            "backoff_base": backoff_base,
            "backoff_cap": backoff_cap,
            "retry_after_cap": retry_after_cap,
            "batch": batch,
            "batch_poll_interval": batch_poll_interval,
        }
        _check_config(config)
        _warn_foreign_key(endpoint, config["headers"], allow_key_for)
        self._build(endpoint, config, open_cache(cache))

    def _build(
        self, endpoint: Endpoint, config: dict[str, Any], cache: ResponseCache | None
    ) -> None:
        self._endpoint = endpoint
        self._config = config
        self.spec: str = config["spec"]
        self.model: str = endpoint.model
        self.provider: str = endpoint.provider
        self.base_url: str | None = endpoint.base_url
        self.temperature: float | None = config["temperature"]
        self.seed: int | None = config["seed"]
        self.max_tokens: int | None = config["max_tokens"]
        self.max_concurrency: int = config["max_concurrency"]
        self.timeout: float = config["timeout"]
        self.max_retries: int = config["max_retries"]
        self.cache: ResponseCache | None = cache
        backend: Backend
        if endpoint.is_mock:
            backend = MockBackend(endpoint.model)
        else:
            from .openai import OpenAIBackend  # httpx loads only when a real judge is built

            backend = OpenAIBackend(
                endpoint,
                temperature=self.temperature,
                seed=self.seed,
                max_tokens=self.max_tokens,
                params=config["params"],
                headers=config["headers"],
                timeout=self.timeout,
                max_concurrency=self.max_concurrency,
                transport=config["transport"],
            )
        self._backend = backend
        self.batch: bool = bool(config.get("batch"))
        settings = {
            "temperature": self.temperature,
            "seed": self.seed,
            "max_tokens": self.max_tokens,
            **config["params"],
        }
        self._engine = Engine(
            backend,
            model=endpoint.model,
            endpoint_id=endpoint.base_url or endpoint.provider,
            max_concurrency=self.max_concurrency,
            retry=RetryPolicy(
                config["max_retries"],
                config["backoff_base"],
                config["backoff_cap"],
                config["retry_after_cap"],
            ),
            cache=cache,
            settings=settings,
            prices=resolve_prices(config["prices"], endpoint.model),
            local=endpoint.local,
        )
        self._batcher = _batcher(self._engine, backend, config, cache) if self.batch else None

    # -- what it is ----------------------------------------------------------------------
    @property
    def is_mock(self) -> bool:
        return self._backend.is_mock

    @property
    def transport(self) -> str:
        """'httpx' or 'aiohttp' for HTTP judges, 'mock' for the mock."""
        return str(getattr(self._backend, "transport", "mock"))

    @property
    def batcher(self) -> BatchRunner | None:
        """The batch-API runner of a ``batch=True`` judge (its ``options`` hold the limits and
        poll timing), else None."""
        return self._batcher

    @property
    def dialect(self) -> Dialect:
        """How this judge's bodies are spelled for its model: the output-token limit's field
        and whether a temperature is sent (OpenAI's reasoning models take neither
        ``max_tokens`` nor a temperature; other endpoints are adapted to on their first 400)."""
        return getattr(self._backend, "dialect", PLAIN)

    @property
    def token_limit_field(self) -> str:
        """The field this judge's output-token limit goes out as: max_completion_tokens for a
        model that takes only that, or when ``params`` set it (OpenAI refuses a body naming
        both), else max_tokens. A re-ask that raises the limit uses this field."""
        if self._config["params"].get(COMPLETION_LIMIT) is not None:
            return COMPLETION_LIMIT
        return self.dialect.limit

    @property
    def token_limit(self) -> int | None:
        """The output-token limit this judge sends: ``max_tokens=``, or one set in ``params``
        as max_tokens or max_completion_tokens (None: the endpoint's own)."""
        params = self._config["params"]
        for name in (COMPLETION_LIMIT, TOKEN_LIMIT):
            value = params.get(name)
            if isinstance(value, int) and not isinstance(value, bool):
                return value
        return self.max_tokens

    @property
    def last_run(self) -> RunStats:
        """Calls, cache hits, errors, tokens, cost and wall time of the latest run."""
        return self._engine.last_run

    @property
    def calls_made(self) -> int:
        """Calls the endpoint answered (not the cache) since this judge was made, counted as
        each ends, so a run's progress can read it mid-run (``last_run`` is set at the end)."""
        return self._engine.calls_made

    def describe(self) -> str:
        """One line for logs and result metadata; never contains the key."""
        dialect = self.dialect
        if not dialect.temperature:
            t = "not sent (the model takes only its default)"
        else:
            t = "default" if self.temperature is None else f"{self.temperature:g}"
        limit = "" if dialect.limit == TOKEN_LIMIT else f", token limit sent as {dialect.limit}"
        cache = self.cache.describe() if self.cache is not None else "no cache"
        batch = "; runs through the batch API" if self.batch else ""
        return (
            f"{self._backend.describe()}; temperature {t}{limit}, concurrency "
            f"{self.max_concurrency}, timeout {self.timeout:g}s, retries {self.max_retries}, "
            f"{cache}{batch}"
        )

    def __repr__(self) -> str:
        model = "" if self.is_mock or self.spec.endswith(self.model) else f", model={self.model!r}"
        return f"Judge({self.spec!r}{model})"

    def with_options(self, **changes: Any) -> Judge:
        """A new judge like this one with some settings changed (``model``, ``temperature``,
        ``timeout``, ``max_concurrency``, ...). It keeps the endpoint, key and cache, so a
        metric can set its own call settings without the key being handled again."""
        model = changes.pop("model", None)
        unknown = sorted(k for k in changes if k not in self._config or k == "spec")
        if unknown:
            settable = ", ".join(["model", *sorted(k for k in self._config if k != "spec")])
            raise JudgeConfigError(f"cannot change {', '.join(unknown)}; settable: {settable}")
        if model is not None and (not isinstance(model, str) or not model.strip()):
            raise JudgeConfigError(f"model must be a non-empty string, got {model!r}")
        if "headers" in changes:
            changes["headers"] = protect_headers(changes["headers"])
        config = {**self._config, **changes}
        _check_config(config)
        endpoint = self._endpoint if model is None else replace(self._endpoint, model=model)
        derived = Judge.__new__(Judge)
        derived._build(endpoint, config, self.cache)
        if model is None:  # same endpoint and model: what it refused, it still refuses
            derived._learn(self._backend)
        return derived

    def with_cache(self, cache: CacheArg) -> Judge:
        """A judge like this one (same endpoint, key and settings) with another cache."""
        derived = Judge.__new__(Judge)
        derived._build(self._endpoint, dict(self._config), open_cache(cache))
        derived._learn(self._backend)
        return derived

    def _learn(self, source: Backend) -> None:
        """Take over the fields ``source`` (a judge on the same endpoint and model) learned
        the endpoint refuses, so a derived judge does not meet the same 400 again. Only
        those: what the name rule gave depends on settings the derived judge may change
        (gpt-5.1 with ``reasoning_effort="none"`` takes a temperature)."""
        for refused in getattr(source, "learned", ()):
            self._backend.adapt(refused)

    # -- calls ---------------------------------------------------------------------------
    def complete(
        self,
        messages: Messages | str,
        response_format: Mapping[str, Any] | None = None,
        sample: int = 0,
    ) -> Reply:
        """One call, sync. Works in scripts and inside Jupyter; never raises for a failed call."""
        request = coerce_request(Request(_messages(messages), response_format, sample))
        return run_sync(self._engine.complete(request))

    async def acomplete(
        self,
        messages: Messages | str,
        response_format: Mapping[str, Any] | None = None,
        sample: int = 0,
    ) -> Reply:
        request = coerce_request(Request(_messages(messages), response_format, sample))
        return await self._engine.complete(request)

    def map(
        self,
        requests: Iterable[RequestLike],
        progress: bool = True,
        desc: str = "judging",
        *,
        on_reply: Callable[[int, Reply], None] | None = None,
        total: int | None = None,
    ) -> list[Reply]:
        """Many calls concurrently; replies in input order, failures as replies with errors.

        A list is checked whole before any call. A generator is pulled as calls start (the
        first call leaves before the rest are built; ``total`` sizes the progress bar).
        ``on_reply(i, reply)`` sees each answer as soon as it is final.
        """
        return run_sync(self.amap(requests, progress, desc, on_reply=on_reply, total=total))

    async def amap(
        self,
        requests: Iterable[RequestLike],
        progress: bool = True,
        desc: str = "judging",
        *,
        on_reply: Callable[[int, Reply], None] | None = None,
        total: int | None = None,
    ) -> list[Reply]:
        batch: Iterable[Request]
        if isinstance(requests, Sized):
            batch = [coerce_request(r, i) for i, r in enumerate(requests)]
        else:
            batch = (coerce_request(r, i) for i, r in enumerate(requests))
        if self._batcher is not None:
            replies = await self._batcher.run(list(batch), progress=progress, desc=desc)
            if on_reply is not None:
                for i, reply in enumerate(replies):
                    on_reply(i, reply)
            return replies
        return await self._engine.run(
            batch, progress=progress, desc=desc, on_reply=on_reply, total=total
        )

    # -- lifetime ------------------------------------------------------------------------
    async def aclose(self) -> None:
        """Close the connection pool of the running loop (sync calls close theirs)."""
        await self._engine.aclose()

    async def __aenter__(self) -> Judge:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def __getstate__(self) -> dict[str, Any]:
        # The endpoint's Secret pickles as a pointer to its env var, never as the key.
        return {"endpoint": self._endpoint, "config": self._config, "cache": self.cache}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self._build(state["endpoint"], state["config"], state["cache"])


def _batcher(
    engine: Engine, backend: Backend, config: Mapping[str, Any], cache: ResponseCache | None
) -> BatchRunner:
    """The batch-API runner for ``batch=True`` (HTTP judges with a cache only)."""
    from .batch import BatchOptions, BatchRunner
    from .openai import OpenAIBackend

    if not isinstance(backend, OpenAIBackend):
        raise JudgeConfigError(
            "batch=True needs an HTTP judge with a batch API (e.g. 'openai:gpt-4o-mini'), "
            "not the mock"
        )
    if cache is None:
        raise JudgeConfigError(
            "batch=True keeps batch ids in the cache so a restart re-attaches: use cache=True "
            "(the default file), a path, or leave cache unset (memory), not cache=False"
        )
    return BatchRunner(engine, backend, BatchOptions(poll_interval=config["batch_poll_interval"]))


def _warn_foreign_key(
    endpoint: Endpoint, headers: Mapping[str, Any], allowed: Collection[str]
) -> None:
    """Warn (once per variable and host) when code sends a known provider's key elsewhere:
    a key copied into the wrong judge goes to whoever runs that host."""
    if endpoint.is_mock:
        return
    values = [endpoint.key.reveal() or ""]
    values += [v.reveal() or "" for v in headers.values() if isinstance(v, Secret)]
    said = foreign_key_destination(values, endpoint.base_url, allowed)
    if said is not None:
        warnings.warn(said, KeyDestinationWarning, stacklevel=3)


def _messages(messages: Messages | str) -> Messages:
    if isinstance(messages, str):
        return [{"role": "user", "content": messages}]
    return messages


def _check_config(config: Mapping[str, Any]) -> None:
    def positive_int(name: str) -> None:
        value = config[name]
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise JudgeConfigError(f"{name} must be an integer >= 1, got {value!r}")

    positive_int("max_concurrency")
    retries = config["max_retries"]
    if not isinstance(retries, int) or isinstance(retries, bool) or retries < 0:
        raise JudgeConfigError(f"max_retries must be an integer >= 0, got {retries!r}")
    timeout = config["timeout"]
    if not isinstance(timeout, (int, float)) or timeout <= 0:
        raise JudgeConfigError(f"timeout must be a positive number of seconds, got {timeout!r}")
    temperature = config["temperature"]
    if temperature is not None and (
        not isinstance(temperature, (int, float)) or not 0 <= temperature <= 2
    ):
        raise JudgeConfigError(f"temperature must be between 0 and 2, got {temperature!r}")
    if config["max_tokens"] is not None:
        positive_int("max_tokens")
    seed = config["seed"]
    if seed is not None and (not isinstance(seed, int) or isinstance(seed, bool)):
        raise JudgeConfigError(f"seed must be an integer, got {seed!r}")
    for name in ("backoff_base", "backoff_cap", "retry_after_cap"):
        value = config[name]
        if not isinstance(value, (int, float)) or value < 0:
            raise JudgeConfigError(f"{name} must be a number >= 0, got {value!r}")
    poll = config.get("batch_poll_interval", 5.0)
    if not isinstance(poll, (int, float)) or poll <= 0:
        raise JudgeConfigError(f"batch_poll_interval must be a positive number, got {poll!r}")
    if not isinstance(config.get("batch", False), bool):
        raise JudgeConfigError(f"batch must be True or False, got {config['batch']!r}")
    if config["transport"] not in ("auto", "httpx", "aiohttp"):
        raise JudgeConfigError(
            f"transport must be 'auto', 'httpx' or 'aiohttp', got {config['transport']!r}"
        )


# -- the default judge ---------------------------------------------------------------------

_default: Judge | None = None
_from_env: tuple[str, Judge] | None = None
_default_lock = threading.Lock()


def set_judge(judge: Judge | str | None) -> Judge | None:
    """Make ``judge`` (or a spec) the default for every call that names no judge."""
    global _default
    value = Judge(judge) if isinstance(judge, str) else judge
    if value is not None and not isinstance(value, Judge):
        raise TypeError(f"set_judge() takes a Judge, a spec string or None, not {type(judge)}")
    with _default_lock:
        _default = value
    return value


def get_judge(judge: Judge | str | None = None) -> Judge:
    """The one way a judge argument becomes a ``Judge``: ``judge`` itself, a new ``Judge`` from
    a spec string, or (for None) the one from ``set_judge``, else ``$RUBRICLAB_JUDGE`` (a spec,
    or a base URL with the model in ``$RUBRICLAB_MODEL``), built once per spec."""
    global _from_env
    if isinstance(judge, Judge):
        return judge
    if isinstance(judge, str):
        return Judge(judge)
    if judge is not None:
        raise TypeError(
            f"judge must be a Judge or a spec string like 'mock', got {type(judge).__name__}"
        )
    with _default_lock:
        if _default is not None:
            return _default
        spec = os.environ.get("RUBRICLAB_JUDGE", "").strip()
        if not spec:
            raise JudgeConfigError(
                "no judge set: call rl.set_judge(rl.Judge('openai:gpt-4o-mini')) or set "
                "RUBRICLAB_JUDGE (e.g. RUBRICLAB_JUDGE=mock to run offline)"
            )
        model = os.environ.get("RUBRICLAB_MODEL", "").strip() or None
        if spec.startswith(("http://", "https://")) and model is None:
            raise JudgeConfigError(
                f"RUBRICLAB_JUDGE is a base URL ({spec}): also set RUBRICLAB_MODEL to the "
                "model name the endpoint serves (e.g. RUBRICLAB_MODEL=qwen2.5:7b)"
            )
        if _from_env is None or _from_env[0] != f"{spec}#{model}":
            _from_env = (f"{spec}#{model}", Judge(spec, model=model))
        return _from_env[1]
