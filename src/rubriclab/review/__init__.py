"""The review page: people label a result in a browser, without Jupyter.

``rubriclab review RESULTS [--port N] [--reviewer NAME]`` serves one result file on 127.0.0.1
with a random token; labels land in the result's labels file beside it (see
``rubriclab.result.labels``), where ``load_result`` and ``rl.calibrate`` find them.
"""

from __future__ import annotations

from .server import ReviewServer, make_app, running, serve

__all__ = ["ReviewServer", "make_app", "running", "serve"]
