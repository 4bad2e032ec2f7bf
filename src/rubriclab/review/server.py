"""The review page's server: one result file, labelled by people in a browser, no Jupyter.

Built on ``aiohttp.web`` (no hand-written HTTP). What keeps it safe on a shared machine:

- it binds 127.0.0.1 unless told otherwise;
- every request needs the random token printed in the URL (``?token=``, or the
  ``X-Rubriclab-Token`` header the page sends), compared in constant time; without it: 403;
- a request that changes state (a label) must carry the token in the header (a form or an
  ``<img>`` on another site cannot set it) and, if it has an ``Origin``, that Origin must be this
  server's own; JSON only;
- only the files of the built bundle (``review_page.js``, ``views.css``) are served, by name from
  an allowlist: any other path is 404, whatever ``..`` it holds;
- model text travels as JSON and is put in the page as text by the same code the notebook views
  use (never as HTML); the page's HTML is a fixed template with a strict Content-Security-Policy
  (no inline scripts, no other origins).

Labels go to the result's labels file (``run.labels.jsonl``) with one locked append per
request, so two reviewers (or a notebook and a reviewer) never lose each other's labels.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import json
import secrets
import socket
import threading
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

from aiohttp import web

from ..result import EvalResult, LabelError, load_result
from ..result.labels import clean_reviewer, default_reviewer
from ..widgets.labelling import (
    disagreeing_rows,
    labelled_rows,
    review_case,
    save_labels,
)

__all__ = ["ReviewServer", "make_app", "running", "serve"]

#: where the build writes the bundles (js/build.mjs)
STATIC = Path(__file__).resolve().parent.parent / "static"
#: the built files the page may load (nothing else is ever served)
BUNDLE = {"review_page.js": "text/javascript", "views.css": "text/css"}
MAX_BODY = 256 * 1024
MAX_PAGE = 500
TOKEN_HEADER = "X-Rubriclab-Token"

PAGE = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>rubriclab review</title>
<link rel="stylesheet" href="/static/views.css?token={token}">
</head>
<body>
<div id="rl-review" data-token="{token}"></div>
<script type="module" src="/static/review_page.js?token={token}"></script>
</body>
</html>
"""

CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data: https: http:; connect-src 'self'; base-uri 'none'; form-action 'none'; "
    "frame-ancestors 'none'"
)

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


class ReviewServer:
    """A result file served for labelling; ``url`` is what reviewers open."""

    def __init__(
        self,
        results: str | Path,
        *,
        reviewer: str | None = None,
        token: str | None = None,
        title: str | None = None,
    ) -> None:
        self.path = Path(results)
        self.result: EvalResult = load_result(self.path)
        self.reviewer = clean_reviewer(reviewer) if reviewer else default_reviewer()
        self.token = token or secrets.token_urlsafe(24)
        self.title = title or self.path.name
        self.host = "127.0.0.1"
        self.port = 0
        self._lock = asyncio.Lock()

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}/?token={self.token}"

    # -- the app ----------------------------------------------------------------------------------
    def app(self) -> web.Application:
        app = web.Application(middlewares=[self._guard], client_max_size=MAX_BODY)
        app.router.add_get("/", self._page)
        app.router.add_get("/static/{name}", self._static)
        app.router.add_get("/api/info", self._info)
        app.router.add_get("/api/rows", self._rows)
        app.router.add_get("/api/case/{row}", self._case)
        app.router.add_post("/api/labels", self._labels)
        return app

    @web.middleware
    async def _guard(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        given = request.headers.get(TOKEN_HEADER) or request.query.get("token") or ""
        if not hmac.compare_digest(given.encode(), self.token.encode()):
            return _text(403, "403: this page needs the token from the URL the server printed")
        if request.method not in ("GET", "HEAD"):
            if not hmac.compare_digest(
                request.headers.get(TOKEN_HEADER, "").encode(), self.token.encode()
            ):
                return _text(403, f"403: a change needs the {TOKEN_HEADER} header")
            origin = request.headers.get("Origin")
            if origin is not None and origin not in self._origins(request):
                return _text(403, f"403: requests from {origin[:100]} are refused")
            if request.content_type != "application/json":
                return _text(415, "415: send JSON")
        try:
            response = await handler(request)
        except web.HTTPException as exc:
            return _text(exc.status, f"{exc.status}: {exc.reason}")
        response.headers.setdefault("Cache-Control", "no-store")
        response.headers["X-Content-Type-Options"] = "nosniff"
        response.headers["Referrer-Policy"] = "no-referrer"
        return response

    def _origins(self, request: web.Request) -> set[str]:
        hosts = {f"{self.host}:{self.port}", f"127.0.0.1:{self.port}", f"localhost:{self.port}"}
        return {f"http://{h}" for h in hosts}

    async def _page(self, request: web.Request) -> web.StreamResponse:
        body = PAGE.format(token=self.token)
        response = web.Response(text=body, content_type="text/html")
        response.headers["Content-Security-Policy"] = CSP
        return response

    async def _static(self, request: web.Request) -> web.StreamResponse:
        name = request.match_info["name"]
        if name not in BUNDLE:
            raise web.HTTPNotFound()
        path = STATIC / name
        if not path.is_file():
            return _text(500, f"500: {name} is not built: cd js && npm ci && npm run build")
        return web.Response(
            body=path.read_bytes(),
            content_type=BUNDLE[name],
            headers={"Cache-Control": "no-cache"},
        )

    async def _info(self, request: web.Request) -> web.StreamResponse:
        r = self.result
        return web.json_response(
            {
                "title": self.title,
                "rows": r.row_count,
                "metrics": [{"name": m.name, "kind": m.kind} for m in r.metrics],
                "reviewer": self.reviewer,
                "is_mock": r.is_mock,
                "judge": r.judge,
            }
        )

    async def _rows(self, request: web.Request) -> web.StreamResponse:
        """Row numbers the list shows for a filter: ``all``, ``unlabelled`` (by the reviewer)
        or ``disagree`` (a person's label differs from the judge's answer)."""
        which = request.query.get("filter", "all")
        reviewer = _reviewer(request.query.get("reviewer"), self.reviewer)
        n = self.result.row_count
        if which == "all":
            rows = list(range(n))
        elif which == "unlabelled":
            done = labelled_rows(self.result, reviewer)
            rows = [i for i in range(n) if i not in done]
        elif which == "disagree":
            rows = sorted(disagreeing_rows(self.result))
        else:
            raise web.HTTPBadRequest(reason="filter must be all, unlabelled or disagree")
        mine = labelled_rows(self.result, reviewer)
        return web.json_response(
            {"rows": rows, "labelled": sorted(mine), "total": n, "reviewer": reviewer}
        )

    async def _case(self, request: web.Request) -> web.StreamResponse:
        try:
            row = int(request.match_info["row"])
        except ValueError:
            raise web.HTTPNotFound() from None
        if not 0 <= row < self.result.row_count:
            raise web.HTTPNotFound()
        return web.json_response(review_case(self.result, row), dumps=_dumps)

    async def _labels(self, request: web.Request) -> web.StreamResponse:
        try:
            body = await request.json(loads=_loads)
        except (ValueError, RecursionError):
            return _json_error("the body is not JSON")
        if not isinstance(body, dict):
            return _json_error("send {reviewer, labels: [...]}")
        try:
            reviewer = _reviewer(body.get("reviewer"), self.reviewer)
            async with self._lock:  # one append per request; the file lock covers other processes
                kept = save_labels(self.result, body.get("labels"), reviewer)
        except LabelError as exc:
            return _json_error(str(exc))
        return web.json_response({"saved": kept, "reviewer": reviewer})


def _reviewer(value: Any, default: str) -> str:
    if value is None or value == "":
        return default
    try:
        return clean_reviewer(value)
    except LabelError as exc:
        raise web.HTTPBadRequest(reason=str(exc)) from None


def _text(status: int, message: str) -> web.Response:
    return web.Response(status=status, text=message + "\n", content_type="text/plain")


def _json_error(message: str) -> web.Response:
    return web.json_response({"error": message}, status=400)


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, allow_nan=False, default=str)


def _loads(text: str) -> Any:
    return json.loads(text)


def make_app(results: str | Path, **kwargs: Any) -> tuple[web.Application, ReviewServer]:
    """The aiohttp app serving ``results`` for labelling, and its server state (token, URL)."""
    server = ReviewServer(results, **kwargs)
    return server.app(), server


async def serve(server: ReviewServer, host: str = "127.0.0.1", port: int = 0) -> web.AppRunner:
    """Start ``server`` on ``host:port`` (0: any free port); returns the runner to clean up."""
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise OSError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    server.host, server.port = host, int(sock.getsockname()[1])
    runner = web.AppRunner(server.app(), access_log=None)
    await runner.setup()
    await web.SockSite(runner, sock).start()
    return runner


@contextlib.contextmanager
def running(
    results: str | Path, *, host: str = "127.0.0.1", port: int = 0, **kwargs: Any
) -> Iterator[ReviewServer]:
    """The review page served from a background thread while the block runs (a notebook, a
    test); ``server.url`` is the address with its token."""
    server = ReviewServer(results, **kwargs)
    loop = asyncio.new_event_loop()
    ready = threading.Event()
    holder: dict[str, Any] = {}

    def main() -> None:
        asyncio.set_event_loop(loop)
        try:
            holder["runner"] = loop.run_until_complete(serve(server, host, port))
        except BaseException as exc:  # reported to the caller below
            holder["error"] = exc
            ready.set()
            return
        ready.set()
        loop.run_forever()
        loop.run_until_complete(holder["runner"].cleanup())
        loop.close()

    thread = threading.Thread(target=main, name="rubriclab-review", daemon=True)
    thread.start()
    ready.wait()
    if "error" in holder:
        raise holder["error"]
    try:
        yield server
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join(30)
