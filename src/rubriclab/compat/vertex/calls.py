"""Who answers and how fast: Vertex's judge arguments resolved to rubriclab judges, and pacing.

Judges are resolved by :func:`rubriclab.judges.get_judge`; the one thing it cannot do, and
Vertex code needs, is a bare model name such as ``"gemini-2.5-flash"``: here that model is
asked on the endpoint of the judge that would otherwise answer (see :func:`judge_for`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ...judges import CallError, Judge, Reply, Request, get_judge
from ...judges.specs import PROVIDERS
from .mock import mock_speaks_vertex

__all__ = [
    "UNPACED",
    "CallPolicy",
    "is_spec",
    "judge_for",
    "model_for",
    "rubric_writer",
    "with_model",
]


def is_spec(text: str) -> bool:
    """True for a judge spec (``mock``, ``provider:model``, a URL); False for a bare model name."""
    head, sep, _ = text.partition(":")
    return (
        text == "mock"
        or text.startswith(("http://", "https://"))
        or (bool(sep) and (head in PROVIDERS or head == "mock"))
    )


def judge_for(*choices: Judge | str | None) -> Judge:
    """The first judge named, most specific first (a metric's own, the task's, ``judge=``),
    resolved by :func:`~rubriclab.judges.get_judge`; none named: the session judge.

    A bare model name (Vertex's ``"gemini-2.5-pro"``) is asked on the endpoint of the judge the
    remaining choices resolve to, with that judge's settings and cache.
    """
    for i, choice in enumerate(choices):
        if choice is None:
            continue
        if isinstance(choice, str) and choice.strip() and not is_spec(choice.strip()):
            return with_model(judge_for(*choices[i + 1 :]), choice.strip())
        return get_judge(choice)
    return get_judge()


def rubric_writer(
    model: Judge | str | Callable[[str], Any] | None, *fallbacks: Judge | str | None
) -> Judge | Callable[[str], Any]:
    """Who writes rubrics: ``RubricGenerationConfig.model`` when it is a function of the
    prompt (a model object of one's own), else the judge :func:`judge_for` picks."""
    if model is not None and not isinstance(model, Judge | str):
        if hasattr(model, "generate_content"):
            return generative_model(model)
        if callable(model):
            return model
    return judge_for(model, *fallbacks)


def generative_model(model: Any) -> Callable[[str], str | None]:
    """A Vertex ``GenerativeModel`` (anything with ``generate_content(prompt)`` whose reply has
    ``.text``) as a function of the prompt, as vertexai calls it to write responses."""

    def ask(prompt: str) -> str | None:
        reply = model.generate_content(prompt)
        text = getattr(reply, "text", reply)
        return None if text is None else str(text)

    return ask


def with_model(judge: Judge, model: str) -> Judge:
    """The same endpoint, settings and cache as ``judge``, asking ``model`` instead.

    This is how ``evaluate(model="gemini-2.5-flash")`` works without a Google project: the bare
    model name is sent to the judge's own endpoint (the mock answers as ``mock:<model>``).
    """
    return judge.with_options(model=model)


def model_for(
    model: Judge | str | Callable[[str], Any], default: Judge | None
) -> Judge | Callable[[str], Any]:
    """What writes responses: a Judge, a spec, a bare model name on the judge's endpoint, or a
    Python function of the prompt."""
    if isinstance(model, Judge):
        return model
    if isinstance(model, str):
        name = model.strip()
        if not name:
            raise ValueError("model must be a judge spec, a model name or a function, not ''")
        if is_spec(name):
            return get_judge(name)
        return with_model(default if default is not None else get_judge(), name)
    if hasattr(model, "generate_content"):
        return generative_model(model)
    if callable(model):
        return model
    raise TypeError(
        f"model must be a judge spec, a model name, a Judge or a function, "
        f"got {type(model).__name__}"
    )


@dataclass(frozen=True)
class CallPolicy:
    """``EvalTask.evaluate``'s ``evaluation_service_qps`` and ``retry_timeout``, on our judge.

    ``qps``: calls start at most this many per second (vertexai's rate limiter on the
    evaluation service). ``retry_timeout``: seconds one request may take with all its retries;
    past that it is that row's error (vertexai's retry deadline). Neither: the judge's own
    concurrency and retry settings alone.
    """

    qps: float | None = None
    retry_timeout: float | None = None

    def __post_init__(self) -> None:
        if self.qps is not None and not self.qps > 0:
            raise ValueError(f"evaluation_service_qps must be more than 0, got {self.qps}")
        if self.retry_timeout is not None and not self.retry_timeout > 0:
            raise ValueError(f"retry_timeout must be more than 0 seconds, got {self.retry_timeout}")

    async def send(self, judge: Judge, requests: Sequence[Request], desc: str) -> list[Reply]:
        """Every reply, in order. A mock judge answers in Vertex's formats while these run."""
        with mock_speaks_vertex(judge):
            if self.qps is None and self.retry_timeout is None:
                return await judge.amap(requests, desc=desc)
            return await self._paced(judge, requests)

    async def _paced(self, judge: Judge, requests: Sequence[Request]) -> list[Reply]:
        loop = asyncio.get_running_loop()
        start = loop.time()

        async def one(i: int, request: Request) -> Reply:
            if self.qps is not None:  # pace the starts: request i at start + i / qps
                await asyncio.sleep(max(0.0, start + i / self.qps - loop.time()))
            try:
                (reply,) = await asyncio.wait_for(
                    judge.amap([request], progress=False), self.retry_timeout
                )
            except TimeoutError:
                error = CallError(
                    "timeout", f"no answer within retry_timeout={self.retry_timeout:g}s"
                )
                return Reply(text=None, error=error, model=judge.model, is_mock=judge.is_mock)
            return reply

        return list(await asyncio.gather(*(one(i, r) for i, r in enumerate(requests))))


#: the judge's own concurrency and retries, nothing more (the default for every run)
UNPACED = CallPolicy()
