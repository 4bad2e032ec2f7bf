"""What every view shares: the mock/judge/title traits, request-reply messages, and a
``_repr_mimebundle_`` that carries a static text and HTML form next to the live widget.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

import anywidget
import traitlets

from ._assets import CssBundle

__all__ = ["RubricView"]

log = logging.getLogger("rubriclab.widgets")
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
#: output metadata beside the live form: exports keep the static form (see notebook_export)
STATIC_MARK = "rubriclab"


class RubricView(anywidget.AnyWidget):
    """Base of rubriclab's views: traits are the contract; pages travel as custom messages."""

    #: one stylesheet for every view, added to the page once per view class (not per widget)
    _css = CssBundle()

    is_mock = traitlets.Bool(False).tag(sync=True)
    judge = traitlets.Unicode("").tag(sync=True)
    title = traitlets.Unicode("").tag(sync=True)
    timeout_ms = traitlets.Int(15_000).tag(sync=True)
    #: model and judge text as Markdown (CommonMark, raw HTML off); False shows the raw text
    markdown = traitlets.Bool(True).tag(sync=True)

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._ops: dict[str, Callable[[Mapping[str, Any]], dict[str, Any]]] = {}
        self.on_msg(self._on_custom)

    # -- request / reply ------------------------------------------------------------------------
    def _register(self, op: str, handler: Callable[[Mapping[str, Any]], dict[str, Any]]) -> None:
        self._ops[op] = handler

    def _on_custom(self, _widget: Any, content: Any, _buffers: Any) -> None:
        if not isinstance(content, Mapping) or content.get("type") != "rl:request":
            return
        request_id = content.get("id")
        op = str(content.get("op", ""))
        handler = self._ops.get(op)
        reply: dict[str, Any]
        if handler is None:
            reply = {"error": f"unknown request {op!r}"}
        else:
            try:
                reply = handler(content)
            except (ValueError, KeyError, IndexError, TypeError) as exc:
                reply = {"error": str(exc)}
            except Exception as exc:  # keep the view alive; the error is shown in it
                log.exception("rubriclab view request %r failed", op)
                reply = {"error": f"{type(exc).__name__}: {exc}"}
        self.send({"type": "rl:reply", "id": request_id, **reply})

    # -- static forms ---------------------------------------------------------------------------
    def static_text(self) -> str:
        raise NotImplementedError

    def static_html(self) -> str:
        raise NotImplementedError

    def __repr__(self) -> str:
        return self.static_text()

    def _repr_mimebundle_(self, **kwargs: Any) -> tuple[dict[str, Any], dict[str, Any]]:
        data: dict[str, Any] = {
            "text/plain": self.static_text(),
            "text/html": self.static_html(),
        }
        if self._view_name is not None:
            data[WIDGET_MIME] = {"version_major": 2, "version_minor": 1, "model_id": self.model_id}
        return data, {STATIC_MARK: {"static": "text/html"}}
