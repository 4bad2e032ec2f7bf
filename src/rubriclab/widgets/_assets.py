"""Where the views' JavaScript and stylesheet come from: esbuild output in ``rubriclab/static/``.

Each view has its own JavaScript bundle (anywidget's ``_esm``); the one stylesheet
(``views.css``) goes in anywidget's ``_css``, which the front end adds to the page once per view
class rather than once per widget shown. The files are build output (``pip install`` of a checkout runs the hatch build hook, which runs
esbuild); a missing bundle is reported with the command that makes it, when a view is created,
not when ``rubriclab`` is imported, so static HTML keeps working without them.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

STATIC = Path(__file__).resolve().parent.parent / "static"

__all__ = ["STATIC", "STYLESHEET", "BundleMissingError", "CssBundle", "EsmBundle", "read_bundle"]

#: the stylesheet every view shares (built from js/src/lib/styles.css)
STYLESHEET = "views.css"


class BundleMissingError(RuntimeError):
    """A view's JavaScript bundle was not built."""


@functools.cache
def read_bundle(name: str) -> str:
    """A built file of ``static/``: ``name`` alone is a view's ``.js`` bundle."""
    path = STATIC / (name if "." in name else f"{name}.js")
    if not path.is_file():
        raise BundleMissingError(
            f"rubriclab's front-end file {path.name} is missing from {STATIC}. Reinstall from the "
            "checkout with npm available (`pip install -e .`), or build it: `cd js && npm ci && "
            "npm run build`."
        )
    return path.read_text(encoding="utf-8")


class EsmBundle:
    """Class attribute that reads a view's bundle when a widget is created (anywidget's ``_esm``)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __get__(self, instance: object, owner: type | None = None) -> Any:
        if instance is None:
            return self
        return read_bundle(self.name)


class CssBundle:
    """Class attribute that reads the views' stylesheet when a widget is created (``_css``)."""

    def __get__(self, instance: object, owner: type | None = None) -> Any:
        if instance is None:
            return self
        return read_bundle(STYLESHEET)
