"""End to end in a real JupyterLab: every view renders, a row opens its explanation, a rubric
edit reaches Python, a 100,000-row result pages to its end, and XSS payloads stay inert text.
Screenshots go to tests/browser/artifacts/."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from rubriclab.widgets import Explanation, PairwiseView, ResultTable, RubricEditor
from tests._view_data import XSS, pairwise_result, pointwise_result
from tests.browser.lab import (
    ARTIFACTS,
    Lab,
    open_notebook,
    output_of,
    run_all,
    run_cell,
    wait_idle_after,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow]

CELLS = [
    "from tests._view_data import pointwise_result, pairwise_result, big_result, SUPPORT\n"
    "import pandas as pd\nimport rubriclab as rl\n"
    "result = pointwise_result(40, xss=True, is_mock=True)",
    'table = rl.ResultTable(result, title="Support answers"); table',
    "rl.Explanation(result, index=2)",
    'cases = pd.DataFrame({"prompt": ["When is the deadline?", "Refund window?"], '
    '"rubric": [SUPPORT, rl.Rubric.checklist(["Says 30 days?"])]})\n'
    "editor = rl.RubricEditor(cases); editor",
    "rl.PairwiseView(pairwise_result(8, xss=True))",
    "big = big_result(100_000)\nrl.ResultTable(big)",
    'print("DESC=" + repr(cases.at[0, "rubric"].criteria[0].description), "W=" + repr(editor.rubric.criteria[1].weight))',
    "from tests.test_widgets_calibration_view import _view\n_view()",
    "pairwise_result(6)  # an EvalResult shows itself as its table",
]


@pytest.fixture(scope="module")
def notebook(lab: Lab, browser: Any) -> Iterator[Any]:
    ARTIFACTS.mkdir(exist_ok=True)
    name = lab.write_notebook("views.ipynb", CELLS)
    context = browser.new_context(viewport={"width": 1400, "height": 1500})
    page = context.new_page()
    page.dialogs = []  # type: ignore[attr-defined]
    page.on("dialog", lambda d: (page.dialogs.append(d.message), d.dismiss()))  # type: ignore[attr-defined]
    open_notebook(page, lab, name)
    run_all(page)
    wait_idle_after(page)
    yield page
    context.close()


def _shot(locator: Any, name: str) -> None:
    locator.screenshot(path=str(ARTIFACTS / f"{name}.png"))


def test_every_view_renders_in_jupyterlab(notebook: Any) -> None:
    page = notebook
    table = output_of(page, 1).locator(".rl-table")
    table.locator(".rl-tr:not(.rl-loading)").first.wait_for()
    assert "MOCK judge" in table.locator(".rl-mock").inner_text()
    assert "Support answers" in table.inner_text()
    assert table.locator(".rl-card").count() == 1
    _shot(output_of(page, 1), "result_table")
    explanation = output_of(page, 2).locator(".rl-explanation")
    explanation.locator(".rl-crit-row").first.wait_for()
    assert "case 3 of 40" in explanation.inner_text()
    _shot(output_of(page, 2), "explanation")
    editor = output_of(page, 3).locator(".rl-editor")
    editor.locator(".rl-crit-edit").first.wait_for()
    assert editor.locator(".rl-crit-edit").count() == 2
    _shot(output_of(page, 3), "rubric_editor")
    pair = output_of(page, 4).locator(".rl-pairwise")
    pair.locator(".rl-scale .rl-on").wait_for()
    assert pair.locator(".rl-cand .rl-text").inner_text().startswith("Candidate answer 0")
    _shot(output_of(page, 4), "pairwise_view")


def test_clicking_a_row_opens_its_explanation(notebook: Any) -> None:
    table = output_of(notebook, 1).locator(".rl-table")
    table.locator('.rl-tr[data-pos="6"]').click()
    detail = table.locator(".rl-detail .rl-case")
    detail.wait_for()
    assert "case 7 of 40" in detail.inner_text()
    assert "HTTP 503 from judge after 3 attempts" in detail.locator(".rl-error-box").inner_text()
    assert detail.locator("details.rl-raw").get_attribute("open") is not None
    detail.locator(".rl-next").click()
    notebook.wait_for_function(
        "() => document.querySelector('.rl-detail .rl-pos')?.textContent.includes('case 8 of 40')"
    )
    _shot(output_of(notebook, 1), "result_table_selected")


def test_sort_and_filter_in_the_browser(notebook: Any) -> None:
    table = output_of(notebook, 1).locator(".rl-table")
    table.locator('.rl-th[data-key="support/score"]').click()
    table.locator('.rl-th[data-key="support/score"]').click()  # descending
    notebook.wait_for_function(
        """() => { const r = document.querySelector('.rl-table .rl-tr[data-pos="0"] [data-key="support/score"]');
                   return r && r.textContent.includes('100.0'); }"""
    )
    table.locator(".rl-errors-only").check()
    notebook.wait_for_function(
        "() => document.querySelector('.rl-table .rl-count').textContent === '5 of 40 rows'"
    )


def test_editing_a_rubric_cell_reaches_python(notebook: Any) -> None:
    editor = output_of(notebook, 3).locator(".rl-editor")
    cell = editor.locator('[data-path="criteria.0.description"]')
    cell.fill("Are all facts correct, dates included?")
    cell.press("Tab")
    editor.locator(".rl-saved").wait_for()
    # an invalid edit: shown in place, and the grid goes back to the last good value
    weight = editor.locator('[data-path="criteria.1.weight"]')
    weight.fill("heavy")
    weight.press("Tab")
    error = editor.locator(".rl-inline-error")
    error.wait_for()
    assert "criterion 'deadline' (#2) weight" in error.inner_text()
    notebook.wait_for_function(
        "() => document.querySelector('.rl-editor [data-path=\"criteria.1.weight\"]').value === '1'"
    )
    _shot(output_of(notebook, 3), "rubric_editor_error")
    run_cell(notebook, 6)
    out = output_of(notebook, 6)
    out.locator("text=DESC=").wait_for()
    assert "DESC='Are all facts correct, dates included?' W=1.0" in out.inner_text()


def test_paging_to_the_end_of_a_100k_row_result(notebook: Any) -> None:
    big = output_of(notebook, 5).locator(".rl-table")
    big.locator(".rl-tr:not(.rl-loading)").first.wait_for()
    assert big.locator(".rl-count").inner_text() == "100,000 rows"
    big.locator(".rl-viewport").evaluate("(el) => { el.scrollTop = el.scrollHeight; }")
    last = big.locator('.rl-tr[data-pos="99999"]:not(.rl-loading)')
    last.wait_for(timeout=10_000)
    assert "case-099999" in last.inner_text()
    assert big.locator(".rl-tr").count() < 40  # only the rows in view are in the DOM
    _shot(output_of(notebook, 5), "result_table_100k_end")


def test_calibration_heat_map_opens_a_disagreement(notebook: Any) -> None:
    out = output_of(notebook, 7)
    view = out.locator(".rl-calibration")
    view.locator('.rl-heat-cell[data-row="B"][data-col="A"]').click()
    view.locator(".rl-item").first.click()
    sides = view.locator(".rl-side")
    sides.first.wait_for()
    assert "y wins <script>" in sides.first.inner_text()
    assert view.locator(".rl-bars .rl-cname").count() == 2
    _shot(out, "calibration_view")


def test_an_eval_result_displays_as_its_table(notebook: Any) -> None:
    table = output_of(notebook, 8).locator(".rl-table")
    table.locator(".rl-tr:not(.rl-loading)").first.wait_for()
    assert table.locator(".rl-count").inner_text() == "6 rows"
    assert table.locator(".rl-swap-only").count() == 1  # pairwise filter offered
    assert table.locator(".rl-stack").count() == 1  # win/tie/loss bar in the summary


def test_xss_payloads_render_as_text_and_never_run(notebook: Any) -> None:
    page = notebook
    assert page.evaluate("() => window.__rl_pwned") is None
    assert page.dialogs == []  # type: ignore[attr-defined]
    table = output_of(page, 1).locator(".rl-table")
    for payload in XSS[:2]:
        assert page.get_by_text(payload, exact=False).count() > 0
    # no element made from model text: only our own markup
    scope = ".jp-OutputArea .rl"
    # our own charts are SVG built from text nodes; nothing else may be
    bad = f"{scope} script, {scope} iframe, {scope} svg:not(.rl-chart), {scope} a[href]"
    assert page.locator(bad).count() == 0
    assert (
        page.locator(f"{scope} svg foreignObject, {scope} svg script, {scope} svg use").count() == 0
    )
    assert page.locator(f"{scope} img[onerror], {scope} img:not([src^='data:image'])").count() == 0
    assert table.locator(".rl-td").first.is_visible()


def test_views_follow_the_dark_theme(notebook: Any) -> None:
    page = notebook
    page.evaluate(
        "() => window.jupyterapp.commands.execute('apputils:change-theme', {theme: 'JupyterLab Dark'})"
    )
    page.wait_for_function("() => document.body.dataset.jpThemeLight === 'false'")
    page.wait_for_timeout(300)
    table = output_of(page, 1).locator(".rl-table")
    bg = table.locator(".rl-tr").first.evaluate("(el) => getComputedStyle(el).backgroundColor")
    fg = table.locator(".rl-td").nth(2).evaluate("(el) => getComputedStyle(el).color")
    assert _luminance(bg) < 0.3 < _luminance(fg)  # dark rows, light text
    _shot(output_of(page, 1), "result_table_dark")
    _shot(output_of(page, 2), "explanation_dark")
    page.evaluate(
        "() => window.jupyterapp.commands.execute('apputils:change-theme', {theme: 'JupyterLab Light'})"
    )


def _luminance(css: str) -> float:
    parts = [
        float(p) for p in css[css.index("(") + 1 : css.index(")")].replace(" ", "").split(",")[:3]
    ]
    return (0.2126 * parts[0] + 0.7152 * parts[1] + 0.0722 * parts[2]) / 255


def test_static_html_forms_are_inert_in_chromium(browser: Any) -> None:
    """The text/html every view carries (GitHub, nbviewer, exported HTML) runs nothing."""
    result = pointwise_result(10, xss=True, is_mock=True)
    pair = pairwise_result(5, xss=True)
    editor_rubric = pd_rubric_with_payloads()
    views = [
        ResultTable(result),
        Explanation(result, index=3),
        PairwiseView(pair, index=1),
        RubricEditor(editor_rubric),
    ]
    page = browser.new_page()
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    for view in views:
        html = view._repr_mimebundle_()[0]["text/html"]
        page.set_content(f"<html><body>{html}</body></html>")
        page.wait_for_timeout(100)
        assert page.evaluate("() => window.__rl_pwned") is None
        assert page.locator("script, iframe, svg, a[href], img[onerror]").count() == 0
        assert "<" in page.inner_text("body")  # the payloads show as text
    assert dialogs == []
    page.close()


def pd_rubric_with_payloads() -> Any:
    from rubriclab.rubric import Criterion, Rubric

    return Rubric(
        criteria=[Criterion.yes_no(p, name=f"c{i}") for i, p in enumerate(XSS)], name=XSS[0]
    )
