"""``Client``: Vertex's ``vertexai.Client`` for evaluation, with a rubriclab judge.

``project``, ``location`` and credentials are accepted so Vertex code runs unchanged, and not
used (nothing goes to Google Cloud); an ``api_key`` given here is dropped, never stored. The
judge is ``judge=`` or, when None, the session judge (``rl.set_judge`` / ``RUBRICLAB_JUDGE``),
looked up at each call.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .evals import AsyncEvals, Evals

if TYPE_CHECKING:
    from ....judges import Judge

__all__ = ["AsyncClient", "Client"]

_AGENTS = (
    "client.agent_engines (Vertex agent engines) is not offered by rubriclab's Vertex client; "
    "run your agent yourself and evaluate its answers, or use rubriclab.compat.vertex's "
    "EvalTask(runnable=...)"
)


class AsyncClient:
    """``client.aio``: async forms (``await client.aio.evals.evaluate(...)``)."""

    def __init__(self, judge: Judge | str | None) -> None:
        self.evals = AsyncEvals(judge)

    @property
    def agent_engines(self) -> Any:
        raise NotImplementedError(_AGENTS)


class Client:
    """``Client(judge=...)``; ``.evals`` for sync calls, ``.aio.evals`` for async ones."""

    def __init__(
        self,
        judge: Judge | str | None = None,
        *,
        project: str | None = None,
        location: str | None = None,
        credentials: Any = None,
        api_key: str | None = None,
        http_options: Any = None,
        debug_config: Any = None,
    ) -> None:
        self.project = project
        self.location = location
        self.judge = judge
        self.evals = Evals(judge)
        self.aio = AsyncClient(judge)

    @property
    def agent_engines(self) -> Any:
        raise NotImplementedError(_AGENTS)

    def __repr__(self) -> str:
        judge = self.judge if isinstance(self.judge, str) or self.judge is None else "Judge"
        return f"Client(judge={judge!r}, project={self.project!r}, location={self.location!r})"
