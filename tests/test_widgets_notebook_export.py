"""Exported notebooks show every view: the real nbconvert, then chromium with no network.

A notebook that shows every rubriclab view is executed the way ``jupyter nbconvert --execute``
and JupyterLab do (nbclient saves the widget state), then exported by the real ``jupyter
nbconvert`` in a child process. nbconvert's own HTML picks the live widget form, which cannot
draw offline; ``--to rubriclab-html`` (or the preprocessor on ``--to html``) and
``--to rubriclab-notebook`` keep every view's static form.
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbclient import NotebookClient

from rubriclab.widgets.notebook_export import StaticViews

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"

#: one cell a view; the class each view's static form carries
VIEW_CELLS: dict[str, str] = {
    "rl-table-static": "result",
    "rl-case-static": "rl.display_explanations(result, num=1, metrics=['support'])",
    "rl-pairwise-static": "rl.display_explanations(result, num=1, metrics=['vs_baseline'])",
    "rl-rubric-static": "rl.RubricEditor(support)",
    "rl-comparison-static": "rl.ComparisonView(rl.compare(result, result2))",
    "rl-calibration-static": (
        "rl.CalibrationView(criteria=rl.criterion_agreement(judge_levels, human_levels, on='case'))"
    ),
}

SETUP = """\
import pandas as pd
import rubriclab as rl

rl.set_judge("mock")
df = pd.DataFrame({
    "prompt": ["Can I return the blender?", "How long is shipping?", "Is the kettle covered?"],
    "response": ["Yes, within 30 days.", "3-5 business days.", "Yes, two years."],
    "baseline_model_response": ["Sure.", "It depends.", "Maybe."],
})
support = rl.Rubric.analytic({
    "accuracy": {"weight": 0.5, "critical": 2, "levels": {
        1: "a factual error", 2: "correct but vague", 3: "correct and precise"}},
    "tone": {"weight": 0.5, "levels": {1: "rude", 2: "stiff", 3: "warm"}},
}, pass_mark=0.7)
metrics = [rl.metrics.RubricMetric(rubric=support, name="support"),
           rl.metrics.PairwiseRubricMetric(rubric=support, name="vs_baseline")]
result = rl.evaluate(df, metrics=metrics)
result2 = rl.evaluate(df.assign(response=df.response + " Thanks!"), metrics=metrics)
judge_levels = pd.DataFrame({"case": [0, 1, 2], "accuracy": [3, 2, 1], "tone": [3, 3, 2]})
human_levels = pd.DataFrame({"case": [0, 1, 2], "accuracy": [3, 1, 1], "tone": [2, 3, 2]})
"""


def _notebook() -> nbformat.NotebookNode:
    cells = [nbformat.v4.new_code_cell(SETUP)]
    cells += [nbformat.v4.new_code_cell(source) for source in VIEW_CELLS.values()]
    nb = nbformat.v4.new_notebook(cells=cells)
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    return nb


@pytest.fixture(scope="module")
def executed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The notebook run as ``nbconvert --execute`` runs it: outputs and widget state saved."""
    folder = tmp_path_factory.mktemp("export")
    nb = _notebook()
    NotebookClient(nb, timeout=300, resources={"metadata": {"path": str(folder)}}).execute()
    for cell in nb.cells:
        errors = [o for o in cell.get("outputs", []) if o.get("output_type") == "error"]
        assert not errors, f"{cell.source!r} raised {errors[0]['ename']}: {errors[0]['evalue']}"
    assert nb.metadata["widgets"][WIDGET_STATE]["state"], "nbclient saved no widget state"
    path = folder / "views.ipynb"
    nbformat.write(nb, path)
    return path


def _nbconvert(path: Path, *args: str) -> Path:
    """Run the real ``jupyter nbconvert`` in a child process; return the file it wrote."""
    out = path.parent / f"out-{abs(hash(args))}"
    done = subprocess.run(
        [sys.executable, "-m", "jupyter", "nbconvert", str(path), "--output-dir", str(out), *args],
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    (written,) = [p for p in out.iterdir() if p.is_file()]
    return written


# -- the preprocessor on notebook nodes -----------------------------------------------------------
def _widget_output(model_id: str, html: str, marked: bool) -> dict[str, Any]:
    return {
        "output_type": "display_data",
        "data": {
            "text/plain": "text form",
            "text/html": html,
            WIDGET_VIEW: {"version_major": 2, "version_minor": 1, "model_id": model_id},
        },
        "metadata": {"rubriclab": {"static": "text/html"}} if marked else {},
    }


def _state(model_id: str, anywidget_id: str | None, layout: str | None = None) -> dict[str, Any]:
    attrs = {"_model_name": "AnyModel"}
    if anywidget_id is not None:
        attrs["_anywidget_id"] = anywidget_id
    out = {model_id: {"model_name": "AnyModel", "state": attrs}}
    if layout is not None:
        attrs["layout"] = f"IPY_MODEL_{layout}"
        out[layout] = {"model_name": "LayoutModel", "state": {"width": "auto"}}
    return out


def test_drops_only_our_live_forms_and_their_state() -> None:
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("x")
    cell.outputs = [
        nbformat.from_dict(_widget_output("ours-marked", "<div>a</div>", marked=True)),
        # a notebook saved before the mark: known by the class its saved state names
        nbformat.from_dict(_widget_output("ours-old", "<div>b</div>", marked=False)),
        # someone else's widget with an HTML form: left alone
        nbformat.from_dict(_widget_output("slider", "<div>c</div>", marked=False)),
    ]
    nb.cells = [cell]
    state = {
        **_state("ours-marked", "rubriclab.widgets.result_table.ResultTable", layout="lay-1"),
        **_state("ours-old", "rubriclab.widgets.explanation.Explanation", layout="shared"),
        **_state("slider", None, layout="shared"),
    }
    nb.metadata["widgets"] = {WIDGET_STATE: {"state": state, "version_major": 2}}

    out, _ = StaticViews().preprocess(copy.deepcopy(nb), {})

    kept = [WIDGET_VIEW in o["data"] for o in out.cells[0].outputs]
    assert kept == [False, False, True]
    assert [o["data"]["text/html"] for o in out.cells[0].outputs] == [
        "<div>a</div>",
        "<div>b</div>",
        "<div>c</div>",
    ]
    # our views' own layouts go with them; one the slider shares stays
    assert set(out.metadata["widgets"][WIDGET_STATE]["state"]) == {"slider", "shared"}


def test_a_notebook_with_only_our_views_keeps_no_widget_state() -> None:
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("x")
    cell.outputs = [nbformat.from_dict(_widget_output("m", "<p>x</p>", marked=True))]
    nb.cells = [cell]
    state = _state("m", None, layout="lay")
    nb.metadata["widgets"] = {WIDGET_STATE: {"state": state, "version_major": 2}}
    out, _ = StaticViews().preprocess(nb, {})
    assert "widgets" not in out.metadata


def test_an_output_without_a_static_form_is_left_as_it_is() -> None:
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("x")
    output = _widget_output("m", "", marked=True)
    del output["data"]["text/html"]
    cell.outputs = [nbformat.from_dict(output)]
    nb.cells = [cell]
    out, _ = StaticViews().preprocess(nb, {})
    assert WIDGET_VIEW in out.cells[0].outputs[0]["data"]


def test_every_view_output_is_marked(executed: Path) -> None:
    nb = nbformat.read(executed, as_version=4)
    views = [
        o
        for cell in nb.cells[1:]
        for o in cell.outputs
        if WIDGET_VIEW in o.get("data", {}) and "text/html" in o["data"]
    ]
    assert len(views) == len(VIEW_CELLS)


# -- the real nbconvert, then chromium -------------------------------------------------------------
def _views_in_page(page: Any, path: Path) -> dict[str, float]:
    """Open an exported page with every request outside the file refused; the height of each
    view's static form."""
    refused: list[str] = []

    def route(r: Any) -> None:
        if r.request.url.startswith("file:"):
            r.continue_()
        else:
            refused.append(r.request.url)
            r.abort()

    page.route("**/*", route)
    page.goto(path.as_uri())
    page.wait_for_load_state("load")
    heights = {}
    for cls in VIEW_CELLS:
        boxes = page.locator(f".{cls}")
        heights[cls] = (
            max(
                (boxes.nth(i).bounding_box() or {"height": 0.0})["height"]
                for i in range(boxes.count())
            )
            if boxes.count()
            else 0.0
        )
    return heights


@pytest.mark.slow
@pytest.mark.browser
def test_nbconverts_own_html_draws_no_view_offline(executed: Path, page: Any) -> None:
    """Why the exporter exists: nbconvert's HTML picks the live widget form, and no static form
    reaches the page (if this starts failing, nbconvert learned to keep them; the README's advice
    can then be dropped)."""
    html = _nbconvert(executed, "--to", "html")
    heights = _views_in_page(page, html)
    assert all(h == 0 for h in heights.values()), heights


@pytest.fixture(scope="module")
def executed_without_state(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The notebook saved the way JupyterLab saves it by default (its "Save Widget State
    Automatically" setting is off): outputs kept, no widget state."""
    folder = tmp_path_factory.mktemp("export-no-state")
    nb = _notebook()
    NotebookClient(
        nb,
        timeout=300,
        store_widget_state=False,
        resources={"metadata": {"path": str(folder)}},
    ).execute()
    assert "widgets" not in nb.metadata
    outputs = [o for cell in nb.cells for o in cell.get("outputs", [])]
    assert sum(WIDGET_VIEW in o.get("data", {}) for o in outputs) == len(VIEW_CELLS)
    path = folder / "views.ipynb"
    nbformat.write(nb, path)
    return path


@pytest.mark.slow
@pytest.mark.browser
def test_plain_nbconvert_shows_every_view_when_no_widget_state_is_saved(
    executed_without_state: Path, page: Any, tmp_path: Path
) -> None:
    """A plain ``--to html`` export with no rubriclab step: with no saved state, nbconvert skips
    the live form (its WidgetsDataTypeFilter) and draws each view's static HTML, offline. A
    guard for the report that views come out blank when no state is saved (they do not; only
    saved state, which nbclient stores by default, selects the live form: see the test above)."""
    html = _nbconvert(executed_without_state, "--to", "html")
    heights = _views_in_page(page, html)
    assert all(h > 20 for h in heights.values()), heights
    assert page.get_by_text("MOCK judge").first.is_visible()
    assert page.get_by_text("3-5 business days.").first.is_visible()
    page.set_viewport_size({"width": 1100, "height": 900})
    shots = Path(__file__).resolve().parent / "browser" / "artifacts"
    shots.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(shots / "export-plain-html-no-state.png"), full_page=True)


@pytest.mark.slow
@pytest.mark.browser
@pytest.mark.parametrize(
    "args",
    [
        ("--to", "rubriclab-html"),
        (
            "--to",
            "html",
            "--HTMLExporter.preprocessors=rubriclab.widgets.notebook_export.StaticViews",
        ),
    ],
    ids=["rubriclab-html", "html-with-preprocessor"],
)
def test_exported_html_shows_every_view_offline(
    executed: Path, page: Any, args: tuple[str, ...], tmp_path: Path
) -> None:
    html = _nbconvert(executed, *args)
    heights = _views_in_page(page, html)
    assert all(h > 20 for h in heights.values()), heights
    assert page.get_by_text("MOCK judge").first.is_visible()
    page.set_viewport_size({"width": 1100, "height": 900})
    page.screenshot(path=str(tmp_path / f"export-{args[1]}.png"), full_page=True)
    shots = Path(__file__).resolve().parent / "browser" / "artifacts"
    shots.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(shots / f"export-{args[1]}.png"), full_page=True)


@pytest.mark.slow
@pytest.mark.browser
def test_static_notebook_renders_like_github(executed: Path, page: Any) -> None:
    """``--to rubriclab-notebook``: a notebook for GitHub, nbviewer, Quarto or Jupyter Book.
    Its view outputs carry no live form, and each one's saved HTML draws with no script."""
    written = _nbconvert(executed, "--to", "rubriclab-notebook")
    nb = json.loads(written.read_text())
    outputs = [o for cell in nb["cells"] for o in cell.get("outputs", [])]
    assert not any(WIDGET_VIEW in o.get("data", {}) for o in outputs)
    assert "widgets" not in nb["metadata"]
    saved = [
        "".join(o["data"]["text/html"])
        if isinstance(o["data"]["text/html"], list)
        else o["data"]["text/html"]
        for o in outputs
        if "text/html" in o.get("data", {})
    ]
    page.route("**/*", lambda r: r.abort())
    page.set_content("<!doctype html><meta charset=utf-8><body>" + "".join(saved) + "</body>")
    for cls in VIEW_CELLS:
        box = page.locator(f".{cls}").first.bounding_box()
        assert box is not None and box["height"] > 20, cls


@pytest.mark.slow
@pytest.mark.browser
def test_jupyter_book_draws_every_view_of_the_static_notebook(executed: Path, page: Any) -> None:
    """MyST-NB (Jupyter Book's Sphinx engine) builds pages from saved outputs: from the executed
    notebook it loads the widget manager from a CDN and draws no view; from the
    ``rubriclab-notebook`` export it draws every view's static form, offline."""
    static = _nbconvert(executed, "--to", "rubriclab-notebook")
    pages = {}
    for name, notebook in (("live", executed), ("static", static)):
        site = executed.parent / f"book-{name}"
        site.mkdir()
        (site / "conf.py").write_text('extensions = ["myst_nb"]\nnb_execution_mode = "off"\n')
        (site / "index.md").write_text("# Views\n\n```{toctree}\nviews\n```\n")
        (site / "views.ipynb").write_bytes(notebook.read_bytes())
        done = subprocess.run(
            [sys.executable, "-m", "sphinx", "-q", "-b", "html", str(site), str(site / "_build")],
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        assert done.returncode == 0, done.stderr[-2000:]
        pages[name] = site / "_build" / "views.html"

    assert "rubriclab-static" not in pages["live"].read_text()
    heights = _views_in_page(page, pages["static"])
    assert all(h > 20 for h in heights.values()), heights


def test_the_readmes_export_commands_name_real_exporters() -> None:
    from nbconvert.exporters import get_export_names
    from traitlets.utils.importstring import import_item

    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")
    lines = [
        ln.split("#", 1)[0] for ln in readme.splitlines() if ln.startswith("jupyter nbconvert")
    ]
    assert len(lines) >= 3
    names = set(get_export_names())
    for line in lines:
        words = line.split()
        assert words[words.index("--to") + 1] in names, line
        for word in words:
            if word.startswith("--HTMLExporter.preprocessors="):
                assert import_item(word.split("=", 1)[1]) is StaticViews
