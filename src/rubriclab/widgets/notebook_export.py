"""Exported notebooks show rubriclab's views: their static forms, not an empty widget box.

Every view's output carries three forms: the live widget (``application/vnd.jupyter.widget-view
+json``), a static HTML form and a text form. nbconvert's HTML exporter (what JupyterLab's
"Export as HTML" runs), nbviewer, Quarto and Jupyter Book prefer the live widget whenever the
notebook saved widget state (``nbclient`` and JupyterLab do), and render it by loading the
widget manager from a CDN: offline the box stays empty, and even online an anywidget view is not
drawn. These nbconvert parts drop *our* live form from outputs that carry a static one, and the
saved state of those views, so every tool falls back to the static HTML. Other widgets (sliders,
progress bars of other libraries) are left as they are.

- ``jupyter nbconvert --to rubriclab-html nb.ipynb``: HTML with every view's static form;
- ``jupyter nbconvert --to rubriclab-notebook nb.ipynb``: a notebook whose views carry only
  their static forms, for GitHub, nbviewer, Quarto or Jupyter Book;
- ``jupyter nbconvert --to html --HTMLExporter.preprocessors=rubriclab.widgets.notebook_export.StaticViews``:
  the same on nbconvert's own exporter.

nbconvert finds the two exporters through the ``nbconvert.exporters`` entry points.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from nbconvert.exporters import HTMLExporter, NotebookExporter
from nbconvert.preprocessors import Preprocessor

__all__ = ["STATIC_MARK", "StaticHTMLExporter", "StaticNotebookExporter", "StaticViews"]

from ._base import STATIC_MARK
from ._base import WIDGET_MIME as WIDGET_VIEW

WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
_REF = re.compile(r"IPY_MODEL_([0-9A-Za-z_-]+)")


def _is_ours(output: Mapping[str, Any], state: Mapping[str, Any]) -> bool:
    """An output of a rubriclab view: marked in its metadata, or (notebooks saved before the
    mark) a widget whose saved state names a class of ``rubriclab``."""
    metadata = output.get("metadata")
    if isinstance(metadata, Mapping) and isinstance(metadata.get(STATIC_MARK), Mapping):
        return True
    view = output.get("data", {}).get(WIDGET_VIEW)
    model = state.get(str(view.get("model_id"))) if isinstance(view, Mapping) else None
    attrs = model.get("state") if isinstance(model, Mapping) else None
    widget_id = attrs.get("_anywidget_id") if isinstance(attrs, Mapping) else None
    return isinstance(widget_id, str) and widget_id.startswith("rubriclab.")


def _saved_state(nb: Any) -> dict[str, Any]:
    widgets = nb.get("metadata", {}).get("widgets")
    if not isinstance(widgets, Mapping):
        return {}
    saved = widgets.get(WIDGET_STATE)
    state = saved.get("state") if isinstance(saved, Mapping) else None
    return state if isinstance(state, dict) else {}


def _reachable(roots: set[str], state: Mapping[str, Any]) -> set[str]:
    """The models ``roots`` name and every model their saved state refers to (``IPY_MODEL_id``),
    such as a view's layout."""
    seen: set[str] = set()
    todo = [r for r in roots if r in state]
    while todo:
        model_id = todo.pop()
        if model_id in seen:
            continue
        seen.add(model_id)
        model = state[model_id]
        attrs = model.get("state", {}) if isinstance(model, Mapping) else {}
        for ref in _REF.findall(json.dumps(attrs, default=str)):
            if ref in state and ref not in seen:
                todo.append(ref)
    return seen


class StaticViews(Preprocessor):
    """Keep only the static forms of rubriclab's views, and drop their saved widget state (with
    the models only they used, such as their layouts)."""

    def preprocess(self, nb: Any, resources: Any) -> tuple[Any, Any]:
        state = _saved_state(nb)
        dropped: set[str] = set()
        kept: set[str] = set()
        for cell in nb.get("cells", []):
            for output in cell.get("outputs", []) if cell.get("cell_type") == "code" else []:
                data = output.get("data")
                view = data.get(WIDGET_VIEW) if isinstance(data, dict) else None
                if not isinstance(view, Mapping):
                    continue
                model_id = view.get("model_id")
                if "text/html" in data and _is_ours(output, state):
                    del data[WIDGET_VIEW]
                    dropped.add(str(model_id))
                else:
                    kept.add(str(model_id))
        if not dropped:
            return nb, resources
        for model_id in _reachable(dropped, state) - _reachable(kept, state):
            del state[model_id]
        if not kept:  # no live widget left to draw: no widget manager on the page
            nb["metadata"].pop("widgets", None)
        return nb, resources


class StaticHTMLExporter(HTMLExporter):
    """``--to rubriclab-html``: nbconvert's HTML with every rubriclab view's static form."""

    export_from_notebook = "HTML (rubriclab views as static HTML)"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[no-untyped-call]
        self.register_preprocessor(StaticViews, enabled=True)  # type: ignore[no-untyped-call]


class StaticNotebookExporter(NotebookExporter):
    """``--to rubriclab-notebook``: a notebook whose rubriclab views carry only static forms."""

    export_from_notebook = "Notebook (rubriclab views as static HTML)"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[no-untyped-call]
        self.register_preprocessor(StaticViews, enabled=True)  # type: ignore[no-untyped-call]
